//! `lantaud bench`: signed transfers from many accounts pushed through REST broadcast.
//!
//! It starts an in-process node on a temporary home whose genesis funds `--accounts` bench
//! accounts, pre-signs `--accounts x --per-account` MsgSend transactions (so signing does not
//! compete with the node during the run), then `--concurrency` workers broadcast them with
//! BROADCAST_MODE_SYNC over HTTP, each worker owning a slice of the accounts so that every
//! account's sequences arrive in order. It reports committed tx/s over the run, admission
//! latency (the SYNC broadcast round trip) p50/p99, and FinalizeBlock / Commit time per block.
//!
//! With `--cometbft` the same workloads run against the app under real CometBFT child
//! processes, and `--kvstore` against CometBFT's own `kvstore` app ([`cometbft`]).
//!
//! Before the node starts it calibrates the machine: the single-core libsecp256k1 rate of
//! ECDSA verifications (one fixed signature over one fixed digest, verified in a loop for about
//! a second on one thread). The committed rate divided by that rate is the figure that travels
//! between machines (and between days on the same machine kind): see `docs/performance.md`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use clap::Args;
use lantau_client::{msg_send, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_node::home::{init_home, InitOptions};
use lantau_node::{start, StartOptions};
use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_rpc::NodeApi;
use serde_json::json;

mod cometbft;
mod ops;

/// Options of `lantaud bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// Sending accounts.
    #[arg(long, default_value_t = 2000)]
    accounts: usize,
    /// Transactions per account (total = accounts x per-account).
    #[arg(long, default_value_t = 100)]
    per_account: u64,
    /// Concurrent HTTP broadcasters.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Block interval in milliseconds.
    #[arg(long, default_value_t = 1000)]
    block_time_ms: u64,
    /// Stop broadcasting after this many seconds even if transactions remain.
    #[arg(long, default_value_t = 60)]
    duration: u64,
    /// Offer the load at this many transactions per second in all (0: as fast as the node
    /// admits them). At a rate blocks can carry, inclusion is what users see at that
    /// throughput; a load faster than blocks carry it measures the ceiling, and its queue
    /// (and so its inclusion delay) grows as long as it lasts.
    #[arg(long, default_value_t = 0)]
    rate: u64,
    /// Write every broadcast (start ms since the first broadcast, latency ms, code) and every
    /// block (commit ms since the first broadcast, txs, FinalizeBlock ms, Commit+recheck ms) to
    /// this file, as CSV, to see where slow admissions fall.
    #[arg(long)]
    trace: Option<std::path::PathBuf>,
    /// Send gated stablecoin transfers (`hkd.demo`, a Travel Rule payload on each, all seven
    /// gates, audit rows and flags) instead of native-coin transfers. The bench accounts get
    /// full-tier identities and `hkd.demo` in genesis; the rules are the spec's defaults.
    #[arg(long)]
    stablecoin: bool,
    /// Send the same gated transfers as signed Ethereum transactions calling the stablecoin
    /// precompile's `transferWithTravelRule`, through `eth_sendRawTransaction` on the
    /// node's Ethereum JSON-RPC (implies the `--stablecoin` genesis).
    #[arg(long)]
    evm: bool,
    /// Send MsgMultiSend transactions of this many outputs each, every output to an address
    /// that has never held anything (the multi-send attack), instead of transfers. Their gas
    /// limit is the simulated gas of the first one plus a fifth (at most the per-transaction
    /// maximum, 30,000,000: about 500 fresh outputs fit). The report gives what a
    /// block's gas costs in time (`--output json`: `finalize_and_commit_us_per_mgas`).
    #[arg(long, default_value_t = 0)]
    multi_send: usize,
    /// The genesis consensus parameter `block.max_gas` (-1: unlimited), instead of the
    /// default; to measure what blocks cost without it.
    #[arg(long, allow_hyphen_values = true)]
    max_block_gas: Option<i64>,
    /// A transfer's gas limit as a multiple of its estimate, in percent; by default as the
    /// clients sign: 130 for Cosmos transactions (CosmJS's and Keplr's "auto" multiplier), 100
    /// for Ethereum ones (ethers, viem and Hardhat sign `eth_estimateGas`'s answer as it is).
    /// 100 for both: the densest block of its kind `block.max_gas` admits.
    #[arg(long, value_parser = clap::value_parser!(u64).range(100..=1000))]
    gas_adjustment_percent: Option<u64>,
    /// Run the app under real CometBFT child processes (`--validators` of them, the cometbft
    /// binary of `scripts/prereqs.sh`), loading through CometBFT's RPC `broadcast_tx_sync`
    /// (or the app's `eth_sendRawTransaction` with `--evm`), instead of the embedded engine.
    #[arg(long)]
    cometbft: bool,
    /// Validators of the `--cometbft` network, on this machine.
    #[arg(long, default_value_t = 1)]
    validators: usize,
    /// With `--cometbft`: the same load against CometBFT's built-in `kvstore` app instead of
    /// Lantau (the ceiling of any app under this CometBFT and these settings).
    #[arg(long)]
    kvstore: bool,
    /// With `--cometbft`: CometBFT's pause after each block (1 s, CometBFT's default, as the
    /// figures of record are measured; a network sets 3 s, docs/operations.md).
    #[arg(long, default_value = "1s")]
    timeout_commit: String,
    /// With `--cometbft`: CometBFT's mempool size (transactions).
    #[arg(long, default_value_t = 50_000)]
    mempool_size: u64,
    /// With `--cometbft`: CometBFT's own transaction indexer (`null`, as `lantaud testnet`
    /// configures a network whose apps serve search on their CometBFT RPC front, or `kv`).
    #[arg(long, default_value = "null")]
    tx_index: String,
    /// With `--cometbft`: CometBFT keeps the mempool (`lantaud testnet init
    /// --cometbft-mempool`) and the load goes to CometBFT's own RPC. By default the apps keep
    /// it, as `lantaud testnet` configures a network, and the load goes to each app's CometBFT
    /// RPC front.
    #[arg(long)]
    cometbft_mempool: bool,
    /// With `--cometbft`: serve CometBFT's Go profiler (`/debug/pprof`) of the first node on
    /// this address, to profile CometBFT during the run (`go tool pprof`).
    #[arg(long)]
    cometbft_pprof: Option<String>,
    /// Instead of a workload, time each kind of store operation (verifiable and non-verifiable
    /// writes and reads, signature verification) on a store of `--ops-keys` keys: the
    /// measurements behind the gas schedule.
    #[arg(long)]
    ops: bool,
    /// With `--ops`: verifiable keys (and non-verifiable rows) in the store before measuring.
    #[arg(long, default_value_t = 500_000)]
    ops_keys: usize,
    /// With `--ops`: operations per measured block.
    #[arg(long, default_value_t = 5_000)]
    ops_block: usize,
    /// With `--ops`: measured blocks per kind of operation (the median is reported).
    #[arg(long, default_value_t = 7)]
    ops_rounds: usize,
    /// The node's `[pruning] strategy` (`default`, `nothing`: an archive, `everything`: no
    /// history of past heights); the report gives the store's growth per 1,000 committed
    /// transactions.
    #[arg(long, default_value = "default")]
    pruning: String,
}

/// With `--rate`: waits until the `k`-th transaction of the whole load is due, `k / rate`
/// seconds after `start` (a worker that fell behind sends at once); 0: no wait.
async fn pace(start: Instant, rate: u64, k: u64) {
    if rate > 0 {
        let after = Duration::from_nanos(u64::try_from(u128::from(k) * 1_000_000_000 / u128::from(rate)).unwrap_or(u64::MAX));
        if let Some(due) = start.checked_add(after) {
            tokio::time::sleep_until(due.into()).await;
        }
    }
}

/// What the bench sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    /// Native-coin MsgSend.
    Native,
    /// Gated `hkd.demo` MsgSend with a Travel Rule payload.
    Gated,
    /// `transferWithTravelRule` through the ERC-20 precompile.
    Evm,
    /// Multi-sends to fresh addresses.
    MultiSend,
}

impl Workload {
    fn of(a: &BenchArgs) -> Self {
        if a.multi_send > 0 {
            Workload::MultiSend
        } else if a.evm {
            Workload::Evm
        } else if a.stablecoin {
            Workload::Gated
        } else {
            Workload::Native
        }
    }

    fn describe(self, kvstore: bool) -> &'static str {
        match self {
            _ if kvstore => "kvstore transactions (CometBFT's built-in app)",
            Workload::MultiSend => "multi-sends to fresh addresses",
            Workload::Evm => "gated hkd.demo transfers through the ERC-20 precompile (transferWithTravelRule, eth_sendRawTransaction)",
            Workload::Gated => "gated hkd.demo transfers with Travel Rule payloads",
            Workload::Native => "native-coin transfers",
        }
    }
}

/// Reads the home's genesis file, lets `edit` change it, and writes it back.
fn edit_genesis(home: &std::path::Path, edit: impl FnOnce(&mut serde_json::Value) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let path = home.join("config/genesis.json");
    let mut g: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
    edit(&mut g)?;
    std::fs::write(&path, serde_json::to_vec_pretty(&g)?)?;
    Ok(())
}

/// Sets the genesis `block.max_gas`.
fn set_max_block_gas(home: &std::path::Path, max_gas: i64) -> anyhow::Result<()> {
    edit_genesis(home, |g| {
        g["consensus_params"]["block"]["max_gas"] = json!(max_gas.to_string());
        Ok(())
    })
}

/// The `k`-th fresh output of multi-send `seq` from bench account `i`: an address no one holds.
fn fresh_output(i: usize, seq: u64, k: usize) -> lantau_primitives::Address {
    let h = lantau_crypto::sha256(format!("lantau-bench-fresh-{i}-{seq}-{k}").as_bytes());
    let mut a = [0u8; 20];
    a.copy_from_slice(&h[..20]);
    lantau_primitives::Address(a)
}

/// Bench account `i`'s multi-send `seq`: 1 base unit to each of `n` fresh outputs.
fn multi_send_builder(keys: &[SecretKey], i: usize, seq: u64, n: usize, gas: u64) -> TxBuilder {
    let outputs: Vec<_> = (0..n).map(|k| (fresh_output(i, seq, k), vec![Coin::new(NATIVE_DENOM, 1u128)])).collect();
    let total = u128::try_from(n).unwrap_or(u128::MAX);
    TxBuilder::new(vec![lantau_client::msg_multi_send(&keys[i].address(), &[Coin::new(NATIVE_DENOM, total)], &outputs)]).gas(gas)
}

/// Gives every bench account a full-tier identity and `hkd.demo` in the genesis file.
fn stablecoin_genesis(home: &std::path::Path, keys: &[SecretKey]) -> anyhow::Result<()> {
    edit_genesis(home, |g| stablecoin_app_state(&mut g["app_state"], keys))
}

fn stablecoin_app_state(app: &mut serde_json::Value, keys: &[SecretKey]) -> anyhow::Result<()> {
    let ids = app["kyc"]["identities"].as_array_mut().ok_or_else(|| anyhow::anyhow!("genesis has no kyc identities"))?;
    for (i, k) in keys.iter().enumerate() {
        ids.push(json!({
            "address": k.address().to_bech32(),
            "level": "LEVEL_RETAIL_PLUS",
            "vasp_identifier": "VASP-BENCH",
            "ivms101_off_chain_ref": format!("ivms101:bench-{i}"),
            "enrolled_at": "2026-01-01T00:00:00Z",
            "last_level_change": "2026-01-01T00:00:00Z",
        }));
    }
    let wanted: std::collections::BTreeSet<String> = keys.iter().map(|k| k.address().to_bech32()).collect();
    for b in app["bank"]["balances"].as_array_mut().ok_or_else(|| anyhow::anyhow!("genesis has no balances"))? {
        if b["address"].as_str().is_some_and(|a| wanted.contains(a)) {
            if let Some(coins) = b["coins"].as_array_mut() {
                coins.push(json!({"denom": "hkd.demo", "amount": "100000000"}));
            }
        }
    }
    Ok(())
}

/// `eth_estimateGas` of `transferWithTravelRule(to, 1, payload)` from `from`.
async fn estimate_evm_transfer(
    eth_url: &str,
    from: &SecretKey,
    to: &lantau_primitives::Address,
    payload: &lantau_proto::chain::compliance::v1::TravelRulePayload,
) -> anyhow::Result<u64> {
    use prost::Message as _;
    let token = lantau_app::erc20::token_address("hkd.demo");
    let input = lantau_client::eth::transfer_with_travel_rule_calldata(to, 1, &payload.encode_to_vec());
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "eth_estimateGas", "params": [{
        "from": format!("0x{}", const_hex::encode(from.address().0)),
        "to": format!("0x{}", const_hex::encode(token.0)),
        "data": format!("0x{}", const_hex::encode(&input)),
    }]});
    let v: serde_json::Value = reqwest::Client::new().post(eth_url).json(&call).send().await?.json().await?;
    let hexgas = v["result"].as_str().ok_or_else(|| anyhow::anyhow!("eth_estimateGas: {v}"))?;
    Ok(u64::from_str_radix(hexgas.trim_start_matches("0x"), 16)?)
}

/// The gas of a gated transfer once its sender is over the velocity rule: the dev account
/// alice sends `velocity_tx_limit` HKD transfers to the issuer (committed), then her next one is
/// simulated (Cosmos) or estimated (EVM).
async fn flagged_transfer_gas(client: &lantau_client::RestClient, eth_url: &str, evm: bool) -> anyhow::Result<u64> {
    let (alice, bob) = (lantau_node::home::dev_account("alice", 5)?, lantau_node::home::dev_account("issuer", 2)?);
    let alice_key = SecretKey::from_hex(&alice.private_key)?;
    let bob_addr = lantau_primitives::Address::from_bech32(&bob.address)?;
    let params = client.query("/chain/compliance/v1/params").await?;
    let limit: u64 = params["params"]["rules"]["velocity_tx_limit"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| params["params"]["rules"]["velocity_tx_limit"].as_u64())
        .unwrap_or(10);
    let payload = client.travel_rule_payload(&alice_key.address(), &bob_addr).await?;
    let transfer = || TxBuilder::new(vec![msg_send(&alice_key.address(), &bob_addr, &[Coin::new("hkd.demo", 1u128)])]).travel_rule(&payload);
    let sender = lantau_client::sender::Sender::new(client.clone(), alice_key.clone(), Duration::from_secs(30));
    for _ in 0..limit {
        let sent = sender.send_tx(transfer()).await?;
        anyhow::ensure!(sent.is_success(), "warm-up transfer failed: {sent:?}");
    }
    if evm {
        return estimate_evm_transfer(eth_url, &alice_key, &bob_addr, &payload).await;
    }
    let signer = lantau_client::sender::signer_data(client, &alice_key).await?;
    Ok(client.simulate(&transfer().gas(1_000_000).sign(&alice_key, &signer)).await?)
}

/// The Travel Rule payload of bench account `i` paying `j` (both full tier, one VASP).
fn bench_payload(i: usize, j: usize) -> lantau_proto::chain::compliance::v1::TravelRulePayload {
    lantau_proto::chain::compliance::v1::TravelRulePayload {
        tx_hash: String::new(),
        originator_ref: format!("ivms101:bench-{i}"),
        beneficiary_ref: format!("ivms101:bench-{j}"),
        originator_vasp: "VASP-BENCH".into(),
        beneficiary_vasp: "VASP-BENCH".into(),
        tier: "full".into(),
    }
}

fn bench_key(i: usize) -> anyhow::Result<SecretKey> {
    let seed = lantau_crypto::sha256(format!("lantau-bench-{i}").as_bytes());
    Ok(SecretKey::from_bytes(&seed)?)
}

/// How long the calibration verifies.
const CALIBRATION: Duration = Duration::from_secs(1);

/// Single-core libsecp256k1 ECDSA verifications per second on this machine: one fixed
/// signature over one fixed digest, verified in a loop for `budget` on a thread of its own
/// (after a short warm-up), before the node starts so nothing competes with it.
fn secp256k1_verify_per_s(budget: Duration) -> anyhow::Result<f64> {
    let run = move || -> anyhow::Result<f64> {
        let secp = secp256k1::Secp256k1::verification_only();
        let signer = secp256k1::Secp256k1::signing_only();
        let sk = secp256k1::SecretKey::from_byte_array(&lantau_crypto::sha256(b"lantau-bench-calibration-key"))?;
        let pk = secp256k1::PublicKey::from_secret_key(&signer, &sk);
        let msg = secp256k1::Message::from_digest(lantau_crypto::keccak256(b"lantau-bench-calibration-digest"));
        let sig = signer.sign_ecdsa(&msg, &sk);
        let verify = || secp.verify_ecdsa(std::hint::black_box(&msg), std::hint::black_box(&sig), std::hint::black_box(&pk));
        for _ in 0..200 {
            verify()?;
        }
        let t = Instant::now();
        let mut n = 0u64;
        // Read the clock once per batch: a verification takes tens of microseconds.
        while t.elapsed() < budget {
            for _ in 0..64 {
                verify()?;
            }
            n += 64;
        }
        Ok(n as f64 / t.elapsed().as_secs_f64())
    };
    std::thread::Builder::new().name("bench-calibration".into()).spawn(run)?.join().map_err(|_| anyhow::anyhow!("calibration thread panicked"))?
}

/// What both drivers' reports say of the load and its rate: the counts, the committed rate
/// beside the calibration, admission latency (`lat` sorted).
struct Load<'a> {
    accounts: usize,
    sent: u64,
    rejected: u64,
    full: u64,
    committed: u64,
    broadcast_secs: f64,
    span: f64,
    tps: f64,
    verify_per_s: f64,
    lat: &'a [f64],
}

impl Load<'_> {
    /// The machine-independent figure: committed tx/s per single-core verification/s.
    fn ratio(&self) -> f64 {
        if self.verify_per_s > 0.0 {
            self.tps / self.verify_per_s
        } else {
            0.0
        }
    }

    /// The report's fields for the load; `more` adds the driver's own.
    fn report(&self, more: serde_json::Value) -> serde_json::Value {
        let mut r = json!({
            "accounts": self.accounts,
            "sent": self.sent,
            "rejected_at_admission": self.rejected,
            "mempool_full_resends": self.full,
            "committed": self.committed,
            "broadcast_seconds": self.broadcast_secs,
            "commit_span_seconds": self.span,
            "committed_tx_per_s": self.tps,
            "secp256k1_verify_per_s": self.verify_per_s,
            "committed_per_verify_ratio": self.ratio(),
            "admission_latency_ms": {"p50": percentile(self.lat, 0.50), "p99": percentile(self.lat, 0.99), "max": self.lat.last().copied().unwrap_or(0.0)},
        });
        if let (Some(r), serde_json::Value::Object(m)) = (r.as_object_mut(), more) {
            r.extend(m);
        }
        r
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

pub(crate) async fn run(a: BenchArgs, json_out: bool) -> anyhow::Result<()> {
    anyhow::ensure!(a.accounts >= 2 && a.concurrency >= 1, "need at least 2 accounts and 1 worker");
    let verify_per_s = secp256k1_verify_per_s(CALIBRATION)?;
    eprintln!("bench: calibration: libsecp256k1 verifies {verify_per_s:.0} signatures/s on one core");
    if a.ops {
        return ops::run(ops::OpsArgs { keys: a.ops_keys, block: a.ops_block, rounds: a.ops_rounds }, json_out, verify_per_s).await;
    }
    if a.cometbft || a.kvstore {
        return cometbft::run(a, json_out, verify_per_s).await;
    }
    let dir = tempfile::tempdir()?;
    let keys: Vec<SecretKey> = (0..a.accounts).map(bench_key).collect::<anyhow::Result<_>>()?;
    let opts = InitOptions { extra_accounts: keys.iter().map(|k| k.address()).collect(), ..Default::default() };
    init_home(dir.path(), &opts)?;
    if a.stablecoin || a.evm {
        stablecoin_genesis(dir.path(), &keys)?;
    }
    if let Some(g) = a.max_block_gas {
        set_max_block_gas(dir.path(), g)?;
    }
    let cfg_path = lantau_node::home::Home(dir.path().to_path_buf()).config();
    let mut cfg = lantau_node::config::NodeConfig::load(&cfg_path)?;
    cfg.pruning.strategy = a.pruning.clone();
    cfg.pruning.retention()?;
    cfg.save(&cfg_path)?;
    let node = start(
        dir.path(),
        StartOptions {
            api_address: Some("127.0.0.1:0".into()),
            rpc_address: Some("127.0.0.1:0".into()),
            block_time_ms: Some(a.block_time_ms),
            json_rpc_address: Some("127.0.0.1:0".into()),
            json_rpc_ws_address: Some("127.0.0.1:0".into()),
            metrics_address: Some("127.0.0.1:0".into()),
            grpc_address: Some("127.0.0.1:0".into()),
        },
    )
    .await?;
    let base = format!("http://{}", node.api_addr);
    let eth_url = format!("http://{}", node.eth_addr);
    let chain_id = node.node.app().chain_id();
    let evm_chain_id = node.node.app().queries().evm_chain_id().await?;
    eprintln!("bench: node at {base}, chain {chain_id}; signing {} transfers...", a.accounts as u64 * a.per_account);

    let before_bench = committed_from_store(&node.node).await?;
    let state_dir = lantau_node::home::Home(dir.path().to_path_buf()).state();
    let bytes_at_start = dir_bytes(&state_dir);
    let signed = prepare(&a, &base, &eth_url, &chain_id, evm_chain_id, keys).await?;
    eprintln!("bench: broadcasting with {} workers", a.concurrency);

    // Broadcast. The client runs on a runtime of its own (one worker thread): on the node's
    // runtime its tasks would queue behind the node's (and the node's behind them), and the
    // round trip it measures would include that wait. It still shares the machine's cores.
    let client_rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).thread_name("bench-client").enable_all().build()?;
    let http = reqwest::Client::builder().pool_max_idle_per_host(a.concurrency).build()?;
    let signed = Arc::new(signed);
    let deadline = Instant::now() + Duration::from_secs(a.duration);
    let start_at = Instant::now();
    let cpu_at_start = process_cpu_secs();
    let tracing_on = a.trace.is_some();
    let mut workers = Vec::new();
    for w in 0..a.concurrency {
        let http = http.clone();
        let signed = signed.clone();
        let url = if a.evm { eth_url.clone() } else { format!("{base}/cosmos/tx/v1beta1/txs") };
        let evm = a.evm;
        let per = a.per_account as usize;
        let n = signed.len();
        let (conc, rate) = (a.concurrency, a.rate);
        workers.push(client_rt.spawn(async move {
            let mut lat = Vec::new();
            let mut trace: Vec<(f64, f64, u64)> = Vec::new();
            let mut rejected = 0u64;
            let mut full = 0u64;
            let mut k = w as u64;
            'outer: for seq in 0..per {
                for i in (w..n).step_by(conc) {
                    pace(start_at, rate, k).await;
                    k = k.saturating_add(conc as u64);
                    if Instant::now() > deadline {
                        break 'outer;
                    }
                    let body = if evm {
                        json!({"jsonrpc": "2.0", "id": 1, "method": "eth_sendRawTransaction", "params": [signed[i][seq]]})
                    } else {
                        json!({"tx_bytes": signed[i][seq], "mode": "BROADCAST_MODE_SYNC"})
                    };
                    // A full mempool (sdk 20) is back-pressure: wait and resend, as a client
                    // would; any other rejection counts.
                    loop {
                        let t = Instant::now();
                        let code = match http.post(&url).json(&body).send().await {
                            Ok(r) if evm => r.json::<serde_json::Value>().await.ok().map(|v| match v.get("error") {
                                None => 0,
                                Some(e) if e["message"].as_str().is_some_and(|m| m.starts_with("mempool is full")) => 20,
                                Some(_) => 1,
                            }),
                            Ok(r) => r.json::<serde_json::Value>().await.ok().and_then(|v| v["tx_response"]["code"].as_u64()),
                            Err(_) => None,
                        };
                        lat.push(t.elapsed().as_secs_f64() * 1e3);
                        if tracing_on {
                            trace.push((t.duration_since(start_at).as_secs_f64() * 1e3, t.elapsed().as_secs_f64() * 1e3, code.unwrap_or(u64::MAX)));
                        }
                        match code {
                            Some(0) => break,
                            Some(20) if Instant::now() < deadline => {
                                full += 1;
                                tokio::time::sleep(Duration::from_millis(50)).await
                            }
                            _ => {
                                rejected += 1;
                                break;
                            }
                        }
                    }
                }
            }
            (lat, rejected, full, trace)
        }));
    }
    let mut lat = Vec::new();
    let mut rejected = 0;
    let mut full = 0;
    let mut trace = Vec::new();
    for w in workers {
        let (l, r, f, t) = w.await?;
        lat.extend(l);
        trace.extend(t);
        rejected += r;
        full += f;
    }
    drop(http);
    client_rt.shutdown_background();
    let sent = lat.len() as u64;
    let broadcast_secs = start_at.elapsed().as_secs_f64();
    // Wait (bounded) for the mempool to drain.
    let drain_deadline = Instant::now() + Duration::from_secs(60);
    while node.node.mempool_size().await.0 > 0 && Instant::now() < drain_deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(a.block_time_ms + 200)).await;
    let cpu_secs = process_cpu_secs() - cpu_at_start;
    // Only the bench's own transfers count (not the warm-up that measured the gas limit).
    let committed = committed_from_store(&node.node).await?.saturating_sub(before_bench);
    // Block timings come from the engine's own record (the event stream can lag under load).
    let details: Vec<_> = node.node.engine().timings().into_iter().filter(|t| t.txs > 0 && t.committed_at >= start_at).collect();
    let blocks: Vec<(usize, f64, f64, Instant)> = details.iter().map(|t| (t.txs, t.finalize_ms, t.commit_ms, t.committed_at)).collect();
    let locked_avg = if details.is_empty() { 0.0 } else { details.iter().map(|d| d.recheck_locked_ms).sum::<f64>() / details.len() as f64 };
    let locked_max = details.iter().map(|d| d.recheck_locked_ms).fold(0.0, f64::max);
    let mean =
        |f: fn(&lantau_node::engine::BlockTiming) -> f64| if details.is_empty() { 0.0 } else { details.iter().map(f).sum::<f64>() / details.len() as f64 };
    let (propose_avg, wait_avg, recheck_avg, rechecked_avg) =
        (mean(|d| d.propose_ms), mean(|d| d.recheck_wait_ms), mean(|d| d.recheck_ms), mean(|d| d.rechecked as f64));
    // What a block's gas costs in time: FinalizeBlock + Commit (with recheck) per million gas
    // used, over the blocks with transactions; and the largest block's gas.
    let gas_used: u64 = details.iter().map(|d| d.gas_used).sum();
    let gas_wanted_max = details.iter().map(|d| d.gas_wanted).max().unwrap_or(0);
    let block_ms: f64 = details.iter().map(|d| d.finalize_ms + d.commit_ms).sum();
    let us_per_mgas = if gas_used > 0 { block_ms * 1e3 / (gas_used as f64 / 1e6) } else { 0.0 };
    let gas_per_tx = if details.is_empty() { 0.0 } else { gas_used as f64 / details.iter().map(|d| d.txs).sum::<usize>().max(1) as f64 };
    node.stop().await;
    // The store's growth over the run (after the stop: memtables flushed).
    let grew = dir_bytes(&state_dir).saturating_sub(bytes_at_start);
    let bytes_per_1000 = if committed > 0 { grew as f64 * 1000.0 / committed as f64 } else { 0.0 };
    if let Some(path) = &a.trace {
        use std::fmt::Write as _;
        let mut out = String::from("kind,t_ms,a,b,c\n");
        trace.sort_by(|x, y| x.0.total_cmp(&y.0));
        for (t, l, c) in &trace {
            let _ = writeln!(out, "tx,{t:.3},{l:.3},{c},");
        }
        for b in &blocks {
            let t = b.3.saturating_duration_since(start_at).as_secs_f64() * 1e3;
            let _ = writeln!(out, "block,{t:.3},{},{:.3},{:.3}", b.0, b.1, b.2);
        }
        for d in &details {
            let t = d.committed_at.saturating_duration_since(start_at).as_secs_f64() * 1e3;
            let _ = writeln!(
                out,
                "phases,{t:.3},{:.3},{:.3},{:.3}\nrecheck,{t:.3},{},{:.3},{}\nrecheck_time,{t:.3},{:.3},{:.3},",
                d.propose_ms, d.commit_only_ms, d.commit_ms, d.rechecked, d.recheck_locked_ms, d.recheck_locked_txs, d.recheck_wait_ms, d.recheck_ms
            );
        }
        std::fs::write(path, out)?;
    }
    lat.sort_by(|x, y| x.total_cmp(y));
    // Committed rate between the first and the last commit of a block with transactions; the
    // first block's commit opens the span, so its transactions are counted out of the rate.
    let span = match (blocks.first(), blocks.last()) {
        (Some(f), Some(l)) => l.3.duration_since(f.3).as_secs_f64(),
        _ => 0.0,
    };
    let first_block_txs = blocks.first().map(|b| b.0 as u64).unwrap_or(0);
    let tps = if span > 0.0 { committed.saturating_sub(first_block_txs) as f64 / span } else { 0.0 };
    // End to end: every committed transaction over the time from the first broadcast to the
    // last commit (includes the ramp-up before the first block).
    let e2e_secs = blocks.last().map(|l| l.3.duration_since(start_at).as_secs_f64()).unwrap_or(0.0);
    let e2e_tps = if e2e_secs > 0.0 { committed as f64 / e2e_secs } else { 0.0 };
    let load = Load { accounts: a.accounts, sent, rejected, full, committed, broadcast_secs, span, tps, verify_per_s, lat: &lat };
    let ratio = load.ratio();
    // What a committed transaction cost the process's CPU (node, its background threads and the
    // load generator), and the same in signature verifications of the calibration: steadier
    // than the rate on a shared machine, where the rate also moves with the cores it gets.
    let cpu_us_per_tx = if committed > 0 { cpu_secs * 1e6 / committed as f64 } else { 0.0 };
    let cpu_in_verifies = cpu_us_per_tx * verify_per_s / 1e6;
    let avg = |f: fn(&(usize, f64, f64, Instant)) -> f64| if blocks.is_empty() { 0.0 } else { blocks.iter().map(f).sum::<f64>() / blocks.len() as f64 };
    let max = |f: fn(&(usize, f64, f64, Instant)) -> f64| blocks.iter().map(f).fold(0.0, f64::max);
    let report = load.report(json!({
         "offered_tx_per_s": a.rate,
         "process_cpu_seconds": cpu_secs,
         "cpu_us_per_committed_tx": cpu_us_per_tx,
         "cpu_per_committed_tx_in_verifies": cpu_in_verifies,
         "end_to_end_seconds": e2e_secs,
         "end_to_end_tx_per_s": e2e_tps,
         "blocks_with_txs": blocks.len(),
         "txs_per_block_avg": avg(|b| b.0 as f64),
         "finalize_ms_per_block": {"avg": avg(|b| b.1), "max": max(|b| b.1)},
         "commit_ms_per_block": {"avg": avg(|b| b.2), "max": max(|b| b.2)},
         "recheck_locked_ms_per_block": {"avg": locked_avg, "max": locked_max},
         "propose_ms_per_block_avg": propose_avg,
         "recheck_ms_per_block_avg": recheck_avg,
         "recheck_wait_ms_per_block_avg": wait_avg,
         "rechecked_per_block_avg": rechecked_avg,
         "gas_used_per_tx": gas_per_tx,
         "gas_wanted_per_block_max": gas_wanted_max,
         "finalize_and_commit_us_per_mgas": us_per_mgas,
         "pruning": a.pruning,
         "store_bytes_grown": grew,
         "store_bytes_per_1000_committed": bytes_per_1000,
    }));
    if json_out {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", Workload::of(&a).describe(false));
        println!("sent {sent} signed MsgSend ({rejected} rejected at admission, {full} resent after mempool full), committed {committed}");
        println!("committed throughput: {tps:.0} tx/s over {span:.1} s (first to last commit); end to end {e2e_tps:.0} tx/s over {e2e_secs:.1} s (first broadcast to last commit)");
        println!(
            "calibration: libsecp256k1 verifies {verify_per_s:.0} signatures/s on one core; committed / verify = {ratio:.3} ({tps:.0} / {verify_per_s:.0})"
        );
        println!(
            "CPU: {cpu_secs:.1} s for the process (node and load generator) from the first broadcast to the last commit, {cpu_us_per_tx:.0} µs per committed transaction = {cpu_in_verifies:.1} verifications' worth"
        );
        println!("admission latency (SYNC broadcast round trip): p50 {:.2} ms, p99 {:.2} ms", percentile(&lat, 0.5), percentile(&lat, 0.99));
        println!(
            "per block ({} blocks, avg {:.0} txs): proposal avg {propose_avg:.1} ms, FinalizeBlock avg {:.1} ms (max {:.1}), Commit (with the wait for the last recheck) avg {:.1} ms (max {:.1})",
            blocks.len(), avg(|b| b.0 as f64), avg(|b| b.1), max(|b| b.1), avg(|b| b.2), max(|b| b.2)
        );
        println!("recheck beside the next block: avg {recheck_avg:.1} ms for {rechecked_avg:.0} txs; the commit waited for it {wait_avg:.1} ms on average");
        println!("admissions waited for the recheck's last round: avg {locked_avg:.1} ms per block (max {locked_max:.1})");
        println!(
            "gas: {gas_per_tx:.0} used per tx; FinalizeBlock + Commit take {us_per_mgas:.0} µs per million gas used; the largest block wanted {gas_wanted_max} gas"
        );
        println!("store: grew {:.1} MiB, {:.0} KiB per 1,000 committed transactions (pruning {})", grew as f64 / 1048576.0, bytes_per_1000 / 1024.0, a.pruning);
    }
    Ok(())
}

/// Before the load: the bench accounts' numbers, the gas limits a wallet would set, and every
/// transaction signed (on all cores), per account in sequence order: base64 `TxRaw` bytes,
/// or `0x` hex of a signed Ethereum transaction with `--evm`. `base` is a REST endpoint and
/// `eth_url` a JSON-RPC endpoint of the node under test.
async fn prepare(a: &BenchArgs, base: &str, eth_url: &str, chain_id: &str, evm_chain_id: u64, keys: Vec<SecretKey>) -> anyhow::Result<Vec<Vec<String>>> {
    let token = lantau_app::erc20::token_address("hkd.demo");
    // Account numbers: the named dev accounts come first in genesis, then the bench accounts.
    let client = lantau_client::RestClient::new(base);
    let mut numbers = Vec::with_capacity(keys.len());
    for k in &keys {
        let (n, _) = client.account(&k.address()).await?.ok_or_else(|| anyhow::anyhow!("bench account missing"))?;
        numbers.push(n);
    }

    // A multi-send's gas limit: what the first one simulates to, plus a fifth.
    let multi_send_gas = if a.multi_send > 0 {
        let probe = multi_send_builder(&keys, 0, 0, a.multi_send, lantau_app::AppConfig::default().max_gas_per_tx)
            .sign(&keys[0], &SignerData { chain_id: chain_id.to_string(), account_number: numbers[0], sequence: 0 });
        let used = client.simulate(&probe).await?;
        let gas = used.saturating_add(used / 5).min(lantau_app::AppConfig::default().max_gas_per_tx);
        eprintln!("bench: a multi-send of {} fresh outputs simulates to {used} gas; signing with {gas}", a.multi_send);
        gas
    } else {
        0
    };

    // A transfer's gas limit, as a wallet sets it: its simulated gas times 1.3 (Cosmos,
    // CosmJS's "auto" multiplier) or its estimate as it is (Ethereum, as ethers and viem sign);
    // `--gas-adjustment-percent` sets another. The block's gas counts limits, not use. A wallet estimates each transfer just before signing; the bench pre-signs, so it
    // estimates the workload's steady state instead: every bench account soon sends faster
    // than the velocity rule allows, and from then on each gated transfer raises a flag (the
    // flag, its audit row and indexes: about 1 % more gas than the first). So for gated transfers
    // the dev account alice first sends `velocity_tx_limit` transfers to the issuer, and the limit is
    // the larger of the first transfer's and her next (flagged) transfer's estimate, adjusted.
    let transfer_gas = if a.multi_send > 0 {
        0
    } else {
        let first = if a.evm {
            estimate_evm_transfer(eth_url, &keys[0], &keys[1].address(), &bench_payload(0, 1)).await?
        } else {
            let to = keys[1].address();
            let b = if a.stablecoin {
                TxBuilder::new(vec![msg_send(&keys[0].address(), &to, &[Coin::new("hkd.demo", 1u128)])]).travel_rule(&bench_payload(0, 1))
            } else {
                TxBuilder::new(vec![msg_send(&keys[0].address(), &to, &[Coin::new(NATIVE_DENOM, 1u128)])])
            };
            let probe = b.gas(1_000_000).sign(&keys[0], &SignerData { chain_id: chain_id.to_string(), account_number: numbers[0], sequence: 0 });
            client.simulate(&probe).await?
        };
        let steady = if a.stablecoin || a.evm { flagged_transfer_gas(&client, eth_url, a.evm).await? } else { first };
        let adjustment = a.gas_adjustment_percent.unwrap_or(if a.evm { 100 } else { 130 });
        let gas = first.max(steady).saturating_mul(adjustment) / 100;
        eprintln!("bench: transfers signed with a gas limit of {gas} (estimate x {adjustment}%: first transfer {first}, a velocity-flagged one {steady})");
        gas
    };

    // Pre-sign on all cores.
    let t_sign = Instant::now();
    let keys = Arc::new(keys);
    let numbers = Arc::new(numbers);
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let mut handles = Vec::new();
    for t in 0..threads {
        let keys = keys.clone();
        let numbers = numbers.clone();
        let chain_id = chain_id.to_string();
        let per = a.per_account;
        let stablecoin = a.stablecoin;
        let evm = a.evm;
        let multi_send = a.multi_send;
        handles.push(std::thread::spawn(move || {
            let n = keys.len();
            let mut out: Vec<(usize, Vec<String>)> = Vec::new();
            for i in (t..n).step_by(threads) {
                let j = (i + 1) % n;
                let to = keys[j].address();
                if evm {
                    use prost::Message as _;
                    let payload = bench_payload(i, j);
                    let input = lantau_client::eth::transfer_with_travel_rule_calldata(&to, 1, &payload.encode_to_vec());
                    let txs = (0..per)
                        .map(|seq| {
                            let u = lantau_client::eth::Unsigned {
                                chain_id: Some(evm_chain_id),
                                nonce: seq,
                                gas_limit: transfer_gas,
                                max_fee_per_gas: lantau_primitives::MIN_GAS_PRICE,
                                max_priority_fee_per_gas: Some(0),
                                to: Some(token),
                                input: input.clone(),
                                ..Default::default()
                            };
                            format!("0x{}", const_hex::encode(lantau_client::eth::sign(&keys[i], &u)))
                        })
                        .collect();
                    out.push((i, txs));
                    continue;
                }
                if multi_send > 0 {
                    let txs = (0..per)
                        .map(|seq| {
                            let b = multi_send_builder(&keys, i, seq, multi_send, multi_send_gas);
                            let bytes = b.sign(&keys[i], &SignerData { chain_id: chain_id.to_string(), account_number: numbers[i], sequence: seq });
                            base64::engine::general_purpose::STANDARD.encode(bytes)
                        })
                        .collect();
                    out.push((i, txs));
                    continue;
                }
                let b = if stablecoin {
                    let payload = bench_payload(i, j);
                    let msg = msg_send(&keys[i].address(), &to, &[Coin::new("hkd.demo", 1u128)]);
                    TxBuilder::new(vec![msg]).gas(transfer_gas).travel_rule(&payload)
                } else {
                    let msg = msg_send(&keys[i].address(), &to, &[Coin::new(NATIVE_DENOM, 1u128)]);
                    TxBuilder::new(vec![msg]).gas(transfer_gas)
                };
                let txs = (0..per)
                    .map(|seq| {
                        let bytes = b.sign(&keys[i], &SignerData { chain_id: chain_id.to_string(), account_number: numbers[i], sequence: seq });
                        base64::engine::general_purpose::STANDARD.encode(bytes)
                    })
                    .collect();
                out.push((i, txs));
            }
            out
        }));
    }
    let mut signed: Vec<Vec<String>> = vec![Vec::new(); keys.len()];
    for h in handles {
        for (i, txs) in h.join().map_err(|_| anyhow::anyhow!("signing thread panicked"))? {
            signed[i] = txs;
        }
    }
    eprintln!("bench: signed {} transactions in {:.1}s", a.accounts as u64 * a.per_account, t_sign.elapsed().as_secs_f64());
    Ok(signed)
}

/// Successful transactions in the committed blocks, counted from the node's own store (the
/// event stream can lag under load).
/// The bytes of the files under `dir`.
fn dir_bytes(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

async fn committed_from_store(node: &lantau_node::EmbeddedNode) -> anyhow::Result<u64> {
    let last = node.app().queries().last_height().await?;
    let mut ok = 0u64;
    for h in 1..=last {
        if let Some(r) = node.block_results(Some(h)).await? {
            // An Ethereum transaction that reverted is included with code 0: not a success.
            ok += r
                .tx_results
                .iter()
                .filter(|t| {
                    t.code.is_ok() && !t.events.iter().any(|e| e.kind == "ethereum_tx" && e.attributes.iter().any(|a| a.key_bytes() == b"ethereumTxFailed"))
                })
                .count() as u64;
        }
    }
    Ok(ok)
}

/// CPU time this process has used so far (user and system, every thread), in seconds.
fn process_cpu_secs() -> f64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage through a valid pointer; it is read only on success.
    let ru = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) != 0 {
            return 0.0;
        }
        ru.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

//! `lantaud bench --cometbft`: the same workloads against the app under real CometBFT child
//! processes (a local network of `--validators`, one by default), loaded through CometBFT's
//! RPC `broadcast_tx_sync` (Cosmos transactions) or the app's `eth_sendRawTransaction`
//! (Ethereum ones); and `--kvstore`, the same load against CometBFT's built-in `kvstore` app
//! under the same binary and settings: the ceiling of any app under that CometBFT here.
//!
//! Everything is measured from outside, as an operator would: committed transactions and
//! block times from CometBFT's `/block` and `/block_results`, CPU from `/proc/<pid>/stat` of
//! every app and CometBFT process, the broadcast round trip at the client, and inclusion as the
//! number of blocks between the height CometBFT reported when a transaction was admitted and
//! the block that holds it.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use lantau_node::testnet::{self, RunningValidator, Testnet, TestnetOptions};
use serde_json::{json, Value};

use super::{percentile, BenchArgs, Workload};

/// CPU seconds (user + system) a process has used, from `/proc/<pid>/stat`; 0 when gone.
fn proc_cpu_secs(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0.0 };
    // The command name may hold spaces: the fields after it start past the last ')'.
    let Some((_, rest)) = stat.rsplit_once(')') else { return 0.0 };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    (ticks(11) + ticks(12)) as f64 / hz
}

/// A block of loopback ports free for a network of `validators` (10 per node).
fn free_base(validators: usize) -> anyhow::Result<u16> {
    let width = u16::try_from(validators.saturating_mul(10).saturating_add(10)).unwrap_or(u16::MAX);
    let start = 30_000 + (std::process::id() % 200) as u16 * 100;
    for k in 0..200u16 {
        let base = 30_000 + (start - 30_000 + k * 100) % 20_000;
        if (0..width).all(|o| std::net::TcpListener::bind(("127.0.0.1", base + o)).is_ok()) {
            return Ok(base);
        }
    }
    anyhow::bail!("no free block of {width} loopback ports")
}

async fn rpc(http: &reqwest::Client, url: &str, path: &str) -> anyhow::Result<Value> {
    let v: Value = http.get(format!("{url}/{path}")).send().await?.json().await?;
    v.get("result").cloned().ok_or_else(|| anyhow::anyhow!("{url}/{path}: {v}"))
}

/// The height the app behind `url` has committed (`abci_info`): CometBFT's `status` may name a
/// block it stored but the app has not executed yet.
async fn app_height(http: &reqwest::Client, url: &str) -> anyhow::Result<u64> {
    let s = rpc(http, url, "abci_info").await?;
    s["response"]["last_block_height"].as_str().and_then(|h| h.parse().ok()).ok_or_else(|| anyhow::anyhow!("abci_info without a height: {s}"))
}

async fn latest_height(http: &reqwest::Client, url: &str) -> anyhow::Result<u64> {
    let s = rpc(http, url, "status").await?;
    s["sync_info"]["latest_block_height"].as_str().and_then(|h| h.parse().ok()).ok_or_else(|| anyhow::anyhow!("status without a height: {s}"))
}

/// Waits (bounded) until every node's CometBFT has committed `height`.
async fn wait_height(http: &reqwest::Client, urls: &[String], height: u64, within: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + within;
    for url in urls {
        loop {
            if latest_height(http, url).await.is_ok_and(|h| h >= height) {
                break;
            }
            anyhow::ensure!(Instant::now() < deadline, "{url} did not reach height {height} within {within:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

/// The processes of the run, stopped on drop.
struct Processes {
    validators: Vec<RunningValidator>,
    kvstore: Option<std::process::Child>,
}

impl Processes {
    fn pids(&self) -> (Vec<u32>, Vec<u32>) {
        let apps = self.validators.iter().map(|v| v.app.id()).collect();
        let mut comets: Vec<u32> = self.validators.iter().map(|v| v.cometbft.id()).collect();
        comets.extend(self.kvstore.as_ref().map(|c| c.id()));
        (apps, comets)
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        for v in self.validators.drain(..) {
            v.stop(Duration::from_secs(10));
        }
        if let Some(mut c) = self.kvstore.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Sets `[table] key = value` in a CometBFT `config.toml`.
fn set_config(path: &Path, edits: &[(&str, &str, toml_edit::Value)]) -> anyhow::Result<()> {
    let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(path)?.parse()?;
    for (table, key, v) in edits {
        let t = doc.get_mut(table).ok_or_else(|| anyhow::anyhow!("{}: no [{table}]", path.display()))?;
        t[key] = toml_edit::Item::Value(v.clone());
    }
    std::fs::write(path, doc.to_string())?;
    Ok(())
}

/// The CometBFT settings of a bench network (every node, kvstore included): the block pause,
/// and a mempool that holds the whole offered load's backlog.
fn bench_config(a: &BenchArgs) -> Vec<(&'static str, &'static str, toml_edit::Value)> {
    vec![
        ("consensus", "timeout_commit", a.timeout_commit.as_str().into()),
        ("mempool", "size", i64::try_from(a.mempool_size).unwrap_or(i64::MAX).into()),
        ("mempool", "max_txs_bytes", 4_294_967_296i64.into()),
        ("mempool", "cache_size", i64::try_from(a.mempool_size.saturating_mul(2)).unwrap_or(i64::MAX).into()),
        ("tx_index", "indexer", a.tx_index.as_str().into()),
    ]
}

/// Lays out and starts the network: `validators` app + CometBFT pairs whose genesis funds the
/// bench accounts (`keys`), with the workload's identities and balances.
fn start_network(dir: &Path, a: &BenchArgs, keys: &[lantau_crypto::SecretKey], workload: Workload) -> anyhow::Result<(Testnet, Processes)> {
    let cometbft = testnet::find_cometbft(None)?;
    let opts = TestnetOptions {
        validators: a.validators,
        full_nodes: 0,
        snapshot_interval: 0,
        base_port: free_base(a.validators)?,
        chain_id: lantau_node::home::DEV_CHAIN_ID.into(),
        timeout_commit: a.timeout_commit.clone(),
        cometbft,
        extra_accounts: keys.iter().map(|k| k.address()).collect(),
        app_mempool: !a.cometbft_mempool,
    };
    let net = testnet::init(dir, &opts)?;
    for (i, n) in net.nodes.iter().enumerate() {
        let mut edits = bench_config(a);
        if let (0, Some(addr)) = (i, &a.cometbft_pprof) {
            edits.push(("rpc", "pprof_laddr", addr.as_str().into()));
        }
        set_config(&n.cometbft_home.join("config/config.toml"), &edits)?;
        if !a.cometbft_mempool {
            // The app's mempool holds the backlog CometBFT's would.
            let path = n.app_home.join("config/config.toml");
            let mut cfg = lantau_node::config::NodeConfig::load(&path)?;
            cfg.mempool.max_txs = usize::try_from(a.mempool_size).unwrap_or(usize::MAX);
            cfg.mempool.max_bytes = 4_294_967_296;
            cfg.save(&path)?;
        }
        let edit = |path: &Path, app_state: &str, consensus: bool| -> anyhow::Result<()> {
            let mut g: Value = serde_json::from_slice(&std::fs::read(path)?)?;
            if workload != Workload::Native {
                super::stablecoin_app_state(&mut g[app_state], keys)?;
            }
            if let (true, Some(gas)) = (consensus, a.max_block_gas) {
                g["consensus_params"]["block"]["max_gas"] = json!(gas.to_string());
            }
            std::fs::write(path, serde_json::to_vec_pretty(&g)?)?;
            Ok(())
        };
        edit(&n.cometbft_home.join("config/genesis.json"), "app_state", true)?;
        edit(&n.app_home.join("config/genesis.json"), "app_state", false)?;
    }
    let exe = std::env::current_exe()?;
    let mut procs = Processes { validators: Vec::new(), kvstore: None };
    for i in 0..net.nodes.len() {
        procs.validators.push(testnet::start_validator(dir, &net, i, &exe)?);
    }
    Ok((net, procs))
}

/// Starts CometBFT alone with its built-in `kvstore` app, the bench settings and the
/// network's timeouts; returns its RPC URL.
fn start_kvstore(dir: &Path, a: &BenchArgs) -> anyhow::Result<(String, Processes)> {
    let cometbft = testnet::find_cometbft(None)?;
    let home = dir.join("kvstore");
    let out = std::process::Command::new(&cometbft).arg("init").arg("--home").arg(&home).output()?;
    anyhow::ensure!(out.status.success(), "cometbft init: {}", String::from_utf8_lossy(&out.stderr));
    let base = free_base(1)?;
    let rpc = format!("127.0.0.1:{}", base + 1);
    let mut edits = bench_config(a);
    edits.extend([
        ("rpc", "laddr", format!("tcp://{rpc}").into()),
        ("p2p", "laddr", format!("tcp://127.0.0.1:{base}").into()),
        ("consensus", "timeout_propose", "1s".into()),
        ("consensus", "timeout_prevote", "500ms".into()),
        ("consensus", "timeout_precommit", "500ms".into()),
    ]);
    set_config(&home.join("config/config.toml"), &edits)?;
    let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(home.join("config/config.toml"))?.parse()?;
    doc["proxy_app"] = toml_edit::value("kvstore");
    std::fs::write(home.join("config/config.toml"), doc.to_string())?;
    let log = std::fs::File::create(dir.join("kvstore.log"))?;
    let child = std::process::Command::new(&cometbft)
        .arg("start")
        .arg("--home")
        .arg(&home)
        .stdout(std::process::Stdio::from(log.try_clone()?))
        .stderr(std::process::Stdio::from(log))
        .spawn()?;
    Ok((format!("http://{rpc}"), Processes { validators: Vec::new(), kvstore: Some(child) }))
}

/// One block of the run, as CometBFT records it.
struct Block {
    height: u64,
    time: f64,
    txs: usize,
    ok: u64,
    hashes: Vec<String>,
}

/// Blocks `from..=to` with their time (seconds since the epoch), size and successful
/// transactions. A reverted Ethereum transaction is included with code 0: not a success.
async fn blocks(http: &reqwest::Client, url: &str, from: u64, to: u64) -> anyhow::Result<Vec<Block>> {
    let mut out = Vec::new();
    for h in from..=to {
        let b = rpc(http, url, &format!("block?height={h}")).await?;
        let time = b["block"]["header"]["time"].as_str().unwrap_or_default();
        let time = time::OffsetDateTime::parse(time, &time::format_description::well_known::Rfc3339)
            .map(|t| t.unix_timestamp_nanos() as f64 / 1e9)
            .map_err(|e| anyhow::anyhow!("block {h} time {time:?}: {e}"))?;
        let txs = b["block"]["data"]["txs"].as_array().cloned().unwrap_or_default();
        let hashes = txs
            .iter()
            .filter_map(|t| t.as_str())
            .filter_map(|t| base64::engine::general_purpose::STANDARD.decode(t).ok())
            .map(|t| const_hex::encode_upper(lantau_crypto::sha256(&t)))
            .collect();
        let r = rpc(http, url, &format!("block_results?height={h}")).await?;
        let ok = r["txs_results"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .filter(|t| t["code"].as_u64().unwrap_or(0) == 0)
                    .filter(|t| {
                        !t["events"].as_array().is_some_and(|es| {
                            es.iter().any(|e| {
                                e["type"] == "ethereum_tx" && e["attributes"].as_array().is_some_and(|a| a.iter().any(|x| x["key"] == "ethereumTxFailed"))
                            })
                        })
                    })
                    .count() as u64
            })
            .unwrap_or(0);
        out.push(Block { height: h, time, txs: txs.len(), ok, hashes });
    }
    Ok(out)
}

/// The slowest block in `from..=to` by the `block_ms` of the app's `committed block` log lines
/// (from the start of its execution to its commit): `(block_ms, txs)`, and the mean over the
/// blocks with transactions.
fn slowest_block(app_log: &Path, from: u64, to: u64) -> Option<((f64, u64), f64)> {
    let text = std::fs::read_to_string(app_log).ok()?;
    let field = |line: &str, name: &str| -> Option<f64> {
        let at = line.find(&format!(" {name}="))?;
        line[at + name.len() + 2..].split_whitespace().next()?.parse().ok()
    };
    let blocks: Vec<(f64, u64)> = text
        .lines()
        .filter(|l| l.contains("committed block"))
        .filter_map(|l| Some((field(l, "height")? as u64, field(l, "txs")? as u64, field(l, "block_ms")?)))
        .filter(|(h, txs, _)| (from..=to).contains(h) && *txs > 0)
        .map(|(_, txs, ms)| (ms, txs))
        .collect();
    let slowest = blocks.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0))?;
    Some((slowest, blocks.iter().map(|b| b.0).sum::<f64>() / blocks.len() as f64))
}

/// One admitted transaction: the hash CometBFT will index it by (upper-case hex) and the
/// height CometBFT reported when it was admitted.
type Admitted = (String, u64);

/// Runs the bench under CometBFT (or the kvstore ceiling) and prints the report.
pub(super) async fn run(a: BenchArgs, json_out: bool, verify_per_s: f64) -> anyhow::Result<()> {
    let workload = Workload::of(&a);
    anyhow::ensure!(a.validators >= 1, "--validators must be at least 1");
    anyhow::ensure!(!(a.kvstore && workload != Workload::Native), "--kvstore takes plain transactions only (no --stablecoin or --evm)");
    anyhow::ensure!(a.multi_send == 0, "--multi-send runs on the embedded engine only");
    let dir = tempfile::tempdir()?;
    let keys: Vec<lantau_crypto::SecretKey> = (0..a.accounts).map(super::bench_key).collect::<anyhow::Result<_>>()?;
    let http = reqwest::Client::builder().pool_max_idle_per_host(a.concurrency).timeout(Duration::from_secs(30)).build()?;

    // The network (or kvstore), and what the load goes to.
    let (procs, rpc_urls, eth_urls, signed) = if a.kvstore {
        let (url, procs) = start_kvstore(dir.path(), &a)?;
        wait_height(&http, std::slice::from_ref(&url), 1, Duration::from_secs(60)).await?;
        let per = a.per_account;
        let signed: Vec<Vec<String>> =
            (0..a.accounts).map(|i| (0..per).map(|s| base64::engine::general_purpose::STANDARD.encode(format!("bench-{i}-{s}=v"))).collect()).collect();
        (procs, vec![url], Vec::new(), signed)
    } else {
        let (net, procs) = start_network(dir.path(), &a, &keys, workload)?;
        // With the app-side mempool clients broadcast to the apps' CometBFT RPC front, which
        // serves the mempool's size too; blocks are read from CometBFT's own RPC.
        let rpc_urls: Vec<String> = net.nodes.iter().map(|n| if !a.cometbft_mempool { n.rpc_front.clone() } else { n.rpc.clone() }).collect();
        wait_height(&http, &rpc_urls, 2, Duration::from_secs(120)).await?;
        let first = net.nodes.first().ok_or_else(|| anyhow::anyhow!("no validators"))?;
        let eth_urls: Vec<String> = net.nodes.iter().map(|n| n.json_rpc.clone()).collect();
        let v: Value = http.post(&first.json_rpc).json(&json!({"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []})).send().await?.json().await?;
        let evm_chain_id =
            v["result"].as_str().and_then(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok()).ok_or_else(|| anyhow::anyhow!("eth_chainId: {v}"))?;
        let signed = super::prepare(&a, &first.rest, &first.json_rpc, &net.chain_id, evm_chain_id, keys).await?;
        (procs, rpc_urls, eth_urls, signed)
    };
    let (app_pids, comet_pids) = procs.pids();
    let url0 = rpc_urls.first().cloned().ok_or_else(|| anyhow::anyhow!("no node"))?;
    eprintln!(
        "bench: {} under CometBFT ({} validator(s)); broadcasting with {} workers",
        if a.kvstore { "kvstore" } else { "lantau" },
        rpc_urls.len().max(1),
        a.concurrency
    );

    // The height the app has committed, for inclusion delays, and when each height was first
    // seen committed (seconds after the first broadcast): a block's header time is the time
    // its predecessor was committed (CometBFT's BFT time), before its own execution, so the
    // rates are measured on this clock instead.
    let height = Arc::new(AtomicU64::new(app_height(&http, &url0).await?));
    let start_height = height.load(Ordering::Relaxed);
    let start_at = Instant::now();
    let committed_at = Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::<u64, f64>::new()));
    let poller = {
        let (http, url, height, committed_at) = (http.clone(), url0.clone(), height.clone(), committed_at.clone());
        tokio::spawn(async move {
            loop {
                if let Ok(h) = app_height(&http, &url).await {
                    let before = height.swap(h, Ordering::Relaxed);
                    let t = start_at.elapsed().as_secs_f64();
                    let mut seen = committed_at.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    for k in before.saturating_add(1)..=h {
                        seen.entry(k).or_insert(t);
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };

    let client_rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).thread_name("bench-client").enable_all().build()?;
    let cpu_of = |pids: &[u32]| pids.iter().map(|p| proc_cpu_secs(*p)).sum::<f64>();
    let (app_cpu0, comet_cpu0, own_cpu0) = (cpu_of(&app_pids), cpu_of(&comet_pids), super::process_cpu_secs());
    let signed = Arc::new(signed);
    let deadline = Instant::now() + Duration::from_secs(a.duration);
    let evm = workload == Workload::Evm;
    let mut workers = Vec::new();
    for w in 0..a.concurrency {
        let (http, signed, height) = (http.clone(), signed.clone(), height.clone());
        // Spread over the validators, as clients of a network would be.
        let url = if evm { &eth_urls[w % eth_urls.len()] } else { &rpc_urls[w % rpc_urls.len()] };
        // Parsed once: a request per transaction parsing its URL again was ~7 % of the client's CPU.
        let url = reqwest::Url::parse(url)?;
        let (per, n, conc, rate) = (a.per_account as usize, signed.len(), a.concurrency, a.rate);
        workers.push(client_rt.spawn(async move {
            let (mut lat, mut admitted, mut rejected, mut full) = (Vec::new(), Vec::<Admitted>::new(), 0u64, 0u64);
            let mut k = w as u64;
            'outer: for seq in 0..per {
                for i in (w..n).step_by(conc) {
                    super::pace(start_at, rate, k).await;
                    k = k.saturating_add(conc as u64);
                    if Instant::now() > deadline {
                        break 'outer;
                    }
                    let tx = &signed[i][seq];
                    let body = if evm {
                        json!({"jsonrpc": "2.0", "id": 1, "method": "eth_sendRawTransaction", "params": [tx]})
                    } else {
                        json!({"jsonrpc": "2.0", "id": 1, "method": "broadcast_tx_sync", "params": {"tx": tx}})
                    };
                    loop {
                        let t = Instant::now();
                        let v: Option<Value> = match http.post(url.clone()).json(&body).send().await {
                            Ok(r) => r.json().await.ok(),
                            Err(_) => None,
                        };
                        lat.push(t.elapsed().as_secs_f64() * 1e3);
                        let err = v.as_ref().and_then(|v| v.get("error")).map(|e| format!("{} {}", e["message"], e["data"]));
                        let code = v.as_ref().and_then(|v| v["result"]["code"].as_u64());
                        let accepted = match (&v, &err) {
                            (Some(v), None) if evm => v["result"].as_str().map(|h| h.trim_start_matches("0x").to_ascii_uppercase()),
                            (Some(v), None) if code == Some(0) => v["result"]["hash"].as_str().map(str::to_string),
                            _ => None,
                        };
                        if let Some(hash) = accepted {
                            admitted.push((hash, height.load(Ordering::Relaxed)));
                            break;
                        }
                        // A full mempool is back-pressure: wait and resend, as a client would.
                        let is_full = err.as_deref().is_some_and(|e| e.contains("mempool is full")) || code == Some(20);
                        if is_full && Instant::now() < deadline {
                            full += 1;
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                        rejected += 1;
                        break;
                    }
                }
            }
            (lat, admitted, rejected, full)
        }));
    }
    let (mut lat, mut admitted, mut rejected, mut full) = (Vec::new(), Vec::new(), 0, 0);
    for w in workers {
        let (l, ad, r, f) = w.await?;
        lat.extend(l);
        admitted.extend(ad);
        rejected += r;
        full += f;
    }
    client_rt.shutdown_background();
    let sent = lat.len() as u64;
    let broadcast_secs = start_at.elapsed().as_secs_f64();
    // Wait (bounded) for every mempool to drain, then for one more block.
    let drain_deadline = Instant::now() + Duration::from_secs(120);
    for url in &rpc_urls {
        while Instant::now() < drain_deadline {
            let n = rpc(&http, url, "num_unconfirmed_txs").await.ok().and_then(|v| v["n_txs"].as_str().and_then(|n| n.parse::<u64>().ok()));
            if n == Some(0) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let end_height = latest_height(&http, &url0).await?;
    wait_height(&http, &rpc_urls, end_height.saturating_add(1), Duration::from_secs(30)).await?;
    let (app_cpu, comet_cpu, own_cpu) = (cpu_of(&app_pids) - app_cpu0, cpu_of(&comet_pids) - comet_cpu0, super::process_cpu_secs() - own_cpu0);
    let seen_deadline = Instant::now() + Duration::from_secs(30);
    while !committed_at.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains_key(&end_height) && Instant::now() < seen_deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    poller.abort();
    let committed_at = committed_at.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();

    let all = blocks(&http, &url0, start_height.saturating_add(1), end_height).await?;
    // The Ethereum hash an eth_sendRawTransaction answers is not the CometBFT hash of the
    // envelope: its block comes from the app's receipt.
    let mut included: std::collections::BTreeMap<String, u64> = all.iter().flat_map(|b| b.hashes.iter().map(move |h| (h.clone(), b.height))).collect();
    if evm {
        included.clear();
        let eth = eth_urls.first().cloned().unwrap_or_default();
        // A sample is enough for percentiles: 500 admitted transactions, evenly spread (a
        // receipt's cumulative gas and log indexes are summed over its block's earlier
        // transactions, so reading receipts of blocks of thousands is slow).
        for (hash, _) in admitted.iter().step_by((admitted.len() / 500).max(1)) {
            let v: Value = http
                .post(&eth)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "eth_getTransactionReceipt", "params": [format!("0x{}", hash.to_ascii_lowercase())]}))
                .send()
                .await?
                .json()
                .await?;
            if let Some(h) = v["result"]["blockNumber"].as_str().and_then(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok()) {
                included.insert(hash.clone(), h);
            }
        }
    }
    let mut inclusion: Vec<f64> = admitted.iter().filter_map(|(h, at)| included.get(h).map(|b| b.saturating_sub(*at) as f64)).collect();
    inclusion.sort_by(|x, y| x.total_cmp(y));
    let with_txs: Vec<&Block> = all.iter().filter(|b| b.txs > 0).collect();
    let committed: u64 = all.iter().map(|b| b.ok).sum();
    // Between the commits of the first and the last block with transactions, as the app
    // committed them (the first block's transactions counted out).
    let at = |b: &Block| committed_at.get(&b.height).copied().unwrap_or(0.0);
    let span = match (with_txs.first(), with_txs.last()) {
        (Some(f), Some(l)) => at(l) - at(f),
        _ => 0.0,
    };
    let first_ok = with_txs.first().map(|b| b.ok).unwrap_or(0);
    let tps = if span > 0.0 { committed.saturating_sub(first_ok) as f64 / span } else { 0.0 };
    // End to end: every committed transaction over the time from the first broadcast to the
    // commit of the last block with transactions (the ramp-up and a backlog's admission
    // included).
    let e2e_secs = with_txs.last().map(|b| at(b)).unwrap_or(0.0);
    let e2e_tps = if e2e_secs > 0.0 { committed as f64 / e2e_secs } else { 0.0 };
    let intervals: Vec<f64> = all.windows(2).map(|w| (w[1].time - w[0].time) * 1e3).collect();
    let interval_avg = if intervals.is_empty() { 0.0 } else { intervals.iter().sum::<f64>() / intervals.len() as f64 };
    let txs_avg = if with_txs.is_empty() { 0.0 } else { with_txs.iter().map(|b| b.txs as f64).sum::<f64>() / with_txs.len() as f64 };
    let txs_max = with_txs.iter().map(|b| b.txs).max().unwrap_or(0);
    let per_tx = |secs: f64| if committed > 0 { secs * 1e6 / committed as f64 } else { 0.0 };
    lat.sort_by(|x, y| x.total_cmp(y));
    drop(procs);
    // The kvstore app logs no blocks of its own.
    let slowest = if a.kvstore { None } else { slowest_block(&dir.path().join("node0/app.log"), start_height.saturating_add(1), end_height) };
    let ((slowest_ms, slowest_txs), block_ms_avg) = slowest.unwrap_or(((0.0, 0), 0.0));
    let load = super::Load { accounts: a.accounts, sent, rejected, full, committed, broadcast_secs, span, tps, verify_per_s, lat: &lat };
    let ratio = load.ratio();
    let report = load.report(json!({
        "driver": if a.kvstore { "cometbft-kvstore" } else { "cometbft" },
        "validators": if a.kvstore { 1 } else { a.validators },
        "admitted": admitted.len(),
        "app_mempool": !a.cometbft_mempool,
        "offered_tx_per_s": a.rate,
        "end_to_end_seconds": e2e_secs,
        "end_to_end_tx_per_s": e2e_tps,
        "cpu_us_per_committed_tx": per_tx(app_cpu + comet_cpu),
        "app_cpu_us_per_committed_tx": per_tx(app_cpu),
        "cometbft_cpu_us_per_committed_tx": per_tx(comet_cpu),
        "load_generator_cpu_us_per_committed_tx": per_tx(own_cpu),
        "app_cpu_seconds": app_cpu,
        "cometbft_cpu_seconds": comet_cpu,
        "inclusion_blocks": {"p50": percentile(&inclusion, 0.50), "p99": percentile(&inclusion, 0.99), "max": inclusion.last().copied().unwrap_or(0.0), "sampled": inclusion.len()},
        "blocks": all.len(),
        "blocks_with_txs": with_txs.len(),
        "block_interval_ms_avg": interval_avg,
        "txs_per_block_avg": txs_avg,
        "txs_per_block_max": txs_max,
        "block_ms": {"max": slowest_ms, "txs_at_max": slowest_txs, "avg": block_ms_avg},
   }));
    if json_out {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} under CometBFT {} ({} validator(s), timeout_commit {}, {})",
            workload.describe(a.kvstore),
            testnet::COMETBFT_VERSION,
            report["validators"],
            a.timeout_commit,
            if a.cometbft_mempool { "CometBFT's mempool" } else { "the app's mempool" }
        );
        let offered = if a.rate > 0 { format!("offered at {} tx/s, ", a.rate) } else { String::new() };
        println!("{offered}sent {sent} ({} admitted, {rejected} rejected, {full} resent after mempool full), committed {committed}", admitted.len());
        println!(
            "committed throughput: {tps:.0} tx/s over {span:.1} s (first to last block with transactions); end to end {e2e_tps:.0} tx/s over {e2e_secs:.1} s"
        );
        println!("calibration: libsecp256k1 verifies {verify_per_s:.0} signatures/s on one core; committed / verify = {ratio:.3}");
        println!(
            "CPU per committed transaction: {:.0} µs (app {:.0} + CometBFT {:.0}); load generator {:.0}",
            per_tx(app_cpu + comet_cpu),
            per_tx(app_cpu),
            per_tx(comet_cpu),
            per_tx(own_cpu)
        );
        println!("admission latency (broadcast round trip): p50 {:.2} ms, p99 {:.2} ms", percentile(&lat, 0.5), percentile(&lat, 0.99));
        println!(
            "inclusion: p50 {:.0}, p99 {:.0} blocks after admission ({} sampled)",
            percentile(&inclusion, 0.5),
            percentile(&inclusion, 0.99),
            inclusion.len()
        );
        println!("blocks: {} ({} with transactions), interval avg {interval_avg:.0} ms, avg {txs_avg:.0} txs (max {txs_max})", all.len(), with_txs.len());
        if slowest.is_some() {
            println!(
                "block time (the app's execution start to its commit, validator 0): avg {block_ms_avg:.0} ms, slowest {slowest_ms:.0} ms ({slowest_txs} txs), {:.0} % of the average interval",
                if interval_avg > 0.0 { slowest_ms * 100.0 / interval_avg } else { 0.0 }
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::slowest_block;

    #[test]
    fn the_slowest_block_is_read_from_the_apps_commit_lines_in_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("app.log");
        let line = |h: u64, txs: u64, ms: &str| {
            format!("2026-11-29T10:48:21.669014Z  INFO lantau_app::block: committed block height={h} txs={txs} time=2026-11-29T10:47:55.403303604Z block_ms={ms} app_hash=96\n")
        };
        let text = [line(4, 0, "3.0"), line(5, 900, "700.0"), line(6, 13446, "898.0"), line(7, 100, "120.0"), line(8, 20000, "2000.0")].concat();
        std::fs::write(&log, format!("2026-11-29T10:48:20Z  WARN lantau_node: something else\n{text}")).unwrap();
        // Heights 4-7: the empty block is left out of the mean, height 8 is past the run.
        let ((ms, txs), avg) = slowest_block(&log, 4, 7).unwrap();
        assert_eq!((ms, txs), (898.0, 13446));
        assert!((avg - (700.0 + 898.0 + 120.0) / 3.0).abs() < 1e-9);
        assert!(slowest_block(&log, 20, 30).is_none());
        assert!(slowest_block(&dir.path().join("missing.log"), 1, 9).is_none());
    }
}

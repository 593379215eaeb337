//! A local network of validators under real CometBFT (`lantaud testnet init|start`): for each
//! validator an app home (`nodeN/app`, served over ABCI with `lantaud start --abci`) and a
//! CometBFT home (`nodeN/cometbft`), one genesis shared by all, loopback ports only.
//!
//! Layout of the output directory:
//!
//! ```text
//! testnet.json           the network: chain id, the cometbft binary, each node's homes and ports
//! nodeN/app/             a Lantau home (its genesis is the network's app state)
//! nodeN/cometbft/        a CometBFT home (config.toml, genesis.json, keys)
//! nodeN/app.log          the app's log      (testnet start)
//! nodeN/cometbft.log     CometBFT's log     (testnet start)
//! ```
//!
//! Ports of node `i`: `base + 10·i` (P2P), `+1` (CometBFT RPC), `+2` (ABCI), `+3` (the app's
//! Prometheus endpoint), `+4` (REST), `+5` (Ethereum JSON-RPC), `+6` (its WebSocket), `+7`
//! (gRPC).
//!
//! Every app takes a state-sync snapshot every `snapshot_interval` heights. Full nodes
//! (`--full-nodes`, numbered after the validators) are not in the validator set and join by
//! state sync: their CometBFT config enables `[statesync]` with the first two validators'
//! RPC as light-client servers; the trusted height and hash are taken from the first
//! validator's latest commit when the node first starts ([`fill_state_sync_trust`]), which is
//! what a local network can trust; a real network's operator takes them from a source they
//! trust (docs/operations.md).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::home::{init_home, InitOptions};

/// The CometBFT release the network runs (installed by `scripts/prereqs.sh`).
pub const COMETBFT_VERSION: &str = "v0.38.26";

/// Finds the `cometbft` binary: `explicit`, then `$LANTAU_COMETBFT`, then the cache where
/// `scripts/prereqs.sh` installs it (`$LANTAU_CACHE` or `~/.cache`), then `PATH`.
pub fn find_cometbft(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        anyhow::ensure!(p.is_file(), "no cometbft binary at {}", p.display());
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("LANTAU_COMETBFT") {
        let p = PathBuf::from(p);
        anyhow::ensure!(p.is_file(), "LANTAU_COMETBFT={} is not a file", p.display());
        return Ok(p);
    }
    let cache = std::env::var_os("LANTAU_CACHE").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")));
    if let Some(cache) = cache {
        let p = cache.join(format!("lantau-cometbft-{COMETBFT_VERSION}/cometbft"));
        if p.is_file() {
            return Ok(p);
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("cometbft");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    anyhow::bail!(
        "no cometbft binary: run scripts/prereqs.sh (go install github.com/cometbft/cometbft/cmd/cometbft@{COMETBFT_VERSION}), \
         or set LANTAU_COMETBFT or --cometbft"
    )
}

/// How to lay out a network.
#[derive(Debug, Clone)]
pub struct TestnetOptions {
    /// Validators.
    pub validators: usize,
    /// Full nodes that join by state sync (after the validators in the numbering).
    pub full_nodes: usize,
    /// Every app takes a state-sync snapshot every this many heights (0: none).
    pub snapshot_interval: u64,
    /// First port (see the module documentation).
    pub base_port: u16,
    /// Cosmos chain id.
    pub chain_id: String,
    /// CometBFT's `timeout_commit` (the pause after a block), e.g. `300ms`.
    pub timeout_commit: String,
    /// The `cometbft` binary.
    pub cometbft: PathBuf,
    /// Accounts funded in genesis besides the dev accounts (as `lantaud init` funds them).
    pub extra_accounts: Vec<lantau_primitives::Address>,
    /// The apps keep the mempool (`[mempool] app_side`, each forwarding to the validators'
    /// REST gateways) and CometBFT's is off (`mempool.type = "nop"`).
    pub app_mempool: bool,
}

/// One node of a network.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TestnetNode {
    /// `validator-N` or `full-N`.
    pub moniker: String,
    /// A full node (not a validator) that joins by state sync.
    #[serde(default)]
    pub full_node: bool,
    /// The app home.
    pub app_home: PathBuf,
    /// The CometBFT home.
    pub cometbft_home: PathBuf,
    /// `tcp://127.0.0.1:PORT`: where the app serves ABCI.
    pub abci: String,
    /// `http://127.0.0.1:PORT`: CometBFT's RPC.
    pub rpc: String,
    /// `http://127.0.0.1:PORT`: the app's CometBFT RPC and WebSocket (`cometbft.rpc_front`):
    /// where clients read transactions and subscribe, since CometBFT's own indexer is off.
    #[serde(default)]
    pub rpc_front: String,
    /// `127.0.0.1:PORT`: CometBFT's P2P.
    pub p2p: String,
    /// `http://127.0.0.1:PORT/metrics`: the app's Prometheus endpoint.
    pub metrics: String,
    /// `http://127.0.0.1:PORT`: the app's REST gateway.
    pub rest: String,
    /// `http://127.0.0.1:PORT`: the app's Ethereum JSON-RPC.
    pub json_rpc: String,
    /// CometBFT node id (hex).
    pub node_id: String,
    /// The validator's consensus address (hex, upper case, as CometBFT prints it); a full
    /// node's key is not in the validator set.
    pub validator_address: String,
}

/// `testnet.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Testnet {
    /// Cosmos chain id.
    pub chain_id: String,
    /// The `cometbft` binary the network was written with.
    pub cometbft: PathBuf,
    /// The validators, then the full nodes.
    pub nodes: Vec<TestnetNode>,
}

impl Testnet {
    /// Reads `DIR/testnet.json`.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        let p = dir.join("testnet.json");
        let bytes = std::fs::read(&p).with_context(|| format!("{} (run `lantaud testnet init` first)", p.display()))?;
        Ok(serde_json::from_slice(&bytes)?)
    }
}

fn port(base: u16, i: usize, k: u16) -> anyhow::Result<u16> {
    u16::try_from(i)
        .ok()
        .and_then(|i| i.checked_mul(10))
        .and_then(|o| base.checked_add(o))
        .and_then(|p| p.checked_add(k))
        .ok_or_else(|| anyhow::anyhow!("base port {base} leaves no room for validator {i}"))
}

fn run(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    anyhow::ensure!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// CometBFT's consensus parameters for the network (its genesis `consensus_params`).
fn consensus_params() -> Value {
    json!({
        "block": {"max_bytes": "22020096", "max_gas": crate::node::DEFAULT_MAX_BLOCK_GAS.to_string()},
        "evidence": {"max_age_num_blocks": "100000", "max_age_duration": "172800000000000", "max_bytes": "1048576"},
        "validator": {"pub_key_types": ["ed25519"]},
        "version": {"app": "1"},
        "abci": {"vote_extensions_enable_height": "0"}
    })
}

/// Writes a network of `opts.validators` validators into `out` (which must not exist or be
/// empty) and returns its description, also written to `out/testnet.json`.
pub fn init(out: &Path, opts: &TestnetOptions) -> anyhow::Result<Testnet> {
    anyhow::ensure!(opts.validators >= 1, "a network needs at least one validator");
    if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        anyhow::bail!("{} is not empty", out.display());
    }
    std::fs::create_dir_all(out)?;
    let mut nodes = Vec::new();
    let mut validators = Vec::new();
    for i in 0..opts.validators.saturating_add(opts.full_nodes) {
        let full_node = i >= opts.validators;
        let dir = out.join(format!("node{i}"));
        let app_home = dir.join("app");
        let cometbft_home = dir.join("cometbft");
        let moniker = if full_node { format!("full-{i}") } else { format!("validator-{i}") };
        let init =
            InitOptions { chain_id: opts.chain_id.clone(), moniker: moniker.clone(), extra_accounts: opts.extra_accounts.clone(), ..InitOptions::default() };
        init_home(&app_home, &init)?;
        // The app's own port in CometBFT mode: its Prometheus endpoint.
        let app_config = app_home.join("config/config.toml");
        let mut cfg = crate::config::NodeConfig::load(&app_config)?;
        cfg.metrics.address = format!("127.0.0.1:{}", port(opts.base_port, i, 3)?);
        cfg.api.address = format!("127.0.0.1:{}", port(opts.base_port, i, 4)?);
        cfg.json_rpc.address = format!("127.0.0.1:{}", port(opts.base_port, i, 5)?);
        cfg.json_rpc_ws.address = format!("127.0.0.1:{}", port(opts.base_port, i, 6)?);
        cfg.grpc.address = format!("127.0.0.1:{}", port(opts.base_port, i, 7)?);
        cfg.cometbft.rpc = format!("http://127.0.0.1:{}", port(opts.base_port, i, 1)?);
        cfg.cometbft.rpc_front = format!("127.0.0.1:{}", port(opts.base_port, i, 8)?);
        // Clients read results and events from the front: CometBFT need not keep them too.
        cfg.cometbft.send_events = false;
        cfg.state_sync.snapshot_interval = opts.snapshot_interval;
        cfg.mempool.app_side = opts.app_mempool;
        if opts.app_mempool {
            // Every node forwards what its clients send to every validator but itself.
            cfg.mempool.peers = (0..opts.validators)
                .filter(|j| *j != i)
                .map(|j| port(opts.base_port, j, 4).map(|p| format!("http://127.0.0.1:{p}")))
                .collect::<anyhow::Result<_>>()?;
        }
        // Blocks come fast on a local network: keep enough snapshots that the one a joining
        // node chose is still there while it fetches the chunks (a pruned one is refetched
        // from nobody).
        cfg.state_sync.snapshot_keep_recent = 10;
        cfg.save(&app_config)?;
        run(Command::new(&opts.cometbft).arg("init").arg("--home").arg(&cometbft_home))?;
        let node_id = run(Command::new(&opts.cometbft).arg("show-node-id").arg("--home").arg(&cometbft_home))?;
        let key: Value = serde_json::from_slice(&std::fs::read(cometbft_home.join("config/priv_validator_key.json"))?)?;
        let address = key["address"].as_str().ok_or_else(|| anyhow::anyhow!("priv_validator_key.json has no address"))?.to_string();
        if !full_node {
            validators.push(json!({"address": address, "pub_key": key["pub_key"].clone(), "power": "10", "name": moniker}));
        }
        nodes.push(TestnetNode {
            moniker,
            full_node,
            app_home,
            cometbft_home,
            abci: format!("tcp://127.0.0.1:{}", port(opts.base_port, i, 2)?),
            rpc: format!("http://127.0.0.1:{}", port(opts.base_port, i, 1)?),
            rpc_front: format!("http://127.0.0.1:{}", port(opts.base_port, i, 8)?),
            p2p: format!("127.0.0.1:{}", port(opts.base_port, i, 0)?),
            metrics: format!("http://127.0.0.1:{}/metrics", port(opts.base_port, i, 3)?),
            rest: format!("http://127.0.0.1:{}", port(opts.base_port, i, 4)?),
            json_rpc: format!("http://127.0.0.1:{}", port(opts.base_port, i, 5)?),
            node_id,
            validator_address: address,
        });
    }
    // One genesis: the first app home's (the same dev accounts and roles for every node),
    // with CometBFT's validators and consensus parameters.
    let first = nodes.first().ok_or_else(|| anyhow::anyhow!("no validators"))?;
    // The light-client servers of a node that joins by state sync: two validators' RPC
    // (CometBFT wants two; a one-validator network names its one twice).
    let light_servers = {
        let v: Vec<&str> = nodes.iter().filter(|n| !n.full_node).map(|n| n.rpc.as_str()).cycle().take(2).collect();
        v.join(",")
    };
    let app_genesis: Value = serde_json::from_slice(&std::fs::read(first.app_home.join("config/genesis.json"))?)?;
    let genesis = json!({
        "genesis_time": app_genesis["genesis_time"].clone(),
        "chain_id": opts.chain_id,
        "initial_height": "1",
        "consensus_params": consensus_params(),
        "validators": validators,
        "app_hash": "",
        "app_state": app_genesis["app_state"].clone(),
    });
    let genesis_bytes = serde_json::to_vec_pretty(&genesis)?;
    for (i, n) in nodes.iter().enumerate() {
        std::fs::write(n.cometbft_home.join("config/genesis.json"), &genesis_bytes)?;
        std::fs::write(n.app_home.join("config/genesis.json"), serde_json::to_vec_pretty(&app_genesis)?)?;
        let peers: Vec<String> = nodes.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, p)| format!("{}@{}", p.node_id, p.p2p)).collect();
        let state_sync = n.full_node.then_some(light_servers.as_str());
        write_config(&n.cometbft_home.join("config/config.toml"), n, &peers.join(","), &opts.timeout_commit, state_sync, opts.app_mempool)?;
    }
    let net = Testnet { chain_id: opts.chain_id.clone(), cometbft: opts.cometbft.clone(), nodes };
    std::fs::write(out.join("testnet.json"), serde_json::to_vec_pretty(&net)?)?;
    Ok(net)
}

/// Edits the `config.toml` `cometbft init` wrote (comments kept): loopback addresses, the
/// peers, short timeouts, for a node that joins by state sync `[statesync]` with its
/// light-client servers (the trust is filled at first start), and with the app-side mempool
/// CometBFT's own mempool off.
fn write_config(path: &Path, n: &TestnetNode, peers: &str, timeout_commit: &str, state_sync: Option<&str>, app_mempool: bool) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path)?;
    let mut doc: toml_edit::DocumentMut = text.parse().with_context(|| format!("{}", path.display()))?;
    let rpc_port = n.rpc.rsplit(':').next().unwrap_or_default();
    let set = |doc: &mut toml_edit::DocumentMut, table: Option<&str>, key: &str, v: toml_edit::Value| -> anyhow::Result<()> {
        let item = match table {
            None => doc.get_mut(key),
            Some(t) => doc.get_mut(t).and_then(|t| t.get_mut(key)),
        };
        let item = item.ok_or_else(|| anyhow::anyhow!("{}: no {}{key}", path.display(), table.map(|t| format!("[{t}] ")).unwrap_or_default()))?;
        *item = toml_edit::Item::Value(v);
        Ok(())
    };
    set(&mut doc, None, "moniker", n.moniker.as_str().into())?;
    set(&mut doc, None, "proxy_app", n.abci.as_str().into())?;
    set(&mut doc, Some("rpc"), "laddr", format!("tcp://127.0.0.1:{rpc_port}").into())?;
    set(&mut doc, Some("p2p"), "laddr", format!("tcp://{}", n.p2p).into())?;
    set(&mut doc, Some("p2p"), "external_address", "".into())?;
    set(&mut doc, Some("p2p"), "persistent_peers", peers.into())?;
    set(&mut doc, Some("p2p"), "addr_book_strict", false.into())?;
    set(&mut doc, Some("p2p"), "allow_duplicate_ip", true.into())?;
    set(&mut doc, Some("consensus"), "timeout_propose", "1s".into())?;
    set(&mut doc, Some("consensus"), "timeout_prevote", "500ms".into())?;
    set(&mut doc, Some("consensus"), "timeout_precommit", "500ms".into())?;
    set(&mut doc, Some("consensus"), "timeout_commit", timeout_commit.into())?;
    // The app indexes every transaction and serves `tx`, `tx_search` and subscriptions on its
    // CometBFT RPC front: CometBFT's own indexer would do the same work again.
    set(&mut doc, Some("tx_index"), "indexer", "null".into())?;
    if app_mempool {
        // The apps admit, order, recheck and forward transactions themselves.
        set(&mut doc, Some("mempool"), "type", "nop".into())?;
        // Clients then use the app's front for everything, `block_results` included, which
        // the app answers from its own rows: CometBFT's copy of each FinalizeBlock response
        // would be a second one. CometBFT still keeps the last, which its crash recovery
        // replays. With CometBFT's mempool, clients broadcast to CometBFT's RPC and it keeps
        // answering `block_results` there.
        set(&mut doc, Some("storage"), "discard_abci_responses", true.into())?;
    }
    if let Some(servers) = state_sync {
        set(&mut doc, Some("statesync"), "enable", true.into())?;
        set(&mut doc, Some("statesync"), "rpc_servers", servers.into())?;
        set(&mut doc, Some("statesync"), "discovery_time", "5s".into())?;
    }
    std::fs::write(path, doc.to_string())?;
    Ok(())
}

/// For a node that joins by state sync and has no trust yet (`[statesync] trust_hash` empty):
/// writes the height and hash of the latest block its first light-client server has committed
/// as the trusted header. A local network's shortcut: on a real network the operator takes
/// them from a source they trust.
pub async fn fill_state_sync_trust(net: &Testnet, i: usize) -> anyhow::Result<()> {
    let n = net.nodes.get(i).ok_or_else(|| anyhow::anyhow!("the network has no node {i}"))?;
    let path = n.cometbft_home.join("config/config.toml");
    let text = std::fs::read_to_string(&path)?;
    let mut doc: toml_edit::DocumentMut = text.parse().with_context(|| format!("{}", path.display()))?;
    let enabled = doc.get("statesync").and_then(|t| t.get("enable")).and_then(|v| v.as_bool()).unwrap_or(false);
    let trusted = doc.get("statesync").and_then(|t| t.get("trust_hash")).and_then(|v| v.as_str()).is_some_and(|h| !h.is_empty());
    if !enabled || trusted {
        return Ok(());
    }
    // Already synced once (CometBFT has blocks): the trust is no longer used.
    if n.cometbft_home.join("data/blockstore.db").exists() {
        return Ok(());
    }
    let server = doc
        .get("statesync")
        .and_then(|t| t.get("rpc_servers"))
        .and_then(|v| v.as_str())
        .and_then(|s| s.split(',').next())
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("{}: [statesync] rpc_servers is empty", path.display()))?;
    let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build()?;
    let v: Value = http.get(format!("{server}/commit")).send().await?.json().await.with_context(|| format!("{server}/commit"))?;
    let sh = &v["result"]["signed_header"];
    let height: u64 = sh["header"]["height"].as_str().and_then(|h| h.parse().ok()).ok_or_else(|| anyhow::anyhow!("{server}/commit: no height in {v}"))?;
    let hash = sh["commit"]["block_id"]["hash"].as_str().filter(|h| !h.is_empty()).ok_or_else(|| anyhow::anyhow!("{server}/commit: no block hash in {v}"))?;
    let t = doc.get_mut("statesync").ok_or_else(|| anyhow::anyhow!("{}: no [statesync]", path.display()))?;
    t["trust_height"] = toml_edit::value(i64::try_from(height)?);
    t["trust_hash"] = toml_edit::value(hash);
    std::fs::write(&path, doc.to_string())?;
    tracing::info!(node = %n.moniker, height, hash, "state-sync trust taken from {server}");
    Ok(())
}

/// The two processes of one running validator.
#[derive(Debug)]
pub struct RunningValidator {
    /// `lantaud start --abci`.
    pub app: Child,
    /// `cometbft start`.
    pub cometbft: Child,
}

impl RunningValidator {
    /// Stops both (CometBFT first, with SIGTERM, then the app), waiting at most `grace` for
    /// each before killing it.
    pub fn stop(mut self, grace: Duration) {
        for child in [&mut self.cometbft, &mut self.app] {
            terminate(child, grace);
        }
    }

    /// `kill -9` of both processes (a crash).
    pub fn kill(mut self) {
        for child in [&mut self.cometbft, &mut self.app] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A validator dropped while still running (a test that panicked, a caller that forgot to stop
/// it) is killed, so no process outlives its owner.
impl Drop for RunningValidator {
    fn drop(&mut self) {
        for child in [&mut self.cometbft, &mut self.app] {
            if let Ok(None) = child.try_wait() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

fn terminate(child: &mut Child, grace: Duration) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: `kill` with a pid of a child this process spawned and has not reaped.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let deadline = std::time::Instant::now() + grace;
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts node `i` of the network in `dir` (a validator or a full node; a full node that
/// joins by state sync needs [`fill_state_sync_trust`] first): the app (`lantaud` = `exe`) first, then,
/// once it accepts ABCI connections (CometBFT does not wait for it), CometBFT. Logs go to
/// `nodeN/app.log` and `nodeN/cometbft.log`.
pub fn start_validator(dir: &Path, net: &Testnet, i: usize, exe: &Path) -> anyhow::Result<RunningValidator> {
    let n = net.nodes.get(i).ok_or_else(|| anyhow::anyhow!("the network has no validator {i}"))?;
    let logs = dir.join(format!("node{i}"));
    let log = |name: &str| -> anyhow::Result<Stdio> {
        let f = std::fs::OpenOptions::new().create(true).append(true).open(logs.join(name))?;
        Ok(Stdio::from(f))
    };
    let mut app = Command::new(exe);
    // app.log always carries the `committed block` line of each block (its `block_ms` is what
    // `lantaud bench --cometbft` reports as the slowest block), whatever else the filter quiets.
    if let Some(filter) = ["LANTAU_LOG", "RUST_LOG"].iter().find_map(|v| std::env::var(v).ok()) {
        if !filter.contains("lantau_app::block") {
            app.env("LANTAU_LOG", format!("{filter},lantau_app::block=info"));
        }
    }
    let mut app = app
        .arg("start")
        .arg("--home")
        .arg(&n.app_home)
        .arg("--abci")
        .arg(&n.abci)
        .env("NO_COLOR", "1")
        .stdout(log("app.log")?)
        .stderr(log("app.log")?)
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let abci = n.abci.strip_prefix("tcp://").unwrap_or(&n.abci).to_string();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        if std::net::TcpStream::connect(&abci).is_ok() {
            break;
        }
        if let Ok(Some(st)) = app.try_wait() {
            anyhow::bail!("the app of {} exited ({st}); see {}", n.moniker, logs.join("app.log").display());
        }
        if std::time::Instant::now() > deadline {
            let _ = app.kill();
            anyhow::bail!("the app of {} did not open {} within 60 s", n.moniker, n.abci);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let cometbft =
        Command::new(&net.cometbft).arg("start").arg("--home").arg(&n.cometbft_home).stdout(log("cometbft.log")?).stderr(log("cometbft.log")?).spawn();
    match cometbft {
        Ok(cometbft) => Ok(RunningValidator { app, cometbft }),
        Err(e) => {
            let _ = app.kill();
            Err(anyhow::anyhow!("starting {}: {e}", net.cometbft.display()))
        }
    }
}

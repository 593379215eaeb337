//! Node configuration: `<home>/config/config.toml`. Every listen address has a config entry and
//! a `start` flag, so several nodes and test runs share one machine. All bind 127.0.0.1 unless
//! configured otherwise.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The node's configuration file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct NodeConfig {
    /// A human name for this node.
    pub moniker: String,
    /// Block production of the embedded engine.
    pub consensus: ConsensusConfig,
    /// Mempool bounds.
    pub mempool: MempoolConfig,
    /// Cosmos REST.
    pub api: ListenConfig,
    /// CometBFT-compatible RPC.
    pub rpc: ListenConfig,
    /// Ethereum JSON-RPC over HTTP.
    pub json_rpc: ListenConfig,
    /// Ethereum JSON-RPC over WebSocket.
    pub json_rpc_ws: ListenConfig,
    /// Serve SimulateTrace (`POST /chain/compliance/v1/simulate_trace`); without it the node
    /// answers FailedPrecondition.
    pub simulation_hook: bool,
    /// Names of scheduled upgrades this node applies besides its release's own
    /// (`lantau_app::upgrades::RELEASE_HANDLERS`), with no migration of their own. A consensus
    /// rule: every validator must list the same, and only for an upgrade whose release changes
    /// no module's state version (the network test of the upgrade path uses it to resume with
    /// the same build). Empty by default.
    pub upgrade_handlers: Vec<String>,
    /// The Prometheus endpoint (`GET /metrics`).
    pub metrics: ListenConfig,
    /// gRPC (and gRPC-web) with server reflection.
    pub grpc: ListenConfig,
    /// Origins a browser app may call REST, the CometBFT RPC, the Ethereum JSON-RPC and
    /// gRPC-web from (CORS), e.g. `["https://wallet.example"]`; `["*"]` allows any. Empty (the
    /// default): no CORS headers, so browsers refuse cross-origin calls. A dev home allows any.
    pub cors_allowed_origins: Vec<String>,
    /// Under CometBFT (`start --abci`): where its RPC answers.
    pub cometbft: CometbftConfig,
    /// State-sync snapshots this node takes and serves to nodes joining the network.
    pub state_sync: StateSyncConfig,
    /// How many past heights queries can read (`[pruning]`).
    pub pruning: PruningConfig,
    /// Limits of every HTTP server (REST, CometBFT RPC, Ethereum JSON-RPC, gRPC, metrics).
    pub http: HttpConfig,
    /// Limits of the calls that run the EVM for a client (`eth_call`, `eth_estimateGas`).
    pub eth_call: EthCallConfig,
}

/// Limits of the EVM calls the Ethereum JSON-RPC runs for clients (`[eth_call]`; geth's
/// `--rpc.gascap` and `--rpc.evmtimeout`, Cosmos EVM's `gas-cap` and `evm-timeout`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct EthCallConfig {
    /// The most gas one call runs with; a request asking more is capped to it.
    pub gas_cap: u64,
    /// Milliseconds one request's EVM runs may take (an estimate's whole search, and the wait
    /// for a slot, included); past it the run stops: `execution aborted (timeout = 5s)`.
    pub timeout_ms: u64,
    /// Calls running at once, each on a thread of its own; more wait for a slot.
    pub max_concurrent: usize,
}

impl Default for EthCallConfig {
    fn default() -> Self {
        let l = lantau_rpc::eth::methods::CallLimits::default();
        Self { gas_cap: l.gas_cap, timeout_ms: u64::try_from(l.timeout.as_millis()).unwrap_or(u64::MAX), max_concurrent: l.max_concurrent }
    }
}

impl EthCallConfig {
    /// The server's call limits.
    pub fn limits(&self) -> lantau_rpc::eth::methods::CallLimits {
        lantau_rpc::eth::methods::CallLimits {
            gas_cap: self.gas_cap.max(1),
            timeout: Duration::from_millis(self.timeout_ms.max(1)),
            max_concurrent: self.max_concurrent.max(1),
        }
    }
}

/// Limits of the HTTP servers (`[http]`), each applied per server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct HttpConfig {
    /// Connections open at once; when full, the oldest connection that never completed a
    /// request is closed for the new one (or the new one gets 503 if all have been served).
    pub max_connections: usize,
    /// Requests answered at once; more get 503 with Retry-After.
    pub max_requests_in_flight: usize,
    /// Milliseconds to send a request's headers; also a keep-alive connection's idle time.
    pub header_read_timeout_ms: u64,
    /// Milliseconds to send the body and be answered (408 past it).
    pub request_timeout_ms: u64,
    /// Largest request body in bytes (413 past it).
    pub max_body_bytes: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        let l = lantau_rpc::http::HttpLimits::default();
        Self {
            max_connections: l.max_connections,
            max_requests_in_flight: l.max_requests_in_flight,
            header_read_timeout_ms: u64::try_from(l.header_read_timeout.as_millis()).unwrap_or(u64::MAX),
            request_timeout_ms: u64::try_from(l.request_timeout.as_millis()).unwrap_or(u64::MAX),
            max_body_bytes: l.max_body_bytes,
        }
    }
}

impl HttpConfig {
    /// The servers' limits.
    pub fn limits(&self) -> lantau_rpc::http::HttpLimits {
        lantau_rpc::http::HttpLimits {
            max_connections: self.max_connections.max(1),
            max_requests_in_flight: self.max_requests_in_flight.max(1),
            header_read_timeout: Duration::from_millis(self.header_read_timeout_ms.max(1)),
            request_timeout: Duration::from_millis(self.request_timeout_ms.max(1)),
            max_body_bytes: self.max_body_bytes,
        }
    }
}

/// State-sync snapshots (`[state_sync]`; the Cosmos SDK's `state-sync` section of app.toml).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct StateSyncConfig {
    /// Take a snapshot of the committed state every this many heights (0: never). Written to
    /// `<home>/data/snapshots/` in the background; served over ABCI to CometBFT peers.
    pub snapshot_interval: u64,
    /// How many snapshots to keep.
    pub snapshot_keep_recent: u32,
}

impl Default for StateSyncConfig {
    fn default() -> Self {
        Self { snapshot_interval: 0, snapshot_keep_recent: 2 }
    }
}

impl StateSyncConfig {
    /// The app's snapshot settings for a node home, when snapshots are on.
    pub fn settings(&self, home: &Path) -> Option<lantau_app::statesync::SnapshotSettings> {
        (self.snapshot_interval > 0).then(|| lantau_app::statesync::SnapshotSettings {
            dir: home.join("data/snapshots"),
            interval: self.snapshot_interval,
            keep_recent: usize::try_from(self.snapshot_keep_recent).unwrap_or(usize::MAX).max(1),
            chunk_bytes: lantau_app::statesync::DEFAULT_CHUNK_BYTES,
        })
    }
}

/// How many past heights the node keeps readable (`[pruning]`; the Cosmos SDK's `pruning` and
/// `pruning-keep-recent` of app.toml, with the same strategy names).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct PruningConfig {
    /// `default`: the last 100,000 heights; `nothing`: every height (an archive node);
    /// `everything`: only the last few heights the store keeps open (no history, the fastest
    /// blocks); `custom`: the last `keep_recent` heights.
    pub strategy: String,
    /// With `custom`: how many heights (at least 100).
    pub keep_recent: u64,
}

impl Default for PruningConfig {
    fn default() -> Self {
        Self { strategy: "default".into(), keep_recent: 0 }
    }
}

impl PruningConfig {
    /// The app's history retention; an unknown strategy or a `custom` under 100 is refused.
    pub fn retention(&self) -> anyhow::Result<lantau_app::history::Retention> {
        use lantau_app::history::Retention;
        Ok(match self.strategy.as_str() {
            "default" => Retention::default(),
            "nothing" => Retention::Archive,
            "everything" => Retention::Off,
            "custom" => {
                anyhow::ensure!(self.keep_recent >= 100, "[pruning] keep_recent = {}: custom pruning keeps at least 100 heights", self.keep_recent);
                Retention::Recent(self.keep_recent)
            }
            other => anyhow::bail!("[pruning] strategy = \"{other}\": one of default, nothing (archive), everything, custom"),
        })
    }
}

/// The CometBFT node that drives the app (`start --abci`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct CometbftConfig {
    /// CometBFT's RPC, `http://host:port`: broadcasts, blocks and status for the REST gateway
    /// and the Ethereum JSON-RPC.
    pub rpc: String,
    /// Where this process serves a CometBFT JSON-RPC and WebSocket of its own (`host:port`;
    /// empty: none): `tx`, `tx_search`, `block_results` and event subscriptions answered from
    /// the app's own index, everything else passed to CometBFT's RPC. With clients pointed
    /// here, CometBFT's own transaction indexer can be off (`[tx_index] indexer = "null"`),
    /// which spares it ~500 µs of CPU per gated transfer (docs/operations.md).
    pub rpc_front: String,
    /// Whether FinalizeBlock's answer to CometBFT carries the events of the block and of each
    /// transaction. Off, CometBFT gets each result's code, codespace, data, log and gas (what
    /// its results hash covers and its `/block_results` shows) without events, which the app
    /// indexes and serves itself (`rpc_front`, REST, JSON-RPC): CometBFT then neither stores
    /// them nor publishes them on its own WebSocket, which was most of its CPU per transaction
    /// (docs/performance.md). Networks `lantaud testnet` writes turn it off with the front on.
    pub send_events: bool,
    /// Whether a block this node accepts in ProcessProposal starts executing at once, while the
    /// validators vote on it, so FinalizeBlock of that block only waits for what is left
    /// (docs/decisions.md, "A proposal executes while it is voted on"). A block decided
    /// otherwise is executed as decided.
    pub optimistic_execution: bool,
}

impl Default for CometbftConfig {
    fn default() -> Self {
        Self { rpc: "http://127.0.0.1:26657".into(), rpc_front: String::new(), send_events: true, optimistic_execution: true }
    }
}

/// Embedded engine settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ConsensusConfig {
    /// Milliseconds between blocks.
    pub block_time_ms: u64,
    /// Largest block, in bytes of transactions.
    pub max_block_bytes: usize,
    /// Most transactions in one block.
    pub max_block_txs: usize,
    /// Produce empty blocks when the mempool is empty.
    pub create_empty_blocks: bool,
}

/// Mempool bounds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct MempoolConfig {
    /// Most transactions waiting.
    pub max_txs: usize,
    /// Most bytes waiting.
    pub max_bytes: usize,
    /// Most transactions of one sender waiting (one account cannot fill the mempool).
    pub max_txs_per_sender: usize,
    /// Under CometBFT (`start --abci`): this app keeps the mempool (admission, ordering, the
    /// recheck after each block, as the embedded engine does) and fills each proposal from
    /// it; CometBFT's own mempool must be off (its `[mempool] type = "nop"`) and clients
    /// broadcast to this app (REST, the Ethereum JSON-RPC, or `cometbft.rpc_front`). Off:
    /// CometBFT's mempool admits through CheckTx.
    pub app_side: bool,
    /// With `app_side`: the REST gateways of the other validators' apps
    /// (`http://host:port`), to which every transaction a client gives this node is forwarded.
    pub peers: Vec<String>,
}

/// One listen address.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ListenConfig {
    /// `host:port`.
    pub address: String,
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            moniker: "lantau-dev".into(),
            consensus: ConsensusConfig::default(),
            mempool: MempoolConfig::default(),
            api: ListenConfig { address: "127.0.0.1:1317".into() },
            rpc: ListenConfig { address: "127.0.0.1:26657".into() },
            json_rpc: ListenConfig { address: "127.0.0.1:8545".into() },
            json_rpc_ws: ListenConfig { address: "127.0.0.1:8546".into() },
            simulation_hook: true,
            upgrade_handlers: Vec::new(),
            metrics: ListenConfig { address: "127.0.0.1:26660".into() },
            grpc: ListenConfig { address: "127.0.0.1:9090".into() },
            cors_allowed_origins: Vec::new(),
            cometbft: CometbftConfig::default(),
            state_sync: StateSyncConfig::default(),
            pruning: PruningConfig::default(),
            http: HttpConfig::default(),
            eth_call: EthCallConfig::default(),
        }
    }
}

impl Default for ConsensusConfig {
    fn default() -> Self {
        Self { block_time_ms: 1000, max_block_bytes: 8 * 1024 * 1024, max_block_txs: 20_000, create_empty_blocks: true }
    }
}

impl Default for MempoolConfig {
    fn default() -> Self {
        Self { max_txs: 30_000, max_bytes: 64 * 1024 * 1024, max_txs_per_sender: 1_000, app_side: false, peers: Vec::new() }
    }
}

impl NodeConfig {
    /// The block interval.
    pub fn block_time(&self) -> Duration {
        Duration::from_millis(self.consensus.block_time_ms.max(1))
    }

    /// Reads a config file.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)?;
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// Writes a config file, each setting with a comment saying what it is.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, self.commented()?)?;
        Ok(())
    }

    /// The file's text: the settings, each key and section commented.
    pub fn commented(&self) -> anyhow::Result<String> {
        let mut doc: toml_edit::DocumentMut = toml::to_string_pretty(self)?.parse()?;
        let comment = |text: &str| text.lines().map(|l| format!("# {l}\n")).collect::<String>();
        for (key, text) in COMMENTS {
            if let Some(t) = doc.get_mut(key).and_then(|i| i.as_table_mut()) {
                t.decor_mut().set_prefix(format!("\n{}", comment(text)));
            } else if let Some(mut k) = doc.as_table_mut().key_mut(key) {
                k.leaf_decor_mut().set_prefix(comment(text));
            }
        }
        Ok(format!("# Lantau node configuration. Flags of `lantaud start` override these; see docs/operations.md.\n\n{doc}"))
    }
}

/// What each setting of `config.toml` is, written above it.
const COMMENTS: &[(&str, &str)] = &[
    ("moniker", "A human name for this node (status, node_info)."),
    ("simulation_hook", "Serve SimulateTrace (POST /chain/compliance/v1/simulate_trace); off: FailedPrecondition."),
    (
        "cors_allowed_origins",
        "Origins a browser app may call REST, the CometBFT RPC, the Ethereum JSON-RPC and gRPC-web\nfrom (CORS): [\"*\"] any, [] none (no CORS headers), or a list like [\"https://wallet.example\"].",
    ),
    ("consensus", "The embedded engine (`lantaud start` without --abci): block interval, block bounds,\nwhether to produce empty blocks."),
    (
        "mempool",
        "Mempool bounds: transactions and bytes waiting, and transactions of one sender. Under\nCometBFT, app_side = true keeps the mempool in this app (CometBFT's mempool.type = \"nop\")\nand forwards what clients give it to peers (the other validators' REST gateways).",
    ),
    ("api", "Cosmos REST (gRPC-gateway JSON), default port 1317."),
    ("rpc", "CometBFT-compatible RPC and WebSocket (/websocket) of the embedded engine (under\nCometBFT, CometBFT serves its own)."),
    ("json_rpc", "Ethereum JSON-RPC over HTTP (wallets, viem, web3.py), default port 8545."),
    ("json_rpc_ws", "Ethereum JSON-RPC over WebSocket (eth_subscribe), default port 8546."),
    ("metrics", "Prometheus metrics (GET /metrics)."),
    ("grpc", "gRPC with server reflection, and gRPC-web on the same port (default 9090)."),
    ("cometbft", "Under CometBFT (`lantaud start --abci`): where CometBFT's RPC answers."),
    ("state_sync", "State-sync snapshots this node takes and serves (interval 0: none)."),
    (
        "pruning",
        "Past heights queries can read (REST x-cosmos-block-height, gRPC, abci_query, eth_* at a\nblock): strategy \"default\" (the last 100,000), \"nothing\" (every height: an archive node),\n\"everything\" (only the last few), \"custom\" (the last keep_recent, at least 100). Node-local.",
    ),
    (
        "http",
        "Limits of each HTTP server (REST, CometBFT RPC, Ethereum JSON-RPC, metrics): connections\n(when full, the oldest that never completed a request is closed), requests in flight (503),\nheader read / keep-alive idle timeout, request timeout (408), body size (413). See\ndocs/operations.md, \"HTTP limits\".",
    ),
    (
        "eth_call",
        "Limits of eth_call and eth_estimateGas (geth's rpc.gascap and rpc.evmtimeout): the gas\none call runs with at most, the time one request's runs may take, calls running at once.",
    ),
];

#[cfg(test)]
mod tests {
    use super::NodeConfig;

    #[test]
    fn the_written_config_is_commented_and_reads_back_the_same() {
        let cfg = NodeConfig { cors_allowed_origins: vec!["*".into()], ..NodeConfig::default() };
        let text = cfg.commented().unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for key in super::COMMENTS.iter().map(|(k, _)| *k) {
            let at =
                lines.iter().position(|l| *l == format!("[{key}]") || l.starts_with(&format!("{key} ="))).unwrap_or_else(|| panic!("{key} missing:\n{text}"));
            assert!(at > 0 && lines[at - 1].starts_with('#'), "{key} has no comment above it:\n{text}");
        }
        let back: NodeConfig = toml::from_str(&text).unwrap();
        assert_eq!(back, cfg);
    }
}

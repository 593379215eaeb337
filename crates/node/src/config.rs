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

/// The CometBFT node that drives the app (`start --abci`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct CometbftConfig {
    /// CometBFT's RPC, `http://host:port`: broadcasts, blocks and status for the REST gateway
    /// and the Ethereum JSON-RPC.
    pub rpc: String,
}

impl Default for CometbftConfig {
    fn default() -> Self {
        Self { rpc: "http://127.0.0.1:26657".into() }
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
            metrics: ListenConfig { address: "127.0.0.1:26660".into() },
            grpc: ListenConfig { address: "127.0.0.1:9090".into() },
            cors_allowed_origins: Vec::new(),
            cometbft: CometbftConfig::default(),
            state_sync: StateSyncConfig::default(),
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
        Self { max_txs: 50_000, max_bytes: 64 * 1024 * 1024 }
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

    /// Writes a config file.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, toml::to_string_pretty(self)?)?;
        Ok(())
    }
}

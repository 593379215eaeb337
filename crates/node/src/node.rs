//! The running node: the app, the embedded engine, the servers, and the [`NodeApi`] they use.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use lantau_app::evm::exec::{EvmCall, Interrupt, Outcome};
use lantau_app::module_api::{QueryError, TxError};
use lantau_app::tendermint::abci::{request, response};
use lantau_app::tendermint::{account, Block, PublicKey};
use lantau_app::{App, AppConfig};
use lantau_event_query::Query;
use lantau_rpc::api::{BlockResults, BroadcastResult, NodeApi, NodeError, NodeEvent, NodeStatus, SearchPage, TxRecord};
use parking_lot::Mutex;
use tokio::sync::{broadcast, watch};

use crate::config::NodeConfig;
use crate::engine::{Engine, Validator};
use crate::genesis::GenesisFile;
use crate::home::{read_validator_key, Home};
use crate::indexer::{self, Indexer};
use crate::mempool::Mempool;
use crate::txpool::TxPool;

/// The embedded node: implements [`NodeApi`] over the app and the engine.
pub struct EmbeddedNode {
    app: Arc<App>,
    engine: Arc<Engine>,
    pool: Arc<TxPool>,
    events: broadcast::Sender<NodeEvent>,
    moniker: String,
    rpc_address: Mutex<String>,
    /// A weak handle to itself, for work that outlives a request (async broadcast).
    me: Mutex<std::sync::Weak<EmbeddedNode>>,
    metrics: Arc<crate::metrics::Metrics>,
    /// The genesis document as CometBFT's `genesis` RPC answers it.
    genesis_doc: serde_json::Value,
    /// A dev chain (its home has dev accounts): the `evm_*` controls are served.
    dev: bool,
    /// The dev faucet's key (from the dev home's `dev-accounts.json`), which funds
    /// `anvil_setBalance`.
    dev_faucet: Option<lantau_crypto::SecretKey>,
}

impl std::fmt::Debug for EmbeddedNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedNode").field("moniker", &self.moniker).finish_non_exhaustive()
    }
}

impl EmbeddedNode {
    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The app, for in-process tools and tests (the servers reach it only through
    /// [`NodeApi`]).
    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    async fn admit(&self, tx: Vec<u8>) -> BroadcastResult {
        let t = std::time::Instant::now();
        let r = self.pool.admit(tx).await;
        // Automine (a dev chain): the transaction is mined before the answer, as Hardhat's and
        // anvil's are, so a client reads its receipt at once.
        if r.code == 0 && self.engine.automine() {
            if let Err(e) = self.engine.produce_block().await {
                tracing::warn!(error = %e, "automine: the block failed");
            }
        }
        self.metrics.admission(r.code, &r.codespace, t.elapsed().as_secs_f64());
        r
    }

    /// `anvil_setBalance` on a dev chain: the dev faucet sends the difference through the bank
    /// (a signed send, admitted and mined at once), so the native coin moves as it always does.
    /// Lowering a balance is refused: only its owner spends it.
    async fn raise_balance(&self, addr: &lantau_primitives::Address, want: u128) -> Result<(), NodeError> {
        use lantau_app::auth::AuthRead as _;
        let refuse = |m: String| NodeError::Unavailable(m);
        let faucet = self.dev_faucet.as_ref().ok_or_else(|| refuse("this dev home has no faucet account to fund balances from".into()))?;
        let snap = self.app.snapshot();
        let have = lantau_app::bank::query::balance(&snap, addr, lantau_primitives::NATIVE_DENOM).await.map_err(|e| NodeError::Internal(e.log))?.0;
        if want < have {
            return Err(refuse(format!(
                "anvil_setBalance only raises a balance here ({} has {have}, asked {want}): the native coin leaves an account only when its owner spends it",
                addr.to_hex()
            )));
        }
        if want == have {
            return Ok(());
        }
        let from = faucet.address();
        let gas = lantau_app::module_api::GasMeter::infinite();
        let account_number = snap.account(&gas, &from).await.map_err(|e| NodeError::Internal(e.log))?.map_or(0, |a| a.account_number);
        let sequence = crate::app_api::pending_sequence(&self.app, &from).await?;
        let send = lantau_client::msg_send(&from, addr, &[lantau_primitives::Coin::new(lantau_primitives::NATIVE_DENOM, want - have)]);
        let tx = lantau_client::TxBuilder::new(vec![send])
            .gas(200_000)
            .sign(faucet, &lantau_client::SignerData { chain_id: self.app.chain_id(), account_number, sequence });
        let r = self.admit(tx).await;
        if r.code != 0 {
            return Err(refuse(format!("the faucet's transfer was refused: {}", r.log)));
        }
        self.engine.mine().await.map(|_| ()).map_err(|e| refuse(e.to_string()))
    }
}

#[async_trait::async_trait]
impl NodeApi for EmbeddedNode {
    async fn query(&self, height: u64, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError> {
        crate::app_api::query(&self.app, height, method, request).await
    }

    async fn abci_query(&self, req: request::Query) -> response::Query {
        crate::app_api::abci_query(&self.app, req).await
    }

    async fn abci_info(&self, req: request::Info) -> Result<response::Info, NodeError> {
        crate::app_api::abci_info(&self.app, req).await
    }

    async fn eth_call(&self, height: Option<u64>, call: &EvmCall, interrupt: &Interrupt) -> Result<Outcome, TxError> {
        crate::app_api::eth_call(&self.app, height, call, interrupt).await
    }

    async fn trace_call(
        &self,
        height: Option<u64>,
        call: &EvmCall,
        interrupt: &Interrupt,
        trace: &lantau_app::evm::trace::TraceSlot,
    ) -> Result<Outcome, TxError> {
        crate::app_api::trace_call(&self.app, height, call, interrupt, trace).await
    }

    async fn audit_export(
        &self,
        from: Option<time::OffsetDateTime>,
        to: Option<time::OffsetDateTime>,
    ) -> Result<lantau_app::audit_export::AuditExport, NodeError> {
        crate::app_api::audit_export(&self.app, from, to).await
    }

    async fn eth_simulate(
        &self,
        height: Option<u64>,
        blocks: &[Vec<(EvmCall, [u8; 32])>],
        interrupt: &Interrupt,
    ) -> Result<Vec<lantau_app::query::SimulatedBlock>, TxError> {
        crate::app_api::eth_simulate(&self.app, height, blocks, interrupt).await
    }

    async fn replay_block(
        &self,
        block: &lantau_app::tendermint::Block,
        traced: &std::collections::BTreeMap<usize, lantau_app::evm::trace::TraceSlot>,
    ) -> Result<bool, NodeError> {
        crate::app_api::replay_block(&self.app, block, traced).await
    }

    async fn state_at(&self, height: Option<u64>) -> Result<Option<lantau_app::history::StateView>, NodeError> {
        crate::app_api::state_at(&self.app, height).await
    }

    async fn last_height(&self) -> Result<u64, NodeError> {
        crate::app_api::last_height(&self.app).await
    }
    fn history(&self) -> lantau_app::history::Retention {
        self.app.config().history
    }

    async fn max_block_gas(&self) -> Result<Option<u64>, NodeError> {
        crate::app_api::max_block_gas(&self.app).await
    }

    async fn evm_chain_id(&self) -> Result<u64, NodeError> {
        crate::app_api::evm_chain_id(&self.app).await
    }

    async fn broadcast_sync(&self, tx: Vec<u8>) -> BroadcastResult {
        self.admit(tx).await
    }

    async fn broadcast_async(&self, tx: Vec<u8>) -> BroadcastResult {
        let hash = lantau_app::tx::tx_hash(&tx);
        let me = self.me.lock().upgrade();
        if let Some(node) = me {
            tokio::spawn(async move {
                let r = node.admit(tx).await;
                if r.code != 0 {
                    tracing::debug!(code = r.code, log = %r.log, "async broadcast rejected");
                }
            });
        }
        BroadcastResult { hash, code: 0, codespace: String::new(), log: String::new(), gas_wanted: 0, gas_used: 0 }
    }

    async fn admit_forwarded(&self, txs: Vec<Vec<u8>>) -> Result<usize, NodeError> {
        Ok(self.pool.admit_forwarded(txs).await)
    }

    async fn tx(&self, hash: [u8; 32]) -> Result<Option<TxRecord>, NodeError> {
        indexer::tx(&self.app.snapshot(), &hash).await
    }

    async fn eth_tx(&self, eth_hash: [u8; 32]) -> Result<Option<TxRecord>, NodeError> {
        indexer::eth_tx(&self.app.snapshot(), &eth_hash).await
    }

    async fn block_height_by_hash(&self, hash: [u8; 32]) -> Result<Option<u64>, NodeError> {
        indexer::block_height_by_hash(&self.app.snapshot(), &hash).await
    }

    async fn pending_sequence(&self, addr: &lantau_primitives::Address) -> Result<u64, NodeError> {
        crate::app_api::pending_sequence(&self.app, addr).await
    }

    fn genesis_doc(&self) -> Option<serde_json::Value> {
        Some(self.genesis_doc.clone())
    }

    async fn search_txs(&self, query: &Query, descending: bool, page: u64, per_page: u64) -> Result<SearchPage, NodeError> {
        indexer::search(&self.app.snapshot(), query, descending, page, per_page).await
    }

    async fn block(&self, height: Option<u64>) -> Result<Option<Block>, NodeError> {
        let h = match height {
            Some(h) => h,
            None => crate::app_api::last_height(&self.app).await?,
        };
        if h == 0 {
            return Ok(None);
        }
        indexer::block(&self.app.snapshot(), h).await
    }

    async fn block_results(&self, height: Option<u64>) -> Result<Option<BlockResults>, NodeError> {
        let snap = self.app.snapshot();
        let last = crate::app_api::height_at(&snap).await?;
        let h = height.unwrap_or(last);
        if h == 0 || h > last {
            return Ok(None);
        }
        // The app hash after block h is in the header of h+1, or is the current root.
        let app_hash = match indexer::block(&snap, h.saturating_add(1)).await? {
            Some(next) => const_hex::encode_upper(next.header.app_hash.as_bytes()),
            None => crate::app_api::root_hash(&snap).await?,
        };
        indexer::block_results(&snap, h, app_hash).await
    }

    async fn status(&self) -> Result<NodeStatus, NodeError> {
        let snap = self.app.snapshot();
        let h = crate::app_api::last_height(&self.app).await?;
        let latest = if h > 0 { indexer::block(&snap, h).await? } else { None };
        let v = self.engine.validator();
        let rpc_address = self.rpc_address.lock().clone();
        let app_hash = crate::app_api::app_hash(&self.app).await?;
        Ok(NodeStatus {
            chain_id: self.app.chain_id(),
            moniker: self.moniker.clone(),
            node_id: const_hex::encode(&lantau_crypto::sha256(v.pub_key.to_bytes().as_slice())[..20]),
            rpc_address,
            latest_height: h,
            latest_block_hash: latest.as_ref().map(|b| const_hex::encode_upper(b.header.hash().as_bytes())).unwrap_or_default(),
            latest_app_hash: app_hash,
            latest_block_time: latest.as_ref().map(|b| indexer::rfc3339(b.header.time)).unwrap_or_default(),
            earliest_height: if h > 0 { 1 } else { 0 },
            validator_address: const_hex::encode_upper(v.address.as_bytes()),
            validator_pub_key: base64::engine::general_purpose::STANDARD.encode(v.pub_key.to_bytes()),
            voting_power: v.power,
        })
    }

    fn subscribe(&self) -> broadcast::Receiver<NodeEvent> {
        self.events.subscribe()
    }

    async fn mempool_size(&self) -> (usize, usize) {
        self.pool.mempool().lock().size()
    }

    async fn dev(&self, op: lantau_rpc::api::DevOp) -> Result<i64, NodeError> {
        use lantau_rpc::api::DevOp;
        if !self.dev {
            return Err(NodeError::Unavailable(lantau_rpc::api::NOT_A_DEV_CHAIN.into()));
        }
        let bad = |e: anyhow::Error| NodeError::Unavailable(e.to_string());
        match op {
            DevOp::Mine => self.engine.mine().await.map(|h| i64::try_from(h).unwrap_or(i64::MAX)).map_err(bad),
            DevOp::IncreaseTime(secs) => Ok(self.engine.increase_time(secs)),
            DevOp::SetNextBlockTimestamp(t) => self.engine.set_next_block_time(t).map(|()| 0).map_err(bad),
            DevOp::SetAutomine(on) => {
                self.engine.set_automine(on);
                Ok(0)
            }
            DevOp::SetBalance(addr, want) => self.raise_balance(&addr, want).await.map(|()| 0),
            DevOp::Snapshot => Ok(i64::try_from(self.engine.take_snapshot().await).unwrap_or(i64::MAX)),
            DevOp::Revert(id) => self.engine.revert_to(id).await.map(i64::from).map_err(bad),
        }
    }

    fn is_dev_chain(&self) -> bool {
        self.dev
    }

    async fn unconfirmed_txs(&self, limit: usize) -> Vec<Vec<u8>> {
        self.pool.mempool().lock().entries().into_iter().take(limit).map(|e| e.bytes.as_ref().clone()).collect()
    }
}

/// The dev faucet's key, when the home is a dev home.
fn dev_faucet_key(h: &Home) -> Option<lantau_crypto::SecretKey> {
    let accounts: Vec<crate::home::DevAccount> = serde_json::from_slice(&std::fs::read(h.dev_accounts()).ok()?).ok()?;
    let faucet = accounts.into_iter().find(|a| a.name == "faucet")?;
    lantau_crypto::SecretKey::from_hex(faucet.private_key.trim_start_matches("0x")).ok()
}

/// Listen addresses chosen at start (flags override the config file).
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// REST address override.
    pub api_address: Option<String>,
    /// CometBFT RPC address override.
    pub rpc_address: Option<String>,
    /// Block time override, milliseconds.
    pub block_time_ms: Option<u64>,
    /// Ethereum JSON-RPC (HTTP) address override.
    pub json_rpc_address: Option<String>,
    /// Ethereum JSON-RPC (WebSocket) address override.
    pub json_rpc_ws_address: Option<String>,
    /// Prometheus endpoint address override.
    pub metrics_address: Option<String>,
    /// gRPC address override.
    pub grpc_address: Option<String>,
}

impl StartOptions {
    /// The flags over the config file.
    pub fn apply(self, cfg: &mut NodeConfig) {
        if let Some(a) = self.api_address {
            cfg.api.address = a;
        }
        if let Some(a) = self.rpc_address {
            // CometBFT writes the RPC listen address as `tcp://host:port` (`--rpc.laddr`).
            cfg.rpc.address = a.strip_prefix("tcp://").map_or(a.clone(), str::to_string);
        }
        if let Some(ms) = self.block_time_ms {
            cfg.consensus.block_time_ms = ms;
        }
        if let Some(a) = self.json_rpc_address {
            cfg.json_rpc.address = a;
        }
        if let Some(a) = self.json_rpc_ws_address {
            cfg.json_rpc_ws.address = a;
        }
        if let Some(a) = self.metrics_address {
            cfg.metrics.address = a;
        }
        if let Some(a) = self.grpc_address {
            cfg.grpc.address = a;
        }
    }
}

/// A started node: bound addresses and a way to stop it.
pub struct RunningNode {
    /// The node.
    pub node: Arc<EmbeddedNode>,
    /// The REST address actually bound.
    pub api_addr: SocketAddr,
    /// The CometBFT RPC address actually bound.
    pub rpc_addr: SocketAddr,
    /// The Ethereum JSON-RPC (HTTP) address actually bound.
    pub eth_addr: SocketAddr,
    /// The Ethereum JSON-RPC (WebSocket) address actually bound.
    pub eth_ws_addr: SocketAddr,
    /// The Prometheus endpoint's address actually bound.
    pub metrics_addr: SocketAddr,
    /// The gRPC address actually bound.
    pub grpc_addr: SocketAddr,
    /// The home's lock, held while the node runs.
    _lock: std::fs::File,
    /// The home.
    pub home: PathBuf,
    shutdown: watch::Sender<bool>,
    tasks: Vec<Option<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for RunningNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningNode").field("api_addr", &self.api_addr).field("rpc_addr", &self.rpc_addr).finish()
    }
}

impl RunningNode {
    /// Resolves when the node must stop on its own: the engine stopped (a failure it logged;
    /// the node no longer produces blocks), or the store failed a read or write (with the
    /// fault: the node must not answer from that store). Either way the process should exit
    /// with an error.
    pub async fn engine_stopped(&mut self) -> Option<lantau_app::module_api::store::StoreFault> {
        let engine = async {
            match self.tasks.first_mut().and_then(Option::take) {
                Some(t) => {
                    // The engine logs its own failures; a panic or cancellation is reported here.
                    if let Err(e) = t.await {
                        tracing::error!(error = %e, "the engine task ended abnormally");
                    }
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = engine => lantau_app::module_api::store::current_fault(),
            f = lantau_app::module_api::store::faulted() => Some(f),
        }
    }

    /// Stops the engine and the servers and waits for them.
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        // Servers drain open connections gracefully, for a bounded time: an idle keep-alive
        // client must not hold the node up.
        for mut t in self.tasks.into_iter().flatten() {
            if tokio::time::timeout(std::time::Duration::from_secs(5), &mut t).await.is_err() {
                t.abort();
            }
        }
    }
}

/// Serves the app of `home` to a CometBFT process over ABCI++ (`lantaud start --abci`), until
/// `stop` resolves. There is no embedded engine: CometBFT drives the app (InitChain from its own
/// genesis file, whose `app_state` is the app's genesis), and the app's block hook still keeps
/// its transaction index. The state is released cleanly on stop; a `kill -9` instead loses
/// nothing committed, and CometBFT replays what the app had not committed.
pub async fn serve_abci(home: &Path, addr: &crate::abci::AbciAddr, opts: StartOptions, stop: impl std::future::Future<Output = ()>) -> anyhow::Result<()> {
    let h = Home(home.to_path_buf());
    let _lock = crate::home::lock(home)?;
    let nofile = raise_open_files_limit();
    let mut cfg = NodeConfig::load(&h.config())?;
    opts.apply(&mut cfg);
    fit_connections_to_descriptors(&mut cfg.http, nofile, reserved_descriptors(&h.state()));
    let app_cfg = AppConfig {
        simulation_hook: cfg.simulation_hook,
        upgrade_handlers: cfg.upgrade_handlers.clone(),
        history: cfg.pruning.retention()?,
        ..AppConfig::default()
    };
    let metrics = crate::metrics::Metrics::new(Some(h.state()));
    let app = Arc::new(App::load(h.state(), app_cfg, Indexer::with_metrics(metrics.clone())).await?);
    if let Some(s) = cfg.state_sync.settings(home) {
        app.enable_snapshots(s);
    }
    tracing::info!(chain_id = %app.chain_id(), height = app.queries().last_height().await?, %addr, "state loaded; serving ABCI");
    let metrics_listener =
        tokio::net::TcpListener::bind(&cfg.metrics.address).await.map_err(|e| anyhow::anyhow!("bind metrics {}: {e}", cfg.metrics.address))?;
    // The REST gateway and the Ethereum JSON-RPC, over CometBFT's RPC (CometBFT serves its own
    // RPC and WebSocket; this process serves one too when `cometbft.rpc_front` is set).
    let (committed_tx, committed_rx) = tokio::sync::mpsc::unbounded_channel();
    // With the app-side mempool, this app admits, orders and rechecks what clients send (as the
    // embedded engine does) and CometBFT's mempool is off.
    let pool = cfg.mempool.app_side.then(|| new_pool(&app, &cfg, &metrics, &cfg.mempool.peers));
    if pool.is_some() {
        tracing::info!(peers = cfg.mempool.peers.len(), "the app keeps the mempool (CometBFT's must be mempool.type = \"nop\")");
    }
    if !cfg.cometbft.send_events && cfg.cometbft.rpc_front.is_empty() {
        tracing::warn!(
            "[cometbft] send_events = false without rpc_front: CometBFT RPC clients see results without events (REST and JSON-RPC still serve them)"
        );
    }
    let comet = crate::comet::CometNode::new(app.clone(), cfg.cometbft.rpc.clone(), committed_rx, pool.clone());
    let feed = crate::comet::CommitFeed {
        tx: committed_tx,
        wanted: Box::new({
            let comet = Arc::downgrade(&comet);
            move || comet.upgrade().is_some_and(|c| c.listened())
        }),
    };
    let node: Arc<dyn NodeApi> = comet;
    let bind = |what: &'static str, a: String| async move { tokio::net::TcpListener::bind(&a).await.map_err(|e| anyhow::anyhow!("bind {what} {a}: {e}")) };
    let api_listener = bind("REST", cfg.api.address.clone()).await?;
    let eth_listener = bind("JSON-RPC", cfg.json_rpc.address.clone()).await?;
    let eth_ws_listener = bind("JSON-RPC WebSocket", cfg.json_rpc_ws.address.clone()).await?;
    tracing::info!(rest = %api_listener.local_addr()?, json_rpc = %eth_listener.local_addr()?, cometbft_rpc = %cfg.cometbft.rpc, "serving REST and JSON-RPC over CometBFT");
    let grpc_listener = bind("gRPC", cfg.grpc.address.clone()).await?;
    let front_listener = match cfg.cometbft.rpc_front.as_str() {
        "" => None,
        a => Some(bind("CometBFT RPC front", a.to_string()).await?),
    };
    let eth = lantau_rpc::eth::EthServer::with_call_limits(node.clone(), cfg.eth_call.limits());
    app.set_query_extension(Arc::new(lantau_rpc::grpc::NodeQueries(Arc::downgrade(&node))));
    let (stop_servers, rx) = watch::channel(false);
    let mut servers = vec![
        tokio::spawn(serve(metrics_listener, crate::metrics::router(metrics.clone()), cfg.http.limits(), rx.clone())),
        tokio::spawn(serve(api_listener, with_cors(lantau_rpc::rest::router(node.clone()), &cfg), cfg.http.limits(), rx.clone())),
        tokio::spawn(serve(eth_listener, with_cors(lantau_rpc::eth::http_router(eth.clone()), &cfg), cfg.http.limits(), rx.clone())),
        tokio::spawn(serve(eth_ws_listener, lantau_rpc::eth::ws_router(eth), cfg.http.limits(), rx.clone())),
        tokio::spawn(serve_grpc(grpc_listener, node.clone(), lantau_rpc::cors(&cfg.cors_allowed_origins), cfg.http.limits(), rx.clone())),
    ];
    // A CometBFT RPC answered from the app's own index (CometBFT's own indexer can then be off).
    if let Some(l) = front_listener {
        tracing::info!(cometbft_rpc_front = %l.local_addr()?, "serving a CometBFT RPC over the app's index");
        servers.push(tokio::spawn(serve(l, with_cors(lantau_rpc::cometbft::router(node.clone()), &cfg), cfg.http.limits(), rx)));
    }
    // A store fault stops the process (and with it the ABCI connections, so CometBFT stops
    // too): it never serves queries from a store it cannot read.
    let served = tokio::select! {
        r = crate::abci::serve(app.clone(), metrics, Some(feed), pool.map(|p| (p, cfg.consensus.max_block_txs)), crate::abci::Answering { send_events: cfg.cometbft.send_events, optimistic_execution: cfg.cometbft.optimistic_execution }, addr) => r,
        f = lantau_app::module_api::store::faulted() => Err(f.into()),
        () = stop => Ok(()),
    };
    let _ = stop_servers.send(true);
    for s in servers {
        let _ = s.await;
    }
    drop(node);
    match Arc::try_unwrap(app) {
        Ok(app) => app.release().await,
        Err(_) => tracing::warn!("the app is still in use at shutdown; its store closes with the process"),
    }
    served
}

/// Opens the home, initialises the chain on first start, and starts the engine and servers.
pub async fn start(home: &Path, opts: StartOptions) -> anyhow::Result<RunningNode> {
    let h = Home(home.to_path_buf());
    let lock = crate::home::lock(home)?;
    let nofile = raise_open_files_limit();
    let mut cfg = NodeConfig::load(&h.config())?;
    opts.apply(&mut cfg);
    fit_connections_to_descriptors(&mut cfg.http, nofile, reserved_descriptors(&h.state()));
    let genesis = GenesisFile::load(&h.genesis())?;
    let vk = read_validator_key(&h.validator_key())?;
    let pk_bytes = base64::engine::general_purpose::STANDARD.decode(&vk.pub_key.value)?;
    let pub_key = PublicKey::from_raw_ed25519(&pk_bytes).ok_or_else(|| anyhow::anyhow!("invalid validator key"))?;
    let addr: [u8; 20] = lantau_crypto::sha256(&pk_bytes)[..20].try_into()?;
    let validator = Validator { address: account::Id::new(addr), pub_key, power: 10 };
    // The document CometBFT's `genesis` RPC would give for this single-validator chain.
    let genesis_doc = serde_json::json!({
        "genesis_time": genesis.genesis_time,
        "chain_id": genesis.chain_id,
        "initial_height": genesis.initial_height,
        "consensus_params": serde_json::to_value(genesis.consensus_params())?,
        "validators": [{
            "address": const_hex::encode_upper(addr),
            "pub_key": {"type": "tendermint/PubKeyEd25519", "value": vk.pub_key.value},
            "power": "10",
            "name": cfg.moniker,
        }],
        "app_hash": genesis.app_hash,
        "app_state": serde_json::to_value(&genesis.app_state)?,
    });

    let metrics = crate::metrics::Metrics::new(Some(h.state()));
    let indexer = Indexer::with_metrics(metrics.clone());
    let app_cfg = AppConfig {
        simulation_hook: cfg.simulation_hook,
        upgrade_handlers: cfg.upgrade_handlers.clone(),
        history: cfg.pruning.retention()?,
        ..AppConfig::default()
    };
    let app = Arc::new(App::load(h.state(), app_cfg, indexer.clone()).await?);
    if let Some(s) = cfg.state_sync.settings(home) {
        app.enable_snapshots(s);
    }
    if app.chain_id().is_empty() {
        let app_state = serde_json::to_vec(&genesis.app_state)?;
        app.init_chain(request::InitChain {
            time: genesis.time()?,
            chain_id: genesis.chain_id.clone(),
            consensus_params: genesis.consensus_params(),
            validators: vec![],
            app_state_bytes: app_state.into(),
            initial_height: genesis.initial_height()?,
        })
        .await?;
    } else {
        anyhow::ensure!(app.chain_id() == genesis.chain_id, "state is for chain {}, genesis says {}", app.chain_id(), genesis.chain_id);
    }
    tracing::info!(chain_id = %app.chain_id(), height = app.queries().last_height().await?, "state loaded");

    // One validator: no peer to forward to.
    let pool = new_pool(&app, &cfg, &metrics, &[]);
    let (events, _) = broadcast::channel(16_384);
    let engine = Arc::new(Engine::new(app.clone(), indexer, pool.clone(), events.clone(), cfg.consensus.clone(), validator, metrics.clone()));
    let node = Arc::new(EmbeddedNode {
        app,
        engine: engine.clone(),
        pool,
        events,
        moniker: cfg.moniker.clone(),
        rpc_address: Mutex::new(String::new()),
        me: Mutex::new(std::sync::Weak::new()),
        metrics: metrics.clone(),
        genesis_doc,
        dev: h.dev_accounts().exists(),
        dev_faucet: dev_faucet_key(&h),
    });
    *node.me.lock() = Arc::downgrade(&node);
    // A new chain has its first block before anything is served, as a chain that has run has
    // its last: `latest` always names a block (Ethereum tooling reads it first thing).
    if node.app.queries().last_height().await? == 0 {
        engine.mine().await?;
    }

    let api_listener = tokio::net::TcpListener::bind(&cfg.api.address).await.map_err(|e| anyhow::anyhow!("bind REST {}: {e}", cfg.api.address))?;
    let rpc_listener = tokio::net::TcpListener::bind(&cfg.rpc.address).await.map_err(|e| anyhow::anyhow!("bind RPC {}: {e}", cfg.rpc.address))?;
    let eth_listener =
        tokio::net::TcpListener::bind(&cfg.json_rpc.address).await.map_err(|e| anyhow::anyhow!("bind JSON-RPC {}: {e}", cfg.json_rpc.address))?;
    let eth_ws_listener = tokio::net::TcpListener::bind(&cfg.json_rpc_ws.address)
        .await
        .map_err(|e| anyhow::anyhow!("bind JSON-RPC WebSocket {}: {e}", cfg.json_rpc_ws.address))?;
    let api_addr = api_listener.local_addr()?;
    let rpc_addr = rpc_listener.local_addr()?;
    let eth_addr = eth_listener.local_addr()?;
    let eth_ws_addr = eth_ws_listener.local_addr()?;
    let metrics_listener =
        tokio::net::TcpListener::bind(&cfg.metrics.address).await.map_err(|e| anyhow::anyhow!("bind metrics {}: {e}", cfg.metrics.address))?;
    let metrics_addr = metrics_listener.local_addr()?;
    let grpc_listener = tokio::net::TcpListener::bind(&cfg.grpc.address).await.map_err(|e| anyhow::anyhow!("bind gRPC {}: {e}", cfg.grpc.address))?;
    let grpc_addr = grpc_listener.local_addr()?;
    *node.rpc_address.lock() = format!("tcp://{rpc_addr}");

    let (shutdown, rx) = watch::channel(false);
    let dyn_node: Arc<dyn NodeApi> = node.clone();
    let eth = lantau_rpc::eth::EthServer::with_call_limits(dyn_node.clone(), cfg.eth_call.limits());
    node.app.set_query_extension(Arc::new(lantau_rpc::grpc::NodeQueries(Arc::downgrade(&dyn_node))));
    // The engine runs on a thread of its own (driving its future with the runtime's handle):
    // executing a block is long CPU work, and on a runtime worker it would hold up the
    // admissions that worker has queued (tokio cannot steal a worker's next-task slot).
    let handle = tokio::runtime::Handle::current();
    let engine_rx = rx.clone();
    let tasks = vec![
        Some(tokio::task::spawn_blocking(move || handle.block_on(engine.run(engine_rx)))),
        Some(tokio::spawn(serve(api_listener, with_cors(lantau_rpc::rest::router(dyn_node.clone()), &cfg), cfg.http.limits(), rx.clone()))),
        Some(tokio::spawn(serve(rpc_listener, with_cors(lantau_rpc::cometbft::router(dyn_node.clone()), &cfg), cfg.http.limits(), rx.clone()))),
        Some(tokio::spawn(serve(eth_listener, with_cors(lantau_rpc::eth::http_router(eth.clone()), &cfg), cfg.http.limits(), rx.clone()))),
        Some(tokio::spawn(serve(eth_ws_listener, lantau_rpc::eth::ws_router(eth), cfg.http.limits(), rx.clone()))),
        Some(tokio::spawn(serve(metrics_listener, crate::metrics::router(metrics), cfg.http.limits(), rx.clone()))),
        Some(tokio::spawn(serve_grpc(grpc_listener, dyn_node.clone(), lantau_rpc::cors(&cfg.cors_allowed_origins), cfg.http.limits(), rx))),
    ];
    Ok(RunningNode { node, api_addr, rpc_addr, eth_addr, eth_ws_addr, metrics_addr, grpc_addr, _lock: lock, home: home.to_path_buf(), shutdown, tasks })
}

/// The node's transaction pool, with the configured bounds, its size on the metrics.
fn new_pool(app: &Arc<App>, cfg: &NodeConfig, metrics: &crate::metrics::Metrics, peers: &[String]) -> Arc<TxPool> {
    let mempool = Arc::new(Mutex::new(Mempool::new(cfg.mempool.max_txs, cfg.mempool.max_bytes, cfg.mempool.max_txs_per_sender)));
    let scraped = Arc::downgrade(&mempool);
    metrics.mempool_source(move || scraped.upgrade().map(|m| m.lock().size()).unwrap_or((0, 0)));
    TxPool::new(app.clone(), mempool, peers)
}

/// The router with the configured CORS layer, when any origin is allowed.
fn with_cors(router: axum::Router, cfg: &NodeConfig) -> axum::Router {
    match lantau_rpc::cors(&cfg.cors_allowed_origins) {
        Some(layer) => router.layer(layer),
        None => router,
    }
}

async fn serve_grpc(
    listener: tokio::net::TcpListener,
    node: Arc<dyn NodeApi>,
    cors: Option<tower_http::cors::CorsLayer>,
    limits: lantau_rpc::http::HttpLimits,
    mut rx: watch::Receiver<bool>,
) {
    let stop = async move {
        while !*rx.borrow() {
            if rx.changed().await.is_err() {
                break;
            }
        }
    };
    if let Err(e) = lantau_rpc::grpc::serve(listener, node, cors, limits, stop).await {
        tracing::error!(error = %e, "gRPC server stopped");
    }
}

/// Raises the process's soft open-files limit to its hard limit (as Go's runtime does for
/// CometBFT): the servers' connection caps and the store share one descriptor table. Returns
/// the soft limit in force afterwards (`None` when it cannot be read).
fn raise_open_files_limit() -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit with a valid resource and a pointer to a live rlimit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return None;
        }
        if lim.rlim_cur < lim.rlim_max {
            let from = lim.rlim_cur;
            let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                tracing::debug!(from, to = lim.rlim_max, "raised the open-files limit");
                lim = raised;
            }
        }
    }
    Some(lim.rlim_cur)
}

/// Listeners that accept connections, each with the `[http]` limits: REST, CometBFT RPC,
/// JSON-RPC HTTP and WebSocket, metrics, gRPC.
const LISTENERS: u64 = 6;
/// Descriptors kept for everything but the listeners' connections: the store's logs and
/// manifest, the ABCI socket, the home's lock, outgoing connections, the portal's or
/// console's own.
const RESERVED_DESCRIPTORS: u64 = 256;

/// Descriptors kept aside from the listeners: [`RESERVED_DESCRIPTORS`] plus twice the files
/// of the store at start (RocksDB keeps every table file open; twice, for it to grow).
fn reserved_descriptors(state: &Path) -> u64 {
    let files = std::fs::read_dir(state).map(|d| d.count()).unwrap_or(0);
    RESERVED_DESCRIPTORS.saturating_add(2u64.saturating_mul(u64::try_from(files).unwrap_or(u64::MAX)))
}

/// The descriptor budget: lowers `[http] max_connections` so that every listener holding its
/// cap at once, plus `reserved`, stays within the open-files limit `nofile`. Each listener
/// gets the same share, and a connection holds its place until its socket closes, so no
/// surface can take another's descriptors, and `accept` never fails for want of one (then no
/// one could connect, which the cap's eviction exists to prevent).
fn fit_connections_to_descriptors(http: &mut crate::config::HttpConfig, nofile: Option<u64>, reserved: u64) {
    let Some(n) = nofile else { return };
    let per = usize::try_from((n.saturating_sub(reserved) / LISTENERS).max(16)).unwrap_or(usize::MAX);
    if http.max_connections > per {
        tracing::warn!(
            configured = http.max_connections,
            allowed = per,
            open_files_limit = n,
            reserved,
            "http.max_connections lowered to fit the open-files limit; raise `ulimit -n` to serve more"
        );
        http.max_connections = per;
    }
}

/// Every HTTP surface is served here, through the one server loop and its limits.
async fn serve(listener: tokio::net::TcpListener, router: axum::Router, limits: lantau_rpc::http::HttpLimits, mut rx: watch::Receiver<bool>) {
    let stop = async move {
        while !*rx.borrow() {
            if rx.changed().await.is_err() {
                break;
            }
        }
    };
    lantau_rpc::http::serve(listener, router, limits, stop).await;
}

/// The default `block.max_gas`: the most gas (summed gas limits) one block may carry. Sized so
/// that a block holds 10,000 gated transfers at a wallet's gas limit (its estimate x 1.3), and
/// a full block of the dearest work per gas (every limit exact) executes and commits in about
/// 0.85 s on the project's machine kind: under half of a network's interval from CometBFT's
/// `timeout_commit` at 1.6 s, under 30 % of it at a network's 3 s. A larger block is slower
/// per gas, so it would carry less under that rule; see `docs/performance.md`, "The gas
/// schedule".
pub const DEFAULT_MAX_BLOCK_GAS: i64 = 1_200_000_000;

/// The consensus parameters a new genesis gets: CometBFT's defaults, with a block gas limit
/// ([`DEFAULT_MAX_BLOCK_GAS`]).
pub fn default_consensus_params() -> lantau_app::tendermint::consensus::Params {
    use lantau_app::tendermint::{block, consensus, evidence, public_key};
    consensus::Params {
        block: block::Size { max_bytes: 22_020_096, max_gas: DEFAULT_MAX_BLOCK_GAS, time_iota_ms: 1000 },
        evidence: evidence::Params {
            max_age_num_blocks: 100_000,
            max_age_duration: evidence::Duration(std::time::Duration::from_secs(172_800)),
            max_bytes: 1_048_576,
        },
        validator: consensus::params::ValidatorParams { pub_key_types: vec![public_key::Algorithm::Ed25519] },
        version: Some(consensus::params::VersionParams { app: 1 }),
        abci: Default::default(),
    }
}

#[cfg(test)]
mod descriptor_tests {
    use super::*;

    #[test]
    fn connection_caps_fit_the_open_files_limit() {
        let mut http = crate::config::HttpConfig::default();
        fit_connections_to_descriptors(&mut http, Some(1_024), RESERVED_DESCRIPTORS);
        assert_eq!(http.max_connections, 128, "(1024 - 256) / 6 listeners");
        let mut http = crate::config::HttpConfig::default();
        fit_connections_to_descriptors(&mut http, Some(1_024), RESERVED_DESCRIPTORS + 2 * 48);
        assert_eq!(http.max_connections, 112, "a store of 48 files: (1024 - 352) / 6");
        let mut http = crate::config::HttpConfig::default();
        fit_connections_to_descriptors(&mut http, Some(1 << 20), RESERVED_DESCRIPTORS);
        assert_eq!(http.max_connections, crate::config::HttpConfig::default().max_connections);
        fit_connections_to_descriptors(&mut http, Some(100), RESERVED_DESCRIPTORS);
        assert_eq!(http.max_connections, 16);
    }
}

//! The node interface under CometBFT: [`CometNode`] implements the same [`NodeApi`] as the
//! embedded node, so the REST gateway and the Ethereum JSON-RPC serve a validator of a
//! CometBFT network unchanged.
//!
//! What comes from where: broadcasts, blocks, status and the mempool's size from CometBFT's RPC
//! (JSON-RPC over HTTP), except that with the app-side mempool broadcasts and the mempool are
//! the app's own ([`crate::txpool`]); transactions, search and block results from the app's own index (the
//! block hook writes it in the same commit as the state, under CometBFT as in embedded mode);
//! the pending sequence from the app's check state (CometBFT's CheckTx keeps it); events for
//! subscribers from the ABCI server's commits ([`Committed`]), published once the block is
//! committed.

use std::sync::Arc;

use base64::Engine as _;
use lantau_app::evm::exec::{EvmCall, Interrupt, Outcome};
use lantau_app::module_api::{QueryError, TxError};
use lantau_app::tendermint::abci::{request, response};
use lantau_app::tendermint::Block;
use lantau_app::App;
use lantau_event_query::Query;
use lantau_rpc::api::{BlockResults, BroadcastResult, NodeApi, NodeError, NodeEvent, NodeStatus, SearchPage, TxRecord};
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use crate::indexer;
use crate::txpool::TxPool;

/// A block the app committed, as the ABCI server saw it.
#[derive(Debug)]
pub struct Committed {
    /// The FinalizeBlock request (height, time, transactions).
    pub req: request::FinalizeBlock,
    /// Its response (results, events).
    pub resp: response::FinalizeBlock,
}

/// Where the ABCI server hands committed blocks to the node interface.
pub struct CommitFeed {
    /// The node interface's end.
    pub tx: mpsc::UnboundedSender<Committed>,
    /// Whether anyone listens now: a block is copied for the feed only then (its results and
    /// events are the largest thing a block makes).
    pub wanted: Box<dyn Fn() -> bool + Send + Sync>,
}

impl std::fmt::Debug for CommitFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitFeed").finish_non_exhaustive()
    }
}

/// The node interface of an app driven by CometBFT.
pub struct CometNode {
    app: Arc<App>,
    /// The app-side mempool, when this app keeps it (`[mempool] app_side`): broadcasts are
    /// admitted here instead of through CometBFT's RPC.
    pool: Option<Arc<TxPool>>,
    rpc: String,
    http: reqwest::Client,
    events: broadcast::Sender<NodeEvent>,
}

impl std::fmt::Debug for CometNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CometNode").field("rpc", &self.rpc).finish_non_exhaustive()
    }
}

fn unreachable_result(hash: [u8; 32], e: &NodeError) -> BroadcastResult {
    let err = lantau_app::module_api::TxError::from(lantau_app::module_api::SdkError::Internal(format!("CometBFT RPC: {e}")));
    BroadcastResult { hash, code: err.code, codespace: err.codespace.into(), log: err.log, gas_wanted: 0, gas_used: 0 }
}

fn str_u64(v: &Value) -> u64 {
    v.as_str().and_then(|s| s.parse().ok()).or_else(|| v.as_u64()).unwrap_or(0)
}

impl CometNode {
    /// A node interface over `app`, talking to CometBFT's RPC at `rpc` (`http://host:port`);
    /// `committed` receives the ABCI server's commits; `pool` is the app-side mempool, if any.
    pub fn new(app: Arc<App>, rpc: String, mut committed: mpsc::UnboundedReceiver<Committed>, pool: Option<Arc<TxPool>>) -> Arc<Self> {
        let (events, _) = broadcast::channel(16_384);
        let node = Arc::new(Self { app, pool, rpc: rpc.trim_end_matches('/').to_string(), http: reqwest::Client::new(), events });
        let weak = Arc::downgrade(&node);
        tokio::spawn(async move {
            while let Some(c) = committed.recv().await {
                let Some(node) = weak.upgrade() else { break };
                node.publish(c).await;
            }
        });
        node
    }

    /// Whether any subscriber (a WebSocket session) listens for committed blocks.
    pub fn listened(&self) -> bool {
        self.events.receiver_count() > 0
    }

    /// One CometBFT JSON-RPC call; its `result`. No answer (no connection, no JSON) is
    /// [`NodeError::Unavailable`]; an error answer, or none, [`NodeError::Internal`] naming
    /// the method.
    async fn call(&self, method: &str, params: Value) -> Result<Value, NodeError> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let unavailable = |e: reqwest::Error| NodeError::Unavailable(e.to_string());
        let v: Value = self.http.post(&self.rpc).json(&body).send().await.map_err(unavailable)?.json().await.map_err(unavailable)?;
        if let Some(e) = v.get("error") {
            let why = e.get("data").and_then(Value::as_str).or_else(|| e.get("message").and_then(Value::as_str)).unwrap_or("error");
            return Err(NodeError::Internal(format!("{method}: {why}")));
        }
        v.get("result").cloned().ok_or_else(|| NodeError::Internal(format!("{method}: no result")))
    }

    async fn broadcast(&self, method: &str, tx: Vec<u8>) -> BroadcastResult {
        let hash = lantau_app::tx::tx_hash(&tx);
        let r = match self.call(method, json!({"tx": base64::engine::general_purpose::STANDARD.encode(&tx)})).await {
            Ok(r) => r,
            Err(e) => return unreachable_result(hash, &e),
        };
        BroadcastResult {
            hash,
            code: u32::try_from(r["code"].as_u64().unwrap_or(0)).unwrap_or(u32::MAX),
            codespace: r["codespace"].as_str().unwrap_or_default().to_string(),
            log: r["log"].as_str().unwrap_or_default().to_string(),
            gas_wanted: 0,
            gas_used: 0,
        }
    }

    /// Publishes a committed block's events: the block (read back from CometBFT, which stores
    /// it before executing it) and each transaction.
    async fn publish(&self, c: Committed) {
        let height = c.req.height.value();
        if self.events.receiver_count() == 0 {
            return;
        }
        match self.block(Some(height)).await {
            Ok(Some(block)) => {
                let _ = self.events.send(NodeEvent::NewBlock { block: Arc::new(block), events: c.resp.events.clone() });
            }
            Ok(None) | Err(_) => tracing::warn!(height, "committed block not readable from CometBFT; NewBlock not published"),
        }
        let timestamp = indexer::rfc3339(c.req.time);
        for (i, (t, r)) in c.req.txs.iter().zip(c.resp.tx_results).enumerate() {
            let rec = TxRecord {
                hash: lantau_app::tx::tx_hash(t),
                height,
                index: u32::try_from(i).unwrap_or(u32::MAX),
                tx: t.to_vec(),
                result: r,
                timestamp: timestamp.clone(),
            };
            let _ = self.events.send(NodeEvent::Tx(Arc::new(rec)));
        }
    }
}

#[async_trait::async_trait]
impl NodeApi for CometNode {
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
        match &self.pool {
            Some(pool) => pool.admit(tx).await,
            None => self.broadcast("broadcast_tx_sync", tx).await,
        }
    }

    async fn broadcast_async(&self, tx: Vec<u8>) -> BroadcastResult {
        let Some(pool) = &self.pool else { return self.broadcast("broadcast_tx_async", tx).await };
        let (hash, pool) = (lantau_app::tx::tx_hash(&tx), pool.clone());
        tokio::spawn(async move {
            let r = pool.admit(tx).await;
            if r.code != 0 {
                tracing::debug!(code = r.code, log = %r.log, "async broadcast rejected");
            }
        });
        BroadcastResult { hash, code: 0, codespace: String::new(), log: String::new(), gas_wanted: 0, gas_used: 0 }
    }

    async fn admit_forwarded(&self, txs: Vec<Vec<u8>>) -> Result<usize, NodeError> {
        match &self.pool {
            Some(pool) => Ok(pool.admit_forwarded(txs).await),
            None => Err(NodeError::Unavailable(lantau_rpc::api::NO_APP_MEMPOOL.into())),
        }
    }

    async fn tx(&self, hash: [u8; 32]) -> Result<Option<TxRecord>, NodeError> {
        indexer::tx(&self.app.snapshot(), &hash).await
    }

    async fn eth_tx(&self, eth_hash: [u8; 32]) -> Result<Option<TxRecord>, NodeError> {
        indexer::eth_tx(&self.app.snapshot(), &eth_hash).await
    }

    async fn search_txs(&self, query: &Query, descending: bool, page: u64, per_page: u64) -> Result<SearchPage, NodeError> {
        indexer::search(&self.app.snapshot(), query, descending, page, per_page).await
    }

    async fn block(&self, height: Option<u64>) -> Result<Option<Block>, NodeError> {
        let params = match height {
            Some(h) => json!({"height": h.to_string()}),
            None => json!({}),
        };
        let r = match self.call("block", params).await {
            Ok(r) => r,
            // CometBFT answers an error for a height it does not have (yet, or any more).
            Err(e) if e.to_string().contains("must be less than or equal to the current blockchain height") || e.to_string().contains("lowest height is") => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        if r["block"].is_null() {
            return Ok(None);
        }
        serde_json::from_value(r["block"].clone()).map(Some).map_err(|e| NodeError::Internal(e.to_string()))
    }

    async fn block_results(&self, height: Option<u64>) -> Result<Option<BlockResults>, NodeError> {
        let snap = self.app.snapshot();
        let last = crate::app_api::height_at(&snap).await?;
        let h = height.unwrap_or(last);
        if h == 0 || h > last {
            return Ok(None);
        }
        let app_hash = match self.block(Some(h.saturating_add(1))).await? {
            Some(next) => const_hex::encode_upper(next.header.app_hash.as_bytes()),
            None => crate::app_api::root_hash(&snap).await?,
        };
        indexer::block_results(&snap, h, app_hash).await
    }

    async fn status(&self) -> Result<NodeStatus, NodeError> {
        let s = self.call("status", json!({})).await?;
        let (ni, si, vi) = (&s["node_info"], &s["sync_info"], &s["validator_info"]);
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        Ok(NodeStatus {
            chain_id: text(&ni["network"]),
            moniker: text(&ni["moniker"]),
            node_id: text(&ni["id"]),
            rpc_address: text(&ni["other"]["rpc_address"]),
            latest_height: str_u64(&si["latest_block_height"]),
            latest_block_hash: text(&si["latest_block_hash"]),
            latest_app_hash: text(&si["latest_app_hash"]),
            latest_block_time: text(&si["latest_block_time"]),
            earliest_height: str_u64(&si["earliest_block_height"]),
            validator_address: text(&vi["address"]),
            validator_pub_key: text(&vi["pub_key"]["value"]),
            voting_power: str_u64(&vi["voting_power"]),
        })
    }

    fn subscribe(&self) -> broadcast::Receiver<NodeEvent> {
        self.events.subscribe()
    }

    async fn mempool_size(&self) -> (usize, usize) {
        if let Some(pool) = &self.pool {
            return pool.mempool().lock().size();
        }
        match self.call("num_unconfirmed_txs", json!({})).await {
            Ok(r) => (usize::try_from(str_u64(&r["n_txs"])).unwrap_or(usize::MAX), usize::try_from(str_u64(&r["total_bytes"])).unwrap_or(usize::MAX)),
            Err(_) => (0, 0),
        }
    }

    async fn unconfirmed_txs(&self, limit: usize) -> Vec<Vec<u8>> {
        use base64::Engine as _;
        if let Some(pool) = &self.pool {
            return pool.mempool().lock().entries().into_iter().take(limit).map(|e| e.bytes.as_ref().clone()).collect();
        }
        // CometBFT answers at most 100 per call (its `limit` is capped there).
        match self.call("unconfirmed_txs", json!({"limit": limit.min(100).to_string()})).await {
            Ok(r) => r["txs"]
                .as_array()
                .map(|txs| txs.iter().filter_map(|t| t.as_str().and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())).collect())
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }

    async fn block_height_by_hash(&self, hash: [u8; 32]) -> Result<Option<u64>, NodeError> {
        let r = self.call("block_by_hash", json!({"hash": base64::engine::general_purpose::STANDARD.encode(hash)})).await?;
        if r["block"].is_null() {
            return Ok(None);
        }
        Ok(Some(str_u64(&r["block"]["header"]["height"])))
    }

    async fn pending_sequence(&self, addr: &lantau_primitives::Address) -> Result<u64, NodeError> {
        crate::app_api::pending_sequence(&self.app, addr).await
    }
}

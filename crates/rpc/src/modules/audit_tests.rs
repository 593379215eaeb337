//! The AuditLog route over HTTP, on an app whose store holds rows written directly (the
//! compliance handlers that append rows in blocks come later), behind a stub node.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use lantau_app::cnidarium::StateDelta;
use lantau_app::compliance::{AuditEntry, AuditWrite};
use lantau_app::evm::exec::{EvmCall, Interrupt, Outcome};
use lantau_app::module_api::{BlockCtx, GasMeter, QueryError, TxError};
use lantau_app::store::Storage;
use lantau_app::tendermint::abci::{request, response};
use lantau_app::{App, AppConfig, NoHook};
use lantau_event_query::Query;
use lantau_primitives::Address;
use serde_json::{json, Value};

use crate::api::{BlockResults, BroadcastResult, NodeApi, NodeError, NodeEvent, NodeStatus, SearchPage, TxRecord};

/// A node over an app: the state machine's methods answered by the app, nothing else held.
struct Stub(App);

#[async_trait::async_trait]
impl NodeApi for Stub {
    async fn query(&self, height: u64, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError> {
        self.0.queries().grpc_query(height, method, request).await
    }
    async fn abci_query(&self, req: request::Query) -> response::Query {
        self.0.abci_query(req).await
    }
    async fn abci_info(&self, req: request::Info) -> Result<response::Info, NodeError> {
        self.0.info(req).await.map_err(|e| NodeError::Internal(e.to_string()))
    }
    async fn eth_call(&self, height: Option<u64>, call: &EvmCall, interrupt: &Interrupt) -> Result<Outcome, TxError> {
        self.0.queries().eth_call(height, call, interrupt).await
    }
    async fn state_at(&self, height: Option<u64>) -> Result<Option<lantau_app::history::StateView>, NodeError> {
        self.0.queries().snapshot_at_height(height).await.map_err(|e| NodeError::Internal(e.to_string()))
    }
    async fn last_height(&self) -> Result<u64, NodeError> {
        self.0.queries().last_height().await.map_err(|e| NodeError::Internal(e.to_string()))
    }
    fn history(&self) -> lantau_app::history::Retention {
        self.0.config().history
    }
    async fn max_block_gas(&self) -> Result<Option<u64>, NodeError> {
        self.0.queries().max_block_gas().await.map_err(|e| NodeError::Internal(e.to_string()))
    }
    async fn evm_chain_id(&self) -> Result<u64, NodeError> {
        self.0.queries().evm_chain_id().await.map_err(|e| NodeError::Internal(e.to_string()))
    }
    async fn broadcast_sync(&self, _: Vec<u8>) -> BroadcastResult {
        BroadcastResult { hash: [0; 32], code: 1, codespace: "sdk".into(), log: "stub".into(), gas_wanted: 0, gas_used: 0 }
    }
    async fn broadcast_async(&self, tx: Vec<u8>) -> BroadcastResult {
        self.broadcast_sync(tx).await
    }
    async fn tx(&self, _: [u8; 32]) -> Result<Option<TxRecord>, NodeError> {
        Ok(None)
    }
    async fn eth_tx(&self, _: [u8; 32]) -> Result<Option<TxRecord>, NodeError> {
        Ok(None)
    }
    async fn search_txs(&self, _: &Query, _: bool, _: u64, _: u64) -> Result<SearchPage, NodeError> {
        Ok(SearchPage::default())
    }
    async fn block(&self, _: Option<u64>) -> Result<Option<lantau_app::tendermint::Block>, NodeError> {
        Ok(None)
    }
    async fn block_results(&self, _: Option<u64>) -> Result<Option<BlockResults>, NodeError> {
        Ok(None)
    }
    async fn status(&self) -> Result<NodeStatus, NodeError> {
        Err(NodeError::Internal("stub".into()))
    }
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<NodeEvent> {
        tokio::sync::broadcast::channel(1).1
    }
    async fn mempool_size(&self) -> (usize, usize) {
        (0, 0)
    }
    async fn block_height_by_hash(&self, _hash: [u8; 32]) -> Result<Option<u64>, NodeError> {
        Ok(None)
    }
    async fn pending_sequence(&self, _addr: &lantau_primitives::Address) -> Result<u64, NodeError> {
        Ok(0)
    }
}

fn addr(i: u8) -> Address {
    Address([i; 20])
}

fn row(tx_type: &str, subject: u8, hash: &str) -> AuditEntry {
    AuditEntry {
        tx_type: tx_type.into(),
        subject: addr(subject).to_bech32(),
        counterparty: addr(9).to_bech32(),
        amount: Some(cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: "hkd.demo".into(), amount: "900000".into() }),
        tx_hash: hash.into(),
        metadata: [("flag_id".to_string(), "7".to_string()), ("decorator".to_string(), "threshold".to_string())].into_iter().collect(),
        ..Default::default()
    }
}

/// Serves the REST router over an app holding three rows: two at 2026-01-01T00:00:00Z
/// (height 1), one at 2026-01-01T00:00:05.5Z (height 2). Returns the base URL.
async fn serve(dir: &tempfile::TempDir) -> String {
    let storage = Storage::load(dir.path().join("db")).await.unwrap();
    let gas = GasMeter::infinite();
    let t0 = time::macros::datetime!(2026-01-01 00:00:00 UTC);
    for (height, time, rows) in [
        (1u64, t0, vec![row("transfer", 1, &"AB".repeat(32)), row("threshold_flag", 1, &"AB".repeat(32))]),
        (2, t0 + time::Duration::milliseconds(5_500), vec![row("transfer", 2, &"CD".repeat(32))]),
    ] {
        let mut d = StateDelta::new(storage.latest_snapshot());
        let block = BlockCtx { height, time, chain_id: "lantau-test-1".into() };
        for r in rows {
            d.append_audit(&gas, &block, r).await.unwrap();
        }
        storage.commit(d).await.unwrap();
    }
    let app = App::with_storage(storage, AppConfig::default(), Arc::new(NoHook)).await.unwrap();
    let node: Arc<dyn NodeApi> = Arc::new(Stub(app));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, crate::rest::router(node)).await });
    url
}

async fn get(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

fn sequences(v: &Value) -> Vec<&str> {
    v["entries"].as_array().unwrap().iter().map(|e| e["sequence"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_log_route_answers_the_gateway_shape_and_applies_filters() {
    let dir = tempfile::tempdir().unwrap();
    let base = serve(&dir).await;
    let path = format!("{base}/chain/compliance/v1/audit_log");

    let (status, all) = get(&path).await;
    assert_eq!(status, 200);
    assert_eq!(all["pagination"], json!({"next_key": null, "total": "3"}));
    assert_eq!(
        all["entries"][0],
        json!({
            "sequence": "1",
            "block_height": "1",
            "block_time": "2026-01-01T00:00:00Z",
            "tx_type": "transfer",
            "subject": addr(1).to_bech32(),
            "counterparty": addr(9).to_bech32(),
            "amount": {"denom": "hkd.demo", "amount": "900000"},
            "tx_hash": "AB".repeat(32),
            "metadata": {"decorator": "threshold", "flag_id": "7"},
        })
    );
    assert_eq!(all["entries"][2]["block_time"], "2026-01-01T00:00:05.500Z");

    let s1 = addr(1).to_bech32();
    for (query, want) in [
        (format!("subject={s1}"), vec!["1", "2"]),
        (format!("subject={s1}&tx_type=transfer"), vec!["1"]),
        ("tx_type=transfer".to_string(), vec!["1", "3"]),
        (format!("tx_hash={}", "cd".repeat(32)), vec!["3"]),
        (format!("tx_hash={}", "Ab".repeat(32)), vec!["1", "2"]),
        ("from=2026-01-01T00:00:05.5Z".to_string(), vec!["3"]),
        ("to=2026-01-01T00:00:05.5Z".to_string(), vec!["1", "2"]),
        ("from=2026-01-01T08:00:00%2B08:00&to=2026-01-01T08:00:01+08:00".to_string(), vec!["1", "2"]),
        ("subject=&tx_type=&pagination.limit=1&pagination.key=AAA%3D&pagination.count_total=true".to_string(), vec!["1", "2", "3"]),
        ("tx_type=sanctions".to_string(), vec![]),
    ] {
        let (status, v) = get(&format!("{path}?{query}")).await;
        assert_eq!(status, 200, "{query}: {v}");
        assert_eq!(sequences(&v), want, "{query}");
        assert_eq!(v["pagination"], json!({"next_key": null, "total": want.len().to_string()}), "{query}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_log_route_rejects_bad_subjects_and_times_with_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let base = serve(&dir).await;
    let path = format!("{base}/chain/compliance/v1/audit_log");
    for query in
        ["subject=lantau1notanaddress", "subject=0x0101010101010101010101010101010101010101", "from=yesterday", "to=2026-13-01T00:00:00Z", "from=2026-01-01"]
    {
        let (status, v) = get(&format!("{path}?{query}")).await;
        assert_eq!(status, 400, "{query}");
        assert_eq!(v["code"], 3, "{query}");
        assert!(v["message"].as_str().unwrap().starts_with("invalid "), "{query}: {v}");
        assert_eq!(v["details"], json!([]), "{query}");
    }
}

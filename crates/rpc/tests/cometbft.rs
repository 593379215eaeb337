//! The CometBFT RPC over real HTTP and WebSocket connections, against a fake node.

#![allow(unused_crate_dependencies, clippy::disallowed_types, clippy::disallowed_methods)]

use std::collections::HashMap;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use futures::{SinkExt, StreamExt};
use lantau_app::evm::exec::{EvmCall, Interrupt, Outcome};
use lantau_app::module_api::{QueryError, TxError};
use lantau_app::tendermint::abci::types::ExecTxResult;
use lantau_app::tendermint::abci::{request, response, Event};
use lantau_app::tendermint::block::{self, header::Version, Header};
use lantau_app::tendermint::{account, consensus, evidence, public_key, AppHash, Block, Hash, Time};
use lantau_app::App;
use lantau_event_query::Query;
use lantau_rpc::api::{tx_event_map, BlockResults, BroadcastResult, NodeApi, NodeError, NodeEvent, NodeStatus, SearchPage, TxRecord};
use serde_json::{json, Value};
use std::sync::Mutex;
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::Message;

// === fake node ===

const WAIT: Duration = Duration::from_secs(10);

struct Fake {
    app: App,
    _dir: tempfile::TempDir,
    events: broadcast::Sender<NodeEvent>,
    txs: Mutex<HashMap<[u8; 32], TxRecord>>,
    blocks: Vec<Block>,
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn transfer_event(recipient: &str) -> Event {
    Event::new("transfer", [("recipient", recipient), ("amount", "100alantau")])
}

fn record(tx: &[u8], height: u64, index: u32, recipient: &str) -> TxRecord {
    TxRecord {
        hash: lantau_app::tx::tx_hash(tx),
        height,
        index,
        tx: tx.to_vec(),
        result: ExecTxResult { data: vec![7, 7].into(), gas_wanted: 200_000, gas_used: 50_000, events: vec![transfer_event(recipient)], ..Default::default() },
        timestamp: "1970-01-01T00:00:00Z".into(),
    }
}

fn make_block(height: u64, txs: Vec<Vec<u8>>) -> Block {
    let header = Header {
        version: Version { block: 11, app: 1 },
        chain_id: "test-1".parse().expect("chain id"),
        height: block::Height::try_from(height).expect("height"),
        time: Time::unix_epoch(),
        last_block_id: None,
        last_commit_hash: None,
        data_hash: None,
        validators_hash: Hash::Sha256([1; 32]),
        next_validators_hash: Hash::Sha256([1; 32]),
        consensus_hash: Hash::Sha256([2; 32]),
        app_hash: AppHash::try_from(vec![height as u8; 32]).expect("app hash"),
        last_results_hash: None,
        evidence_hash: None,
        proposer_address: account::Id::new([4; 20]),
    };
    Block::new(header, txs, evidence::List::default(), None)
}

impl Fake {
    async fn new(capacity: usize) -> Arc<Self> {
        let dir = tempfile::tempdir().expect("tempdir");
        let app = App::load(dir.path().join("state"), lantau_app::AppConfig::default(), Arc::new(lantau_app::NoHook)).await.expect("app");
        app.init_chain(request::InitChain {
            chain_id: "test-1".into(),
            app_state_bytes: format!(r#"{{"evm_chain_id":"852","authority":{{"governance":"{}"}}}}"#, lantau_primitives::Address([7; 20]).to_bech32())
                .into_bytes()
                .into(),
            time: Time::unix_epoch(),
            initial_height: 1u32.into(),
            consensus_params: consensus::Params {
                block: block::Size { max_bytes: 22_020_096, max_gas: -1, time_iota_ms: 1000 },
                evidence: evidence::Params {
                    max_age_num_blocks: 100_000,
                    max_age_duration: evidence::Duration(Duration::from_secs(172_800)),
                    max_bytes: 1_048_576,
                },
                validator: consensus::params::ValidatorParams { pub_key_types: vec![public_key::Algorithm::Ed25519] },
                version: Some(consensus::params::VersionParams { app: 1 }),
                abci: Default::default(),
            },
            validators: vec![],
        })
        .await
        .expect("init chain");
        let (events, _) = broadcast::channel(capacity);
        let mut txs = HashMap::new();
        for rec in [record(b"tx-one", 1, 0, "alice"), record(b"tx-two", 2, 0, "bob")] {
            txs.insert(rec.hash, rec);
        }
        let blocks = vec![make_block(1, vec![b"tx-one".to_vec()]), make_block(2, vec![b"tx-two".to_vec()])];
        Arc::new(Self { app, _dir: dir, events, txs: Mutex::new(txs), blocks })
    }

    fn publish(&self, ev: NodeEvent) {
        // No subscriber is fine.
        let _ = self.events.send(ev);
    }
}

#[async_trait::async_trait]
impl NodeApi for Fake {
    async fn query(&self, height: u64, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError> {
        self.app.queries().grpc_query(height, method, request).await
    }
    async fn abci_query(&self, req: request::Query) -> response::Query {
        self.app.abci_query(req).await
    }
    async fn abci_info(&self, req: request::Info) -> Result<response::Info, NodeError> {
        self.app.info(req).await.map_err(|e| NodeError::Internal(e.to_string()))
    }
    async fn eth_call(&self, height: Option<u64>, call: &EvmCall, interrupt: &Interrupt) -> Result<Outcome, TxError> {
        self.app.queries().eth_call(height, call, interrupt).await
    }
    async fn state_at(&self, height: Option<u64>) -> Result<Option<lantau_app::history::StateView>, NodeError> {
        self.app.queries().snapshot_at_height(height).await.map_err(|e| NodeError::Internal(e.to_string()))
    }
    async fn last_height(&self) -> Result<u64, NodeError> {
        self.app.queries().last_height().await.map_err(|e| NodeError::Internal(e.to_string()))
    }
    fn history(&self) -> lantau_app::history::Retention {
        self.app.config().history
    }
    async fn max_block_gas(&self) -> Result<Option<u64>, NodeError> {
        self.app.queries().max_block_gas().await.map_err(|e| NodeError::Internal(e.to_string()))
    }
    async fn evm_chain_id(&self) -> Result<u64, NodeError> {
        self.app.queries().evm_chain_id().await.map_err(|e| NodeError::Internal(e.to_string()))
    }

    async fn broadcast_sync(&self, tx: Vec<u8>) -> BroadcastResult {
        let hash = lantau_app::tx::tx_hash(&tx);
        if tx == b"bad" {
            return BroadcastResult { hash, code: 5, codespace: "sdk".into(), log: "insufficient funds".into(), gas_wanted: 0, gas_used: 0 };
        }
        // Committed at once, before this returns: the server must have subscribed already.
        let rec = record(&tx, 3, 0, "carol");
        self.txs.lock().expect("lock").insert(hash, rec.clone());
        self.publish(NodeEvent::Tx(Arc::new(rec)));
        BroadcastResult { hash, code: 0, codespace: String::new(), log: String::new(), gas_wanted: 100, gas_used: 10 }
    }

    async fn broadcast_async(&self, tx: Vec<u8>) -> BroadcastResult {
        let hash = lantau_app::tx::tx_hash(&tx);
        BroadcastResult { hash, code: 0, codespace: String::new(), log: String::new(), gas_wanted: 0, gas_used: 0 }
    }

    async fn tx(&self, hash: [u8; 32]) -> Result<Option<TxRecord>, NodeError> {
        Ok(self.txs.lock().expect("lock").get(&hash).cloned())
    }

    async fn eth_tx(&self, _: [u8; 32]) -> Result<Option<TxRecord>, NodeError> {
        Ok(None)
    }

    async fn search_txs(&self, query: &Query, descending: bool, page: u64, per_page: u64) -> Result<SearchPage, NodeError> {
        let mut all: Vec<TxRecord> = self.txs.lock().expect("lock").values().filter(|r| query.matches(&tx_event_map(r))).cloned().collect();
        all.sort_by_key(|r| (r.height, r.index));
        if descending {
            all.reverse();
        }
        let total = all.len() as u64;
        let skip = usize::try_from(page.saturating_sub(1).saturating_mul(per_page)).unwrap_or(usize::MAX);
        let txs = all.into_iter().skip(skip).take(usize::try_from(per_page).unwrap_or(usize::MAX)).collect();
        Ok(SearchPage { txs, total })
    }

    async fn block(&self, height: Option<u64>) -> Result<Option<Block>, NodeError> {
        Ok(match height {
            None => self.blocks.last().cloned(),
            Some(h) => self.blocks.iter().find(|b| b.header.height.value() == h).cloned(),
        })
    }

    async fn block_results(&self, height: Option<u64>) -> Result<Option<BlockResults>, NodeError> {
        let h = height.unwrap_or(2);
        if !(1..=2).contains(&h) {
            return Ok(None);
        }
        let tx_results = self.txs.lock().expect("lock").values().filter(|r| r.height == h).map(|r| r.result.clone()).collect();
        Ok(Some(BlockResults { height: h, tx_results, finalize_block_events: vec![Event::new("mint", [("amount", "5")])], app_hash: "AB".repeat(32) }))
    }

    async fn status(&self) -> Result<NodeStatus, NodeError> {
        Ok(NodeStatus {
            chain_id: "test-1".into(),
            moniker: "fake".into(),
            node_id: "ab".repeat(20),
            rpc_address: "tcp://127.0.0.1:26657".into(),
            latest_height: 2,
            latest_block_hash: const_hex::encode_upper(self.blocks[1].header.hash().as_bytes()),
            latest_app_hash: "02".repeat(32),
            latest_block_time: "1970-01-01T00:00:00Z".into(),
            earliest_height: 1,
            validator_address: "CD".repeat(20),
            validator_pub_key: b64(&[9; 32]),
            voting_power: 10,
        })
    }

    fn subscribe(&self) -> broadcast::Receiver<NodeEvent> {
        self.events.subscribe()
    }

    async fn mempool_size(&self) -> (usize, usize) {
        (3, 300)
    }

    async fn block_height_by_hash(&self, _hash: [u8; 32]) -> Result<Option<u64>, NodeError> {
        Ok(None)
    }

    async fn pending_sequence(&self, _addr: &lantau_primitives::Address) -> Result<u64, NodeError> {
        Ok(0)
    }
}

// === harness ===

struct Server {
    addr: SocketAddr,
    node: Arc<Fake>,
    http: reqwest::Client,
}

async fn start(capacity: usize) -> Server {
    let node = Fake::new(capacity).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let api: Arc<dyn NodeApi> = node.clone();
    tokio::spawn(axum::serve(listener, lantau_rpc::cometbft::router(api)).into_future());
    Server { addr, node, http: reqwest::Client::new() }
}

impl Server {
    async fn post_raw(&self, body: impl Into<String>) -> Value {
        let resp = self.http.post(format!("http://{}/", self.addr)).body(body.into()).send();
        let resp = tokio::time::timeout(WAIT, resp).await.expect("timely").expect("post");
        resp.json().await.expect("json body")
    }

    async fn post(&self, method: &str, params: Value) -> Value {
        let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
        let v = self.post_raw(body.to_string()).await;
        assert_eq!(v["id"], 7, "{v}");
        assert_eq!(v["jsonrpc"], "2.0");
        v
    }

    async fn get(&self, path_and_query: &str) -> Value {
        let resp = self.http.get(format!("http://{}/{path_and_query}", self.addr)).send();
        let resp = tokio::time::timeout(WAIT, resp).await.expect("timely").expect("get");
        let v: Value = resp.json().await.expect("json body");
        assert_eq!(v["id"], -1, "{v}");
        v
    }

    async fn ws(&self) -> Ws {
        let (ws, _) =
            tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(format!("ws://{}/websocket", self.addr))).await.expect("timely").expect("connect");
        Ws(ws)
    }
}

struct Ws(tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>);

impl Ws {
    async fn send(&mut self, v: Value) {
        self.0.send(Message::Text(v.to_string().into())).await.expect("ws send");
    }

    async fn call(&mut self, id: u64, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
    }

    /// The next JSON message (control frames skipped).
    async fn next(&mut self) -> Value {
        loop {
            let msg = tokio::time::timeout(WAIT, self.0.next()).await.expect("timely").expect("open").expect("frame");
            if let Message::Text(t) = msg {
                return serde_json::from_str(t.as_str()).expect("json message");
            }
        }
    }
}

fn result(v: &Value) -> &Value {
    assert!(v.get("error").is_none(), "unexpected error: {v}");
    &v["result"]
}

fn error(v: &Value) -> (i64, String) {
    let e = &v["error"];
    assert!(v.get("result").is_none(), "expected an error: {v}");
    (e["code"].as_i64().expect("code"), e["data"].as_str().unwrap_or_default().to_string())
}

fn tx_hash_hex(tx: &[u8]) -> String {
    const_hex::encode_upper(lantau_app::tx::tx_hash(tx))
}

// === HTTP ===

#[tokio::test]
async fn status_has_cometbft_shape() {
    let s = start(64).await;
    let v = s.post("status", json!({})).await;
    let r = result(&v);
    let ni = &r["node_info"];
    assert_eq!(ni["protocol_version"], json!({ "p2p": "8", "block": "11", "app": "1" }));
    assert_eq!(ni["network"], "test-1");
    assert_eq!(ni["id"], "ab".repeat(20));
    assert_eq!(ni["version"], "0.38.17");
    assert_eq!(ni["channels"], "40202122233038606100");
    assert_eq!(ni["moniker"], "fake");
    assert_eq!(ni["other"]["tx_index"], "on");
    let si = &r["sync_info"];
    assert_eq!(si["latest_block_height"], "2");
    assert_eq!(si["earliest_block_height"], "1");
    assert_eq!(si["earliest_block_hash"], const_hex::encode_upper(s.node.blocks[0].header.hash().as_bytes()));
    assert_eq!(si["earliest_app_hash"], "01".repeat(32));
    assert_eq!(si["catching_up"], false);
    let vi = &r["validator_info"];
    assert_eq!(vi["pub_key"]["type"], "tendermint/PubKeyEd25519");
    assert_eq!(vi["voting_power"], "10");
}

#[tokio::test]
async fn health_and_misc_methods() {
    let s = start(64).await;
    assert_eq!(result(&s.post("health", json!({})).await), &json!({}));
    assert_eq!(result(&s.get("health").await), &json!({}));
    // Ids are echoed whatever their kind; params may be omitted.
    let v = s.post_raw(r#"{"jsonrpc":"2.0","id":"abc","method":"health"}"#).await;
    assert_eq!(v, json!({ "jsonrpc": "2.0", "id": "abc", "result": {} }));

    let n = s.post("num_unconfirmed_txs", json!({})).await;
    assert_eq!(result(&n), &json!({ "n_txs": "3", "total": "3", "total_bytes": "300", "txs": null }));

    let info = s.post("abci_info", json!({})).await;
    let resp = &result(&info)["response"];
    assert_eq!(resp["last_block_height"], "0");
    assert_eq!(resp["app_version"], "1");
    let app_hash = base64::engine::general_purpose::STANDARD.decode(resp["last_block_app_hash"].as_str().expect("hash"));
    assert_eq!(app_hash.map(|h| h.len()).ok(), Some(32));

    let vals = s.post("validators", json!({})).await;
    assert_eq!(result(&vals)["count"], "1");
    assert_eq!(result(&vals)["validators"][0]["proposer_priority"], "0");

    // A batch.
    let b = s.post_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"health"},{"jsonrpc":"2.0","id":2,"method":"nope"}]"#).await;
    assert_eq!(b[0]["result"], json!({}));
    assert_eq!(error(&b[1]).0, -32601);
}

#[tokio::test]
async fn uri_and_post_forms_agree() {
    let s = start(64).await;
    let hash = tx_hash_hex(b"tx-one");
    let hash_b64 = b64(&lantau_app::tx::tx_hash(b"tx-one"));
    let cases: Vec<(&str, Value, String)> = vec![
        ("status", json!({}), "status".into()),
        ("block", json!({ "height": "1" }), "block?height=1".into()),
        ("block", json!({}), "block".into()),
        ("header", json!({ "height": "2" }), "header?height=\"2\"".into()),
        ("block_results", json!({ "height": "2" }), "block_results?height=2".into()),
        ("tx", json!({ "hash": hash_b64 }), format!("tx?hash=0x{hash}")),
        (
            "tx_search",
            json!({ "query": "transfer.recipient='bob'", "order_by": "desc" }),
            "tx_search?query=%22transfer.recipient%3D%27bob%27%22&order_by=%22desc%22".into(),
        ),
        ("tx_search", json!({ "query": "tx.height>=1", "per_page": "1", "page": "2" }), "tx_search?query=\"tx.height>=1\"&per_page=1&page=2".into()),
        (
            "abci_query",
            json!({ "path": "/store/main/key", "data": const_hex::encode(lantau_app::state_key::CHAIN_ID) }),
            format!("abci_query?path=\"/store/main/key\"&data=0x{}", const_hex::encode(lantau_app::state_key::CHAIN_ID)),
        ),
        ("num_unconfirmed_txs", json!({}), "num_unconfirmed_txs".into()),
    ];
    for (method, params, uri) in cases {
        let post = s.post(method, params).await;
        let get = s.get(&uri).await;
        assert_eq!(result(&post), result(&get), "{method} / {uri}");
    }

    let tx = s.get(&format!("tx?hash=0x{hash}")).await;
    let tx = result(&tx);
    assert_eq!(tx["hash"], hash);
    assert_eq!(tx["height"], "1");
    assert_eq!(tx["index"], 0);
    assert_eq!(tx["tx"], b64(b"tx-one"));
    assert_eq!(tx["tx_result"]["gas_wanted"], "200000");
    assert_eq!(tx["tx_result"]["data"], b64(&[7, 7]));
    assert_eq!(tx["tx_result"]["events"][0]["type"], "transfer");
    assert_eq!(tx["tx_result"]["events"][0]["attributes"][0]["key"], "recipient");

    let found = s.get("tx_search?query=\"tx.height>=1\"&per_page=1&page=2").await;
    assert_eq!(result(&found)["total_count"], "2");
    assert_eq!(result(&found)["txs"][0]["height"], "2");

    let q = s.get(&format!("abci_query?path=\"/store/main/key\"&data=0x{}", const_hex::encode(lantau_app::state_key::CHAIN_ID))).await;
    let resp = &result(&q)["response"];
    assert_eq!(resp["code"], 0);
    assert_eq!(resp["value"], b64(b"test-1"));
    let q = s.post("abci_query", json!({ "path": "/custom/thing", "data": "" })).await;
    assert_ne!(result(&q)["response"]["code"], 0);
    assert!(result(&q)["response"]["log"].as_str().unwrap().starts_with("unknown query path"), "{q}");

    let blk = s.get("block?height=1").await;
    let blk = result(&blk);
    assert_eq!(blk["block_id"]["hash"], const_hex::encode_upper(s.node.blocks[0].header.hash().as_bytes()));
    assert_eq!(blk["block_id"]["parts"]["total"], 1);
    assert_eq!(blk["block"]["header"]["height"], "1");
    assert_eq!(blk["block"]["data"]["txs"][0], b64(b"tx-one"));
    // CometBFT's empty values at height 1, not nulls.
    assert_eq!(blk["block"]["header"]["last_block_id"], json!({ "hash": "", "parts": { "total": 0, "hash": "" } }));
    assert_eq!(blk["block"]["last_commit"]["signatures"], json!([]));
    assert_eq!(blk["block"]["evidence"]["evidence"], json!([]));

    let br = s.post("block_results", json!({ "height": "2" })).await;
    let br = result(&br);
    assert_eq!(br["height"], "2");
    assert_eq!(br["txs_results"][0]["gas_used"], "50000");
    assert_eq!(br["finalize_block_events"][0]["type"], "mint");
    assert_eq!(br["app_hash"], b64(&[0xAB; 32]));
}

#[tokio::test]
async fn errors_follow_json_rpc() {
    let s = start(64).await;
    let missing = [0x11u8; 32];
    let v = s.post("tx", json!({ "hash": b64(&missing) })).await;
    assert_eq!(error(&v), (-32603, format!("tx ({}) not found", const_hex::encode_upper(missing))));
    let v = s.get(&format!("tx?hash=0x{}", const_hex::encode(missing))).await;
    assert_eq!(error(&v).0, -32603);

    let v = s.post("tx_search", json!({ "query": "tx.height = = 5" })).await;
    let (code, data) = error(&v);
    assert_eq!(code, -32602);
    assert!(!data.is_empty());
    assert_eq!(error(&s.get("tx_search?query=\"tx.height%20OR\"").await).0, -32602);

    let v = s.post_raw("{not json").await;
    assert_eq!(error(&v).0, -32700);
    assert_eq!(v["id"], Value::Null);

    assert_eq!(error(&s.post("no_such_method", json!({})).await).0, -32601);
    assert_eq!(error(&s.get("no_such_method").await).0, -32601);

    let v = s.post("block", json!({ "height": "5" })).await;
    assert_eq!(error(&v), (-32603, "height 5 must be less than or equal to the current blockchain height 2".into()));
    assert_eq!(error(&s.post("block", json!({ "height": "x" })).await).0, -32602);
    assert_eq!(error(&s.post("tx", json!({ "hash": "zz" })).await).0, -32602);
    assert_eq!(error(&s.post("tx", json!({})).await).0, -32602);
    assert_eq!(error(&s.post_raw(r#"{"jsonrpc":"2.0","id":1,"method":5}"#).await).0, -32600);
    assert_eq!(error(&s.post("subscribe", json!({ "query": "tm.event='Tx'" })).await).0, -32603);
}

#[tokio::test]
async fn broadcasts() {
    let s = start(64).await;
    let v = s.post("broadcast_tx_sync", json!({ "tx": b64(b"bad") })).await;
    let r = result(&v);
    assert_eq!(r["code"], 5);
    assert_eq!(r["log"], "insufficient funds");
    assert_eq!(r["hash"], tx_hash_hex(b"bad"));

    let v = s.get(&format!("broadcast_tx_async?tx=0x{}", const_hex::encode(b"later"))).await;
    assert_eq!(result(&v)["hash"], tx_hash_hex(b"later"));
    assert_eq!(result(&v)["code"], 0);

    let v = s.post("broadcast_tx_commit", json!({ "tx": b64(b"good") })).await;
    let r = result(&v);
    assert_eq!(r["hash"], tx_hash_hex(b"good"));
    assert_eq!(r["height"], "3");
    assert_eq!(r["check_tx"]["code"], 0);
    assert_eq!(r["check_tx"]["gas_wanted"], "100");
    assert_eq!(r["tx_result"]["gas_used"], "50000");

    let v = s.post("broadcast_tx_commit", json!({ "tx": b64(b"bad") })).await;
    assert_eq!(result(&v)["check_tx"]["code"], 5);
    assert_eq!(result(&v)["height"], "0");
}

// === WebSocket ===

#[tokio::test]
async fn ws_subscribe_delivers_matching_events_only() {
    let s = start(64).await;
    let mut ws = s.ws().await;

    // Ordinary methods work over the socket.
    ws.call(1, "status", json!({})).await;
    let v = ws.next().await;
    assert_eq!(v["id"], 1);
    assert_eq!(result(&v)["node_info"]["network"], "test-1");

    let query = "tm.event='Tx' AND transfer.recipient='dave'";
    ws.call(2, "subscribe", json!({ "query": query })).await;
    assert_eq!(ws.next().await, json!({ "jsonrpc": "2.0", "id": 2, "result": {} }));
    ws.call(3, "subscribe", json!({ "query": "tm.event = 'Tx' AND transfer.recipient = 'dave'" })).await;
    assert_eq!(error(&ws.next().await), (-32603, "already subscribed".into()));

    // Published in order: the non-matching one would arrive first if it were delivered.
    s.node.publish(NodeEvent::Tx(Arc::new(record(b"other", 5, 0, "erin"))));
    let rec = record(b"mine", 5, 1, "dave");
    s.node.publish(NodeEvent::Tx(Arc::new(rec.clone())));
    let v = ws.next().await;
    assert_eq!(v["id"], 2, "{v}");
    let r = result(&v);
    assert_eq!(r["query"], query);
    assert_eq!(r["data"]["type"], "tendermint/event/Tx");
    let txr = &r["data"]["value"]["TxResult"];
    assert_eq!(txr["height"], "5");
    assert_eq!(txr["index"], 1);
    assert_eq!(txr["tx"], b64(b"mine"));
    assert_eq!(txr["result"]["events"][0]["type"], "transfer");
    assert_eq!(r["events"]["tx.hash"], json!([const_hex::encode_upper(rec.hash)]));
    assert_eq!(r["events"]["tx.height"], json!(["5"]));
    assert_eq!(r["events"]["tm.event"], json!(["Tx"]));
    assert_eq!(r["events"]["transfer.recipient"], json!(["dave"]));

    // A second subscription as a sentinel; after unsubscribing the first, only it delivers.
    ws.call(4, "subscribe", json!({ "query": "tm.event='Tx'" })).await;
    assert_eq!(result(&ws.next().await), &json!({}));
    ws.call(5, "unsubscribe", json!({ "query": query })).await;
    assert_eq!(ws.next().await, json!({ "jsonrpc": "2.0", "id": 5, "result": {} }));
    s.node.publish(NodeEvent::Tx(Arc::new(record(b"again", 6, 0, "dave"))));
    let v = ws.next().await;
    assert_eq!(v["id"], 4, "{v}");
    assert_eq!(result(&v)["data"]["value"]["TxResult"]["tx"], b64(b"again"));
    ws.call(6, "health", json!({})).await;
    assert_eq!(ws.next().await["id"], 6);

    ws.call(7, "unsubscribe", json!({ "query": query })).await;
    assert_eq!(error(&ws.next().await).1, "subscription not found");
    ws.call(8, "unsubscribe_all", json!({})).await;
    assert_eq!(result(&ws.next().await), &json!({}));
    s.node.publish(NodeEvent::Tx(Arc::new(record(b"late", 7, 0, "dave"))));
    ws.call(9, "health", json!({})).await;
    assert_eq!(ws.next().await["id"], 9);
}

#[tokio::test]
async fn ws_new_block_events() {
    let s = start(64).await;
    let mut ws = s.ws().await;
    ws.call(1, "subscribe", json!({ "query": "tm.event='NewBlock'" })).await;
    assert_eq!(result(&ws.next().await), &json!({}));
    let block = Arc::new(make_block(2, vec![b"tx-two".to_vec()]));
    s.node.publish(NodeEvent::Tx(Arc::new(record(b"x", 2, 0, "bob"))));
    s.node.publish(NodeEvent::NewBlock { block, events: vec![Event::new("mint", [("amount", "5")])] });
    let v = ws.next().await;
    assert_eq!(v["id"], 1);
    let r = result(&v);
    assert_eq!(r["data"]["type"], "tendermint/event/NewBlock");
    assert_eq!(r["data"]["value"]["block"]["header"]["height"], "2");
    assert_eq!(r["data"]["value"]["block_id"]["hash"], const_hex::encode_upper(s.node.blocks[1].header.hash().as_bytes()));
    assert_eq!(r["data"]["value"]["result_finalize_block"]["events"][0]["type"], "mint");
    assert_eq!(r["events"]["tm.event"], json!(["NewBlock"]));
    assert_eq!(r["events"]["block.height"], json!(["2"]));
    assert_eq!(r["events"]["mint.amount"], json!(["5"]));
}

#[tokio::test]
async fn ws_errors_pings_and_limits() {
    let s = start(64).await;
    let mut ws = s.ws().await;
    ws.0.send(Message::Text("{oops".into())).await.expect("send");
    assert_eq!(error(&ws.next().await).0, -32700);
    ws.call(1, "nope", json!({})).await;
    assert_eq!(error(&ws.next().await).0, -32601);
    ws.call(2, "subscribe", json!({ "query": "tm.event=" })).await;
    assert_eq!(error(&ws.next().await).0, -32602);

    ws.0.send(Message::Ping(vec![1, 2, 3].into())).await.expect("ping");
    let pong = tokio::time::timeout(WAIT, async {
        loop {
            match ws.0.next().await {
                Some(Ok(Message::Pong(p))) => return p.to_vec(),
                Some(Ok(_)) => continue,
                other => panic!("socket ended: {other:?}"),
            }
        }
    })
    .await
    .expect("pong in time");
    assert_eq!(pong, vec![1, 2, 3]);

    for i in 0..100u64 {
        ws.call(100 + i, "subscribe", json!({ "query": format!("tx.height={i}") })).await;
        assert_eq!(result(&ws.next().await), &json!({}));
    }
    ws.call(300, "subscribe", json!({ "query": "tx.height=1000" })).await;
    let (code, data) = error(&ws.next().await);
    assert_eq!(code, -32005, "a limit is -32005 Limit exceeded, not an internal error");
    assert!(data.contains("max_subscriptions_per_client"), "{data}");
    // A query over the conditions cap is refused as a bad parameter, whatever the surface.
    let long = (0..=lantau_event_query::MAX_CONDITIONS).map(|i| format!("tx.height>{i}")).collect::<Vec<_>>().join(" AND ");
    ws.call(301, "unsubscribe_all", json!({})).await;
    let _ = ws.next().await;
    ws.call(302, "subscribe", json!({ "query": long })).await;
    let (code, data) = error(&ws.next().await);
    assert_eq!(code, -32602);
    assert!(data.contains("at most 20 conditions"), "{data}");
}

// Single-threaded runtime: the server cannot run while the test publishes, so the subscriber
// is guaranteed to fall behind the one-slot channel.
#[tokio::test(flavor = "current_thread")]
async fn ws_lagging_subscription_is_canceled() {
    let s = start(1).await;
    let mut ws = s.ws().await;
    ws.call(1, "subscribe", json!({ "query": "tm.event='Tx'" })).await;
    assert_eq!(result(&ws.next().await), &json!({}));
    for i in 0..10u8 {
        s.node.publish(NodeEvent::Tx(Arc::new(record(&[i], 1, 0, "x"))));
    }
    let v = ws.next().await;
    assert_eq!(v["id"], 1);
    assert_eq!(error(&v), (-32000, "subscription was canceled (reason: client is not pulling messages fast enough)".into()));
    // The subscription is gone: subscribing again works.
    ws.call(2, "subscribe", json!({ "query": "tm.event='Tx'" })).await;
    assert_eq!(result(&ws.next().await), &json!({}));
}

/// The envelope's limits (`lantau_rpc::envelope`) on both JSON-RPC servers: a body that is not
/// JSON answers 200 with -32700 on the CometBFT RPC; an id or a method name over its limit is
/// refused with -32600 and never echoed; a batch holds at most 1,000 requests.
#[tokio::test]
async fn envelope_limits_bound_what_is_echoed_on_both_json_rpc_servers() {
    use lantau_rpc::envelope::{MAX_BATCH, MAX_ID_BYTES, MAX_METHOD_BYTES};
    let s = start(64).await;
    let post = |body: String| {
        let (http, url) = (s.http.clone(), format!("http://{}/", s.addr));
        async move {
            let r = tokio::time::timeout(WAIT, http.post(url).body(body).send()).await.expect("timely").expect("post");
            let status = r.status().as_u16();
            let text = r.text().await.expect("body");
            (status, text.len(), serde_json::from_str::<Value>(&text).expect("json body"))
        }
    };
    let (status, _, v) = post("{not json".into()).await;
    assert_eq!((status, error(&v).0, v["id"].clone()), (200, -32700, Value::Null), "{v}");

    let huge_id = "i".repeat(1 << 20);
    let (status, len, v) = post(json!({"jsonrpc": "2.0", "id": huge_id, "method": "health"}).to_string()).await;
    assert_eq!((status, error(&v).0, v["id"].clone()), (200, -32600, Value::Null), "a 1 MiB id");
    assert!(len < 1_000, "the answer to a 1 MiB id is {len} bytes");
    let (_, _, v) = post(json!({"jsonrpc": "2.0", "id": "i".repeat(MAX_ID_BYTES - 2), "method": "health"}).to_string()).await;
    assert!(v["result"].is_object(), "an id at the limit is served: {v}");
    let (_, len, v) = post(json!({"jsonrpc": "2.0", "id": 1, "method": "m".repeat(1 << 20)}).to_string()).await;
    assert_eq!((error(&v).0, v["id"].clone()), (-32600, json!(1)), "a long method name");
    assert!(len < 1_000, "the answer to a 1 MiB method name is {len} bytes");
    let (_, _, v) = post(json!({"jsonrpc": "2.0", "id": 1, "method": "m".repeat(MAX_METHOD_BYTES)}).to_string()).await;
    assert_eq!(error(&v).0, -32601, "a method name at the limit is looked up: {v}");

    let batch = |n: usize| Value::Array((0..n).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "health"})).collect()).to_string();
    let (status, _, v) = post(batch(MAX_BATCH)).await;
    assert_eq!(status, 200);
    assert_eq!(v.as_array().map(Vec::len), Some(MAX_BATCH), "a batch at the limit is answered whole");
    assert_eq!(v[MAX_BATCH - 1]["id"], MAX_BATCH - 1);
    let (status, _, v) = post(batch(MAX_BATCH + 1)).await;
    assert_eq!((status, error(&v).0), (400, -32600), "{v}");

    // The Ethereum JSON-RPC: the same envelope.
    let api: Arc<dyn NodeApi> = s.node.clone();
    let eth = lantau_rpc::eth::EthServer::new(api);
    let v = eth.handle(json!({"jsonrpc": "2.0", "id": "i".repeat(1 << 20), "method": "net_version"}).to_string().as_bytes()).await;
    assert_eq!((v["error"]["code"].clone(), v["id"].clone()), (json!(-32600), Value::Null));
    assert!(v.to_string().len() < 1_000);
    let v = eth.handle(json!({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "net_version"}).to_string().as_bytes()).await;
    assert_eq!((v["error"]["code"].clone(), v["id"].clone()), (json!(-32600), Value::Null));
    let v = eth.handle(json!({"jsonrpc": "2.0", "id": 3, "method": "m".repeat(1 << 20)}).to_string().as_bytes()).await;
    assert_eq!((v["error"]["code"].clone(), v["id"].clone()), (json!(-32600), json!(3)));
    assert!(v.to_string().len() < 1_000);
    let eth_batch = |n: usize| Value::Array((0..n).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "web3_clientVersion"})).collect()).to_string();
    let v = eth.handle(eth_batch(MAX_BATCH).as_bytes()).await;
    assert_eq!(v.as_array().map(Vec::len), Some(MAX_BATCH));
    assert!(v[MAX_BATCH - 1]["result"].is_string(), "{}", v[MAX_BATCH - 1]);
    let v = eth.handle(eth_batch(MAX_BATCH + 1).as_bytes()).await;
    assert_eq!(v["error"]["code"], -32005, "{v}");
}

//! The Ethereum JSON-RPC: HTTP on :8545 (single requests and batches) and WebSocket on :8546
//! (the same methods, plus `eth_subscribe` `newHeads` and `logs`), over the node interface.
//!
//! Layout: `methods.rs` (the typed method enum and its one match), `filters.rs` (the polling
//! filters), `render.rs` (Ethereum JSON shapes, and the Transfer logs a Cosmos transaction's
//! stablecoin movements show), `error.rs` (the one error enum and its codes).

pub mod error;
pub mod filters;
pub mod methods;
pub mod render;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use lantau_app::evm::EthTx;
use parking_lot::Mutex;
use serde_json::{json, Value};

pub use error::EthError;
use methods::Method;

use crate::api::{NodeApi, NodeEvent};

/// How many submitted transactions a node remembers for lookups before they are mined.
pub const PENDING_MEMO: usize = 10_000;
/// The most requests in one batch (the envelope's, shared with the CometBFT RPC).
pub const MAX_BATCH: usize = crate::envelope::MAX_BATCH;
/// The most subscriptions on one WebSocket connection.
pub const MAX_SUBSCRIPTIONS: usize = 32;

/// The server's state.
pub struct EthServer {
    node: Arc<dyn NodeApi>,
    pending: Mutex<BTreeMap<[u8; 32], EthTx>>,
    /// The bounds of the calls that run the EVM for a client (`eth_call`, `eth_estimateGas`).
    calls: methods::CallLimits,
    /// One permit per call running at once.
    call_slots: Arc<tokio::sync::Semaphore>,
    /// The polling filters (`eth_newFilter` and its family).
    filters: filters::Filters,
    /// A dev chain's impersonated accounts (`anvil_impersonateAccount`): `eth_sendTransaction`
    /// sends for them.
    impersonated: Mutex<std::collections::BTreeSet<lantau_primitives::Address>>,
    /// Per recent block (height and hash, so a dev chain's rewritten height is not mistaken
    /// for the old one): the logs and gas of its first `i` transactions, for each `i`, which
    /// receipts count. Summing them afresh read the whole block's results for every receipt.
    block_sums: Mutex<std::collections::VecDeque<(u64, [u8; 32], BlockSums)>>,
}

/// A block's running sums, as receipts count them: entry `i` is the logs and the gas of its
/// first `i` transactions.
type BlockSums = Arc<Vec<(u64, u64)>>;

/// The client of a request that came without a peer address (in-process callers).
const LOCAL: std::net::IpAddr = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

impl EthServer {
    /// A block's gas capacity as Ethereum clients read it (`gasLimit`): the consensus
    /// parameter `block.max_gas`, or, when unlimited, the most one transaction may ask for.
    pub async fn block_gas_limit(&self) -> u64 {
        match self.node.max_block_gas().await {
            Ok(Some(g)) => g,
            _ => lantau_app::AppConfig::default().max_gas_per_tx,
        }
    }

    /// A server over `node`, with the default call limits.
    pub fn new(node: Arc<dyn NodeApi>) -> Arc<Self> {
        Self::with_call_limits(node, methods::CallLimits::default())
    }

    /// A server over `node` whose EVM calls run within `calls`.
    pub fn with_call_limits(node: Arc<dyn NodeApi>, calls: methods::CallLimits) -> Arc<Self> {
        let slots = Arc::new(tokio::sync::Semaphore::new(calls.max_concurrent.max(1)));
        Arc::new(Self {
            node,
            pending: Mutex::new(BTreeMap::new()),
            calls,
            call_slots: slots,
            filters: filters::Filters::default(),
            impersonated: Mutex::default(),
            block_sums: Mutex::default(),
        })
    }

    /// One request object → one response object.
    async fn handle_one(&self, req: &Value, client: std::net::IpAddr) -> Value {
        // Nothing over the envelope's limits is echoed (`crate::envelope`).
        let id = crate::envelope::echo_id(req);
        let method = req.get("method").and_then(Value::as_str);
        let envelope = crate::envelope::check_id(req.get("id").unwrap_or(&Value::Null)).and_then(|()| method.map_or(Ok(()), crate::envelope::check_method));
        let out = match (envelope, req.get("jsonrpc").and_then(Value::as_str), method) {
            (Err(e), ..) => Err(EthError::InvalidRequest(e.to_string())),
            (Ok(()), Some("2.0"), Some(method)) => {
                let params = match req.get("params") {
                    None | Some(Value::Null) => Ok(Vec::new()),
                    Some(Value::Array(a)) => Ok(a.clone()),
                    Some(_) => Err(EthError::InvalidParams("params must be an array".into())),
                };
                match params.and_then(|p| Method::decode(method, &p)) {
                    Ok(m) => self.run(m, client).await,
                    Err(e) => Err(e),
                }
            }
            _ => Err(EthError::InvalidRequest("expected {\"jsonrpc\":\"2.0\",\"method\":...}".into())),
        };
        match out {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e.to_json()}),
        }
    }

    /// A request body (object or batch) → the response body, for an in-process caller.
    pub async fn handle(&self, body: &[u8]) -> Value {
        self.handle_from(body, LOCAL).await
    }

    /// A request body (object or batch) from `client` → the response body.
    pub async fn handle_from(&self, body: &[u8], client: std::net::IpAddr) -> Value {
        let v: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => return json!({"jsonrpc": "2.0", "id": null, "error": EthError::Parse(e.to_string()).to_json()}),
        };
        match v {
            Value::Array(batch) if batch.is_empty() => json!({"jsonrpc": "2.0", "id": null, "error": EthError::InvalidRequest("empty batch".into()).to_json()}),
            Value::Array(batch) if batch.len() > MAX_BATCH => {
                json!({"jsonrpc": "2.0", "id": null, "error": EthError::LimitExceeded(crate::envelope::batch_too_large(batch.len())).to_json()})
            }
            Value::Array(batch) => {
                let mut out = Vec::with_capacity(batch.len());
                let mut budget = crate::envelope::BatchBudget::default();
                for r in &batch {
                    let answer = if budget.has_room() {
                        self.handle_one(r, client).await
                    } else {
                        let e = EthError::LimitExceeded(crate::envelope::response_too_large());
                        json!({"jsonrpc": "2.0", "id": crate::envelope::echo_id(r), "error": e.to_json()})
                    };
                    budget.add(&answer);
                    out.push(answer);
                }
                Value::Array(out)
            }
            other => self.handle_one(&other, client).await,
        }
    }
}

/// The peer's address, when the server recorded it (`crate::http::serve` does).
fn peer(ext: &axum::http::Extensions) -> std::net::IpAddr {
    ext.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map_or(LOCAL, |c| c.0.ip())
}

async fn http(State(s): State<Arc<EthServer>>, ext: axum::http::Extensions, body: axum::body::Bytes) -> Response {
    Json(s.handle_from(&body, peer(&ext)).await).into_response()
}

/// The HTTP router (:8545): `POST /`.
pub fn http_router(server: Arc<EthServer>) -> Router {
    Router::new().route("/", post(http)).with_state(server)
}

/// The WebSocket router (:8546): upgrade on `GET /`.
pub fn ws_router(server: Arc<EthServer>) -> Router {
    Router::new().route("/", get(ws_upgrade)).with_state(server)
}

async fn ws_upgrade(State(s): State<Arc<EthServer>>, ext: axum::http::Extensions, ws: WebSocketUpgrade) -> Response {
    let client = peer(&ext);
    ws.on_upgrade(move |socket| ws_session(s, socket, client))
}

#[derive(Debug, Clone)]
enum Sub {
    NewHeads,
    Logs(methods::LogFilter),
}

async fn ws_session(s: Arc<EthServer>, mut socket: WebSocket, client: std::net::IpAddr) {
    let mut events = s.node.subscribe();
    let mut subs: BTreeMap<String, Sub> = BTreeMap::new();
    let mut next_id: u64 = 1;
    loop {
        tokio::select! {
            msg = socket.recv() => {
                let Some(Ok(msg)) = msg else { return };
                let text = match msg {
                    Message::Text(t) => t.to_string(),
                    Message::Binary(b) => String::from_utf8_lossy(&b).into_owned(),
                    Message::Close(_) => return,
                    _ => continue,
                };
                let req: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let method = req.get("method").and_then(Value::as_str).unwrap_or("");
                let reply = match method {
                    "eth_subscribe" => {
                        let id = crate::envelope::echo_id(&req);
                        let params = req.get("params").and_then(Value::as_array).cloned().unwrap_or_default();
                        let sub = match params.first().and_then(Value::as_str) {
                            Some("newHeads") => Ok(Sub::NewHeads),
                            Some("logs") => methods::Method::decode("eth_getLogs", &[params.get(1).cloned().unwrap_or(json!({}))]).and_then(|m| match m {
                                Method::GetLogs(f) => Ok(Sub::Logs(f)),
                                _ => Err(EthError::InvalidParams("logs filter".into())),
                            }),
                            other => Err(EthError::InvalidParams(format!("unsupported subscription {other:?}: newHeads or logs"))),
                        };
                        match sub {
                            Ok(_) if subs.len() >= MAX_SUBSCRIPTIONS => json!({"jsonrpc": "2.0", "id": id, "error": EthError::LimitExceeded(format!("at most {MAX_SUBSCRIPTIONS} subscriptions per connection")).to_json()}),
                            Ok(sub) => {
                                let sid = format!("{next_id:#x}");
                                next_id = next_id.saturating_add(1);
                                subs.insert(sid.clone(), sub);
                                json!({"jsonrpc": "2.0", "id": id, "result": sid})
                            }
                            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e.to_json()}),
                        }
                    }
                    "eth_unsubscribe" => {
                        let id = crate::envelope::echo_id(&req);
                        let sid = req.get("params").and_then(|p| p.get(0)).and_then(Value::as_str).unwrap_or("");
                        json!({"jsonrpc": "2.0", "id": id, "result": subs.remove(sid).is_some()})
                    }
                    _ => s.handle_from(text.as_bytes(), client).await,
                };
                if socket.send(Message::Text(reply.to_string().into())).await.is_err() {
                    return;
                }
            }
            ev = events.recv() => {
                let ev = match ev {
                    Ok(ev) => ev,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let _ = socket.send(Message::Close(Some(axum::extract::ws::CloseFrame { code: 1008, reason: "subscriber too slow: events dropped".into() }))).await;
                        return;
                    }
                    Err(_) => return,
                };
                for (sid, sub) in &subs {
                    for result in notifications(&s, &ev, sub).await {
                        let note = json!({"jsonrpc": "2.0", "method": "eth_subscription", "params": {"subscription": sid, "result": result}});
                        if socket.send(Message::Text(note.to_string().into())).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    }
}

async fn notifications(s: &EthServer, ev: &NodeEvent, sub: &Sub) -> Vec<Value> {
    match (ev, sub) {
        (NodeEvent::NewBlock { block, .. }, Sub::NewHeads) => {
            let height = block.header.height.value();
            let results = s.node.block_results(Some(height)).await.ok().flatten();
            let gas_used: u64 = results.as_ref().map_or(0, |r| r.tx_results.iter().map(|t| u64::try_from(t.gas_used).unwrap_or(0)).sum());
            let mut v = render::block(block, height, gas_used, s.block_gas_limit().await, &render::block_bloom(results.as_ref()), false);
            if let Some(o) = v.as_object_mut() {
                o.remove("transactions");
                o.remove("uncles");
            }
            vec![v]
        }
        (NodeEvent::Tx(rec), Sub::Logs(f)) => {
            let logs = render::tx_logs(&rec.result);
            if logs.is_empty() {
                return Vec::new();
            }
            let tx_hash = render::log_tx_hash(Some(&rec.result), Some(&rec.tx));
            let block_hash = match s.node.block(Some(rec.height)).await {
                Ok(Some(b)) => render::block_hash(&b),
                _ => [0; 32],
            };
            logs.iter()
                .enumerate()
                .filter(|(_, l)| f.addresses.is_empty() || f.addresses.contains(&l.address))
                .filter(|(_, l)| f.topics.iter().enumerate().all(|(p, any)| any.is_empty() || l.topics.get(p).is_some_and(|t| any.contains(t))))
                .map(|(i, l)| render::log(l, &tx_hash, rec.height, rec.index, &block_hash, i as u64))
                .collect()
        }
        _ => Vec::new(),
    }
}

//! The WebSocket endpoint: JSON-RPC over text frames, plus `subscribe` / `unsubscribe` /
//! `unsubscribe_all` delivering committed events as CometBFT does (same id as the subscribe
//! request, `{query, data:{type, value}, events}`).
//!
//! One task per connection owns the socket: it reads requests, answers subscription requests
//! itself, and writes everything else that reaches it through one channel — method results from
//! spawned tasks and events from one forwarder task per subscription. Because it also owns the
//! subscription table, nothing of a subscription is written after its `unsubscribe` is answered.

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use futures::stream::SplitSink;
use futures::{SinkExt, StreamExt};
use lantau_event_query::Query;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use super::jsonrpc::{self, failure, success, Request, RpcError};
use super::methods::{self, Node};
use super::render;
use crate::api::{tx_event_map, NodeEvent, TxRecord};

// === one rendering of a transaction for every subscriber ===

/// What every subscription needs of one committed transaction: its event map (to match
/// queries against) and the JSON of its `value` and `events`, rendered once and shared. Thirty
/// subscribers of large transactions each rendering them kept the runtime's threads busy long
/// enough to delay blocks by seconds (`attacks.rs`, the subscribers' attack).
struct RenderedTx {
    map: std::collections::BTreeMap<String, Vec<String>>,
    value: Box<RawValue>,
    events: Box<RawValue>,
}

/// The recent renderings, by the event's allocation; each entry holds its record, so the
/// address cannot be reused while it is cached.
type RenderCache = std::collections::VecDeque<(Arc<TxRecord>, Arc<RenderedTx>)>;

/// Transactions whose rendering is kept for subscribers a little behind the others (one that
/// is further behind renders again).
const RENDER_CACHE: usize = 64;

fn raw<T: serde::Serialize + ?Sized>(v: &T) -> Option<Box<RawValue>> {
    serde_json::value::to_raw_value(v).ok()
}

fn rendered(rec: &Arc<TxRecord>) -> Option<Arc<RenderedTx>> {
    static CACHE: std::sync::OnceLock<parking_lot::Mutex<RenderCache>> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some((_, r)) = cache.lock().iter().find(|(k, _)| Arc::ptr_eq(k, rec)) {
        return Some(r.clone());
    }
    let map = tx_event_map(rec);
    let value = raw(&json!({ "TxResult": render::tx_result_event(rec) }))?;
    let events = raw(&map)?;
    let r = Arc::new(RenderedTx { map, value, events });
    let mut c = cache.lock();
    if !c.iter().any(|(k, _)| Arc::ptr_eq(k, rec)) {
        if c.len() >= RENDER_CACHE {
            c.pop_front();
        }
        c.push_back((rec.clone(), r.clone()));
    }
    Some(r)
}

// === limits ===

/// Subscriptions one connection may hold.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 100;
/// Methods one connection may run at once; beyond, the connection stops reading requests
/// (while still writing answers and events) until some finish.
const MAX_IN_FLIGHT: usize = 64;
/// Largest accepted message.
const MAX_MESSAGE_BYTES: usize = 4 << 20;
/// Messages queued for the socket.
const OUT_QUEUE: usize = 256;
/// Keep-alive ping period (CometBFT pings every 27 s).
const PING_PERIOD: Duration = Duration::from_secs(27);

// === upgrade ===

/// `GET /websocket`.
pub(crate) async fn handler(State(node): State<Node>, ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(MAX_MESSAGE_BYTES).on_upgrade(move |socket| Connection::new(node).run(socket))
}

// === connection ===

/// What reaches the socket writer.
enum Out {
    /// A method's response.
    Reply(String),
    /// An event of subscription `token`.
    Event { token: u64, text: String },
    /// Subscription `token` ended on the server's side; `text` tells the client.
    Cancel { token: u64, text: String },
}

struct Subscription {
    token: u64,
    forwarder: AbortHandle,
}

struct Connection {
    node: Node,
    /// By canonical query text.
    subs: HashMap<String, Subscription>,
    /// Token → canonical query text.
    tokens: HashMap<u64, String>,
    next_token: u64,
    /// One per subscription.
    forwarders: JoinSet<()>,
    /// Running methods.
    methods: JoinSet<()>,
    out_tx: mpsc::Sender<Out>,
    out_rx: mpsc::Receiver<Out>,
}

type Sink = SplitSink<WebSocket, Message>;

/// The socket is gone.
struct Closed;

async fn send(sink: &mut Sink, v: &Value) -> Result<(), Closed> {
    send_text(sink, v.to_string()).await
}

async fn send_text(sink: &mut Sink, text: String) -> Result<(), Closed> {
    sink.send(Message::Text(Utf8Bytes::from(text))).await.map_err(|_| Closed)
}

impl Connection {
    fn new(node: Node) -> Self {
        let (out_tx, out_rx) = mpsc::channel(OUT_QUEUE);
        Self { node, subs: HashMap::new(), tokens: HashMap::new(), next_token: 0, forwarders: JoinSet::new(), methods: JoinSet::new(), out_tx, out_rx }
    }

    async fn run(mut self, socket: WebSocket) {
        let (mut sink, mut stream) = socket.split();
        let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + PING_PERIOD, PING_PERIOD);
        loop {
            let step = tokio::select! {
                msg = stream.next(), if self.methods.len() < MAX_IN_FLIGHT => match msg {
                    Some(Ok(Message::Text(t))) => self.on_text(t.as_str(), &mut sink).await,
                    Some(Ok(Message::Binary(b))) => match std::str::from_utf8(&b) {
                        Ok(t) => self.on_text(t, &mut sink).await,
                        Err(_) => send(&mut sink, &failure(&Value::Null, &RpcError::parse("message is not UTF-8"))).await,
                    },
                    // Pings are answered by the protocol layer as the stream is read.
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => Ok(()),
                    Some(Ok(Message::Close(_)) | Err(_)) | None => Err(Closed),
                },
                Some(out) = self.out_rx.recv() => self.on_out(out, &mut sink).await,
                Some(_) = self.methods.join_next(), if !self.methods.is_empty() => Ok(()),
                Some(_) = self.forwarders.join_next(), if !self.forwarders.is_empty() => Ok(()),
                _ = ping.tick() => sink.send(Message::Ping(Default::default())).await.map_err(|_| Closed),
            };
            if step.is_err() {
                break;
            }
        }
        // Dropping the join sets aborts the forwarders and the running methods.
        let _ = sink.close().await;
    }

    async fn on_out(&mut self, out: Out, sink: &mut Sink) -> Result<(), Closed> {
        match out {
            Out::Reply(text) => send_text(sink, text).await,
            Out::Event { token, text } if self.tokens.contains_key(&token) => send_text(sink, text).await,
            Out::Cancel { token, text } => match self.tokens.remove(&token) {
                Some(key) => {
                    self.subs.remove(&key);
                    send_text(sink, text).await
                }
                None => Ok(()),
            },
            Out::Event { .. } => Ok(()),
        }
    }

    async fn on_text(&mut self, text: &str, sink: &mut Sink) -> Result<(), Closed> {
        match serde_json::from_str::<Value>(text) {
            Err(e) => send(sink, &failure(&Value::Null, &RpcError::parse(e.to_string()))).await,
            Ok(Value::Array(items)) if items.is_empty() => send(sink, &failure(&Value::Null, &RpcError::invalid_request("empty batch"))).await,
            Ok(Value::Array(items)) if items.len() > crate::envelope::MAX_BATCH => {
                send(sink, &failure(&Value::Null, &RpcError::invalid_request(crate::envelope::batch_too_large(items.len())))).await
            }
            Ok(Value::Array(items)) => {
                for item in items {
                    self.on_request(item, sink).await?;
                }
                Ok(())
            }
            Ok(v) => self.on_request(v, sink).await,
        }
    }

    async fn on_request(&mut self, v: Value, sink: &mut Sink) -> Result<(), Closed> {
        let req = match jsonrpc::parse_request(v) {
            Ok(r) => r,
            Err((id, e)) => return send(sink, &failure(&id, &e)).await,
        };
        match req.method.as_str() {
            "subscribe" => self.subscribe(req, sink).await,
            "unsubscribe" => {
                let outcome = self.unsubscribe(&req);
                send(sink, &jsonrpc::envelope(&req.id, outcome)).await
            }
            "unsubscribe_all" => {
                self.unsubscribe_all();
                send(sink, &success(&req.id, json!({}))).await
            }
            _ => {
                let (node, out) = (self.node.clone(), self.out_tx.clone());
                self.methods.spawn(async move {
                    let outcome = methods::call(&node, &req.method, &req.params).await;
                    let _ = out.send(Out::Reply(jsonrpc::envelope(&req.id, outcome).to_string())).await;
                });
                Ok(())
            }
        }
    }

    // === subscriptions ===

    fn query_param(req: &Request) -> Result<(String, Query), RpcError> {
        let text = req.params.string("query")?.ok_or_else(|| RpcError::invalid_params("missing required parameter query"))?;
        let query = Query::parse(&text).map_err(|e| RpcError::invalid_params(format!("failed to parse query: {e}")))?;
        Ok((text, query))
    }

    async fn subscribe(&mut self, req: Request, sink: &mut Sink) -> Result<(), Closed> {
        let (text, query) = match Self::query_param(&req) {
            Ok(q) => q,
            Err(e) => return send(sink, &failure(&req.id, &e)).await,
        };
        let key = query.to_string();
        let refusal = if self.subs.contains_key(&key) {
            Some(RpcError::internal("already subscribed"))
        } else if self.subs.len() >= MAX_SUBSCRIPTIONS {
            Some(RpcError::limit_exceeded(format!("max_subscriptions_per_client {MAX_SUBSCRIPTIONS} reached: unsubscribe first, or open another connection")))
        } else {
            None
        };
        if let Some(e) = refusal {
            return send(sink, &failure(&req.id, &e)).await;
        }
        // Subscribe before acknowledging, so that nothing committed after the ack is missed;
        // the forwarder's events go through `out_rx`, which is read only after the ack is sent.
        let events = self.node.subscribe();
        let token = self.next_token;
        self.next_token = self.next_token.wrapping_add(1);
        let fwd = Forwarder { node: self.node.clone(), query, text, id: req.id.clone(), token, out: self.out_tx.clone() };
        let forwarder = self.forwarders.spawn(fwd.run(events));
        self.subs.insert(key.clone(), Subscription { token, forwarder });
        self.tokens.insert(token, key);
        send(sink, &success(&req.id, json!({}))).await
    }

    fn unsubscribe(&mut self, req: &Request) -> Result<Value, RpcError> {
        let (_, query) = Self::query_param(req)?;
        let sub = self.subs.remove(&query.to_string()).ok_or_else(|| RpcError::internal("subscription not found"))?;
        sub.forwarder.abort();
        self.tokens.remove(&sub.token);
        Ok(json!({}))
    }

    fn unsubscribe_all(&mut self) {
        for (_, sub) in self.subs.drain() {
            sub.forwarder.abort();
        }
        self.tokens.clear();
    }
}

// === forwarding ===

/// Turns node events into this subscription's messages.
struct Forwarder {
    node: Node,
    query: Query,
    /// The query as the client wrote it (echoed in every event).
    text: String,
    /// The subscribe request's id (every event carries it).
    id: Value,
    token: u64,
    out: mpsc::Sender<Out>,
}

impl Forwarder {
    async fn run(self, mut events: tokio::sync::broadcast::Receiver<NodeEvent>) {
        loop {
            let reason = match events.recv().await {
                Ok(ev) => {
                    for text in self.messages(&ev).await {
                        if self.out.send(Out::Event { token: self.token, text }).await.is_err() {
                            return;
                        }
                    }
                    continue;
                }
                Err(RecvError::Lagged(_)) => "client is not pulling messages fast enough",
                Err(RecvError::Closed) => "CometBFT exited",
            };
            let e = RpcError::server(format!("subscription was canceled (reason: {reason})"));
            let text = failure(&self.id, &e).to_string();
            let _ = self.out.send(Out::Cancel { token: self.token, text }).await;
            return;
        }
    }

    /// A Tx event's message from its shared rendering: only the envelope is written here.
    fn tx_message(&self, r: &RenderedTx) -> String {
        #[derive(serde::Serialize)]
        struct Data<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            value: &'a RawValue,
        }
        #[derive(serde::Serialize)]
        struct Result<'a> {
            query: &'a str,
            data: Data<'a>,
            events: &'a RawValue,
        }
        #[derive(serde::Serialize)]
        struct Envelope<'a> {
            jsonrpc: &'static str,
            id: &'a Value,
            result: Result<'a>,
        }
        let env = Envelope {
            jsonrpc: "2.0",
            id: &self.id,
            result: Result { query: &self.text, data: Data { kind: "tendermint/event/Tx", value: &r.value }, events: &r.events },
        };
        serde_json::to_string(&env).unwrap_or_default()
    }

    fn message(&self, kind: &str, value: Value, events: &impl serde::Serialize) -> String {
        let result = json!({
            "query": self.text,
            "data": { "type": format!("tendermint/event/{kind}"), "value": value },
            "events": events,
        });
        success(&self.id, result).to_string()
    }

    /// The messages `ev` gives under this subscription's query (none, one, or one per matching
    /// block-level event kind).
    async fn messages(&self, ev: &NodeEvent) -> Vec<String> {
        let mut out = Vec::new();
        match ev {
            NodeEvent::Tx(rec) => {
                if let Some(r) = rendered(rec) {
                    if self.query.matches(&r.map) {
                        out.push(self.tx_message(&r));
                    }
                }
            }
            NodeEvent::NewBlock { block, events } => {
                let height = block.header.height.value();
                let map = render::block_event_map("NewBlock", height, events);
                if self.query.matches(&map) {
                    let results = self.node.block_results(Some(height)).await.ok().flatten();
                    match render::block(block) {
                        Ok(b) => {
                            let value = json!({
                                "block": b,
                                "block_id": render::block_id(block),
                                "result_finalize_block": render::finalize_block(results.as_ref(), events),
                            });
                            out.push(self.message("NewBlock", value, &map));
                        }
                        Err(e) => tracing::warn!(error = %e.data, "cannot render block {height}"),
                    }
                }
                let map = render::block_event_map("NewBlockHeader", height, events);
                if self.query.matches(&map) {
                    if let Ok(h) = render::header(block) {
                        out.push(self.message("NewBlockHeader", json!({ "header": h }), &map));
                    }
                }
                let map = render::block_event_map("NewBlockEvents", height, events);
                if self.query.matches(&map) {
                    let value = json!({
                        "height": height.to_string(),
                        "events": render::events(events),
                        "num_txs": block.data.len().to_string(),
                    });
                    out.push(self.message("NewBlockEvents", value, &map));
                }
            }
        }
        out
    }
}

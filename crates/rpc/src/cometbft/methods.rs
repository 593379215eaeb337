//! The JSON-RPC methods, shared by HTTP (POST and URI forms) and the WebSocket.

use std::sync::Arc;
use std::time::Duration;

use lantau_app::tendermint::abci::request;
use lantau_event_query::Query;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use super::jsonrpc::{node_error, Params, RpcError};
use super::render;
use crate::api::{NodeApi, NodeEvent, NodeStatus, TxRecord};

/// How long `broadcast_tx_commit` waits for the transaction to be committed.
pub(crate) const COMMIT_TIMEOUT: Duration = Duration::from_secs(30);
/// CometBFT's default and maximum `per_page`.
const PER_PAGE_DEFAULT: u64 = 30;
const PER_PAGE_MAX: u64 = 100;
/// The CometBFT version this server speaks for.
pub(crate) const COMETBFT_VERSION: &str = "0.38.17";

/// The node behind the server.
pub(crate) type Node = Arc<dyn NodeApi>;

// === method table ===

/// Every method with its parameter names in positional order.
pub(crate) const METHODS: &[(&str, &[&str])] = &[
    ("health", &[]),
    ("status", &[]),
    ("net_info", &[]),
    ("abci_info", &[]),
    ("abci_query", &["path", "data", "height", "prove"]),
    ("block", &["height"]),
    ("header", &["height"]),
    ("block_results", &["height"]),
    ("tx", &["hash", "prove"]),
    ("tx_search", &["query", "prove", "page", "per_page", "order_by"]),
    ("broadcast_tx_async", &["tx"]),
    ("broadcast_tx_sync", &["tx"]),
    ("broadcast_tx_commit", &["tx"]),
    ("num_unconfirmed_txs", &["limit"]),
    ("validators", &["height", "page", "per_page"]),
    ("genesis", &[]),
    ("blockchain", &["minHeight", "maxHeight"]),
    ("commit", &["height"]),
    ("subscribe", &["query"]),
    ("unsubscribe", &["query"]),
    ("unsubscribe_all", &[]),
];

/// The parameter names of a method, `None` when there is no such method.
pub(crate) fn arg_names(method: &str) -> Option<&'static [&'static str]> {
    METHODS.iter().find(|(m, _)| *m == method).map(|(_, a)| *a)
}

/// Runs a method (everything but the WebSocket-only subscription methods).
pub(crate) async fn call(node: &Node, method: &str, p: &Params) -> Result<Value, RpcError> {
    match method {
        "health" => Ok(json!({})),
        "status" => status(node).await,
        "net_info" => net_info(node).await,
        "abci_info" => abci_info(node).await,
        "abci_query" => abci_query(node, p).await,
        "block" => block(node, p).await,
        "header" => header(node, p).await,
        "block_results" => block_results(node, p).await,
        "tx" => tx(node, p).await,
        "tx_search" => tx_search(node, p).await,
        "broadcast_tx_async" | "broadcast_tx_sync" => broadcast(node, p, method == "broadcast_tx_sync").await,
        "broadcast_tx_commit" => broadcast_commit(node, p).await,
        "num_unconfirmed_txs" => num_unconfirmed_txs(node).await,
        "validators" => validators(node, p).await,
        "genesis" => match node.genesis_doc() {
            Some(g) => Ok(json!({ "genesis": g })),
            None => Err(RpcError::method_not_found("genesis")),
        },
        "blockchain" => blockchain(node, p).await,
        "commit" => commit(node, p).await,
        "subscribe" | "unsubscribe" | "unsubscribe_all" => {
            Err(RpcError::internal(format!("{method} is only available over the WebSocket endpoint /websocket")))
        }
        other => Err(RpcError::method_not_found(other)),
    }
}

fn required<T>(v: Option<T>, name: &str) -> Result<T, RpcError> {
    v.ok_or_else(|| RpcError::invalid_params(format!("missing required parameter {name}")))
}

// === info ===

fn listen_addr(s: &NodeStatus) -> String {
    if s.rpc_address.is_empty() {
        "tcp://127.0.0.1:26657".into()
    } else {
        s.rpc_address.clone()
    }
}

fn validator(s: &NodeStatus) -> Value {
    json!({
        "address": s.validator_address,
        "pub_key": { "type": "tendermint/PubKeyEd25519", "value": s.validator_pub_key },
        "voting_power": s.voting_power.to_string(),
        "proposer_priority": "0",
    })
}

async fn status(node: &Node) -> Result<Value, RpcError> {
    let s = node.status().await.map_err(node_error)?;
    let (mut e_hash, mut e_app, mut e_time) = (s.latest_block_hash.clone(), s.latest_app_hash.clone(), s.latest_block_time.clone());
    if s.earliest_height != s.latest_height && s.earliest_height > 0 {
        if let Ok(Some(b)) = node.block(Some(s.earliest_height)).await {
            e_hash = render::hex_upper(b.header.hash().as_bytes());
            e_app = render::hex_upper(b.header.app_hash.as_bytes());
            e_time = b.header.time.to_rfc3339();
        }
    }
    Ok(json!({
        "node_info": {
            "protocol_version": { "p2p": "8", "block": "11", "app": "1" },
            "id": s.node_id,
            "listen_addr": listen_addr(&s),
            "network": s.chain_id,
            "version": COMETBFT_VERSION,
            "channels": "40202122233038606100",
            "moniker": if s.moniker.is_empty() { "lantau" } else { s.moniker.as_str() },
            "other": { "tx_index": "on", "rpc_address": s.rpc_address },
        },
        "sync_info": {
            "latest_block_hash": s.latest_block_hash,
            "latest_app_hash": s.latest_app_hash,
            "latest_block_height": s.latest_height.to_string(),
            "latest_block_time": s.latest_block_time,
            "earliest_block_hash": e_hash,
            "earliest_app_hash": e_app,
            "earliest_block_height": s.earliest_height.to_string(),
            "earliest_block_time": e_time,
            "catching_up": false,
        },
        "validator_info": {
            "address": s.validator_address,
            "pub_key": { "type": "tendermint/PubKeyEd25519", "value": s.validator_pub_key },
            "voting_power": s.voting_power.to_string(),
        },
    }))
}

async fn net_info(node: &Node) -> Result<Value, RpcError> {
    let s = node.status().await.map_err(node_error)?;
    Ok(json!({ "listening": true, "listeners": [listen_addr(&s)], "n_peers": "0", "peers": [] }))
}

async fn validators(node: &Node, p: &Params) -> Result<Value, RpcError> {
    let s = node.status().await.map_err(node_error)?;
    let height = check_height(p.u64("height")?, &s)?.unwrap_or(s.latest_height);
    Ok(json!({ "block_height": height.to_string(), "validators": [validator(&s)], "count": "1", "total": "1" }))
}

async fn num_unconfirmed_txs(node: &Node) -> Result<Value, RpcError> {
    let (n, bytes) = node.mempool_size().await;
    Ok(json!({ "n_txs": n.to_string(), "total": n.to_string(), "total_bytes": bytes.to_string(), "txs": null }))
}

// === ABCI ===

async fn abci_info(node: &Node) -> Result<Value, RpcError> {
    let req = request::Info { version: COMETBFT_VERSION.into(), block_version: 11, p2p_version: 8, abci_version: "2.0.0".into() };
    let info = node.abci_info(req).await.map_err(node_error)?;
    Ok(json!({ "response": {
        "data": info.data,
        "version": info.version,
        "app_version": info.app_version.to_string(),
        "last_block_height": info.last_block_height.value().to_string(),
        "last_block_app_hash": render::b64(info.last_block_app_hash.as_bytes()),
    }}))
}

/// `abci_query`: the app's ABCI Query (one implementation, the one CometBFT calls in a
/// validator network): gRPC method paths through the query router, `/store/key` (also
/// `/store/main/key`) with proofs when asked, heights honoured.
async fn abci_query(node: &Node, p: &Params) -> Result<Value, RpcError> {
    let path = p.string("path")?.unwrap_or_default();
    let data = p.hex_bytes("data")?.unwrap_or_default();
    let height = p.u64("height")?.unwrap_or(0);
    let prove = p.bool("prove")?.unwrap_or(false);
    let req = request::Query {
        data: data.clone().into(),
        path,
        height: lantau_app::tendermint::block::Height::try_from(height).map_err(|e| RpcError::invalid_params(e.to_string()))?,
        prove,
    };
    let _turn = crate::heavy::turn_for_method(&req.path).await.map_err(RpcError::limit_exceeded)?;
    let r = node.abci_query(req).await;
    let proof = r.proof.as_ref().map(|ops| {
        json!({"ops": ops.ops.iter().map(|o| json!({"type": o.field_type, "key": render::b64(&o.key), "data": render::b64(&o.data)})).collect::<Vec<_>>()})
    });
    Ok(json!({ "response": {
        "code": r.code.value(),
        "log": r.log,
        "info": r.info,
        "index": r.index.to_string(),
        "key": if data.is_empty() { Value::Null } else { Value::String(render::b64(&data)) },
        "value": if r.value.is_empty() { Value::Null } else { Value::String(render::b64(&r.value)) },
        "proofOps": proof.unwrap_or(Value::Null),
        "height": r.height.value().to_string(),
        "codespace": r.codespace,
    }}))
}

// === blocks ===

/// CometBFT's height checks: `None` means latest.
fn check_height(height: Option<u64>, s: &NodeStatus) -> Result<Option<u64>, RpcError> {
    match height {
        None => Ok(None),
        Some(0) => Err(RpcError::internal("height must be greater than 0, but got 0")),
        Some(h) if h > s.latest_height => {
            Err(RpcError::internal(format!("height {h} must be less than or equal to the current blockchain height {}", s.latest_height)))
        }
        Some(h) if h < s.earliest_height => Err(RpcError::internal(format!("height {h} is not available, lowest height is {}", s.earliest_height))),
        Some(h) => Ok(Some(h)),
    }
}

async fn load_block(node: &Node, p: &Params) -> Result<Option<lantau_app::tendermint::Block>, RpcError> {
    let s = node.status().await.map_err(node_error)?;
    let height = check_height(p.u64("height")?, &s)?;
    let block = node.block(height).await.map_err(node_error)?;
    match (block, height) {
        (Some(b), _) => Ok(Some(b)),
        (None, None) => Ok(None),
        (None, Some(h)) => Err(RpcError::internal(format!("height {h} is not available"))),
    }
}

async fn block(node: &Node, p: &Params) -> Result<Value, RpcError> {
    Ok(match load_block(node, p).await? {
        Some(b) => json!({ "block_id": render::block_id(&b), "block": render::block(&b)? }),
        None => json!({ "block_id": render::empty_block_id(), "block": null }),
    })
}

/// CometBFT's page of block metas: at most 20, newest first, between `minHeight` and
/// `maxHeight` (both clamped to what the node has).
async fn blockchain(node: &Node, p: &Params) -> Result<Value, RpcError> {
    let s = node.status().await.map_err(node_error)?;
    let max = p.u64("maxHeight")?.filter(|h| *h > 0).unwrap_or(s.latest_height).min(s.latest_height);
    let min = p.u64("minHeight")?.filter(|h| *h > 0).unwrap_or(1).max(s.earliest_height.max(1));
    if min > max {
        return Err(RpcError::internal(format!("min height {min} can't be greater than max height {max}")));
    }
    let min = min.max(max.saturating_sub(19));
    let mut metas = Vec::new();
    for h in (min..=max).rev() {
        let Some(b) = node.block(Some(h)).await.map_err(node_error)? else { continue };
        let size = serde_json::to_vec(&b).map(|v| v.len()).unwrap_or(0);
        metas.push(json!({
            "block_id": render::block_id(&b),
            "block_size": size.to_string(),
            "header": render::header(&b)?,
            "num_txs": b.data.len().to_string(),
        }));
    }
    Ok(json!({ "last_height": s.latest_height.to_string(), "block_metas": metas }))
}

/// The signed header of a height (the latest by default): its header and the commit for it,
/// which the next block carries (`canonical`), or, for the latest block, the node's own
/// (`canonical: false`). The embedded engine is the only validator and signs no votes, so
/// the signatures are empty.
async fn commit(node: &Node, p: &Params) -> Result<Value, RpcError> {
    let s = node.status().await.map_err(node_error)?;
    let h = check_height(p.u64("height")?, &s)?.unwrap_or(s.latest_height);
    let b = node.block(Some(h)).await.map_err(node_error)?.ok_or_else(|| RpcError::internal(format!("block {h} not found")))?;
    Ok(json!({
        "signed_header": {
            "header": render::header(&b)?,
            "commit": {"height": h.to_string(), "round": 0, "block_id": render::block_id(&b), "signatures": []},
        },
        "canonical": h < s.latest_height,
    }))
}

async fn header(node: &Node, p: &Params) -> Result<Value, RpcError> {
    Ok(match load_block(node, p).await? {
        Some(b) => json!({ "header": render::header(&b)? }),
        None => json!({ "header": null }),
    })
}

async fn block_results(node: &Node, p: &Params) -> Result<Value, RpcError> {
    let s = node.status().await.map_err(node_error)?;
    let height = check_height(p.u64("height")?, &s)?;
    match node.block_results(height).await.map_err(node_error)? {
        Some(r) => Ok(render::block_results(&r)),
        None => Err(RpcError::internal(format!("could not find results for height #{}", height.unwrap_or(s.latest_height)))),
    }
}

// === transactions ===

async fn tx(node: &Node, p: &Params) -> Result<Value, RpcError> {
    let hash = required(p.hash("hash")?, "hash")?;
    let _prove = p.bool("prove")?;
    match node.tx(hash).await.map_err(node_error)? {
        Some(rec) => Ok(render::tx(&rec)),
        None => Err(RpcError::internal(format!("tx ({}) not found", render::hex_upper(&hash)))),
    }
}

async fn tx_search(node: &Node, p: &Params) -> Result<Value, RpcError> {
    let _turn = crate::heavy::turn().await.map_err(RpcError::limit_exceeded)?;
    let text = required(p.string("query")?, "query")?;
    let query = Query::parse(&text).map_err(|e| RpcError::invalid_params(e.to_string()))?;
    let _prove = p.bool("prove")?;
    let descending = match p.string("order_by")?.unwrap_or_default().as_str() {
        "" | "asc" => false,
        "desc" => true,
        _ => return Err(RpcError::invalid_params("expected order_by to be either `asc` or `desc` or empty")),
    };
    let per_page = match p.u64("per_page")? {
        None | Some(0) => PER_PAGE_DEFAULT,
        Some(n) => n.min(PER_PAGE_MAX),
    };
    let page = p.u64("page")?.unwrap_or(1);
    let found = node.search_txs(&query, descending, page.max(1), per_page).await.map_err(node_error)?;
    let pages = found.total.div_ceil(per_page).max(1);
    if page == 0 || page > pages {
        return Err(RpcError::internal(format!("page should be within [1, {pages}] range, given {page}")));
    }
    let txs: Vec<Value> = found.txs.iter().map(render::tx).collect();
    Ok(json!({ "txs": txs, "total_count": found.total.to_string() }))
}

async fn broadcast(node: &Node, p: &Params, sync: bool) -> Result<Value, RpcError> {
    let tx = required(p.tx_bytes("tx")?, "tx")?;
    let r = if sync { node.broadcast_sync(tx).await } else { node.broadcast_async(tx).await };
    Ok(json!({
        "code": r.code,
        "data": "",
        "log": r.log,
        "codespace": r.codespace,
        "hash": render::hex_upper(&r.hash),
    }))
}

async fn broadcast_commit(node: &Node, p: &Params) -> Result<Value, RpcError> {
    let tx = required(p.tx_bytes("tx")?, "tx")?;
    // Subscribe first: the commit may be published before broadcast_sync returns.
    let mut events = node.subscribe();
    let r = node.broadcast_sync(tx).await;
    let check_tx = json!({
        "code": r.code,
        "data": null,
        "log": r.log,
        "info": "",
        "gas_wanted": r.gas_wanted.to_string(),
        "gas_used": r.gas_used.to_string(),
        "events": [],
        "codespace": r.codespace,
    });
    let hash = render::hex_upper(&r.hash);
    if r.code != 0 {
        let empty = render::exec_tx_result(&Default::default());
        return Ok(json!({ "check_tx": check_tx, "tx_result": empty, "hash": hash, "height": "0" }));
    }
    let wait = async {
        loop {
            match events.recv().await {
                Ok(NodeEvent::Tx(rec)) if rec.hash == r.hash => return Ok::<TxRecord, RpcError>((*rec).clone()),
                Ok(_) => {}
                // Missed events: the index may already have it.
                Err(RecvError::Lagged(_)) => {
                    if let Ok(Some(rec)) = node.tx(r.hash).await {
                        return Ok(rec);
                    }
                }
                Err(RecvError::Closed) => return Err(RpcError::internal("node is shutting down")),
            }
        }
    };
    let rec = tokio::time::timeout(COMMIT_TIMEOUT, wait).await.map_err(|_| RpcError::internal("timed out waiting for tx to be included in a block"))??;
    Ok(json!({
        "check_tx": check_tx,
        "tx_result": render::exec_tx_result(&rec.result),
        "hash": hash,
        "height": rec.height.to_string(),
    }))
}

//! The CometBFT v0.38-compatible RPC (normally on :26657), so that CometBFT clients (the
//! `cometbft` tooling, cosmjs' `Comet38Client`, tendermint-rs' `HttpClient` and
//! `WebSocketClient`, scripts) work against a Lantau node:
//!
//! - JSON-RPC 2.0 over `POST /` (single requests and batches);
//! - the URI form `GET /<method>?param=value` (strings double-quoted, bytes `0x` hex or quoted
//!   base64; unquoted values are accepted too);
//! - JSON-RPC over the WebSocket at `/websocket`, with `subscribe` / `unsubscribe` /
//!   `unsubscribe_all` for committed transactions and blocks.
//!
//! Results use CometBFT's JSON: 64-bit integers as strings, hashes upper hex, bytes base64.
//! Methods: `health`, `status`, `net_info`, `abci_info`, `abci_query` (path `/store/main/key`),
//! `block`, `header`, `block_results`, `tx`, `tx_search`, `broadcast_tx_async`,
//! `broadcast_tx_sync`, `broadcast_tx_commit`, `num_unconfirmed_txs`, `validators`.
//!
//! Subscriptions follow CometBFT: the ack `{}` and every event carry the subscribe request's id,
//! events are `{query, data:{type, value}, events}`; a connection holds at most 100; one whose
//! client falls behind the node's event channel is canceled with a `-32000` error on its id
//! ("subscription was canceled (reason: client is not pulling messages fast enough)").
//!
//! Layout: `jsonrpc` (envelopes, errors, parameter decoding), `methods` (the methods),
//! `render` (the JSON shapes), `ws` (the WebSocket and its subscriptions).

mod jsonrpc;
mod methods;
mod render;
mod ws;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query as UriQuery, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::api::NodeApi;
use jsonrpc::{envelope, failure, Params, RpcError};
use methods::Node;

// === router ===

/// The CometBFT RPC: `POST /` (JSON-RPC), `GET /` (the method list), `GET|POST /<method>` (URI
/// form) and `GET /websocket`.
pub fn router(node: Arc<dyn NodeApi>) -> Router {
    Router::new().route("/", post(json_rpc).get(index)).route("/websocket", get(ws::handler)).route("/{method}", get(uri).post(uri)).with_state(node)
}

// === JSON-RPC over HTTP ===

/// Answers one request value (never fails: errors become error envelopes).
async fn respond(node: &Node, v: Value) -> Value {
    match jsonrpc::parse_request(v) {
        Ok(req) => envelope(&req.id, methods::call(node, &req.method, &req.params).await),
        Err((id, e)) => failure(&id, &e),
    }
}

/// `POST /`: one request or a batch. A body that is not JSON answers `200` with `-32700`
/// (CometBFT answers `500`: a client's mistake is not the server's failure). A batch holds at
/// most [`crate::envelope::MAX_BATCH`] requests (`400`, `-32600`, as CometBFT answers a batch
/// over its `max_request_batch_size`); its requests run one after another, and those after
/// the answers cross [`crate::envelope::MAX_BATCH_RESPONSE_BYTES`] are not run (`-32005`).
async fn json_rpc(State(node): State<Node>, body: Bytes) -> Response {
    let v = match serde_json::from_slice::<Value>(&body) {
        Ok(v) => v,
        Err(e) => return Json(failure(&Value::Null, &RpcError::parse(e.to_string()))).into_response(),
    };
    match v {
        Value::Array(items) if items.is_empty() => {
            let err = RpcError::invalid_request("empty batch");
            (StatusCode::BAD_REQUEST, Json(failure(&Value::Null, &err))).into_response()
        }
        Value::Array(items) if items.len() > crate::envelope::MAX_BATCH => {
            let err = RpcError::invalid_request(crate::envelope::batch_too_large(items.len()));
            (StatusCode::BAD_REQUEST, Json(failure(&Value::Null, &err))).into_response()
        }
        Value::Array(items) => {
            let mut answers = Vec::with_capacity(items.len());
            let mut budget = crate::envelope::BatchBudget::default();
            for item in items {
                let answer = if budget.has_room() {
                    respond(&node, item).await
                } else {
                    failure(&crate::envelope::echo_id(&item), &RpcError::limit_exceeded(crate::envelope::response_too_large()))
                };
                budget.add(&answer);
                answers.push(answer);
            }
            Json(Value::Array(answers)).into_response()
        }
        v => Json(respond(&node, v).await).into_response(),
    }
}

// === URI form ===

async fn uri(State(node): State<Node>, Path(method): Path<String>, uri: Uri) -> Response {
    // CometBFT answers URI requests with id -1.
    let id = json!(-1);
    let outcome = match UriQuery::<Vec<(String, String)>>::try_from_uri(&uri) {
        Err(e) => Err(RpcError::invalid_params(format!("cannot parse the query string: {e}"))),
        Ok(UriQuery(pairs)) if methods::arg_names(&method).is_some() => methods::call(&node, &method, &Params::Uri(pairs)).await,
        Ok(_) => Err(RpcError::method_not_found(&method)),
    };
    match outcome {
        Ok(v) => Json(jsonrpc::success(&id, v)).into_response(),
        Err(e) => (e.http_status(), Json(failure(&id, &e))).into_response(),
    }
}

async fn index(headers: HeaderMap) -> Html<String> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    // The host is the client's text: keep it out of the markup unless it is plain.
    let plain = |c: char| c.is_ascii_alphanumeric() || "-.:[]".contains(c);
    let host = if host.chars().all(plain) { host } else { "" };
    let mut page = String::from("<html><body><br>Available endpoints:<br>");
    for (method, args) in methods::METHODS {
        let query: Vec<String> = args.iter().map(|a| format!("{a}=_")).collect();
        let sep = if query.is_empty() { "" } else { "?" };
        page.push_str(&format!("<a href=\"//{host}/{method}\">//{host}/{method}{sep}{}</a><br>", query.join("&")));
    }
    page.push_str("</body></html>");
    Html(page)
}

#[cfg(test)]
mod tests {
    use super::jsonrpc::{parse_request, Params};
    use serde_json::json;

    #[test]
    fn uri_params_decode() {
        let p = Params::Uri(vec![
            ("query".into(), "\"tx.height=5\"".into()),
            ("page".into(), "\"2\"".into()),
            ("per_page".into(), "7".into()),
            ("prove".into(), "true".into()),
            ("tx".into(), "0x0102".into()),
            ("hash".into(), format!("0x{}", "AB".repeat(32))),
        ]);
        assert_eq!(p.string("query").ok().flatten().as_deref(), Some("tx.height=5"));
        assert_eq!(p.u64("page").ok().flatten(), Some(2));
        assert_eq!(p.u64("per_page").ok().flatten(), Some(7));
        assert_eq!(p.bool("prove").ok().flatten(), Some(true));
        assert_eq!(p.tx_bytes("tx").ok().flatten(), Some(vec![1, 2]));
        assert_eq!(p.hash("hash").ok().flatten(), Some([0xAB; 32]));
        assert!(p.u64("query").is_err());
        assert_eq!(p.u64("missing").ok().flatten(), None);
    }

    #[test]
    fn json_params_decode() {
        let p = Params::Json(json!({"tx": "AQI=", "height": "12", "hash": "A".repeat(43) + "="}).as_object().cloned().unwrap_or_default());
        assert_eq!(p.tx_bytes("tx").ok().flatten(), Some(vec![1, 2]));
        assert_eq!(p.u64("height").ok().flatten(), Some(12));
        assert!(p.hash("hash").is_ok_and(|h| h.is_some()));
        assert!(p.string("query").is_ok_and(|q| q.is_none()));
    }

    #[test]
    fn positional_params() {
        let r = parse_request(json!({"jsonrpc":"2.0","id":3,"method":"tx_search","params":["tx.height=1", false, "2"]}));
        let Ok(r) = r else { panic!("request rejected") };
        assert_eq!(r.params.u64("page").ok().flatten(), Some(2));
        assert!(parse_request(json!({"id":1,"method":"health","params":[1]})).is_err());
        assert!(parse_request(json!({"id":[1],"method":"health"})).is_err());
        assert!(parse_request(json!("health")).is_err());
    }
}

//! The Cosmos REST surface (gRPC-gateway JSON) on :1317.
//!
//! Standard services only here: `cosmos.tx.v1beta1` (broadcast, get, search, simulate),
//! `cosmos.auth.v1beta1` accounts, `cosmos.bank.v1beta1` balances and supply, and
//! `cosmos.base.tendermint.v1beta1` node info and blocks. Module routers are merged in by the
//! node. Unknown paths answer 404 `{code: 5, message: "Not Found", details: []}` as the gateway
//! does.

use std::sync::Arc;

use axum::extract::{Path, Query, RawQuery, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use lantau_app::auth::query as authq;
use lantau_app::bank::query as bankq;
use lantau_primitives::{Address, Denom};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::NodeApi;
use crate::error::ApiError;
use crate::json;

type Node = Arc<dyn NodeApi>;
type ApiResult = Result<Json<Value>, ApiError>;

/// The REST router over a node.
pub fn router(node: Node) -> Router {
    Router::new()
        .route("/cosmos/tx/v1beta1/txs", post(broadcast).get(search))
        .route("/cosmos/tx/v1beta1/txs/{hash}", get(get_tx))
        .route("/cosmos/tx/v1beta1/simulate", post(simulate))
        .route("/cosmos/tx/v1beta1/txs/block/{height}", get(txs_of_block))
        .route("/cosmos/auth/v1beta1/params", get(auth_params))
        .route("/chain/auth/v1/next_sequence/{address}", get(next_sequence))
        .route("/cosmos/bank/v1beta1/params", get(bank_params))
        .route("/cosmos/bank/v1beta1/supply", get(total_supply))
        .route("/cosmos/bank/v1beta1/spendable_balances/{address}", get(spendable_balances))
        .route("/cosmos/bank/v1beta1/denoms_metadata", get(denoms_metadata))
        .route("/cosmos/bank/v1beta1/denoms_metadata/{denom}", get(denom_metadata))
        .route("/cosmos/base/node/v1beta1/config", get(node_config))
        .route("/cosmos/auth/v1beta1/accounts/{address}", get(account))
        .route("/cosmos/bank/v1beta1/balances/{address}", get(balances))
        .route("/cosmos/bank/v1beta1/balances/{address}/by_denom", get(balance_by_denom))
        .route("/cosmos/bank/v1beta1/supply/by_denom", get(supply_by_denom))
        .route("/cosmos/base/tendermint/v1beta1/node_info", get(node_info))
        .route("/cosmos/base/tendermint/v1beta1/blocks/latest", get(latest_block))
        .route("/cosmos/base/tendermint/v1beta1/blocks/{height}", get(block_by_height))
        .with_state(node.clone())
        .merge(crate::modules::router(node))
        .fallback(not_found)
}

/// The gateway's answer for an unknown path.
pub async fn not_found() -> ApiError {
    ApiError::not_found("Not Found")
}

/// Parses a bech32 address path or query parameter (400 on failure).
pub fn parse_bech32(s: &str) -> Result<Address, ApiError> {
    Address::from_bech32(s).map_err(|e| ApiError::invalid(format!("invalid address: {e}")))
}

/// Parses a tx hash (64 hex digits, any case) into bytes.
pub fn parse_hash(s: &str) -> Result<[u8; 32], ApiError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(ApiError::invalid("tx hash cannot be empty"));
    }
    let b = hex::decode(s.strip_prefix("0x").unwrap_or(s))
        .map_err(|_| ApiError::invalid(format!("invalid tx hash {s:?}: expected 64 hex digits")))?;
    b.try_into().map_err(|_| ApiError::invalid(format!("invalid tx hash {s:?}: expected 32 bytes")))
}

// === tx service ===

#[derive(Deserialize)]
struct BroadcastBody {
    #[serde(default)]
    tx_bytes: String,
    #[serde(default)]
    mode: Value,
}

fn broadcast_mode(v: &Value) -> Result<&'static str, ApiError> {
    let m = match v {
        Value::Null => return Err(ApiError::invalid("mode is required: BROADCAST_MODE_SYNC or BROADCAST_MODE_ASYNC")),
        Value::String(s) => s.as_str(),
        Value::Number(n) => match n.as_u64() {
            Some(2) => "BROADCAST_MODE_SYNC",
            Some(3) => "BROADCAST_MODE_ASYNC",
            Some(1) => "BROADCAST_MODE_BLOCK",
            _ => "",
        },
        _ => "",
    };
    match m {
        "BROADCAST_MODE_SYNC" => Ok("sync"),
        "BROADCAST_MODE_ASYNC" => Ok("async"),
        "BROADCAST_MODE_BLOCK" => Err(ApiError::invalid(
            "BROADCAST_MODE_BLOCK is not supported: broadcast with BROADCAST_MODE_SYNC and poll GET /cosmos/tx/v1beta1/txs/{hash}",
        )),
        other => Err(ApiError::invalid(format!(
            "invalid mode {other:?}: expected BROADCAST_MODE_SYNC or BROADCAST_MODE_ASYNC"
        ))),
    }
}

fn decode_tx_bytes(s: &str) -> Result<Vec<u8>, ApiError> {
    if s.is_empty() {
        return Err(ApiError::invalid("invalid empty tx: tx_bytes is required"));
    }
    B64.decode(s).map_err(|e| ApiError::invalid(format!("tx_bytes is not valid base64: {e}")))
}

async fn broadcast(State(node): State<Node>, body: Result<Json<BroadcastBody>, axum::extract::rejection::JsonRejection>) -> ApiResult {
    let Json(body) = body.map_err(|e| ApiError::invalid(format!("invalid request body: {}", e.body_text())))?;
    let mode = broadcast_mode(&body.mode)?;
    let bytes = decode_tx_bytes(&body.tx_bytes)?;
    let r = if mode == "sync" { node.broadcast_sync(bytes).await } else { node.broadcast_async(bytes).await };
    Ok(Json(json!({
        "tx_response": {
            "height": "0",
            "txhash": hex::encode_upper(r.hash),
            "codespace": r.codespace,
            "code": r.code,
            "data": "",
            "raw_log": r.log,
            "logs": [],
            "info": "",
            "gas_wanted": r.gas_wanted.to_string(),
            "gas_used": r.gas_used.to_string(),
            "tx": null,
            "timestamp": "",
            "events": [],
        }
    })))
}

async fn get_tx(State(node): State<Node>, Path(hash): Path<String>) -> ApiResult {
    let h = parse_hash(&hash)?;
    match node.tx(h).await? {
        Some(rec) => Ok(Json(json!({"tx": json::tx(&rec.tx), "tx_response": json::tx_response(&rec)}))),
        None => Err(ApiError::not_found(format!("tx not found: {}", hex::encode_upper(h)))),
    }
}

/// Search parameters, as the Cosmos SDK v0.50 gateway takes them. `events` (repeatable, the
/// pre-v0.50 form) is accepted too and joined with AND.
#[derive(Debug, Default)]
struct SearchParams {
    query: Option<String>,
    events: Vec<String>,
    limit: Option<String>,
    page: Option<String>,
    order_by: Option<String>,
}

fn parse_search_params(raw: Option<&str>) -> SearchParams {
    let mut p = SearchParams::default();
    for (k, v) in form_urlencoded(raw.unwrap_or("")) {
        match k.as_str() {
            "query" => p.query = Some(v),
            "events" => p.events.push(v),
            "limit" | "pagination.limit" => p.limit = Some(v),
            "page" => p.page = Some(v),
            "order_by" => p.order_by = Some(v),
            _ => {}
        }
    }
    p
}

/// Minimal `application/x-www-form-urlencoded` decoding (`+` is a space, `%XX` escapes).
pub(crate) fn form_urlencoded(s: &str) -> Vec<(String, String)> {
    fn dec(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                        Ok(v) => {
                            out.push(v);
                            i += 2;
                        }
                        Err(_) => out.push(b'%'),
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (dec(k), dec(v)),
            None => (dec(p), String::new()),
        })
        .collect()
}

async fn search(State(node): State<Node>, RawQuery(raw): RawQuery) -> ApiResult {
    let p = parse_search_params(raw.as_deref());
    let text = match (&p.query, p.events.is_empty()) {
        (Some(q), _) if !q.trim().is_empty() => q.clone(),
        (_, false) => p.events.join(" AND "),
        _ => return Err(ApiError::invalid("query cannot be empty")),
    };
    let query = lantau_event_query::Query::parse(&text).map_err(|e| ApiError::invalid(format!("invalid query {text:?}: {e}")))?;
    let descending = match p.order_by.as_deref().unwrap_or("") {
        "" | "ORDER_BY_UNSPECIFIED" | "ORDER_BY_ASC" | "0" | "1" => false,
        "ORDER_BY_DESC" | "2" => true,
        other => return Err(ApiError::invalid(format!("invalid order_by {other:?}: expected ORDER_BY_ASC or ORDER_BY_DESC"))),
    };
    let limit = parse_u64(p.limit.as_deref(), "limit")?.unwrap_or(100).clamp(1, 100);
    let page = parse_u64(p.page.as_deref(), "page")?.unwrap_or(1).max(1);
    let res = node.search_txs(&query, descending, page, limit).await?;
    Ok(Json(json!({
        "txs": res.txs.iter().map(|r| json::tx(&r.tx)).collect::<Vec<_>>(),
        "tx_responses": res.txs.iter().map(json::tx_response).collect::<Vec<_>>(),
        "pagination": null,
        "total": res.total.to_string(),
    })))
}

fn parse_u64(v: Option<&str>, what: &str) -> Result<Option<u64>, ApiError> {
    match v {
        None | Some("") => Ok(None),
        Some(s) => s.parse().map(Some).map_err(|_| ApiError::invalid(format!("invalid {what} {s:?}"))),
    }
}

#[derive(Deserialize)]
struct SimulateBody {
    #[serde(default)]
    tx_bytes: String,
}

async fn simulate(State(node): State<Node>, body: Result<Json<SimulateBody>, axum::extract::rejection::JsonRejection>) -> ApiResult {
    let Json(body) = body.map_err(|e| ApiError::invalid(format!("invalid request body: {}", e.body_text())))?;
    let bytes = decode_tx_bytes(&body.tx_bytes)?;
    let out = node.app().simulate(&bytes).await;
    match out.result {
        Ok(()) => Ok(Json(json!({
            "gas_info": {"gas_wanted": "0", "gas_used": out.gas_used.to_string()},
            "result": {"data": "", "log": "", "events": json::events(&out.events), "msg_responses": []},
        }))),
        Err(e) => Err(ApiError::invalid(format!("{}: codespace {} code {}", e.log, e.codespace, e.code))),
    }
}

// === auth and bank ===

async fn account(State(node): State<Node>, Path(address): Path<String>) -> ApiResult {
    let addr = parse_bech32(&address)?;
    let snap = node.app().snapshot();
    let acct = authq::account(&snap, &addr).await.map_err(|e| ApiError::internal(e.log))?;
    let Some(a) = acct else {
        return Err(ApiError::not_found(format!("account {address} not found")));
    };
    let pub_key = if a.pub_key.is_empty() {
        Value::Null
    } else {
        json!({"@type": lantau_proto::ETH_SECP256K1_PUBKEY_TYPE_URL, "key": B64.encode(&a.pub_key)})
    };
    Ok(Json(json!({
        "account": {
            "@type": "/cosmos.auth.v1beta1.BaseAccount",
            "address": addr.to_bech32(),
            "pub_key": pub_key,
            "account_number": a.account_number.to_string(),
            "sequence": a.sequence.to_string(),
        }
    })))
}

/// Lantau's extension (no upstream route gives it): the sequence the account's next
/// transaction must carry on this node, counting the transactions its mempool admitted and
/// the chain has not yet committed (the Ethereum JSON-RPC's `pending` nonce). A client that
/// sends several transactions without waiting signs each with this.
async fn next_sequence(State(node): State<Node>, Path(address): Path<String>) -> ApiResult {
    let addr = parse_bech32(&address)?;
    let acct = authq::account(&node.app().snapshot(), &addr).await.map_err(|e| ApiError::internal(e.log))?;
    let Some(a) = acct else {
        return Err(ApiError::not_found(format!("account {address} not found")));
    };
    let next = node.pending_sequence(&addr).await.map_err(ApiError::internal)?;
    Ok(Json(json!({"address": addr.to_bech32(), "account_number": a.account_number.to_string(), "sequence": next.max(a.sequence).to_string()})))
}

async fn balances(State(node): State<Node>, Path(address): Path<String>) -> ApiResult {
    let addr = parse_bech32(&address)?;
    let snap = node.app().snapshot();
    let coins = bankq::balances(&snap, &addr).await.map_err(|e| ApiError::internal(e.log))?;
    Ok(Json(json!({
        "balances": coins.iter().map(|c| json!({"denom": c.denom, "amount": c.amount.to_string()})).collect::<Vec<_>>(),
        "pagination": {"next_key": null, "total": coins.len().to_string()},
    })))
}

#[derive(Deserialize)]
struct DenomParam {
    #[serde(default)]
    denom: String,
}

fn parse_denom(d: &str) -> Result<Denom, ApiError> {
    Denom::new(d).map_err(|e| ApiError::invalid(e.to_string()))
}

async fn balance_by_denom(State(node): State<Node>, Path(address): Path<String>, Query(q): Query<DenomParam>) -> ApiResult {
    let addr = parse_bech32(&address)?;
    let denom = parse_denom(&q.denom)?;
    let amt = bankq::balance(&node.app().snapshot(), &addr, denom.as_str()).await.map_err(|e| ApiError::internal(e.log))?;
    Ok(Json(json!({"balance": {"denom": denom.as_str(), "amount": amt.to_string()}})))
}

async fn supply_by_denom(State(node): State<Node>, Query(q): Query<DenomParam>) -> ApiResult {
    let denom = parse_denom(&q.denom)?;
    let amt = bankq::supply(&node.app().snapshot(), denom.as_str()).await.map_err(|e| ApiError::internal(e.log))?;
    Ok(Json(json!({"amount": {"denom": denom.as_str(), "amount": amt.to_string()}})))
}

// === through the query router ===
//
// These routes build the gRPC request, ask the app's one query router (the same answer
// abci_query and gRPC give, at the height of the `x-cosmos-block-height` header when
// present) and render the response as the gRPC gateway does.

fn height_header(headers: &axum::http::HeaderMap) -> Result<u64, ApiError> {
    match headers.get(crate::grpc::HEIGHT_HEADER) {
        None => Ok(0),
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| ApiError::invalid(format!("invalid {} header", crate::grpc::HEIGHT_HEADER))),
    }
}

async fn routed<Resp: prost::Message + Default>(node: &Node, headers: &axum::http::HeaderMap, method: &str, req: impl prost::Message) -> Result<Resp, ApiError> {
    let h = height_header(headers)?;
    let bytes = node.app().grpc_query(h, method, &req.encode_to_vec()).await.map_err(ApiError::from)?;
    Resp::decode(bytes.as_slice()).map_err(ApiError::internal)
}

fn metadata_json(m: &cosmos_sdk_proto::cosmos::bank::v1beta1::Metadata) -> Value {
    json!({
        "description": m.description,
        "denom_units": m.denom_units.iter().map(|u| json!({"denom": u.denom, "exponent": u.exponent, "aliases": u.aliases})).collect::<Vec<_>>(),
        "base": m.base,
        "display": m.display,
        "name": m.name,
        "symbol": m.symbol,
        "uri": m.uri,
        "uri_hash": m.uri_hash,
    })
}

async fn auth_params(State(node): State<Node>, headers: axum::http::HeaderMap) -> ApiResult {
    use cosmos_sdk_proto::cosmos::auth::v1beta1 as pb;
    let r: pb::QueryParamsResponse = routed(&node, &headers, lantau_app::auth::query::PARAMS, pb::QueryParamsRequest {}).await?;
    let p = r.params.unwrap_or_default();
    Ok(Json(json!({"params": {
        "max_memo_characters": p.max_memo_characters.to_string(),
        "tx_sig_limit": p.tx_sig_limit.to_string(),
        "tx_size_cost_per_byte": p.tx_size_cost_per_byte.to_string(),
        "sig_verify_cost_ed25519": p.sig_verify_cost_ed25519.to_string(),
        "sig_verify_cost_secp256k1": p.sig_verify_cost_secp256k1.to_string(),
    }})))
}

async fn bank_params(State(node): State<Node>, headers: axum::http::HeaderMap) -> ApiResult {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let r: pb::QueryParamsResponse = routed(&node, &headers, lantau_app::bank::query::PARAMS, pb::QueryParamsRequest {}).await?;
    let p = r.params.unwrap_or_default();
    Ok(Json(json!({"params": {"send_enabled": [], "default_send_enabled": p.default_send_enabled}})))
}

async fn total_supply(State(node): State<Node>, headers: axum::http::HeaderMap) -> ApiResult {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let r: pb::QueryTotalSupplyResponse = routed(&node, &headers, lantau_app::bank::query::TOTAL_SUPPLY, pb::QueryTotalSupplyRequest::default()).await?;
    Ok(Json(json!({"supply": json::coins(&r.supply), "pagination": json::page(r.supply.len())})))
}

async fn spendable_balances(State(node): State<Node>, headers: axum::http::HeaderMap, Path(address): Path<String>) -> ApiResult {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let req = pb::QuerySpendableBalancesRequest { address, pagination: None };
    let r: pb::QuerySpendableBalancesResponse = routed(&node, &headers, lantau_app::bank::query::SPENDABLE_BALANCES, req).await?;
    Ok(Json(json!({"balances": json::coins(&r.balances), "pagination": json::page(r.balances.len())})))
}

async fn denoms_metadata(State(node): State<Node>, headers: axum::http::HeaderMap) -> ApiResult {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let r: pb::QueryDenomsMetadataResponse = routed(&node, &headers, lantau_app::grpc::DENOMS_METADATA, pb::QueryDenomsMetadataRequest::default()).await?;
    Ok(Json(json!({"metadatas": r.metadatas.iter().map(metadata_json).collect::<Vec<_>>(), "pagination": json::page(r.metadatas.len())})))
}

async fn denom_metadata(State(node): State<Node>, headers: axum::http::HeaderMap, Path(denom): Path<String>) -> ApiResult {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let r: pb::QueryDenomMetadataResponse = routed(&node, &headers, lantau_app::grpc::DENOM_METADATA, pb::QueryDenomMetadataRequest { denom }).await?;
    Ok(Json(json!({"metadata": r.metadata.as_ref().map(metadata_json)})))
}

/// The node's own settings a client needs: the gas price floor (1 gwei of `alantau`, as a
/// DecCoin with 18 decimals), what it keeps of history, no halt height.
async fn node_config() -> ApiResult {
    Ok(Json(json!({
        "minimum_gas_price": format!("{}.000000000000000000{}", lantau_primitives::MIN_GAS_PRICE, lantau_primitives::NATIVE_DENOM),
        "pruning_keep_recent": "10",
        "pruning_interval": "0",
        "halt_height": "0",
    })))
}

/// `GetBlockWithTxs`: the block and its transactions, decoded.
async fn txs_of_block(State(node): State<Node>, Path(height): Path<String>) -> ApiResult {
    let h: u64 = height.parse().map_err(|_| ApiError::invalid(format!("invalid height {height:?}")))?;
    let block = node.block(Some(h)).await?.ok_or_else(|| ApiError::not_found(format!("block {h} not found")))?;
    let Json(b) = render_block(&block)?;
    let txs: Vec<Value> = block.data.iter().map(|t| json::tx(t).unwrap_or(Value::Null)).collect();
    Ok(Json(json!({"txs": txs, "block_id": b["block_id"], "block": b["block"], "pagination": json::page(block.data.len())})))
}

// === tendermint service ===

async fn node_info(State(node): State<Node>) -> ApiResult {
    let s = node.status().await?;
    Ok(Json(json!({
        "default_node_info": {
            "protocol_version": {"p2p": "8", "block": "11", "app": "1"},
            "default_node_id": s.node_id,
            "listen_addr": "",
            "network": s.chain_id,
            "version": "0.38.17",
            "channels": "40202122233038606100",
            "moniker": s.moniker,
            "other": {"tx_index": "on", "rpc_address": s.rpc_address},
        },
        "application_version": {
            "name": "lantau",
            "app_name": "lantaud",
            "version": env!("CARGO_PKG_VERSION"),
            "git_commit": "",
            "build_tags": "",
            "go_version": "",
            "build_deps": [],
            "cosmos_sdk_version": "",
        }
    })))
}

async fn block_json(node: &Node, height: Option<u64>) -> ApiResult {
    let Some(block) = node.block(height).await? else {
        return Err(ApiError::not_found(match height {
            Some(h) => format!("block {h} not found"),
            None => "no block committed yet".to_string(),
        }));
    };
    render_block(&block)
}

fn render_block(block: &lantau_app::tendermint::Block) -> ApiResult {
    let id = crate::api::block_id(block);
    let block_json = serde_json::to_value(block).map_err(ApiError::internal)?;
    let block_id = json!({
        "hash": B64.encode(id.hash.as_bytes()),
        "part_set_header": {"total": id.part_set_header.total, "hash": B64.encode(id.part_set_header.hash.as_bytes())},
    });
    Ok(Json(json!({"block_id": block_id, "block": block_json, "sdk_block": block_json})))
}

async fn latest_block(State(node): State<Node>) -> ApiResult {
    block_json(&node, None).await
}

async fn block_by_height(State(node): State<Node>, Path(height): Path<String>) -> ApiResult {
    let h: u64 = height.parse().map_err(|_| ApiError::invalid(format!("invalid height {height:?}")))?;
    block_json(&node, Some(h)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_decoding() {
        let v = form_urlencoded("query=message.sender%3D%27lantau1x%27+AND+tx.height%3E%3D3&limit=5&x");
        assert_eq!(v[0], ("query".into(), "message.sender='lantau1x' AND tx.height>=3".into()));
        assert_eq!(v[1], ("limit".into(), "5".into()));
        assert_eq!(v[2], ("x".into(), "".into()));
        // Truncated escapes do not panic.
        let _ = form_urlencoded("a=%");
        let _ = form_urlencoded("a=%4");
        let _ = form_urlencoded("%zz=%%");
    }

    #[test]
    fn hashes() {
        assert!(parse_hash("").is_err());
        assert!(parse_hash("abc").is_err());
        assert!(parse_hash(&"AB".repeat(32)).is_ok());
        assert!(parse_hash(&"ab".repeat(32)).is_ok());
    }
}

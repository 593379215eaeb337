//! The Cosmos REST surface (gRPC-gateway JSON) on :1317.
//!
//! Standard services only here: `cosmos.tx.v1beta1` (broadcast, get, search, simulate),
//! `cosmos.auth.v1beta1` accounts, `cosmos.bank.v1beta1` balances and supply, and
//! `cosmos.base.tendermint.v1beta1` node info and blocks. Module routers are merged in by the
//! node. Unknown paths answer 404 `{code: 5, message: "Not Found", details: []}` as the gateway
//! does.

use std::sync::Arc;

use axum::extract::{Path, Query, RawQuery, State};
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use cosmos_sdk_proto::cosmos::auth::v1beta1 as auth_pb;
use cosmos_sdk_proto::cosmos::bank::v1beta1 as bank_pb;
use lantau_app::auth::query as authq;
use lantau_app::bank::query as bankq;
use lantau_primitives::{Address, Denom};
use prost::Message as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::NodeApi;
use crate::error::ApiError;
use crate::json;
use crate::openapi::shapes::{AnyJson, BaseAccount, BlockId, Coin, ErrorBody, Event, Metadata, PageResponse, PartSetHeader, Tx, TxResponse};

type Node = Arc<dyn NodeApi>;
type ApiResult<T> = Result<Body<T>, ApiError>;

/// The REST router over a node: every route registered from its handler's `#[utoipa::path]`
/// declaration, which is also what the OpenAPI document at `/openapi.json` is built from.
pub fn router(node: Node) -> Router {
    let (router, doc) = api_routes().split_for_parts();
    router.with_state(node).layer(axum::middleware::from_fn(at_height)).merge(crate::openapi::docs_router(crate::openapi::finish(doc))).fallback(not_found)
}

tokio::task_local! {
    /// The height of the request's `x-cosmos-block-height` header (0: the latest).
    static HEIGHT: u64;
}

/// Every query route answers at the height of the `x-cosmos-block-height` header, as the
/// Cosmos SDK's gateway does: the header is read once here for the whole request.
async fn at_height(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    match height_header(req.headers()) {
        Ok(h) => HEIGHT.scope(h, next.run(req)).await,
        Err(e) => axum::response::IntoResponse::into_response(e),
    }
}

/// The REST surface's routes and their documentation, before the state is given.
pub fn api_routes() -> OpenApiRouter<Node> {
    OpenApiRouter::new()
        .routes(routes!(broadcast, search))
        .routes(routes!(get_tx))
        .routes(routes!(forwarded_txs))
        .routes(routes!(simulate))
        .routes(routes!(txs_of_block))
        .routes(routes!(auth_params))
        .routes(routes!(next_sequence))
        .routes(routes!(bank_params))
        .routes(routes!(total_supply))
        .routes(routes!(spendable_balances))
        .routes(routes!(denoms_metadata))
        .routes(routes!(denom_metadata))
        .routes(routes!(node_config))
        .routes(routes!(account))
        .routes(routes!(balances))
        .routes(routes!(balance_by_denom))
        .routes(routes!(supply_by_denom))
        .routes(routes!(node_info))
        .routes(routes!(latest_block))
        .routes(routes!(block_by_height))
        .merge(crate::modules::routes())
}

/// A route's answer: its body type serialised as JSON with every object's keys in sorted
/// order (through `serde_json::Value`), so the bytes do not depend on the order fields are
/// declared in, whether in a body struct or a protobuf message.
pub struct Body<T>(pub T);

impl<T: Serialize> axum::response::IntoResponse for Body<T> {
    fn into_response(self) -> axum::response::Response {
        match serde_json::to_value(&self.0) {
            Ok(v) => Json(v).into_response(),
            Err(e) => ApiError::internal(e).into_response(),
        }
    }
}

/// The gateway's answer for an unknown path.
pub async fn not_found() -> ApiError {
    ApiError::not_found("Not Found")
}

/// Parses a bech32 address path or query parameter (400 on failure).
pub fn parse_bech32(s: &str) -> Result<Address, ApiError> {
    Address::from_bech32(s).map_err(|e| ApiError::invalid(format!("invalid address: {e}")))
}

/// Parses a tx hash (64 hex digits, with or without `0x`, any case) into bytes, as the query
/// router parses TxTrace's (one function, one set of texts).
pub fn parse_hash(s: &str) -> Result<[u8; 32], ApiError> {
    lantau_app::grpc::tx_hash(s).map_err(ApiError::from)
}

// === tx service ===

#[derive(Deserialize, ToSchema)]
struct BroadcastBody {
    /// The signed transaction (`TxRaw`), base64.
    #[serde(default)]
    tx_bytes: String,
    /// `BROADCAST_MODE_SYNC` (the admission verdict) or `BROADCAST_MODE_ASYNC` (2 and 3 as
    /// numbers); `BROADCAST_MODE_BLOCK` is refused.
    #[serde(default)]
    #[schema(value_type = String)]
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
        "BROADCAST_MODE_BLOCK" => {
            Err(ApiError::invalid("BROADCAST_MODE_BLOCK is not supported: broadcast with BROADCAST_MODE_SYNC and poll GET /cosmos/tx/v1beta1/txs/{hash}"))
        }
        other => Err(ApiError::invalid(format!("invalid mode {other:?}: expected BROADCAST_MODE_SYNC or BROADCAST_MODE_ASYNC"))),
    }
}

fn decode_tx_bytes(s: &str) -> Result<Vec<u8>, ApiError> {
    if s.is_empty() {
        return Err(ApiError::invalid("invalid empty tx: tx_bytes is required"));
    }
    B64.decode(s).map_err(|e| ApiError::invalid(format!("tx_bytes is not valid base64: {e}")))
}

#[utoipa::path(post, path = "/cosmos/tx/v1beta1/txs", tag = "tx", summary = "Broadcast a signed transaction",
    description = "SYNC answers the admission verdict (code 0, or the refusing module's codespace and code); ASYNC answers the hash only.",
    request_body = BroadcastBody,
    responses((status = 200, description = "The answer", body = BroadcastResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn broadcast(State(node): State<Node>, body: Result<Json<BroadcastBody>, axum::extract::rejection::JsonRejection>) -> ApiResult<BroadcastResponse> {
    let Json(body) = body.map_err(|e| ApiError::invalid(format!("invalid request body: {}", e.body_text())))?;
    let mode = broadcast_mode(&body.mode)?;
    let bytes = decode_tx_bytes(&body.tx_bytes)?;
    let r = if mode == "sync" { node.broadcast_sync(bytes).await } else { node.broadcast_async(bytes).await };
    Ok(Body(BroadcastResponse {
        tx_response: TxResponse {
            height: "0".into(),
            txhash: const_hex::encode_upper(r.hash),
            codespace: r.codespace,
            code: r.code,
            data: String::new(),
            raw_log: r.log,
            logs: Vec::new(),
            info: String::new(),
            gas_wanted: r.gas_wanted.to_string(),
            gas_used: r.gas_used.to_string(),
            tx: None,
            timestamp: String::new(),
            events: Vec::new(),
        },
    }))
}

/// The path a validator's app forwards the transactions its clients gave it to, on each
/// peer's REST gateway (`[mempool] peers` of an app-side mempool).
pub const FORWARD_PATH: &str = "/lantau/mempool/v1/forwarded";

/// A batch of forwarded transactions as sent to [`FORWARD_PATH`]: each as a protobuf
/// length-delimited record (its length as a varint, then its bytes).
pub fn encode_forwarded<T: AsRef<[u8]>>(txs: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(txs.iter().map(|t| t.as_ref().len().saturating_add(4)).sum());
    for t in txs {
        let t = t.as_ref();
        prost::encoding::encode_varint(t.len() as u64, &mut out);
        out.extend_from_slice(t);
    }
    out
}

/// Reads a forwarded batch ([`encode_forwarded`]); the error names the record that is cut.
pub fn decode_forwarded(mut body: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let len = prost::encoding::decode_varint(&mut body).map_err(|e| format!("record {}: {e}", out.len()))?;
        let len = usize::try_from(len).map_err(|_| format!("record {}: length {len} too large", out.len()))?;
        if len > body.len() {
            return Err(format!("record {}: length {len}, but {} bytes remain", out.len(), body.len()));
        }
        let (t, rest) = body.split_at(len);
        out.push(t.to_vec());
        body = rest;
    }
    Ok(out)
}

/// What a node did with a forwarded batch.
#[derive(Debug, Serialize, ToSchema)]
struct ForwardedResponse {
    /// Transactions in the batch.
    received: usize,
    /// Transactions admitted into this node's mempool (the others were refused, or waited
    /// here already).
    admitted: usize,
}

#[utoipa::path(post, path = "/lantau/mempool/v1/forwarded", tag = "mempool", summary = "Transactions a peer validator forwards",
    description = "Between the apps of a network whose validators keep the mempool (`[mempool] app_side`): a batch of signed transactions, each as a protobuf length-delimited record, admitted in order as broadcasts are but not forwarded again. Refused with 503 by a node that keeps no mempool of its own.",
    request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses((status = 200, description = "The answer", body = ForwardedResponse), (status = 400, description = "A malformed batch", body = ErrorBody), (status = 503, description = "This node keeps no mempool", body = ErrorBody)))]
async fn forwarded_txs(State(node): State<Node>, body: axum::body::Bytes) -> ApiResult<ForwardedResponse> {
    let txs = decode_forwarded(&body).map_err(|e| ApiError::invalid(format!("invalid batch: {e}")))?;
    let received = txs.len();
    let admitted = node.admit_forwarded(txs).await.map_err(|e| match e {
        crate::api::NodeError::Unavailable(m) => ApiError::unavailable(m),
        other => other.into(),
    })?;
    Ok(Body(ForwardedResponse { received, admitted }))
}

#[utoipa::path(get, path = "/cosmos/tx/v1beta1/txs/{hash}", tag = "tx", summary = "A committed transaction by hash",
    params(("hash" = String, Path, description = "64 hex digits, any case")),
    responses((status = 200, description = "The answer", body = GetTxResponse), (status = 400, description = "A malformed request", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn get_tx(State(node): State<Node>, Path(hash): Path<String>) -> ApiResult<GetTxResponse> {
    let h = parse_hash(&hash)?;
    match node.tx(h).await? {
        Some(rec) => Ok(Body(GetTxResponse { tx: json::tx(&rec.tx), tx_response: json::tx_response(&rec) })),
        None => Err(ApiError::not_found(format!("tx not found: {}", const_hex::encode_upper(h)))),
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
                b'%' if i + 2 < b.len() => match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                },
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

#[utoipa::path(get, path = "/cosmos/tx/v1beta1/txs", tag = "tx", summary = "Search committed transactions by events",
    params(("query" = Option<String>, Query, description = "CometBFT event query, e.g. message.sender='lantau1...' AND tx.height>=3"),
        ("events" = Option<Vec<String>>, Query, description = "Pre-v0.50 form: conditions joined with AND"),
        ("limit" = Option<String>, Query, description = "Page size, 1 to 100 (default 100)"),
        ("pagination.limit" = Option<String>, Query, description = "Same as limit"),
        ("page" = Option<String>, Query, description = "Page number from 1"),
        ("order_by" = Option<String>, Query, description = "ORDER_BY_ASC (default) or ORDER_BY_DESC")),
    responses((status = 200, description = "The answer", body = SearchResponse), (status = 400, description = "A malformed request", body = ErrorBody), (status = 503, description = "Busy: other broad queries hold every turn; retry", body = ErrorBody)))]
async fn search(State(node): State<Node>, RawQuery(raw): RawQuery) -> ApiResult<SearchResponse> {
    let _turn = crate::heavy::turn().await.map_err(ApiError::unavailable)?;
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
    Ok(Body(SearchResponse {
        txs: res.txs.iter().map(|r| json::tx(&r.tx)).collect(),
        tx_responses: res.txs.iter().map(json::tx_response).collect(),
        pagination: None,
        total: res.total.to_string(),
    }))
}

fn parse_u64(v: Option<&str>, what: &str) -> Result<Option<u64>, ApiError> {
    match v {
        None | Some("") => Ok(None),
        Some(s) => s.parse().map(Some).map_err(|_| ApiError::invalid(format!("invalid {what} {s:?}"))),
    }
}

#[derive(Deserialize, ToSchema)]
struct SimulateBody {
    /// The transaction (`TxRaw`), base64; its signatures are not checked.
    #[serde(default)]
    tx_bytes: String,
}

#[utoipa::path(post, path = "/cosmos/tx/v1beta1/simulate", tag = "tx", summary = "Simulate a transaction (gas used and events)",
    request_body = SimulateBody,
    responses((status = 200, description = "The answer", body = SimulateResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn simulate(State(node): State<Node>, body: Result<Json<SimulateBody>, axum::extract::rejection::JsonRejection>) -> ApiResult<SimulateResponse> {
    let Json(body) = body.map_err(|e| ApiError::invalid(format!("invalid request body: {}", e.body_text())))?;
    let bytes = decode_tx_bytes(&body.tx_bytes)?;
    // A refused transaction is InvalidArgument with its log, codespace and code.
    let r: cosmos_sdk_proto::cosmos::tx::v1beta1::SimulateResponse =
        query(&node, 0, lantau_app::grpc::SIMULATE, &cosmos_sdk_proto::cosmos::tx::v1beta1::SimulateRequest { tx_bytes: bytes, ..Default::default() }).await?;
    let gas_used = r.gas_info.map_or(0, |g| g.gas_used);
    let events = r.result.map(|x| x.events).unwrap_or_default();
    Ok(Body(SimulateResponse {
        gas_info: GasInfo { gas_wanted: "0".into(), gas_used: gas_used.to_string() },
        result: SimulateResult { data: String::new(), log: String::new(), events: json::pb_events(&events), msg_responses: Vec::new() },
    }))
}

// === auth and bank ===
//
// On the latest state, through the query router; the address and denom are checked here
// first, with this surface's own error texts.

#[utoipa::path(get, path = "/cosmos/auth/v1beta1/accounts/{address}", tag = "auth", summary = "An account",
    params(("address" = String, Path, description = "Bech32 address", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = AccountResponse), (status = 400, description = "A malformed request", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn account(State(node): State<Node>, Path(address): Path<String>) -> ApiResult<AccountResponse> {
    parse_bech32(&address)?;
    // Absent: 404 `account <address as given> not found`.
    let a = base_account(&node, address).await?;
    let pub_key = match &a.pub_key {
        Some(k) => {
            let key = lantau_proto::ethsecp256k1::PubKey::decode(k.value.as_slice()).map_err(ApiError::internal)?;
            let fields = serde_json::Map::from_iter([("key".to_string(), Value::String(B64.encode(&key.key)))]);
            Some(AnyJson { type_url: k.type_url.clone(), fields })
        }
        None => None,
    };
    Ok(Body(AccountResponse {
        account: BaseAccount {
            type_url: "/cosmos.auth.v1beta1.BaseAccount".into(),
            address: a.address,
            pub_key,
            account_number: a.account_number.to_string(),
            sequence: a.sequence.to_string(),
        },
    }))
}

/// The account at `address` (`AccountInfo`: the `BaseAccount` itself); NotFound when absent.
async fn base_account(node: &Node, address: String) -> Result<auth_pb::BaseAccount, ApiError> {
    let r: auth_pb::QueryAccountInfoResponse = query(node, 0, authq::ACCOUNT_INFO, &auth_pb::QueryAccountInfoRequest { address }).await?;
    r.info.ok_or_else(|| ApiError::internal("AccountInfo answered no account"))
}

/// Lantau's extension (no upstream route gives it): the sequence the account's next
/// transaction must carry on this node, counting the transactions its mempool admitted and
/// the chain has not yet committed (the Ethereum JSON-RPC's `pending` nonce). A client that
/// sends several transactions without waiting signs each with this.
#[utoipa::path(get, path = "/chain/auth/v1/next_sequence/{address}", tag = "auth", summary = "The sequence the account's next transaction must carry on this node",
    params(("address" = String, Path, description = "Bech32 address", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = NextSequenceResponse), (status = 400, description = "A malformed request", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn next_sequence(State(node): State<Node>, Path(address): Path<String>) -> ApiResult<NextSequenceResponse> {
    let addr = parse_bech32(&address)?;
    let a = base_account(&node, address).await?;
    let next = node.pending_sequence(&addr).await?;
    Ok(Body(NextSequenceResponse { address: addr.to_bech32(), account_number: a.account_number.to_string(), sequence: next.max(a.sequence).to_string() }))
}

#[utoipa::path(get, path = "/cosmos/bank/v1beta1/balances/{address}", tag = "bank", summary = "All balances of an address",
    params(("address" = String, Path, description = "Bech32 address", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = BalancesResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn balances(State(node): State<Node>, Path(address): Path<String>) -> ApiResult<BalancesResponse> {
    parse_bech32(&address)?;
    let r: bank_pb::QueryAllBalancesResponse =
        query(&node, 0, bankq::ALL_BALANCES, &bank_pb::QueryAllBalancesRequest { address, ..Default::default() }).await?;
    Ok(Body(BalancesResponse { balances: json::coins(&r.balances), pagination: json::page(r.balances.len()) }))
}

#[derive(Deserialize)]
struct DenomParam {
    #[serde(default)]
    denom: String,
}

fn parse_denom(d: &str) -> Result<Denom, ApiError> {
    Denom::new(d).map_err(|e| ApiError::invalid(e.to_string()))
}

#[utoipa::path(get, path = "/cosmos/bank/v1beta1/balances/{address}/by_denom", tag = "bank", summary = "One balance of an address",
    params(("address" = String, Path, description = "Bech32 address", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$"), ("denom" = String, Query, description = "The denom", example = "hkd.demo")),
    responses((status = 200, description = "The answer", body = BalanceResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn balance_by_denom(State(node): State<Node>, Path(address): Path<String>, Query(q): Query<DenomParam>) -> ApiResult<BalanceResponse> {
    parse_bech32(&address)?;
    let denom = parse_denom(&q.denom)?;
    let req = bank_pb::QueryBalanceRequest { address, denom: denom.as_str().into() };
    let r: bank_pb::QueryBalanceResponse = query(&node, 0, bankq::BALANCE, &req).await?;
    Ok(Body(BalanceResponse { balance: json::coin(&r.balance.unwrap_or_default()) }))
}

#[utoipa::path(get, path = "/cosmos/bank/v1beta1/supply/by_denom", tag = "bank", summary = "The supply of one denom",
    params(("denom" = String, Query, description = "The denom", example = "hkd.demo")),
    responses((status = 200, description = "The answer", body = SupplyOfResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn supply_by_denom(State(node): State<Node>, Query(q): Query<DenomParam>) -> ApiResult<SupplyOfResponse> {
    let denom = parse_denom(&q.denom)?;
    let r: bank_pb::QuerySupplyOfResponse = query(&node, 0, bankq::SUPPLY_OF, &bank_pb::QuerySupplyOfRequest { denom: denom.as_str().into() }).await?;
    Ok(Body(SupplyOfResponse { amount: json::coin(&r.amount.unwrap_or_default()) }))
}

// === through the query router ===
//
// These routes build the gRPC request, ask the app's one query router (the same answer
// abci_query and gRPC give, at the height of the `x-cosmos-block-height` header when
// present) and render the response as the gRPC gateway does.

fn height_header(headers: &axum::http::HeaderMap) -> Result<u64, ApiError> {
    match headers.get(crate::grpc::HEIGHT_HEADER) {
        None => Ok(0),
        Some(v) => {
            v.to_str().ok().and_then(|s| s.trim().parse().ok()).ok_or_else(|| ApiError::invalid(format!("invalid {} header", crate::grpc::HEIGHT_HEADER)))
        }
    }
}

async fn routed<Resp: prost::Message + Default>(
    node: &Node,
    headers: &axum::http::HeaderMap,
    method: &str,
    req: impl prost::Message,
) -> Result<Resp, ApiError> {
    query(node, height_header(headers)?, method, &req).await
}

/// Asks the node's one query router ([`NodeApi::query`]) for `method` at `height` (0: the
/// latest) and decodes the response: the answer gRPC and `abci_query` give for the same
/// request (a query error keeps its gRPC code and text).
pub(crate) async fn query<Resp: prost::Message + Default>(node: &Node, height: u64, method: &str, req: &impl prost::Message) -> Result<Resp, ApiError> {
    let height = if height == 0 { HEIGHT.try_with(|h| *h).unwrap_or(0) } else { height };
    let bytes = node.query(height, method, &req.encode_to_vec()).await.map_err(ApiError::from)?;
    Resp::decode(bytes.as_slice()).map_err(ApiError::internal)
}

fn metadata_json(m: &cosmos_sdk_proto::cosmos::bank::v1beta1::Metadata) -> Metadata {
    Metadata {
        description: m.description.clone(),
        denom_units: m
            .denom_units
            .iter()
            .map(|u| crate::openapi::shapes::DenomUnit { denom: u.denom.clone(), exponent: u.exponent, aliases: u.aliases.clone() })
            .collect(),
        base: m.base.clone(),
        display: m.display.clone(),
        name: m.name.clone(),
        symbol: m.symbol.clone(),
        uri: m.uri.clone(),
        uri_hash: m.uri_hash.clone(),
    }
}

#[utoipa::path(get, path = "/cosmos/auth/v1beta1/params", tag = "auth", summary = "Auth parameters",
    params(("x-cosmos-block-height" = Option<u64>, Header, description = "Answer at this height (those the node keeps: its pruning setting)")), responses((status = 200, description = "The answer", body = AuthParamsResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn auth_params(State(node): State<Node>, headers: axum::http::HeaderMap) -> ApiResult<AuthParamsResponse> {
    use cosmos_sdk_proto::cosmos::auth::v1beta1 as pb;
    let r: pb::QueryParamsResponse = routed(&node, &headers, lantau_app::auth::query::PARAMS, pb::QueryParamsRequest {}).await?;
    let p = r.params.unwrap_or_default();
    Ok(Body(AuthParamsResponse {
        params: AuthParams {
            max_memo_characters: p.max_memo_characters.to_string(),
            tx_sig_limit: p.tx_sig_limit.to_string(),
            tx_size_cost_per_byte: p.tx_size_cost_per_byte.to_string(),
            sig_verify_cost_ed25519: p.sig_verify_cost_ed25519.to_string(),
            sig_verify_cost_secp256k1: p.sig_verify_cost_secp256k1.to_string(),
        },
    }))
}

#[utoipa::path(get, path = "/cosmos/bank/v1beta1/params", tag = "bank", summary = "Bank parameters",
    params(("x-cosmos-block-height" = Option<u64>, Header, description = "Answer at this height (those the node keeps: its pruning setting)")), responses((status = 200, description = "The answer", body = BankParamsResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn bank_params(State(node): State<Node>, headers: axum::http::HeaderMap) -> ApiResult<BankParamsResponse> {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let r: pb::QueryParamsResponse = routed(&node, &headers, lantau_app::bank::query::PARAMS, pb::QueryParamsRequest {}).await?;
    let p = r.params.unwrap_or_default();
    Ok(Body(BankParamsResponse { params: BankParams { send_enabled: Vec::new(), default_send_enabled: p.default_send_enabled } }))
}

#[utoipa::path(get, path = "/cosmos/bank/v1beta1/supply", tag = "bank", summary = "The supply of every denom",
    params(("x-cosmos-block-height" = Option<u64>, Header, description = "Answer at this height (those the node keeps: its pruning setting)")), responses((status = 200, description = "The answer", body = SupplyResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn total_supply(State(node): State<Node>, headers: axum::http::HeaderMap) -> ApiResult<SupplyResponse> {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let r: pb::QueryTotalSupplyResponse = routed(&node, &headers, lantau_app::bank::query::TOTAL_SUPPLY, pb::QueryTotalSupplyRequest::default()).await?;
    Ok(Body(SupplyResponse { supply: json::coins(&r.supply), pagination: json::page(r.supply.len()) }))
}

#[utoipa::path(get, path = "/cosmos/bank/v1beta1/spendable_balances/{address}", tag = "bank", summary = "Spendable balances (frozen and paused stablecoins left out)",
    params(("address" = String, Path, description = "Bech32 address", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$"), ("x-cosmos-block-height" = Option<u64>, Header, description = "Answer at this height (those the node keeps: its pruning setting)")), responses((status = 200, description = "The answer", body = BalancesResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn spendable_balances(State(node): State<Node>, headers: axum::http::HeaderMap, Path(address): Path<String>) -> ApiResult<BalancesResponse> {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let req = pb::QuerySpendableBalancesRequest { address, pagination: None };
    let r: pb::QuerySpendableBalancesResponse = routed(&node, &headers, lantau_app::bank::query::SPENDABLE_BALANCES, req).await?;
    Ok(Body(BalancesResponse { balances: json::coins(&r.balances), pagination: json::page(r.balances.len()) }))
}

#[utoipa::path(get, path = "/cosmos/bank/v1beta1/denoms_metadata", tag = "bank", summary = "Metadata of every denom",
    params(("x-cosmos-block-height" = Option<u64>, Header, description = "Answer at this height (those the node keeps: its pruning setting)")), responses((status = 200, description = "The answer", body = DenomsMetadataResponse), (status = 400, description = "A malformed request", body = ErrorBody)))]
async fn denoms_metadata(State(node): State<Node>, headers: axum::http::HeaderMap) -> ApiResult<DenomsMetadataResponse> {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let r: pb::QueryDenomsMetadataResponse = routed(&node, &headers, lantau_app::grpc::DENOMS_METADATA, pb::QueryDenomsMetadataRequest::default()).await?;
    Ok(Body(DenomsMetadataResponse { metadatas: r.metadatas.iter().map(metadata_json).collect(), pagination: json::page(r.metadatas.len()) }))
}

#[utoipa::path(get, path = "/cosmos/bank/v1beta1/denoms_metadata/{denom}", tag = "bank", summary = "Metadata of one denom",
    params(("denom" = String, Path, description = "The denom", example = "hkd.demo"), ("x-cosmos-block-height" = Option<u64>, Header, description = "Answer at this height (those the node keeps: its pruning setting)")), responses((status = 200, description = "The answer", body = DenomMetadataResponse), (status = 400, description = "A malformed request", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn denom_metadata(State(node): State<Node>, headers: axum::http::HeaderMap, Path(denom): Path<String>) -> ApiResult<DenomMetadataResponse> {
    use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
    let r: pb::QueryDenomMetadataResponse = routed(&node, &headers, lantau_app::grpc::DENOM_METADATA, pb::QueryDenomMetadataRequest { denom }).await?;
    Ok(Body(DenomMetadataResponse { metadata: r.metadata.as_ref().map(metadata_json) }))
}

/// The node's own settings a client needs: the gas price floor (1 gwei of `alantau`, as a
/// DecCoin with 18 decimals), what it keeps of history, no halt height.
#[utoipa::path(get, path = "/cosmos/base/node/v1beta1/config", tag = "node", summary = "The node's gas price floor and history window",
    responses((status = 200, description = "The answer", body = NodeConfigResponse)))]
async fn node_config(State(node): State<Node>) -> ApiResult<NodeConfigResponse> {
    use lantau_app::history::Retention;
    // As the SDK reports it: 0 with an archive (nothing pruned); without history, the versions
    // the store keeps open.
    let keep = match node.history() {
        Retention::Recent(n) => n,
        Retention::Archive => 0,
        Retention::Off => 10,
    };
    Ok(Body(NodeConfigResponse {
        minimum_gas_price: format!("{}.000000000000000000{}", lantau_primitives::MIN_GAS_PRICE, lantau_primitives::NATIVE_DENOM),
        pruning_keep_recent: keep.to_string(),
        pruning_interval: "0".into(),
        halt_height: "0".into(),
    }))
}

/// `GetBlockWithTxs`: the block and its transactions, decoded.
#[utoipa::path(get, path = "/cosmos/tx/v1beta1/txs/block/{height}", tag = "tx", summary = "A block with its transactions decoded",
    params(("height" = String, Path, description = "Block height", example = "1", pattern = "^[0-9]+$")), responses((status = 200, description = "The answer", body = BlockWithTxsResponse), (status = 400, description = "A malformed request", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn txs_of_block(State(node): State<Node>, Path(height): Path<String>) -> ApiResult<BlockWithTxsResponse> {
    let h: u64 = height.parse().map_err(|_| ApiError::invalid(format!("invalid height {height:?}")))?;
    let block = node.block(Some(h)).await?.ok_or_else(|| ApiError::not_found(format!("block {h} not found")))?;
    let Body(b) = render_block(&block)?;
    let txs = block.data.iter().map(|t| json::tx(t)).collect();
    Ok(Body(BlockWithTxsResponse { txs, block_id: b.block_id, block: b.block, pagination: json::page(block.data.len()) }))
}

// === tendermint service ===

#[utoipa::path(get, path = "/cosmos/base/tendermint/v1beta1/node_info", tag = "tendermint", summary = "Node and application versions",
    responses((status = 200, description = "The answer", body = NodeInfoResponse)))]
async fn node_info(State(node): State<Node>) -> ApiResult<NodeInfoResponse> {
    let s = node.status().await?;
    Ok(Body(NodeInfoResponse {
        default_node_info: DefaultNodeInfo {
            protocol_version: ProtocolVersion { p2p: "8".into(), block: "11".into(), app: "1".into() },
            default_node_id: s.node_id,
            listen_addr: String::new(),
            network: s.chain_id,
            version: "0.38.17".into(),
            channels: "40202122233038606100".into(),
            moniker: s.moniker,
            other: NodeInfoOther { tx_index: "on".into(), rpc_address: s.rpc_address },
        },
        application_version: VersionInfo {
            name: "lantau".into(),
            app_name: "lantaud".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_commit: String::new(),
            build_tags: String::new(),
            go_version: String::new(),
            build_deps: Vec::new(),
            cosmos_sdk_version: String::new(),
        },
    }))
}

async fn block_json(node: &Node, height: Option<u64>) -> ApiResult<BlockResponse> {
    let Some(block) = node.block(height).await? else {
        return Err(ApiError::not_found(match height {
            Some(h) => format!("block {h} not found"),
            None => "no block committed yet".to_string(),
        }));
    };
    render_block(&block)
}

fn render_block(block: &lantau_app::tendermint::Block) -> ApiResult<BlockResponse> {
    let id = crate::api::block_id(block);
    let block_json = serde_json::to_value(block).map_err(ApiError::internal)?;
    let block_id = BlockId {
        hash: B64.encode(id.hash.as_bytes()),
        part_set_header: PartSetHeader { total: id.part_set_header.total, hash: B64.encode(id.part_set_header.hash.as_bytes()) },
    };
    Ok(Body(BlockResponse { block_id, block: block_json.clone(), sdk_block: block_json }))
}

#[utoipa::path(get, path = "/cosmos/base/tendermint/v1beta1/blocks/latest", tag = "tendermint", summary = "The latest block",
    responses((status = 200, description = "The answer", body = BlockResponse), (status = 404, description = "Not found", body = ErrorBody)))]
async fn latest_block(State(node): State<Node>) -> ApiResult<BlockResponse> {
    block_json(&node, None).await
}

#[utoipa::path(get, path = "/cosmos/base/tendermint/v1beta1/blocks/{height}", tag = "tendermint", summary = "A block by height",
    params(("height" = String, Path, description = "Block height", example = "1", pattern = "^[0-9]+$")), responses((status = 200, description = "The answer", body = BlockResponse), (status = 400, description = "A malformed request", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn block_by_height(State(node): State<Node>, Path(height): Path<String>) -> ApiResult<BlockResponse> {
    let h: u64 = height.parse().map_err(|_| ApiError::invalid(format!("invalid height {height:?}")))?;
    block_json(&node, Some(h)).await
}

/// The response bodies of these routes: what the handlers serialise and, from the same
/// definitions, the schemas of the document (schemathesis checks them on a live chain).
mod bodies {
    use super::*;

    /// `{tx_response}`: the admission verdict.
    #[derive(Serialize, ToSchema)]
    pub(super) struct BroadcastResponse {
        pub(super) tx_response: TxResponse,
    }
    /// `{tx, tx_response}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct GetTxResponse {
        pub(super) tx: Option<Tx>,
        pub(super) tx_response: TxResponse,
    }
    /// `{txs, tx_responses, pagination, total}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct SearchResponse {
        pub(super) txs: Vec<Option<Tx>>,
        pub(super) tx_responses: Vec<TxResponse>,
        /// Always null: `total` and `page` page through the results.
        #[schema(value_type = Option<Object>)]
        pub(super) pagination: Option<Value>,
        /// The number of matching transactions.
        #[schema(pattern = "^[0-9]+$")]
        pub(super) total: String,
    }
    /// Gas.
    #[derive(Serialize, ToSchema)]
    pub(super) struct GasInfo {
        #[schema(pattern = "^[0-9]+$")]
        pub(super) gas_wanted: String,
        #[schema(pattern = "^[0-9]+$")]
        pub(super) gas_used: String,
    }
    /// The simulated result.
    #[derive(Serialize, ToSchema)]
    pub(super) struct SimulateResult {
        pub(super) data: String,
        pub(super) log: String,
        pub(super) events: Vec<Event>,
        pub(super) msg_responses: Vec<Value>,
    }
    /// `{gas_info, result}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct SimulateResponse {
        pub(super) gas_info: GasInfo,
        pub(super) result: SimulateResult,
    }
    /// `{account}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct AccountResponse {
        pub(super) account: BaseAccount,
    }
    /// `{address, account_number, sequence}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct NextSequenceResponse {
        pub(super) address: String,
        #[schema(pattern = "^[0-9]+$")]
        pub(super) account_number: String,
        #[schema(pattern = "^[0-9]+$")]
        pub(super) sequence: String,
    }
    /// `{balances, pagination}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct BalancesResponse {
        pub(super) balances: Vec<Coin>,
        pub(super) pagination: PageResponse,
    }
    /// `{balance}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct BalanceResponse {
        pub(super) balance: Coin,
    }
    /// `{amount}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct SupplyOfResponse {
        pub(super) amount: Coin,
    }
    /// `{supply, pagination}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct SupplyResponse {
        pub(super) supply: Vec<Coin>,
        pub(super) pagination: PageResponse,
    }
    /// Auth parameters (64-bit integers as strings).
    #[derive(Serialize, ToSchema)]
    pub(super) struct AuthParams {
        pub(super) max_memo_characters: String,
        pub(super) tx_sig_limit: String,
        pub(super) tx_size_cost_per_byte: String,
        pub(super) sig_verify_cost_ed25519: String,
        pub(super) sig_verify_cost_secp256k1: String,
    }
    /// `{params}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct AuthParamsResponse {
        pub(super) params: AuthParams,
    }
    /// Bank parameters.
    #[derive(Serialize, ToSchema)]
    pub(super) struct BankParams {
        pub(super) send_enabled: Vec<Value>,
        pub(super) default_send_enabled: bool,
    }
    /// `{params}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct BankParamsResponse {
        pub(super) params: BankParams,
    }
    /// `{metadatas, pagination}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct DenomsMetadataResponse {
        pub(super) metadatas: Vec<Metadata>,
        pub(super) pagination: PageResponse,
    }
    /// `{metadata}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct DenomMetadataResponse {
        pub(super) metadata: Option<Metadata>,
    }
    /// The node's settings.
    #[derive(Serialize, ToSchema)]
    pub(super) struct NodeConfigResponse {
        /// A DecCoin: `1000000000.000000000000000000alantau`.
        pub(super) minimum_gas_price: String,
        pub(super) pruning_keep_recent: String,
        pub(super) pruning_interval: String,
        pub(super) halt_height: String,
    }
    /// `{txs, block_id, block, pagination}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct BlockWithTxsResponse {
        pub(super) txs: Vec<Option<Tx>>,
        pub(super) block_id: BlockId,
        /// The CometBFT block, in CometBFT's JSON.
        #[schema(value_type = Object)]
        pub(super) block: Value,
        pub(super) pagination: PageResponse,
    }
    /// `{block_id, block, sdk_block}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct BlockResponse {
        pub(super) block_id: BlockId,
        /// The CometBFT block, in CometBFT's JSON.
        #[schema(value_type = Object)]
        pub(super) block: Value,
        /// The same block.
        #[schema(value_type = Object)]
        pub(super) sdk_block: Value,
    }
    /// The node's protocol versions.
    #[derive(Serialize, ToSchema)]
    pub(super) struct ProtocolVersion {
        pub(super) p2p: String,
        pub(super) block: String,
        pub(super) app: String,
    }
    /// The node's transaction index and RPC address.
    #[derive(Serialize, ToSchema)]
    pub(super) struct NodeInfoOther {
        pub(super) tx_index: String,
        pub(super) rpc_address: String,
    }
    /// CometBFT's `DefaultNodeInfo`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct DefaultNodeInfo {
        pub(super) protocol_version: ProtocolVersion,
        pub(super) default_node_id: String,
        pub(super) listen_addr: String,
        pub(super) network: String,
        pub(super) version: String,
        pub(super) channels: String,
        pub(super) moniker: String,
        pub(super) other: NodeInfoOther,
    }
    /// The application's version.
    #[derive(Serialize, ToSchema)]
    pub(super) struct VersionInfo {
        pub(super) name: String,
        pub(super) app_name: String,
        pub(super) version: String,
        pub(super) git_commit: String,
        pub(super) build_tags: String,
        pub(super) go_version: String,
        #[schema(value_type = Vec<Object>)]
        pub(super) build_deps: Vec<Value>,
        pub(super) cosmos_sdk_version: String,
    }
    /// `{default_node_info, application_version}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct NodeInfoResponse {
        pub(super) default_node_info: DefaultNodeInfo,
        pub(super) application_version: VersionInfo,
    }
}
use bodies::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forwarded_batch_reads_back_and_a_cut_one_is_refused() {
        let txs = vec![vec![1u8; 3], vec![], vec![7u8; 300]];
        let body = encode_forwarded(&txs);
        assert_eq!(decode_forwarded(&body).unwrap(), txs);
        assert!(decode_forwarded(&body[..body.len() - 1]).unwrap_err().contains("record 2"), "a cut batch names its last record");
        assert_eq!(decode_forwarded(&[]).unwrap(), Vec::<Vec<u8>>::new());
    }

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

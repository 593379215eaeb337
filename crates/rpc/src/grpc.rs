//! The gRPC server (:9090, tonic): every query method the app's one router answers
//! ([`NodeApi::query`]: the module queries, auth and bank, tx `Simulate`, and the
//! node's own below), plus tx `BroadcastTx`, with server reflection on and gRPC-web (HTTP/1.1,
//! for browsers) on the same port.
//!
//! One generic handler serves every method: tonic's unary machinery with a codec that passes
//! the protobuf bytes through, so the request goes to the router exactly as `abci_query`'s
//! does and no method is implemented twice. The height of a query comes from the
//! `x-cosmos-block-height` request header (the Cosmos SDK's) and is echoed in the response's.
//!
//! The node's queries ([`NodeQueries`], installed into the app as its query extension, so
//! `abci_query` answers them too): `cosmos.tx.v1beta1.Service` `GetTx`, `GetTxsEvent`, and
//! `cosmos.base.tendermint.v1beta1.Service` `GetNodeInfo`, `GetSyncing`, `GetLatestBlock`,
//! `GetBlockByHeight`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, BufMut};
use cosmos_sdk_proto::cosmos::base::abci::v1beta1 as abci_pb;
use cosmos_sdk_proto::cosmos::base::tendermint::v1beta1 as tm_pb;
use cosmos_sdk_proto::cosmos::tx::v1beta1 as tx_pb;
use lantau_app::grpc::{QueryExtension, QueryFuture};
use lantau_app::module_api::{decode_query, QueryError};
use prost::Message as _;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

use crate::api::{NodeApi, NodeError, TxRecord};

/// The request header that selects the height of a query (0 or absent: the latest).
pub const HEIGHT_HEADER: &str = "x-cosmos-block-height";
/// `/cosmos.tx.v1beta1.Service/BroadcastTx` (gRPC only: a query path never changes anything).
pub const BROADCAST_TX: &str = "/cosmos.tx.v1beta1.Service/BroadcastTx";

type Node = Arc<dyn NodeApi>;
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

// === the pass-through codec ===

/// A codec whose messages are the protobuf bytes themselves.
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

#[derive(Debug, Clone, Copy, Default)]
struct RawEncoder;

#[derive(Debug, Clone, Copy, Default)]
struct RawDecoder;

impl Encoder for RawEncoder {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawDecoder {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let n = src.remaining();
        Ok(Some(src.copy_to_bytes(n).to_vec()))
    }
}

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

// === the generic method ===

/// The status a query error answers.
pub fn status(e: QueryError) -> Status {
    match e {
        QueryError::NotFound(m) => Status::not_found(m),
        QueryError::InvalidArgument(m) if m.starts_with("unknown query path") => Status::unimplemented(m),
        QueryError::InvalidArgument(m) => Status::invalid_argument(m),
        QueryError::FailedPrecondition(m) => Status::failed_precondition(m),
        QueryError::Internal(m) => Status::internal(m),
    }
}

struct Unary {
    node: Node,
    method: String,
}

impl tonic::server::UnaryService<Vec<u8>> for Unary {
    type Response = Vec<u8>;
    type Future = BoxFuture<Result<tonic::Response<Vec<u8>>, Status>>;

    fn call(&mut self, req: tonic::Request<Vec<u8>>) -> Self::Future {
        let node = self.node.clone();
        let method = self.method.clone();
        Box::pin(async move {
            let height = match req.metadata().get(HEIGHT_HEADER) {
                None => 0,
                Some(v) => v
                    .to_str()
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .ok_or_else(|| Status::invalid_argument(format!("invalid {HEIGHT_HEADER} header")))?,
            };
            let body = req.into_inner();
            // Searches and the audit log take turns with the REST and RPC ones (UNAVAILABLE,
            // retryable, when no turn comes in time).
            let _turn = crate::heavy::turn_for_method(&method).await.map_err(Status::unavailable)?;
            let out = if method == BROADCAST_TX {
                broadcast(&node, &body).await.map_err(status)?
            } else {
                node.query(height, &method, &body).await.map_err(status)?
            };
            let mut resp = tonic::Response::new(out);
            let answered = if height == 0 { node.last_height().await.unwrap_or(0) } else { height };
            if let Ok(v) = answered.to_string().parse() {
                resp.metadata_mut().insert(HEIGHT_HEADER, v);
            }
            Ok(resp)
        })
    }
}

/// Serves any `/package.Service/Method` path through [`Unary`].
#[derive(Clone)]
struct Generic {
    node: Node,
}

impl<B> tower::Service<http::Request<B>> for Generic
where
    B: http_body::Body + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let svc = Unary { node: self.node.clone(), method: req.uri().path().to_string() };
        Box::pin(async move { Ok(tonic::server::Grpc::new(RawCodec).unary(svc, req).await) })
    }
}

/// The descriptors reflection serves: the chain's own protobuf packages, then the Cosmos SDK
/// services the router answers (`lantau_proto::COSMOS_FILE_DESCRIPTOR_SET`: auth and bank
/// `Query`, tx `Service`, the tendermint `Service`, with only the methods served). A file in
/// both sets (coin, pagination, the well-known types) is the same file; tonic-reflection keeps
/// the first.
fn reflection() -> Result<
    (
        tonic_reflection::server::v1::ServerReflectionServer<impl tonic_reflection::server::v1::ServerReflection>,
        tonic_reflection::server::v1alpha::ServerReflectionServer<impl tonic_reflection::server::v1alpha::ServerReflection>,
    ),
    tonic_reflection::server::Error,
> {
    let v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(lantau_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(lantau_proto::COSMOS_FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(lantau_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(lantau_proto::COSMOS_FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;
    Ok((v1, v1alpha))
}

/// The gRPC surface as a router: reflection, the generic handler, gRPC-web (HTTP/1.1, for
/// browsers) translated in front of both, and `cors` (when some origin is allowed) answering
/// gRPC-web preflights.
pub fn router(node: Node, cors: Option<tower_http::cors::CorsLayer>) -> Result<axum::Router, tonic_reflection::server::Error> {
    let (v1, v1alpha) = reflection()?;
    let grpc = tonic::service::Routes::new(v1).add_service(v1alpha).prepare().into_axum_router().fallback_service(Generic { node });
    let svc = tower::ServiceBuilder::new().option_layer(cors).layer(tonic_web::GrpcWebLayer::new()).service(grpc);
    Ok(axum::Router::new().fallback_service(svc))
}

/// Serves gRPC (HTTP/2) and gRPC-web (HTTP/1.1) on `listener` until `shutdown` resolves,
/// through the one HTTP server loop ([`crate::http::serve`]) and its `limits`: the connection
/// cap with eviction of connections that never began a call, the handshake and idle timeout,
/// requests in flight and their time.
pub async fn serve(
    listener: tokio::net::TcpListener,
    node: Node,
    cors: Option<tower_http::cors::CorsLayer>,
    limits: crate::http::HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic_reflection::server::Error> {
    crate::http::serve(listener, router(node, cors)?, limits, shutdown).await;
    Ok(())
}

// === tx BroadcastTx ===

async fn broadcast(node: &Node, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let req: tx_pb::BroadcastTxRequest = decode_query(request)?;
    if req.tx_bytes.is_empty() {
        return Err(QueryError::InvalidArgument("invalid empty tx".into()));
    }
    let mode = tx_pb::BroadcastMode::try_from(req.mode).unwrap_or(tx_pb::BroadcastMode::Unspecified);
    let r = match mode {
        tx_pb::BroadcastMode::Sync => node.broadcast_sync(req.tx_bytes).await,
        tx_pb::BroadcastMode::Async => node.broadcast_async(req.tx_bytes).await,
        _ => return Err(QueryError::InvalidArgument(format!("unsupported broadcast mode {}; supported: BROADCAST_MODE_SYNC, BROADCAST_MODE_ASYNC", req.mode))),
    };
    let tx_response = abci_pb::TxResponse {
        txhash: const_hex::encode_upper(r.hash),
        codespace: r.codespace,
        code: r.code,
        raw_log: r.log,
        gas_wanted: i64::try_from(r.gas_wanted).unwrap_or(i64::MAX),
        gas_used: i64::try_from(r.gas_used).unwrap_or(i64::MAX),
        ..Default::default()
    };
    Ok(tx_pb::BroadcastTxResponse { tx_response: Some(tx_response) }.encode_to_vec())
}

// === the node's queries ===

/// `/cosmos.tx.v1beta1.Service/GetTx`.
pub const GET_TX: &str = "/cosmos.tx.v1beta1.Service/GetTx";
/// `/cosmos.tx.v1beta1.Service/GetTxsEvent`.
pub const GET_TXS_EVENT: &str = "/cosmos.tx.v1beta1.Service/GetTxsEvent";
/// `/cosmos.base.tendermint.v1beta1.Service/GetNodeInfo`.
pub const GET_NODE_INFO: &str = "/cosmos.base.tendermint.v1beta1.Service/GetNodeInfo";
/// `/cosmos.base.tendermint.v1beta1.Service/GetSyncing`.
pub const GET_SYNCING: &str = "/cosmos.base.tendermint.v1beta1.Service/GetSyncing";
/// `/cosmos.base.tendermint.v1beta1.Service/GetLatestBlock`.
pub const GET_LATEST_BLOCK: &str = "/cosmos.base.tendermint.v1beta1.Service/GetLatestBlock";
/// `/cosmos.base.tendermint.v1beta1.Service/GetBlockByHeight`.
pub const GET_BLOCK_BY_HEIGHT: &str = "/cosmos.base.tendermint.v1beta1.Service/GetBlockByHeight";

/// Most results one GetTxsEvent page holds (the REST search's cap).
const MAX_PAGE: u64 = 100;

/// The node's queries, as the app's query extension.
pub struct NodeQueries(pub std::sync::Weak<dyn NodeApi>);

/// The one mapping from a node error to a query error: a query refused for its cost is the
/// request's fault (InvalidArgument), anything else Internal.
pub fn query_error(e: NodeError) -> QueryError {
    match e {
        NodeError::OverBudget(m) => QueryError::InvalidArgument(m),
        NodeError::Unavailable(m) | NodeError::Internal(m) => QueryError::Internal(m),
    }
}

/// A transaction record as the SDK's `TxResponse` (the decoded `Tx` inside, as an `Any`).
pub fn tx_response(rec: &TxRecord) -> abci_pb::TxResponse {
    let r = &rec.result;
    abci_pb::TxResponse {
        height: i64::try_from(rec.height).unwrap_or(i64::MAX),
        txhash: const_hex::encode_upper(rec.hash),
        codespace: r.codespace.clone(),
        code: r.code.value(),
        data: const_hex::encode_upper(&r.data),
        raw_log: r.log.clone(),
        logs: vec![],
        info: r.info.clone(),
        gas_wanted: r.gas_wanted,
        gas_used: r.gas_used,
        tx: tx_pb::Tx::decode(rec.tx.as_slice()).ok().map(|t| cosmos_sdk_proto::Any { type_url: "/cosmos.tx.v1beta1.Tx".into(), value: t.encode_to_vec() }),
        timestamp: rec.timestamp.clone(),
        events: r.events.iter().map(|e| tendermint_proto_event(e.clone())).collect(),
    }
}

fn tendermint_proto_event(e: lantau_app::tendermint::abci::Event) -> lantau_app::tendermint_proto::abci::Event {
    e.into()
}

fn block_pb(b: lantau_app::tendermint::Block) -> (lantau_app::tendermint_proto::types::BlockId, lantau_app::tendermint_proto::types::Block) {
    let id = crate::api::block_id(&b);
    (id.into(), b.into())
}

impl NodeQueries {
    /// The node's methods read its index and blocks, which have no height to choose: `_height`
    /// is not used.
    async fn answer(node: Node, _height: u64, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
        let r = match method {
            GET_TX => {
                async {
                    let req: tx_pb::GetTxRequest = decode_query(request)?;
                    let hash: [u8; 32] = hex::decode(req.hash.trim_start_matches("0x"))
                        .ok()
                        .and_then(|h| h.try_into().ok())
                        .ok_or_else(|| QueryError::InvalidArgument(format!("invalid tx hash {:?}: 64 hex digits", req.hash)))?;
                    let rec = node.tx(hash).await.map_err(query_error)?.ok_or_else(|| QueryError::NotFound(format!("tx not found: {}", req.hash)))?;
                    let tx = tx_pb::Tx::decode(rec.tx.as_slice()).ok();
                    Ok(tx_pb::GetTxResponse { tx, tx_response: Some(tx_response(&rec)) }.encode_to_vec())
                }
                .await
            }
            GET_TXS_EVENT => {
                async {
                    #[allow(deprecated)]
                    let req: tx_pb::GetTxsEventRequest = decode_query(request)?;
                    #[allow(deprecated)]
                    let q = if req.query.is_empty() { req.events.join(" AND ") } else { req.query.clone() };
                    if q.is_empty() {
                        return Err(QueryError::InvalidArgument("query cannot be empty".into()));
                    }
                    let query = q.parse().map_err(|e| QueryError::InvalidArgument(format!("invalid query {q:?}: {e:?}")))?;
                    let limit = if req.limit == 0 { MAX_PAGE } else { req.limit.min(MAX_PAGE) };
                    let page = req.page.max(1);
                    let descending = req.order_by == tx_pb::OrderBy::Desc as i32;
                    let found = node.search_txs(&query, descending, page, limit).await.map_err(query_error)?;
                    let txs = found.txs.iter().filter_map(|r| tx_pb::Tx::decode(r.tx.as_slice()).ok()).collect();
                    #[allow(deprecated)]
                    let resp =
                        tx_pb::GetTxsEventResponse { txs, tx_responses: found.txs.iter().map(tx_response).collect(), pagination: None, total: found.total };
                    Ok(resp.encode_to_vec())
                }
                .await
            }
            GET_NODE_INFO => {
                async {
                    let s = node.status().await.map_err(query_error)?;
                    let info = lantau_app::tendermint_proto::p2p::DefaultNodeInfo {
                        protocol_version: Some(lantau_app::tendermint_proto::p2p::ProtocolVersion { p2p: 8, block: 11, app: 1 }),
                        default_node_id: s.node_id.clone(),
                        listen_addr: String::new(),
                        network: s.chain_id.clone(),
                        version: "0.38.17".into(),
                        channels: vec![],
                        moniker: s.moniker.clone(),
                        other: None,
                    };
                    let app = tm_pb::VersionInfo {
                        name: "lantau".into(),
                        app_name: "lantaud".into(),
                        version: env!("CARGO_PKG_VERSION").into(),
                        ..Default::default()
                    };
                    Ok(tm_pb::GetNodeInfoResponse { default_node_info: Some(info), application_version: Some(app) }.encode_to_vec())
                }
                .await
            }
            GET_SYNCING => Ok(tm_pb::GetSyncingResponse { syncing: false }.encode_to_vec()),
            GET_LATEST_BLOCK | GET_BLOCK_BY_HEIGHT => {
                async {
                    let h = if method == GET_LATEST_BLOCK {
                        None
                    } else {
                        let req: tm_pb::GetBlockByHeightRequest = decode_query(request)?;
                        let latest = node.status().await.map_err(query_error)?.latest_height;
                        let h = u64::try_from(req.height).map_err(|_| QueryError::InvalidArgument("height must be positive".into()))?;
                        if h == 0 || h > latest {
                            return Err(QueryError::InvalidArgument(format!("requested block height {h} is out of range (latest {latest})")));
                        }
                        Some(h)
                    };
                    let b = node.block(h).await.map_err(query_error)?.ok_or_else(|| QueryError::NotFound(format!("block {} not found", h.unwrap_or(0))))?;
                    let (block_id, block) = block_pb(b);
                    if method == GET_LATEST_BLOCK {
                        #[allow(deprecated)]
                        let r = tm_pb::GetLatestBlockResponse { block_id: Some(block_id), block: Some(block), sdk_block: None };
                        Ok(r.encode_to_vec())
                    } else {
                        #[allow(deprecated)]
                        let r = tm_pb::GetBlockByHeightResponse { block_id: Some(block_id), block: Some(block), sdk_block: None };
                        Ok(r.encode_to_vec())
                    }
                }
                .await
            }
            _ => return None,
        };
        Some(r)
    }
}

impl QueryExtension for NodeQueries {
    fn query<'a>(&'a self, height: u64, method: &'a str, request: &'a [u8]) -> QueryFuture<'a> {
        Box::pin(async move {
            let node = self.0.upgrade()?;
            Self::answer(node, height, method, request).await
        })
    }
}

//! Lantau's servers, all talking to "the node" through one interface, [`NodeApi`].
//!
//! - [`rest`]: the Cosmos REST surface (gRPC-gateway JSON) on :1317: the standard tx service
//!   (broadcast, get, search, simulate), auth accounts, bank balances, node info.
//! - [`cometbft`]: the CometBFT-compatible RPC on :26657, JSON-RPC over HTTP (POST and URI
//!   forms) and over WebSocket with `subscribe`/`unsubscribe`, in CometBFT's JSON shapes.
//! - [`eth`]: the Ethereum JSON-RPC on :8545 (HTTP) and :8546 (WebSocket).
//! - [`grpc`]: the gRPC server on :9090 (tonic; reflection, gRPC-web), every method through
//!   the app's one query router.
//! - [`http`]: the one HTTP server loop behind all of them, with its connection, time, size and
//!   in-flight limits.
//! - [`envelope`]: the JSON-RPC envelope's limits (ids, method names, batches) of both JSON-RPC
//!   servers.
//! - [`api`]: the [`NodeApi`] trait, the records it returns and its error, [`NodeError`]. The
//!   servers reach the state machine only through it (never the app as a whole); the embedded
//!   node and the CometBFT-backed node implement it.
//! - [`error`]: the gRPC-status error body `{code, message, details}` and its HTTP mapping.

#![cfg_attr(test, allow(unused_crate_dependencies))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // not state-machine code

pub mod api;
pub mod cometbft;
pub mod envelope;
pub mod error;
pub mod eth;
pub mod grpc;
pub mod heavy;
pub mod http;
pub mod json;
pub mod modules;
pub mod openapi;
pub mod rest;

pub use api::{BroadcastResult, NodeApi, NodeError, NodeEvent, NodeStatus, TxRecord};

/// The CORS layer for the HTTP surfaces (REST, CometBFT RPC, Ethereum JSON-RPC, gRPC-web):
/// `None` when no origin is allowed (no CORS headers at all); `*` allows any origin. Preflights
/// are answered for GET and POST with any request header; `x-cosmos-block-height` is exposed.
/// An origin that is not a valid header value is skipped with a warning.
pub fn cors(allowed: &[String]) -> Option<tower_http::cors::CorsLayer> {
    use tower_http::cors::{AllowOrigin, Any, CorsLayer};
    if allowed.is_empty() {
        return None;
    }
    let origin = if allowed.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        let list: Vec<axum::http::HeaderValue> = allowed
            .iter()
            .filter_map(|o| match o.parse() {
                Ok(v) => Some(v),
                Err(_) => {
                    tracing::warn!(origin = %o, "cors_allowed_origins: not a valid origin; ignored");
                    None
                }
            })
            .collect();
        AllowOrigin::list(list)
    };
    Some(
        CorsLayer::new()
            .allow_origin(origin)
            .allow_methods([axum::http::Method::GET, axum::http::Method::POST])
            .allow_headers(Any)
            .expose_headers([axum::http::HeaderName::from_static(grpc::HEIGHT_HEADER)])
            .max_age(std::time::Duration::from_secs(3600)),
    )
}

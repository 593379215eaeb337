//! Lantau's two web faces, each a small axum server with its pages compiled into the binary:
//!
//! - [`portal`]: the onboarding portal of a test network (`lantaud portal`, `lantaud start
//!   --portal`): native and HKD faucets, identity applications proven by a Sign-In with
//!   Ethereum challenge, personal data kept off chain in the portal's own database.
//! - [`console`]: the reviewers' console (`lantaud console --key NAME`): the flag worklist,
//!   the case view, dashboards and the audit log explorer, with the key's review actions.
//!
//! Both talk to a node only through its public REST surface (the same queries any client
//! uses) and send transactions through [`lantau_client::sender`]. The wire format is in
//! `docs/web-api.md`.

#![cfg_attr(test, allow(unused_crate_dependencies))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // off-chain services, not state machine

pub mod console;
mod error;
pub mod portal;
mod portal_openapi;
pub mod siwe;
mod store;

pub use error::ApiError;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// The pages and their libraries (`crates/web/assets`), compiled into the binary.
#[derive(rust_embed::Embed)]
#[folder = "assets/"]
struct Assets;

/// Serves `path` from the embedded assets (404 when absent).
fn asset(path: &str) -> Response {
    match Assets::get(path) {
        Some(file) => {
            let mime = file.metadata.mimetype().to_string();
            ([(header::CONTENT_TYPE, mime), (header::CACHE_CONTROL, "no-cache".to_string())], file.data.into_owned()).into_response()
        }
        None => ApiError::new(StatusCode::NOT_FOUND, "not_found", format!("no asset {path}")).into_response(),
    }
}

/// A random token of `n` bytes, hex.
fn random_hex(n: usize) -> String {
    use rand::RngCore as _;
    let mut b = vec![0u8; n];
    rand::rngs::OsRng.fill_bytes(&mut b);
    hex::encode(b)
}

/// Compares two secrets in time independent of where they differ.
fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// RFC 3339 of a wall-clock time (these services are off chain).
fn rfc3339(t: time::OffsetDateTime) -> String {
    t.replace_nanosecond(0).unwrap_or(t).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// The limits every web face serves under (the node's own server loop and its defaults).
fn http_limits() -> lantau_rpc::http::HttpLimits {
    lantau_rpc::http::HttpLimits::default()
}

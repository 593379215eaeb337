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
    const_hex::encode(b)
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

/// The Ethereum chain id of a Lantau network (a fixed decision clients depend on), when the
/// node's JSON-RPC does not say.
const DEFAULT_EVM_CHAIN_ID: u64 = 852;

/// The EVM chain id the node's Ethereum JSON-RPC at `url` answers.
async fn evm_chain_id(url: &str) -> Option<u64> {
    let http = reqwest::Client::builder().timeout(std::time::Duration::from_secs(3)).build().ok()?;
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []});
    let v: serde_json::Value = http.post(url).json(&body).send().await.ok()?.json().await.ok()?;
    u64::from_str_radix(v["result"].as_str()?.trim_start_matches("0x"), 16).ok()
}

/// The scheme and `host:port` browsers reach a service at (its public URL, else
/// `http://<listen>`): a sign-in message's domain.
fn scheme_and_domain(public_url: Option<&str>, listen: std::net::SocketAddr) -> (String, String) {
    let public = public_url.map(str::to_string).unwrap_or_else(|| format!("http://{listen}"));
    public.trim_end_matches('/').split_once("://").map(|(s, d)| (s.to_string(), d.to_string())).unwrap_or(("http".into(), public.clone()))
}

/// The limits every web face serves under (the node's own server loop and its defaults).
fn http_limits() -> lantau_rpc::http::HttpLimits {
    lantau_rpc::http::HttpLimits::default()
}

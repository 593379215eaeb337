//! The web faces' one error type: `{code, message}` plus the fields a kind carries, with the
//! HTTP status that says which kind (the table in `docs/web-api.md`).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

/// An error answer.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Machine-readable slug (`rate_limited`, `bad_signature`…).
    pub code: &'static str,
    /// A sentence for a person.
    pub message: String,
    /// Further fields (`retry_after_secs`, `tx_code`…).
    pub extra: Map<String, Value>,
}

impl ApiError {
    /// An error without further fields.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), extra: Map::new() }
    }

    /// Adds a field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.to_string(), value.into());
        self
    }

    /// 400 `malformed_body`.
    pub fn malformed(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "malformed_body", message)
    }

    /// 400 `invalid_request`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    /// 400 `invalid_address`.
    pub fn invalid_address(given: &str, why: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_address", format!("{given:?} is not an address (bech32 lantau1… or 0x + 40 hex digits): {why}"))
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 502 `node_unavailable`, from a client failure.
    pub fn node(e: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::BAD_GATEWAY, "node_unavailable", format!("the node did not answer as expected: {e}"))
    }

    /// 422 `tx_refused`: the chain refused or failed a transaction.
    pub fn tx_refused(what: &str, txhash: &str, code: u32, codespace: &str, raw_log: &str) -> Self {
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "tx_refused",
            format!("{what}: the chain refused the transaction (codespace {codespace}, code {code}): {raw_log}"),
        )
        .with("tx_hash", txhash)
        .with("tx_code", code)
        .with("codespace", codespace)
        .with("raw_log", raw_log)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = Map::new();
        body.insert("code".into(), json!(self.code));
        body.insert("message".into(), json!(self.message));
        let retry = self.extra.get("retry_after_secs").and_then(Value::as_u64);
        body.extend(self.extra);
        let mut resp = (self.status, axum::Json(Value::Object(body))).into_response();
        if let Some(secs) = retry {
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        resp
    }
}

/// A JSON body, with a malformed one answered as [`ApiError::malformed`] (axum's own rejection
/// is plain text).
#[derive(Debug)]
pub(crate) struct Body<T>(pub(crate) T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> axum::extract::FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(Body(v)),
            Err(e) => Err(ApiError::malformed(format!("the body must be a JSON object as docs/web-api.md shows: {}", e.body_text()))),
        }
    }
}

//! JSON-RPC 2.0: envelopes, error objects, request parsing and parameter decoding for both the
//! JSON form (`{"params":{...}}` or positional `[...]`) and CometBFT's URI form
//! (`/tx_search?query="tx.height=5"`).

use axum::http::StatusCode;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::methods;

// === errors ===

/// A JSON-RPC error object (`{code, message, data}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RpcError {
    /// The JSON-RPC error code.
    pub(crate) code: i64,
    /// The standard message for the code.
    pub(crate) message: &'static str,
    /// The reason, in words.
    pub(crate) data: String,
}

impl RpcError {
    fn new(code: i64, message: &'static str, data: impl Into<String>) -> Self {
        Self { code, message, data: data.into() }
    }

    /// -32700: the body is not JSON.
    pub(crate) fn parse(data: impl Into<String>) -> Self {
        Self::new(-32700, "Parse error", data)
    }

    /// -32600: JSON, but not a request object.
    pub(crate) fn invalid_request(data: impl Into<String>) -> Self {
        Self::new(-32600, "Invalid Request", data)
    }

    /// -32601: no such method.
    pub(crate) fn method_not_found(method: &str) -> Self {
        Self::new(-32601, "Method not found", format!("unknown method {method:?}"))
    }

    /// -32602: a parameter is missing or malformed.
    pub(crate) fn invalid_params(data: impl Into<String>) -> Self {
        Self::new(-32602, "Invalid params", data)
    }

    /// -32603: the method failed.
    pub(crate) fn internal(data: impl Into<String>) -> Self {
        Self::new(-32603, "Internal error", data)
    }

    /// -32005: a limit of the server was reached (subscriptions per connection); the data
    /// says which and what to do. The code Ethereum's JSON-RPC uses for the same (EIP-1474).
    pub(crate) fn limit_exceeded(data: impl Into<String>) -> Self {
        Self::new(-32005, "Limit exceeded", data)
    }

    /// -32000: a server-side condition (CometBFT uses it to cancel subscriptions).
    pub(crate) fn server(data: impl Into<String>) -> Self {
        Self::new(-32000, "Server error", data)
    }

    /// The HTTP status CometBFT answers URI requests failing with this error.
    pub(crate) fn http_status(&self) -> StatusCode {
        match self.code {
            -32600 => StatusCode::BAD_REQUEST,
            -32601 => StatusCode::NOT_FOUND,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn to_json(&self) -> Value {
        json!({ "code": self.code, "message": self.message, "data": self.data })
    }
}

/// Wraps an internal failure (a rendering that failed) as -32603.
pub(crate) fn internal(e: impl std::fmt::Display) -> RpcError {
    RpcError::internal(e.to_string())
}

/// The one mapping from a node error: a query refused for its cost is -32005 Limit exceeded,
/// anything else -32603.
pub(crate) fn node_error(e: crate::api::NodeError) -> RpcError {
    use crate::api::NodeError as N;
    match e {
        N::OverBudget(m) => RpcError::limit_exceeded(m),
        N::Unavailable(m) | N::Internal(m) => RpcError::internal(m),
    }
}

// === envelopes ===

/// `{"jsonrpc":"2.0","id":..,"result":..}`.
pub(crate) fn success(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// `{"jsonrpc":"2.0","id":..,"error":{..}}`.
pub(crate) fn failure(id: &Value, err: &RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": err.to_json() })
}

/// Either envelope, from a method's outcome.
pub(crate) fn envelope(id: &Value, outcome: Result<Value, RpcError>) -> Value {
    match outcome {
        Ok(v) => success(id, v),
        Err(e) => failure(id, &e),
    }
}

// === requests ===

/// One parsed request: the id to echo, the method and its named parameters.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The id, echoed in the response (`null` when absent).
    pub(crate) id: Value,
    /// The method name.
    pub(crate) method: String,
    /// The parameters by name.
    pub(crate) params: Params,
}

/// Checks a JSON value is a request for a known method and names its parameters. The error is
/// the id to answer with and the reason.
pub(crate) fn parse_request(v: Value) -> Result<Request, (Value, RpcError)> {
    let Value::Object(mut obj) = v else {
        return Err((Value::Null, RpcError::invalid_request("a request must be a JSON object")));
    };
    let id = obj.remove("id").unwrap_or(Value::Null);
    // An id or a method name over the envelope's limits is refused, not echoed.
    if let Err(e) = crate::envelope::check_id(&id) {
        return Err((Value::Null, RpcError::invalid_request(e.to_string())));
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        _ => return Err((id, RpcError::invalid_request("method must be a string"))),
    };
    if let Err(e) = crate::envelope::check_method(&method) {
        return Err((id, RpcError::invalid_request(e.to_string())));
    }
    let Some(names) = methods::arg_names(&method) else {
        return Err((id, RpcError::method_not_found(&method)));
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(Value::Array(items)) => {
            if items.len() > names.len() {
                let e = format!("{method} takes at most {} positional parameters, got {}", names.len(), items.len());
                return Err((id, RpcError::invalid_params(e)));
            }
            names.iter().map(|n| n.to_string()).zip(items).collect()
        }
        Some(_) => return Err((id, RpcError::invalid_params("params must be an object or an array"))),
    };
    Ok(Request { id, method, params: Params::Json(params) })
}

// === parameters ===

/// A request's parameters, in the form they arrived.
#[derive(Debug, Clone)]
pub(crate) enum Params {
    /// JSON-RPC: values are JSON (strings for 64-bit integers and bytes, as CometBFT sends).
    Json(Map<String, Value>),
    /// URI form: raw query-string values (strings double-quoted, bytes `0x` hex).
    Uri(Vec<(String, String)>),
}

enum Raw<'a> {
    Json(&'a Value),
    Uri(&'a str),
}

/// Strips one pair of surrounding double quotes.
fn unquote(s: &str) -> (&str, bool) {
    match s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => (inner, true),
        None => (s, false),
    }
}

fn bad(name: &str, what: &str) -> RpcError {
    RpcError::invalid_params(format!("invalid parameter {name}: {what}"))
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    hex::decode(s).ok()
}

fn decode_base64(s: &str) -> Option<Vec<u8>> {
    // A `+` in an unescaped URI arrives as a space; base64 never has spaces.
    let s = s.trim().replace(' ', "+");
    let e = &base64::engine::general_purpose::STANDARD;
    e.decode(&s).ok().or_else(|| base64::engine::general_purpose::URL_SAFE.decode(&s).ok())
}

impl Params {
    fn raw(&self, name: &str) -> Option<Raw<'_>> {
        match self {
            Params::Json(m) => m.get(name).filter(|v| !v.is_null()).map(Raw::Json),
            Params::Uri(pairs) => pairs.iter().find(|(k, _)| k == name).map(|(_, v)| Raw::Uri(v.as_str())),
        }
    }

    /// A string (URI form: quoted or not).
    pub(crate) fn string(&self, name: &str) -> Result<Option<String>, RpcError> {
        match self.raw(name) {
            None => Ok(None),
            Some(Raw::Json(Value::String(s))) => Ok(Some(s.clone())),
            Some(Raw::Json(_)) => Err(bad(name, "expected a string")),
            Some(Raw::Uri(s)) => Ok(Some(unquote(s).0.to_string())),
        }
    }

    /// A non-negative integer, as a number or a decimal string; an empty string is absent.
    pub(crate) fn u64(&self, name: &str) -> Result<Option<u64>, RpcError> {
        let text = match self.raw(name) {
            None => return Ok(None),
            Some(Raw::Json(Value::Number(n))) => return n.as_u64().map(Some).ok_or_else(|| bad(name, "expected a non-negative integer")),
            Some(Raw::Json(Value::String(s))) => s.as_str(),
            Some(Raw::Json(_)) => return Err(bad(name, "expected an integer")),
            Some(Raw::Uri(s)) => unquote(s).0,
        };
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        text.parse().map(Some).map_err(|_| bad(name, &format!("expected a non-negative integer, got {text:?}")))
    }

    /// A boolean (`true`/`false`, also quoted).
    pub(crate) fn bool(&self, name: &str) -> Result<Option<bool>, RpcError> {
        let text = match self.raw(name) {
            None => return Ok(None),
            Some(Raw::Json(Value::Bool(b))) => return Ok(Some(*b)),
            Some(Raw::Json(Value::String(s))) => s.as_str(),
            Some(Raw::Json(_)) => return Err(bad(name, "expected a boolean")),
            Some(Raw::Uri(s)) => unquote(s).0,
        };
        match text {
            "" => Ok(None),
            "true" => Ok(Some(true)),
            "false" => Ok(Some(false)),
            other => Err(bad(name, &format!("expected true or false, got {other:?}"))),
        }
    }

    /// Transaction bytes: base64 in JSON; `0x` hex or quoted base64 in a URI.
    pub(crate) fn tx_bytes(&self, name: &str) -> Result<Option<Vec<u8>>, RpcError> {
        let decoded = match self.raw(name) {
            None => return Ok(None),
            Some(Raw::Json(Value::String(s))) => decode_base64(s).or_else(|| s.starts_with("0x").then(|| decode_hex(s)).flatten()),
            Some(Raw::Json(_)) => return Err(bad(name, "expected a base64 string")),
            Some(Raw::Uri(s)) => match unquote(s) {
                (inner, true) => decode_base64(inner),
                (s, false) if s.starts_with("0x") || s.starts_with("0X") => decode_hex(s),
                (s, false) => decode_base64(s).or_else(|| decode_hex(s)),
            },
        };
        decoded.map(Some).ok_or_else(|| bad(name, "expected base64 (or 0x-prefixed hex) bytes"))
    }

    /// Hex bytes (`0x` optional, also quoted), as CometBFT's `HexBytes`.
    pub(crate) fn hex_bytes(&self, name: &str) -> Result<Option<Vec<u8>>, RpcError> {
        let text = match self.raw(name) {
            None => return Ok(None),
            Some(Raw::Json(Value::String(s))) => s.as_str(),
            Some(Raw::Json(_)) => return Err(bad(name, "expected a hex string")),
            Some(Raw::Uri(s)) => unquote(s).0,
        };
        decode_hex(text).map(Some).ok_or_else(|| bad(name, "expected hex bytes"))
    }

    /// A 32-byte hash: hex (`0x` optional) or base64 (what CometBFT's JSON-RPC `tx` takes).
    pub(crate) fn hash(&self, name: &str) -> Result<Option<[u8; 32]>, RpcError> {
        let text = match self.raw(name) {
            None => return Ok(None),
            Some(Raw::Json(Value::String(s))) => s.as_str(),
            Some(Raw::Json(_)) => return Err(bad(name, "expected a hex or base64 string")),
            Some(Raw::Uri(s)) => unquote(s).0,
        };
        let stripped = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).unwrap_or(text);
        let bytes = if stripped.len() == 64 { decode_hex(stripped) } else { None }.or_else(|| decode_base64(text));
        match bytes.map(<[u8; 32]>::try_from) {
            Some(Ok(h)) => Ok(Some(h)),
            _ => Err(bad(name, "expected a 32-byte hash as hex or base64")),
        }
    }
}

//! The JSON-RPC envelope's limits, shared by the Ethereum JSON-RPC and the CometBFT RPC: how
//! long an id and a method name may be, how many requests a batch holds and how large its
//! answer may grow. Everything a client sends that an answer echoes is bounded here, so an
//! answer is never larger than what the methods themselves return.
//!
//! Batch limits are geth's (`BatchRequestLimit`, `BatchResponseMaxSize`); geth has no id or
//! method-name limit, so those are ours (docs/decisions.md, "Limits of the JSON-RPC servers").

use serde_json::Value;

/// The most requests in one batch (geth's).
pub const MAX_BATCH: usize = 1_000;
/// The most bytes of answers one batch gathers (geth's 25 MB); the requests after the one that
/// crossed it are not run and answer [`response_too_large`].
pub const MAX_BATCH_RESPONSE_BYTES: usize = 25_000_000;
/// The longest id, as JSON text (a quoted string's quotes and escapes count).
pub const MAX_ID_BYTES: usize = 256;
/// The longest method name (far above any method served).
pub const MAX_METHOD_BYTES: usize = 128;

/// Why a request's envelope is refused (-32600 Invalid Request on both servers; the refusal
/// answers with a `null` id, never the offending one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// The id is an object, an array or a boolean.
    #[error("id must be a string, a number or null")]
    IdType,
    /// The id's JSON is longer than [`MAX_ID_BYTES`].
    #[error("id of {0} bytes is over {MAX_ID_BYTES}")]
    IdTooLong(usize),
    /// The method name is longer than [`MAX_METHOD_BYTES`].
    #[error("method name of {0} bytes is over {MAX_METHOD_BYTES}")]
    MethodTooLong(usize),
}

/// Checks a request's id (absent: `null`).
pub fn check_id(id: &Value) -> Result<(), EnvelopeError> {
    match id {
        Value::Null | Value::Number(_) => Ok(()),
        Value::String(_) => match json_len(id) {
            n if n > MAX_ID_BYTES => Err(EnvelopeError::IdTooLong(n)),
            _ => Ok(()),
        },
        _ => Err(EnvelopeError::IdType),
    }
}

/// Checks a method name's length.
pub fn check_method(method: &str) -> Result<(), EnvelopeError> {
    if method.len() > MAX_METHOD_BYTES {
        return Err(EnvelopeError::MethodTooLong(method.len()));
    }
    Ok(())
}

/// The length of `v` as compact JSON, without building the text.
pub fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing a `Value` to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// The answers of a batch so far, and whether they crossed [`MAX_BATCH_RESPONSE_BYTES`].
#[derive(Debug, Default)]
pub struct BatchBudget {
    bytes: usize,
}

impl BatchBudget {
    /// Whether the answers so far leave room for another request to run.
    pub fn has_room(&self) -> bool {
        self.bytes <= MAX_BATCH_RESPONSE_BYTES
    }

    /// Counts one answer.
    pub fn add(&mut self, answer: &Value) {
        self.bytes = self.bytes.saturating_add(json_len(answer)).saturating_add(1);
    }
}

/// The reason given to the requests of a batch that were not run because its answers grew
/// over [`MAX_BATCH_RESPONSE_BYTES`].
pub fn response_too_large() -> String {
    format!("response too large: a batch's answers are limited to {MAX_BATCH_RESPONSE_BYTES} bytes; send the rest in another batch")
}

/// The reason given to a batch of more than [`MAX_BATCH`] requests.
pub fn batch_too_large(n: usize) -> String {
    format!("batch of {n} requests is over {MAX_BATCH}")
}

/// The id of a request to echo in its answer: its own when [`check_id`] accepts it, else
/// `null`.
pub fn echo_id(req: &Value) -> Value {
    match req.get("id") {
        Some(id) if check_id(id).is_ok() => id.clone(),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_and_method_names_are_bounded() {
        assert!(check_id(&json!(null)).is_ok());
        assert!(check_id(&json!(7)).is_ok());
        assert!(check_id(&json!("a".repeat(MAX_ID_BYTES - 2))).is_ok());
        assert_eq!(check_id(&json!("a".repeat(MAX_ID_BYTES - 1))), Err(EnvelopeError::IdTooLong(MAX_ID_BYTES + 1)));
        assert_eq!(check_id(&json!({"a": 1})), Err(EnvelopeError::IdType));
        assert_eq!(check_id(&json!([1])), Err(EnvelopeError::IdType));
        assert!(check_method(&"m".repeat(MAX_METHOD_BYTES)).is_ok());
        assert_eq!(check_method(&"m".repeat(MAX_METHOD_BYTES + 1)), Err(EnvelopeError::MethodTooLong(MAX_METHOD_BYTES + 1)));
        assert_eq!(echo_id(&json!({"id": "x".repeat(1 << 20)})), Value::Null);
        assert_eq!(echo_id(&json!({"id": "x"})), json!("x"));
    }

    #[test]
    fn json_len_is_the_compact_text_length() {
        let v = json!({"a": [1, "é\"", null]});
        assert_eq!(json_len(&v), serde_json::to_string(&v).unwrap_or_default().len());
        let mut b = BatchBudget::default();
        assert!(b.has_room());
        b.add(&json!("x".repeat(MAX_BATCH_RESPONSE_BYTES)));
        assert!(!b.has_room());
    }
}

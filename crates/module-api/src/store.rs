//! Metered typed access to cnidarium, used by every module's `state.rs`.

use cnidarium::{StateRead, StateWrite};

use crate::error::{internal, TxError};
use crate::gas::GasMeter;

/// Reads a verifiable key, charging gas for key and value bytes.
pub async fn get<S: StateRead + ?Sized>(
    state: &S,
    gas: &GasMeter,
    key: &str,
) -> Result<Option<Vec<u8>>, TxError> {
    let v = state.get_raw(key).await.map_err(internal)?;
    gas.read(key.len(), v.as_ref().map_or(0, |v| v.len()))?;
    Ok(v)
}

/// Writes a verifiable key, charging gas for key and value bytes.
pub fn put<S: StateWrite + ?Sized>(
    state: &mut S,
    gas: &GasMeter,
    key: String,
    value: Vec<u8>,
) -> Result<(), TxError> {
    gas.write(key.len(), value.len())?;
    state.put_raw(key, value);
    Ok(())
}

/// Deletes a verifiable key, charging gas.
pub fn delete<S: StateWrite + ?Sized>(
    state: &mut S,
    gas: &GasMeter,
    key: String,
) -> Result<(), TxError> {
    gas.delete()?;
    state.delete(key);
    Ok(())
}

/// Decodes a protobuf record read from state; a record that does not decode is an internal
/// error (state is only written by this code), never a panic.
pub fn decode<M: prost::Message + Default>(bytes: &[u8], what: &str) -> Result<M, TxError> {
    M::decode(bytes).map_err(|e| internal(format!("corrupt {what} record: {e}")))
}

/// Reads and decodes a protobuf record, charging gas.
pub async fn get_proto<S: StateRead + ?Sized, M: prost::Message + Default>(
    state: &S,
    gas: &GasMeter,
    key: &str,
) -> Result<Option<M>, TxError> {
    match get(state, gas, key).await? {
        Some(b) => Ok(Some(decode(&b, key)?)),
        None => Ok(None),
    }
}

/// Encodes and writes a protobuf record, charging gas.
pub fn put_proto<S: StateWrite + ?Sized, M: prost::Message>(
    state: &mut S,
    gas: &GasMeter,
    key: String,
    record: &M,
) -> Result<(), TxError> {
    put(state, gas, key, record.encode_to_vec())
}

/// Every (key, value) under `prefix`, in key order. Unmetered: for queries and genesis export,
/// never for handlers (a prefix scan in a handler would be unbounded work without gas).
pub async fn scan_prefix<S: StateRead + ?Sized>(state: &S, prefix: &str) -> Result<Vec<(String, Vec<u8>)>, TxError> {
    use futures::StreamExt;
    let mut stream = std::pin::pin!(state.prefix_raw(prefix));
    let mut out = Vec::new();
    while let Some(item) = stream.next().await {
        out.push(item.map_err(internal)?);
    }
    Ok(out)
}

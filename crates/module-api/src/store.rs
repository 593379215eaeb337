//! Metered typed access to cnidarium, used by every module's `state.rs`, and the store's
//! fault latch: every read or write the store could not do is recorded here ([`fault`],
//! [`read_failed`]) so the node stops instead of answering from a store it cannot read
//! (docs/decisions.md, "The corruption policy").

use cnidarium::{StateRead, StateWrite};

use crate::error::{internal, TxError};
use crate::gas::GasMeter;

/// Reads a verifiable key, charging gas for key and value bytes.
pub async fn get<S: StateRead + ?Sized>(state: &S, gas: &GasMeter, key: &str) -> Result<Option<Vec<u8>>, TxError> {
    let v = state.get_raw(key).await.map_err(|e| read_failed(key, e))?;
    gas.read(key.len(), v.as_ref().map_or(0, |v| v.len()))?;
    Ok(v)
}

/// Writes a verifiable key, charging gas for key and value bytes.
pub fn put<S: StateWrite + ?Sized>(state: &mut S, gas: &GasMeter, key: String, value: Vec<u8>) -> Result<(), TxError> {
    gas.write(key.len(), value.len())?;
    state.put_raw(key, value);
    Ok(())
}

/// Writes a verifiable key that every transaction of its kind rewrites (a counter), charging
/// [`crate::gas::SINGLETON_WRITE`]: its leaf is updated once per block however many write it.
pub fn put_singleton<S: StateWrite + ?Sized>(state: &mut S, gas: &GasMeter, key: String, value: Vec<u8>) -> Result<(), TxError> {
    gas.singleton()?;
    state.put_raw(key, value);
    Ok(())
}

/// Deletes a verifiable key, charging gas.
pub fn delete<S: StateWrite + ?Sized>(state: &mut S, gas: &GasMeter, key: String) -> Result<(), TxError> {
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
pub async fn get_proto<S: StateRead + ?Sized, M: prost::Message + Default>(state: &S, gas: &GasMeter, key: &str) -> Result<Option<M>, TxError> {
    match get(state, gas, key).await? {
        Some(b) => Ok(Some(decode(&b, key)?)),
        None => Ok(None),
    }
}

/// Encodes and writes a protobuf record, charging gas.
pub fn put_proto<S: StateWrite + ?Sized, M: prost::Message>(state: &mut S, gas: &GasMeter, key: String, record: &M) -> Result<(), TxError> {
    put(state, gas, key, record.encode_to_vec())
}

/// Every (key, value) under `prefix`, in key order. Unmetered: for queries and genesis export,
/// never for handlers (a prefix scan in a handler would be unbounded work without gas).
pub async fn scan_prefix<S: StateRead + ?Sized>(state: &S, prefix: &str) -> Result<Vec<(String, Vec<u8>)>, TxError> {
    use futures::StreamExt;
    let mut stream = std::pin::pin!(state.prefix_raw(prefix));
    let mut out = Vec::new();
    while let Some(item) = stream.next().await {
        out.push(item.map_err(|e| read_failed(prefix, e))?);
    }
    Ok(out)
}

/// `app/block_time` → i128 big-endian unix nanoseconds of the last executed block (the app
/// writes it as each block begins).
pub const BLOCK_TIME_KEY: &str = "app/block_time";
/// `app/genesis_time` → i128 big-endian unix nanoseconds of genesis.
pub const GENESIS_TIME_KEY: &str = "app/genesis_time";

/// The time of a state: its last block's time (genesis time before the first block; the unix
/// epoch in a state with neither). For queries that judge a record by "now", e.g. a deadline:
/// the answer at a height is the answer as of that block.
pub async fn state_time<S: StateRead + ?Sized>(state: &S) -> Result<time::OffsetDateTime, TxError> {
    let raw = match state.get_raw(BLOCK_TIME_KEY).await.map_err(|e| read_failed(BLOCK_TIME_KEY, e))? {
        Some(b) => Some(b),
        None => state.get_raw(GENESIS_TIME_KEY).await.map_err(|e| read_failed(GENESIS_TIME_KEY, e))?,
    };
    let nanos = match raw {
        Some(b) => i128::from_be_bytes(b.as_slice().try_into().map_err(|_| internal(format!("{BLOCK_TIME_KEY}: {} bytes, not 16", b.len())))?),
        None => 0,
    };
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos).map_err(|e| internal(format!("{BLOCK_TIME_KEY}: {e}")))
}

// === store faults ===

/// A read or write the store could not do: a RocksDB error (a block checksum mismatch, a
/// missing or unreadable file, an I/O error), a Merkle tree node missing, a store task that
/// failed. Never "absent": a node that met one stops (docs/decisions.md, "The corruption
/// policy").
#[derive(Debug, Clone, thiserror::Error)]
#[error("the app store failed while {context}: {detail}; the node stops rather than answer from a store it cannot read: restore the node's state from a snapshot of an intact node or by state sync (docs/operations.md, \"A damaged store\")")]
pub struct StoreFault {
    /// What was being read or written (a key, a prefix, a commit).
    pub context: String,
    /// The store's own error (RocksDB names the file and offset of a damaged block).
    pub detail: String,
}

/// The first fault of this process's store (one store per node process).
static FAULT: std::sync::OnceLock<StoreFault> = std::sync::OnceLock::new();
/// Wakes [`faulted`] waiters.
static FAULTED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Records a store failure met while `context` (the first one is kept and logged) and returns
/// it. Work the store did not do because the runtime is stopping ([`lantau_store::Stopping`]:
/// the process is shutting down) is returned as an error but not recorded: nothing is wrong
/// with the store, and in a process that runs several stores (the replicas of a test) the
/// others go on.
pub fn fault(context: impl std::fmt::Display, e: impl Into<anyhow::Error>) -> StoreFault {
    let e: anyhow::Error = e.into();
    let f = StoreFault { context: context.to_string(), detail: format!("{e:#}") };
    if e.downcast_ref::<lantau_store::Stopping>().is_some() {
        tracing::debug!(context = %f.context, "store work cancelled: the runtime is stopping");
        return f;
    }
    if FAULT.set(f.clone()).is_ok() {
        tracing::error!(context = %f.context, error = %f.detail, "the app store failed; stopping");
        FAULTED.notify_waiters();
    }
    f
}

/// A failed read of `what` (a key or prefix) as a transaction or query error ([`internal`]),
/// recorded as a store fault.
pub fn read_failed(what: impl std::fmt::Display, e: impl Into<anyhow::Error>) -> TxError {
    internal(fault(format_args!("reading {what}"), e))
}

/// The store fault this process met, if any.
pub fn current_fault() -> Option<StoreFault> {
    FAULT.get().cloned()
}

/// Resolves with the first store fault of this process (at once when there already is one).
pub async fn faulted() -> StoreFault {
    loop {
        let woken = FAULTED.notified();
        let mut woken = std::pin::pin!(woken);
        woken.as_mut().enable();
        if let Some(f) = FAULT.get() {
            return f.clone();
        }
        woken.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work cancelled because the runtime is stopping comes back as an error but is not the
    /// process's store fault; a store failure is.
    #[test]
    fn cancelled_work_is_not_recorded_as_a_fault_and_a_failure_is() {
        let stopping = anyhow::Error::new(lantau_store::Stopping).context("scanning the audit rows");
        let f = fault("reading the audit rows", stopping);
        assert!(f.detail.contains("the runtime is stopping"), "{}", f.detail);
        assert!(current_fault().is_none());
        let failed = fault("reading a key", anyhow::anyhow!("Corruption: block checksum mismatch"));
        assert_eq!(current_fault().map(|c| c.detail), Some(failed.detail));
    }
}

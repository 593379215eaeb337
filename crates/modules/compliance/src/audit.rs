//! The append-only audit log: the writer is `lantau_audit` (re-exported here); its queries.
//!
//! Where things live (keys in [`state_key`]):
//!
//! - verifiable state: the sequence counter (`compliance/audit_seq`) and the hash-chain head
//!   (`compliance/audit_head`). Both are overwritten by each append, so a block costs the Merkle
//!   tree two writes whatever the number of rows, and the app hash commits to every row ever
//!   appended: `head = sha256(previous head ‖ sha256(encoded row))`, from 32 zero bytes.
//! - non-verifiable store: the rows (`compliance/audit/row/<sequence>`) and three secondary
//!   indexes (subject, tx_type, lower-case tx_hash), each key ending in
//!   `<time><sequence>`. The subject index is covering (its value is the row itself), so a
//!   subject's history is read with one key-range scan; the others have empty values. They are written through the caller's overlay in the same block, so
//!   they join the same atomic commit, and a failed transaction (whose overlay is dropped)
//!   leaves neither rows, index entries nor a moved counter behind.
//!
//! Invariants: sequences are gapless from 1 in append order, and block times never decrease
//! with the sequence (so a time window is a range of sequences, found by binary search: there
//! is no time index); every row has one entry in the tx_type index, one in the subject index
//! when its subject is set and one in the tx_hash index when its hash is set; a row is never
//! rewritten or deleted.

use cnidarium::{StateRead, StateWrite};
use futures::StreamExt;
use lantau_module_api::{error::internal, store, GasMeter, TxError};
use lantau_primitives::Address;
use lantau_proto::Timestamp;

use crate::state_key;

pub use lantau_audit::AuditEntry;

/// How many row reads a query keeps in flight (cnidarium runs each read on a blocking thread).
const ROW_READS_IN_FLIGHT: usize = 32;
/// A set of `n` sequences spanning fewer than `n * DENSE_SPAN` rows is read with one range scan.
const DENSE_SPAN: u64 = 8;

pub use lantau_audit::{
    action_entry, chain_head, hash_index_form, AuditRead, AuditWrite, EthTxHash, InvalidAuditEntry, ETH_TX_HASH_KEY, ETH_TX_HASH_OBJECT, MAX_TX_HASH_LEN,
    MAX_TX_TYPE_LEN,
};
use lantau_audit::{index_entries, validate_entry};

/// After a state-sync restore, which carries the rows but not the indexes: checks that the
/// rows are gapless from 1 to the verifiable counter and chain to the verifiable head (so the
/// app hash proves every row), then writes their index entries. Returns the number of rows.
pub async fn restore_indexes<S: StateWrite + Send + Sync>(state: &mut S) -> Result<u64, TxError> {
    let gas = GasMeter::infinite();
    let last = state.audit_sequence(&gas).await?;
    let want_head = state.audit_head(&gas).await?;
    let mut head = [0u8; 32];
    let mut rows = 0u64;
    let mut writes = Vec::new();
    {
        let mut stream = std::pin::pin!(state.nonverifiable_prefix_raw(state_key::AUDIT_ROW_PREFIX));
        while let Some(item) = stream.next().await {
            let (key, row) = item.map_err(|e| store::read_failed("the audit rows", e))?;
            let expected = rows.saturating_add(1);
            if key != state_key::audit_row(expected) {
                return Err(internal(format!("the audit rows are not gapless: row {expected} is missing or out of place")));
            }
            let entry: AuditEntry = store::decode(&row, "audit row")?;
            if entry.sequence != expected {
                return Err(internal(format!("audit row {expected} says it is row {}", entry.sequence)));
            }
            let subject = validate_entry(&entry)?;
            let time = entry.block_time.ok_or_else(|| internal(format!("audit row {expected} has no block time")))?;
            head = chain_head(&head, &row);
            writes.extend(index_entries(&entry, subject.as_ref(), &time, &row));
            rows = expected;
        }
    }
    if rows != last {
        return Err(internal(format!("the snapshot carries {rows} audit rows, the state counts {last}")));
    }
    if head != want_head {
        return Err(internal("the audit rows do not chain to the head the state commits to".to_string()));
    }
    for (k, v) in writes {
        state.nonverifiable_put_raw(k, v);
    }
    Ok(last)
}

// === queries ===

/// Filters of the AuditLog query. Every given filter must match (AND); `None` matches all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Exact subject address.
    pub subject: Option<Address>,
    /// Exact tx_type.
    pub tx_type: Option<String>,
    /// tx_hash, compared case-insensitively and without `0x`: the row's Cosmos hash, or the
    /// Ethereum hash in its `eth_tx_hash` metadata.
    pub tx_hash: Option<String>,
    /// Inclusive lower bound on `block_time`.
    pub from: Option<Timestamp>,
    /// Exclusive upper bound on `block_time`.
    pub to: Option<Timestamp>,
}

impl AuditFilter {
    /// Whether `e` passes every filter.
    pub fn matches(&self, e: &AuditEntry) -> bool {
        let time = e.block_time.unwrap_or_default();
        self.subject.is_none_or(|s| e.subject == s.to_bech32())
            && self.tx_type.as_ref().is_none_or(|t| &e.tx_type == t)
            && self.tx_hash.as_ref().is_none_or(|h| {
                let h = hash_index_form(h);
                hash_index_form(&e.tx_hash) == h || e.metadata.get(ETH_TX_HASH_KEY).is_some_and(|m| hash_index_form(m) == h)
            })
            && self.from.is_none_or(|f| time_key(&time) >= time_key(&f))
            && self.to.is_none_or(|t| time_key(&time) < time_key(&t))
    }
}

fn time_key(t: &Timestamp) -> (i64, i32) {
    (t.seconds, t.nanos)
}

/// The complete filtered log, in sequence order (unmetered; for queries on snapshots).
///
/// Reads one index, chosen by expected selectivity: tx_hash, else subject, else tx_type; the
/// `from`/`to` bounds narrow the scan to a key range inside that index. A filter of times alone
/// reads the rows of its window, found by binary search (the rows are in block-time order). The
/// whole log is read only when no filter at all is given: that query returns every row.
/// Every row read is checked against all filters, so the answer does not depend on the index
/// chosen.
pub async fn scan<S: StateRead + Sync + ?Sized>(state: &S, filter: &AuditFilter) -> Result<Vec<AuditEntry>, TxError> {
    if let (Some(f), Some(t)) = (&filter.from, &filter.to) {
        if time_key(f) >= time_key(t) {
            return Ok(Vec::new());
        }
    }
    let prefix = if let Some(h) = &filter.tx_hash {
        let h = hash_index_form(h);
        if h.is_empty() || h.len() > MAX_TX_HASH_LEN || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Vec::new()); // no stored row has such a hash
        }
        state_key::audit_by_hash_prefix(&h)
    } else if let Some(s) = &filter.subject {
        state_key::audit_by_subject_prefix(s)
    } else if let Some(t) = &filter.tx_type {
        if t.is_empty() || t.contains('/') {
            return Ok(Vec::new()); // no stored row has such a type
        }
        state_key::audit_by_type_prefix(t)
    } else if filter.from.is_some() || filter.to.is_some() {
        let (first, end) = time_window(state, filter).await?;
        if end.saturating_sub(first) > u64::try_from(crate::query::MAX_QUERY_ROWS).unwrap_or(u64::MAX) {
            return Err(too_broad());
        }
        let rows = read_rows(state, (first..end).collect()).await?;
        return Ok(rows.into_iter().filter(|e| filter.matches(e)).collect());
    } else {
        return all_rows(state).await;
    };

    let (mut rows, sequences) = read_index(state, &prefix, filter).await?;
    rows.extend(read_rows(state, sequences).await?);
    rows.sort_by_key(|e| e.sequence);
    rows.dedup_by_key(|e| e.sequence);
    let out: Vec<AuditEntry> = rows.into_iter().filter(|e| filter.matches(e)).collect();
    if out.len() > crate::query::MAX_QUERY_ROWS {
        return Err(too_broad());
    }
    Ok(out)
}

fn too_broad() -> TxError {
    crate::query::too_broad("this AuditLog filter", crate::query::MAX_QUERY_ROWS, "a subject, a tx_type, a tx_hash or a shorter from/to window")
}

/// The entries listed under `prefix` inside the filter's time bounds: rows carried by a
/// covering index, and the sorted, deduplicated sequences of the rows still to be read.
async fn read_index<S: StateRead + ?Sized>(state: &S, prefix: &[u8], filter: &AuditFilter) -> Result<(Vec<AuditEntry>, Vec<u64>), TxError> {
    use std::ops::Bound;
    let start = match &filter.from {
        Some(f) => Bound::Included(state_key::audit_time(f).to_vec()),
        None => Bound::Unbounded,
    };
    let end = match &filter.to {
        Some(t) => Bound::Excluded(state_key::audit_time(t).to_vec()),
        None => Bound::Unbounded,
    };
    let stream = state.nonverifiable_range_raw(Some(prefix), (start, end)).map_err(|e| store::read_failed("an audit index", e))?;
    let mut stream = std::pin::pin!(stream);
    let mut rows = Vec::new();
    let mut out = Vec::new();
    while let Some(item) = stream.next().await {
        if rows.len().saturating_add(out.len()) >= crate::query::MAX_QUERY_SCAN {
            return Err(too_broad());
        }
        let (key, value) = item.map_err(|e| store::read_failed("an audit index", e))?;
        if !value.is_empty() {
            rows.push(store::decode::<AuditEntry>(&value, "audit row")?);
            continue;
        }
        let tail =
            key.len().checked_sub(8).and_then(|i| key.get(i..)).and_then(|b| <[u8; 8]>::try_from(b).ok()).ok_or_else(|| internal("corrupt audit index key"))?;
        out.push(u64::from_be_bytes(tail));
    }
    // Keys are in (time, sequence) order, which is sequence order while block times do not go
    // backwards; sorting makes sequence order hold regardless.
    out.sort_unstable();
    out.dedup();
    Ok((rows, out))
}

/// The sequences `[first, end)` of the rows inside the filter's time bounds. Rows are appended
/// in block order and block times only go forward (CometBFT's and the embedded engine's), so a
/// row's time never decreases with its sequence: the bounds are found by binary search, with
/// no index (stores written before kept a time index, `compliance/audit/time/`, no longer read).
async fn time_window<S: StateRead + Sync + ?Sized>(state: &S, filter: &AuditFilter) -> Result<(u64, u64), TxError> {
    let last = state.audit_sequence(&GasMeter::infinite()).await?;
    let first = match &filter.from {
        Some(f) => first_row_at_or_after(state, last, f).await?,
        None => 1,
    };
    let end = match &filter.to {
        Some(t) => first_row_at_or_after(state, last, t).await?,
        None => last.saturating_add(1),
    };
    Ok((first, end.max(first)))
}

/// The first sequence in `1..=last` whose row's block time is at or after `t` (`last + 1` when
/// none is): at most 64 row reads.
async fn first_row_at_or_after<S: StateRead + ?Sized>(state: &S, last: u64, t: &Timestamp) -> Result<u64, TxError> {
    let (mut lo, mut hi) = (1u64, last.saturating_add(1));
    while lo < hi {
        let mid = lo.saturating_add(hi.saturating_sub(lo) / 2);
        let raw = state.nonverifiable_get_raw(&state_key::audit_row(mid)).await.map_err(|e| store::read_failed(format_args!("audit row {mid}"), e))?;
        let raw = raw.ok_or_else(|| internal(format!("audit row {mid} is missing")))?;
        let entry = store::decode::<AuditEntry>(&raw, "audit row")?;
        if time_key(&entry.block_time.unwrap_or_default()) < time_key(t) {
            lo = mid.saturating_add(1);
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Reads rows by sequence (sorted), keeping their order. Dense sets (at least one row in
/// [`DENSE_SPAN`] of the sequence span, e.g. a time window) are read with one key-range scan
/// of the rows; sparse ones with point reads, several in flight.
async fn read_rows<S: StateRead + ?Sized>(state: &S, sequences: Vec<u64>) -> Result<Vec<AuditEntry>, TxError> {
    let (Some(&first), Some(&last)) = (sequences.first(), sequences.last()) else { return Ok(Vec::new()) };
    let count = u64::try_from(sequences.len()).unwrap_or(u64::MAX);
    if last.saturating_sub(first) < count.saturating_mul(DENSE_SPAN) {
        let end = match last.checked_add(1) {
            Some(e) => std::ops::Bound::Excluded(e.to_be_bytes().to_vec()),
            None => std::ops::Bound::Unbounded,
        };
        let start = std::ops::Bound::Included(first.to_be_bytes().to_vec());
        let stream = state.nonverifiable_range_raw(Some(state_key::AUDIT_ROW_PREFIX), (start, end)).map_err(|e| store::read_failed("the audit rows", e))?;
        let mut stream = std::pin::pin!(stream);
        let mut out = Vec::with_capacity(sequences.len());
        while let Some(item) = stream.next().await {
            let (key, value) = item.map_err(|e| store::read_failed("the audit rows", e))?;
            let seq = key
                .get(state_key::AUDIT_ROW_PREFIX.len()..)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(u64::from_be_bytes)
                .ok_or_else(|| internal("corrupt audit row key"))?;
            if sequences.binary_search(&seq).is_ok() {
                out.push(store::decode::<AuditEntry>(&value, "audit row")?);
            }
        }
        if out.len() != sequences.len() {
            return Err(internal("audit index lists missing rows"));
        }
        return Ok(out);
    }
    let reads = futures::stream::iter(sequences)
        .map(|seq| async move {
            let raw = state.nonverifiable_get_raw(&state_key::audit_row(seq)).await.map_err(|e| store::read_failed(format_args!("audit row {seq}"), e))?;
            let raw = raw.ok_or_else(|| internal(format!("audit index lists missing row {seq}")))?;
            store::decode::<AuditEntry>(&raw, "audit row")
        })
        .buffered(ROW_READS_IN_FLIGHT);
    let mut reads = std::pin::pin!(reads);
    let mut out = Vec::new();
    while let Some(r) = reads.next().await {
        out.push(r?);
    }
    Ok(out)
}

/// Every row, in sequence order.
async fn all_rows<S: StateRead + ?Sized>(state: &S) -> Result<Vec<AuditEntry>, TxError> {
    let mut stream = std::pin::pin!(state.nonverifiable_prefix_raw(state_key::AUDIT_ROW_PREFIX));
    let mut out = Vec::new();
    while let Some(item) = stream.next().await {
        if out.len() >= crate::query::MAX_QUERY_ROWS {
            return Err(too_broad());
        }
        let (_, v) = item.map_err(|e| store::read_failed("the audit rows", e))?;
        out.push(store::decode::<AuditEntry>(&v, "audit row")?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

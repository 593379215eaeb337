//! The audit log's typed reads and writes (the module's "keeper"): the verifiable counter and
//! hash-chain head, and the one append that writes a row and its index entries.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{block_timestamp, error::internal, store, BlockCtx, GasMeter, TxError};
use lantau_primitives::Address;
use lantau_proto::Timestamp;
use prost::Message;
use sha2::{Digest, Sha256};

use crate::error::invalid;
use crate::{state_key, AuditEntry, MAX_TX_HASH_LEN, MAX_TX_TYPE_LEN};

/// The widest encoding of a row's sequence, block height and block time (three varint fields
/// and a Timestamp: tags, lengths, 10-byte varints), charged whatever their actual size.
const BLOCK_FIELDS_WIDEST: usize = 48;

// === reads ===

/// Reads of the audit log's verifiable commitment.
pub trait AuditRead: StateRead {
    /// The last sequence assigned (0 before the first row).
    fn audit_sequence(&self, gas: &GasMeter) -> impl Future<Output = Result<u64, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, state_key::AUDIT_SEQ).await? {
                None => Ok(0),
                Some(b) => <[u8; 8]>::try_from(b.as_slice()).map(u64::from_be_bytes).map_err(|_| internal(format!("corrupt {} record", state_key::AUDIT_SEQ))),
            }
        }
    }

    /// The hash-chain head (32 zero bytes before the first row).
    fn audit_head(&self, gas: &GasMeter) -> impl Future<Output = Result<[u8; 32], TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, state_key::AUDIT_HEAD).await? {
                None => Ok([0u8; 32]),
                Some(b) => <[u8; 32]>::try_from(b.as_slice()).map_err(|_| internal(format!("corrupt {} record", state_key::AUDIT_HEAD))),
            }
        }
    }
}

impl<T: StateRead + ?Sized> AuditRead for T {}

// === writes ===

/// Appending to the audit log.
pub trait AuditWrite: StateWrite + AuditRead {
    /// Appends `entry`: assigns the next sequence, sets `block_height` and `block_time` from
    /// `block`, writes the row and its index entries to the non-verifiable store and advances
    /// the verifiable counter and hash-chain head, all through `self` (the caller's overlay).
    /// Returns the sequence. Gas: two verifiable reads, two verifiable writes and one write per
    /// non-verifiable key, at the meter's write cost; deterministic for a given entry.
    ///
    /// `subject` and `counterparty` must be empty or bech32 addresses of the chain; `tx_type` must be 1 to [`MAX_TX_TYPE_LEN`] bytes of `a-z`, `0-9`, `_`;
    /// `tx_hash` must be empty or hex. Otherwise [`ComplianceError::InvalidAuditEntry`] and
    /// nothing is written.
    fn append_audit(&mut self, gas: &GasMeter, block: &BlockCtx, entry: AuditEntry) -> impl Future<Output = Result<u64, TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let mut entry = entry;
            if let Some(EthTxHash(h)) = self.object_get::<EthTxHash>(ETH_TX_HASH_OBJECT) {
                entry.metadata.entry(ETH_TX_HASH_KEY.to_string()).or_insert(h);
            }
            let subject = validate_entry(&entry)?;
            let previous = self.audit_sequence(gas).await?;
            let sequence = previous.checked_add(1).ok_or_else(|| internal("audit sequence overflow"))?;
            let head = self.audit_head(gas).await?;

            entry.sequence = sequence;
            entry.block_height = i64::try_from(block.height).map_err(|_| internal("block height out of range"))?;
            let time = block_timestamp(block);
            entry.block_time = Some(time);
            let row = entry.encode_to_vec();
            let new_head = chain_head(&head, &row);

            let mut nv = index_entries(&entry, subject.as_ref(), &time, &row);
            nv.push((state_key::audit_row(sequence), row));

            // Charge everything before writing anything, so that running out of gas leaves the
            // overlay untouched (the caller drops it anyway). A row (and the subject index's
            // copy of it) is charged as if its sequence, height and time took their widest
            // encoding: the gas of a transaction must not depend on the block it lands in, or
            // an exact estimate made on one block (eth_estimateGas) runs out in the next.
            let widest = AuditEntry { sequence: 0, block_height: 0, block_time: None, ..entry.clone() }.encoded_len().saturating_add(BLOCK_FIELDS_WIDEST);
            gas.singleton()?;
            gas.singleton()?;
            for (k, v) in &nv {
                gas.row(k.len(), if v.is_empty() { 0 } else { widest.max(v.len()) })?;
            }
            self.put_raw(state_key::AUDIT_SEQ.to_string(), sequence.to_be_bytes().to_vec());
            self.put_raw(state_key::AUDIT_HEAD.to_string(), new_head.to_vec());
            for (k, v) in nv {
                self.nonverifiable_put_raw(k, v);
            }
            Ok(sequence)
        }
    }
}

impl<T: StateWrite + ?Sized> AuditWrite for T {}

/// The ephemeral object (cnidarium's object store: never committed) that names the Ethereum
/// transaction being executed: the evm module puts it for the length of one Ethereum
/// transaction, so every audit row written meanwhile, by whatever path (the precompile's gated
/// transfer, a redemption request), carries `eth_tx_hash` and is found by that hash too.
pub const ETH_TX_HASH_OBJECT: &str = "audit/eth_tx_hash";

/// The value of [`ETH_TX_HASH_OBJECT`]: the Ethereum hash, `0x` and 64 lower-case hex digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EthTxHash(pub String);

/// The metadata key an audit row written during an Ethereum transaction carries its hash in.
pub const ETH_TX_HASH_KEY: &str = "eth_tx_hash";

/// A transaction hash as the tx_hash index keys it: without `0x`, lower case.
pub fn hash_index_form(h: &str) -> String {
    h.strip_prefix("0x").or_else(|| h.strip_prefix("0X")).unwrap_or(h).to_ascii_lowercase()
}

/// The secondary index entries of one row (everything but the row itself): by tx_type, by
/// subject, by tx_hash, and by the Ethereum hash in its `eth_tx_hash` metadata.
pub fn index_entries(entry: &AuditEntry, subject: Option<&Address>, time: &Timestamp, row: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let sequence = entry.sequence;
    let t = state_key::audit_time(time);
    let mut nv: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(4);
    // No time index: the rows themselves are in block-time order (see the compliance module's
    // AuditLog scan).
    nv.push((state_key::audit_index_key(&state_key::audit_by_type_prefix(&entry.tx_type), &t, sequence), Vec::new()));
    if let Some(s) = subject {
        // The subject index covers the row (its value is the row), so the most common
        // query, a subject's history, is one key-range scan with no per-row reads.
        nv.push((state_key::audit_index_key(&state_key::audit_by_subject_prefix(s), &t, sequence), row.to_vec()));
    }
    if !entry.tx_hash.is_empty() {
        nv.push((state_key::audit_index_key(&state_key::audit_by_hash_prefix(&entry.tx_hash), &t, sequence), Vec::new()));
    }
    if let Some(eth) = entry.metadata.get(ETH_TX_HASH_KEY).map(|h| hash_index_form(h)).filter(|h| !h.is_empty() && *h != hash_index_form(&entry.tx_hash)) {
        nv.push((state_key::audit_index_key(&state_key::audit_by_hash_prefix(&eth), &t, sequence), Vec::new()));
    }
    nv
}

/// The row of an enforcement action (an enrolment, a level change, a blacklisting, a freeze, a
/// pause…): `subject` the address acted on, the transaction's hash, the rest in `metadata`.
pub fn action_entry(tx_type: &str, subject: &Address, tx_hash: &str, metadata: &[(&str, String)]) -> AuditEntry {
    AuditEntry {
        tx_type: tx_type.into(),
        subject: subject.to_bech32(),
        tx_hash: tx_hash.to_string(),
        metadata: metadata.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect(),
        ..Default::default()
    }
}

/// The next hash-chain head: `sha256(head ‖ sha256(row))`.
pub fn chain_head(head: &[u8; 32], row: &[u8]) -> [u8; 32] {
    let row_hash = Sha256::digest(row);
    let mut h = Sha256::new();
    h.update(head);
    h.update(row_hash);
    h.finalize().into()
}

/// Checks an entry; returns the parsed subject.
pub fn validate_entry(e: &AuditEntry) -> Result<Option<Address>, TxError> {
    let tx_type_ok =
        !e.tx_type.is_empty() && e.tx_type.len() <= MAX_TX_TYPE_LEN && e.tx_type.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !tx_type_ok {
        return Err(invalid(format!("tx_type {:?} must be 1-{MAX_TX_TYPE_LEN} characters of a-z, 0-9, _", e.tx_type)));
    }
    if e.tx_hash.len() > MAX_TX_HASH_LEN || !e.tx_hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid(format!("tx_hash {:?} must be hex, at most {MAX_TX_HASH_LEN} digits", e.tx_hash)));
    }
    let address = |field: &str, s: &str| -> Result<Option<Address>, TxError> {
        if s.is_empty() {
            return Ok(None);
        }
        Address::from_bech32(s).map(Some).map_err(|err| invalid(format!("{field}: {err}")))
    };
    address("counterparty", &e.counterparty)?;
    address("subject", &e.subject)
}

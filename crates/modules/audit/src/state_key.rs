//! The audit log's keys (they keep the `compliance/` prefix they have always had).
//!
//! Verifiable (committed by the app hash): the sequence counter and the hash-chain head. Both
//! are overwritten by every append, so the Merkle tree sees two writes per block however many
//! rows the block appends.
//!
//! Non-verifiable (same atomic commit, outside the tree): the rows and four secondary indexes.
//! Index keys end in `<time><sequence>` (`time` = [`audit_time`], 12 bytes; `sequence` = u64
//! big-endian), so a prefix scan returns rows in append order and a `[from, to)` time bound is a
//! key range inside any index. Index values are empty, except the subject index's: its value is
//! the row itself (a covering index, so a subject's history needs no per-row reads).

/// `compliance/audit_seq` → u64 big-endian: the last sequence assigned (absent = 0).
pub const AUDIT_SEQ: &str = "compliance/audit_seq";

/// `compliance/audit_head` → 32 bytes: the hash-chain head over every row appended so far,
/// `head = sha256(previous head ‖ sha256(encoded row))`, starting from 32 zero bytes.
pub const AUDIT_HEAD: &str = "compliance/audit_head";

/// Prefix of every non-verifiable audit key.
pub const AUDIT_NV_PREFIX: &[u8] = b"compliance/audit/";

/// Prefix of the rows: `compliance/audit/row/<sequence>` → `AuditEntry` (protobuf).
pub const AUDIT_ROW_PREFIX: &[u8] = b"compliance/audit/row/";

/// `compliance/audit/row/<sequence u64 BE>` → `AuditEntry` (protobuf).
pub fn audit_row(sequence: u64) -> Vec<u8> {
    [AUDIT_ROW_PREFIX, &sequence.to_be_bytes()].concat()
}

/// Prefix of the subject index of `subject`: `compliance/audit/subject/<20 address bytes>`;
/// entries `<prefix><time><sequence>` → `AuditEntry` (protobuf, the same bytes as the row).
pub fn audit_by_subject_prefix(subject: &lantau_primitives::Address) -> Vec<u8> {
    [b"compliance/audit/subject/".as_slice(), subject.as_bytes()].concat()
}

/// Prefix of the tx_type index of `tx_type`: `compliance/audit/type/<tx_type>/` (tx_type
/// never contains `/`; `append_audit` checks it).
pub fn audit_by_type_prefix(tx_type: &str) -> Vec<u8> {
    [b"compliance/audit/type/".as_slice(), tx_type.as_bytes(), b"/"].concat()
}

/// Prefix of the tx_hash index of `tx_hash`: `compliance/audit/hash/<lower-case hex>/`.
pub fn audit_by_hash_prefix(tx_hash: &str) -> Vec<u8> {
    [b"compliance/audit/hash/".as_slice(), tx_hash.to_ascii_lowercase().as_bytes(), b"/"].concat()
}

/// The 12-byte, order-preserving encoding of a block time in index keys: seconds as i64
/// big-endian with the sign bit flipped, then nanos as u32 big-endian (clamped to 0..1e9).
pub fn audit_time(t: &lantau_proto::Timestamp) -> [u8; 12] {
    let mut out = [0u8; 12];
    let mut secs = t.seconds.to_be_bytes();
    secs[0] ^= 0x80;
    out[..8].copy_from_slice(&secs);
    let nanos = u32::try_from(t.nanos.clamp(0, 999_999_999)).unwrap_or(0);
    out[8..].copy_from_slice(&nanos.to_be_bytes());
    out
}

/// An index key: `prefix ‖ time ‖ sequence`.
pub fn audit_index_key(prefix: &[u8], time: &[u8; 12], sequence: u64) -> Vec<u8> {
    [prefix, time.as_slice(), &sequence.to_be_bytes()].concat()
}

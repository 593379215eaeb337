//! The append-only audit log's writer: every module that records an enforcement action (the
//! compliance gates and review, KYC enrolments and level changes, the stablecoin's freezes,
//! pauses, mints and burns) appends through [`AuditWrite::append_audit`]. The queries live in
//! the compliance module, which re-exports all of this.
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
//!
//! Layout: `state.rs` (the reads and the append), `state_key.rs`, `error.rs` (the one error,
//! [`InvalidAuditEntry`]). It is a library under the modules, not a module of the app's list, so
//! no `msg.rs` or `handler.rs` (no messages: callers append from their own handlers), no
//! `query.rs` (the compliance module serves the log's queries), no `genesis.rs` (the log starts
//! empty), no `event.rs` (an append emits no event; the caller emits its own), no `deps.rs` (it
//! needs no other module) and no `tests/` (no handlers; the append is tested through the
//! compliance module's audit tests, `compliance/src/audit/tests.rs`).

pub mod error;
pub mod state;
pub mod state_key;

pub use error::InvalidAuditEntry;
pub use lantau_proto::chain::compliance::v1::AuditEntry;
pub use state::{
    action_entry, chain_head, hash_index_form, index_entries, validate_entry, AuditRead, AuditWrite, EthTxHash, ETH_TX_HASH_KEY, ETH_TX_HASH_OBJECT,
};

/// Longest accepted `tx_type`, in bytes.
pub const MAX_TX_TYPE_LEN: usize = 64;
/// Longest accepted `tx_hash`, in hex digits.
pub const MAX_TX_HASH_LEN: usize = 128;

//! Key layout of the compliance module. Treated as a public API.

/// `compliance/rules` → `Rules` (protobuf).
pub const RULES: &str = "compliance/rules";

/// `compliance/sanctions` → `SanctionsSet` (protobuf).
pub const SANCTIONS: &str = "compliance/sanctions";

/// `compliance/velocity/<lower-hex address>` → the block times (unix seconds, i64 big-endian,
/// oldest first) of the sender's last `velocity_tx_limit` screened transfers.
pub fn velocity(addr: &lantau_primitives::Address) -> String {
    format!("compliance/velocity/{}", addr.to_key_hex())
}

/// Non-verifiable `compliance/travel_rule/<lower-case tx hash>` → the anchored
/// `TravelRulePayload` (protobuf, `tx_hash` set).
pub fn travel_rule(tx_hash: &str) -> String {
    format!("compliance/travel_rule/{tx_hash}")
}

/// Prefix of every anchored Travel Rule payload (non-verifiable).
pub const TRAVEL_RULE_PREFIX: &[u8] = b"compliance/travel_rule/";

/// `compliance/next_flag_id` → u64 big-endian: the id the next flag gets (from 1).
pub const NEXT_FLAG_ID: &str = "compliance/next_flag_id";

/// `compliance/flag/<id, 20 digits>` → `Flag` (protobuf).
pub fn flag(id: u64) -> String {
    format!("compliance/flag/{id:020}")
}

/// Prefix of every flag.
pub const FLAG_PREFIX: &str = "compliance/flag/";

/// `compliance/sub/<lower-hex sub_addr>` → `SubRoleBinding` (a sub-key has at most one parent).
pub fn binding(sub: &lantau_primitives::Address) -> String {
    format!("compliance/sub/{}", sub.to_key_hex())
}

/// Prefix of the parent index of `parent`: `compliance/parent/<lower-hex parent>/`.
pub fn sub_keys_prefix(parent: &lantau_primitives::Address) -> String {
    format!("compliance/parent/{}/", parent.to_key_hex())
}

/// `compliance/parent/<lower-hex parent>/<lower-hex sub_addr>` → one byte, the role: the
/// parent index behind SubRoleBindings (bindings are never deleted, so neither is this).
pub fn sub_key_of(parent: &lantau_primitives::Address, sub: &lantau_primitives::Address) -> String {
    format!("{}{}", sub_keys_prefix(parent), sub.to_key_hex())
}

/// `compliance/policy/<lower-hex sub_addr>` → `AgentPolicy`.
pub fn policy(sub: &lantau_primitives::Address) -> String {
    format!("compliance/policy/{}", sub.to_key_hex())
}

/// `compliance/window/<lower-hex sub_addr>` → `AgentWindow`.
pub fn window(sub: &lantau_primitives::Address) -> String {
    format!("compliance/window/{}", sub.to_key_hex())
}

// === audit log ===
//
// Verifiable (committed by the app hash): the sequence counter and the hash-chain head. Both
// are overwritten by every append, so the Merkle tree sees two writes per block however many
// rows the block appends.
//
// Non-verifiable (same atomic commit, outside the tree): the rows and four secondary indexes.
// Index keys end in `<time><sequence>` (`time` = [`audit_time`], 12 bytes; `sequence` = u64
// big-endian), so a prefix scan returns rows in append order and a `[from, to)` time bound is a
// key range inside any index. Index values are empty, except the subject index's: its value is
// the row itself (a covering index, so a subject's history needs no per-row reads).

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

/// Prefix of the time index: `compliance/audit/time/`.
pub const AUDIT_BY_TIME_PREFIX: &[u8] = b"compliance/audit/time/";

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

/// Whether the gate chain reads `key`: identities and KYC params, rules, sanctions, sub-role
/// bindings and agent policies and windows. Not: velocity windows (advisory only), flags,
/// audit bookkeeping and Travel Rule anchors. A block that writes no such key leaves every
/// verdict as it was (the recheck uses this to skip re-screening).
pub fn read_by_gates(key: &str) -> bool {
    if key.starts_with("kyc/") {
        return true;
    }
    let Some(rest) = key.strip_prefix("compliance/") else { return false };
    !(rest.starts_with("velocity/")
        || rest.starts_with("flag/")
        || rest.starts_with("travel_rule/")
        || rest == "next_flag_id"
        || rest == "audit_seq"
        || rest == "audit_head")
}

#[cfg(test)]
mod gate_reads {
    use super::*;
    use lantau_primitives::Address;

    #[test]
    fn the_keys_the_gates_read_are_recognised_and_bookkeeping_is_not() {
        let a = Address([7; 20]);
        for k in [RULES.to_string(), SANCTIONS.to_string(), binding(&a), sub_key_of(&a, &a), policy(&a), window(&a), "kyc/id/x".into(), "kyc/params".into(), "compliance/params".into()] {
            assert!(read_by_gates(&k), "{k}");
        }
        for k in [velocity(&a), flag(3), NEXT_FLAG_ID.to_string(), AUDIT_SEQ.to_string(), AUDIT_HEAD.to_string(), travel_rule("ab"), "bank/balance/x".into(), "auth/account/x".into()] {
            assert!(!read_by_gates(&k), "{k}");
        }
    }
}

//! Key layout of the compliance module. Treated as a public API.

/// `compliance/rules` → `Rules` (protobuf).
pub const RULES: &str = "compliance/rules";
/// `compliance/block_requires_officer` → `[1]` when a reviewer's BLOCKED needs an officer
/// (absent: it does not, the spec's behaviour).
pub const BLOCK_REQUIRES_OFFICER: &str = "compliance/block_requires_officer";

/// `compliance/sanctions` → `SanctionsSet` (protobuf).
pub const SANCTIONS: &str = "compliance/sanctions";

/// Non-verifiable (committed by [`RECORDS_LATTICE`]) `compliance/velocity/<lower-hex address>`
/// → the block times (unix seconds, i64 big-endian, oldest first) of the sender's last
/// `velocity_tx_limit` screened transfers.
pub fn velocity(addr: &lantau_primitives::Address) -> String {
    addr.key_under(VELOCITY_PREFIX)
}

/// Prefix of every velocity window (non-verifiable).
pub const VELOCITY_PREFIX: &str = "compliance/velocity/";

/// `compliance/records_lattice` → 2,048 bytes: the lattice hash (LtHash) of every flag and
/// velocity window held in the non-verifiable store (see [`crate::records`]).
pub const RECORDS_LATTICE: &str = "compliance/records_lattice";

/// Non-verifiable `compliance/travel_rule/<lower-case tx hash>` → the anchored
/// `TravelRulePayload` (protobuf, `tx_hash` set).
pub fn travel_rule(tx_hash: &str) -> String {
    format!("compliance/travel_rule/{tx_hash}")
}

/// Prefix of every anchored Travel Rule payload (non-verifiable).
pub const TRAVEL_RULE_PREFIX: &[u8] = b"compliance/travel_rule/";

/// `compliance/next_flag_id` → u64 big-endian: the id the next flag gets (from 1).
pub const NEXT_FLAG_ID: &str = "compliance/next_flag_id";

/// Non-verifiable (committed by [`RECORDS_LATTICE`]) `compliance/flag/<id, 20 digits>` →
/// `Flag` (protobuf).
pub fn flag(id: u64) -> String {
    format!("compliance/flag/{id:020}")
}

/// Prefix of every flag (non-verifiable).
pub const FLAG_PREFIX: &str = "compliance/flag/";

/// `compliance/sub/<lower-hex sub_addr>` → `SubRoleBinding` (a sub-key has at most one parent).
pub fn binding(sub: &lantau_primitives::Address) -> String {
    sub.key_under("compliance/sub/")
}

/// Prefix of the parent index of `parent`: `compliance/parent/<lower-hex parent>/`.
pub fn sub_keys_prefix(parent: &lantau_primitives::Address) -> String {
    {
        let mut k = parent.key_under("compliance/parent/");
        k.push('/');
        k
    }
}

/// `compliance/parent/<lower-hex parent>/<lower-hex sub_addr>` → one byte, the role: the
/// parent index behind SubRoleBindings (bindings are never deleted, so neither is this).
pub fn sub_key_of(parent: &lantau_primitives::Address, sub: &lantau_primitives::Address) -> String {
    format!("{}{}", sub_keys_prefix(parent), sub.to_key_hex())
}

/// `compliance/policy/<lower-hex sub_addr>` → `AgentPolicy`.
pub fn policy(sub: &lantau_primitives::Address) -> String {
    sub.key_under("compliance/policy/")
}

/// `compliance/window/<lower-hex sub_addr>` → `AgentWindow`.
pub fn window(sub: &lantau_primitives::Address) -> String {
    sub.key_under("compliance/window/")
}

// === audit log ===
//
// The audit log's keys belong to its writer (`lantau_audit::state_key`); re-exported here so
// the queries and the state-sync lists read them where they read every compliance key.
pub use lantau_audit::state_key::*;

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

//! Key layout of the compliance module. Treated as a public API.

/// `compliance/rules` → `Rules` (protobuf).
pub const RULES: &str = "compliance/rules";

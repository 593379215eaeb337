//! Key layout of the authorities. Treated as a public API.

/// `authority/governance` → 20 address bytes.
pub const GOVERNANCE: &str = "authority/governance";

/// `authority/compliance` → 20 address bytes.
pub const COMPLIANCE: &str = "authority/compliance";

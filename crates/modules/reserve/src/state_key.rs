//! Key layout of the reserve module. Treated as a public API.

use lantau_primitives::Address;

/// `reserve/params` → `Params` (protobuf).
pub const PARAMS: &str = "reserve/params";

/// `reserve/next_id` → u64 big-endian: the id the next attestation gets (from 1).
pub const NEXT_ID: &str = "reserve/next_id";

/// `reserve/att/<id as 20-digit decimal>` → `Attestation` (protobuf).
pub fn attestation(id: u64) -> String {
    format!("reserve/att/{id:020}")
}

/// `reserve/latest/<lower-hex issuer>` → u64 big-endian: the issuer's latest attestation id.
pub fn latest(issuer: &Address) -> String {
    issuer.key_under("reserve/latest/")
}

/// `reserve/latest_attested/<lower-hex issuer>` → u64 big-endian: the id of the issuer's
/// latest ATTESTED attestation (what its mints are measured against).
pub fn latest_attested(issuer: &Address) -> String {
    issuer.key_under("reserve/latest_attested/")
}

/// Prefix of every attestation record.
pub const ATTESTATION_PREFIX: &str = "reserve/att/";

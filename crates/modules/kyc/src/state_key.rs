//! Key layout of the KYC module. Treated as a public API.

use lantau_primitives::Address;

/// `kyc/id/<lower-hex address>` → `Identity` (protobuf).
pub fn identity(addr: &Address) -> String {
    addr.key_under("kyc/id/")
}

/// Prefix of every identity record.
pub const IDENTITY_PREFIX: &str = "kyc/id/";

/// `kyc/params` → `Params` (protobuf).
pub const PARAMS: &str = "kyc/params";

//! Key layout of the KYC module. Treated as a public API.

use lantau_primitives::Address;

/// `kyc/id/<lower-hex address>` → `Identity` (protobuf).
pub fn identity(addr: &Address) -> String {
    format!("kyc/id/{}", addr.to_key_hex())
}

/// Prefix of every identity record.
pub const IDENTITY_PREFIX: &str = "kyc/id/";

/// `kyc/params` → `Params` (protobuf).
pub const PARAMS: &str = "kyc/params";

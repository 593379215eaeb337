//! Key layout of the stablecoin module. Treated as a public API.

use lantau_primitives::Address;

/// `stablecoin/denom/<denom>` → `Denom` record (protobuf).
pub fn denom(denom: &str) -> String {
    format!("stablecoin/denom/{denom}")
}

/// Prefix of every denom record.
pub const DENOM_PREFIX: &str = "stablecoin/denom/";

/// `stablecoin/issuer/<lower-hex address>` → the issuer's denom (UTF-8).
pub fn issuer(addr: &Address) -> String {
    format!("stablecoin/issuer/{}", addr.to_key_hex())
}

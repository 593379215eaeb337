//! Key layout of the erc20 module. Treated as a public API.

use lantau_primitives::Address;

/// `erc20/pair/<denom>` → `TokenPair` (protobuf).
pub fn pair(denom: &str) -> String {
    format!("erc20/pair/{denom}")
}

/// Prefix of every pair.
pub const PAIR_PREFIX: &str = "erc20/pair/";

/// `erc20/by_address/<lower-hex address>` → denom (UTF-8).
pub fn by_address(addr: &Address) -> String {
    addr.key_under("erc20/by_address/")
}

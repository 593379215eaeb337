//! Key layout of the bank module. Treated as a public API.

use lantau_primitives::Address;

/// `bank/bal/<lower-hex address>/<denom>` → u128 big-endian (absent means zero).
pub fn balance(addr: &Address, denom: &str) -> String {
    format!("bank/bal/{}/{denom}", addr.to_key_hex())
}

/// Prefix of every balance of `addr`; the suffix after it is the denom.
pub fn balance_prefix(addr: &Address) -> String {
    format!("bank/bal/{}/", addr.to_key_hex())
}

/// `bank/supply/<denom>` → u128 big-endian.
pub fn supply(denom: &str) -> String {
    format!("bank/supply/{denom}")
}

/// Prefix of every supply key.
pub const SUPPLY_PREFIX: &str = "bank/supply/";

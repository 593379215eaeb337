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

/// `bank/paused/<denom>` → the paused features of the denom: `[1]` every feature (what a pause
/// of all writes, as before features existed), `[0x80 | mask]` some (bits: [`crate::Feature`]).
/// Absent means nothing paused.
pub fn paused(denom: &str) -> String {
    format!("bank/paused/{denom}")
}

/// `bank/frozen/<lower-hex address>` → `[1]`: the address may neither send nor receive
/// stablecoins. Absent means not frozen.
pub fn frozen(addr: &Address) -> String {
    format!("bank/frozen/{}", addr.to_key_hex())
}

/// `bank/denom/<denom>` → `chain.stablecoin.v1.Denom` record (protobuf): the stablecoin's
/// display name, decimals and issuer. Written once, when the denom is created.
pub fn denom(denom: &str) -> String {
    format!("bank/denom/{denom}")
}

/// Prefix of every denom record.
pub const DENOM_PREFIX: &str = "bank/denom/";

/// `bank/issuer/<lower-hex address>` → the denom the address issues (UTF-8).
pub fn issuer(addr: &Address) -> String {
    format!("bank/issuer/{}", addr.to_key_hex())
}

//! Key layout of the bank module. Treated as a public API.

use lantau_primitives::Address;

/// `bank/balances/<lower-hex address>` → every non-zero balance of the address
/// ([`crate::Balances`]; absent when it holds nothing).
pub fn balances(addr: &Address) -> String {
    addr.key_under(BALANCES_PREFIX)
}

/// Prefix of every balance record.
pub const BALANCES_PREFIX: &str = "bank/balances/";

/// Prefix of the version-1 balance keys of `addr`. State version 1 kept a key per address and
/// denom, `bank/bal/<lower-hex address>/<denom>` → u128 big-endian; they are read at heights
/// before the upgrade that migrated them, and by that migration.
pub fn v1_balance_prefix(addr: &Address) -> String {
    format!("{V1_BALANCE_PREFIX}{}/", addr.to_key_hex())
}

/// Prefix of every version-1 balance key.
pub const V1_BALANCE_PREFIX: &str = "bank/bal/";

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
    addr.key_under(FROZEN_PREFIX)
}

/// Prefix of every frozen address.
pub const FROZEN_PREFIX: &str = "bank/frozen/";

/// `bank/denom/<denom>` → `chain.stablecoin.v1.Denom` record (protobuf): the stablecoin's
/// display name, decimals and issuer. Written once, when the denom is created.
pub fn denom(denom: &str) -> String {
    format!("bank/denom/{denom}")
}

/// Prefix of every denom record.
pub const DENOM_PREFIX: &str = "bank/denom/";

/// `bank/issuer/<lower-hex address>` → the denom the address issues (UTF-8).
pub fn issuer(addr: &Address) -> String {
    addr.key_under("bank/issuer/")
}

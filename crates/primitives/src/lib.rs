//! Lantau domain primitives: the small value types every other crate shares.
//!
//! - [`Address`]: 20 bytes, the Ethereum address of an eth_secp256k1 key, rendered as bech32
//!   (`lantau1...`) on the Cosmos side and as EIP-55 hex on the EVM side.
//! - [`Amount`]: a non-negative integer amount in a denom's base unit, with checked arithmetic only.
//! - [`Denom`] and [`Coin`]: validated denominations and (denom, amount) pairs.
//! - [`Height`]: a block height.
//!
//! This crate does no I/O and knows nothing about state.

#![cfg_attr(test, allow(unused_crate_dependencies))]

mod address;
mod amount;
mod denom;

pub use address::{Address, AddressError, BECH32_PREFIX};
pub use amount::{Amount, AmountError};
pub use denom::{is_stablecoin, Coin, Denom, DenomError, NATIVE_DENOM, NATIVE_DISPLAY, STABLECOIN_PREFIX};

/// A block height. Heights start at 1; 0 means "before genesis".
pub type Height = u64;

/// The smallest gas price the chain accepts: 1 gwei, in `alantau` per gas unit.
pub const MIN_GAS_PRICE: u128 = 1_000_000_000;

/// The smallest fee, in `alantau`, a transaction with this gas limit may pay (1 gwei per gas).
pub fn min_fee(gas_limit: u64) -> Amount {
    // u64::MAX * 1e9 < 2^128: cannot overflow.
    Amount(u128::from(gas_limit).saturating_mul(MIN_GAS_PRICE))
}

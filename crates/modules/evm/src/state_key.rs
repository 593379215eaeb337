//! Key layout of the evm module. Treated as a public API.
//!
//! Accounts are not stored here: an address's nonce is its auth sequence and its balance its
//! bank `alantau` balance. This module stores what only the EVM has: code and storage.

use lantau_primitives::Address;

/// `app/evm_chain_id` → u64 big-endian, fixed at genesis (written by the app's genesis).
pub const CHAIN_ID: &str = "app/evm_chain_id";

/// `evm/dev_impersonation` → `1` when the chain's genesis allows impersonated senders (a dev
/// chain: transactions with s = 0 and the sender in r, no signature); absent everywhere else.
pub const DEV_IMPERSONATION: &str = "evm/dev_impersonation";

/// `evm/code_hash/<lower-hex address>` → the 32-byte keccak256 of the account's code; absent
/// for an account without code.
pub fn code_hash(addr: &Address) -> String {
    addr.key_under("evm/code_hash/")
}

/// `evm/code/<lower-hex code hash>` → the code bytes (shared by every account with that code).
pub fn code(hash: &[u8; 32]) -> String {
    format!("evm/code/{}", const_hex::encode(hash))
}

/// `evm/storage/<lower-hex address>/<lower-hex slot>` → the 32-byte big-endian value; a zero
/// value is deleted, never stored.
pub fn storage(addr: &Address, slot: &[u8; 32]) -> String {
    format!("evm/storage/{}/{}", addr.to_key_hex(), const_hex::encode(slot))
}

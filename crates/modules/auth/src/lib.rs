//! The auth module: accounts, their numbers, sequences and public keys.
//!
//! It owns one record per address ([`StoredAccount`]): the account number (assigned once, in
//! creation order), the sequence (advanced by exactly one per committed transaction the account
//! signs) and the compressed eth_secp256k1 public key (set by the account's first signed
//! transaction). Invariants:
//! - an account number is never reused and never changes;
//! - a public key, once set, never changes, and its address equals the account address;
//! - the sequence only grows.
//!
//! Layout: `state_key.rs` (keys), `state.rs` (typed read/write), `genesis.rs`, `query.rs`.

#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod genesis;
pub mod query;
pub mod state;
pub mod state_key;

pub use lantau_proto::chain::auth::v1::StoredAccount;
pub use state::{AuthRead, AuthWrite};

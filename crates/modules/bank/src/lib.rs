//! The bank module: balances, supply, `MsgSend` and `MsgMultiSend`.
//!
//! It owns one balance per (address, denom) and the total supply per denom. Every balance
//! movement in the chain goes through one function, [`state::BankWrite::transfer`] (the transfer
//! chokepoint): bank messages, fee payment, and later mint, burn and the ERC-20 precompile. A
//! rule that must hold for every movement belongs there, not in a message handler.
//!
//! Invariants: a balance is never negative (checked arithmetic, zero balances are deleted); the
//! sum of all balances of a denom equals its supply; a transfer conserves supply.
//!
//! Layout: `msg.rs` (validated messages), `handler.rs`, `state.rs`, `state_key.rs`, `query.rs`,
//! `genesis.rs`, `event.rs`, `error.rs`, `deps.rs` (what it needs from auth).

#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod deps;
pub mod error;
pub mod event;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod state;
pub mod state_key;

pub use error::BankError;
pub use msg::{coins_from_proto, coins_to_string, MultiSendMsg, SendMsg};
pub use state::{BankRead, BankWrite};

/// The module name, used in `message.module` events and module-account derivation.
pub const MODULE_NAME: &str = "bank";

//! The Lantau state machine.
//!
//! One [`App`] exposes the ABCI++ method set (InitChain, CheckTx, PrepareProposal,
//! ProcessProposal, FinalizeBlock, Commit, Info, Query) in tendermint-rs types, so the embedded
//! engine and the CometBFT socket server drive the very same code.
//!
//! The way of a transaction: bytes → [`tx::decode`] (a Cosmos `TxRaw`, every message an `Any`
//! resolved by [`msg::Msg`]) → [`ante`] (size, chain id through the signature, sequence, fee floor,
//! gas limit, fee payment, sequence bump) → message handlers (one `match` in [`msg::Msg`]) →
//! events → the block's overlay → one cnidarium commit per block. CheckTx runs the same ante on a
//! check overlay of the latest committed state; FinalizeBlock runs it again on the block overlay,
//! because a proposer can put anything in a block.
//!
//! Layout: `app.rs` (the ABCI++ methods), `tx.rs`, `msg.rs`, `ante.rs`, `sigcache.rs`,
//! `genesis.rs`, `state_key.rs`, `hooks.rs` (what a driver adds to each block's commit: the tx
//! index, the block store), `store_check.rs` (the store's verification at open).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

mod ante;
mod app;
pub mod config;
pub mod error;
mod evm_api;
pub mod footprint;
pub mod genesis;
pub mod grpc;
pub mod hooks;
pub mod modules;
pub mod msg;
pub mod pipeline;
#[cfg(test)]
mod probe;
pub mod readcache;
pub mod screen;
mod sigcache;
pub mod state_key;
pub mod statesync;
mod stopwatch;
mod store_check;
pub mod trace;
pub mod tx;

pub use ante::fee_collector;
pub use app::{App, CheckOutcome, CheckRebuild, SimulateOutcome};
pub use cnidarium;
pub use config::AppConfig;
pub use error::AppError;
pub use footprint::Footprint;
pub use genesis::AppGenesis;
pub use hooks::{BlockHook, NoHook};
pub use lantau_auth as auth;
pub use lantau_authority as authority;
pub use lantau_bank as bank;
pub use lantau_compliance as compliance;
pub use lantau_erc20 as erc20;
pub use lantau_evm as evm;
pub use lantau_kyc as kyc;
pub use lantau_module_api as module_api;
pub use lantau_reserve as reserve;
pub use lantau_stablecoin as stablecoin;
pub use tendermint;
pub use tendermint_proto;
pub use tx::DecodedTx;

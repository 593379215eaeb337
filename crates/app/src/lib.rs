//! The Lantau state machine.
//!
//! One [`App`] exposes the ABCI++ method set (InitChain, CheckTx, PrepareProposal,
//! ProcessProposal, FinalizeBlock, Commit, Info, Query) in tendermint-rs types, so the embedded
//! engine and the CometBFT socket server drive the very same code.
//!
//! The way of a transaction: bytes → [`tx::decode`] (a Cosmos `TxRaw`, every message an `Any`
//! resolved by [`msg::Msg`]; an Ethereum transaction only from its canonical envelope) → the
//! one pipeline ([`pipeline::run`]): the ante (size, chain id through the signature, sequence,
//! fee floor, gas limit, fee payment, sequence bump) → the gate chain ([`screen`]) → message
//! handlers (one `match` in [`msg::Msg`]) → the screening record → events → the block's
//! overlay → one cnidarium commit per block. CheckTx runs the ante and the gates on a check
//! overlay of the latest committed state, logging what they read; FinalizeBlock runs the
//! whole pipeline again on the block overlay, because a proposer can put anything in a block.
//!
//! Layout: `app.rs` (the ABCI++ façade and the table of its parts: `storage.rs`, `shared.rs`,
//! `admission.rs`, `proposal.rs`, `block.rs`, `statesync.rs`, `query.rs`), `pipeline.rs`,
//! `footprint.rs` (what an admission read and wrote), `tx.rs`, `msg.rs`, `ante.rs`,
//! `screen.rs`, `sigcache.rs`, `readcache.rs`, `genesis.rs`, `state_key.rs`, `grpc.rs` (the
//! router's shared items), `hooks.rs` (what a driver adds to each block's commit: the tx index,
//! the block store), `store_check.rs` (the store's verification at open), `dropper.rs` (a
//! block's leftovers freed off the block's thread).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

mod admission;
mod ante;
mod app;
pub mod audit_export;
mod block;
pub mod config;
pub mod dropper;
pub mod error;
pub mod export;
pub mod footprint;
pub mod genesis;
pub mod grpc;
pub mod history;
pub mod hooks;
pub mod modules;
pub mod msg;
pub mod optimistic;
pub mod pipeline;
#[cfg(test)]
mod probe;
mod proposal;
pub mod query;
pub mod readcache;
pub mod screen;
mod shared;
mod sigcache;
pub mod state_key;
pub mod statesync;
mod stopwatch;
mod storage;
mod store_check;
pub mod trace;
pub mod tx;
pub mod upgrades;

pub use admission::{CheckOutcome, CheckRebuild, SimulateOutcome};
pub use ante::fee_collector;
pub use app::App;
pub use cnidarium;
pub use config::AppConfig;
pub use error::AppError;
pub use footprint::Footprint;
pub use genesis::AppGenesis;
pub use hooks::{BlockHook, BlockRows, NoHook};
pub use lantau_auth as auth;
pub use lantau_authority as authority;
pub use lantau_bank as bank;
pub use lantau_compliance as compliance;
pub use lantau_erc20 as erc20;
pub use lantau_evm as evm;
pub use lantau_group as group;
pub use lantau_kyc as kyc;
pub use lantau_module_api as module_api;
pub use lantau_reserve as reserve;
pub use lantau_stablecoin as stablecoin;
pub use lantau_store as store;
pub use lantau_upgrade as upgrade;
pub use query::Queries;
pub use tendermint;
pub use tendermint_proto;
pub use tx::DecodedTx;

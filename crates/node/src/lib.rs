//! The Lantau node: configuration, home and genesis, the mempool, the embedded engine, the
//! tx indexer and block store, and the [`node::EmbeddedNode`] behind every server. The
//! `lantaud` binary and its CLI are the `lantau-cli` crate.
//!
//! Layout: `config.rs`, `home.rs` (dev home and accounts), `genesis.rs`, `mempool.rs`,
//! `txpool.rs` (admission, recheck and forwarding: the mempool both drivers use),
//! `engine.rs` (embedded single-validator engine), `indexer.rs` (block hook: tx index and
//! blocks, written in the same commit as the state), `node.rs` (start, `NodeApi`),
//! `comet.rs` (`NodeApi` under CometBFT), `app_api.rs` (the state-machine methods of
//! `NodeApi`, shared by both), `abci.rs` (the ABCI++ server for CometBFT), `testnet.rs`
//! (`lantaud testnet`: local networks under real CometBFT).

#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // the node is not the state machine
#![cfg_attr(test, allow(unused_crate_dependencies))] // dev-dependencies serve tests/it

pub mod abci;
mod app_api;
pub mod comet;
pub mod config;
pub mod engine;
pub mod export;
pub mod genesis;
pub mod home;
pub mod indexer;
pub mod mempool;
pub mod metrics;
pub mod node;
pub mod testnet;
pub mod txpool;

pub use node::{start, EmbeddedNode, RunningNode, StartOptions};

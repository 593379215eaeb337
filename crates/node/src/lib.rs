//! The `lantaud` node: configuration, home and genesis, the mempool, the embedded engine, the
//! tx indexer and block store, the [`node::EmbeddedNode`] behind every server, and the CLI.
//!
//! Layout: `config.rs`, `home.rs` (dev home and accounts), `genesis.rs`, `mempool.rs`,
//! `engine.rs` (embedded single-validator engine), `indexer.rs` (block hook: tx index and
//! blocks, written in the same commit as the state), `node.rs` (start, `NodeApi`), `cli/`.


#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // the node is not the state machine
#![allow(unused_crate_dependencies)] // clap, rpassword, tracing-subscriber... serve the `lantaud` binary target

pub mod config;
pub mod engine;
pub mod genesis;
pub mod home;
pub mod indexer;
pub mod mempool;
pub mod node;

pub use node::{start, EmbeddedNode, RunningNode, StartOptions};

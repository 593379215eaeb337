//! Lantau's servers, all talking to "the node" through one interface, [`NodeApi`].
//!
//! - [`rest`]: the Cosmos REST surface (gRPC-gateway JSON) on :1317: the standard tx service
//!   (broadcast, get, search, simulate), auth accounts, bank balances, node info.
//! - [`cometbft`]: the CometBFT-compatible RPC on :26657, JSON-RPC over HTTP (POST and URI
//!   forms) and over WebSocket with `subscribe`/`unsubscribe`, in CometBFT's JSON shapes.
//! - [`eth`]: the Ethereum JSON-RPC on :8545 (HTTP) and :8546 (WebSocket).
//! - [`api`]: the [`NodeApi`] trait and the records it returns. The embedded engine implements
//!   it today; a CometBFT-RPC-backed implementation serves the same servers under CometBFT.
//! - [`error`]: the gRPC-status error body `{code, message, details}` and its HTTP mapping.

#![cfg_attr(test, allow(unused_crate_dependencies))]

#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // not state-machine code

pub mod api;
pub mod cometbft;
pub mod error;
pub mod eth;
pub mod json;
pub mod modules;
pub mod rest;

pub use api::{BroadcastResult, NodeApi, NodeEvent, NodeStatus, TxRecord};

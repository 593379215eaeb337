//! Tests of the `lantaud` binary itself: the CLI against a running node, and crash safety of
//! the real process (`kill -9`, restart), and a network of validators under real CometBFT.

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

mod attacks;
mod bench;
mod cli;
mod corruption;
mod crash;
mod evm_limits;
mod export;
mod testnet;
mod upgrade;

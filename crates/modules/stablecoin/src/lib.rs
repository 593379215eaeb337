//! The stablecoin module: HKD stablecoin denoms and their issuers.
//!
//! It owns the denom records (`denom` starting `hkd.`, `display`, `issuer`, `decimals` = 2)
//! and the issuer → denom index (one denom per issuer). Governance whitelists an issuer and
//! creates its denom in one message (the issuer gets a LEVEL_LICENSED_ISSUER identity when it
//! had none, and the denom gets its ERC-20 token pair); the issuer alone mints, burns, pauses
//! and unpauses; the compliance authority freezes and unfreezes addresses.
//!
//! Pause and freeze are enforced where every balance moves, the bank's transfer chokepoint
//! (`bank/paused/<denom>`, `bank/frozen/<addr>`), so they hold for bank sends, multi-sends,
//! mint, burn and the EVM precompile alike, and they act at execution: a transfer admitted
//! before a pause fails in the block.
//!
//! Invariants: a denom is created once and never removed; its issuer never changes; supply
//! changes only through mint and burn.
//!
//! Layout: `msg.rs` ([`StablecoinMsg`]), `handler.rs`, `state.rs`, `state_key.rs`, `query.rs`,
//! `genesis.rs`, `error.rs` (codespace `stablecoin`), `deps.rs`.

#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod deps;
pub mod error;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod state;
pub mod state_key;

pub use error::StablecoinError;
pub use lantau_proto::chain::stablecoin::v1::Denom as DenomRecord;
pub use msg::StablecoinMsg;
pub use state::{StablecoinRead, StablecoinWrite};

/// The module name.
pub const MODULE_NAME: &str = "stablecoin";

/// The only decimals a stablecoin has.
pub const DECIMALS: u32 = 2;

/// Longest `display`.
pub const MAX_DISPLAY_LEN: usize = 32;

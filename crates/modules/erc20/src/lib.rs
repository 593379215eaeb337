//! The erc20 module: one token pair per stablecoin denom, binding the denom to the address of
//! its ERC-20 precompile (served by the EVM module), in Cosmos EVM's `TokenPair` shape.
//!
//! A pair is registered by the stablecoin module when governance creates the denom; it has no
//! messages of its own. The address is deterministic: the last 20 bytes of
//! keccak256(`"erc20|" ‖ denom`), so every node and every client derives the same one, and it
//! can never collide with a key-derived account in practice.
//!
//! Invariants: one pair per denom, one denom per address, pairs are never removed.
//!
//! Layout: `state_key.rs`, `state.rs`, `query.rs`, `error.rs` (codespace `erc20`); the address
//! derivation, [`token_address`], here. No `msg.rs`, `handler.rs` or `tests/`: the module has no
//! messages (pairs are registered by the stablecoin module's `MsgCreateDenom`, whose tests cover
//! it). No `genesis.rs`: the module has no genesis section (the stablecoin genesis registers
//! the pairs of its denoms). No `event.rs`: it emits no event (the stablecoin's
//! `EventDenomCreated` carries the address). No `deps.rs`: it needs no other module.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod error;
pub mod query;
pub mod state;
pub mod state_key;

pub use error::Erc20Error;
pub use lantau_proto::erc20::{Owner, TokenPair};
pub use state::{Erc20Read, Erc20Write};

use lantau_primitives::Address;

/// The module name.
pub const MODULE_NAME: &str = "erc20";

/// The ERC-20 precompile address of a native denom.
pub fn token_address(denom: &str) -> Address {
    let h = lantau_crypto::keccak256(format!("erc20|{denom}").as_bytes());
    let mut a = [0u8; 20];
    a.copy_from_slice(&h[12..]);
    Address(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_deterministic_and_distinct() {
        assert_eq!(token_address("hkd.demo"), token_address("hkd.demo"));
        assert_ne!(token_address("hkd.demo"), token_address("hkd.other"));
    }
}

/// The erc20 module in the app's module list: token pairs, registered by the stablecoin
/// module; no genesis section of its own, no messages.
#[derive(Debug, Clone, Copy)]
pub struct Erc20;

impl lantau_module_api::Module for Erc20 {
    const NAME: &'static str = MODULE_NAME;
    type Genesis = lantau_module_api::EmptyGenesis;
    type Msg = lantau_module_api::NoMsg;

    /// Every Ethereum transaction looks up the token pairs (a handful, changed only when a
    /// denom is created).
    const MEMOIZED_SCANS: &'static [&'static str] = &[state_key::PAIR_PREFIX];

    fn default_genesis() -> Self::Genesis {
        Default::default()
    }

    async fn init_genesis<S: cnidarium::StateWrite + Send + Sync>(
        _state: &mut S,
        _g: &Self::Genesis,
        _block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        Ok(())
    }

    async fn query<S: cnidarium::StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
        query::grpc(state, method, request).await
    }
}

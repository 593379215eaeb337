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
//! Layout: `state_key.rs` (keys), `state.rs` (typed read/write), `genesis.rs`, `query.rs`. No
//! `msg.rs`, `handler.rs` or `tests/`: the module has no messages (the ante, in the app, checks
//! and advances sequences and sets public keys through [`AuthWrite`]). No `event.rs`: it emits
//! no event. No `error.rs`: its only failures are internal (a corrupt record). No
//! `deps.rs`: it needs no other module.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod genesis;
pub mod query;
pub mod state;
pub mod state_key;

pub use lantau_proto::chain::auth::v1::StoredAccount;
pub use state::{AuthRead, AuthWrite};

/// The auth module in the app's module list: accounts; no messages of its own.
#[derive(Debug, Clone, Copy)]
pub struct Auth;

impl lantau_module_api::Module for Auth {
    const NAME: &'static str = "auth";
    type Genesis = genesis::GenesisState;
    type Msg = lantau_module_api::NoMsg;

    fn default_genesis() -> Self::Genesis {
        Default::default()
    }

    async fn init_genesis<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        g: &Self::Genesis,
        _block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        genesis::init_genesis(state, g).await
    }

    async fn query<S: cnidarium::StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
        query::grpc(state, method, request).await
    }
}

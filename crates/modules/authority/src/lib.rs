//! The chain's two authorities.
//!
//! - The **governance authority** signs every module's `MsgUpdateParams`, whitelists issuers
//!   (stablecoin `MsgCreateDenom`) and registers auditors and registrars (through those modules'
//!   params). Today it is one address fixed in genesis (`authority.governance`); a governance
//!   module (proposals and votes) would later own that address as its module account, so that
//!   the messages keep the same signer field and the same checks.
//! - The **compliance authority** signs `MsgUpdateSanctionsList`, `MsgUpdateRule`, and the
//!   freeze and single-address blacklist messages of the stablecoin and KYC modules. It is the
//!   `authority` of the compliance params; governance rotates it with the compliance module's
//!   `MsgUpdateParams`.
//!
//! Both live here, below every module that checks them, so that no module depends on another
//! module's params to know who may sign. Invariant: both are always set after genesis.
//!
//! Layout: `state_key.rs`, `state.rs`, `genesis.rs`. No `msg.rs`, `handler.rs` or `tests/`: the
//! module has no messages (the compliance authority is rotated by the compliance module's
//! `MsgUpdateParams`, through [`AuthorityWrite`]). No `query.rs`: it serves no query of its
//! own (the compliance authority is the `authority` of the compliance params). No `event.rs`:
//! it emits no event.
//! No `error.rs`: its only failures are internal (an authority not set) or the `sdk`
//! codespace's (genesis). No `deps.rs`: it needs no other module.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod genesis;
pub mod state;
pub mod state_key;

pub use state::{AuthorityRead, AuthorityWrite};

/// The authority module in the app's module list: the governance address; no messages.
#[derive(Debug, Clone, Copy)]
pub struct Authority;

impl lantau_module_api::Module for Authority {
    const NAME: &'static str = "authority";
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
        genesis::init_genesis(state, g).map(|_governance| ())
    }
}

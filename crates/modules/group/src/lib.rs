//! The group module: accounts held under M-of-N control, modelled on the Cosmos SDK's x/group
//! with one decision policy per group (a threshold of member weight and a voting period).
//!
//! A group account's address is derived from its id ([`group_address`]); no key exists for it,
//! so it acts only through its proposals. A member proposes messages whose signer is the group
//! (the submission is the proposer's YES vote); members vote YES, NO or ABSTAIN once each; a
//! proposal whose YES weight reaches the threshold is ACCEPTED and anyone may execute it until
//! its voting period ends (`exec` on the vote or submission that accepts it runs it in the same
//! transaction). Execution hands the messages to the app ([`lantau_module_api::Dispatch`]), which
//! runs them as the group, all or none, through the pipeline's message step and its own
//! screening session, then calls [`handler::record_exec`]. A failed run (a message refused,
//! nothing kept) can be retried until expiry; a successful one is final. A proposal that
//! expires does nothing. `MsgUpdateGroup` (members, threshold, period), itself a proposal of the
//! group, raises the group's version and aborts the proposals of older versions.
//!
//! Any authority, issuer or role holder can be a group address: their checks compare the
//! message's signer with the address they keep, and a proposal's messages are signed by the
//! group.
//!
//! Every step is an audit row (`group_create`, `group_update`, `group_proposal`, `group_vote`,
//! `group_exec`, with `proposal_id` in the metadata).
//!
//! Layout: `msg.rs` ([`GroupMsg`]), `handler.rs`, `state.rs`, `state_key.rs`, `query.rs`,
//! `genesis.rs`, `error.rs` (codespace `group`). Events are the typed protobuf events of
//! `chain.group.v1`.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod error;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod state;
pub mod state_key;

pub use error::GroupError;
pub use lantau_proto::chain::group::v1::{ExecutorResult, GroupInfo, Member, Proposal, ProposalStatus, Vote, VoteOption};
pub use msg::GroupMsg;
pub use state::{GroupRead, GroupWrite};

use sha2::Digest as _;

/// The module name.
pub const MODULE_NAME: &str = "group";

/// The most members a group has.
pub const MAX_MEMBERS: usize = 64;
/// The most messages a proposal carries.
pub const MAX_PROPOSAL_MSGS: usize = 16;
/// The longest voting period: 366 days.
pub const MAX_VOTING_PERIOD_SECS: u64 = 366 * 86_400;
/// The longest metadata, in bytes.
pub const MAX_METADATA: usize = 512;
/// The longest error log a failed execution keeps.
pub const MAX_RESULT_LOG: usize = 512;

/// The address of group `id`: the first 20 bytes of `sha256("lantau/group/" ‖ id as 8
/// big-endian bytes)`. No secp256k1 key hashes to it in practice, so only the group's
/// proposals can act for it.
pub fn group_address(id: u64) -> lantau_primitives::Address {
    let mut h = sha2::Sha256::new();
    h.update(b"lantau/group/");
    h.update(id.to_be_bytes());
    let d = h.finalize();
    let mut a = [0u8; 20];
    a.copy_from_slice(d.get(..20).unwrap_or(&[0; 20]));
    lantau_primitives::Address(a)
}

/// A proposal's status as of `now`: ABORTED when its group is no longer at the version it was
/// made at, EXPIRED when its period ended, unless it was executed (then as stored).
pub fn effective_status(p: &Proposal, group_version: Option<u64>, now: time::OffsetDateTime) -> ProposalStatus {
    let stored = ProposalStatus::try_from(p.status).unwrap_or(ProposalStatus::Unspecified);
    if p.executor_result == ExecutorResult::Success as i32 {
        return stored;
    }
    if group_version != Some(p.group_version) {
        return ProposalStatus::Aborted;
    }
    if p.expires_at.as_ref().and_then(lantau_proto::from_timestamp).is_some_and(|at| now >= at) {
        return ProposalStatus::Expired;
    }
    stored
}

/// The group module in the app's module list.
#[derive(Debug, Clone, Copy)]
pub struct Group;

impl lantau_module_api::ModuleMsg for GroupMsg {
    fn type_url(&self) -> &'static str {
        GroupMsg::type_url(self)
    }
    fn signer(&self) -> lantau_primitives::Address {
        GroupMsg::signer(self)
    }
    /// None of its own: a proposal's movements are screened when it runs, as the group's.
    fn facts(&self, _msg_index: usize) -> Vec<lantau_module_api::Fact> {
        Vec::new()
    }
}

impl lantau_module_api::Module for Group {
    const NAME: &'static str = MODULE_NAME;
    type Genesis = genesis::GenesisState;
    type Msg = GroupMsg;

    fn default_genesis() -> Self::Genesis {
        Default::default()
    }

    async fn init_genesis<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        g: &Self::Genesis,
        block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        genesis::init_genesis(state, g, block).await
    }

    fn decode(any: &cosmos_sdk_proto::Any) -> Option<Result<Self::Msg, lantau_module_api::TxError>> {
        GroupMsg::from_any(any)
    }

    async fn query<S: cnidarium::StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
        query::grpc(state, method, request).await
    }

    /// Version 1. A store from before the module (version 0) has no group records: its
    /// migration writes nothing.
    const STATE_VERSION: u64 = 1;

    async fn migrate<S: cnidarium::StateWrite + Send + Sync>(
        _state: &mut S,
        from: u64,
        _gas: &lantau_module_api::GasMeter,
        _block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        match from {
            0 => Ok(()),
            _ => Err(lantau_module_api::error::internal(format!("the group module has no migration from state version {from}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_addresses_differ_by_id_and_are_stable() {
        assert_ne!(group_address(1), group_address(2));
        assert_eq!(group_address(1), group_address(1));
        assert_eq!(group_address(1).to_bech32().len(), 45);
    }
}

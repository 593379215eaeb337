//! The KYC module: the identity registry.
//!
//! It owns one [`Identity`] per enrolled address (level, VASP identifier, IVMS 101 reference,
//! enrolment and level-change times), the params (`level_definitions[]`: level → Travel Rule
//! tier; `registrars[]`: who may enrol), and the internal, idempotent [`KycWrite::blacklist`]
//! that the compliance module (sanctions pushes, BLOCKED flag decisions) and this module's
//! `MsgBlacklistAddress` call.
//!
//! Invariants:
//! - blacklisting changes only the level; VASP and reference stay;
//! - a blacklisted identity is never changed by a registrar (there is no un-blacklist path in
//!   v1, as the sanctions list has no removal path);
//! - a level that the params do not map has tier `none`; LEVEL_BLACKLISTED is never "above"
//!   any level;
//! - an address without a record has tier `none` and no reference.
//!
//! The rules here are the module's own authority and state checks, not compliance gates.
//!
//! Layout: `msg.rs` (validated messages, [`KycMsg`]), `handler.rs`, `state.rs`,
//! `state_key.rs`, `query.rs`, `genesis.rs`, `error.rs` (codespace `kyc`), `tier.rs` (level →
//! Travel Rule tier), `tests/` (handler unit tests on a temporary store). No `event.rs`: the
//! module's events are the typed protobuf events of `chain.kyc.v1` (`EventIdentityEnrolled`,
//! `EventIdentityUpdated`, `EventLevelChanged`, `EventParamsUpdated`), emitted with
//! `emit_typed` where they happen. No `deps.rs`: it needs nothing from a module above it; it
//! reads the authorities (`lantau-authority`) and appends to the audit log
//! (`lantau-audit`), both below it.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod error;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod state;
pub mod state_key;
pub mod tier;

pub use error::KycError;
pub use lantau_proto::chain::kyc::v1::{Identity, Level, LevelDefinition, Params};
pub use msg::KycMsg;
pub use state::{KycRead, KycWrite};
pub use tier::Tier;

/// The module name (`message.module`).
pub const MODULE_NAME: &str = "kyc";

/// Longest `vasp_identifier`, in bytes.
pub const MAX_VASP_LEN: usize = 128;
/// Longest `ivms101_off_chain_ref`, `evidence_ref`, in bytes.
pub const MAX_REF_LEN: usize = 512;
/// Longest `reason`, in bytes.
pub const MAX_REASON_LEN: usize = 256;

/// The kyc module in the app's module list.
#[derive(Debug, Clone, Copy)]
pub struct Kyc;

impl lantau_module_api::ModuleMsg for KycMsg {
    fn type_url(&self) -> &'static str {
        KycMsg::type_url(self)
    }
    fn signer(&self) -> lantau_primitives::Address {
        KycMsg::signer(self)
    }
    fn facts(&self, _msg_index: usize) -> Vec<lantau_module_api::Fact> {
        Vec::new()
    }
}

impl lantau_module_api::Module for Kyc {
    const NAME: &'static str = MODULE_NAME;
    type Genesis = genesis::GenesisState;
    type Msg = KycMsg;

    fn default_genesis() -> Self::Genesis {
        genesis::default_genesis()
    }

    async fn init_genesis<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        g: &Self::Genesis,
        _block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        genesis::init_genesis(state, g)
    }

    fn decode(any: &cosmos_sdk_proto::Any) -> Option<Result<Self::Msg, lantau_module_api::TxError>> {
        KycMsg::from_any(any)
    }

    async fn query<S: cnidarium::StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
        query::grpc(state, method, request).await
    }
}

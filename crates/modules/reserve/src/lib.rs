//! The reserve module: auditors registered by governance, and issuers' reserve attestations
//! that a registered auditor co-signs.
//!
//! An issuer (the issuer of a stablecoin denom) submits an attestation (circulation and
//! reserve market value in its denom, and the `random_day` the reserve was measured); it is
//! ATTESTATION_STATE_SUBMITTED. A registered auditor other than the issuer co-signs it once,
//! which makes it ATTESTATION_STATE_ATTESTED. Attestation ids are sequential from 1. The
//! latest attestation of an issuer is the one it submitted last, whatever its state.
//!
//! Invariants: an attestation is never deleted; ATTESTED is terminal; its auditor was
//! registered when it co-signed.
//!
//! Layout: `msg.rs` ([`ReserveMsg`]), `handler.rs`, `state.rs`, `state_key.rs`, `query.rs`,
//! `genesis.rs`, `error.rs` (codespace `reserve`), `tests/` (handler unit tests on a temporary
//! store). No `event.rs`: the module's events are the typed protobuf events of
//! `chain.reserve.v1` (`EventAttestationSubmitted`, `EventAttestationCosigned`,
//! `EventParamsUpdated`), emitted with `emit_typed` in `handler.rs`. No `deps.rs`: the one thing
//! it reads from another module, an issuer's denom, it reads through the bank's
//! `BankRead::issuer_denom` (and the governance authority through `lantau-authority`).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod error;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod state;
pub mod state_key;

pub use error::ReserveError;
pub use lantau_proto::chain::reserve::v1::{Attestation, AttestationState, Params};
pub use msg::ReserveMsg;
pub use state::{ReserveRead, ReserveWrite};

/// The module name.
pub const MODULE_NAME: &str = "reserve";

/// The reserve module in the app's module list.
#[derive(Debug, Clone, Copy)]
pub struct Reserve;

impl lantau_module_api::ModuleMsg for ReserveMsg {
    fn type_url(&self) -> &'static str {
        ReserveMsg::type_url(self)
    }
    fn signer(&self) -> lantau_primitives::Address {
        ReserveMsg::signer(self)
    }
    fn facts(&self, _msg_index: usize) -> Vec<lantau_module_api::Fact> {
        Vec::new()
    }
}

impl lantau_module_api::Module for Reserve {
    const NAME: &'static str = MODULE_NAME;
    type Genesis = genesis::GenesisState;
    type Msg = ReserveMsg;

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

    fn decode(any: &cosmos_sdk_proto::Any) -> Option<Result<Self::Msg, lantau_module_api::TxError>> {
        ReserveMsg::from_any(any)
    }

    async fn query<S: cnidarium::StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
        query::grpc(state, method, request).await
    }

    /// Version 2 records each issuer's latest ATTESTED attestation
    /// (`reserve/latest_attested/<issuer>`), which mints are measured against.
    const STATE_VERSION: u64 = 2;

    async fn migrate<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        from: u64,
        gas: &lantau_module_api::GasMeter,
        _block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        match from {
            1 => {
                // Every attestation, in id order: the last ATTESTED one of each issuer.
                let mut latest = std::collections::BTreeMap::new();
                for (k, v) in lantau_module_api::store::scan_prefix(state, state_key::ATTESTATION_PREFIX).await? {
                    let a: Attestation = lantau_module_api::store::decode(&v, &k)?;
                    if a.state == AttestationState::Attested as i32 {
                        let issuer = lantau_primitives::Address::from_bech32(&a.issuer)
                            .map_err(|e| lantau_module_api::error::internal(format!("attestation {}: issuer: {e}", a.id)))?;
                        latest.insert(issuer, a.id);
                    }
                }
                for (issuer, id) in latest {
                    state::ReserveWrite::record_attested(state, gas, &issuer, id).await?;
                }
                Ok(())
            }
            _ => Err(lantau_module_api::error::internal(format!("the reserve module has no migration from state version {from}"))),
        }
    }
}

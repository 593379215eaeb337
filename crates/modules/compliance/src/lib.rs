//! The compliance module.
//!
//! - Params: the compliance authority (stored with the governance authority in
//!   `lantau-authority`, so that every module can check it) and the decorator rules
//!   (`travel_rule_full_threshold`, `velocity_window_seconds`, `velocity_tx_limit`; defaults
//!   800000 / 60 / 10), with governance's `MsgUpdateParams` and the authority's
//!   `MsgUpdateRule`; the sanctions set (`MsgUpdateSanctionsList`).
//! - [`gates`]: the one gate chain, called from admission, execution and simulation;
//!   [`screening`]: the proofs of screening (and the issuer's audited exemptions) that the
//!   bank's one transfer function demands before it moves a stablecoin;
//!   [`effects`]: what a screened transfer leaves behind.
//! - [`audit`]: the append-only audit log (rows and secondary indexes in the non-verifiable
//!   store, a sequence counter and a hash-chain head in verifiable state).
//! - [`flags`]: the flag queue; [`review`]: its review workflow (MsgReviewFlag,
//!   MsgEscalateFlag, MsgCloseFlag). Flags and velocity windows are non-verifiable records
//!   committed by one lattice hash in verifiable state ([`records`]).
//! - [`delegation`]: sub-role bindings and agent policies (MsgBindSubRole, MsgRevokeSubRole,
//!   MsgBindAgentPolicy), read by the role gate.
//!
//! Layout: `msg.rs` ([`ComplianceMsg`]), `handler.rs`, `state.rs`, `state_key.rs`, `query.rs`,
//! `genesis.rs`, `error.rs` (codespace `compliance`), and the parts above, one file each. No
//! `event.rs`: its events are the typed protobuf events of `chain.compliance.v1`, emitted with
//! `emit_typed` by the handler, [`review`] and [`delegation`]. No `deps.rs`: it reads and
//! blacklists identities through the KYC module's own traits and reads the authorities through
//! `lantau-authority`. `tests/` (handler unit tests on a temporary store: `params.rs`,
//! `review.rs`, `delegation.rs`); the gates, records, audit log, messages and state keys keep
//! their `#[cfg(test)]` modules.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod audit;
pub mod delegation;
pub mod effects;
pub mod error;
pub mod flags;
pub mod gates;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod records;
pub mod review;
pub mod screening;
pub mod state;
pub mod state_key;

pub use audit::{AuditEntry, AuditFilter, AuditRead, AuditWrite};
pub use error::ComplianceError;
pub use lantau_proto::chain::compliance::v1::{
    AgentPolicy, AgentWindow, DecoratorResult, Flag, FlagStatus, GateResult, Params, Rules, SanctionsSet, SubRole, SubRoleBinding, TravelRulePayload,
};
pub use msg::ComplianceMsg;
pub use state::{ComplianceRead, ComplianceWrite};

/// The module name.
pub const MODULE_NAME: &str = "compliance";

/// The default rules: 800000 (8,000.00 HKD), 60 seconds, 10 transfers.
pub fn default_rules() -> Rules {
    Rules { travel_rule_full_threshold: 800_000, velocity_window_seconds: 60, velocity_tx_limit: 10 }
}

/// The compliance module in the app's module list.
#[derive(Debug, Clone, Copy)]
pub struct Compliance;

impl lantau_module_api::ModuleMsg for ComplianceMsg {
    fn type_url(&self) -> &'static str {
        ComplianceMsg::type_url(self)
    }
    fn signer(&self) -> lantau_primitives::Address {
        ComplianceMsg::signer(self)
    }
    fn facts(&self, _msg_index: usize) -> Vec<lantau_module_api::Fact> {
        Vec::new()
    }
}

impl lantau_module_api::Module for Compliance {
    const NAME: &'static str = MODULE_NAME;
    type Genesis = genesis::GenesisState;
    type Msg = ComplianceMsg;

    fn default_genesis() -> Self::Genesis {
        Default::default()
    }

    async fn init_genesis<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        g: &Self::Genesis,
        _block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        use lantau_authority::AuthorityRead;
        let governance = state.governance_authority(&lantau_module_api::GasMeter::infinite()).await?;
        genesis::init_genesis(state, g, &governance)?;
        genesis::init_bindings(state, g).await
    }

    fn decode(any: &cosmos_sdk_proto::Any) -> Option<Result<Self::Msg, lantau_module_api::TxError>> {
        ComplianceMsg::from_any(any)
    }

    async fn query<S: cnidarium::StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
        query::answer(state, method, request).await
    }

    /// Every screened transfer reads its sender's velocity window twice.
    const CACHED_NONVERIFIABLE: &'static [&'static str] = &[state_key::VELOCITY_PREFIX];

    /// Flags and velocity windows live outside the Merkle tree (the records lattice commits to
    /// them); a store that holds them in the tree was written under the older layout.
    const RETIRED_VERIFIABLE: &'static [(&'static str, &'static str)] = &[(state_key::FLAG_PREFIX, "flags"), (state_key::VELOCITY_PREFIX, "velocity windows")];

    /// The Travel Rule payloads: anchored once, under the hash of the transaction that carried
    /// them.
    const WRITE_ONCE_NONVERIFIABLE: &'static [&'static [u8]] = &[state_key::TRAVEL_RULE_PREFIX];

    /// The audit log's rows and indexes: appended, never rewritten, every key ending with the
    /// row's sequence, which `compliance/audit_seq` counts.
    const SEQUENCED_NONVERIFIABLE: &'static [(&'static [u8], &'static str)] = &[(state_key::AUDIT_NV_PREFIX, state_key::AUDIT_SEQ)];

    /// The audit log's rows (the app hash commits to them through the verifiable hash-chain
    /// head), the flags and velocity windows (committed by the records lattice) and the
    /// anchored Travel Rule payloads; the audit indexes are rebuilt.
    const SNAPSHOT_NONVERIFIABLE: &'static [&'static [u8]] =
        &[state_key::AUDIT_ROW_PREFIX, state_key::FLAG_PREFIX.as_bytes(), state_key::VELOCITY_PREFIX.as_bytes(), state_key::TRAVEL_RULE_PREFIX];

    async fn restore_snapshot<S: cnidarium::StateWrite + Send + Sync>(state: &mut S) -> Result<(), lantau_module_api::TxError> {
        audit::restore_indexes(state).await?;
        records::check(state).await?;
        effects::check_anchored_payloads(state).await
    }
}

/// The gRPC method of AuditLog.
pub const QUERY_AUDIT_LOG: &str = "/chain.compliance.v1.Query/AuditLog";
/// The gRPC method of Params.
pub const QUERY_PARAMS: &str = "/chain.compliance.v1.Query/Params";
/// The gRPC method of Flags.
pub const QUERY_FLAGS: &str = "/chain.compliance.v1.Query/Flags";
/// The gRPC method of Report.
pub const QUERY_REPORT: &str = "/chain.compliance.v1.Query/Report";
/// The gRPC method of TxTrace (answered by the app: the trace buffer is the node's).
pub const QUERY_TX_TRACE: &str = "/chain.compliance.v1.Query/TxTrace";
/// The gRPC method of SimulateTrace (answered by the app: it runs the gates on the admission
/// state).
pub const QUERY_SIMULATE_TRACE: &str = "/chain.compliance.v1.Query/SimulateTrace";
/// The gRPC method of TravelRulePayload.
pub const QUERY_TRAVEL_RULE_PAYLOAD: &str = "/chain.compliance.v1.Query/TravelRulePayload";
/// The gRPC method of SubRoleBindings.
pub const QUERY_SUB_ROLE_BINDINGS: &str = "/chain.compliance.v1.Query/SubRoleBindings";
/// The gRPC method of SubRoleParent.
pub const QUERY_SUB_ROLE_PARENT: &str = "/chain.compliance.v1.Query/SubRoleParent";
/// The gRPC method of AgentPolicy.
pub const QUERY_AGENT_POLICY: &str = "/chain.compliance.v1.Query/AgentPolicy";
/// The gRPC method of SanctionsSet.
pub const QUERY_SANCTIONS_SET: &str = "/chain.compliance.v1.Query/SanctionsSet";

//! The compliance module.
//!
//! This crate holds, so far, the module's params: the compliance authority (stored with the
//! governance authority in `lantau-authority`, so that every module can check it) and the
//! decorator rules (`travel_rule_full_threshold`, `velocity_window_seconds`,
//! `velocity_tx_limit`; defaults 800000 / 60 / 10), with governance's `MsgUpdateParams`, which
//! can rotate the compliance authority; and the append-only audit log ([`audit`]): rows and
//! secondary indexes in the non-verifiable store, a sequence counter and a hash-chain head over
//! every row in verifiable state, and the AuditLog query. The gate chain, flags and sanctions
//! build on it.
//!
//! Layout: `msg.rs` ([`ComplianceMsg`]), `handler.rs`, `state.rs`, `state_key.rs`, `query.rs`,
//! `genesis.rs`, `audit.rs` ([`AuditWrite::append_audit`], [`query::audit_log`]), `error.rs`
//! (codespace `compliance`).

#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod effects;
pub mod audit;
pub mod error;
pub mod flags;
pub mod gates;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod state;
pub mod state_key;

pub use audit::{AuditEntry, AuditFilter, AuditRead, AuditWrite};
pub use error::ComplianceError;
pub use lantau_proto::chain::compliance::v1::{
    AgentPolicy, AgentWindow, DecoratorResult, Flag, FlagStatus, GateResult, Params, Rules, SanctionsSet, SubRole, SubRoleBinding,
    TravelRulePayload,
};
pub use msg::ComplianceMsg;
pub use state::{ComplianceRead, ComplianceWrite};

/// The module name.
pub const MODULE_NAME: &str = "compliance";

/// The default rules: 800000 (8,000.00 HKD), 60 seconds, 10 transfers.
pub fn default_rules() -> Rules {
    Rules { travel_rule_full_threshold: 800_000, velocity_window_seconds: 60, velocity_tx_limit: 10 }
}

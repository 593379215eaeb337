//! The compliance module.
//!
//! - Params: the compliance authority (stored with the governance authority in
//!   `lantau-authority`, so that every module can check it) and the decorator rules
//!   (`travel_rule_full_threshold`, `velocity_window_seconds`, `velocity_tx_limit`; defaults
//!   800000 / 60 / 10), with governance's `MsgUpdateParams` and the authority's
//!   `MsgUpdateRule`; the sanctions set (`MsgUpdateSanctionsList`).
//! - [`gates`]: the one gate chain, called from admission, execution and simulation;
//!   [`effects`]: what a screened transfer leaves behind.
//! - [`audit`]: the append-only audit log (rows and secondary indexes in the non-verifiable
//!   store, a sequence counter and a hash-chain head in verifiable state).
//! - [`flags`]: the flag queue; [`review`]: its review workflow (MsgReviewFlag,
//!   MsgEscalateFlag, MsgCloseFlag).
//! - [`delegation`]: sub-role bindings and agent policies (MsgBindSubRole, MsgRevokeSubRole,
//!   MsgBindAgentPolicy), read by the role gate.
//!
//! Layout: `msg.rs` ([`ComplianceMsg`]), `handler.rs`, `state.rs`, `state_key.rs`, `query.rs`,
//! `genesis.rs`, `error.rs` (codespace `compliance`).

#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod effects;
pub mod audit;
pub mod delegation;
pub mod error;
pub mod flags;
pub mod gates;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod review;
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

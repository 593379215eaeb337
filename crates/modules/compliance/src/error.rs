//! Compliance errors (codespace `compliance`). Gate rejections use 11, 13, 14 and 18-21 (fixed
//! by the brief); handler failures use the other numbers. All are listed in
//! `docs/modules/compliance.md`.

use lantau_module_api::{ErrorCode, TxError};

/// A compliance handler failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComplianceError {
    /// 2: the signer is not the governance authority.
    #[error("unauthorized: expected the governance authority {expected}, got {signer}")]
    NotGovernance {
        /// Governance.
        expected: String,
        /// Who signed.
        signer: String,
    },
    /// 3: the signer is not the compliance authority.
    #[error("unauthorized: expected the compliance authority {expected}, got {signer}")]
    NotComplianceAuthority {
        /// The compliance authority.
        expected: String,
        /// Who signed.
        signer: String,
    },
    /// 4: the params or rules are invalid.
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// 11 (gate): a bound sub-key signed a message its role does not allow.
    #[error("{0}")]
    RoleNotPermitted(String),
    /// 13 (gate): an agent transfer exceeds its per-transaction or daily cap.
    #[error("{0}")]
    AgentCapExceeded(String),
    /// 14 (gate): an agent transfer in a denom other than its envelope's.
    #[error("{0}")]
    AgentDenomMismatch(String),
    /// 18 (gate): a party is blacklisted; the log names it (`recipient=<address>: address is blacklisted`).
    #[error("{0}")]
    PartyBlacklisted(String),
    /// 19 (gate): a party's registered VASP is on the sanctions list.
    #[error("{0}")]
    VaspSanctioned(String),
    /// 20 (gate): the Travel Rule payload is missing or incomplete.
    #[error("{0}")]
    TravelRuleIncomplete(String),
    /// 21 (gate): the payload's tier or the sender's capability does not meet the Travel Rule.
    #[error("{0}")]
    TravelRuleTier(String),
    /// 5: an audit entry handed to `append_audit` is malformed (bad tx_type, tx_hash or
    /// address). Rows are built by this module's own code, so this signals a bug, reported
    /// instead of writing an unindexable row.
    #[error("invalid audit entry: {0}")]
    InvalidAuditEntry(String),
}

impl ErrorCode for ComplianceError {
    fn codespace(&self) -> &'static str {
        "compliance"
    }
    fn code(&self) -> u32 {
        match self {
            ComplianceError::NotGovernance { .. } => 2,
            ComplianceError::NotComplianceAuthority { .. } => 3,
            ComplianceError::InvalidParams(_) => 4,
            ComplianceError::RoleNotPermitted(_) => 11,
            ComplianceError::AgentCapExceeded(_) => 13,
            ComplianceError::AgentDenomMismatch(_) => 14,
            ComplianceError::PartyBlacklisted(_) => 18,
            ComplianceError::VaspSanctioned(_) => 19,
            ComplianceError::TravelRuleIncomplete(_) => 20,
            ComplianceError::TravelRuleTier(_) => 21,
            ComplianceError::InvalidAuditEntry(_) => 5,
        }
    }
}

impl From<ComplianceError> for TxError {
    fn from(e: ComplianceError) -> Self {
        TxError::from_code(&e)
    }
}

//! Compliance errors (codespace `compliance`). Gate rejections use 11, 13, 14 and 18-21 (fixed
//! by the product's fixed decisions); handler failures use the other numbers. All are listed in
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
    /// 22 (gate): a party's identity has lapsed at the block time; the log names the party
    /// and the date (`sender=<address>: identity expired at 2027-06-30T00:00:00Z`).
    #[error("{0}")]
    IdentityExpired(String),
    /// 19 (gate): a party's registered VASP is on the sanctions list.
    #[error("{0}")]
    VaspSanctioned(String),
    /// 20 (gate): the Travel Rule payload is missing or incomplete.
    #[error("{0}")]
    TravelRuleIncomplete(String),
    /// 21 (gate): the payload's tier or the sender's capability does not meet the Travel Rule.
    #[error("{0}")]
    TravelRuleTier(String),
    /// 6: no flag has this id.
    #[error("flag {0} not found")]
    FlagNotFound(String),
    /// 7: a review or escalation of a flag that is not EMITTED.
    #[error("flag {id} is {status}: only an EMITTED flag can be reviewed or escalated")]
    FlagNotEmitted {
        /// The flag.
        id: String,
        /// Its status.
        status: String,
    },
    /// 8: a close of a flag that is not PENDING_OFFICER.
    #[error("flag {id} is {status}: only a PENDING_OFFICER flag can be closed")]
    FlagNotPendingOfficer {
        /// The flag.
        id: String,
        /// Its status.
        status: String,
    },
    /// 9: a decision outside APPROVED, BLOCKED, ESCALATED (a close: APPROVED or BLOCKED).
    #[error("invalid decision: {0}")]
    InvalidDecision(String),
    /// 10: the signer holds no active SUB_ROLE_REVIEWER binding.
    #[error("unauthorized: {0}")]
    NotReviewer(String),
    /// 12: the signer holds no active SUB_ROLE_OFFICER binding.
    #[error("unauthorized: {0}")]
    NotOfficer(String),
    /// 15: the sub-key is claimed by another parent.
    #[error("sub-key {sub} is already bound to {parent}")]
    SubKeyClaimed {
        /// The sub-key.
        sub: String,
        /// Its parent.
        parent: String,
    },
    /// 16: the parent's KYC level does not satisfy the role.
    #[error("{0}")]
    ParentLevel(String),
    /// 17: no binding of this sub-key under this parent.
    #[error("no sub-role binding of {sub} under {parent}")]
    BindingNotFound {
        /// The sub-key.
        sub: String,
        /// The parent named.
        parent: String,
    },
    /// 30: the binding is revoked (revoking twice, or a policy for a revoked agent).
    #[error("the sub-role binding of {0} is revoked")]
    BindingRevoked(String),
    /// 23: an agent policy for a binding that is not SUB_ROLE_AGENT.
    #[error("{sub} is bound as {role}, not SUB_ROLE_AGENT: only an agent has a policy")]
    NotAgent {
        /// The sub-key.
        sub: String,
        /// Its role.
        role: String,
    },
    /// 24: the policy envelope is invalid (caps missing, in two denoms, malformed, or
    /// per_tx_cap above daily_cap).
    #[error("invalid policy envelope: {0}")]
    InvalidEnvelope(String),
    /// 25: the binding request is invalid (role unspecified, a key bound to itself, a sub-key
    /// with an identity record of its own, a label too long).
    #[error("invalid sub-role binding: {0}")]
    InvalidBinding(String),
    /// 26: a review message is malformed (flag_id not a decimal id, a hash too long).
    #[error("invalid flag message: {0}")]
    InvalidFlagMsg(String),
    // 5: an invalid audit entry, refused by the audit log's writer (`lantau_audit::InvalidAuditEntry`).
    /// 27: a handler tried to move a stablecoin that the transaction's gate chain did not
    /// screen (no proof of screening for exactly that movement). A bug in the handler, refused
    /// rather than executed.
    #[error("stablecoin movement not screened by the gate chain: {0}")]
    NotScreened(String),
    /// 28: a movement the gate chain screened (and the audit log will record) was not executed
    /// by the transaction's messages.
    #[error("screened stablecoin movement not executed: {0}")]
    ScreenedNotExecuted(String),
    /// 29: a stored record the gates depend on does not parse (a binding's parent, an agent
    /// cap); reported instead of being judged as something else.
    #[error("corrupt compliance record: {0}")]
    CorruptRecord(String),
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
            ComplianceError::FlagNotFound(_) => 6,
            ComplianceError::FlagNotEmitted { .. } => 7,
            ComplianceError::FlagNotPendingOfficer { .. } => 8,
            ComplianceError::InvalidDecision(_) => 9,
            ComplianceError::NotReviewer(_) => 10,
            ComplianceError::NotOfficer(_) => 12,
            ComplianceError::SubKeyClaimed { .. } => 15,
            ComplianceError::ParentLevel(_) => 16,
            ComplianceError::BindingNotFound { .. } => 17,
            ComplianceError::BindingRevoked(_) => 30,
            ComplianceError::IdentityExpired(_) => 22,
            ComplianceError::NotAgent { .. } => 23,
            ComplianceError::InvalidEnvelope(_) => 24,
            ComplianceError::InvalidBinding(_) => 25,
            ComplianceError::InvalidFlagMsg(_) => 26,
            ComplianceError::NotScreened(_) => 27,
            ComplianceError::ScreenedNotExecuted(_) => 28,
            ComplianceError::CorruptRecord(_) => 29,
        }
    }
}

impl From<ComplianceError> for TxError {
    fn from(e: ComplianceError) -> Self {
        TxError::from_code(&e)
    }
}

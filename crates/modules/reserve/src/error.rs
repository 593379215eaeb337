//! Reserve handler errors (codespace `reserve`), listed in `docs/modules/reserve.md`.

use lantau_module_api::{ErrorCode, TxError};

/// A reserve handler failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReserveError {
    /// 2: the signer is not the governance authority.
    #[error("unauthorized: expected the governance authority {expected}, got {signer}")]
    NotGovernance {
        /// Governance.
        expected: String,
        /// Who signed.
        signer: String,
    },
    /// 3: the signer issues no stablecoin.
    #[error("{0} is not a stablecoin issuer")]
    NotAnIssuer(String),
    /// 4: an amount is missing, zero, negative or malformed.
    #[error("invalid amount: {0}")]
    InvalidAmount(String),
    /// 5: an amount is not in the issuer's denom.
    #[error("{field} must be in the issuer's denom {expected}, got {got}")]
    DenomMismatch {
        /// Which field.
        field: &'static str,
        /// The issuer's denom.
        expected: String,
        /// What was sent.
        got: String,
    },
    /// 6: no attestation with this id.
    #[error("attestation {0} not found")]
    AttestationNotFound(u64),
    /// 7: the signer is not a registered auditor.
    #[error("{0} is not a registered auditor")]
    NotAuditor(String),
    /// 8: the attestation is attested already.
    #[error("attestation {id} is already attested by {auditor}")]
    AlreadyAttested {
        /// The attestation.
        id: u64,
        /// Who co-signed it.
        auditor: String,
    },
    /// 9: the params are invalid.
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// 10: `random_day` is missing, malformed or after the block time.
    #[error("invalid random_day: {0}")]
    InvalidRandomDay(String),
    /// 11: an issuer cannot co-sign its own attestation.
    #[error("auditor {0} cannot co-sign its own attestation")]
    SelfAttestation(String),
}

impl ErrorCode for ReserveError {
    fn codespace(&self) -> &'static str {
        "reserve"
    }
    fn code(&self) -> u32 {
        match self {
            ReserveError::NotGovernance { .. } => 2,
            ReserveError::NotAnIssuer(_) => 3,
            ReserveError::InvalidAmount(_) => 4,
            ReserveError::DenomMismatch { .. } => 5,
            ReserveError::AttestationNotFound(_) => 6,
            ReserveError::NotAuditor(_) => 7,
            ReserveError::AlreadyAttested { .. } => 8,
            ReserveError::InvalidParams(_) => 9,
            ReserveError::InvalidRandomDay(_) => 10,
            ReserveError::SelfAttestation(_) => 11,
        }
    }
}

impl From<ReserveError> for TxError {
    fn from(e: ReserveError) -> Self {
        TxError::from_code(&e)
    }
}

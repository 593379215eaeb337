//! Upgrade handler errors (codespace `upgrade`), listed in `docs/modules/upgrade.md`.

use lantau_module_api::{ErrorCode, TxError};

/// An upgrade handler failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpgradeError {
    /// 2: the plan is invalid (the Cosmos SDK answers `sdk` 3 for a malformed plan; this
    /// module keeps its own codespace).
    #[error("invalid plan: {0}")]
    InvalidPlan(String),
    /// 3: the signer is not the governance authority.
    #[error("expected the governance authority {expected}, got {signer}: unauthorized")]
    NotGovernance {
        /// Governance.
        expected: String,
        /// Who signed.
        signer: String,
    },
    /// 4: an upgrade of that name was applied already.
    #[error("upgrade with name {name} has already been completed (at height {height})")]
    AlreadyApplied {
        /// The name.
        name: String,
        /// Where it was applied.
        height: u64,
    },
}

impl ErrorCode for UpgradeError {
    fn codespace(&self) -> &'static str {
        "upgrade"
    }
    fn code(&self) -> u32 {
        match self {
            UpgradeError::InvalidPlan(_) => 2,
            UpgradeError::NotGovernance { .. } => 3,
            UpgradeError::AlreadyApplied { .. } => 4,
        }
    }
}

impl From<UpgradeError> for TxError {
    fn from(e: UpgradeError) -> Self {
        TxError::from_code(&e)
    }
}

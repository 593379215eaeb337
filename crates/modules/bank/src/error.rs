//! Bank errors (codespace `bank`), numbered as the Cosmos SDK's x/bank numbers them.

use lantau_module_api::{ErrorCode, TxError};

/// A bank handler failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BankError {
    /// 2: a multi-send without inputs.
    #[error("no inputs to send transaction")]
    NoInputs,
    /// 3: a multi-send without outputs.
    #[error("no outputs to send transaction")]
    NoOutputs,
    /// 4: the sum of inputs differs from the sum of outputs.
    #[error("sum inputs != sum outputs: {0}")]
    InputOutputMismatch(String),
    /// 5: the denom's movements are paused by its issuer.
    #[error("{0} transfers are paused by its issuer")]
    SendDisabled(String),
    /// 9: a multi-send with more than one input (one signer per transaction).
    #[error("multiple senders not allowed")]
    MultipleSenders,
    /// 12: a feature other than transfers (mint, burn, seize, redeem) is paused for the denom.
    #[error("{feature} of {denom} is paused by its issuer")]
    FeaturePaused {
        /// The denom.
        denom: String,
        /// The feature (`MINT`, `BURN`, `SEIZE`, `REDEEM`).
        feature: &'static str,
    },
    /// 10: a frozen address cannot send or receive stablecoins.
    #[error("{0} is frozen: it cannot send or receive stablecoins")]
    AddressFrozen(String),
    /// 11: a stablecoin offered as a plain movement: it moves only with the gate chain's proof
    /// of screening (or an issuer's exemption).
    #[error("{0}: a stablecoin moves only with a proof of screening")]
    NeedsScreening(String),
}

impl ErrorCode for BankError {
    fn codespace(&self) -> &'static str {
        "bank"
    }
    fn code(&self) -> u32 {
        match self {
            BankError::NoInputs => 2,
            BankError::NoOutputs => 3,
            BankError::InputOutputMismatch(_) => 4,
            BankError::SendDisabled(_) => 5,
            BankError::MultipleSenders => 9,
            BankError::AddressFrozen(_) => 10,
            BankError::FeaturePaused { .. } => 12,
            BankError::NeedsScreening(_) => 11,
        }
    }
}

impl From<BankError> for TxError {
    fn from(e: BankError) -> Self {
        TxError::from_code(&e)
    }
}

//! erc20 errors (codespace `erc20`).

use lantau_module_api::{ErrorCode, TxError};

/// An erc20 failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Erc20Error {
    /// 2: the denom already has a token pair, or its address is taken.
    #[error("token pair already registered: {0}")]
    TokenPairExists(String),
}

impl ErrorCode for Erc20Error {
    fn codespace(&self) -> &'static str {
        "erc20"
    }
    fn code(&self) -> u32 {
        match self {
            Erc20Error::TokenPairExists(_) => 2,
        }
    }
}

impl From<Erc20Error> for TxError {
    fn from(e: Erc20Error) -> Self {
        TxError::from_code(&e)
    }
}

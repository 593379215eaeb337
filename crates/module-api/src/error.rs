//! Errors as the chain reports them: a (codespace, code) pair plus a log line.
//!
//! Each module has a `thiserror` enum whose variants carry a documented, stable code, and
//! implements [`ErrorCode`]; the app converts it into a [`TxError`] by the trait, never by matching
//! on message text. The `sdk` codespace below holds the Cosmos SDK's registered codes, with the
//! same numbers, because wallets and explorers match on them.

use crate::gas::OutOfGas;

/// A module error with a stable (codespace, code).
pub trait ErrorCode: std::error::Error {
    /// The codespace, e.g. `sdk`, `bank`, `compliance`.
    fn codespace(&self) -> &'static str;
    /// The code inside the codespace; never 0.
    fn code(&self) -> u32;
}

/// A failed check or handler, as reported in CheckTx/FinalizeBlock results.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{log}")]
pub struct TxError {
    /// Codespace.
    pub codespace: &'static str,
    /// Code inside the codespace.
    pub code: u32,
    /// The human-readable reason (`raw_log`).
    pub log: String,
}

impl TxError {
    /// Builds a TxError from any coded error.
    pub fn from_code<E: ErrorCode + ?Sized>(e: &E) -> Self {
        Self { codespace: e.codespace(), code: e.code(), log: e.to_string() }
    }

    /// Prefixes the log with context, keeping the code (like the SDK's `Wrap`).
    pub fn wrap(mut self, context: impl std::fmt::Display) -> Self {
        self.log = format!("{context}: {}", self.log);
        self
    }
}

impl From<OutOfGas> for TxError {
    fn from(e: OutOfGas) -> Self {
        TxError::from_code(&SdkError::OutOfGas(e.to_string()))
    }
}

/// The Cosmos SDK's registered errors (codespace `sdk`), with their upstream numbers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SdkError {
    /// 2: the transaction bytes did not decode.
    #[error("tx parse error: {0}")]
    TxDecode(String),
    /// 4: the signature or signer is not valid for this transaction.
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// 5: an account lacks the coins to pay.
    #[error("insufficient funds: {0}")]
    InsufficientFunds(String),
    /// 6: a message type no module handles.
    #[error("unknown request: {0}")]
    UnknownRequest(String),
    /// 7: an address did not parse.
    #[error("invalid address: {0}")]
    InvalidAddress(String),
    /// 8: the public key is missing or malformed.
    #[error("invalid pubkey: {0}")]
    InvalidPubKey(String),
    /// 9: the account does not exist.
    #[error("unknown address: {0}")]
    UnknownAddress(String),
    /// 10: coins are malformed, zero, unsorted or duplicated.
    #[error("invalid coins: {0}")]
    InvalidCoins(String),
    /// 11: the gas limit was exhausted.
    #[error("{0}")]
    OutOfGas(String),
    /// 12: the memo is too long.
    #[error("memo too large: {0}")]
    MemoTooLarge(String),
    /// 13: the fee is below the floor or in the wrong denom.
    #[error("insufficient fee: {0}")]
    InsufficientFee(String),
    /// 14: more signatures than signers.
    #[error("too many signatures: {0}")]
    TooManySignatures(String),
    /// 15: no signatures.
    #[error("no signatures supplied: {0}")]
    NoSignatures(String),
    /// 18: the request is malformed.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// 19: the same bytes are already in the mempool.
    #[error("tx already in mempool")]
    TxInMempoolCache,
    /// 20: the mempool is full.
    #[error("mempool is full: {0}")]
    MempoolIsFull(String),
    /// 21: the transaction is larger than the maximum.
    #[error("tx too large: {0}")]
    TxTooLarge(String),
    /// 28: the chain id is wrong.
    #[error("invalid chain-id: {0}")]
    InvalidChainId(String),
    /// 30: the timeout height has passed.
    #[error("tx timeout height: {0}")]
    TxTimeoutHeight(String),
    /// 31: an extension option no module knows.
    #[error("unknown extension options: {0}")]
    UnknownExtensionOptions(String),
    /// 32: the sequence does not match the account's.
    #[error("account sequence mismatch: {0}")]
    WrongSequence(String),
    /// 41: the gas limit is zero or above the maximum.
    #[error("invalid gas limit: {0}")]
    InvalidGasLimit(String),
    /// 1: an internal failure (store I/O); never expected, reported rather than panicking.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ErrorCode for SdkError {
    fn codespace(&self) -> &'static str {
        "sdk"
    }
    fn code(&self) -> u32 {
        match self {
            SdkError::Internal(_) => 1,
            SdkError::TxDecode(_) => 2,
            SdkError::Unauthorized(_) => 4,
            SdkError::InsufficientFunds(_) => 5,
            SdkError::UnknownRequest(_) => 6,
            SdkError::InvalidAddress(_) => 7,
            SdkError::InvalidPubKey(_) => 8,
            SdkError::UnknownAddress(_) => 9,
            SdkError::InvalidCoins(_) => 10,
            SdkError::OutOfGas(_) => 11,
            SdkError::MemoTooLarge(_) => 12,
            SdkError::InsufficientFee(_) => 13,
            SdkError::TooManySignatures(_) => 14,
            SdkError::NoSignatures(_) => 15,
            SdkError::InvalidRequest(_) => 18,
            SdkError::TxInMempoolCache => 19,
            SdkError::MempoolIsFull(_) => 20,
            SdkError::TxTooLarge(_) => 21,
            SdkError::InvalidChainId(_) => 28,
            SdkError::TxTimeoutHeight(_) => 30,
            SdkError::UnknownExtensionOptions(_) => 31,
            SdkError::WrongSequence(_) => 32,
            SdkError::InvalidGasLimit(_) => 41,
        }
    }
}

impl From<SdkError> for TxError {
    fn from(e: SdkError) -> Self {
        TxError::from_code(&e)
    }
}

/// Maps a store failure (cnidarium returns `anyhow`) to an internal error instead of a panic.
pub fn internal(e: impl std::fmt::Display) -> TxError {
    SdkError::Internal(e.to_string()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdk_codes_match_upstream() {
        assert_eq!(SdkError::TxDecode(String::new()).code(), 2);
        assert_eq!(SdkError::Unauthorized(String::new()).code(), 4);
        assert_eq!(SdkError::InsufficientFunds(String::new()).code(), 5);
        assert_eq!(SdkError::OutOfGas(String::new()).code(), 11);
        assert_eq!(SdkError::InsufficientFee(String::new()).code(), 13);
        assert_eq!(SdkError::InvalidRequest(String::new()).code(), 18);
        assert_eq!(SdkError::WrongSequence(String::new()).code(), 32);
        let t: TxError = SdkError::WrongSequence("x".into()).into();
        assert_eq!((t.codespace, t.code), ("sdk", 32));
    }
}

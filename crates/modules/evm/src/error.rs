//! evm errors (codespace `evm`), listed in `docs/modules/evm.md`.
//!
//! These refuse a transaction (at admission, or at execution when a proposer included it
//! anyway). A transaction that executes and reverts is not an error at this level: it is
//! included, pays its gas, and reports the revert in its result (`vm_error`, receipt status 0).

use lantau_module_api::{ErrorCode, TxError};

/// An evm failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvmError {
    /// 2: the bytes are not a well-formed EIP-2718 transaction.
    #[error("invalid ethereum transaction: {0}")]
    Decode(String),
    /// 3: a transaction type the chain does not accept (blob, set-code).
    #[error("transaction type {0} not supported (legacy, EIP-2930 and EIP-1559 are)")]
    UnsupportedType(u8),
    /// 4: a legacy transaction signed without EIP-155 replay protection.
    #[error("only replay-protected (EIP-155) transactions allowed over RPC")]
    NotReplayProtected,
    /// 5: the signature commits to another chain.
    #[error("invalid chain id for signer: have {got} want {want}")]
    WrongChainId {
        /// The chain id signed.
        got: u64,
        /// This chain's EVM chain id.
        want: u64,
    },
    /// 6: the signature does not recover (malformed, high S).
    #[error("invalid transaction signature: {0}")]
    Signature(String),
    /// 7: the fee per gas is under the 1 gwei floor.
    #[error("max fee per gas less than block base fee: maxFeePerGas: {got}, baseFee: {floor}")]
    FeeTooLow {
        /// What the transaction offers.
        got: u128,
        /// The floor.
        floor: u128,
    },
    /// 8: the priority fee is above the fee cap.
    #[error("max priority fee per gas higher than max fee per gas: {tip} > {cap}")]
    TipAboveFeeCap {
        /// maxPriorityFeePerGas.
        tip: u128,
        /// maxFeePerGas.
        cap: u128,
    },
    /// 9: the gas limit is below what the transaction needs before it runs.
    #[error("intrinsic gas too low: {0}")]
    IntrinsicGas(String),
    /// 10: the envelope's `from` is not the recovered signer, or the envelope is malformed.
    #[error("invalid ethereum envelope: {0}")]
    Envelope(String),
    /// 11: the EVM refused the transaction before running it (balance for value and gas,
    /// nonce, gas limit over the block's).
    #[error("{0}")]
    Invalid(String),
    /// 12: the store failed under the EVM (never expected; the transaction fails).
    #[error("evm store error: {0}")]
    Store(String),
    /// 13: a call (`eth_call`, an estimate) was stopped before it ended: its time ran out or
    /// its client went away. Never a mined transaction's.
    #[error("execution aborted")]
    Aborted,
    /// 14: a deployment's init code is over EIP-3860's limit.
    #[error("max initcode size exceeded: code size {size}, limit {limit}")]
    InitCodeTooLarge {
        /// The init code's size in bytes.
        size: usize,
        /// The limit (49,152 bytes).
        limit: usize,
    },
    /// 15: the gas limit is under EIP-7623's floor for the transaction's calldata.
    #[error("insufficient gas for floor data gas cost: gas {gas}, minimum needed {needed}")]
    FloorDataGas {
        /// The gas limit.
        gas: u64,
        /// The floor.
        needed: u64,
    },
}

impl ErrorCode for EvmError {
    fn codespace(&self) -> &'static str {
        "evm"
    }
    fn code(&self) -> u32 {
        match self {
            EvmError::Decode(_) => 2,
            EvmError::UnsupportedType(_) => 3,
            EvmError::NotReplayProtected => 4,
            EvmError::WrongChainId { .. } => 5,
            EvmError::Signature(_) => 6,
            EvmError::FeeTooLow { .. } => 7,
            EvmError::TipAboveFeeCap { .. } => 8,
            EvmError::IntrinsicGas(_) => 9,
            EvmError::Envelope(_) => 10,
            EvmError::Invalid(_) => 11,
            EvmError::Store(_) => 12,
            EvmError::Aborted => 13,
            EvmError::InitCodeTooLarge { .. } => 14,
            EvmError::FloorDataGas { .. } => 15,
        }
    }
}

impl From<EvmError> for TxError {
    fn from(e: EvmError) -> Self {
        TxError::from_code(&e)
    }
}

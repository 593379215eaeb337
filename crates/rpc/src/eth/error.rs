//! The Ethereum JSON-RPC's errors: one typed enum, one mapping to the codes clients expect
//! (geth's and the EIP-1474 conventions).

use serde_json::{json, Value};

/// A failed Ethereum JSON-RPC call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EthError {
    /// -32700: the body is not JSON.
    #[error("parse error: {0}")]
    Parse(String),
    /// -32600: JSON, but not a request.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// -32601: no such method.
    #[error("the method {0} does not exist/is not available")]
    MethodNotFound(String),
    /// -32602: a parameter is missing or malformed.
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// -32603: the node failed.
    #[error("internal error: {0}")]
    Internal(String),
    /// -32000: the transaction or call was refused (nonce, funds, fee, chain id, signature),
    /// or the state asked for is not held.
    #[error("{0}")]
    Server(String),
    /// -32005: a request over a bound (block range, result count).
    #[error("{0}")]
    LimitExceeded(String),
    /// 3: the call reverted; `data` is the revert data (ABI `Error(string)` for a reason).
    #[error("execution reverted{}", .reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Reverted {
        /// The decoded reason, when the data is `Error(string)`.
        reason: Option<String>,
        /// The revert data.
        data: Vec<u8>,
    },
}

impl EthError {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            EthError::Parse(_) => -32700,
            EthError::InvalidRequest(_) => -32600,
            EthError::MethodNotFound(_) => -32601,
            EthError::InvalidParams(_) => -32602,
            EthError::Internal(_) => -32603,
            EthError::Server(_) => -32000,
            EthError::LimitExceeded(_) => -32005,
            EthError::Reverted { .. } => 3,
        }
    }

    /// The error object.
    pub fn to_json(&self) -> Value {
        match self {
            EthError::Reverted { data, .. } => json!({"code": 3, "message": self.to_string(), "data": format!("0x{}", const_hex::encode(data))}),
            _ => json!({"code": self.code(), "message": self.to_string()}),
        }
    }
}

/// What a refused Ethereum transaction said and what geth's texts about it carry: the sender,
/// the transaction's nonce and cost, and the state figures the caller read for the refusal's
/// kind (the sender's next nonce for a nonce refusal, its balance for a funds refusal).
#[derive(Debug, Clone)]
pub(crate) struct Refusal<'a> {
    /// The chain's codespace and code.
    pub codespace: &'a str,
    /// The chain's code.
    pub code: u32,
    /// The chain's message.
    pub log: &'a str,
    /// The sender.
    pub from: lantau_primitives::Address,
    /// The transaction's nonce.
    pub nonce: u64,
    /// gas limit × max fee per gas + value, in wei (saturated).
    pub cost: u128,
    /// The sender's next nonce (pending), when read.
    pub state_nonce: Option<u64>,
    /// The sender's native balance, when read.
    pub balance: Option<u128>,
}

impl Refusal<'_> {
    /// Whether the refusal's text needs the sender's next nonce.
    pub(crate) fn wants_nonce(codespace: &str, code: u32) -> bool {
        (codespace, code) == ("sdk", 32)
    }

    /// Whether the refusal's text needs the sender's balance.
    pub(crate) fn wants_balance(codespace: &str, code: u32) -> bool {
        (codespace, code) == ("sdk", 5)
    }

    /// The refusal in geth's words (`core/txpool` and `core` errors), which Ethereum clients
    /// match on (ethers' NONCE_EXPIRED, INSUFFICIENT_FUNDS, ...): the one mapping from the
    /// chain's typed refusals of an Ethereum transaction.
    pub(crate) fn to_geth(&self) -> EthError {
        let from = self.from.to_hex();
        let text = match (self.codespace, self.code) {
            ("sdk", 32) => match self.state_nonce {
                Some(state) if self.nonce < state => format!("nonce too low: address {from}, tx: {} state: {state}", self.nonce),
                Some(state) => format!("nonce too high: address {from}, tx: {} state: {state}", self.nonce),
                None => format!("invalid nonce: {}", self.log),
            },
            ("sdk", 5) => match self.balance {
                Some(have) => format!("insufficient funds for gas * price + value: address {from} have {have} want {}", self.cost),
                None => format!("insufficient funds for gas * price + value: {}", self.log),
            },
            // A sender the chain has never seen has no account, and so no balance: geth's
            // words for it are the funds refusal.
            ("sdk", 9) => format!("insufficient funds for gas * price + value: address {from} have 0 want {}", self.cost),
            ("sdk", 19) => "already known".to_string(),
            // The embedded engine's mempool: a same-nonce replacement without the fee bump.
            ("mempool", 1) => self.log.to_string(),
            ("sdk", 20) => "txpool is full".to_string(),
            ("sdk", 13) => format!("transaction underpriced: {}", self.log),
            ("sdk", 41) => format!("exceeds block gas limit: {}", self.log),
            ("sdk", 11) => format!("intrinsic gas too low: {}", self.log),
            ("sdk", 1) => return EthError::Internal(self.log.to_string()),
            _ => self.log.to_string(),
        };
        EthError::Server(text)
    }
}

/// A transaction refused by the chain, as Ethereum clients expect to read it: the codespace
/// and code stay visible in the message.
impl From<lantau_app::module_api::TxError> for EthError {
    fn from(e: lantau_app::module_api::TxError) -> Self {
        if e.codespace == "sdk" && e.code == 1 {
            return EthError::Internal(e.log);
        }
        EthError::Server(e.log)
    }
}

/// A node failure, as the Ethereum JSON-RPC answers it: -32603 with the node's message. A
/// search refused for its cost is one too: this surface searches only by one hash, a page of
/// one transaction.
impl From<crate::api::NodeError> for EthError {
    fn from(e: crate::api::NodeError) -> Self {
        use crate::api::NodeError as N;
        match e {
            N::OverBudget(m) | N::Unavailable(m) | N::Internal(m) => EthError::Internal(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_maps_to_its_code() {
        let all = [
            (EthError::Parse(String::new()), -32700),
            (EthError::InvalidRequest(String::new()), -32600),
            (EthError::MethodNotFound(String::new()), -32601),
            (EthError::InvalidParams(String::new()), -32602),
            (EthError::Internal(String::new()), -32603),
            (EthError::Server(String::new()), -32000),
            (EthError::LimitExceeded(String::new()), -32005),
            (EthError::Reverted { reason: Some("x".into()), data: vec![1] }, 3),
        ];
        for (e, code) in all {
            assert_eq!(e.code(), code);
            assert_eq!(e.to_json()["code"], code);
        }
        for e in [crate::api::NodeError::OverBudget("a".into()), crate::api::NodeError::Unavailable("b".into()), crate::api::NodeError::Internal("c".into())] {
            let message = e.to_string();
            assert_eq!(EthError::from(e), EthError::Internal(message));
        }
        let r = EthError::Reverted { reason: Some("no".into()), data: vec![0xab] };
        assert_eq!(r.to_json(), json!({"code": 3, "message": "execution reverted: no", "data": "0xab"}));
    }
}

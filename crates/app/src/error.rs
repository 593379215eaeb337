//! The app's own failures (what the ABCI++ methods and the queries of committed state return).
//! A rejected transaction is not one of these: it is a result with a (codespace, code), see
//! [`lantau_module_api::TxError`]. These are the faults a driver must stop on (store I/O, a
//! corrupt record) or a request CometBFT should never send (a height out of order).

use lantau_module_api::TxError;

/// A failure of the state machine itself.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The store (cnidarium over RocksDB) failed.
    #[error("store: {0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A record the app wrote does not decode.
    #[error("corrupt record {key}: {why}")]
    Corrupt {
        /// The key.
        key: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// The genesis `app_state` is invalid, or a module refused it.
    #[error("invalid genesis: {0}")]
    Genesis(TxError),
    /// InitChain for another chain than the one stored.
    #[error("state belongs to chain {stored}, not {requested}")]
    ChainMismatch {
        /// The stored chain id.
        stored: String,
        /// The requested one.
        requested: String,
    },
    /// FinalizeBlock for a height that does not follow the last committed one.
    #[error("finalize height {height} after committed height {last}")]
    HeightOutOfOrder {
        /// Requested.
        height: u64,
        /// Last committed.
        last: u64,
    },
    /// Commit without a FinalizeBlock before it.
    #[error("commit without finalize_block")]
    CommitWithoutFinalize,
    /// A value does not fit CometBFT's types (a height over i64, an app hash of a wrong size).
    #[error("consensus type: {0}")]
    Consensus(String),
    /// A block-level write (height, block time) failed.
    #[error("block record: {0}")]
    BlockRecord(TxError),
    /// The store was written by a build with another state layout (docs/decisions.md).
    #[error("this store keeps {what} in the Merkle tree, as builds before the records lattice did; this build keeps them outside it and cannot read them: move the home aside and start a new one (`lantaud start` makes a new dev home; see docs/decisions.md, `Flags and velocity windows outside the tree`)")]
    OldLayout {
        /// Which records.
        what: &'static str,
    },
}

impl AppError {
    /// Wraps a store failure.
    pub fn store(e: anyhow::Error) -> Self {
        AppError::Store(e.into())
    }
}

impl From<tendermint::Error> for AppError {
    fn from(e: tendermint::Error) -> Self {
        AppError::Consensus(e.to_string())
    }
}

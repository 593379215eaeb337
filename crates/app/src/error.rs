//! The app's own failures (what the ABCI++ methods and the queries of committed state return).
//! A rejected transaction is not one of these: it is a result with a (codespace, code), see
//! [`lantau_module_api::TxError`]. These are the faults a driver must stop on (store I/O, a
//! corrupt record) or a request CometBFT should never send (a height out of order).

use lantau_module_api::TxError;

/// A failure of the state machine itself.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The store (`lantau_store` over RocksDB) failed; recorded as the process's store fault
    /// ([`lantau_module_api::store::fault`]): the node stops.
    #[error("store: {0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The store is damaged, found at open (docs/decisions.md, "The corruption policy"): the
    /// node refuses to start on it.
    #[error("the app store at {} is damaged: {detail}. This node does not run on a store it cannot read: restore its state from a snapshot of an intact node, or move {} aside and resync by state sync (docs/operations.md, \"A damaged store\")", path.display(), path.display())]
    Damaged {
        /// The store's directory.
        path: std::path::PathBuf,
        /// What is wrong (RocksDB's message names the file, and for a bad block its offset).
        detail: String,
    },
    /// The store passed its check but could not be opened.
    #[error("cannot open the app store at {}: {detail}", path.display())]
    Open {
        /// The store's directory.
        path: std::path::PathBuf,
        /// The store's error.
        detail: String,
    },
    /// What was asked for does not exist yet or is no longer held (an export of an empty
    /// audit log, a height whose proofs the store no longer keeps). The request's fault.
    #[error("{0}")]
    Unavailable(String),
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
    /// An early execution of a block that was not decided stopped before its end (it is
    /// never an answer: docs/decisions.md, "A proposal executes while it is voted on").
    #[error("the early execution of a block that was not decided stopped")]
    Superseded,
    /// A value does not fit CometBFT's types (a height over i64, an app hash of a wrong size).
    #[error("consensus type: {0}")]
    Consensus(String),
    /// A block-level write (height, block time) failed.
    #[error("block record: {0}")]
    BlockRecord(TxError),
    /// The upgrade scheduled at this height is not one this binary applies: the node stops
    /// before executing the block (the Cosmos SDK's words).
    #[error("UPGRADE \"{name}\" NEEDED at height: {height}: {info} (this binary does not apply it: stop, install the release that does, and start again; docs/operations.md, \"Upgrades\")")]
    UpgradeNeeded {
        /// The plan's name.
        name: String,
        /// Its height.
        height: u64,
        /// Its info.
        info: String,
    },
    /// This binary applies an upgrade scheduled for a later height.
    #[error("BINARY UPDATED BEFORE TRIGGER! UPGRADE \"{name}\" - in binary but not executed on chain (scheduled at height {height}). Downgrade your binary")]
    UpgradeTooEarly {
        /// The plan's name.
        name: String,
        /// Its height.
        height: u64,
    },
    /// The store records a module state version this binary cannot run on.
    #[error("the store keeps the {module} module at state version {stored}, this binary at version {binary}, and no upgrade this binary applies is pending: run the release that matches the store (docs/operations.md, \"Upgrades\")")]
    StateVersion {
        /// The module.
        module: &'static str,
        /// Its version in the store.
        stored: u64,
        /// This binary's.
        binary: u64,
    },
    /// A module's migration failed: the upgrade block is not executed.
    #[error("the {module} module's migration from state version {from} failed: {error}")]
    Migration {
        /// The module.
        module: &'static str,
        /// The version it migrated from.
        from: u64,
        /// Why.
        error: TxError,
    },
    /// The store was written by a build with another state layout (docs/decisions.md).
    #[error("this store keeps {what} in the Merkle tree, as builds before the records lattice did; this build keeps them outside it and cannot read them: move the home aside and start a new one (`lantaud start` makes a new dev home; see docs/decisions.md, `Flags and velocity windows outside the tree`)")]
    OldLayout {
        /// Which records.
        what: &'static str,
    },
}

impl AppError {
    /// Wraps a store failure, recording it as the process's store fault (the node stops);
    /// work cancelled because the runtime is stopping is wrapped but not recorded.
    pub fn store(e: anyhow::Error) -> Self {
        AppError::Store(Box::new(lantau_module_api::store::fault("a store operation of the app", e)))
    }

    /// The store fault this process already met, as an error (a driver stops on it).
    pub fn faulted() -> Result<(), Self> {
        match lantau_module_api::store::current_fault() {
            Some(f) => Err(AppError::Store(Box::new(f))),
            None => Ok(()),
        }
    }
}

impl From<tendermint::Error> for AppError {
    fn from(e: tendermint::Error) -> Self {
        AppError::Consensus(e.to_string())
    }
}

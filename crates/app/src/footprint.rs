//! What an admission wrote into the check overlay, kept with the waiting transaction so the
//! recheck after a block can replay it instead of running the ante again.
//!
//! An admission (check mode: the ante; the gates read only) writes the signer's account
//! (sequence, public key) and native balance (the fee), and credits the fee collector. Its
//! verdict depends on what it read: those same keys (the collector's balance is only credited,
//! which cannot fail), the chain id, and the block height when the transaction has a timeout
//! height. So when a block wrote none of a waiting transaction's keys, none of its sender's
//! earlier waiting transactions had to run again, the block wrote nothing the gates read, and it
//! has no timeout height, the recheck would reach the same verdict and write the same values:
//! the recheck puts those values into the new overlay instead ([`crate::App::recheck`]).
//!
//! The fee collector's balance in the check overlay then omits the fees of replayed
//! transactions. Nothing in admission reads it for a verdict, and queries read committed state.

use std::sync::Arc;

use cnidarium::Cache;

/// The writes of one admission, without the fee collector's credit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    writes: Vec<(String, Option<Vec<u8>>)>,
    /// False when the admission wrote something a replay cannot reproduce (non-verifiable
    /// keys, ephemeral objects): such a transaction is always rechecked in full.
    replayable: bool,
}

impl Footprint {
    /// A footprint that is never replayed (a transaction admitted without one).
    pub fn none() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The footprint of an admission whose effects are `cache`; `collector_balance` is the fee
    /// collector's native balance key.
    pub(crate) fn of(cache: &Cache, collector_balance: &str) -> Self {
        let replayable = cache.nonverifiable_changes().is_empty();
        let writes = cache.unwritten_changes().iter().filter(|(k, _)| k.as_str() != collector_balance).map(|(k, v)| (k.clone(), v.clone())).collect();
        Self { writes, replayable }
    }

    /// Whether a replay stands for a recheck after a block whose verifiable write set is
    /// `block_writes` (sorted by key, as a block's flattened changes are).
    pub(crate) fn replayable_after(&self, block_writes: &[(String, Option<Vec<u8>>)]) -> bool {
        self.replayable
            && !self.writes.is_empty()
            && !self.writes.iter().any(|(k, _)| block_writes.binary_search_by(|(w, _)| w.as_str().cmp(k.as_str())).is_ok())
    }

    /// The writes.
    pub(crate) fn writes(&self) -> &[(String, Option<Vec<u8>>)] {
        &self.writes
    }
}

//! What an admission wrote into the check overlay, and what those keys held before it, kept
//! with the waiting transaction so the recheck after a block can replay it instead of running
//! the ante again.
//!
//! An admission (check mode: the ante; the gates read only) reads and writes the signer's
//! account (sequence, public key) and native balance (the fee), and credits the fee collector.
//! Its verdict depends on what it read: those same keys (the collector's balance is only
//! credited, which cannot fail), the chain id (fixed at genesis), and the block height when the
//! transaction has a timeout height. So when, on the rebuilt overlay, each of its keys holds
//! exactly what it held before the admission, the block wrote nothing the gates read, and the
//! transaction has no timeout height, a recheck would reach the same verdict and write the same
//! values: the recheck puts those values into the new overlay instead ([`crate::App::recheck`]).
//! A block that included the sender's earlier transactions writes the very values their
//! admissions wrote (sequence, fee), so the sender's later ones still replay; a block that also
//! moved the sender's native coin (a native send, an Ethereum transaction's gas refund) makes
//! them run again.
//!
//! The fee collector's balance in the check overlay then omits the fees of replayed
//! transactions. Nothing in admission reads it for a verdict, and queries read committed state.

use std::sync::Arc;

use cnidarium::{Cache, StateRead};

/// The writes of one admission, without the fee collector's credit, with what each key held
/// before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    writes: Vec<(String, Option<Vec<u8>>)>,
    /// What each written key held before the admission, in the order of `writes`.
    before: Vec<Option<Vec<u8>>>,
    /// False when the admission wrote something a replay cannot reproduce (non-verifiable
    /// keys, ephemeral objects) or a prior value could not be read: such a transaction is
    /// always rechecked in full.
    replayable: bool,
}

impl Footprint {
    /// A footprint that is never replayed (a transaction admitted without one).
    pub fn none() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The footprint of an admission whose effects are `cache`, made on `below` (the state
    /// the admission ran on, before its effects are applied); `collector_balance` is the fee
    /// collector's native balance key.
    pub(crate) async fn of<S: StateRead>(below: &S, cache: &Cache, collector_balance: &str) -> Self {
        let mut replayable = cache.nonverifiable_changes().is_empty();
        let mut writes = Vec::new();
        let mut before = Vec::new();
        for (k, v) in cache.unwritten_changes() {
            if k.as_str() == collector_balance {
                continue;
            }
            match below.get_raw(k).await {
                Ok(old) => before.push(old),
                Err(_) => {
                    replayable = false;
                    before.push(None);
                }
            }
            writes.push((k.clone(), v.clone()));
        }
        Self { writes, before, replayable }
    }

    /// Whether a replay on `state` stands for a recheck there: every key the admission wrote
    /// holds what it held before the admission (the ante would read the same values).
    pub(crate) async fn holds_on<S: StateRead>(&self, state: &S) -> bool {
        if !self.replayable || self.writes.is_empty() {
            return false;
        }
        for ((k, _), old) in self.writes.iter().zip(&self.before) {
            match state.get_raw(k).await {
                Ok(now) if now == *old => {}
                _ => return false,
            }
        }
        true
    }

    /// The writes.
    pub(crate) fn writes(&self) -> &[(String, Option<Vec<u8>>)] {
        &self.writes
    }
}

//! What an admission read and wrote, kept with the waiting transaction so that the recheck
//! after a block, and the checks of a proposal, can replay it instead of running the ante and
//! the gates again.
//!
//! An admission (check mode: the ante, then the gate chain, which only reads) runs on a
//! [`Recording`](lantau_module_api::reads::Recording) of the check overlay: every key it read
//! is logged with the value it found ([`ReadSet`]). Its verdict and its writes are a function
//! of those values, the chain id (fixed at genesis) and the block context: the height when the
//! transaction has a timeout height (such a transaction always runs again), and the block
//! time, which the gates compare with times that writes set (a revocation's time) or that
//! only loosen a limit as it passes (an agent's daily window). So when, on the rebuilt
//! overlay, every logged read finds what it found, a recheck would reach the same verdict
//! and write the same values: [`Footprint::replay_on`] says so, and the recheck puts those
//! values in place instead ([`crate::App::recheck`]). There is no list of the keys a rule is
//! believed to read: a gate that reads a new key is compared on it from its first read. A
//! block that included the sender's earlier transactions writes the very values their
//! admissions wrote (sequence, fee), so the sender's later ones still replay.
//!
//! Two reads are compared by their meaning rather than by equality, and both are the ante's
//! fee payment. The fee payer's native balance: the ante's only use of it is to pay the fee,
//! which passes on any balance at least as large and takes the same amount from it. So when
//! that balance is no smaller than what the admission read (an Ethereum transaction's gas
//! refund, an incoming payment), the replay takes the same fee from what is there now; a
//! smaller balance (a native send moved coin out) makes the transaction run again. Both values
//! must be present and the debit must leave coin, so the replay also reads and writes records
//! of the same length (the same gas). And the fee collector's balance, which the ante only
//! credits (which cannot fail): it is neither compared nor replayed, so the collector's
//! balance in the check overlay omits the fees of replayed transactions. Nothing in admission
//! reads it for a verdict, and queries read committed state.
//!
//! The advisory gates read unlogged ([`lantau_module_api::reads::ReadLog::unlogged`]): what
//! they read raises flags at execution, never changes whether the transaction passes.

use std::sync::Arc;

use cnidarium::{Cache, StateRead};
use lantau_module_api::reads::{ReadSet, StoreKey};

/// The writes of one admission, without the fee collector's credit, with what each key held
/// before it, and what else it read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    writes: Vec<(String, Option<Vec<u8>>)>,
    /// What each written key held before the admission, in the order of `writes`.
    before: Vec<Option<Vec<u8>>>,
    /// The index in `writes` of the fee payer's native balance, when the admission took a fee
    /// from it (see the module's notes).
    debit: Option<usize>,
    /// The reads of keys it did not write (a written key is compared by `before`), without
    /// the fee collector's balance.
    reads: ReadSet,
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

    /// The footprint of an admission whose effects are `cache` and whose reads are `reads`,
    /// made on `below` (the state the admission ran on, before its effects are applied);
    /// `collector_balance` is the fee collector's native balance key, `payer_balance` the fee
    /// payer's.
    pub(crate) async fn of<S: StateRead>(below: &S, cache: &Cache, mut reads: ReadSet, collector_balance: &str, payer_balance: &str) -> Self {
        let mut replayable = cache.nonverifiable_changes().is_empty() && !reads.opaque;
        reads.points.retain(|(k, _)| match k {
            StoreKey::Verifiable(k) => k != collector_balance && !cache.unwritten_changes().contains_key(k),
            StoreKey::NonVerifiable(_) => true,
        });
        let mut writes = Vec::new();
        let mut before = Vec::new();
        let mut debit = None;
        for (k, v) in cache.unwritten_changes() {
            if k.as_str() == collector_balance {
                continue;
            }
            let old = match below.get_raw(k).await {
                Ok(old) => old,
                Err(e) => {
                    // Not replayable; the node stops on the fault.
                    lantau_module_api::store::fault(format_args!("reading {k}"), e);
                    replayable = false;
                    None
                }
            };
            if k.as_str() == payer_balance && matches!((amount(&old), amount(v)), (Some(b), Some(w)) if w <= b) {
                debit = Some(writes.len());
            }
            before.push(old);
            writes.push((k.clone(), v.clone()));
        }
        Self { writes, before, debit, reads, replayable }
    }

    /// The footprint a replay on `state` has (its writes are the replay's), when a replay
    /// there stands for a recheck: every key the admission wrote holds what it held before the
    /// admission, except the fee payer's balance, which may hold more (it then pays the same
    /// fee from what is there), and every other key it read holds what it found.
    pub(crate) async fn replay_on<S: StateRead>(&self, state: &S) -> Option<Footprint> {
        if !self.replayable || self.writes.is_empty() {
            return None;
        }
        let mut out = self.clone();
        for (i, ((k, wrote), old)) in out.writes.iter_mut().zip(out.before.iter_mut()).enumerate() {
            let now = match state.get_raw(k).await {
                Ok(v) => v,
                Err(e) => {
                    lantau_module_api::store::fault(format_args!("reading {k}"), e);
                    return None;
                }
            };
            if now == *old {
                continue;
            }
            if self.debit != Some(i) {
                return None;
            }
            let (now, before, paid_from) = (amount(&now)?, amount(old)?, amount(wrote)?);
            if now < before {
                return None;
            }
            let after = now.checked_sub(before.checked_sub(paid_from)?)?;
            *old = Some(now.to_be_bytes().to_vec());
            *wrote = Some(after.to_be_bytes().to_vec());
        }
        if !self.reads.holds_on(state, |_| false).await {
            return None;
        }
        Some(out)
    }

    /// The writes.
    pub(crate) fn writes(&self) -> &[(String, Option<Vec<u8>>)] {
        &self.writes
    }
}

/// A native balance record's amount (16 big-endian bytes; absent means none).
fn amount(v: &Option<Vec<u8>>) -> Option<u128> {
    let bytes: [u8; 16] = v.as_deref()?.try_into().ok()?;
    Some(u128::from_be_bytes(bytes))
}

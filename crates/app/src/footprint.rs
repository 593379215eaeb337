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
//! must be present and the debit must leave coin. The native balance is one denom of the
//! payer's balance record, which the bank logs by the denoms a run takes from it
//! ([`lantau_module_api::reads::PartRead`]): the other denoms the admission took must hold what
//! they held, those it did not take (so did not change) may have moved since (the stablecoin
//! of the sender's transfer the block included) and keep what they hold now, and the record
//! must have the same length, so the replay reads and writes what the admission would (the
//! same gas). When some read took the record whole, every other denom must hold what it held.
//! And the fee collector's balance, which the ante only
//! credits (which cannot fail): it is neither compared nor replayed, so the collector's
//! balance in the check overlay omits the fees of replayed transactions. Nothing in admission
//! reads it for a verdict, and queries read committed state.
//!
//! Comparing every logged read on every recheck would read the whole mempool's read sets after
//! each block. So each overlay admissions run on is a [`Generation`]: the committed version
//! below it and the set of keys written into it. A key can hold something else than it held
//! when a footprint was made only if the footprint's own generation wrote it (another
//! admission), the block committed since wrote it, or the overlay it is checked on wrote it;
//! only those keys are read again. A footprint checked more than one commit after it was made
//! (or on an unknown block) compares every read. The sets hold fingerprints of the keys: a
//! collision only makes a key be compared that need not be. A footprint fingerprints the keys
//! it read and wrote once, when it is made: a transaction waiting through many blocks is
//! rechecked after each, and hashing its keys again every time was most of a replay's cost.
//!
//! The advisory gates read unlogged ([`lantau_module_api::reads::ReadLog::unlogged`]): what
//! they read raises flags at execution, never changes whether the transaction passes.

use std::collections::VecDeque;
use std::sync::Arc;

use cnidarium::{Cache, StateRead};
use lantau_bank::Balances;
use lantau_module_api::reads::{ReadSet, StoreKey};
use lantau_primitives::{Amount, NATIVE_DENOM};

/// A set of store keys by fingerprint ([`key_hash`]), only looked up, never iterated into state
/// or events. Two keys with one fingerprint make a key look written when it was not: it is then
/// compared, never skipped, so a collision costs a read, never a stale verdict.
#[allow(clippy::disallowed_types)]
pub(crate) type KeySet = std::collections::HashSet<u64, foldhash::fast::RandomState>;

/// The fingerprint of a key in a [`KeySet`] (one fixed seed in the process).
pub(crate) fn key_hash(k: &StoreKey) -> u64 {
    match k {
        StoreKey::Verifiable(k) => fingerprint(0, k.as_bytes()),
        StoreKey::NonVerifiable(k) => fingerprint(1, k),
    }
}

/// The fingerprint of a verifiable (`0`) or non-verifiable (`1`) key's bytes.
pub(crate) fn fingerprint(store: u8, key: &[u8]) -> u64 {
    use std::hash::BuildHasher as _;
    foldhash::fast::FixedState::default().hash_one((store, key))
}

/// The fingerprints of the keys a set of changes writes.
pub(crate) fn written_keys(changes: &impl lantau_store::ChangeSet) -> impl Iterator<Item = u64> + '_ {
    let v = changes.unwritten_changes().keys().map(|k| fingerprint(0, k.as_bytes()));
    v.chain(changes.nonverifiable_changes().keys().map(|k| fingerprint(1, k)))
}

/// An overlay admissions run on: the committed version below it, and every key written into
/// it since it was made.
#[derive(Debug)]
pub struct Generation {
    base: u64,
    written: parking_lot::Mutex<KeySet>,
}

impl Generation {
    /// A new overlay on version `base`.
    pub(crate) fn new(base: u64) -> Arc<Self> {
        Arc::new(Self { base, written: Default::default() })
    }

    /// Keys (fingerprints) written into the overlay.
    pub(crate) fn wrote(&self, keys: impl IntoIterator<Item = u64>) {
        self.written.lock().extend(keys);
    }
}

/// The keys each of the last committed blocks wrote, by the version it made.
#[derive(Debug, Default)]
pub(crate) struct BlockWrites(parking_lot::Mutex<VecDeque<(u64, Arc<KeySet>)>>);

impl BlockWrites {
    /// How many blocks are kept (a footprint is checked at most one commit after it was made
    /// when the driver keeps up).
    const KEPT: usize = 2;

    /// Block `version` wrote `keys`.
    pub(crate) fn committed(&self, version: u64, keys: KeySet) {
        let mut q = self.0.lock();
        q.push_back((version, Arc::new(keys)));
        while q.len() > Self::KEPT {
            q.pop_front();
        }
    }

    /// Forgets every block (the store moved in a way they do not describe).
    pub(crate) fn clear(&self) {
        self.0.lock().clear();
    }

    fn of(&self, version: u64) -> Option<Arc<KeySet>> {
        self.0.lock().iter().find(|(v, _)| *v == version).map(|(_, k)| k.clone())
    }
}

/// The latest overlay on which a footprint's reads all held what it logged: the one it was
/// made on, then the one of each replay that stood. Shared by the clones of one footprint and
/// updated in place (any overlay on which the reads held is a sound base for the next
/// comparison). Not part of a footprint's value: two footprints that write and read the same
/// are equal wherever they were checked.
#[derive(Debug, Default)]
struct MadeOn(parking_lot::Mutex<Option<Arc<Generation>>>);

impl MadeOn {
    fn on(g: &Arc<Generation>) -> Self {
        Self(parking_lot::Mutex::new(Some(g.clone())))
    }

    fn get(&self) -> Option<Arc<Generation>> {
        self.0.lock().clone()
    }

    fn set(&self, g: &Arc<Generation>) {
        *self.0.lock() = Some(g.clone());
    }
}

impl Clone for MadeOn {
    fn clone(&self) -> Self {
        Self(parking_lot::Mutex::new(self.get()))
    }
}

impl PartialEq for MadeOn {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for MadeOn {}

/// A replay that stands ([`Footprint::replay_on`]).
#[derive(Debug)]
pub(crate) enum Replay {
    /// It writes what the footprint wrote.
    Unchanged,
    /// The fee came out of a larger balance: this footprint's writes.
    Rebased(Footprint),
}

/// The writes of one admission, without the fee collector's credit, with what each key held
/// before it, and what else it read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    writes: Vec<(String, Option<Vec<u8>>)>,
    /// What each written key held before the admission, in the order of `writes`.
    before: Vec<Option<Vec<u8>>>,
    /// The index in `writes` of the fee payer's balance record, when the admission took a fee
    /// from its native balance (see the module's notes).
    debit: Option<usize>,
    /// The denoms the admission took from the payer's record, when it read the record only by
    /// its parts (`None`: some read took it whole).
    debit_denoms: Option<Vec<String>>,
    /// The reads of keys it did not write (a written key is compared by `before`), without
    /// the fee collector's balance. Shared with the footprints of the replays that rebase the
    /// fee (they change only the payer's write).
    reads: Arc<ReadSet>,
    /// The fingerprints of the keys in `reads` (its points, then its parts), made once: each
    /// recheck looks them up in the sets of the keys written since.
    read_keys: Arc<[u64]>,
    /// The fingerprints of the keys in `writes`, in their order.
    write_keys: Arc<[u64]>,
    /// The overlay it was made on.
    made_on: MadeOn,
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
    pub(crate) async fn of<S: StateRead>(
        below: &S,
        made_on: &Arc<Generation>,
        cache: &Cache,
        mut reads: ReadSet,
        collector_balance: &str,
        payer_balance: &str,
    ) -> Self {
        let mut replayable = cache.nonverifiable_changes().is_empty() && !reads.opaque;
        let written = |k: &str| k == collector_balance || cache.unwritten_changes().contains_key(k);
        let payer_read_whole = reads.points.iter().any(|(k, _)| matches!(k, StoreKey::Verifiable(k) if k == payer_balance));
        reads.points.retain(|(k, _)| match k {
            StoreKey::Verifiable(k) => !written(k),
            StoreKey::NonVerifiable(_) => true,
        });
        // The parts of a written key are compared by what it held before (the payer's record:
        // by the denoms taken from it).
        let mut payer_denoms = Vec::new();
        reads.parts.retain(|p| {
            if p.key == payer_balance {
                payer_denoms.push(String::from_utf8_lossy(&p.part).into_owned());
            }
            !written(&p.key)
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
            if k.as_str() == payer_balance && matches!((native(&old), native(v)), (Some(b), Some(w)) if w <= b) {
                debit = Some(writes.len());
            }
            before.push(old);
            writes.push((k.clone(), v.clone()));
        }
        let debit_denoms = (!payer_read_whole).then_some(payer_denoms);
        let parts = reads.parts.iter().map(|p| fingerprint(0, p.key.as_bytes()));
        let read_keys = reads.points.iter().map(|(k, _)| key_hash(k)).chain(parts).collect();
        let write_keys = writes.iter().map(|(k, _)| fingerprint(0, k.as_bytes())).collect();
        Self { writes, before, debit, debit_denoms, reads: Arc::new(reads), read_keys, write_keys, made_on: MadeOn::on(made_on), replayable }
    }

    /// The footprint a replay on `state` has (its writes are the replay's), when a replay
    /// there stands for a recheck: every key the admission wrote holds what it held before the
    /// admission, except the fee payer's balance, which may hold more (it then pays the same
    /// fee from what is there), and every other key it read holds what it found. `state` is
    /// the overlay `now`, on which the keys of `blocks` are known. The footprint is copied only
    /// when the replay changes it ([`Replay::Rebased`]).
    pub(crate) async fn replay_on<S: StateRead>(&self, state: &S, now: &Arc<Generation>, blocks: &BlockWrites) -> Option<Replay> {
        if !self.replayable || self.writes.is_empty() {
            return None;
        }
        let mut rebased: Option<Footprint> = None;
        for (i, ((k, wrote), old)) in self.writes.iter().zip(self.before.iter()).enumerate() {
            let held = match state.get_raw(k).await {
                Ok(v) => v,
                Err(e) => {
                    lantau_module_api::store::fault(format_args!("reading {k}"), e);
                    return None;
                }
            };
            if held == *old {
                continue;
            }
            if self.debit != Some(i) {
                return None;
            }
            // The payer's record: its native balance may be larger, and pays the same fee.
            let paid = self.rebased_debit(&held, old, wrote)?.encode().ok()?;
            let out = rebased.get_or_insert_with(|| self.clone());
            let (Some(w), Some(b)) = (out.writes.get_mut(i), out.before.get_mut(i)) else { return None };
            w.1 = Some(paid);
            *b = held;
        }
        // Only the keys that may have changed since are read again: which, decided before any
        // read, under one lock of each set in turn (never two at once: another thread may
        // take the same two the other way round).
        let made_on = self.made_on.get();
        let skip: Option<Vec<bool>> = made_on.as_ref().and_then(|m| {
            let block = match now.base.checked_sub(m.base) {
                Some(0) => None,
                Some(1) => Some(blocks.of(now.base)?),
                _ => return None,
            };
            let hashes = &self.read_keys;
            let mut skip: Vec<bool> = hashes.iter().map(|h| !block.as_ref().is_some_and(|b| b.contains(h))).collect();
            let mut unwritten_in = |g: &Generation| {
                let w = g.written.lock();
                for (s, h) in skip.iter_mut().zip(hashes.iter()) {
                    *s = *s && !w.contains(h);
                }
            };
            unwritten_in(m);
            if !Arc::ptr_eq(m, now) {
                unwritten_in(now);
            }
            Some(skip)
        });
        if !self.reads.holds_on(state, |i, _| skip.as_ref().and_then(|s| s.get(i)).copied().unwrap_or(false)).await {
            return None;
        }
        // Every read now holds on `now` what it logged: the replay stands as an admission made
        // on it, so the next round compares only what changed since.
        self.made_on.set(now);
        Some(match rebased {
            Some(out) => {
                out.made_on.set(now);
                Replay::Rebased(out)
            }
            None => Replay::Unchanged,
        })
    }

    /// The writes.
    pub(crate) fn writes(&self) -> &[(String, Option<Vec<u8>>)] {
        &self.writes
    }

    /// The fingerprints of the keys the footprint writes.
    pub(crate) fn write_keys(&self) -> &[u64] {
        &self.write_keys
    }

    /// What the payer's record is after the replay, when it holds `held` where the admission
    /// read `old` and wrote `wrote`: the native balance no smaller than it was, the other
    /// denoms the admission took unchanged, and a record of the same length (the same gas).
    /// The fee comes out of the native balance now held; the denoms the admission did not take
    /// (which it therefore did not change) keep what they hold now.
    fn rebased_debit(&self, held: &Option<Vec<u8>>, old: &Option<Vec<u8>>, wrote: &Option<Vec<u8>>) -> Option<Balances> {
        let (held_record, old_record, wrote_record) = (record(held)?, record(old)?, record(wrote)?);
        let (now, before, paid_from) = (native_of(&held_record)?, native_of(&old_record)?, native_of(&wrote_record)?);
        if now < before || held.as_ref()?.len() != old.as_ref()?.len() {
            return None;
        }
        let mut after = match &self.debit_denoms {
            // Read whole: everything but the native balance must hold what it held.
            None => {
                let mut others = held_record;
                others.set(NATIVE_DENOM, Amount(before));
                if others != old_record {
                    return None;
                }
                wrote_record
            }
            Some(taken) => {
                let is_taken = |d: &str| d == NATIVE_DENOM || taken.iter().any(|t| t == d);
                // A denom the admission did not take it did not change.
                let mut denoms = old_record.entries().chain(wrote_record.entries()).map(|(d, _)| d);
                if denoms.any(|d| !is_taken(d) && old_record.get(d) != wrote_record.get(d)) {
                    return None;
                }
                let mut after = held_record.clone();
                for d in taken.iter().filter(|d| d.as_str() != NATIVE_DENOM) {
                    if held_record.get(d) != old_record.get(d) {
                        return None;
                    }
                    after.set(d, wrote_record.get(d));
                }
                after
            }
        };
        after.set(NATIVE_DENOM, Amount(now.checked_sub(before.checked_sub(paid_from)?)?));
        Some(after)
    }
}

/// A balance record (`lantau_bank::Balances`; absent or malformed means none).
fn record(v: &Option<Vec<u8>>) -> Option<Balances> {
    Balances::decode(v.as_deref()?)
}

/// A balance record's native amount, when it holds some.
fn native(v: &Option<Vec<u8>>) -> Option<u128> {
    native_of(&record(v)?)
}

/// A decoded balance record's native amount, when it holds some.
fn native_of(b: &Balances) -> Option<u128> {
    Some(b.get(NATIVE_DENOM).0).filter(|a| *a > 0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn rec(entries: &[(&str, u128)]) -> Option<Vec<u8>> {
        let mut b = Balances::default();
        for (d, a) in entries {
            b.set(d, Amount(*a));
        }
        Some(b.encode().unwrap())
    }

    fn debit(taken: Option<&[&str]>) -> Footprint {
        Footprint { debit_denoms: taken.map(|t| t.iter().map(|d| d.to_string()).collect()), ..Footprint::default() }
    }

    #[test]
    fn the_payers_record_pays_the_same_fee_when_what_the_admission_took_from_it_holds() {
        // The admission found 100 alantau and 50 hkd.demo and took a fee of 10.
        let (old, wrote) = (rec(&[("alantau", 100), ("hkd.demo", 50)]), rec(&[("alantau", 90), ("hkd.demo", 50)]));
        let fee_only = debit(Some(&["alantau"]));
        // The stablecoin moved since: the fee comes out of the record as it is now.
        let moved = rec(&[("alantau", 100), ("hkd.demo", 20)]);
        assert_eq!(fee_only.rebased_debit(&moved, &old, &wrote), record(&rec(&[("alantau", 90), ("hkd.demo", 20)])));
        // More native coin: the same fee from it. Less: runs again.
        let more = rec(&[("alantau", 130), ("hkd.demo", 20)]);
        assert_eq!(fee_only.rebased_debit(&more, &old, &wrote), record(&rec(&[("alantau", 120), ("hkd.demo", 20)])));
        assert_eq!(fee_only.rebased_debit(&rec(&[("alantau", 99), ("hkd.demo", 50)]), &old, &wrote), None);
        // A record of another length (another gas): runs again.
        assert_eq!(fee_only.rebased_debit(&rec(&[("alantau", 100)]), &old, &wrote), None);
        assert_eq!(fee_only.rebased_debit(&rec(&[("alantau", 100), ("hkd.demo", 50), ("hkd.x", 1)]), &old, &wrote), None);
        // The admission took the stablecoin too, or read the record whole: it must hold.
        for strict in [debit(Some(&["alantau", "hkd.demo"])), debit(None)] {
            assert_eq!(strict.rebased_debit(&moved, &old, &wrote), None);
            assert_eq!(strict.rebased_debit(&more, &old, &rec(&[("alantau", 90), ("hkd.demo", 50)])), None);
            let richer = rec(&[("alantau", 130), ("hkd.demo", 50)]);
            assert_eq!(strict.rebased_debit(&richer, &old, &wrote), record(&rec(&[("alantau", 120), ("hkd.demo", 50)])));
        }
        // An admission that changed a denom it did not log as taken is never rebased.
        let odd = rec(&[("alantau", 90), ("hkd.demo", 49)]);
        assert_eq!(fee_only.rebased_debit(&old, &old, &odd), None);
    }
}

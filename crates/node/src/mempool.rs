//! The mempool: admitted transactions waiting for a block (see [`crate::txpool`]).
//!
//! Entries keep their admission order. Admission happens under the app's check lock and inserts
//! here before the lock is released, so the order of one sender's entries is its sequence order
//! and a block reaped front to back never executes sequence 6 before 5. Bounded in count and
//! bytes, and per sender (one account cannot fill it). When it is full, a transaction paying
//! more per gas than the cheapest waiting ones takes their place: the cheapest entries that are
//! the last of their sender's (so no sender is left with a gap) are evicted, lowest fee per gas
//! first, newest first among equals. Otherwise a full mempool, or a sender at its cap, refuses
//! with sdk code 20, saying what fee per gas would get in (the refusal changes nothing:
//! admission's state is dropped).
//!
//! An evicted transaction is gone from this node; its sender's next sequence on the check state
//! stays past it until the next block's recheck rebuilds that state from what is still waiting,
//! after which the sender can send it again (with a higher fee to stay in).

#![allow(clippy::disallowed_types)] // hash lookups only; iteration is over the ordered maps.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use lantau_app::module_api::{SdkError, TxError};
use lantau_app::{DecodedTx, Footprint};
use lantau_primitives::Address;

/// One admitted transaction.
#[derive(Debug, Clone)]
pub struct Entry {
    /// sha256 of the bytes.
    pub hash: [u8; 32],
    /// The bytes.
    pub bytes: Arc<Vec<u8>>,
    /// The transaction as admission decoded it (recheck and the block use it, no re-decoding).
    pub tx: Arc<DecodedTx>,
    /// What its admission (or last recheck) wrote into the check overlay: a recheck replays it
    /// when the block left its keys alone.
    pub footprint: Arc<Footprint>,
}

/// How much more a same-nonce Ethereum transaction must offer, in both its fee cap and its
/// tip, to replace a waiting one (geth's `--txpool.pricebump` default).
pub const REPLACEMENT_BUMP_PERCENT: u128 = 10;

/// Whether `new` may replace the waiting `old` (same sender and nonce): its fee cap and tip
/// each at least [`REPLACEMENT_BUMP_PERCENT`] % above; otherwise codespace `mempool` code 1,
/// "replacement transaction underpriced" (geth's words).
pub fn replaces(old: &lantau_app::evm::EthTx, new: &lantau_app::evm::EthTx) -> Result<(), TxError> {
    let bumped = |v: u128| v.saturating_mul(100 + REPLACEMENT_BUMP_PERCENT).div_ceil(100);
    let tip = |t: &lantau_app::evm::EthTx| t.max_priority_fee_per_gas.unwrap_or(t.max_fee_per_gas);
    if new.max_fee_per_gas >= bumped(old.max_fee_per_gas) && tip(new) >= bumped(tip(old)) {
        return Ok(());
    }
    Err(TxError {
        codespace: "mempool",
        code: 1,
        log: format!(
            "replacement transaction underpriced: nonce {} is taken by a waiting transaction with fee cap {} and tip {}; a replacement offers at least {} and {} ({}% more)",
            old.nonce,
            old.max_fee_per_gas,
            tip(old),
            bumped(old.max_fee_per_gas),
            bumped(tip(old)),
            REPLACEMENT_BUMP_PERCENT
        ),
    })
}

/// Fee per unit of gas limit, in the fee's base unit (rounded down): the priority.
pub fn fee_per_gas(tx: &DecodedTx) -> u128 {
    tx.fee.0 / u128::from(tx.gas_limit.max(1))
}

/// How many entries one admission may evict.
const MAX_EVICTIONS: usize = 64;

/// The mempool.
#[derive(Debug)]
pub struct Mempool {
    next: u64,
    order: BTreeMap<u64, Entry>,
    by_hash: HashMap<[u8; 32], u64>,
    /// Every entry by (fee per gas, newest first): the eviction order.
    by_price: BTreeSet<(u128, Reverse<u64>)>,
    bytes: usize,
    max_txs: usize,
    max_bytes: usize,
    /// The ids waiting per signer, in admission order.
    per_sender: HashMap<Address, BTreeSet<u64>>,
    max_per_sender: usize,
}

impl Mempool {
    /// An empty mempool with bounds: transactions, bytes, transactions of one sender.
    pub fn new(max_txs: usize, max_bytes: usize, max_per_sender: usize) -> Self {
        Self {
            next: 0,
            order: BTreeMap::new(),
            by_hash: HashMap::new(),
            by_price: BTreeSet::new(),
            bytes: 0,
            max_txs,
            max_bytes,
            per_sender: HashMap::new(),
            max_per_sender: max_per_sender.max(1),
        }
    }

    /// True when the hash is waiting.
    pub fn contains(&self, hash: &[u8; 32]) -> bool {
        self.by_hash.contains_key(hash)
    }

    /// The waiting entry with this hash.
    pub fn get(&self, hash: &[u8; 32]) -> Option<Entry> {
        self.by_hash.get(hash).and_then(|id| self.order.get(id)).cloned()
    }

    fn has_room(&self, len: usize) -> bool {
        self.order.len() < self.max_txs && self.bytes.saturating_add(len) <= self.max_bytes
    }

    fn full(&self, price: Option<u128>) -> TxError {
        let lowest = self.by_price.first().map(|(p, _)| *p).unwrap_or(0);
        let hint = match price {
            Some(p) => format!(
                "; this transaction pays {p} per gas and the cheapest waiting pay {lowest}: pay more than {lowest} per gas to take their place, or send it again after the next block"
            ),
            None => String::new(),
        };
        SdkError::MempoolIsFull(format!(
            "mempool holds {} txs ({} bytes); limits are {} txs and {} bytes{hint}",
            self.order.len(),
            self.bytes,
            self.max_txs,
            self.max_bytes
        ))
        .into()
    }

    /// Checks there is room for `len` more bytes, or that a transaction paying `price` per gas
    /// might take the place of cheaper ones (`None`, the price unknown: a full mempool refuses).
    pub fn check_room(&self, len: usize, price: Option<u128>) -> Result<(), TxError> {
        if self.has_room(len) {
            return Ok(());
        }
        match price {
            Some(p) if self.by_price.first().is_some_and(|(lowest, _)| *lowest < p) => Ok(()),
            _ => Err(self.full(price)),
        }
    }

    /// The entries to evict so that `len` bytes paying `price` per gas from `signer` fit: the
    /// last entries of other senders, cheapest first, each strictly cheaper than `price`.
    fn victims(&self, len: usize, price: u128, signer: &Address) -> Option<Vec<u64>> {
        let (mut count, mut bytes) = (self.order.len(), self.bytes);
        let mut out = Vec::new();
        let mut seen = 0usize;
        // Cheapest first; among equals newest first (the oldest keeps its place, as in blocks).
        for &(p, Reverse(id)) in &self.by_price {
            if count < self.max_txs && bytes.saturating_add(len) <= self.max_bytes {
                break;
            }
            seen = seen.saturating_add(1);
            if p >= price || out.len() >= MAX_EVICTIONS || seen > MAX_EVICTIONS.saturating_mul(16) {
                return None;
            }
            let Some(e) = self.order.get(&id) else { continue };
            let is_last = self.per_sender.get(&e.tx.signer).and_then(|ids| ids.last()) == Some(&id);
            if e.tx.signer == *signer || !is_last {
                continue;
            }
            out.push(id);
            count = count.saturating_sub(1);
            bytes = bytes.saturating_sub(e.bytes.len());
        }
        (count < self.max_txs && bytes.saturating_add(len) <= self.max_bytes).then_some(out)
    }

    /// Adds an admitted transaction, evicting cheaper ones when full (see the module's notes).
    /// Returns the hashes evicted.
    pub fn insert(&mut self, hash: [u8; 32], bytes: Arc<Vec<u8>>, tx: Arc<DecodedTx>) -> Result<Vec<[u8; 32]>, TxError> {
        self.insert_with(hash, bytes, tx, Footprint::none())
    }

    /// Like [`Mempool::insert`], with the admission's footprint.
    pub fn insert_with(&mut self, hash: [u8; 32], bytes: Arc<Vec<u8>>, tx: Arc<DecodedTx>, footprint: Arc<Footprint>) -> Result<Vec<[u8; 32]>, TxError> {
        if self.contains(&hash) {
            return Err(SdkError::TxInMempoolCache.into());
        }
        let waiting = self.per_sender.get(&tx.signer).map_or(0, BTreeSet::len);
        if waiting >= self.max_per_sender {
            return Err(SdkError::MempoolIsFull(format!(
                "{} has {waiting} transactions waiting, the most one sender may (mempool.max_txs_per_sender); send more once some are in a block",
                tx.signer.to_bech32()
            ))
            .into());
        }
        let price = fee_per_gas(&tx);
        let mut evicted = Vec::new();
        if !self.has_room(bytes.len()) {
            let Some(victims) = self.victims(bytes.len(), price, &tx.signer) else {
                return Err(self.full(Some(price)));
            };
            for id in victims {
                if let Some(e) = self.order.get(&id) {
                    evicted.push(e.hash);
                }
            }
            self.remove(evicted.iter().copied());
        }
        let id = self.next;
        self.next = self.next.saturating_add(1);
        self.per_sender.entry(tx.signer).or_default().insert(id);
        self.bytes = self.bytes.saturating_add(bytes.len());
        self.by_hash.insert(hash, id);
        self.by_price.insert((price, Reverse(id)));
        self.order.insert(id, Entry { hash, bytes, tx, footprint });
        Ok(evicted)
    }

    /// The entries for a block, highest fee per gas first, at most `max_txs` of them within
    /// `max_bytes` and, when given, a sum of gas limits within `max_gas`. One sender's entries
    /// keep their admission order (their sequence order): a sender's next entry is a candidate
    /// only once the one before it is taken, and a sender whose next entry does not fit is
    /// passed over for this block. At equal prices senders take turns (a sender's n-th entry
    /// of the block goes before anyone's (n+1)-th, so a queue of one account's transactions at
    /// the floor price does not keep everyone else's out), then the oldest goes first.
    pub fn reap(&self, max_bytes: usize, max_txs: usize, max_gas: Option<u64>) -> Vec<Entry> {
        self.reap_with_backlog(max_bytes, max_txs, max_gas).0
    }

    /// Like [`Mempool::reap`], and whether a limit left entries out (a backlog remains).
    pub fn reap_with_backlog(&self, max_bytes: usize, max_txs: usize, max_gas: Option<u64>) -> (Vec<Entry>, bool) {
        use std::collections::{BinaryHeap, VecDeque};
        // Per sender, in admission order; BTreeMap so that the walk does not depend on hashing.
        let mut queues: BTreeMap<Address, VecDeque<(u64, &Entry)>> = BTreeMap::new();
        for (id, e) in &self.order {
            queues.entry(e.tx.signer).or_default().push_back((*id, e));
        }
        let price = |e: &Entry| fee_per_gas(&e.tx);
        // (price, turn: how many of this sender's are already in, age, sender)
        let mut heads: BinaryHeap<(u128, Reverse<u32>, Reverse<u64>, Address)> = BinaryHeap::new();
        for (signer, q) in &queues {
            if let Some((id, e)) = q.front() {
                heads.push((price(e), Reverse(0), Reverse(*id), *signer));
            }
        }
        let mut out = Vec::new();
        let (mut total, mut gas) = (0usize, 0u64);
        let mut left_out = false;
        while out.len() < max_txs {
            let Some((_, Reverse(turn), _, signer)) = heads.pop() else { break };
            let Some(q) = queues.get_mut(&signer) else { continue };
            let Some((_, e)) = q.pop_front() else { continue };
            let next = total.saturating_add(e.bytes.len());
            let next_gas = gas.saturating_add(e.tx.gas_limit);
            if next > max_bytes || max_gas.is_some_and(|m| next_gas > m) {
                left_out = true;
                continue; // this sender waits for the next block
            }
            (total, gas) = (next, next_gas);
            out.push(e.clone());
            if let Some((id, e)) = q.front() {
                heads.push((price(e), Reverse(turn.saturating_add(1)), Reverse(*id), signer));
            }
        }
        let backlog = left_out || !heads.is_empty();
        (out, backlog)
    }

    /// Removes entries by hash.
    pub fn remove(&mut self, hashes: impl IntoIterator<Item = [u8; 32]>) {
        // The entries (decodings, footprints) are freed off the caller's thread and this lock.
        let mut removed = Vec::new();
        for h in hashes {
            if let Some(id) = self.by_hash.remove(&h) {
                if let Some(e) = self.order.remove(&id) {
                    self.bytes = self.bytes.saturating_sub(e.bytes.len());
                    self.by_price.remove(&(fee_per_gas(&e.tx), Reverse(id)));
                    if let Some(ids) = self.per_sender.get_mut(&e.tx.signer) {
                        ids.remove(&id);
                        if ids.is_empty() {
                            self.per_sender.remove(&e.tx.signer);
                        }
                    }
                    removed.push(e);
                }
            }
        }
        if !removed.is_empty() {
            lantau_app::dropper::drop_later(removed);
        }
    }

    /// The waiting Ethereum transaction of `sender` with `nonce`, if any (the one a same-nonce
    /// transaction would replace): looked up through the sender's own entries, without decoding.
    pub fn ethereum_of(&self, sender: &Address, nonce: u64) -> Option<Entry> {
        self.per_sender.get(sender)?.iter().filter_map(|id| self.order.get(id)).find(|e| e.tx.eth_hash.is_some() && e.tx.sequence == nonce).cloned()
    }

    /// Every entry in order.
    pub fn entries(&self) -> Vec<Entry> {
        self.order.values().cloned().collect()
    }

    /// The entries admitted since `mark` (0: all of them), in order, and the mark to pass next
    /// time to get only those admitted after this call.
    pub fn entries_since(&self, mark: u64) -> (Vec<Entry>, u64) {
        (self.order.range(mark..).map(|(_, e)| e.clone()).collect(), self.next)
    }

    /// Records the footprints rechecks gave (entries gone since are skipped).
    pub fn set_footprints(&mut self, footprints: impl IntoIterator<Item = ([u8; 32], Arc<Footprint>)>) {
        for (hash, fp) in footprints {
            if let Some(e) = self.by_hash.get(&hash).and_then(|id| self.order.get_mut(id)) {
                e.footprint = fp;
            }
        }
    }

    /// Count and bytes.
    pub fn size(&self) -> (usize, usize) {
        (self.order.len(), self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx(hash: [u8; 32]) -> Arc<DecodedTx> {
        tx_from(hash, 0)
    }

    fn tx_from(hash: [u8; 32], signer: u8) -> Arc<DecodedTx> {
        Arc::new(DecodedTx {
            hash,
            size: 10,
            body_bytes: vec![],
            auth_info_bytes: vec![],
            signature: vec![],
            pubkey: None,
            signer: lantau_primitives::Address([signer; 20]),
            sequence: 0,
            msgs: vec![],
            gas_limit: 1,
            fee: lantau_primitives::Amount::ZERO,
            memo: String::new(),
            timeout_height: 0,
            payload: None,
            eth_hash: None,
            verified_for: Default::default(),
        })
    }

    fn put(m: &mut Mempool, h: u8) -> Result<(), TxError> {
        m.insert([h; 32], Arc::new(vec![0; 10]), tx([h; 32])).map(|_| ())
    }

    #[test]
    fn bounded_ordered_and_deduplicated() {
        let mut m = Mempool::new(2, 1_000, 10);
        put(&mut m, 1).unwrap();
        assert_eq!(put(&mut m, 1).unwrap_err().code, 19);
        put(&mut m, 2).unwrap();
        assert_eq!(put(&mut m, 3).unwrap_err().code, 20);
        assert_eq!(m.reap(15, 10, None).len(), 1);
        assert_eq!(m.reap(100, 10, None)[1].hash, [2; 32]);
        m.remove([[1; 32]]);
        assert_eq!(m.size(), (1, 10));
    }

    #[test]
    fn entries_since_a_mark_are_the_later_admissions_in_order() {
        let mut m = Mempool::new(10, 1_000, 10);
        put(&mut m, 1).unwrap();
        put(&mut m, 2).unwrap();
        let (all, mark) = m.entries_since(0);
        assert_eq!(all.iter().map(|e| e.hash[0]).collect::<Vec<_>>(), vec![1, 2]);
        put(&mut m, 3).unwrap();
        put(&mut m, 4).unwrap();
        m.remove([[1; 32]]);
        let (late, mark2) = m.entries_since(mark);
        assert_eq!(late.iter().map(|e| e.hash[0]).collect::<Vec<_>>(), vec![3, 4]);
        assert!(m.entries_since(mark2).0.is_empty());
    }

    #[test]
    fn one_sender_cannot_fill_the_mempool() {
        let mut m = Mempool::new(10, 1_000, 2);
        for h in [1, 2] {
            m.insert([h; 32], Arc::new(vec![0; 10]), tx_from([h; 32], 7)).unwrap();
        }
        let e = m.insert([3; 32], Arc::new(vec![0; 10]), tx_from([3; 32], 7)).unwrap_err();
        assert_eq!(e.code, 20);
        assert!(e.log.contains("mempool.max_txs_per_sender"), "{}", e.log);
        // Another sender still gets in; a block freeing one of 7's slots lets 7 in again.
        m.insert([4; 32], Arc::new(vec![0; 10]), tx_from([4; 32], 8)).unwrap();
        m.remove([[1; 32]]);
        m.insert([3; 32], Arc::new(vec![0; 10]), tx_from([3; 32], 7)).unwrap();
        assert_eq!(m.size().0, 3);
    }

    fn priced(hash: u8, signer: u8, fee: u128, gas: u64) -> Arc<DecodedTx> {
        let mut t = (*tx_from([hash; 32], signer)).clone();
        t.fee = lantau_primitives::Amount(fee);
        t.gas_limit = gas;
        Arc::new(t)
    }

    #[test]
    fn blocks_take_the_highest_fee_per_gas_first_and_keep_each_senders_order() {
        let mut m = Mempool::new(10, 1_000, 10);
        let mut add = |h: u8, signer: u8, fee: u128, gas: u64| m.insert([h; 32], Arc::new(vec![0; 10]), priced(h, signer, fee, gas)).unwrap();
        add(1, 1, 1_000, 1_000); // sender 1: price 1, then price 5 (must follow)
        add(2, 1, 5_000, 1_000);
        add(3, 2, 3_000, 1_000); // sender 2: price 3
        add(4, 3, 3_000, 1_000); // sender 3: price 3, admitted after sender 2's
        add(5, 4, 2_000, 100); // sender 4: price 20
        let order: Vec<u8> = m.reap(1_000, 10, None).iter().map(|e| e.hash[0]).collect();
        assert_eq!(order, vec![5, 3, 4, 1, 2]);
        // A block of two takes the two best heads.
        assert_eq!(m.reap(1_000, 2, None).iter().map(|e| e.hash[0]).collect::<Vec<_>>(), vec![5, 3]);
        // A block of at most 2,000 gas takes 5 (100) and 3 (1,000); the others would pass it.
        assert_eq!(m.reap(1_000, 10, Some(2_000)).iter().map(|e| e.hash[0]).collect::<Vec<_>>(), vec![5, 3]);
    }

    #[test]
    fn a_full_mempool_gives_the_cheapest_senders_last_entries_to_a_better_price() {
        let mut m = Mempool::new(3, 1_000, 10);
        let add = |m: &mut Mempool, h: u8, signer: u8, fee: u128| m.insert([h; 32], Arc::new(vec![0; 10]), priced(h, signer, fee, 1_000));
        add(&mut m, 1, 1, 2_000).unwrap(); // sender 1: price 2 then 1 (its last)
        add(&mut m, 2, 1, 1_000).unwrap();
        add(&mut m, 3, 2, 1_000).unwrap(); // sender 2: price 1 (its last, newer than 2)
                                           // Not better than the cheapest: refused, saying what would get in.
        let e = add(&mut m, 4, 3, 1_000).unwrap_err();
        assert_eq!(e.code, 20);
        assert!(e.log.contains("pay more than 1 per gas"), "{}", e.log);
        assert!(m.check_room(10, Some(1)).is_err() && m.check_room(10, Some(2)).is_ok() && m.check_room(10, None).is_err());
        // Better: the newest of the cheapest last entries goes (sender 2's).
        assert_eq!(add(&mut m, 5, 3, 5_000).unwrap(), vec![[3; 32]]);
        // Again: sender 1's last entry goes, never its first (that would leave a gap).
        assert_eq!(add(&mut m, 6, 4, 5_000).unwrap(), vec![[2; 32]]);
        // Now only sender 1's price-2 entry is cheaper than 3, but it is the sender's own: a
        // sender never evicts itself.
        let e = m.insert([7; 32], Arc::new(vec![0; 10]), priced(7, 1, 3_000, 1_000)).unwrap_err();
        assert_eq!(e.code, 20);
        assert_eq!(m.size().0, 3);
        let left: Vec<u8> = m.entries().iter().map(|e| e.hash[0]).collect();
        assert_eq!(left, vec![1, 5, 6]);
        // Bytes count too: one large, well-paying transaction evicts several small ones.
        let mut m = Mempool::new(10, 30, 10);
        for h in 1..=3u8 {
            add(&mut m, h, h, 1_000).unwrap();
        }
        let evicted = m.insert([9; 32], Arc::new(vec![0; 25]), priced(9, 9, 9_000, 1_000)).unwrap();
        assert_eq!(evicted.len(), 3);
        assert_eq!(m.size(), (1, 25));
    }

    #[test]
    fn at_one_price_senders_take_turns() {
        let mut m = Mempool::new(10, 1_000, 10);
        // Sender 1 queues three at the floor, then sender 2 and 3 send one each.
        for (h, signer) in [(1, 1), (2, 1), (3, 1), (4, 2), (5, 3)] {
            m.insert([h; 32], Arc::new(vec![0; 10]), priced(h, signer, 1_000, 1_000)).unwrap();
        }
        let order: Vec<u8> = m.reap(1_000, 10, None).iter().map(|e| e.hash[0]).collect();
        assert_eq!(order, vec![1, 4, 5, 2, 3]);
        // A block with room for two: sender 1's first and sender 2's.
        assert_eq!(m.reap(1_000, 10, Some(2_000)).iter().map(|e| e.hash[0]).collect::<Vec<_>>(), vec![1, 4]);
    }
}

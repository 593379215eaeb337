//! The mempool of the embedded engine: admitted transactions waiting for a block.
//!
//! Entries keep their admission order. Admission happens under the app's check lock and inserts
//! here before the lock is released, so the order of one sender's entries is its sequence order
//! and a block reaped front to back never executes sequence 6 before 5. Bounded in count and
//! bytes; a full mempool rejects with sdk code 20.

#![allow(clippy::disallowed_types)] // hash lookups only; iteration is over the ordered map.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use lantau_app::module_api::{SdkError, TxError};

/// One admitted transaction.
#[derive(Debug, Clone)]
pub struct Entry {
    /// sha256 of the bytes.
    pub hash: [u8; 32],
    /// The bytes.
    pub bytes: Arc<Vec<u8>>,
}

/// The mempool.
#[derive(Debug)]
pub struct Mempool {
    next: u64,
    order: BTreeMap<u64, Entry>,
    by_hash: HashMap<[u8; 32], u64>,
    bytes: usize,
    max_txs: usize,
    max_bytes: usize,
}

impl Mempool {
    /// An empty mempool with bounds.
    pub fn new(max_txs: usize, max_bytes: usize) -> Self {
        Self { next: 0, order: BTreeMap::new(), by_hash: HashMap::new(), bytes: 0, max_txs, max_bytes }
    }

    /// True when the hash is waiting.
    pub fn contains(&self, hash: &[u8; 32]) -> bool {
        self.by_hash.contains_key(hash)
    }

    /// Checks there is room for `len` more bytes.
    pub fn check_room(&self, len: usize) -> Result<(), TxError> {
        if self.order.len() >= self.max_txs || self.bytes.saturating_add(len) > self.max_bytes {
            return Err(SdkError::MempoolIsFull(format!(
                "mempool holds {} txs ({} bytes); limits are {} txs and {} bytes",
                self.order.len(),
                self.bytes,
                self.max_txs,
                self.max_bytes
            ))
            .into());
        }
        Ok(())
    }

    /// Adds an admitted transaction.
    pub fn insert(&mut self, hash: [u8; 32], bytes: Arc<Vec<u8>>) -> Result<(), TxError> {
        if self.contains(&hash) {
            return Err(SdkError::TxInMempoolCache.into());
        }
        self.check_room(bytes.len())?;
        let id = self.next;
        self.next = self.next.saturating_add(1);
        self.bytes = self.bytes.saturating_add(bytes.len());
        self.by_hash.insert(hash, id);
        self.order.insert(id, Entry { hash, bytes });
        Ok(())
    }

    /// The oldest entries whose total size fits in `max_bytes`, at most `max_txs` of them.
    pub fn reap(&self, max_bytes: usize, max_txs: usize) -> Vec<Entry> {
        let mut out = Vec::new();
        let mut total = 0usize;
        for e in self.order.values() {
            if out.len() >= max_txs {
                break;
            }
            let next = total.saturating_add(e.bytes.len());
            if next > max_bytes {
                break;
            }
            total = next;
            out.push(e.clone());
        }
        out
    }

    /// Removes entries by hash.
    pub fn remove(&mut self, hashes: impl IntoIterator<Item = [u8; 32]>) {
        for h in hashes {
            if let Some(id) = self.by_hash.remove(&h) {
                if let Some(e) = self.order.remove(&id) {
                    self.bytes = self.bytes.saturating_sub(e.bytes.len());
                }
            }
        }
    }

    /// Every entry in order.
    pub fn entries(&self) -> Vec<Entry> {
        self.order.values().cloned().collect()
    }

    /// Count and bytes.
    pub fn size(&self) -> (usize, usize) {
        (self.order.len(), self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_ordered_and_deduplicated() {
        let mut m = Mempool::new(2, 1_000);
        m.insert([1; 32], Arc::new(vec![0; 10])).unwrap();
        assert_eq!(m.insert([1; 32], Arc::new(vec![0; 10])).unwrap_err().code, 19);
        m.insert([2; 32], Arc::new(vec![0; 10])).unwrap();
        assert_eq!(m.insert([3; 32], Arc::new(vec![0; 10])).unwrap_err().code, 20);
        assert_eq!(m.reap(15, 10).len(), 1);
        assert_eq!(m.reap(100, 10)[1].hash, [2; 32]);
        m.remove([[1; 32]]);
        assert_eq!(m.size(), (1, 10));
    }
}

//! The per-node gate-trace ring buffer (TxTrace): the last 256 traces this node computed, each
//! kept for 60 minutes of block time. Diagnostic only: not state, not replicated, lost on
//! restart; a node that did not process a transaction has no trace of it.
//!
//! Admission stores a trace for every transaction it screened; execution overwrites it with
//! the live trace of the block. Lifetime is measured in block time (the node's only clock), so
//! the buffer needs no wall clock.

#![allow(clippy::disallowed_types)] // a HashMap here is only looked up, never iterated: not state.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use lantau_proto::chain::compliance::v1::GateTrace;

/// Capacity.
pub const TRACE_CAPACITY: usize = 256;
/// Lifetime, in seconds of block time.
pub const TRACE_LIFETIME_SECS: i64 = 60 * 60;

/// The buffer: each transaction's latest trace, the oldest put evicted first. A put and a
/// lookup cost the same whatever the buffer holds (every admission and every executed
/// transaction puts one, under the buffer's lock).
#[derive(Debug, Default)]
pub struct TraceBuffer {
    /// By transaction hash: the number of the put that stored it, its block time, the trace.
    entries: HashMap<[u8; 32], (u64, i64, Arc<GateTrace>)>,
    /// The puts in order, by hash and number. A place whose number is no longer its hash's
    /// (the hash was put again since) is stale: skipped when it comes to the front.
    order: VecDeque<([u8; 32], u64)>,
    puts: u64,
}

impl TraceBuffer {
    /// Stores (or replaces) the trace of `hash`, computed at block time `at` (unix seconds).
    pub fn put(&mut self, hash: [u8; 32], at: i64, trace: Arc<GateTrace>) {
        let n = self.puts;
        self.puts = self.puts.wrapping_add(1);
        self.entries.insert(hash, (n, at, trace));
        self.order.push_back((hash, n));
        while self.entries.len() > TRACE_CAPACITY {
            let Some((h, k)) = self.order.pop_front() else { break };
            if self.entries.get(&h).is_some_and(|e| e.0 == k) {
                self.entries.remove(&h);
            }
        }
        // Hashes put again and again leave stale places behind: drop them now and then.
        if self.order.len() > 4 * TRACE_CAPACITY {
            let entries = &self.entries;
            self.order.retain(|(h, k)| entries.get(h).is_some_and(|e| e.0 == *k));
        }
    }

    /// The trace of `hash` when it is younger than the lifetime at block time `now`.
    pub fn get(&self, hash: &[u8; 32], now: i64) -> Option<GateTrace> {
        self.entries.get(hash).filter(|(_, at, _)| now.saturating_sub(*at) < TRACE_LIFETIME_SECS).map(|(_, _, t)| GateTrace::clone(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_oldest_and_expires_after_an_hour() {
        let mut b = TraceBuffer::default();
        for i in 0..300u32 {
            let mut h = [0u8; 32];
            h[..4].copy_from_slice(&i.to_be_bytes());
            b.put(h, 1_000, Arc::new(GateTrace::default()));
        }
        let first = [0u8; 32];
        assert!(b.get(&first, 1_000).is_none(), "evicted");
        let mut last = [0u8; 32];
        last[..4].copy_from_slice(&299u32.to_be_bytes());
        assert!(b.get(&last, 1_000).is_some());
        assert!(b.get(&last, 1_000 + TRACE_LIFETIME_SECS).is_none(), "expired");
    }

    #[test]
    fn a_trace_put_again_replaces_its_own_and_counts_from_its_last_put() {
        let mut b = TraceBuffer::default();
        let h = |i: u32| {
            let mut x = [0u8; 32];
            x[..4].copy_from_slice(&i.to_be_bytes());
            x
        };
        let t = |s: &str| Arc::new(GateTrace { tx_hash: s.into(), ..Default::default() });
        // One hash put many times: one entry, the last trace, the places bounded.
        for i in 0..5_000u32 {
            b.put(h(7), 1_000, t(&i.to_string()));
        }
        assert_eq!(b.get(&h(7), 1_000).map(|x| x.tx_hash), Some("4999".into()));
        assert_eq!(b.entries.len(), 1);
        assert!(b.order.len() <= 4 * TRACE_CAPACITY + 1);
        // Hash 0 is put first, hash 7 again after 1..255: 256 more evict 0 first, 7 last.
        b = TraceBuffer::default();
        b.put(h(0), 1_000, t("first"));
        b.put(h(7), 1_000, t("early"));
        for i in 1..TRACE_CAPACITY as u32 {
            if i != 7 {
                b.put(h(i), 1_000, t("x"));
            }
        }
        b.put(h(7), 1_000, t("again"));
        assert_eq!(b.entries.len(), TRACE_CAPACITY);
        b.put(h(10_000), 1_000, t("new"));
        assert!(b.get(&h(0), 1_000).is_none(), "the oldest put goes first");
        for i in 0..(TRACE_CAPACITY as u32 - 2) {
            b.put(h(20_000 + i), 1_000, t("new"));
        }
        assert_eq!(b.get(&h(7), 1_000).map(|x| x.tx_hash), Some("again".into()), "counted from its last put");
        b.put(h(30_000), 1_000, t("new"));
        assert!(b.get(&h(7), 1_000).is_none());
        assert_eq!(b.entries.len(), TRACE_CAPACITY);
    }
}

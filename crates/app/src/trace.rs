//! The per-node gate-trace ring buffer (TxTrace): the last 256 traces this node computed, each
//! kept for 60 minutes of block time. Diagnostic only: not state, not replicated, lost on
//! restart; a node that did not process a transaction has no trace of it.
//!
//! Admission stores a trace for every transaction it screened; execution overwrites it with
//! the live trace of the block. Lifetime is measured in block time (the node's only clock), so
//! the buffer needs no wall clock.

use std::collections::VecDeque;

use lantau_proto::chain::compliance::v1::GateTrace;

/// Capacity.
pub const TRACE_CAPACITY: usize = 256;
/// Lifetime, in seconds of block time.
pub const TRACE_LIFETIME_SECS: i64 = 60 * 60;

/// The ring buffer.
#[derive(Debug, Default)]
pub struct TraceBuffer {
    entries: VecDeque<([u8; 32], i64, GateTrace)>,
}

impl TraceBuffer {
    /// Stores (or replaces) the trace of `hash`, computed at block time `at` (unix seconds).
    pub fn put(&mut self, hash: [u8; 32], at: i64, trace: GateTrace) {
        self.entries.retain(|(h, _, _)| *h != hash);
        self.entries.push_back((hash, at, trace));
        while self.entries.len() > TRACE_CAPACITY {
            self.entries.pop_front();
        }
    }

    /// The trace of `hash` when it is younger than the lifetime at block time `now`.
    pub fn get(&self, hash: &[u8; 32], now: i64) -> Option<GateTrace> {
        self.entries.iter().rev().find(|(h, at, _)| h == hash && now.saturating_sub(*at) < TRACE_LIFETIME_SECS).map(|(_, _, t)| t.clone())
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
            b.put(h, 1_000, GateTrace::default());
        }
        let first = [0u8; 32];
        assert!(b.get(&first, 1_000).is_none(), "evicted");
        let mut last = [0u8; 32];
        last[..4].copy_from_slice(&299u32.to_be_bytes());
        assert!(b.get(&last, 1_000).is_some());
        assert!(b.get(&last, 1_000 + TRACE_LIFETIME_SECS).is_none(), "expired");
    }
}

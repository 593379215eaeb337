//! Remembers signatures this node already verified, so FinalizeBlock does not verify again the
//! bytes CheckTx verified. The key commits to everything verification depends on (the digest,
//! which covers body, auth info, chain id and account number; the public key; the signature), so
//! a hit is exactly as good as a verification. Node-local: it changes speed, never results.

#![allow(clippy::disallowed_types)] // a HashSet here is never iterated into state.

use std::collections::{HashSet, VecDeque};

use parking_lot::Mutex;

/// A bounded set of verified (digest, pubkey, signature) keys.
#[derive(Debug)]
pub(crate) struct SigCache {
    inner: Mutex<Inner>,
    capacity: usize,
}

#[derive(Debug, Default)]
struct Inner {
    set: HashSet<[u8; 32]>,
    order: VecDeque<[u8; 32]>,
}

impl SigCache {
    pub(crate) fn new(capacity: usize) -> Self {
        Self { inner: Mutex::new(Inner::default()), capacity }
    }

    pub(crate) fn key(digest: &[u8; 32], pubkey: &[u8], sig: &[u8]) -> [u8; 32] {
        let mut buf = Vec::with_capacity(pubkey.len().saturating_add(sig.len()).saturating_add(32));
        buf.extend_from_slice(digest);
        buf.extend_from_slice(pubkey);
        buf.extend_from_slice(sig);
        lantau_crypto::sha256(&buf)
    }

    pub(crate) fn contains(&self, key: &[u8; 32]) -> bool {
        self.inner.lock().set.contains(key)
    }

    pub(crate) fn insert(&self, key: [u8; 32]) {
        if self.capacity == 0 {
            return;
        }
        let mut g = self.inner.lock();
        if g.set.insert(key) {
            g.order.push_back(key);
            while g.order.len() > self.capacity {
                if let Some(old) = g.order.pop_front() {
                    g.set.remove(&old);
                }
            }
        }
    }
}

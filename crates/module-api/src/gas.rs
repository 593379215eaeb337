//! Deterministic gas metering.
//!
//! Gas is priced in time: a unit is about 1 ns of block time (FinalizeBlock and Commit) on the
//! project's machine kind on a day it verifies ~43,000 signatures a second, whatever the
//! transaction, so that `block.max_gas` bounds a block's time. The schedule is fitted to
//! whole transactions (`docs/performance.md`, "The gas schedule"): a block of each type alone
//! (native transfers, gated transfers, EVM `transferWithTravelRule`, multi-sends to fresh
//! addresses), its FinalizeBlock and Commit divided into the gas it used, with the charges
//! below set so that every type costs the same time per unit within about 10 %. `lantaud bench
//! --ops` times each kind of store operation on its own (a Merkle leaf ~18-20 µs, a
//! non-verifiable row ~1 µs, a read from the snapshot ~4 µs, from the read cache well under
//! one); the flat charges carry the execution that comes with each access as well (gate
//! logic, encoding, the records' lattice, index rows). The meter is shared by reference inside
//! one transaction; it never reads the clock.

use std::sync::atomic::{AtomicU64, Ordering};

/// Gas for reading one key, before bytes: a read through the transaction's and the block's
/// overlays, usually served by the read cache, and the decoding and logic that use it (reads
/// are bounded by the shape of each message, never by user data).
pub const READ_FLAT: u64 = 550;
/// Gas per byte of key and value read.
pub const READ_PER_BYTE: u64 = 1;
/// Gas for writing one verifiable key, before bytes: its leaf in the Merkle tree is updated
/// when the block commits.
pub const WRITE_FLAT: u64 = 7_000;
/// Gas per byte of key and value written to a verifiable key.
pub const WRITE_PER_BYTE: u64 = 2;
/// Gas for deleting a verifiable key (the tree's update, as a write).
pub const DELETE_FLAT: u64 = 7_000;
/// Gas for writing one non-verifiable row (audit rows and their indexes, flags, windows,
/// anchors), before bytes: no tree, one RocksDB put when the block commits, the row's way
/// through the overlays, and the encoding, hashing and index rows that come with it.
pub const ROW_FLAT: u64 = 1_000;
/// Gas per byte of key and value of a non-verifiable row.
pub const ROW_PER_BYTE: u64 = 2;
/// Gas for rewriting a key that every transaction of its kind rewrites (a counter, the audit
/// log's head, the records' commitment): its leaf is updated once per block whatever the
/// number of writers, so each writer pays for the overlay's work only.
pub const SINGLETON_WRITE: u64 = 1_000;
/// Gas per byte of the encoded transaction (decoding, hashing, the block's bytes and the index).
pub const TX_SIZE_PER_BYTE: u64 = 10;
/// Gas for verifying one eth_secp256k1 signature: ~23 µs, one verification's time. A block's
/// transactions are usually verified at admission already, but a validator that did not see
/// them verifies in the block, and the charge also carries a transaction's own way through the
/// block (its decoding, result, index and history rows), as Ethereum's intrinsic 21,000 does.
pub const SIG_VERIFY: u64 = 22_000;
/// Gas for creating an account, on top of its writes: what an address that has never held
/// anything costs the chain beyond the writes (new Merkle leaves for the account and its
/// balance, the tree's growth, their index rows). Fitted with multi-sends to fresh addresses:
/// ~34 µs of block time per output (see `docs/performance.md`, "The gas schedule").
pub const ACCOUNT_CREATION: u64 = 15_500;

/// The transaction ran out of gas.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("out of gas in location: {location}; gasWanted: {limit}, gasUsed: {used}")]
pub struct OutOfGas {
    /// What was being charged when the limit was crossed.
    pub location: &'static str,
    /// The gas limit of the transaction.
    pub limit: u64,
    /// Gas used including the charge that crossed the limit.
    pub used: u64,
}

/// A gas meter with a limit. Interior mutability (an atomic) so that it can be shared by `&`
/// across the awaits of one transaction; it is never shared between transactions.
#[derive(Debug)]
pub struct GasMeter {
    limit: u64,
    used: AtomicU64,
}

impl GasMeter {
    /// A meter with a limit.
    pub fn new(limit: u64) -> Self {
        Self { limit, used: AtomicU64::new(0) }
    }

    /// A meter that never runs out (queries, genesis, block hooks).
    pub fn infinite() -> Self {
        Self::new(u64::MAX)
    }

    /// Charges `amount`; fails once the total exceeds the limit (the charge stays recorded, as in
    /// the Cosmos SDK, so `used` reports the overrun).
    pub fn consume(&self, amount: u64, location: &'static str) -> Result<(), OutOfGas> {
        let prev = self.used.fetch_add(amount, Ordering::Relaxed);
        let used = prev.saturating_add(amount);
        if prev.checked_add(amount).is_none() || used > self.limit {
            // Keep the counter saturated rather than wrapped.
            self.used.store(used, Ordering::Relaxed);
            return Err(OutOfGas { location, limit: self.limit, used });
        }
        Ok(())
    }

    /// Charges a read of `key_len + value_len` bytes.
    pub fn read(&self, key_len: usize, value_len: usize) -> Result<(), OutOfGas> {
        let bytes = (key_len as u64).saturating_add(value_len as u64);
        self.consume(READ_FLAT.saturating_add(READ_PER_BYTE.saturating_mul(bytes)), "ReadFlat")
    }

    /// Charges a write of `key_len + value_len` bytes.
    pub fn write(&self, key_len: usize, value_len: usize) -> Result<(), OutOfGas> {
        let bytes = (key_len as u64).saturating_add(value_len as u64);
        self.consume(WRITE_FLAT.saturating_add(WRITE_PER_BYTE.saturating_mul(bytes)), "WriteFlat")
    }

    /// Charges a write of a non-verifiable row of `key_len + value_len` bytes.
    pub fn row(&self, key_len: usize, value_len: usize) -> Result<(), OutOfGas> {
        let bytes = (key_len as u64).saturating_add(value_len as u64);
        self.consume(ROW_FLAT.saturating_add(ROW_PER_BYTE.saturating_mul(bytes)), "RowFlat")
    }

    /// Charges a rewrite of a key every transaction of its kind rewrites ([`SINGLETON_WRITE`]).
    pub fn singleton(&self) -> Result<(), OutOfGas> {
        self.consume(SINGLETON_WRITE, "SingletonWrite")
    }

    /// Charges a delete.
    pub fn delete(&self) -> Result<(), OutOfGas> {
        self.consume(DELETE_FLAT, "Delete")
    }

    /// Gas used so far.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// The limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_enforces_limit() {
        let m = GasMeter::new(5_000);
        assert!(m.read(10, 10).is_ok());
        assert_eq!(m.used(), READ_FLAT + 20 * READ_PER_BYTE);
        let err = m.write(100, 0).unwrap_err();
        assert_eq!(err.limit, 5_000);
        assert!(m.used() > 5_000);
        let inf = GasMeter::infinite();
        assert!(inf.consume(u64::MAX, "x").is_ok());
        assert!(inf.consume(1, "x").is_err());
    }
}

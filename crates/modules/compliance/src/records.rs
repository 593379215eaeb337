//! The compliance module's mutable records outside the Merkle tree: flags and velocity
//! windows live in the non-verifiable store, and one verifiable key commits to all of them.
//!
//! A gated transfer used to write five or six Merkle keys, two of them the sender's velocity
//! window and (when flagged) a flag; the JMT update and its RocksDB rows were the largest cost
//! of a block. The design keeps the tree to balances and sequences and puts everything else in
//! the non-verifiable store with one commitment per block. The audit log does that with a
//! hash chain over its rows, which works because rows are never rewritten. Flags change status
//! and velocity windows are overwritten, so a chain over their history could not be checked
//! against the records a state-sync snapshot carries. Here the commitment is a **lattice
//! hash** (LtHash, Bellare–Micciancio's additive homomorphic hash as Lewi et al. instantiate
//! it, and as Solana commits to its accounts): each record `(key, value)` maps to 1,024
//! 16-bit words (BLAKE3 in XOF mode), and the commitment is their sum modulo 2^16 word by
//! word over every record held. Overwriting a record subtracts its old words and adds the new
//! ones, so an update costs two expansions whatever the number of records, and anyone holding
//! the records can recompute the sum (a restore does, [`check`]).
//!
//! - verifiable: [`RECORDS_LATTICE`] → the 2,048-byte sum (words little-endian; absent = all
//!   zero, no records). Every record write updates it, so the app hash commits to the whole
//!   set of flags and velocity windows in the block that changes them: two replicas that differ
//!   in one record differ in the app hash of that block.
//! - non-verifiable: the records under their usual keys (`compliance/flag/…`,
//!   `compliance/velocity/…`, [`RECORD_PREFIXES`]).
//!
//! Gas: a record write is charged as before (a write of its key and value) plus one read and
//! one 32-byte write of the commitment, as the audit log charges its head.

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, store, GasMeter, TxError};

use crate::state_key;

/// Words in a lattice hash.
pub const WORDS: usize = 1024;
/// Bytes of a stored lattice hash.
pub const LATTICE_BYTES: usize = WORDS * 2;

/// Domain separation of an element's expansion.
const DOMAIN: &[u8] = b"lantau/compliance/records/v1";

/// `compliance/records_lattice`: the sum of the lattice hashes of every record held.
pub use state_key::RECORDS_LATTICE;

/// The non-verifiable prefixes whose records the lattice commits to.
pub const RECORD_PREFIXES: &[&str] = &[state_key::FLAG_PREFIX, state_key::VELOCITY_PREFIX];

/// An LtHash: 1,024 words added modulo 2^16.
#[derive(Clone, PartialEq, Eq)]
pub struct Lattice(Box<[u16; WORDS]>);

impl std::fmt::Debug for Lattice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lattice({})", hex_short(&self.checksum()))
    }
}

fn hex_short(b: &[u8; 32]) -> String {
    b[..8].iter().map(|x| format!("{x:02x}")).collect()
}

impl Lattice {
    /// The sum over no records.
    pub fn identity() -> Self {
        Self(Box::new([0; WORDS]))
    }

    /// The lattice hash of one record: BLAKE3 over the domain, the key's length (u64
    /// big-endian), the key and the value, read out to 2,048 bytes.
    pub fn of(key: &[u8], value: &[u8]) -> Self {
        let mut h = blake3::Hasher::new();
        h.update(DOMAIN);
        h.update(&(key.len() as u64).to_be_bytes());
        h.update(key);
        h.update(value);
        let mut bytes = [0u8; LATTICE_BYTES];
        h.finalize_xof().fill(&mut bytes);
        let mut words = Box::new([0u16; WORDS]);
        for (w, b) in words.iter_mut().zip(bytes.chunks_exact(2)) {
            *w = word(b);
        }
        Self(words)
    }

    /// Adds `other`'s words.
    pub fn mix_in(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a = a.wrapping_add(*b);
        }
    }

    /// Subtracts `other`'s words.
    pub fn mix_out(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a = a.wrapping_sub(*b);
        }
    }

    /// The stored form: the words little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.0.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Parses the stored form (exactly [`LATTICE_BYTES`] bytes).
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() != LATTICE_BYTES {
            return None;
        }
        let mut words = Box::new([0u16; WORDS]);
        for (w, c) in words.iter_mut().zip(b.chunks_exact(2)) {
            *w = word(c);
        }
        Some(Self(words))
    }

    /// BLAKE3 of the stored form: a short name for logs and tests.
    pub fn checksum(&self) -> [u8; 32] {
        *blake3::hash(&self.to_bytes()).as_bytes()
    }
}

/// A little-endian word from a two-byte chunk.
fn word(c: &[u8]) -> u16 {
    match c {
        [lo, hi] => u16::from_le_bytes([*lo, *hi]),
        _ => 0,
    }
}

/// The committed lattice (the identity before the first record).
pub async fn lattice<S: StateRead + ?Sized>(state: &S) -> Result<Lattice, TxError> {
    match state.get_raw(RECORDS_LATTICE).await.map_err(|e| store::read_failed(RECORDS_LATTICE, e))? {
        None => Ok(Lattice::identity()),
        Some(b) => Lattice::from_bytes(&b).ok_or_else(|| internal(format!("corrupt {RECORDS_LATTICE} record ({} bytes)", b.len()))),
    }
}

/// Reads a record, charging gas for key and value bytes (as a verifiable read is charged).
pub async fn get<S: StateRead + ?Sized>(state: &S, gas: &GasMeter, key: &str) -> Result<Option<Vec<u8>>, TxError> {
    let v = state.nonverifiable_get_raw(key.as_bytes()).await.map_err(|e| store::read_failed(key, e))?;
    gas.read(key.len(), v.as_ref().map_or(0, Vec::len))?;
    Ok(v)
}

/// Writes a record and updates the commitment. `old` must be what `key` holds in `state`
/// (the bytes the caller just read with [`get`], or `None` for a key that holds nothing, such
/// as a flag under a fresh id): the commitment subtracts it. Everything is charged before
/// anything is written.
pub async fn put<S: StateWrite + ?Sized>(state: &mut S, gas: &GasMeter, key: String, old: Option<&[u8]>, new: Vec<u8>) -> Result<(), TxError> {
    gas.row(key.len(), new.len())?;
    gas.read(RECORDS_LATTICE.len(), 32)?;
    gas.singleton()?;
    let mut sum = lattice(&*state).await?;
    if let Some(old) = old {
        sum.mix_out(&Lattice::of(key.as_bytes(), old));
    }
    sum.mix_in(&Lattice::of(key.as_bytes(), &new));
    state.put_raw(RECORDS_LATTICE.to_string(), sum.to_bytes());
    state.nonverifiable_put_raw(key.into_bytes(), new);
    Ok(())
}

/// The lattice recomputed from every record held (unmetered: restores and tests).
pub async fn recompute<S: StateRead + ?Sized>(state: &S) -> Result<Lattice, TxError> {
    use futures::StreamExt;
    let mut sum = Lattice::identity();
    for prefix in RECORD_PREFIXES {
        let mut stream = std::pin::pin!(state.nonverifiable_prefix_raw(prefix.as_bytes()));
        while let Some(item) = stream.next().await {
            let (k, v) = item.map_err(|e| store::read_failed(prefix, e))?;
            sum.mix_in(&Lattice::of(&k, &v));
        }
    }
    Ok(sum)
}

/// After a state-sync restore: the records the snapshot carried sum to the committed lattice
/// (which the app hash proves), so none was added, dropped or altered.
pub async fn check<S: StateRead + ?Sized>(state: &S) -> Result<(), TxError> {
    let stored = lattice(state).await?;
    let held = recompute(state).await?;
    if stored != held {
        return Err(internal(format!("the flags and velocity windows do not match their commitment ({RECORDS_LATTICE} {stored:?}, records {held:?})")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_does_not_depend_on_order_and_an_update_is_a_swap() {
        let recs: Vec<(Vec<u8>, Vec<u8>)> = (0u8..20).map(|i| (vec![b'k', i], vec![i; usize::from(i)])).collect();
        let mut forward = Lattice::identity();
        for (k, v) in &recs {
            forward.mix_in(&Lattice::of(k, v));
        }
        let mut backward = Lattice::identity();
        for (k, v) in recs.iter().rev() {
            backward.mix_in(&Lattice::of(k, v));
        }
        assert_eq!(forward, backward);
        assert_ne!(forward, Lattice::identity());
        // Overwrite record 3: out with the old value, in with the new one, equals building
        // the set with the new value from scratch.
        let mut updated = forward.clone();
        updated.mix_out(&Lattice::of(&recs[3].0, &recs[3].1));
        updated.mix_in(&Lattice::of(&recs[3].0, b"new"));
        let mut fresh = Lattice::identity();
        for (i, (k, v)) in recs.iter().enumerate() {
            fresh.mix_in(&Lattice::of(k, if i == 3 { b"new".as_slice() } else { v }));
        }
        assert_eq!(updated, fresh);
        assert_ne!(updated, forward);
        // The stored form round-trips and refuses another length.
        assert_eq!(Lattice::from_bytes(&updated.to_bytes()), Some(updated.clone()));
        assert_eq!(Lattice::from_bytes(&[0; 10]), None);
    }

    #[test]
    fn key_and_value_are_framed() {
        // Moving a byte between key and value changes the element.
        assert_ne!(Lattice::of(b"ab", b"c"), Lattice::of(b"a", b"bc"));
        assert_ne!(Lattice::of(b"k", b""), Lattice::identity());
    }

    #[tokio::test]
    async fn put_keeps_the_commitment_equal_to_the_records_and_check_sees_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let storage = cnidarium::Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
        let gas = GasMeter::infinite();
        let mut delta = cnidarium::StateDelta::new(storage.latest_snapshot());
        let f1 = state_key::flag(1);
        let v = state_key::VELOCITY_PREFIX.to_string() + "aa";
        put(&mut delta, &gas, f1.clone(), None, b"emitted".to_vec()).await.unwrap();
        put(&mut delta, &gas, v.clone(), None, vec![1; 8]).await.unwrap();
        storage.commit(delta).await.unwrap();

        let mut delta = cnidarium::StateDelta::new(storage.latest_snapshot());
        let old = get(&delta, &gas, &f1).await.unwrap();
        assert_eq!(old.as_deref(), Some(b"emitted".as_slice()));
        put(&mut delta, &gas, f1.clone(), old.as_deref(), b"reviewed".to_vec()).await.unwrap();
        let old = get(&delta, &gas, &v).await.unwrap();
        put(&mut delta, &gas, v.clone(), old.as_deref(), vec![2; 16]).await.unwrap();
        put(&mut delta, &gas, state_key::flag(2), None, b"emitted".to_vec()).await.unwrap();
        check(&delta).await.unwrap();
        storage.commit(delta).await.unwrap();
        check(&storage.latest_snapshot()).await.unwrap();

        // A record altered behind the commitment's back is caught.
        let mut delta = cnidarium::StateDelta::new(storage.latest_snapshot());
        delta.nonverifiable_put_raw(f1.into_bytes(), b"closed".to_vec());
        assert!(check(&delta).await.is_err());
        // So is one dropped.
        let mut delta = cnidarium::StateDelta::new(storage.latest_snapshot());
        delta.nonverifiable_delete(v.into_bytes());
        assert!(check(&delta).await.is_err());
        storage.release().await;
    }
}

//! Column families and key encodings (the table in the crate's documentation).

use anyhow::Result;
use jmt::storage::NodeKey;
use jmt::KeyHash;

/// The tree's nodes.
pub(crate) const NODES: &str = "substore--jmt";
/// Every value written to the tree, by key hash and version.
pub(crate) const VALUES: &str = "substore--jmt-values";
/// Key → key hash, for the keys the tree holds (prefix scans).
pub(crate) const KEYS: &str = "substore--jmt-keys";
/// Key hash → key (the preimages a proof of absence names).
pub(crate) const KEYS_BY_HASH: &str = "substore--jmt-keys-by-keyhash";
/// Non-verifiable rows.
pub(crate) const NONVERIFIABLE: &str = "substore--nonverifiable";
/// Substore prefixes (cnidarium's; this store has none and refuses a database that has).
pub(crate) const CONFIG: &str = "config";

/// Every column family, in the order they are opened.
pub(crate) const COLUMNS: [&str; 6] = [NODES, KEYS, VALUES, KEYS_BY_HASH, NONVERIFIABLE, CONFIG];

/// The version of the empty store before genesis (its first commit is version 0).
pub(crate) const PRE_GENESIS: jmt::Version = u64::MAX;

/// The hash the tree places a key under.
pub(crate) fn key_hash(key: &[u8]) -> KeyHash {
    KeyHash::with::<sha2::Sha256>(key)
}

/// A node's key: its version big-endian (so a version's nodes sort after the last version's),
/// then the borsh `NodeKey`.
pub(crate) fn node_key(key: &NodeKey) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(8 + 8 + 4 + 32);
    out.extend_from_slice(&key.version().to_be_bytes());
    borsh::to_writer(&mut out, key)?;
    Ok(out)
}

/// The version a node's key was written at (its first eight bytes).
pub(crate) fn node_key_version(raw: &[u8]) -> Option<jmt::Version> {
    raw.get(..8).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes)
}

/// A value's key: the key hash, then the version big-endian.
pub(crate) fn value_key(hash: &KeyHash, version: jmt::Version) -> [u8; 40] {
    let mut out = [0u8; 40];
    out[..32].copy_from_slice(&hash.0);
    out[32..].copy_from_slice(&version.to_be_bytes());
    out
}

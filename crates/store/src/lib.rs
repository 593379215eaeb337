//! Lantau's versioned state store.
//!
//! The verifiable state is a Jellyfish Merkle tree (the `jmt` crate) whose root is the app hash;
//! beside it, non-verifiable rows (indexes, the audit log's rows, history). Both live in one
//! RocksDB database and change together, one version per block, in one atomic write. Modules read
//! and write through cnidarium's `StateRead`/`StateWrite` over a [`Snapshot`], in the block's
//! [`FlatDelta`] and each transaction's [`Layer`]s; this crate is what lies under them in place
//! of cnidarium's own `Storage` and `StateDelta`.
//!
//! **Why a store of our own.** cnidarium's `Storage` updated the tree one key at a time,
//! flattened, copied and sharded every block's changes before writing them (its substores and
//! subscribers, which Lantau does not use), and answered every read that missed the node's cache
//! by walking the tree on a blocking thread. Here a block's keys go into the tree in one sorted
//! batch, its changes are written from where they are, and a read of a value at a version is one
//! bounded seek (docs/performance.md, "The store").
//!
//! **The layout** is the one cnidarium 0.84 writes for a store without substores, so a node's
//! existing home opens as it is (no migration): the column families
//!
//! | column family | key | value |
//! | --- | --- | --- |
//! | `substore--jmt` | the node's version (big-endian) and its borsh `NodeKey` | the borsh `Node` |
//! | `substore--jmt-values` | the key's hash and the version (big-endian) | the borsh `Option<Vec<u8>>` written at that version (`None`: deleted) |
//! | `substore--jmt-keys` | the key | its hash |
//! | `substore--jmt-keys-by-keyhash` | the key's hash | the key |
//! | `substore--nonverifiable` | the row's key | the row |
//! | `config` | a substore's prefix (none here) | empty |
//!
//! Keys are hashed with SHA-256; version `u64::MAX` is the empty store before genesis, whose
//! first commit is version 0.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]

mod flat;
mod layer;
mod layout;
mod snapshot;
mod storage;

pub use flat::{ChangeSet, Changes, FlatDelta};
pub use jmt::RootHash;
pub use layer::{Checkpoint, Layer, LayerChanges};
pub use snapshot::Snapshot;
pub use storage::{StagedRows, StagedWriteBatch, Stopping, Storage, TempStorage, TreeUpdate};

#[cfg(test)]
mod tests;

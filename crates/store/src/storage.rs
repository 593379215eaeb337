//! Opening the store, staging a version's changes and committing them.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, ensure, Context, Result};
use cnidarium::{Cache, StateDelta};
use jmt::KeyHash;
use parking_lot::RwLock;
use rocksdb::{IteratorMode, Options, WriteBatch, DB};

use crate::layout::{self, PRE_GENESIS};
use crate::snapshot::Snapshot;
use crate::ChangeSet;

/// How many recent versions stay open for reads (the latest included).
const KEPT_VERSIONS: usize = 10;

/// The store: one RocksDB database and the snapshots of its recent versions. Cheap to clone;
/// clones share the database.
#[derive(Clone)]
pub struct Storage(Arc<Inner>);

struct Inner {
    db: Arc<DB>,
    /// The recent versions, oldest first; never empty.
    recent: RwLock<VecDeque<Snapshot>>,
    /// The bytes the last tree's part took in its write per key written (what the room a
    /// write leaves for its tree's part is sized on).
    tree_bytes_per_key: std::sync::atomic::AtomicUsize,
}

/// What an entry of a write batch takes beyond its key and value, at most: its tag, column
/// family and two lengths.
const BATCH_FRAMING: usize = 16;

/// Below this, a write is not given its room ahead: it grows as rows are added.
const ROOM_AHEAD_FROM: usize = 1 << 20;

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage").field("version", &self.latest_version()).finish_non_exhaustive()
    }
}

/// A version's changes, staged: the tree's new root and the write that makes the version.
pub struct StagedWriteBatch {
    batch: WriteBatch,
    version: jmt::Version,
    root: jmt::RootHash,
}

impl StagedWriteBatch {
    /// How many puts and deletes the batch holds.
    pub fn entries(&self) -> usize {
        self.batch.len()
    }

    /// The batch's size in bytes (its keys, values and framing).
    pub fn bytes(&self) -> usize {
        self.batch.size_in_bytes()
    }

    /// The version the batch writes.
    pub fn version(&self) -> jmt::Version {
        self.version
    }

    /// The tree's root hash once the batch is written (the app hash).
    pub fn root_hash(&self) -> &jmt::RootHash {
        &self.root
    }
}

impl std::fmt::Debug for StagedWriteBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedWriteBatch").field("version", &self.version).field("root", &hex(&self.root.0)).finish_non_exhaustive()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The database options: those cnidarium opened with, so a home written by either reads the
/// same.
fn options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts
}

/// The latest version written (`PRE_GENESIS` for an empty store): the version of the last
/// tree node, every version writes at least its root.
fn latest_version(db: &DB) -> Result<jmt::Version> {
    let cf = db.cf_handle(layout::NODES).context("the store has no tree column family")?;
    let mut it = db.raw_iterator_cf(cf);
    it.seek_to_last();
    if !it.valid() {
        it.status()?;
        return Ok(PRE_GENESIS);
    }
    it.key().and_then(layout::node_key_version).context("a tree node key shorter than its version")
}

fn open(path: &Path) -> Result<DB> {
    // A new store has no column families to list yet.
    let existing = DB::list_cf(&options(), path).unwrap_or_default();
    let unknown: Vec<&str> = existing.iter().map(String::as_str).filter(|c| *c != "default" && !layout::COLUMNS.contains(c)).collect();
    if !unknown.is_empty() {
        bail!("the store at {} has column families this node does not use ({}): substores", path.display(), unknown.join(", "));
    }
    let db = DB::open_cf(&options(), path, layout::COLUMNS).with_context(|| format!("opening the store at {}", path.display()))?;
    let config = db.cf_handle(layout::CONFIG).context("the store has no config column family")?;
    if let Some(row) = db.iterator_cf(config, IteratorMode::Start).next() {
        let (prefix, _) = row?;
        bail!("the store at {} has a substore (prefix {:?}), which this node does not use", path.display(), String::from_utf8_lossy(&prefix));
    }
    Ok(db)
}

impl Storage {
    /// Opens the store at `path`, creating it when there is none.
    pub async fn load(path: PathBuf) -> Result<Self> {
        blocking(move || Self::open(&path)).await
    }

    /// Opens the store at `path` on this thread.
    pub fn open(path: &Path) -> Result<Self> {
        let db = Arc::new(open(path)?);
        let version = latest_version(&db)?;
        let latest = Snapshot::new(db.clone(), version);
        Ok(Self(Arc::new(Inner { db, recent: RwLock::new(VecDeque::from([latest])), tree_bytes_per_key: Default::default() })))
    }

    /// The latest version (`u64::MAX` before genesis).
    pub fn latest_version(&self) -> jmt::Version {
        self.latest_snapshot().version()
    }

    /// The latest version's snapshot.
    pub fn latest_snapshot(&self) -> Snapshot {
        let recent = self.0.recent.read();
        // Never empty: opened with one, and a commit pushes before it pops.
        recent.back().cloned().unwrap_or_else(|| Snapshot::new(self.0.db.clone(), PRE_GENESIS))
    }

    /// The snapshot of a recent version (the last ten are kept).
    pub fn snapshot(&self, version: jmt::Version) -> Option<Snapshot> {
        self.0.recent.read().iter().find(|s| s.version() == version).cloned()
    }

    /// Stages a delta over the latest snapshot as the next version.
    pub async fn prepare_commit(&self, delta: StateDelta<Snapshot>) -> Result<StagedWriteBatch> {
        let (base, changes) = delta.flatten();
        self.prepare_changes(base.version(), changes, Vec::new()).await
    }

    /// Stages changes made over version `base` (the latest) as the next version, and with them
    /// `rows`, non-verifiable rows written after the changes' own (`None`: deleted). The
    /// changes may come from a delta over any reader of version `base` (the node's read cache):
    /// nothing is copied onto a delta of the plain snapshot first. The tree's update runs on a
    /// blocking thread.
    pub async fn prepare_changes(&self, base: jmt::Version, changes: Cache, rows: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<StagedWriteBatch> {
        let latest = self.latest_snapshot();
        ensure!(latest.version() == base, "changes made over version {base} cannot be committed after version {}", latest.version());
        blocking(move || stage(&latest, &changes, &rows)).await
    }

    /// The tree's part of the version after `base` (the latest), computed on the caller's
    /// thread apart from any write: the new root, the key indexes, and the tree's new nodes
    /// and values, encoded. [`Storage::stage_rows`] meanwhile starts the write with the
    /// version's non-verifiable rows; [`Storage::staged`] then adds this to it.
    pub fn update_tree<'a>(&self, base: jmt::Version, changes: &'a impl ChangeSet) -> Result<TreeUpdate<'a>> {
        let latest = self.latest_snapshot();
        ensure!(latest.version() == base, "changes made over version {base} cannot be committed after version {}", latest.version());
        update_tree(&latest, changes)
    }

    /// Starts the write of the version after `base` (the latest) with non-verifiable rows
    /// (`None`: deleted), in the order given: outside the tree, in the same atomic write as
    /// the tree's part that [`Storage::staged`] adds after them. `tree_keys`, the verifiable
    /// keys the version writes, sizes the room the write keeps for that part.
    ///
    /// A large write is given its room at once, on this thread: the rows' bytes and the tree's
    /// part as the last one took per key. Grown row by row, RocksDB's batch (a C++ string)
    /// would copy itself whole at each doubling, the last of them when the tree's part joins.
    pub fn stage_rows<'a, I>(&self, base: jmt::Version, tree_keys: usize, rows: I) -> Result<StagedRows>
    where
        I: IntoIterator<Item = (&'a [u8], Option<&'a [u8]>)>,
        I::IntoIter: Clone,
    {
        let latest = self.latest_snapshot();
        ensure!(latest.version() == base, "rows written over version {base} cannot be committed after version {}", latest.version());
        let rows = rows.into_iter();
        let row_bytes: usize = rows.clone().map(|(k, v)| k.len().saturating_add(v.map_or(0, <[u8]>::len)).saturating_add(BATCH_FRAMING)).sum();
        let per_key = self.0.tree_bytes_per_key.load(std::sync::atomic::Ordering::Relaxed);
        // A quarter more than the last tree's part took per key.
        let room = row_bytes.saturating_add(tree_keys.saturating_mul(per_key.saturating_add(per_key / 4)));
        let mut batch = if room >= ROOM_AHEAD_FROM {
            // A batch made from that many bytes keeps its buffer once cleared.
            let mut b = WriteBatch::from_data(&vec![0; room]);
            b.clear();
            b
        } else {
            WriteBatch::default()
        };
        stage_rows(&latest, &mut batch, rows)?;
        Ok(StagedRows { batch, version: base.wrapping_add(1) })
    }

    /// The write that makes a version: its rows, then the tree's part (both for the same
    /// version).
    pub fn staged(&self, rows: StagedRows, tree: TreeUpdate<'_>) -> Result<StagedWriteBatch> {
        ensure!(rows.version == tree.version, "rows staged for version {} cannot join the tree of version {}", rows.version, tree.version);
        let before = rows.batch.size_in_bytes();
        let staged = join(&self.latest_snapshot(), rows, &tree)?;
        if let Some(per_key) = staged.bytes().saturating_sub(before).checked_div(tree.keys.len()) {
            self.0.tree_bytes_per_key.store(per_key, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(staged)
    }

    /// Writes a staged version: it becomes the latest, and the oldest kept version closes.
    pub fn commit_batch(&self, staged: StagedWriteBatch) -> Result<jmt::RootHash> {
        let expected = self.latest_version().wrapping_add(1);
        ensure!(staged.version == expected, "a batch for version {} cannot be written as version {expected}", staged.version);
        self.0.db.write(staged.batch).context("writing the block's changes to the store")?;
        let snapshot = Snapshot::new(self.0.db.clone(), staged.version);
        let mut recent = self.0.recent.write();
        recent.push_back(snapshot);
        while recent.len() > KEPT_VERSIONS {
            recent.pop_front();
        }
        Ok(staged.root)
    }

    /// Stages and writes a delta over the latest snapshot.
    pub async fn commit(&self, delta: StateDelta<Snapshot>) -> Result<jmt::RootHash> {
        let staged = self.prepare_commit(delta).await?;
        self.commit_batch(staged)
    }

    /// Writes every column family's memtable to a file (tests: reads then cross the files as
    /// well as the memtables).
    #[cfg(test)]
    pub(crate) fn flush(&self) -> Result<()> {
        for name in layout::COLUMNS {
            let cf = self.0.db.cf_handle(name).context("a column family the store opened")?;
            self.0.db.flush_cf(cf)?;
        }
        Ok(())
    }

    /// Closes the store (every clone of it and every snapshot must be gone for the database to
    /// close).
    pub async fn release(self) {
        drop(self);
    }
}

/// Runs `work` on a blocking thread. Work the runtime cancelled (it was stopping before the
/// work began) is [`Stopping`], not a failure of the store; a panic in it is an error.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done,
        Err(e) if e.is_cancelled() => Err(Stopping.into()),
        Err(e) => Err(anyhow::anyhow!("a store task failed: {e}")),
    }
}

/// The store's work was cancelled because the runtime it runs on is stopping (the process is
/// shutting down): nothing was read or written, and nothing is wrong with the store. Callers
/// tell it from a store failure with `anyhow::Error::downcast_ref`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopping;

impl std::fmt::Display for Stopping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the store's work was cancelled: the runtime is stopping")
    }
}

impl std::error::Error for Stopping {}

/// The write that makes version `base + 1` from `changes` over `base`: the changes'
/// non-verifiable rows and `extra`, then the tree's part ([`update_tree`]).
fn stage(base: &Snapshot, changes: &impl ChangeSet, extra: &[(Vec<u8>, Option<Vec<u8>>)]) -> Result<StagedWriteBatch> {
    let tree = update_tree(base, changes)?;
    let mut rows = StagedRows { batch: WriteBatch::default(), version: tree.version };
    let own = changes.nonverifiable_changes().iter().chain(extra.iter().map(|(k, v)| (k, v)));
    stage_rows(base, &mut rows.batch, own.map(|(k, v)| (k.as_slice(), v.as_deref())))?;
    join(base, rows, &tree)
}

/// The write that makes a version: its rows, then its tree's part added to them.
fn join(base: &Snapshot, rows: StagedRows, tree: &TreeUpdate<'_>) -> Result<StagedWriteBatch> {
    let StagedRows { mut batch, version } = rows;
    add_tree(base, &mut batch, tree)?;
    Ok(StagedWriteBatch { batch, version, root: tree.root })
}

/// A version's non-verifiable rows, staged ahead of its tree's part ([`Storage::stage_rows`]).
pub struct StagedRows {
    batch: WriteBatch,
    version: jmt::Version,
}

/// The tree's part of a version ([`Storage::update_tree`]): its root, and the rows that hold
/// it, encoded. The keys are borrowed from the changes.
pub struct TreeUpdate<'a> {
    version: jmt::Version,
    root: jmt::RootHash,
    /// Each written key (in key order), its hash, and whether it is put (or deleted).
    keys: Vec<(&'a str, KeyHash, bool)>,
    /// The tree's new nodes and values: each row's key and value in its column family.
    nodes: Vec<(Vec<u8>, Vec<u8>)>,
    values: Vec<([u8; 40], Vec<u8>)>,
}

impl TreeUpdate<'_> {
    /// The version's root hash (the app hash).
    pub fn root_hash(&self) -> &jmt::RootHash {
        &self.root
    }
}

/// The tree's update for version `base + 1` from `changes` over `base`: the new root, the key
/// indexes and the new nodes and values, encoded, with no write yet.
///
/// The tree takes the version's keys in one sorted batch when the version deletes none (the
/// batch insertion has no deletions), and key by key when it does; both give the same tree.
fn update_tree<'a>(base: &Snapshot, changes: &'a impl ChangeSet) -> Result<TreeUpdate<'a>> {
    let version = base.version().wrapping_add(1);
    let verifiable = changes.unwritten_changes();
    let mut set: Vec<(KeyHash, Option<Vec<u8>>)> = Vec::with_capacity(verifiable.len());
    let mut keys: Vec<(&str, KeyHash, bool)> = Vec::with_capacity(verifiable.len());
    for (key, value) in verifiable {
        let hash = layout::key_hash(key.as_bytes());
        keys.push((key.as_str(), hash, value.is_some()));
        set.push((hash, value.clone()));
    }
    let jmt = jmt::Sha256Jmt::new(base.inner());
    let (root, update) = if set.is_empty() || set.iter().any(|(_, v)| v.is_none()) {
        jmt.put_value_set(set, version)?
    } else {
        let puts = set.into_iter().filter_map(|(h, v)| v.map(|v| (h, v))).collect();
        let (mut roots, update) = jmt.batch_put_value_sets(vec![puts], None, version)?;
        (roots.pop().context("the tree returned no root")?, update)
    };
    let mut nodes = Vec::with_capacity(update.node_batch.nodes().len());
    for (key, node) in update.node_batch.nodes() {
        nodes.push((layout::node_key(key)?, borsh::to_vec(node)?));
    }
    let mut values = Vec::with_capacity(update.node_batch.values().len());
    for ((v, hash), value) in update.node_batch.values() {
        values.push((layout::value_key(hash, *v), borsh::to_vec(value)?));
    }
    Ok(TreeUpdate { version, root, keys, nodes, values })
}

/// Adds a version's tree part to its write: the key indexes, the new nodes and values.
fn add_tree(base: &Snapshot, batch: &mut WriteBatch, tree: &TreeUpdate<'_>) -> Result<()> {
    let tree_db = base.inner();
    let cf = |name| tree_db.cf(name);
    let (nodes, values, keys, by_hash) = (cf(layout::NODES)?, cf(layout::VALUES)?, cf(layout::KEYS)?, cf(layout::KEYS_BY_HASH)?);
    for (key, hash, put) in &tree.keys {
        if *put {
            batch.put_cf(keys, key, hash.0);
        } else {
            batch.delete_cf(keys, key);
        }
    }
    // Each column family's rows go in key order: RocksDB inserts them into its memtable faster
    // so (an insert starts from where the last one ended).
    let mut hashed: Vec<&(&str, KeyHash, bool)> = tree.keys.iter().collect();
    hashed.sort_unstable_by_key(|(_, h, _)| h.0);
    for (key, hash, put) in hashed {
        if *put {
            batch.put_cf(by_hash, hash.0, key);
        } else {
            batch.delete_cf(by_hash, hash.0);
        }
    }
    for (key, node) in &tree.nodes {
        batch.put_cf(nodes, key, node);
    }
    for (key, value) in &tree.values {
        batch.put_cf(values, key, value);
    }
    Ok(())
}

/// Adds non-verifiable rows (`None`: deleted) to a write, after what it holds.
fn stage_rows<'a>(base: &Snapshot, batch: &mut WriteBatch, rows: impl Iterator<Item = (&'a [u8], Option<&'a [u8]>)>) -> Result<()> {
    let cf = base.inner().cf(layout::NONVERIFIABLE)?;
    for (key, value) in rows {
        match value {
            Some(v) => batch.put_cf(cf, key, v),
            None => batch.delete_cf(cf, key),
        }
    }
    Ok(())
}

/// A store in a temporary directory, removed when dropped (tests and benchmarks).
pub struct TempStorage {
    storage: Storage,
    _dir: tempfile::TempDir,
}

impl TempStorage {
    /// Opens a new, empty store in a temporary directory.
    pub async fn new() -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let storage = Storage::load(dir.path().to_path_buf()).await?;
        Ok(Self { storage, _dir: dir })
    }
}

impl std::ops::Deref for TempStorage {
    type Target = Storage;

    fn deref(&self) -> &Storage {
        &self.storage
    }
}

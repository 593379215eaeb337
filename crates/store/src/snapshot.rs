//! A committed version of the state, readable from any thread.

use std::any::Any;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use cnidarium::StateRead;
use futures::future::{ready, Ready};
use jmt::storage::{HasPreimage, LeafNode, Node, NodeKey, TreeReader};
use jmt::KeyHash;
use rocksdb::{ColumnFamily, ReadOptions, DB};
use tokio_stream::wrappers::ReceiverStream;

use crate::layout::{self, PRE_GENESIS};
use crate::storage::Stopping;

type DbSnapshot<'a> = rocksdb::Snapshot<'a>;

self_cell::self_cell!(
    /// A RocksDB snapshot together with the handle of the database it reads.
    struct Pinned {
        owner: Arc<DB>,
        #[covariant]
        dependent: DbSnapshot,
    }
);

/// How many items a scan reads ahead of its consumer.
const SCAN_AHEAD: usize = 64;

/// The state at one committed version: a RocksDB snapshot taken right after that version's
/// write, and the version. Cheap to clone; reads never see a later commit.
///
/// Point reads (`get_raw`, `nonverifiable_get_raw`) run on the calling thread: a value at a
/// version is one bounded seek in the values column, not a walk down the tree, and a hand-off to
/// a blocking thread cost more than the read. Scans run on a blocking thread and stream back.
#[derive(Clone)]
pub struct Snapshot(Arc<Inner>);

pub(crate) struct Inner {
    pinned: Pinned,
    version: jmt::Version,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("version", &self.0.version).finish_non_exhaustive()
    }
}

impl Snapshot {
    /// A snapshot of the database as it is now, read as `version`.
    pub(crate) fn new(db: Arc<DB>, version: jmt::Version) -> Self {
        Self(Arc::new(Inner { pinned: Pinned::new(db, |db| db.snapshot()), version }))
    }

    /// The version (the height of the block whose state this is; `u64::MAX` before genesis).
    pub fn version(&self) -> jmt::Version {
        self.0.version
    }

    /// The tree's root hash at this version (all zeros before genesis).
    pub async fn root_hash(&self) -> Result<jmt::RootHash> {
        self.0.root_hash()
    }

    /// A key's value and an ICS-23 proof of it (of its absence when `None`) against this
    /// version's root hash.
    pub async fn get_with_proof(&self, key: Vec<u8>) -> Result<(Option<Vec<u8>>, ics23::CommitmentProof)> {
        if key.is_empty() {
            bail!("empty keys are not allowed");
        }
        if self.0.version == PRE_GENESIS {
            bail!("the store holds no version yet");
        }
        jmt::Sha256Jmt::new(&*self.0).get_with_ics23_proof(key, self.0.version)
    }

    pub(crate) fn inner(&self) -> &Inner {
        &self.0
    }
}

impl Inner {
    fn db(&self) -> &DB {
        self.pinned.borrow_owner()
    }

    fn snap(&self) -> &DbSnapshot<'_> {
        self.pinned.borrow_dependent()
    }

    pub(crate) fn cf(&self, name: &str) -> Result<&ColumnFamily> {
        self.db().cf_handle(name).ok_or_else(|| anyhow!("the store has no column family {name}"))
    }

    pub(crate) fn root_hash(&self) -> Result<jmt::RootHash> {
        if self.version == PRE_GENESIS {
            return Ok(jmt::RootHash([0; 32]));
        }
        Ok(jmt::Sha256Jmt::new(self).get_root_hash_option(self.version)?.unwrap_or(jmt::RootHash([0; 32])))
    }

    /// The value of the key with this hash at `version`: the last one written at or before it.
    fn value_at(&self, hash: KeyHash, version: jmt::Version) -> Result<Option<Vec<u8>>> {
        // Nothing is written before genesis (`u64::MAX`, which has no exclusive bound above it).
        let Some(end) = version.checked_add(1) else { return Ok(None) };
        let mut opts = ReadOptions::default();
        opts.set_iterate_lower_bound(layout::value_key(&hash, 0).to_vec());
        opts.set_iterate_upper_bound(layout::value_key(&hash, end).to_vec());
        let mut it = self.snap().raw_iterator_cf_opt(self.cf(layout::VALUES)?, opts);
        it.seek_to_last();
        if !it.valid() {
            it.status()?;
            return Ok(None);
        }
        let raw = it.value().ok_or_else(|| anyhow!("a value row without a value"))?;
        borsh::from_slice::<Option<Vec<u8>>>(raw).context("a value row that does not decode")
    }

    /// A verifiable key's value at this version.
    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.value_at(layout::key_hash(key), self.version)
    }

    /// A non-verifiable row.
    fn get_row(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.snap().get_cf(self.cf(layout::NONVERIFIABLE)?, key)?)
    }
}

impl TreeReader for Inner {
    fn get_node_option(&self, node_key: &NodeKey) -> Result<Option<Node>> {
        let raw = self.snap().get_pinned_cf(self.cf(layout::NODES)?, layout::node_key(node_key)?)?;
        raw.map(|b| borsh::from_slice::<Node>(&b).context("a tree node that does not decode")).transpose()
    }

    fn get_value_option(&self, max_version: jmt::Version, key_hash: KeyHash) -> Result<Option<jmt::OwnedValue>> {
        if max_version == PRE_GENESIS {
            // Nothing is written before genesis; a value written "at" u64::MAX would be the only
            // candidate and this store never writes one.
            let raw = self.snap().get_pinned_cf(self.cf(layout::VALUES)?, layout::value_key(&key_hash, PRE_GENESIS))?;
            return raw.map(|b| borsh::from_slice::<Option<Vec<u8>>>(&b).context("a value row that does not decode")).transpose().map(Option::flatten);
        }
        self.value_at(key_hash, max_version)
    }

    fn get_rightmost_leaf(&self) -> Result<Option<(NodeKey, LeafNode)>> {
        let mut it = self.snap().raw_iterator_cf(self.cf(layout::NODES)?);
        it.seek_to_last();
        if !it.valid() {
            it.status()?;
            return Ok(None);
        }
        let (Some(k), Some(v)) = (it.key(), it.value()) else { return Ok(None) };
        let key: NodeKey = borsh::from_slice(k.get(8..).unwrap_or_default()).context("a tree node key that does not decode")?;
        match borsh::from_slice::<Node>(v).context("a tree node that does not decode")? {
            Node::Leaf(leaf) => Ok(Some((key, leaf))),
            _ => Ok(None),
        }
    }
}

impl HasPreimage for Inner {
    fn preimage(&self, key_hash: KeyHash) -> Result<Option<Vec<u8>>> {
        Ok(self.snap().get_cf(self.cf(layout::KEYS_BY_HASH)?, key_hash.0)?)
    }
}

/// Runs `scan` on a blocking thread, streaming what it sends. A scan the runtime cancelled
/// before it began (the runtime is stopping) ends its stream with [`Stopping`], never as if
/// there were no rows.
fn stream<T: Send + 'static>(scan: impl FnOnce(&tokio::sync::mpsc::Sender<Result<T>>) -> Result<()> + Send + 'static) -> ReceiverStream<Result<T>> {
    /// Sends [`Stopping`] when dropped before the scan took it.
    struct Unstarted<T>(Option<tokio::sync::mpsc::Sender<Result<T>>>);
    impl<T> Drop for Unstarted<T> {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                // The channel is empty (nothing was sent), so this cannot find it full.
                let _ = tx.try_send(Err(Stopping.into()));
            }
        }
    }
    let (tx, rx) = tokio::sync::mpsc::channel(SCAN_AHEAD);
    let mut unstarted = Unstarted(Some(tx));
    tokio::task::spawn_blocking(move || {
        let Some(tx) = unstarted.0.take() else { return };
        if let Err(e) = scan(&tx) {
            // The consumer may be gone already; then nobody needs the error.
            let _ = tx.blocking_send(Err(e));
        }
    });
    ReceiverStream::new(rx)
}

/// The exclusive upper bound of the keys that start with `prefix` (`None`: no bound, the prefix
/// is empty or all 0xff).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if let Some(next) = last.checked_add(1) {
            end.push(next);
            return Some(end);
        }
    }
    None
}

/// Streams `map(snapshot, key, value)` of the rows of column family `cf` from `lower` up to
/// `upper` (exclusive; `None`: no bound), read on a blocking thread. A row that does not map
/// ends the stream with its error.
fn scan<T: Send + 'static>(
    this: &Arc<Inner>,
    cf: &'static str,
    lower: &[u8],
    upper: Option<Vec<u8>>,
    map: impl Fn(&Inner, &[u8], &[u8]) -> Result<T> + Send + 'static,
) -> ReceiverStream<Result<T>> {
    let this = this.clone();
    let lower = lower.to_vec();
    stream(move |tx| {
        let mut opts = ReadOptions::default();
        opts.set_iterate_lower_bound(lower);
        if let Some(u) = upper {
            opts.set_iterate_upper_bound(u);
        }
        let mut it = this.snap().raw_iterator_cf_opt(this.cf(cf)?, opts);
        it.seek_to_first();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            // The consumer hung up: nobody reads further.
            if tx.blocking_send(Ok(map(&this, k, v)?)).is_err() {
                return Ok(());
            }
            it.next();
        }
        Ok(it.status()?)
    })
}

impl StateRead for Snapshot {
    type GetRawFut = Ready<Result<Option<Vec<u8>>>>;
    type PrefixRawStream = ReceiverStream<Result<(String, Vec<u8>)>>;
    type PrefixKeysStream = ReceiverStream<Result<String>>;
    type NonconsensusPrefixRawStream = ReceiverStream<Result<(Vec<u8>, Vec<u8>)>>;
    type NonconsensusRangeRawStream = ReceiverStream<Result<(Vec<u8>, Vec<u8>)>>;

    fn get_raw(&self, key: &str) -> Self::GetRawFut {
        ready(self.0.get(key.as_bytes()))
    }

    fn nonverifiable_get_raw(&self, key: &[u8]) -> Self::GetRawFut {
        ready(self.0.get_row(key))
    }

    fn object_get<T: Any + Send + Sync + Clone>(&self, _key: &'static str) -> Option<T> {
        None
    }

    fn object_type(&self, _key: &'static str) -> Option<std::any::TypeId> {
        None
    }

    fn prefix_raw(&self, prefix: &str) -> Self::PrefixRawStream {
        scan(&self.0, layout::KEYS, prefix.as_bytes(), prefix_end(prefix.as_bytes()), |this, key, hash| {
            let hash: [u8; 32] = hash.try_into().map_err(|_| anyhow!("a key index row without a 32-byte hash"))?;
            let name = std::str::from_utf8(key).context("a verifiable key that is not UTF-8")?.to_string();
            let value = this.value_at(KeyHash(hash), this.version)?.ok_or_else(|| anyhow!("{name} is indexed but has no value"))?;
            Ok((name, value))
        })
    }

    fn prefix_keys(&self, prefix: &str) -> Self::PrefixKeysStream {
        scan(&self.0, layout::KEYS, prefix.as_bytes(), prefix_end(prefix.as_bytes()), |_, key, _| {
            Ok(std::str::from_utf8(key).context("a verifiable key that is not UTF-8")?.to_string())
        })
    }

    fn nonverifiable_prefix_raw(&self, prefix: &[u8]) -> Self::NonconsensusPrefixRawStream {
        scan(&self.0, layout::NONVERIFIABLE, prefix, prefix_end(prefix), |_, k, v| Ok((k.to_vec(), v.to_vec())))
    }

    /// Rows from `prefix ‖ start` up to `prefix ‖ end` (exclusive), or to the end of the
    /// prefix's rows when `end` is unbounded. As cnidarium defines it: an inclusive end is an
    /// error, and a start bound is taken as inclusive whatever its kind.
    fn nonverifiable_range_raw(&self, prefix: Option<&[u8]>, range: impl RangeBounds<Vec<u8>>) -> Result<Self::NonconsensusRangeRawStream> {
        let start = match range.start_bound() {
            Bound::Included(v) | Bound::Excluded(v) => v.clone(),
            Bound::Unbounded => Vec::new(),
        };
        let end = match range.end_bound() {
            Bound::Included(_) => bail!("included end bound not supported"),
            Bound::Excluded(v) => Some(v.clone()),
            Bound::Unbounded => None,
        };
        if let Some(e) = &end {
            if start > *e {
                bail!("lower bound is greater than upper bound");
            }
        }
        let prefix = prefix.unwrap_or_default();
        let lower = [prefix, &start].concat();
        let upper = end.filter(|e| !e.is_empty()).map(|e| [prefix, &e].concat());
        Ok(scan(&self.0, layout::NONVERIFIABLE, &lower, upper.or_else(|| prefix_end(prefix)), |_, k, v| Ok((k.to_vec(), v.to_vec()))))
    }
}

//! A read-through cache of committed values, in front of the store's snapshots.
//!
//! A read of a [`Snapshot`] is a RocksDB seek in the values' column (and its decoding) on the
//! caller's thread; the hot keys of a transfer are read by every admission and every block. The
//! cache holds the
//! values of recently read (and recently written) verifiable keys *at one version*, the latest
//! committed one:
//!
//! - a read through a [`CachedSnapshot`] of version `v` hits only when the cache is at `v`, and
//!   a value read from the snapshot fills the cache only when the cache is still at `v`;
//! - at each commit the cache rolls forward from `v` to `v + 1` by applying that commit's exact
//!   write set to the keys it holds (every verifiable write goes through the block's
//!   `StateDelta`), so every entry stays equal to what the new snapshot holds; keys the commit
//!   created are not taken in (most are records no transaction reads again, such as flags, and
//!   they would crowd out the accounts); when the versions do not follow (InitChain, a block
//!   finalized twice, a restart), the cache starts over empty at the new version;
//! - reads of the snapshot just before (`v` after rolling to `v + 1`: the check overlay that
//!   admissions use until the mempool is rechecked) hit too, for keys that commit did not
//!   write: their value is the same in both versions.
//!
//! So a hit returns exactly the bytes the snapshot would return: gas (charged on value length)
//! and results do not change; the cache only changes speed. It is bounded: past
//! [`MAX_ENTRIES`] it stops taking new keys until the next commit, which clears it if still full.
//! Verifiable point reads are cached, and non-verifiable point reads under the prefixes
//! registered with [`ReadCache::caching_nonverifiable`] (records every transaction of a kind
//! reads, such as the velocity windows the gates read at admission and execution), which roll
//! forward in the same way with the commit's non-verifiable writes under those prefixes
//! ([`ReadCache::nonverifiable_writes`]). They share the map, under the key with a NUL byte
//! in front (no verifiable key starts with one; a non-verifiable key that is not UTF-8 is not
//! cached). The verifiable prefix scans of the few prefixes registered with
//! [`ReadCache::memoizing_scans_of`] (small sets that every transaction of a kind scans, such
//! as the ERC-20 token pairs every Ethereum transaction looks up) are kept whole, per version
//! (a snapshot never changes). Other prefix scans and non-verifiable reads go to the snapshot.
//!
//! Point reads under the prefixes registered with [`ReadCache::answering_from_scans`] (few keys,
//! mostly read where they are absent: the frozen addresses, read for both parties of every
//! stablecoin movement) are answered from one scan of the prefix per version, kept like the
//! memoized scans: present keys with their values, every other key absent. Without it, the
//! first read of each address in a block was a read of the store (a blocking-thread hand-off
//! each) on the path every transfer runs in turn. A prefix that holds more keys than the bound
//! given there is read key by key at that version, as any other.

#![allow(clippy::disallowed_types)] // a HashMap and a HashSet here are only looked up, never iterated.

/// A hash map with foldhash's per-process random seed: every admission and execution looks
/// keys up here, and SipHash over ~60-byte state keys was a visible share of that.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
use std::future::Future;
use std::ops::RangeBounds;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use cnidarium::StateRead;
use lantau_store::Snapshot;
use parking_lot::RwLock;

/// Most keys the cache holds (accounts and balances are ~100 bytes each).
pub const MAX_ENTRIES: usize = 250_000;

/// Most keys a sparse prefix holds for its scan to answer point reads
/// ([`ReadCache::answering_from_scans`]): one scan per block then costs about what a few dozen
/// first reads of keys cost.
pub const MAX_SPARSE_SCAN: usize = 1_024;

type Value = Option<Vec<u8>>;

/// A kept prefix scan: its entries in key order.
type Scan = Arc<Vec<(String, Vec<u8>)>>;

/// The kept scans of one version by prefix (`None`: a sparse prefix with too many keys).
type KeptScans = std::collections::BTreeMap<String, Option<Scan>>;

/// The committed values of recently used keys at one version.
#[derive(Debug)]
pub struct ReadCache {
    inner: RwLock<Inner>,
    max_entries: usize,
    /// Prefixes whose scans are kept whole.
    memo_prefixes: Vec<String>,
    /// Kept scans: the version they belong to, and each prefix's entries in key order (`None`:
    /// a sparse prefix that held more keys than [`ReadCache::max_sparse`] at that version).
    scans: parking_lot::Mutex<(Option<u64>, KeptScans)>,
    /// Prefixes whose point reads are answered from a kept scan.
    sparse_prefixes: Vec<String>,
    /// Most keys a sparse prefix's kept scan holds.
    max_sparse: usize,
    /// Non-verifiable prefixes whose point reads are cached.
    nv_prefixes: Vec<Vec<u8>>,
}

#[derive(Debug)]
struct Inner {
    /// The snapshot version the entries belong to (None: holds nothing yet).
    version: Option<u64>,
    map: HashMap<String, Value>,
    /// The version before `version` and the keys the commit between them wrote (entries
    /// for other keys hold for that version too).
    prev: Option<(u64, HashSet<String>)>,
}

impl ReadCache {
    /// An empty cache holding at most `max_entries` keys.
    pub fn new(max_entries: usize) -> Self {
        Self {
            inner: RwLock::new(Inner { version: None, map: HashMap::default(), prev: None }),
            max_entries,
            memo_prefixes: Vec::new(),
            scans: parking_lot::Mutex::new((None, Default::default())),
            sparse_prefixes: Vec::new(),
            max_sparse: 0,
            nv_prefixes: Vec::new(),
        }
    }

    /// Caches point reads of these non-verifiable prefixes too. The commit must then pass its
    /// non-verifiable writes under them to [`ReadCache::advance`] ([`ReadCache::nonverifiable_writes`]).
    pub fn caching_nonverifiable(mut self, prefixes: &[&str]) -> Self {
        self.nv_prefixes = prefixes.iter().map(|p| p.as_bytes().to_vec()).collect();
        self
    }

    /// The cache's name for non-verifiable `key`, when its reads are cached.
    fn nv_key(&self, key: &[u8]) -> Option<String> {
        if !self.nv_prefixes.iter().any(|p| key.starts_with(p)) {
            return None;
        }
        std::str::from_utf8(key).ok().map(|k| format!("\0{k}"))
    }

    /// The non-verifiable writes of a commit that [`ReadCache::advance`] must see, under the
    /// cache's names for them (those under the prefixes of [`ReadCache::caching_nonverifiable`]).
    pub fn nonverifiable_writes<'a>(&self, writes: impl IntoIterator<Item = (&'a Vec<u8>, &'a Value)>) -> Vec<(String, Value)> {
        if self.nv_prefixes.is_empty() {
            return Vec::new();
        }
        writes.into_iter().filter_map(|(k, v)| self.nv_key(k).map(|n| (n, v.clone()))).collect()
    }

    /// Keeps whole scans of these verifiable prefixes, per version.
    pub fn memoizing_scans_of(mut self, prefixes: &[&str]) -> Self {
        self.memo_prefixes = prefixes.iter().map(|p| p.to_string()).collect();
        self
    }

    /// Answers point reads under these verifiable prefixes from one scan of the prefix per
    /// version, while the prefix holds at most `max_keys` keys.
    pub fn answering_from_scans(mut self, prefixes: &[&str], max_keys: usize) -> Self {
        self.sparse_prefixes = prefixes.iter().map(|p| p.to_string()).collect();
        self.max_sparse = max_keys;
        self
    }

    fn scan(&self, version: u64, prefix: &str) -> Option<Scan> {
        let g = self.scans.lock();
        if g.0 != Some(version) {
            return None;
        }
        g.1.get(prefix).cloned().flatten()
    }

    /// `entries` (`None`: too many to keep) is what `prefix` holds at `version`.
    fn keep_scan(&self, version: u64, prefix: String, entries: Option<Vec<(String, Vec<u8>)>>) {
        let mut g = self.scans.lock();
        match g.0 {
            Some(v) if later(v, version) => return,
            Some(v) if v == version => {}
            _ => *g = (Some(version), Default::default()),
        }
        g.1.insert(prefix, entries.map(Arc::new));
    }

    /// The sparse prefix `key` falls under, if any.
    fn sparse_prefix(&self, key: &str) -> Option<&str> {
        self.sparse_prefixes.iter().find(|p| key.starts_with(p.as_str())).map(String::as_str)
    }

    /// How a point read under the sparse `prefix` at `version` is answered.
    fn sparse(&self, version: u64, prefix: &str) -> Sparse {
        let g = self.scans.lock();
        match g.0 {
            Some(v) if v == version => match g.1.get(prefix) {
                Some(Some(entries)) => Sparse::Kept(entries.clone()),
                Some(None) => Sparse::KeyByKey,
                None => Sparse::Scan,
            },
            // A scan of an older version would not be kept: read the key.
            Some(v) if later(v, version) => Sparse::KeyByKey,
            _ => Sparse::Scan,
        }
    }
}

/// True when version `a` comes after `b`. The version before the first commit is `u64::MAX`
/// (cnidarium's pre-genesis version; the first commit wraps it to 0), older than every other.
fn later(a: u64, b: u64) -> bool {
    a.wrapping_add(1) > b.wrapping_add(1)
}

/// How a point read under a sparse prefix is answered.
enum Sparse {
    /// From the scan kept at the read's version.
    Kept(Scan),
    /// By scanning the prefix (then kept).
    Scan,
    /// By reading the key (the prefix holds too many keys, or the version is an older one).
    KeyByKey,
}

/// The value of `key` in a kept scan (entries in key order): absent when the scan does not
/// hold it.
fn in_scan(entries: &[(String, Vec<u8>)], key: &str) -> Value {
    entries.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok().and_then(|i| entries.get(i)).map(|(_, v)| v.clone())
}

impl ReadCache {
    /// The value of `key` at `version`, when the cache holds it at that version.
    fn get(&self, version: u64, key: &str) -> Option<Value> {
        let g = self.inner.read();
        if g.version != Some(version) {
            match &g.prev {
                Some((v, written)) if *v == version && !written.contains(key) => {}
                _ => return None,
            }
        }
        g.map.get(key).cloned()
    }

    /// Remembers what the snapshot of `version` holds at `key`, if the cache is at `version`.
    fn fill(&self, version: u64, key: &str, value: &Value) {
        let mut g = self.inner.write();
        if g.version != Some(version) || g.map.len() >= self.max_entries {
            return;
        }
        g.map.entry(key.to_string()).or_insert_with(|| value.clone());
    }

    /// Rolls the cache from `from` to `to` with the exact verifiable write set of the commit
    /// between them: the keys it holds take their new values, others stay out. Anything else
    /// (a cache at another version, versions that do not follow) starts over empty at `to`.
    pub fn advance<'a>(&self, from: u64, to: u64, writes: impl IntoIterator<Item = (&'a String, &'a Value)>) {
        let mut g = self.inner.write();
        if g.version != Some(from) || from.wrapping_add(1) != to || g.map.len() >= self.max_entries {
            g.map.clear();
            g.version = Some(to);
            g.prev = None;
            return;
        }
        let mut written = HashSet::default();
        for (k, v) in writes {
            if let Some(held) = g.map.get_mut(k.as_str()) {
                *held = v.clone();
            }
            written.insert(k.clone());
        }
        g.version = Some(to);
        g.prev = Some((from, written));
    }

    /// Forgets everything and starts at `version`.
    pub fn reset(&self, version: u64) {
        let mut g = self.inner.write();
        g.map.clear();
        g.version = Some(version);
        g.prev = None;
    }

    /// Number of keys held (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.inner.read().map.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A [`Snapshot`] whose verifiable point reads go through a [`ReadCache`].
#[derive(Clone)]
pub struct CachedSnapshot {
    snap: Snapshot,
    cache: Arc<ReadCache>,
}

impl std::fmt::Debug for CachedSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedSnapshot").field("version", &self.snap.version()).finish_non_exhaustive()
    }
}

impl CachedSnapshot {
    /// Wraps a snapshot.
    pub fn new(snap: Snapshot, cache: Arc<ReadCache>) -> Self {
        Self { snap, cache }
    }

    /// The snapshot underneath.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// Its version.
    pub fn version(&self) -> u64 {
        self.snap.version()
    }
}

/// The future of a cached read: ready on a hit, the snapshot read (then a fill) on a miss.
pub enum CachedRead {
    /// Served from the cache.
    Hit(Option<Value>),
    /// Read from the snapshot, then remembered (cache, snapshot version, key) when cacheable.
    Miss(<Snapshot as StateRead>::GetRawFut, Option<(Arc<ReadCache>, u64, String)>),
    /// A key under a sparse prefix, answered from the prefix's scan (then kept).
    Scanning(Box<SparseScan>),
}

/// The scan of a sparse prefix that answers a point read.
pub struct SparseScan {
    inner: <Snapshot as StateRead>::PrefixRawStream,
    seen: Vec<(String, Vec<u8>)>,
    key: String,
    prefix: String,
    snap: Snapshot,
    cache: Arc<ReadCache>,
}

/// What a step of a [`SparseScan`] came to.
enum ScanStep {
    Done(anyhow::Result<Value>),
    Pending,
    /// More keys than the bound: the key is read by itself.
    TooMany,
}

impl SparseScan {
    fn poll_step(&mut self, cx: &mut Context<'_>) -> ScanStep {
        loop {
            match futures::Stream::poll_next(Pin::new(&mut self.inner), cx) {
                Poll::Ready(Some(Ok(kv))) => {
                    self.seen.push(kv);
                    if self.seen.len() > self.cache.max_sparse {
                        self.cache.keep_scan(self.snap.version(), std::mem::take(&mut self.prefix), None);
                        return ScanStep::TooMany;
                    }
                }
                Poll::Ready(None) => {
                    let mut entries = std::mem::take(&mut self.seen);
                    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                    let v = in_scan(&entries, &self.key);
                    self.cache.keep_scan(self.snap.version(), std::mem::take(&mut self.prefix), Some(entries));
                    return ScanStep::Done(Ok(v));
                }
                // A failed scan is not kept; the read fails as a failed read of the key would.
                Poll::Ready(Some(Err(e))) => return ScanStep::Done(Err(e)),
                Poll::Pending => return ScanStep::Pending,
            }
        }
    }

    /// The read of the key by itself, remembered like any miss.
    fn key_read(&self) -> CachedRead {
        CachedRead::Miss(self.snap.get_raw(&self.key), Some((self.cache.clone(), self.snap.version(), self.key.clone())))
    }
}

impl std::fmt::Debug for CachedRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CachedRead::Hit(_) => f.write_str("CachedRead::Hit"),
            CachedRead::Miss(..) => f.write_str("CachedRead::Miss"),
            CachedRead::Scanning(..) => f.write_str("CachedRead::Scanning"),
        }
    }
}

impl Future for CachedRead {
    type Output = anyhow::Result<Value>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this {
            CachedRead::Hit(v) => match v.take() {
                Some(v) => Poll::Ready(Ok(v)),
                None => Poll::Ready(Err(anyhow::anyhow!("cached read polled after completion"))),
            },
            CachedRead::Miss(fut, fill) => match Pin::new(fut).poll(cx) {
                Poll::Ready(Ok(v)) => {
                    if let Some((cache, version, key)) = fill.take() {
                        cache.fill(version, &key, &v);
                    }
                    Poll::Ready(Ok(v))
                }
                other => other,
            },
            CachedRead::Scanning(scan) => match scan.poll_step(cx) {
                ScanStep::Done(r) => Poll::Ready(r),
                ScanStep::Pending => Poll::Pending,
                ScanStep::TooMany => {
                    *this = scan.key_read();
                    Pin::new(this).poll(cx)
                }
            },
        }
    }
}

impl StateRead for CachedSnapshot {
    type GetRawFut = CachedRead;
    type PrefixRawStream = CachedScan;
    type PrefixKeysStream = <Snapshot as StateRead>::PrefixKeysStream;
    type NonconsensusPrefixRawStream = <Snapshot as StateRead>::NonconsensusPrefixRawStream;
    type NonconsensusRangeRawStream = <Snapshot as StateRead>::NonconsensusRangeRawStream;

    fn get_raw(&self, key: &str) -> Self::GetRawFut {
        let version = self.snap.version();
        if let Some(v) = self.cache.get(version, key) {
            return CachedRead::Hit(Some(v));
        }
        if let Some(prefix) = self.cache.sparse_prefix(key) {
            match self.cache.sparse(version, prefix) {
                Sparse::Kept(entries) => return CachedRead::Hit(Some(in_scan(&entries, key))),
                Sparse::Scan => {
                    return CachedRead::Scanning(Box::new(SparseScan {
                        inner: self.snap.prefix_raw(prefix),
                        seen: Vec::new(),
                        key: key.to_string(),
                        prefix: prefix.to_string(),
                        snap: self.snap.clone(),
                        cache: self.cache.clone(),
                    }))
                }
                Sparse::KeyByKey => {}
            }
        }
        CachedRead::Miss(self.snap.get_raw(key), Some((self.cache.clone(), version, key.to_string())))
    }

    fn nonverifiable_get_raw(&self, key: &[u8]) -> Self::GetRawFut {
        let Some(name) = self.cache.nv_key(key) else { return CachedRead::Miss(self.snap.nonverifiable_get_raw(key), None) };
        let version = self.snap.version();
        match self.cache.get(version, &name) {
            Some(v) => CachedRead::Hit(Some(v)),
            None => CachedRead::Miss(self.snap.nonverifiable_get_raw(key), Some((self.cache.clone(), version, name))),
        }
    }

    fn object_get<T: std::any::Any + Send + Sync + Clone>(&self, key: &'static str) -> Option<T> {
        self.snap.object_get(key)
    }

    fn object_type(&self, key: &'static str) -> Option<std::any::TypeId> {
        self.snap.object_type(key)
    }

    fn prefix_raw(&self, prefix: &str) -> Self::PrefixRawStream {
        if !self.cache.memo_prefixes.iter().any(|p| p == prefix) {
            return CachedScan::Plain(self.snap.prefix_raw(prefix));
        }
        let version = self.snap.version();
        match self.cache.scan(version, prefix) {
            Some(entries) => CachedScan::Kept(entries, 0),
            None => {
                CachedScan::Recording { inner: self.snap.prefix_raw(prefix), seen: Vec::new(), keep: Some((self.cache.clone(), version, prefix.to_string())) }
            }
        }
    }

    fn prefix_keys(&self, prefix: &str) -> Self::PrefixKeysStream {
        self.snap.prefix_keys(prefix)
    }

    fn nonverifiable_prefix_raw(&self, prefix: &[u8]) -> Self::NonconsensusPrefixRawStream {
        self.snap.nonverifiable_prefix_raw(prefix)
    }

    fn nonverifiable_range_raw(&self, prefix: Option<&[u8]>, range: impl RangeBounds<Vec<u8>>) -> anyhow::Result<Self::NonconsensusRangeRawStream> {
        self.snap.nonverifiable_range_raw(prefix, range)
    }
}

/// The stream of a prefix scan through the cache: a kept scan, a scan of the snapshot that is
/// kept once read to its end, or a plain scan of the snapshot.
pub enum CachedScan {
    /// Served from a kept scan (entries, next index).
    Kept(Scan, usize),
    /// Read from the snapshot; kept whole when the stream ends without an error.
    Recording {
        /// The snapshot's stream.
        inner: <Snapshot as StateRead>::PrefixRawStream,
        /// The entries so far.
        seen: Vec<(String, Vec<u8>)>,
        /// Where to keep them (cache, version, prefix).
        keep: Option<(Arc<ReadCache>, u64, String)>,
    },
    /// A prefix that is not kept.
    Plain(<Snapshot as StateRead>::PrefixRawStream),
}

impl std::fmt::Debug for CachedScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CachedScan::Kept(..) => "CachedScan::Kept",
            CachedScan::Recording { .. } => "CachedScan::Recording",
            CachedScan::Plain(_) => "CachedScan::Plain",
        })
    }
}

impl futures::Stream for CachedScan {
    type Item = anyhow::Result<(String, Vec<u8>)>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.get_mut() {
            CachedScan::Kept(entries, next) => {
                let item = entries.get(*next).cloned();
                *next = next.saturating_add(1);
                Poll::Ready(item.map(Ok))
            }
            CachedScan::Plain(inner) => Pin::new(inner).poll_next(cx),
            CachedScan::Recording { inner, seen, keep } => match Pin::new(inner).poll_next(cx) {
                Poll::Ready(Some(Ok(kv))) => {
                    seen.push(kv.clone());
                    Poll::Ready(Some(Ok(kv)))
                }
                Poll::Ready(None) => {
                    if let Some((cache, version, prefix)) = keep.take() {
                        cache.keep_scan(version, prefix, Some(std::mem::take(seen)));
                    }
                    Poll::Ready(None)
                }
                Poll::Ready(Some(Err(e))) => {
                    // A failed scan is not kept.
                    keep.take();
                    Poll::Ready(Some(Err(e)))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use cnidarium::{StateDelta, StateWrite};
    use lantau_store::TempStorage;

    use super::*;

    const KEYS: u64 = 40;

    fn key(i: u64) -> String {
        format!("k/{i:03}")
    }

    /// A small deterministic generator (no randomness in tests that must replay).
    fn next(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        *seed >> 33
    }

    /// Commits `delta` (made over the cache at `before`) the way `App` commits a block: the
    /// write set transplanted onto the plain snapshot, then the cache rolled forward with it.
    async fn commit_as_the_app(storage: &TempStorage, cache: &ReadCache, before: &Snapshot, delta: StateDelta<CachedSnapshot>) {
        let (cached, changes) = delta.flatten();
        let writes: Vec<(String, Option<Vec<u8>>)> = changes.unwritten_changes().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let mut plain = StateDelta::new(cached.snapshot().clone());
        changes.apply_to(&mut plain);
        storage.commit(plain).await.unwrap();
        cache.advance(before.version(), storage.latest_version(), writes.iter().map(|(k, v)| (k, v)));
    }

    /// Blocks of random writes and deletes, committed the way `App` commits them (execution
    /// over the cache, the write set transplanted onto the plain snapshot, the cache rolled
    /// forward); after every commit every key read through the cache equals the snapshot's
    /// value, and a snapshot of an older version is never served the newer values.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cached_reads_always_equal_snapshot_reads() {
        let storage = TempStorage::new().await.unwrap();
        let cache = Arc::new(ReadCache::new(1_000));
        cache.reset(storage.latest_version());
        let mut seed = 7u64;
        for block in 0..12u64 {
            let before = storage.latest_snapshot();
            let mut delta = StateDelta::new(CachedSnapshot::new(before.clone(), cache.clone()));
            for _ in 0..15 {
                let k = key(next(&mut seed) % KEYS);
                // Reads fill the cache, writes go to the delta.
                let _ = delta.get_raw(&k).await.unwrap();
                match next(&mut seed) % 3 {
                    0 => delta.delete(k),
                    _ => delta.put_raw(k, format!("v{block}-{}", next(&mut seed)).into_bytes()),
                }
            }
            commit_as_the_app(&storage, &cache, &before, delta).await;

            let now = storage.latest_snapshot();
            let through = CachedSnapshot::new(now.clone(), cache.clone());
            let old = CachedSnapshot::new(before.clone(), cache.clone());
            for i in 0..KEYS {
                let k = key(i);
                assert_eq!(through.get_raw(&k).await.unwrap(), now.get_raw(&k).await.unwrap(), "{k} after block {block}");
                assert_eq!(old.get_raw(&k).await.unwrap(), before.get_raw(&k).await.unwrap(), "{k} at the old version");
            }
            assert!(!cache.is_empty());
        }
    }

    /// The same with non-verifiable keys under a cached prefix, and verifiable keys of the
    /// same names written alongside with other values: the two spaces never answer for each
    /// other, and the non-verifiable reads equal the snapshot's at both versions.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cached_nonverifiable_reads_always_equal_snapshot_reads() {
        let storage = TempStorage::new().await.unwrap();
        let cache = Arc::new(ReadCache::new(1_000).caching_nonverifiable(&["k/"]));
        cache.reset(storage.latest_version());
        let mut seed = 11u64;
        for block in 0..12u64 {
            let before = storage.latest_snapshot();
            let mut delta = StateDelta::new(CachedSnapshot::new(before.clone(), cache.clone()));
            for _ in 0..15 {
                let k = key(next(&mut seed) % KEYS);
                let _ = delta.nonverifiable_get_raw(k.as_bytes()).await.unwrap();
                let _ = delta.get_raw(&k).await.unwrap();
                match next(&mut seed) % 3 {
                    0 => delta.nonverifiable_delete(k.into_bytes()),
                    _ => {
                        let n = next(&mut seed);
                        delta.put_raw(k.clone(), format!("verifiable {n}").into_bytes());
                        delta.nonverifiable_put_raw(k.into_bytes(), format!("v{block}-{n}").into_bytes());
                    }
                }
            }
            let (cached, changes) = delta.flatten();
            let writes: Vec<(String, Option<Vec<u8>>)> = changes.unwritten_changes().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let nv = cache.nonverifiable_writes(changes.nonverifiable_changes().iter());
            assert!(!nv.is_empty());
            let mut plain = StateDelta::new(cached.snapshot().clone());
            changes.apply_to(&mut plain);
            storage.commit(plain).await.unwrap();
            cache.advance(before.version(), storage.latest_version(), writes.iter().chain(&nv).map(|(k, v)| (k, v)));

            let now = storage.latest_snapshot();
            let through = CachedSnapshot::new(now.clone(), cache.clone());
            let old = CachedSnapshot::new(before.clone(), cache.clone());
            for i in 0..KEYS {
                let k = key(i);
                assert_eq!(
                    through.nonverifiable_get_raw(k.as_bytes()).await.unwrap(),
                    now.nonverifiable_get_raw(k.as_bytes()).await.unwrap(),
                    "{k} after block {block}"
                );
                assert_eq!(through.get_raw(&k).await.unwrap(), now.get_raw(&k).await.unwrap(), "{k} after block {block}");
                assert_eq!(
                    old.nonverifiable_get_raw(k.as_bytes()).await.unwrap(),
                    before.nonverifiable_get_raw(k.as_bytes()).await.unwrap(),
                    "{k} at the old version"
                );
            }
        }
    }

    /// A kept prefix scan answers what the snapshot holds at its own version: after commits
    /// that add, change and delete keys under the prefix, through a delta that writes under it
    /// too, and for an older snapshot read after a newer one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kept_scans_equal_snapshot_scans_at_every_version() {
        use futures::TryStreamExt;
        let storage = TempStorage::new().await.unwrap();
        let cache = Arc::new(ReadCache::new(1_000).memoizing_scans_of(&["p/"]));
        cache.reset(storage.latest_version());
        let scan = |s: &CachedSnapshot| s.prefix_raw("p/").try_collect::<Vec<_>>();
        let mut olds = Vec::new();
        for block in 0..6u64 {
            let before = storage.latest_snapshot();
            let mut delta = StateDelta::new(CachedSnapshot::new(before.clone(), cache.clone()));
            delta.put_raw(format!("p/{block}"), vec![block as u8]);
            if block > 1 {
                delta.delete(format!("p/{}", block - 2));
                delta.put_raw("p/0x".to_string(), vec![block as u8, 1]);
            }
            delta.put_raw(format!("q/{block}"), vec![0]);
            // The delta's own writes show through its scan of the kept prefix.
            let through_delta: Vec<_> = delta.prefix_raw("p/").try_collect().await.unwrap();
            assert!(through_delta.iter().any(|(k, _)| *k == format!("p/{block}")));
            let (_, changes) = delta.flatten();
            let mut plain = StateDelta::new(before.clone());
            changes.apply_to(&mut plain);
            storage.commit(plain).await.unwrap();
            cache.advance(before.version(), storage.latest_version(), std::iter::empty());
            let now = storage.latest_snapshot();
            let expected: Vec<_> = now.prefix_raw("p/").try_collect().await.unwrap();
            let through = CachedSnapshot::new(now.clone(), cache.clone());
            assert_eq!(scan(&through).await.unwrap(), expected, "first scan at block {block}");
            assert_eq!(scan(&through).await.unwrap(), expected, "kept scan at block {block}");
            olds.push((CachedSnapshot::new(now.clone(), cache.clone()), expected));
        }
        for (old, expected) in &olds {
            assert_eq!(&scan(old).await.unwrap(), expected, "version {}", old.version());
        }
    }

    /// Point reads under a sparse prefix equal the snapshot's at every version, for keys the
    /// blocks add, change and delete and for keys never written, read after a newer version as
    /// well; and a prefix that outgrows the bound is read key by key, with the same answers.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sparse_reads_always_equal_snapshot_reads() {
        for bound in [64, 3] {
            let storage = TempStorage::new().await.unwrap();
            let cache = Arc::new(ReadCache::new(1_000).answering_from_scans(&["f/"], bound));
            cache.reset(storage.latest_version());
            let mut seed = 5u64;
            let mut olds = Vec::new();
            for block in 0..10u64 {
                let before = storage.latest_snapshot();
                let mut delta = StateDelta::new(CachedSnapshot::new(before.clone(), cache.clone()));
                for _ in 0..4 {
                    let k = format!("f/{:02}", next(&mut seed) % 12);
                    // Reads through the delta, then a write of the key read.
                    let _ = delta.get_raw(&k).await.unwrap();
                    match next(&mut seed) % 3 {
                        0 => delta.delete(k),
                        _ => delta.put_raw(k, vec![u8::try_from(block).unwrap(), 1]),
                    }
                }
                delta.put_raw(format!("g/{block}"), vec![0]);
                commit_as_the_app(&storage, &cache, &before, delta).await;

                let now = storage.latest_snapshot();
                let through = CachedSnapshot::new(now.clone(), cache.clone());
                let old = CachedSnapshot::new(before.clone(), cache.clone());
                for i in 0..14u64 {
                    let k = format!("f/{i:02}");
                    // Twice: the scan, then the kept scan.
                    for _ in 0..2 {
                        assert_eq!(through.get_raw(&k).await.unwrap(), now.get_raw(&k).await.unwrap(), "{k} after block {block}, bound {bound}");
                    }
                    assert_eq!(old.get_raw(&k).await.unwrap(), before.get_raw(&k).await.unwrap(), "{k} at the old version, bound {bound}");
                }
                olds.push((before, old));
            }
            for (snap, old) in &olds {
                for i in 0..14u64 {
                    let k = format!("f/{i:02}");
                    assert_eq!(old.get_raw(&k).await.unwrap(), snap.get_raw(&k).await.unwrap(), "{k} at version {}", snap.version());
                }
            }
            // With the larger bound the latest scan was kept; with the smaller one the prefix
            // outgrew it and its keys were read one by one (then cached as any other key, so
            // the latest version needed no scan).
            let version = storage.latest_version();
            match cache.sparse(version, "f/") {
                Sparse::Kept(entries) => assert!(bound == 64 && entries.len() <= 12, "bound {bound}"),
                Sparse::KeyByKey | Sparse::Scan => assert_eq!(bound, 3, "the scan at version {version} was not kept"),
            }
        }
    }

    #[test]
    fn versions_that_do_not_follow_start_over() {
        let cache = ReadCache::new(10);
        cache.reset(3);
        cache.fill(3, "a", &Some(vec![1]));
        assert_eq!(cache.get(3, "a"), Some(Some(vec![1])));
        assert_eq!(cache.get(4, "a"), None, "another version never hits");
        cache.fill(4, "b", &None);
        assert_eq!(cache.len(), 1, "a fill for another version is dropped");
        cache.advance(5, 6, std::iter::empty());
        assert!(cache.is_empty(), "a roll forward from a version the cache is not at clears it");
        assert_eq!(cache.get(6, "a"), None);
        assert_eq!(cache.get(5, "a"), None);
    }

    #[test]
    fn the_version_before_hits_only_for_keys_the_commit_did_not_write() {
        let cache = ReadCache::new(10);
        cache.reset(3);
        cache.fill(3, "a", &Some(vec![1]));
        cache.fill(3, "b", &Some(vec![2]));
        let w = [("b".to_string(), Some(vec![9]))];
        cache.advance(3, 4, w.iter().map(|(k, v)| (k, v)));
        assert_eq!(cache.get(4, "b"), Some(Some(vec![9])));
        assert_eq!(cache.get(3, "a"), Some(Some(vec![1])), "unchanged by the commit");
        assert_eq!(cache.get(3, "b"), None, "written by the commit: the old value is not held");
        cache.fill(3, "c", &Some(vec![3]));
        assert_eq!(cache.get(4, "c"), None, "a fill for the version before is dropped");
        cache.advance(4, 5, std::iter::empty());
        assert_eq!(cache.get(3, "a"), None, "two versions back never hits");
        assert_eq!(cache.get(4, "a"), Some(Some(vec![1])));
    }

    #[test]
    fn keys_a_commit_creates_are_not_taken_in() {
        let cache = ReadCache::new(10);
        cache.reset(3);
        cache.fill(3, "a", &Some(vec![1]));
        let w = [("a".to_string(), Some(vec![2])), ("flag/1".to_string(), Some(vec![7]))];
        cache.advance(3, 4, w.iter().map(|(k, v)| (k, v)));
        assert_eq!(cache.get(4, "a"), Some(Some(vec![2])), "a held key takes its new value");
        assert_eq!(cache.get(4, "flag/1"), None, "a key the cache did not hold stays out");
        assert_eq!(cache.get(3, "flag/1"), None, "and is not served for the version before");
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn bounded() {
        let cache = ReadCache::new(2);
        cache.reset(0);
        for (i, k) in ["a", "b", "c"].iter().enumerate() {
            cache.fill(0, k, &Some(vec![u8::try_from(i).unwrap()]));
        }
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(0, "c"), None);
        let w = [("d".to_string(), None)];
        cache.advance(0, 1, w.iter().map(|(k, v)| (k, v)));
        assert!(cache.is_empty(), "a full cache starts over at the next commit");
    }
}

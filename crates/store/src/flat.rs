//! One layer of writes over a reader, found by hash: the block's state and the admission
//! overlay, which gather every write of thousands of transactions.
//!
//! cnidarium's `StateDelta` keeps its writes in `BTreeMap`s, so a read that misses the
//! transaction's own small layer walks a tree of every key the block has written so far,
//! comparing long keys that share their prefixes (`bank/balances/…`) at each node, and each
//! transaction's writes are inserted the same way. A [`FlatDelta`] keeps them in hash maps: a read
//! or a write is one hash of the key and one comparison. Order is only needed at the end, when
//! [`FlatDelta::flatten`] sorts the writes once into the [`Changes`] the store stages, and by
//! prefix and range scans, which merge the layer's writes under the prefix, sorted, with the
//! reader's stream. Finding those writes walks the whole layer once; the sorted result is kept
//! for that prefix until a write falls under it, so a scan repeated by every transaction (the
//! EVM's token pairs) costs what its matches cost. A block that alternated writes and scans
//! under one prefix would walk the layer at each scan; none does (scans in handlers read
//! registries that transactions rarely write).
//!
//! Transactions still stack cnidarium's `StateDelta`s on top (`StateDelta::new(&mut flat)`), and
//! apply into this layer with `put_raw`/`delete` as they would into another delta. The maps are
//! never iterated into state unsorted, so their per-process seeds change nothing a replica
//! computes; the seeds keep a sender from choosing recipients whose keys collide.

// The maps are iterated only to be sorted (`flatten`, a prefix's matches), never into state.
#![allow(clippy::disallowed_types)]

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use anyhow::{bail, Result};
use cnidarium::{Cache, StateRead, StateWrite};
use futures::future::{Either, Ready};
use futures::stream::{BoxStream, Stream, StreamExt};
use parking_lot::Mutex;
use tendermint::abci;

/// A layer's writes by key (`None`: deleted).
pub(crate) type Map<K> = HashMap<K, Option<Vec<u8>>, foldhash::fast::RandomState>;
/// A layer's ephemeral objects (`None`: deleted).
pub(crate) type Objects = BTreeMap<&'static str, Option<Box<dyn Any + Send + Sync>>>;
/// A layer's writes as a list (`None`: deleted).
pub(crate) type WriteList<K> = Vec<(K, Option<Vec<u8>>)>;
/// A prefix's writes in this layer, sorted (`None`: deleted).
type Matches<K> = Arc<[(K, Option<Vec<u8>>)]>;

/// How many prefixes' matches a layer keeps (past it, the oldest goes).
const KEPT_SCANS: usize = 16;

/// The writes found under each prefix scanned (its bytes), until a write falls under it.
#[derive(Default)]
struct Scans {
    verifiable: Vec<(Vec<u8>, Matches<String>)>,
    nonverifiable: Vec<(Vec<u8>, Matches<Vec<u8>>)>,
}

/// The kept matches of `prefix` in `kept`, or those found in `writes` (then kept).
fn matches<K: AsRef<[u8]> + Ord + Clone>(kept: &mut Vec<(Vec<u8>, Matches<K>)>, writes: &Map<K>, prefix: &[u8]) -> Matches<K> {
    if let Some((_, m)) = kept.iter().find(|(p, _)| p == prefix) {
        return m.clone();
    }
    let mut found: Vec<(K, Option<Vec<u8>>)> = writes.iter().filter(|(k, _)| k.as_ref().starts_with(prefix)).map(|(k, v)| (k.clone(), v.clone())).collect();
    found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let found: Matches<K> = found.into();
    if kept.len() >= KEPT_SCANS {
        kept.remove(0);
    }
    kept.push((prefix.to_vec(), found.clone()));
    found
}

/// Forgets the kept matches of the prefixes `key` falls under.
fn forget<K>(kept: &mut Vec<(Vec<u8>, Matches<K>)>, key: &[u8]) {
    if !kept.is_empty() {
        kept.retain(|(p, _)| !key.starts_with(p));
    }
}

/// Writes over `S`, kept in hash maps until [`FlatDelta::flatten`] orders them.
pub struct FlatDelta<S> {
    base: S,
    verifiable: Map<String>,
    nonverifiable: Map<Vec<u8>>,
    objects: Objects,
    scans: Mutex<Scans>,
}

impl<S: std::fmt::Debug> std::fmt::Debug for FlatDelta<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatDelta")
            .field("base", &self.base)
            .field("verifiable", &self.verifiable.len())
            .field("nonverifiable", &self.nonverifiable.len())
            .field("objects", &self.objects.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The writes of a [`FlatDelta`] in key order (`None`: deleted), what the store stages.
#[derive(Debug, Default)]
pub struct Changes {
    verifiable: BTreeMap<String, Option<Vec<u8>>>,
    nonverifiable: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

/// A set of writes in key order, as a [`Changes`] or a cnidarium [`Cache`] holds them.
pub trait ChangeSet: Sync {
    /// The verifiable (tree) writes.
    fn unwritten_changes(&self) -> &BTreeMap<String, Option<Vec<u8>>>;
    /// The non-verifiable row writes.
    fn nonverifiable_changes(&self) -> &BTreeMap<Vec<u8>, Option<Vec<u8>>>;
}

impl ChangeSet for Changes {
    fn unwritten_changes(&self) -> &BTreeMap<String, Option<Vec<u8>>> {
        &self.verifiable
    }
    fn nonverifiable_changes(&self) -> &BTreeMap<Vec<u8>, Option<Vec<u8>>> {
        &self.nonverifiable
    }
}

impl ChangeSet for Cache {
    fn unwritten_changes(&self) -> &BTreeMap<String, Option<Vec<u8>>> {
        Cache::unwritten_changes(self)
    }
    fn nonverifiable_changes(&self) -> &BTreeMap<Vec<u8>, Option<Vec<u8>>> {
        Cache::nonverifiable_changes(self)
    }
}

impl<S: StateRead> FlatDelta<S> {
    /// No writes yet over `base`.
    pub fn new(base: S) -> Self {
        Self { base, verifiable: Map::default(), nonverifiable: Map::default(), objects: Objects::new(), scans: Mutex::default() }
    }

    /// The reader below and the writes in key order (objects are dropped, as the store drops
    /// them). The two stores' writes are sorted side by side, the rows on a second
    /// thread (as the block's finish runs its parts).
    pub fn flatten(self) -> (S, Changes) {
        let Self { base, verifiable, nonverifiable, .. } = self;
        let (verifiable, nonverifiable) = std::thread::scope(|scope| {
            let rows = scope.spawn(move || nonverifiable.into_iter().collect::<BTreeMap<_, _>>());
            let verifiable: BTreeMap<_, _> = verifiable.into_iter().collect();
            // A sort that panicked panics here, as it would have on this thread.
            (verifiable, rows.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        });
        (base, Changes { verifiable, nonverifiable })
    }
}

/// The layer's writes in key order (deletions as `None`), merged over `below`.
pub(crate) fn merged<K, V, St>(writes: Vec<(K, Option<V>)>, below: St) -> BoxStream<'static, Result<(K, V)>>
where
    K: Ord + Send + 'static,
    V: Send + 'static,
    St: Stream<Item = Result<(K, V)>> + Send + 'static,
{
    let state = (writes.into_iter().peekable(), Box::pin(below.peekable()));
    futures::stream::unfold(state, |(mut writes, mut below)| async move {
        enum Next {
            Write,
            Below,
            // The layer's write shadows the value below.
            WriteOverBelow,
        }
        loop {
            let next_below = below.as_mut().peek().await;
            let next = match (writes.peek(), next_below) {
                (None, None) => return None,
                (_, Some(Err(_))) | (None, Some(Ok(_))) => Next::Below,
                (Some(_), None) => Next::Write,
                (Some((wk, _)), Some(Ok((bk, _)))) => match wk.cmp(bk) {
                    std::cmp::Ordering::Greater => Next::Below,
                    std::cmp::Ordering::Less => Next::Write,
                    std::cmp::Ordering::Equal => Next::WriteOverBelow,
                },
            };
            match next {
                Next::Below => {
                    let item = below.as_mut().next().await?;
                    return Some((item, (writes, below)));
                }
                Next::WriteOverBelow => {
                    below.as_mut().next().await;
                }
                Next::Write => {}
            }
            match writes.next() {
                Some((k, Some(v))) => return Some((Ok((k, v)), (writes, below))),
                // Deleted in this layer: skipped.
                Some((_, None)) => continue,
                None => return None,
            }
        }
    })
    .boxed()
}

/// A range's start and end keys (`None`: unbounded).
type Ends = (Option<Vec<u8>>, Option<Vec<u8>>);

fn start_and_end(range: &impl RangeBounds<Vec<u8>>) -> Result<Ends> {
    let start = match range.start_bound() {
        Bound::Included(v) | Bound::Excluded(v) => Some(v.clone()),
        Bound::Unbounded => None,
    };
    let end = match range.end_bound() {
        Bound::Included(_) => bail!("an inclusive end bound is not supported"),
        Bound::Excluded(v) => Some(v.clone()),
        Bound::Unbounded => None,
    };
    if let (Some(s), Some(e)) = (&start, &end) {
        if s > e {
            bail!("the range's start is past its end");
        }
    }
    Ok((start, end))
}

/// A point read over a layer's writes: the layer's write of the key, else the reader's.
pub(crate) fn read_over<F>(write: Option<&Option<Vec<u8>>>, below: impl FnOnce() -> F) -> Either<Ready<Result<Option<Vec<u8>>>>, F> {
    match write {
        Some(v) => Either::Left(futures::future::ready(Ok(v.clone()))),
        None => Either::Right(below()),
    }
}

/// An object over a layer's objects. An object of another type under the key reads as none.
pub(crate) fn object_over<T: Any + Clone>(object: Option<&Option<Box<dyn Any + Send + Sync>>>, below: impl FnOnce() -> Option<T>) -> Option<T> {
    match object {
        Some(o) => o.as_ref().and_then(|o| o.downcast_ref::<T>()).cloned(),
        None => below(),
    }
}

/// The type of an object over a layer's objects.
pub(crate) fn object_type_over(
    object: Option<&Option<Box<dyn Any + Send + Sync>>>,
    below: impl FnOnce() -> Option<std::any::TypeId>,
) -> Option<std::any::TypeId> {
    match object {
        Some(o) => o.as_ref().map(|o| Any::type_id(&**o)),
        None => below(),
    }
}

/// The keys under a prefix: a layer's writes there (sorted) merged over the reader's keys.
pub(crate) fn keys_over<St>(writes: &[(String, Option<Vec<u8>>)], below: St) -> BoxStream<'static, Result<String>>
where
    St: Stream<Item = Result<String>> + Send + 'static,
{
    let writes = writes.iter().map(|(k, v)| (k.clone(), v.as_ref().map(|_| ()))).collect();
    merged(writes, below.map(|r| r.map(|k| (k, ())))).map(|r| r.map(|(k, ())| k)).boxed()
}

/// Of a layer's row writes under `prefix` (sorted), those in `range` as the store reads a
/// range: the keys under `prefix` from `prefix ++ start` up to (not including) `prefix ++
/// end`, an empty `end` bounding nothing.
pub(crate) fn in_range(under: &[(Vec<u8>, Option<Vec<u8>>)], prefix: &[u8], range: &impl RangeBounds<Vec<u8>>) -> Result<WriteList<Vec<u8>>> {
    let (start, end) = start_and_end(range)?;
    let from = [prefix, start.as_deref().unwrap_or_default()].concat();
    let to = end.filter(|e| !e.is_empty()).map(|e| [prefix, e.as_slice()].concat());
    Ok(under.iter().filter(|(k, _)| k.as_slice() >= from.as_slice() && to.as_ref().is_none_or(|t| k.as_slice() < t.as_slice())).cloned().collect())
}

impl<S: StateRead> StateRead for FlatDelta<S> {
    type GetRawFut = Either<Ready<Result<Option<Vec<u8>>>>, S::GetRawFut>;
    type PrefixRawStream = BoxStream<'static, Result<(String, Vec<u8>)>>;
    type PrefixKeysStream = BoxStream<'static, Result<String>>;
    type NonconsensusPrefixRawStream = BoxStream<'static, Result<(Vec<u8>, Vec<u8>)>>;
    type NonconsensusRangeRawStream = BoxStream<'static, Result<(Vec<u8>, Vec<u8>)>>;

    fn get_raw(&self, key: &str) -> Self::GetRawFut {
        read_over(self.verifiable.get(key), || self.base.get_raw(key))
    }

    fn nonverifiable_get_raw(&self, key: &[u8]) -> Self::GetRawFut {
        read_over(self.nonverifiable.get(key), || self.base.nonverifiable_get_raw(key))
    }

    fn object_get<T: Any + Send + Sync + Clone>(&self, key: &'static str) -> Option<T> {
        object_over(self.objects.get(key), || self.base.object_get(key))
    }

    fn object_type(&self, key: &'static str) -> Option<std::any::TypeId> {
        object_type_over(self.objects.get(key), || self.base.object_type(key))
    }

    fn prefix_raw(&self, prefix: &str) -> Self::PrefixRawStream {
        let found = matches(&mut self.scans.lock().verifiable, &self.verifiable, prefix.as_bytes());
        merged(found.to_vec(), self.base.prefix_raw(prefix))
    }

    fn prefix_keys(&self, prefix: &str) -> Self::PrefixKeysStream {
        let found = matches(&mut self.scans.lock().verifiable, &self.verifiable, prefix.as_bytes());
        keys_over(&found, self.base.prefix_keys(prefix))
    }

    fn nonverifiable_prefix_raw(&self, prefix: &[u8]) -> Self::NonconsensusPrefixRawStream {
        let found = matches(&mut self.scans.lock().nonverifiable, &self.nonverifiable, prefix);
        merged(found.to_vec(), self.base.nonverifiable_prefix_raw(prefix))
    }

    fn nonverifiable_range_raw(&self, prefix: Option<&[u8]>, range: impl RangeBounds<Vec<u8>>) -> Result<Self::NonconsensusRangeRawStream> {
        let p = prefix.unwrap_or_default();
        let found = matches(&mut self.scans.lock().nonverifiable, &self.nonverifiable, p);
        let writes = in_range(&found, p, &range)?;
        Ok(merged(writes, self.base.nonverifiable_range_raw(prefix, range)?))
    }
}

impl<S: StateRead> StateWrite for FlatDelta<S> {
    fn put_raw(&mut self, key: String, value: Vec<u8>) {
        forget(&mut self.scans.get_mut().verifiable, key.as_bytes());
        self.verifiable.insert(key, Some(value));
    }

    fn delete(&mut self, key: String) {
        forget(&mut self.scans.get_mut().verifiable, key.as_bytes());
        self.verifiable.insert(key, None);
    }

    fn nonverifiable_put_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        forget(&mut self.scans.get_mut().nonverifiable, &key);
        self.nonverifiable.insert(key, Some(value));
    }

    fn nonverifiable_delete(&mut self, key: Vec<u8>) {
        forget(&mut self.scans.get_mut().nonverifiable, &key);
        self.nonverifiable.insert(key, None);
    }

    fn object_put<T: Clone + Any + Send + Sync>(&mut self, key: &'static str, value: T) {
        self.objects.insert(key, Some(Box::new(value)));
    }

    fn object_delete(&mut self, key: &'static str) {
        self.objects.insert(key, None);
    }

    fn object_merge(&mut self, objects: Objects) {
        self.objects.extend(objects);
    }

    fn record(&mut self, _event: abci::Event) {
        // Events recorded into the block's layer are dropped, as the store drops a `Cache`'s
        // (transactions' events come back from their own deltas' `apply`).
    }
}

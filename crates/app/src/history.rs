//! The state at past heights: a node-local history of every value the state machine wrote, so
//! queries (REST `x-cosmos-block-height`, gRPC, `abci_query`, `eth_call` and the `eth_get*` reads
//! at a block) answer at any height the node keeps, after restarts too.
//!
//! The store keeps the last few versions open; older versions of the Merkle tree stay on disk
//! but are not opened, and the non-verifiable records (audit rows,
//! flags, velocity windows) are not versioned at all. So each block's commit also writes, in
//! the same atomic batch, one history entry per key it changed (verifiable, and the modules'
//! non-verifiable records):
//!
//! ```text
//! history/v/<escaped key>\0\0<!height>   verifiable key   → 1 ‖ value, or 0 (deleted)
//! history/n/<escaped key>\0\0<!height>   module record    → 1 ‖ value, or 0 (deleted); none for
//!                                        sequenced records (`Module::SEQUENCED_NONVERIFIABLE`,
//!                                        the audit log), read at a past height from the latest
//!                                        state when their sequence was counted by then
//! history/c/<height><chunk>              what the height changed (for pruning): up to 4,096
//!                                        keys a row (u32 BE chunk), each `v|n ‖ u32 BE length
//!                                        ‖ key`; none for records written once
//!                                        (`Module::WRITE_ONCE_NONVERIFIABLE`), whose one entry
//!                                        no newer entry supersedes
//! history/h/<height><v|n><key>           the same, one empty row per key, as stores written
//!                                        before the lists kept it (still pruned)
//! history/meta/start                     the first height the history holds (u64 BE)
//! history/meta/floor                     the earliest height it still answers (u64 BE)
//! ```
//!
//! `<escaped key>` is the key with each 0x00 byte written 0x00 0xFF, so entries sort by key,
//! a key's entries are contiguous, and a prefix of keys is a prefix of entries; `<!height>` is
//! `!height` (u64::MAX − height) big-endian, so a key's newest entry comes first and the value at height
//! `h` is the first entry at or after `<!h>`. The first block a node commits with history on
//! writes a baseline (every key, at the height before it).
//!
//! The history is the node's, like its tx index: not part of the app hash, not in snapshots or
//! exports. Pruning (keep the last N heights) deletes, a few heights per block, the entries a
//! newer entry at or below the horizon supersedes; an archive keeps everything.

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::{Bound, RangeBounds};
use std::pin::Pin;

use cnidarium::StateRead;
use futures::{Stream, StreamExt};
use lantau_store::Snapshot;

use crate::state_key;

const V: &[u8] = b"history/v/";
const N: &[u8] = b"history/n/";
/// What a height changed, one row per key (the layout before `C`; pruning still reads it).
const H: &[u8] = b"history/h/";
/// What a height changed, in rows of [`CHANGED_PER_ROW`] keys.
const C: &[u8] = b"history/c/";
/// Keys listed per row of `C`: one row per block for most blocks, bounded for the largest.
const CHANGED_PER_ROW: usize = 4096;
const START: &[u8] = b"history/meta/start";
const FLOOR: &[u8] = b"history/meta/floor";
/// Everything the history writes starts with this.
pub const PREFIX: &[u8] = b"history/";
/// At most this many heights are pruned per block (a backlog is caught up over blocks).
const PRUNE_PER_BLOCK: u64 = 16;

/// How much history a node keeps (`[state] pruning` in the node's config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    /// None: only the heights cnidarium keeps open (the last few).
    Off,
    /// The last `n` heights.
    Recent(u64),
    /// Every height since the history started.
    Archive,
}

impl Default for Retention {
    fn default() -> Self {
        Retention::Recent(DEFAULT_KEEP_RECENT)
    }
}

/// The heights a node keeps by default.
pub const DEFAULT_KEEP_RECENT: u64 = 100_000;

fn escape(key: &[u8], out: &mut Vec<u8>) {
    for b in key {
        out.push(*b);
        if *b == 0 {
            out.push(0xFF);
        }
    }
}

/// The entries of `key` in `space` start with this.
fn group(space: &[u8], key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(space.len().saturating_add(key.len()).saturating_add(10));
    k.extend_from_slice(space);
    escape(key, &mut k);
    k.extend_from_slice(&[0, 0]);
    k
}

fn entry_key(space: &[u8], key: &[u8], height: u64) -> Vec<u8> {
    let mut k = group(space, key);
    k.extend_from_slice(&(!height).to_be_bytes());
    k
}

/// Splits an entry's key (after its space) into the original key and the height.
fn parse_entry(rest: &[u8]) -> Option<(Vec<u8>, u64)> {
    let mut key = Vec::with_capacity(rest.len());
    let mut i = 0usize;
    loop {
        let b = *rest.get(i)?;
        if b == 0 {
            match *rest.get(i.checked_add(1)?)? {
                0xFF => key.push(0),
                0 => break,
                _ => return None,
            }
            i = i.checked_add(2)?;
        } else {
            key.push(b);
            i = i.checked_add(1)?;
        }
    }
    let inv: [u8; 8] = rest.get(i.checked_add(2)?..)?.try_into().ok()?;
    Some((key, !u64::from_be_bytes(inv)))
}

fn encode_value(v: Option<&Vec<u8>>) -> Vec<u8> {
    match v {
        Some(v) => {
            let mut out = Vec::with_capacity(v.len().saturating_add(1));
            out.push(1);
            out.extend_from_slice(v);
            out
        }
        None => vec![0],
    }
}

fn decode_value(v: &[u8]) -> Option<Vec<u8>> {
    match v.split_first() {
        Some((1, rest)) => Some(rest.to_vec()),
        _ => None,
    }
}

/// Whether a non-verifiable key is a module's record the history keeps (the node's own
/// indexes and `app/version_base` are not state).
fn tracked(key: &[u8]) -> bool {
    crate::export::owner(key).is_some() && key != state_key::VERSION_BASE.as_bytes()
}

/// The sequenced space (`Module::SEQUENCED_NONVERIFIABLE`: prefix, counter key) `key` lies in.
fn sequenced_of(key: &[u8]) -> Option<(&'static [u8], &'static str)> {
    crate::modules::sequenced_nonverifiable().into_iter().find(|(p, _)| key.starts_with(p))
}

/// A sequenced record's sequence: the last eight bytes of its key.
fn sequence_of(key: &[u8]) -> Option<u64> {
    let tail: [u8; 8] = key.get(key.len().checked_sub(8)?..)?.try_into().ok()?;
    Some(u64::from_be_bytes(tail))
}

/// A u64 record of the history's (`None`: absent); a record of another length is corrupt and
/// an error, never read as absent (which would start the history again).
fn u64_at(v: Option<Vec<u8>>) -> anyhow::Result<Option<u64>> {
    v.map(|b| <[u8; 8]>::try_from(b.as_slice()).map(u64::from_be_bytes).map_err(|_| anyhow::anyhow!("corrupt history record of {} bytes", b.len()))).transpose()
}

/// The writes that record a block's changes at `height`: an entry per key and the list of
/// what it changed, which pruning reads.
pub(crate) fn rows(height: u64, verifiable: &BTreeMap<String, Option<Vec<u8>>>, nonverifiable: &BTreeMap<Vec<u8>, Option<Vec<u8>>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::with_capacity(verifiable.len().saturating_add(nonverifiable.len()).saturating_add(1));
    let mut changed = Changed::new(height);
    for (k, v) in verifiable {
        out.push((entry_key(V, k.as_bytes(), height), encode_value(v.as_ref())));
        changed.push(b'v', k.as_bytes(), &mut out);
    }
    // A record written once is never superseded, so its entry is never pruned: not listed.
    let once = crate::modules::write_once_nonverifiable();
    // Sequenced records are read at past heights from the latest state: no entries.
    let sequenced = crate::modules::sequenced_nonverifiable();
    for (k, v) in nonverifiable.iter().filter(|(k, _)| tracked(k) && !sequenced.iter().any(|(p, _)| k.starts_with(p))) {
        out.push((entry_key(N, k, height), encode_value(v.as_ref())));
        if !once.iter().any(|p| k.starts_with(p)) {
            changed.push(b'n', k, &mut out);
        }
    }
    changed.finish(&mut out);
    out
}

/// The rows of `C` listing what one height changed, as they fill.
struct Changed {
    height: u64,
    chunk: u32,
    keys: usize,
    row: Vec<u8>,
}

impl Changed {
    fn new(height: u64) -> Self {
        Self { height, chunk: 0, keys: 0, row: Vec::new() }
    }

    fn push(&mut self, kind: u8, key: &[u8], out: &mut Vec<(Vec<u8>, Vec<u8>)>) {
        self.row.push(kind);
        self.row.extend_from_slice(&u32::try_from(key.len()).unwrap_or(u32::MAX).to_be_bytes());
        self.row.extend_from_slice(key);
        self.keys = self.keys.saturating_add(1);
        if self.keys == CHANGED_PER_ROW {
            self.finish(out);
        }
    }

    fn finish(&mut self, out: &mut Vec<(Vec<u8>, Vec<u8>)>) {
        if self.keys == 0 {
            return;
        }
        let mut k = Vec::with_capacity(C.len().saturating_add(12));
        k.extend_from_slice(C);
        k.extend_from_slice(&self.height.to_be_bytes());
        k.extend_from_slice(&self.chunk.to_be_bytes());
        out.push((k, std::mem::take(&mut self.row)));
        self.chunk = self.chunk.saturating_add(1);
        self.keys = 0;
    }
}

/// The keys a row of `C` lists, `(kind, key)`; an error when it is not one.
fn parse_changed(row: &[u8]) -> anyhow::Result<Vec<(u8, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut rest = row;
    while let Some((kind, tail)) = rest.split_first() {
        let (len, tail) = tail.split_first_chunk::<4>().ok_or_else(|| anyhow::anyhow!("corrupt history change list"))?;
        let len = usize::try_from(u32::from_be_bytes(*len))?;
        let (key, tail) = tail.split_at_checked(len).ok_or_else(|| anyhow::anyhow!("corrupt history change list"))?;
        out.push((*kind, key.to_vec()));
        rest = tail;
    }
    Ok(out)
}

/// What the committed `snap` records height `p` changed, `(kind, key)`, and the rows that
/// say so (both layouts: a row of `C` per chunk, or a row of `H` per key).
async fn changed_at(snap: &Snapshot, p: u64) -> anyhow::Result<(Vec<(u8, Vec<u8>)>, Vec<Vec<u8>>)> {
    let (mut keys, mut rows) = (Vec::new(), Vec::new());
    for space in [C, H] {
        let mut prefix = space.to_vec();
        prefix.extend_from_slice(&p.to_be_bytes());
        let mut stream = std::pin::pin!(snap.nonverifiable_prefix_raw(&prefix));
        while let Some(item) = stream.next().await {
            let (row, value) = item?;
            if space == C {
                keys.extend(parse_changed(&value)?);
            } else if let Some((kind, key)) = row.get(prefix.len()..).and_then(<[u8]>::split_first) {
                keys.push((*kind, key.to_vec()));
            }
            rows.push(row);
        }
    }
    Ok((keys, rows))
}

/// What the block at `height` writes besides its changes' entries: a baseline when the history
/// starts (the state of `prev`, the committed snapshot before the block), and the pruning of
/// superseded entries. `(key, Some(value))` puts, `(key, None)` deletes.
pub(crate) async fn upkeep(prev: &Snapshot, height: u64, retention: Retention) -> anyhow::Result<Vec<(Vec<u8>, Option<Vec<u8>>)>> {
    let mut out = Vec::new();
    let start = u64_at(prev.nonverifiable_get_raw(START).await?)?;
    if retention == Retention::Off {
        // A history that stopped is not continued: the next start writes a new baseline.
        if start.is_some() {
            out.push((START.to_vec(), None));
            out.push((FLOOR.to_vec(), None));
        }
        return Ok(out);
    }
    let base = height.saturating_sub(1);
    let Some(start) = start else {
        let mut verifiable = BTreeMap::new();
        let mut stream = std::pin::pin!(prev.prefix_raw(""));
        while let Some(item) = stream.next().await {
            let (k, v) = item?;
            verifiable.insert(k, Some(v));
        }
        let mut nonverifiable = BTreeMap::new();
        for section in std::iter::once(crate::export::APP_SECTION).chain(crate::modules::MODULE_NAMES.iter().copied()) {
            let mut stream = std::pin::pin!(prev.nonverifiable_prefix_raw(format!("{section}/").as_bytes()));
            while let Some(item) = stream.next().await {
                let (k, v) = item?;
                nonverifiable.insert(k, Some(v));
            }
        }
        out.extend(rows(base, &verifiable, &nonverifiable).into_iter().map(|(k, v)| (k, Some(v))));
        out.push((START.to_vec(), Some(base.to_be_bytes().to_vec())));
        out.push((FLOOR.to_vec(), Some(base.to_be_bytes().to_vec())));
        tracing::info!(height = base, keys = verifiable.len().saturating_add(nonverifiable.len()), "history starts: baseline written");
        return Ok(out);
    };
    let Retention::Recent(keep) = retention else { return Ok(out) };
    // Heights at or below the horizon may lose entries a newer one (still at or below it)
    // supersedes; the floor follows the horizon.
    let horizon = height.saturating_sub(keep);
    let floor = u64_at(prev.nonverifiable_get_raw(FLOOR).await?)?.unwrap_or(start).max(start);
    if horizon <= floor {
        return Ok(out);
    }
    let until = horizon.min(floor.saturating_add(PRUNE_PER_BLOCK));
    for p in floor..until {
        let (changed, rows) = changed_at(prev, p).await?;
        for (kind, key) in changed {
            let space = if kind == b'v' { V } else { N };
            // The newest entry at or below the horizon: if it is newer than `p`, the entry at
            // `p` is superseded for every height the history still answers.
            let g = group(space, &key);
            let from = entry_key(space, &key, until);
            let newest = {
                let mut s = std::pin::pin!(prev.nonverifiable_range_raw(Some(&g), from.get(g.len()..).unwrap_or_default().to_vec()..)?);
                match s.next().await {
                    Some(item) => parse_entry(item?.0.get(V.len()..).unwrap_or_default()).map(|(_, h)| h),
                    None => None,
                }
            };
            if newest.is_some_and(|h| h > p) {
                out.push((entry_key(space, &key, p), None));
            }
        }
        out.extend(rows.into_iter().map(|r| (r, None)));
    }
    out.push((FLOOR.to_vec(), Some(until.to_be_bytes().to_vec())));
    Ok(out)
}

/// The heights the history of `snap` answers: `(earliest, latest)`; `None` without history.
pub async fn span(snap: &Snapshot) -> anyhow::Result<Option<(u64, u64)>> {
    let start = u64_at(snap.nonverifiable_get_raw(START).await?)?;
    let floor = u64_at(snap.nonverifiable_get_raw(FLOOR).await?)?;
    let latest = crate::storage::height_at(snap).await?;
    Ok(start.map(|s| (floor.unwrap_or(s).max(s), latest)))
}

/// Bounds on keys (after a prefix), as cnidarium's range reads take them.
type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

type BoxFut<T> = Pin<Box<dyn Future<Output = anyhow::Result<T>> + Send + 'static>>;
type BoxStream<T> = Pin<Box<dyn Stream<Item = anyhow::Result<T>> + Send + 'static>>;

/// The records a read gathers in key order, as a stream (its error, if it failed, as the
/// stream's one item).
fn listed(read: impl Future<Output = anyhow::Result<Vec<(Vec<u8>, Vec<u8>)>>> + Send + 'static) -> BoxStream<(Vec<u8>, Vec<u8>)> {
    Box::pin(
        futures::stream::once(read)
            .map(|r| match r {
                Ok(out) => futures::stream::iter(out.into_iter().map(Ok)).boxed(),
                Err(e) => futures::stream::iter(vec![Err(e)]).boxed(),
            })
            .flatten(),
    )
}

/// The state after block `height`, read from the history of the latest snapshot.
#[derive(Clone)]
pub struct PastState {
    snap: Snapshot,
    height: u64,
}

impl PastState {
    /// The state of `height` when the history of `snap` holds it.
    pub(crate) async fn at(snap: Snapshot, height: u64) -> anyhow::Result<Option<Self>> {
        Ok(match span(&snap).await? {
            Some((earliest, latest)) if (earliest..=latest).contains(&height) => Some(Self { snap, height }),
            _ => None,
        })
    }

    /// The height whose state this is.
    pub fn height(&self) -> u64 {
        self.height
    }

    /// The value of `key` in `space` at this height.
    fn get(&self, space: &'static [u8], key: &[u8]) -> BoxFut<Option<Vec<u8>>> {
        let (snap, g, from) = (self.snap.clone(), group(space, key), entry_key(space, key, self.height));
        Box::pin(async move {
            let tail = from.get(g.len()..).unwrap_or_default().to_vec();
            let mut s = std::pin::pin!(snap.nonverifiable_range_raw(Some(&g), tail..)?);
            Ok(match s.next().await {
                Some(item) => decode_value(&item?.1),
                None => None,
            })
        })
    }

    /// A sequenced space's counter at this height (absent: 0).
    async fn counter(&self, key: &'static str) -> anyhow::Result<u64> {
        let v = self.get(V, key.as_bytes()).await?;
        Ok(u64_at(v)?.unwrap_or(0))
    }

    /// A record at this height: sequenced ones from the latest state when their sequence was
    /// counted by then, the others from the history.
    fn record(&self, key: &[u8]) -> BoxFut<Option<Vec<u8>>> {
        let Some((_, counter)) = sequenced_of(key) else { return self.get(N, key) };
        let (this, key) = (self.clone(), key.to_vec());
        Box::pin(async move {
            let Some(v) = this.snap.nonverifiable_get_raw(&key).await? else { return Ok(None) };
            let last = this.counter(counter).await?;
            Ok(sequence_of(&key).filter(|s| *s <= last).map(|_| v))
        })
    }

    /// Every record under `prefix` with its value at this height, in key order, restricted to
    /// `range` when given: the history's, and those of the sequenced spaces the prefix reaches
    /// from the latest state (an older store's history entries of those are not read).
    fn records(&self, prefix: &[u8], range: Option<KeyRange>) -> BoxStream<(Vec<u8>, Vec<u8>)> {
        let reached: Vec<(&'static [u8], &'static str)> =
            crate::modules::sequenced_nonverifiable().into_iter().filter(|(p, _)| p.starts_with(prefix) || prefix.starts_with(p)).collect();
        if reached.is_empty() {
            return self.scan(N, prefix, range);
        }
        let (this, prefix) = (self.clone(), prefix.to_vec());
        listed(async move {
            let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            if !reached.iter().any(|(p, _)| prefix.starts_with(p)) {
                let mut s = this.scan(N, &prefix, range.clone());
                while let Some(item) = s.next().await {
                    let (k, v) = item?;
                    if !reached.iter().any(|(p, _)| k.starts_with(p)) {
                        out.push((k, v));
                    }
                }
            }
            for (p, counter) in &reached {
                let last = this.counter(counter).await?;
                let mut s = match &range {
                    // Under the caller's own prefix a range is the store's range.
                    Some(r) if p.len() <= prefix.len() => this.snap.nonverifiable_range_raw(Some(prefix.as_slice()), r.clone())?.boxed(),
                    _ => this.snap.nonverifiable_prefix_raw(if p.len() > prefix.len() { p } else { &prefix }).boxed(),
                };
                while let Some(item) = s.next().await {
                    let (k, v) = item?;
                    let counted = sequence_of(&k).is_some_and(|s| s <= last);
                    let in_range = range.as_ref().is_none_or(|r| r.contains(&k.get(prefix.len()..).unwrap_or_default().to_vec()));
                    if counted && in_range {
                        out.push((k, v));
                    }
                }
            }
            out.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(out)
        })
    }

    /// Every key under `prefix` in `space` with its value at this height, in key order,
    /// restricted to `range` when given.
    fn scan(&self, space: &'static [u8], prefix: &[u8], range: Option<KeyRange>) -> BoxStream<(Vec<u8>, Vec<u8>)> {
        let (snap, height, prefix_len) = (self.snap.clone(), self.height, prefix.len());
        let mut p = space.to_vec();
        escape(prefix, &mut p);
        listed(async move {
            let mut out = Vec::new();
            let mut current: Option<Vec<u8>> = None;
            let mut stream = std::pin::pin!(snap.nonverifiable_prefix_raw(&p));
            while let Some(item) = stream.next().await {
                let (k, v) = item?;
                let Some((key, h)) = parse_entry(k.get(space.len()..).unwrap_or_default()) else { continue };
                if h > height || current.as_ref() == Some(&key) {
                    continue;
                }
                // The first entry at or below the height is the key's value then.
                current = Some(key.clone());
                // Range bounds are relative to the prefix, as cnidarium's are.
                if let Some(r) = &range {
                    if !r.contains(&key.get(prefix_len..).unwrap_or_default().to_vec()) {
                        continue;
                    }
                }
                if let Some(v) = decode_value(&v) {
                    out.push((key, v));
                }
            }
            Ok(out)
        })
    }
}

impl StateRead for PastState {
    type GetRawFut = BoxFut<Option<Vec<u8>>>;
    type PrefixRawStream = BoxStream<(String, Vec<u8>)>;
    type PrefixKeysStream = BoxStream<String>;
    type NonconsensusPrefixRawStream = BoxStream<(Vec<u8>, Vec<u8>)>;
    type NonconsensusRangeRawStream = BoxStream<(Vec<u8>, Vec<u8>)>;

    fn get_raw(&self, key: &str) -> Self::GetRawFut {
        self.get(V, key.as_bytes())
    }

    fn nonverifiable_get_raw(&self, key: &[u8]) -> Self::GetRawFut {
        if tracked(key) {
            self.record(key)
        } else {
            let (snap, key) = (self.snap.clone(), key.to_vec());
            Box::pin(async move { snap.nonverifiable_get_raw(&key).await })
        }
    }

    fn object_get<T: std::any::Any + Send + Sync + Clone>(&self, _key: &'static str) -> Option<T> {
        None
    }

    fn object_type(&self, _key: &'static str) -> Option<std::any::TypeId> {
        None
    }

    fn prefix_raw(&self, prefix: &str) -> Self::PrefixRawStream {
        self.scan(V, prefix.as_bytes(), None).map(|r| r.and_then(|(k, v)| Ok((String::from_utf8(k)?, v)))).boxed()
    }

    fn prefix_keys(&self, prefix: &str) -> Self::PrefixKeysStream {
        self.prefix_raw(prefix).map(|r| r.map(|(k, _)| k)).boxed()
    }

    fn nonverifiable_prefix_raw(&self, prefix: &[u8]) -> Self::NonconsensusPrefixRawStream {
        if tracked(prefix) {
            self.records(prefix, None)
        } else {
            self.snap.nonverifiable_prefix_raw(prefix).boxed()
        }
    }

    fn nonverifiable_range_raw(&self, prefix: Option<&[u8]>, range: impl RangeBounds<Vec<u8>>) -> anyhow::Result<Self::NonconsensusRangeRawStream> {
        let p = prefix.unwrap_or_default();
        let bounds = (range.start_bound().cloned(), range.end_bound().cloned());
        if tracked(p) {
            Ok(self.records(p, Some(bounds)))
        } else {
            Ok(self.snap.nonverifiable_range_raw(prefix, bounds)?.boxed())
        }
    }
}

/// The committed state after a height: one cnidarium keeps open, or the history's.
#[derive(Clone)]
pub enum StateView {
    /// A version cnidarium keeps open (the latest few): proofs available.
    Live(Snapshot),
    /// An older height, from the node's history.
    Past(PastState),
}

impl StateView {
    /// The open snapshot, when this is one.
    pub fn live(&self) -> Option<&Snapshot> {
        match self {
            StateView::Live(s) => Some(s),
            StateView::Past(_) => None,
        }
    }
}

impl std::fmt::Debug for StateView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateView::Live(s) => f.debug_tuple("Live").field(s).finish(),
            StateView::Past(p) => f.debug_tuple("Past").field(&p.height).finish(),
        }
    }
}

impl StateRead for StateView {
    type GetRawFut = BoxFut<Option<Vec<u8>>>;
    type PrefixRawStream = BoxStream<(String, Vec<u8>)>;
    type PrefixKeysStream = BoxStream<String>;
    type NonconsensusPrefixRawStream = BoxStream<(Vec<u8>, Vec<u8>)>;
    type NonconsensusRangeRawStream = BoxStream<(Vec<u8>, Vec<u8>)>;

    fn get_raw(&self, key: &str) -> Self::GetRawFut {
        match self {
            StateView::Live(s) => Box::pin(s.get_raw(key)),
            StateView::Past(p) => p.get_raw(key),
        }
    }

    fn nonverifiable_get_raw(&self, key: &[u8]) -> Self::GetRawFut {
        match self {
            StateView::Live(s) => Box::pin(s.nonverifiable_get_raw(key)),
            StateView::Past(p) => p.nonverifiable_get_raw(key),
        }
    }

    fn object_get<T: std::any::Any + Send + Sync + Clone>(&self, _key: &'static str) -> Option<T> {
        None
    }

    fn object_type(&self, _key: &'static str) -> Option<std::any::TypeId> {
        None
    }

    fn prefix_raw(&self, prefix: &str) -> Self::PrefixRawStream {
        match self {
            StateView::Live(s) => s.prefix_raw(prefix).boxed(),
            StateView::Past(p) => p.prefix_raw(prefix),
        }
    }

    fn prefix_keys(&self, prefix: &str) -> Self::PrefixKeysStream {
        match self {
            StateView::Live(s) => s.prefix_keys(prefix).boxed(),
            StateView::Past(p) => p.prefix_keys(prefix),
        }
    }

    fn nonverifiable_prefix_raw(&self, prefix: &[u8]) -> Self::NonconsensusPrefixRawStream {
        match self {
            StateView::Live(s) => s.nonverifiable_prefix_raw(prefix).boxed(),
            StateView::Past(p) => p.nonverifiable_prefix_raw(prefix),
        }
    }

    fn nonverifiable_range_raw(&self, prefix: Option<&[u8]>, range: impl RangeBounds<Vec<u8>>) -> anyhow::Result<Self::NonconsensusRangeRawStream> {
        match self {
            StateView::Live(s) => Ok(s.nonverifiable_range_raw(prefix, range)?.boxed()),
            StateView::Past(p) => p.nonverifiable_range_raw(prefix, range),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

    use super::*;
    use cnidarium::{StateDelta, StateWrite};
    use lantau_store::Storage;

    /// Writes `rows` as one committed version.
    async fn commit(storage: &Storage, rows: Vec<(Vec<u8>, Vec<u8>)>) {
        let mut delta = StateDelta::new(storage.latest_snapshot());
        for (k, v) in rows {
            delta.nonverifiable_put_raw(k, v);
        }
        storage.commit(delta).await.unwrap();
    }

    async fn all(snap: &Snapshot, prefix: &[u8]) -> Vec<Vec<u8>> {
        snap.nonverifiable_prefix_raw(prefix).map(|r| r.unwrap().0).collect().await
    }

    #[test]
    fn a_change_list_reads_back_as_written_in_rows_of_bounded_size() {
        let verifiable: BTreeMap<String, Option<Vec<u8>>> = (0..CHANGED_PER_ROW + 10).map(|i| (format!("app/k{i:05}"), Some(vec![1]))).collect();
        let nonverifiable = BTreeMap::from([(b"compliance/flag/\x00x".to_vec(), None)]);
        let out = rows(7, &verifiable, &nonverifiable);
        let lists: Vec<&(Vec<u8>, Vec<u8>)> = out.iter().filter(|(k, _)| k.starts_with(C)).collect();
        assert_eq!(lists.len(), 2, "two rows for {} keys", CHANGED_PER_ROW + 11);
        let keys: Vec<(u8, Vec<u8>)> = lists.iter().flat_map(|(_, v)| parse_changed(v).unwrap()).collect();
        let want: Vec<(u8, Vec<u8>)> =
            verifiable.keys().map(|k| (b'v', k.as_bytes().to_vec())).chain(std::iter::once((b'n', b"compliance/flag/\x00x".to_vec()))).collect();
        assert_eq!(keys, want);
        assert!(parse_changed(&[b'v', 0, 0, 0, 9, b'a']).is_err(), "a truncated list is refused");
    }

    #[tokio::test]
    async fn pruning_reads_what_each_height_changed_in_either_layout() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::load(dir.path().to_path_buf()).await.unwrap();
        // Heights 1 and 2 as the per-key layout recorded them, 3 and 4 as this one does; the
        // key changes at every height, so each entry but the newest is superseded.
        let key = b"app/x".to_vec();
        let mut written = vec![(START.to_vec(), 1u64.to_be_bytes().to_vec()), (FLOOR.to_vec(), 1u64.to_be_bytes().to_vec())];
        for h in 1..=4u64 {
            written.push((entry_key(V, &key, h), vec![1, h as u8]));
            if h <= 2 {
                let mut m = H.to_vec();
                m.extend_from_slice(&h.to_be_bytes());
                m.push(b'v');
                m.extend_from_slice(&key);
                written.push((m, Vec::new()));
            } else {
                let verifiable = BTreeMap::from([("app/x".to_string(), Some(vec![h as u8]))]);
                written.extend(rows(h, &verifiable, &BTreeMap::new()));
            }
        }
        commit(&storage, written).await;
        // At height 6 keeping 2: heights 1 to 3 are at or below the horizon (4); their entries
        // are superseded by height 4's, and their change lists go.
        let snap = storage.latest_snapshot();
        let out = upkeep(&snap, 6, Retention::Recent(2)).await.unwrap();
        let mut delta = StateDelta::new(snap);
        for (k, v) in out {
            match v {
                Some(v) => delta.nonverifiable_put_raw(k, v),
                None => delta.nonverifiable_delete(k),
            }
        }
        storage.commit(delta).await.unwrap();
        let snap = storage.latest_snapshot();
        let heights: Vec<u64> = all(&snap, V).await.iter().filter_map(|k| parse_entry(&k[V.len()..]).map(|(_, h)| h)).collect();
        assert_eq!(heights, vec![4], "the superseded entries of both layouts are pruned");
        assert!(all(&snap, H).await.is_empty(), "the per-key markers are gone");
        let lists = all(&snap, C).await;
        assert_eq!(lists.len(), 1, "only height 4's change list is left");
        assert!(lists[0].starts_with(&[C, &4u64.to_be_bytes()].concat()));
        assert_eq!(u64_at(snap.nonverifiable_get_raw(FLOOR).await.unwrap()).unwrap(), Some(4));
    }
}

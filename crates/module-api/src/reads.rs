//! What a run actually read: [`Recording`] wraps a state and logs every read that reaches it
//! (point reads with the value they found, prefix scans with the entries they consumed) in a
//! [`ReadLog`].
//!
//! A verdict is a function of what it read. So a verdict reached on one state still stands on
//! another when every logged read finds there what it found before: the admission recheck and
//! the checks of a proposal decide "still valid" from the log (`lantau_app::footprint`), not
//! from a list of the keys some rule is believed to read.
//!
//! Reads served from an overlay stacked on the recording (a key the run itself wrote) never
//! reach it and are not logged: they depend on the run's own writes, not on the state below.
//! A gate that cannot change the verdict (an advisory one) reads under [`ReadLog::unlogged`],
//! so a key only it reads does not make every verdict that met it stale.
//!
//! A key whose value is a record of several parts (an address's balances, one per denom) can
//! be logged by the parts a run took from it instead of whole ([`PartRead`]): the module that
//! owns the record finds the run's log ([`log_of`]), reads the record unlogged and logs each
//! part with a function that takes that part from any value of the key. A change to another
//! part of the record then leaves the run's verdict standing.

use std::any::Any;
use std::ops::RangeBounds;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cnidarium::StateRead;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

/// A key in one of the two stores.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StoreKey {
    /// The verifiable (JMT) store.
    Verifiable(String),
    /// The non-verifiable store.
    NonVerifiable(Vec<u8>),
}

/// Which kind of scan a run made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanOf {
    /// `prefix_raw`: keys and values of the verifiable store.
    Raw(String),
    /// `prefix_keys`: keys of the verifiable store (values logged empty).
    Keys(String),
    /// `nonverifiable_prefix_raw`.
    NonVerifiable(Vec<u8>),
}

/// How a part is taken from a key's value: `(value, part)` gives what the run would take from
/// that value (`None` when the value cannot be read as the record). The function must give
/// everything about the value the run's outcome depends on, the gas of reading it included.
pub type Extract = fn(Option<&[u8]>, &[u8]) -> Option<Vec<u8>>;

/// A part of a verifiable key's value that a run took, and what it found there.
#[derive(Debug, Clone)]
pub struct PartRead {
    /// The key.
    pub key: String,
    /// Which part (the owning module's name for it, such as a denom).
    pub part: Vec<u8>,
    /// What `extract` gave on the value the run read.
    pub found: Option<Vec<u8>>,
    /// How the part is taken from a value of the key.
    pub extract: Extract,
}

/// Two part reads are equal when they read the same part and found the same (the extractor
/// belongs to the key's owner, one per kind of record).
impl PartialEq for PartRead {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.part == other.part && self.found == other.found
    }
}

impl Eq for PartRead {}

impl PartRead {
    /// Whether the part holds on `state` what it held (a failed read is a store fault,
    /// reported, and counts as changed).
    async fn holds_on<S: StateRead>(&self, state: &S) -> bool {
        match state.get_raw(&self.key).await {
            Ok(now) => (self.extract)(now.as_deref(), &self.part) == self.found,
            Err(e) => {
                crate::store::fault(format_args!("reading {}", self.key), e);
                false
            }
        }
    }
}

/// The object key under which a [`Recording`] answers with its log
/// (`Arc<ReadLog>`), for a module that logs the parts of a record itself ([`log_of`]).
pub const LOG_OBJECT: &str = "lantau/reads/log";

/// The log the reads of `state` go into, when they are logged (the state is, or stands on, a
/// [`Recording`]).
pub fn log_of<S: StateRead + ?Sized>(state: &S) -> Option<Arc<ReadLog>> {
    state.object_get::<Arc<ReadLog>>(LOG_OBJECT)
}

/// A prefix scan and what of it the run consumed, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The scan.
    pub of: ScanOf,
    /// The entries the run took from it.
    pub entries: Vec<(Vec<u8>, Vec<u8>)>,
    /// The run read it to its end (it met the end of the stream, not only its first entries).
    pub ended: bool,
}

/// Everything a run read from the state below it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadSet {
    /// Point reads, with the value each found (the first read of a key; later reads of the
    /// same key below the run find the same value).
    pub points: Vec<(StoreKey, Option<Vec<u8>>)>,
    /// Prefix scans.
    pub scans: Vec<Scan>,
    /// Parts of records (the first read of each part).
    pub parts: Vec<PartRead>,
    /// The run made a read the log cannot compare later (a range scan, a failed read): a
    /// verdict with such a read is never taken as still valid.
    pub opaque: bool,
}

/// The log a [`Recording`] writes into. Shared by the recording and whoever asks a part of
/// the run to read unlogged.
#[derive(Debug, Default)]
pub struct ReadLog {
    set: parking_lot::Mutex<ReadSet>,
    paused: AtomicBool,
}

/// Logging resumes when this is dropped.
#[derive(Debug)]
pub struct Unlogged<'a>(&'a ReadLog, bool);

impl Drop for Unlogged<'_> {
    fn drop(&mut self) {
        self.0.paused.store(self.1, Ordering::Release);
    }
}

impl ReadLog {
    /// An empty log.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Reads until the returned guard is dropped are not logged (a part of the run whose
    /// outcome cannot change the verdict).
    pub fn unlogged(&self) -> Unlogged<'_> {
        Unlogged(self, self.paused.swap(true, Ordering::AcqRel))
    }

    fn logging(&self) -> bool {
        !self.paused.load(Ordering::Acquire)
    }

    fn point(&self, key: StoreKey, value: &anyhow::Result<Option<Vec<u8>>>) {
        if !self.logging() {
            return;
        }
        let mut set = self.set.lock();
        match value {
            Ok(v) => {
                if !set.points.iter().any(|(k, _)| *k == key) {
                    set.points.push((key, v.clone()));
                }
            }
            Err(_) => set.opaque = true,
        }
    }

    /// Logs that the run took `part` of the record under `key` and found `found` there (the
    /// first read of a part is kept). Nothing is logged while unlogged.
    pub fn part(&self, key: &str, part: &[u8], found: Option<Vec<u8>>, extract: Extract) {
        if !self.logging() {
            return;
        }
        let mut set = self.set.lock();
        if !set.parts.iter().any(|p| p.key == key && p.part == part) {
            set.parts.push(PartRead { key: key.to_string(), part: part.to_vec(), found, extract });
        }
    }

    fn opaque(&self) {
        if self.logging() {
            self.set.lock().opaque = true;
        }
    }

    /// Starts logging a scan; `None` while unlogged.
    fn scan(self: &Arc<Self>, of: ScanOf) -> Option<ScanLog> {
        if !self.logging() {
            return None;
        }
        let mut set = self.set.lock();
        set.scans.push(Scan { of, entries: Vec::new(), ended: false });
        Some(ScanLog { log: self.clone(), index: set.scans.len().saturating_sub(1) })
    }

    /// What was logged so far.
    pub fn take(&self) -> ReadSet {
        std::mem::take(&mut *self.set.lock())
    }
}

struct ScanLog {
    log: Arc<ReadLog>,
    index: usize,
}

/// What a scan gave next.
enum Step {
    Entry(Vec<u8>, Vec<u8>),
    Failed,
    End,
}

impl ScanLog {
    fn entry(&self, step: Step) {
        let mut set = self.log.set.lock();
        match step {
            Step::Entry(k, v) => {
                if let Some(s) = set.scans.get_mut(self.index) {
                    s.entries.push((k, v));
                }
            }
            Step::Failed => set.opaque = true,
            Step::End => {
                if let Some(s) = set.scans.get_mut(self.index) {
                    s.ended = true;
                }
            }
        }
    }
}

/// A state whose reads are logged (see the module's notes).
#[derive(Debug)]
pub struct Recording<S> {
    inner: S,
    log: Arc<ReadLog>,
}

impl<S> Recording<S> {
    /// Logs the reads of `inner` into `log`.
    pub fn new(inner: S, log: Arc<ReadLog>) -> Self {
        Self { inner, log }
    }

    /// The state read.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

fn logged_stream<T: Send + 'static>(
    inner: impl futures::Stream<Item = anyhow::Result<T>> + Send + 'static,
    log: Option<ScanLog>,
    entry: fn(&T) -> (Vec<u8>, Vec<u8>),
) -> BoxStream<'static, anyhow::Result<T>> {
    let Some(log) = log else { return inner.boxed() };
    let mut inner = Box::pin(inner);
    futures::stream::poll_fn(move |cx| {
        let item = std::task::ready!(inner.as_mut().poll_next(cx));
        log.entry(match &item {
            Some(Ok(t)) => {
                let (k, v) = entry(t);
                Step::Entry(k, v)
            }
            Some(Err(_)) => Step::Failed,
            None => Step::End,
        });
        std::task::Poll::Ready(item)
    })
    .boxed()
}

impl<S: StateRead> StateRead for Recording<S> {
    type GetRawFut = BoxFuture<'static, anyhow::Result<Option<Vec<u8>>>>;
    type PrefixRawStream = BoxStream<'static, anyhow::Result<(String, Vec<u8>)>>;
    type PrefixKeysStream = BoxStream<'static, anyhow::Result<String>>;
    type NonconsensusPrefixRawStream = BoxStream<'static, anyhow::Result<(Vec<u8>, Vec<u8>)>>;
    type NonconsensusRangeRawStream = S::NonconsensusRangeRawStream;

    fn get_raw(&self, key: &str) -> Self::GetRawFut {
        let read = self.inner.get_raw(key);
        let (log, key) = (self.log.clone(), StoreKey::Verifiable(key.to_string()));
        async move {
            let v = read.await;
            log.point(key, &v);
            v
        }
        .boxed()
    }

    fn nonverifiable_get_raw(&self, key: &[u8]) -> Self::GetRawFut {
        let read = self.inner.nonverifiable_get_raw(key);
        let (log, key) = (self.log.clone(), StoreKey::NonVerifiable(key.to_vec()));
        async move {
            let v = read.await;
            log.point(key, &v);
            v
        }
        .boxed()
    }

    fn object_get<T: Any + Send + Sync + Clone>(&self, key: &'static str) -> Option<T> {
        if key == LOG_OBJECT {
            return (&self.log as &dyn Any).downcast_ref::<T>().cloned();
        }
        self.inner.object_get(key)
    }

    fn object_type(&self, key: &'static str) -> Option<std::any::TypeId> {
        if key == LOG_OBJECT {
            return Some(std::any::TypeId::of::<Arc<ReadLog>>());
        }
        self.inner.object_type(key)
    }

    fn prefix_raw(&self, prefix: &str) -> Self::PrefixRawStream {
        logged_stream(self.inner.prefix_raw(prefix), self.log.scan(ScanOf::Raw(prefix.to_string())), |(k, v)| (k.as_bytes().to_vec(), v.clone()))
    }

    fn prefix_keys(&self, prefix: &str) -> Self::PrefixKeysStream {
        logged_stream(self.inner.prefix_keys(prefix), self.log.scan(ScanOf::Keys(prefix.to_string())), |k| (k.as_bytes().to_vec(), Vec::new()))
    }

    fn nonverifiable_prefix_raw(&self, prefix: &[u8]) -> Self::NonconsensusPrefixRawStream {
        logged_stream(self.inner.nonverifiable_prefix_raw(prefix), self.log.scan(ScanOf::NonVerifiable(prefix.to_vec())), |e| e.clone())
    }

    fn nonverifiable_range_raw(&self, prefix: Option<&[u8]>, range: impl RangeBounds<Vec<u8>>) -> anyhow::Result<Self::NonconsensusRangeRawStream> {
        self.log.opaque();
        self.inner.nonverifiable_range_raw(prefix, range)
    }
}

impl ReadSet {
    /// Whether every read finds on `state` what it found when it was logged; `skip` names
    /// point reads and part reads (by their index in `points`, then `points.len()` plus their
    /// index in `parts`, and key) the caller need not compare. A read that fails on `state` is
    /// a store fault (reported) and counts as changed.
    pub async fn holds_on<S: StateRead>(&self, state: &S, skip: impl Fn(usize, &StoreKey) -> bool) -> bool {
        if self.opaque {
            return false;
        }
        for (i, (k, then)) in self.points.iter().enumerate() {
            if skip(i, k) {
                continue;
            }
            let now = match k {
                StoreKey::Verifiable(k) => state.get_raw(k).await,
                StoreKey::NonVerifiable(k) => state.nonverifiable_get_raw(k).await,
            };
            match now {
                Ok(now) if now == *then => {}
                Ok(_) => return false,
                Err(e) => {
                    crate::store::fault(format_args!("reading {k:?}"), e);
                    return false;
                }
            }
        }
        for (i, p) in self.parts.iter().enumerate() {
            if !skip(self.points.len().saturating_add(i), &StoreKey::Verifiable(p.key.clone())) && !p.holds_on(state).await {
                return false;
            }
        }
        for s in &self.scans {
            if !s.holds_on(state).await {
                return false;
            }
        }
        true
    }
}

impl Scan {
    async fn holds_on<S: StateRead>(&self, state: &S) -> bool {
        // The entries consumed, and when the run met the end, that nothing follows them.
        let want = if self.ended { self.entries.len().saturating_add(1) } else { self.entries.len() };
        let now: Vec<anyhow::Result<(Vec<u8>, Vec<u8>)>> = match &self.of {
            ScanOf::Raw(p) => state.prefix_raw(p).take(want).map(|r| r.map(|(k, v)| (k.into_bytes(), v))).collect().await,
            ScanOf::Keys(p) => state.prefix_keys(p).take(want).map(|r| r.map(|k| (k.into_bytes(), Vec::new()))).collect().await,
            ScanOf::NonVerifiable(p) => state.nonverifiable_prefix_raw(p).take(want).collect().await,
        };
        if now.len() != self.entries.len() {
            return false;
        }
        now.into_iter().zip(&self.entries).all(|(n, then)| matches!(n, Ok(n) if n == *then))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use cnidarium::{StateDelta, StateWrite, Storage};

    #[tokio::test]
    async fn reads_are_logged_with_their_values_and_compared_later() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
        let mut d = StateDelta::new(storage.latest_snapshot());
        d.put_raw("a/1".into(), b"x".to_vec());
        d.put_raw("a/2".into(), b"y".to_vec());
        d.put_raw("b".into(), b"z".to_vec());

        let log = ReadLog::new();
        let rec = Recording::new(&d, log.clone());
        assert_eq!(rec.get_raw("b").await.unwrap(), Some(b"z".to_vec()));
        assert_eq!(rec.get_raw("none").await.unwrap(), None);
        {
            let _quiet = log.unlogged();
            rec.get_raw("advisory").await.unwrap();
        }
        let first: Vec<_> = rec.prefix_raw("a/").take(1).collect().await;
        assert_eq!(first.len(), 1);
        let set = log.take();
        assert_eq!(set.points.len(), 2, "{set:?}");
        assert_eq!(set.scans[0].entries.len(), 1);
        assert!(!set.scans[0].ended);
        assert!(set.holds_on(&d, |_, _| false).await);

        // A write to a key the scan did not consume, or one nobody read: still holds.
        d.put_raw("a/2".into(), b"other".to_vec());
        d.put_raw("advisory".into(), b"1".to_vec());
        assert!(set.holds_on(&d, |_, _| false).await);
        // A key read now holds something else; a key read as absent now exists.
        let mut d2 = StateDelta::new(&d);
        d2.put_raw("none".into(), b"1".to_vec());
        assert!(!set.holds_on(&d2, |_, _| false).await);
        assert!(set.holds_on(&d2, |_, k| *k == StoreKey::Verifiable("none".into())).await);
        let mut d3 = StateDelta::new(&d);
        d3.put_raw("a/0".into(), b"first".to_vec());
        assert!(!set.holds_on(&d3, |_, _| false).await, "the scan's first entry changed");
        storage.release().await;
    }

    /// Takes the byte at index `part[0]` of a value.
    fn byte_at(v: Option<&[u8]>, part: &[u8]) -> Option<Vec<u8>> {
        Some(v.and_then(|v| v.get(usize::from(*part.first()?))).map(|b| vec![*b]).unwrap_or_default())
    }

    #[tokio::test]
    async fn a_record_read_by_its_parts_is_compared_by_those_parts() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
        let mut d = StateDelta::new(storage.latest_snapshot());
        d.put_raw("r".into(), b"xy".to_vec());

        let log = ReadLog::new();
        let rec = Recording::new(&d, log.clone());
        // A run standing on the recording finds its log; a state without one finds none.
        let run = StateDelta::new(&rec);
        let found = log_of(&run).expect("the recording's log");
        assert!(Arc::ptr_eq(&found, &log));
        assert!(log_of(&d).is_none());
        // The owner reads the record unlogged and logs the part it took (the first read of a
        // part is kept).
        let v = {
            let _q = found.unlogged();
            run.get_raw("r").await.unwrap()
        };
        found.part("r", &[0], byte_at(v.as_deref(), &[0]), byte_at);
        found.part("r", &[0], Some(b"other".to_vec()), byte_at);
        {
            let _q = found.unlogged();
            found.part("r", &[1], None, byte_at);
        }
        let set = log.take();
        assert!(set.points.is_empty(), "{set:?}");
        assert_eq!(set.parts.len(), 1);
        assert_eq!(set.parts[0].found, Some(b"x".to_vec()));
        assert!(set.holds_on(&d, |_, _| false).await);

        // Another part changes: still holds. The part read changes: stale (unless skipped).
        let mut d2 = StateDelta::new(&d);
        d2.put_raw("r".into(), b"xz".to_vec());
        assert!(set.holds_on(&d2, |_, _| false).await);
        let mut d3 = StateDelta::new(&d);
        d3.put_raw("r".into(), b"wy".to_vec());
        assert!(!set.holds_on(&d3, |_, _| false).await);
        assert!(set.holds_on(&d3, |i, k| i == 0 && *k == StoreKey::Verifiable("r".into())).await);
        storage.release().await;
    }
}

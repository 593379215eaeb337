//! State sync (ABCI++ ListSnapshots, LoadSnapshotChunk, OfferSnapshot, ApplySnapshotChunk).
//!
//! **Taking.** Every `interval` heights, after the commit, a background task reads the committed
//! state at that height (a store snapshot: it pins the version, the node goes on
//! committing) and writes snapshot format [`FORMAT`] to `<dir>/<height>/`:
//!
//! - the content, in order: every verifiable key and value (key order), then the
//!   non-verifiable records the modules declare ([`crate::modules::snapshot_nonverifiable_prefixes`]:
//!   the audit log's rows, the anchored Travel Rule payloads), each prefix in key order. The
//!   node's own indexes (tx search, blocks, audit indexes) stay out: a restored node rebuilds
//!   the audit indexes from the rows and has no history before the snapshot, as a CometBFT
//!   node restored by state sync has no blocks before it;
//! - cut into chunks of about `chunk_bytes` (a protobuf [`Chunk`] each, `chunk-<i>`);
//! - `metadata` (the ABCI field) is a protobuf [`Metadata`]: the sha256 of each chunk; the
//!   snapshot's `hash` is the sha256 of `metadata`. Every node that takes the snapshot of one
//!   height writes the same bytes, so CometBFT may fetch chunks from any of them.
//!
//! The last `keep_recent` snapshots are kept; a snapshot is written under a temporary name and
//! renamed once complete, so a crash never leaves half a snapshot listed.
//!
//! **Restoring** (a node with no state): OfferSnapshot checks the format and that `metadata`
//! hashes to `hash` and lists `chunks` hashes; each ApplySnapshotChunk checks the chunk's
//! sha256 against the list (a mismatch asks CometBFT to refetch it and to reject the peer that
//! sent it); the last chunk's arrival writes the whole state in one overlay, runs each module's
//! restore check (the audit rows must chain to the verifiable head), computes the root and
//! commits only if it equals the app hash CometBFT's light client verified. Anything wrong
//! rejects the snapshot with nothing written, so CometBFT can try another.
//!
//! Restored state is version 0 of the store at height `h`; the non-verifiable
//! [`crate::state_key::VERSION_BASE`] records `h`, and version `v` is height `h + v`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cnidarium::{StateDelta, StateRead, StateWrite};
use futures::StreamExt;
use lantau_store::Snapshot;
use tendermint::abci::{request, response};
use tendermint::block::Height as TmHeight;

use crate::admission::Admission;
use crate::shared::Shared;
use crate::state_key;
use crate::storage::Store;
use sha2::{Digest, Sha256};

/// The one snapshot format this node writes and reads.
pub const FORMAT: u32 = 1;
/// Default size a chunk is cut at (CometBFT's state-sync channel carries up to 16 MB).
pub const DEFAULT_CHUNK_BYTES: usize = 4 << 20;

/// One key and value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Entry {
    /// The key (UTF-8 for verifiable keys).
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    /// The value.
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

/// One chunk of a format-1 snapshot.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Chunk {
    /// Verifiable keys, in key order.
    #[prost(message, repeated, tag = "1")]
    pub verifiable: Vec<Entry>,
    /// Non-verifiable records of the modules.
    #[prost(message, repeated, tag = "2")]
    pub nonverifiable: Vec<Entry>,
}

/// A format-1 snapshot's ABCI `metadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Metadata {
    /// The sha256 of each chunk, in order.
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub chunk_hashes: Vec<Vec<u8>>,
}

/// What `<dir>/<height>/snapshot` holds: the ABCI description of the snapshot.
#[derive(Clone, PartialEq, prost::Message)]
struct Descriptor {
    #[prost(uint64, tag = "1")]
    height: u64,
    #[prost(uint32, tag = "2")]
    format: u32,
    #[prost(uint32, tag = "3")]
    chunks: u32,
    #[prost(bytes = "vec", tag = "4")]
    hash: Vec<u8>,
    #[prost(bytes = "vec", tag = "5")]
    metadata: Vec<u8>,
}

/// Node-local settings (`[state_sync]` in the node config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSettings {
    /// Where snapshots are written.
    pub dir: PathBuf,
    /// Take one every `interval` heights (0: never).
    pub interval: u64,
    /// How many to keep (at least 1).
    pub keep_recent: usize,
    /// Size a chunk is cut at.
    pub chunk_bytes: usize,
}

/// A snapshot as ListSnapshots describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The height whose committed state it holds.
    pub height: u64,
    /// [`FORMAT`].
    pub format: u32,
    /// Number of chunks.
    pub chunks: u32,
    /// sha256 of `metadata`.
    pub hash: Vec<u8>,
    /// A protobuf [`Metadata`].
    pub metadata: Vec<u8>,
}

/// Takes, keeps and serves this node's snapshots.
#[derive(Debug)]
pub struct Snapshotter {
    settings: SnapshotSettings,
    busy: AtomicBool,
}

impl Snapshotter {
    /// A snapshotter writing under `settings.dir` (created when needed).
    pub fn new(settings: SnapshotSettings) -> Arc<Self> {
        Arc::new(Self { settings, busy: AtomicBool::new(false) })
    }

    /// The settings.
    pub fn settings(&self) -> &SnapshotSettings {
        &self.settings
    }

    /// Called after each commit: starts taking a snapshot of `snap` (the state after block
    /// `height`) in the background when `height` is a multiple of the interval and no other
    /// snapshot is being written. Never blocks the commit.
    pub fn after_commit(self: &Arc<Self>, snap: Snapshot, height: u64) {
        let interval = self.settings.interval;
        if interval == 0 || height == 0 || !height.is_multiple_of(interval) {
            return;
        }
        if self.busy.swap(true, Ordering::AcqRel) {
            tracing::warn!(height, "a snapshot is still being written; skipping this one");
            return;
        }
        let this = self.clone();
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            self.busy.store(false, Ordering::Release);
            return;
        };
        rt.spawn(async move {
            match this.take(&snap, height).await {
                Ok(info) => tracing::info!(height, chunks = info.chunks, "state-sync snapshot written"),
                Err(e) => tracing::error!(height, error = %e, "state-sync snapshot failed"),
            }
            this.busy.store(false, Ordering::Release);
        });
    }

    /// Whether a snapshot is being written now.
    pub fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// Writes the snapshot of `snap` (the state after block `height`) and prunes old ones.
    pub async fn take(&self, snap: &Snapshot, height: u64) -> anyhow::Result<SnapshotInfo> {
        let dir = &self.settings.dir;
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!("{height}.tmp"));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)?;
        let chunks = encode_state(snap, self.settings.chunk_bytes.max(1024)).await?;
        let mut hashes = Vec::with_capacity(chunks.len());
        for (i, c) in chunks.iter().enumerate() {
            std::fs::write(tmp.join(format!("chunk-{i}")), c)?;
            hashes.push(Sha256::digest(c).to_vec());
        }
        let metadata = prost::Message::encode_to_vec(&Metadata { chunk_hashes: hashes });
        let info = SnapshotInfo { height, format: FORMAT, chunks: u32::try_from(chunks.len())?, hash: Sha256::digest(&metadata).to_vec(), metadata };
        let d = Descriptor { height, format: info.format, chunks: info.chunks, hash: info.hash.clone(), metadata: info.metadata.clone() };
        std::fs::write(tmp.join("snapshot"), prost::Message::encode_to_vec(&d))?;
        let done = dir.join(height.to_string());
        let _ = std::fs::remove_dir_all(&done);
        std::fs::rename(&tmp, &done)?;
        self.prune()?;
        Ok(info)
    }

    fn heights(&self) -> Vec<u64> {
        let Ok(rd) = std::fs::read_dir(&self.settings.dir) else { return vec![] };
        let mut hs: Vec<u64> = rd.filter_map(|e| e.ok()).filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u64>().ok())).collect();
        hs.sort_unstable();
        hs
    }

    fn prune(&self) -> anyhow::Result<()> {
        let hs = self.heights();
        let keep = self.settings.keep_recent.max(1);
        let drop = hs.len().saturating_sub(keep);
        for h in hs.iter().take(drop) {
            std::fs::remove_dir_all(self.settings.dir.join(h.to_string()))?;
        }
        Ok(())
    }

    /// The complete snapshots on disk, newest first.
    pub fn list(&self) -> Vec<SnapshotInfo> {
        let mut out = Vec::new();
        for h in self.heights().into_iter().rev() {
            let path = self.settings.dir.join(h.to_string()).join("snapshot");
            let Ok(bytes) = std::fs::read(&path) else { continue };
            match <Descriptor as prost::Message>::decode(bytes.as_slice()) {
                Ok(d) if d.height == h => out.push(SnapshotInfo { height: d.height, format: d.format, chunks: d.chunks, hash: d.hash, metadata: d.metadata }),
                _ => tracing::warn!(path = %path.display(), "unreadable snapshot description; not offered"),
            }
        }
        out
    }

    /// One chunk's bytes; empty when this node does not have it (the ABCI convention).
    pub fn load_chunk(&self, height: u64, format: u32, index: u32) -> Vec<u8> {
        if format != FORMAT {
            return Vec::new();
        }
        std::fs::read(chunk_path(&self.settings.dir, height, index)).unwrap_or_default()
    }
}

fn chunk_path(dir: &Path, height: u64, index: u32) -> PathBuf {
    dir.join(height.to_string()).join(format!("chunk-{index}"))
}

/// The snapshot content of a committed state, cut into encoded chunks.
async fn encode_state(snap: &Snapshot, chunk_bytes: usize) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut cur = Chunk::default();
    let mut size = 0usize;
    let mut flush = |cur: &mut Chunk, size: &mut usize, force: bool| {
        if (*size >= chunk_bytes || force) && (!cur.verifiable.is_empty() || !cur.nonverifiable.is_empty() || out.is_empty()) {
            out.push(prost::Message::encode_to_vec(&*cur));
            *cur = Chunk::default();
            *size = 0;
        }
    };
    {
        let mut stream = std::pin::pin!(snap.prefix_raw(""));
        while let Some(item) = stream.next().await {
            let (k, v) = item?;
            size = size.saturating_add(k.len()).saturating_add(v.len()).saturating_add(8);
            cur.verifiable.push(Entry { key: k.into_bytes(), value: v });
            flush(&mut cur, &mut size, false);
        }
    }
    for prefix in crate::modules::snapshot_nonverifiable_prefixes() {
        let mut stream = std::pin::pin!(snap.nonverifiable_prefix_raw(prefix));
        while let Some(item) = stream.next().await {
            let (k, v) = item?;
            size = size.saturating_add(k.len()).saturating_add(v.len()).saturating_add(8);
            cur.nonverifiable.push(Entry { key: k, value: v });
            flush(&mut cur, &mut size, false);
        }
    }
    flush(&mut cur, &mut size, true);
    Ok(out)
}

/// A restore in progress (between an accepted OfferSnapshot and its last chunk).
pub(crate) struct Restore {
    pub(crate) height: u64,
    pub(crate) app_hash: Vec<u8>,
    pub(crate) hashes: Vec<[u8; 32]>,
    /// Verified chunks not yet applied (CometBFT applies in order; kept until contiguous).
    pub(crate) pending: BTreeMap<u32, Vec<u8>>,
    pub(crate) next: u32,
    pub(crate) chunks: Vec<Chunk>,
}

impl Restore {
    /// Checks an offered snapshot's description; `Err` says why it is refused.
    pub(crate) fn offer(height: u64, format: u32, chunks: u32, hash: &[u8], metadata: &[u8], app_hash: &[u8]) -> Result<Self, OfferRefusal> {
        if format != FORMAT {
            return Err(OfferRefusal::Format);
        }
        if height == 0 || chunks == 0 {
            return Err(OfferRefusal::Invalid(format!("height {height} with {chunks} chunks")));
        }
        if Sha256::digest(metadata).as_slice() != hash {
            return Err(OfferRefusal::Invalid("the metadata does not hash to the snapshot hash".into()));
        }
        let m = <Metadata as prost::Message>::decode(metadata).map_err(|e| OfferRefusal::Invalid(format!("metadata: {e}")))?;
        if m.chunk_hashes.len() != chunks as usize {
            return Err(OfferRefusal::Invalid(format!("the metadata lists {} chunk hashes for {chunks} chunks", m.chunk_hashes.len())));
        }
        let hashes = m
            .chunk_hashes
            .iter()
            .map(|h| <[u8; 32]>::try_from(h.as_slice()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| OfferRefusal::Invalid("a chunk hash is not 32 bytes".into()))?;
        Ok(Self { height, app_hash: app_hash.to_vec(), hashes, pending: BTreeMap::new(), next: 0, chunks: Vec::new() })
    }

    /// Takes a chunk: `Ok(true)` once every chunk has arrived.
    pub(crate) fn accept(&mut self, index: u32, bytes: Vec<u8>) -> Result<bool, ChunkRefusal> {
        let Some(want) = self.hashes.get(index as usize) else {
            return Err(ChunkRefusal::Snapshot(format!("chunk {index} of {}", self.hashes.len())));
        };
        if Sha256::digest(&bytes).as_slice() != want.as_slice() {
            return Err(ChunkRefusal::Refetch);
        }
        if index >= self.next {
            self.pending.insert(index, bytes);
        }
        while let Some(b) = self.pending.remove(&self.next) {
            let c = <Chunk as prost::Message>::decode(b.as_slice()).map_err(|e| ChunkRefusal::Snapshot(format!("chunk {}: {e}", self.next)))?;
            self.chunks.push(c);
            self.next = self.next.saturating_add(1);
        }
        Ok(self.next as usize == self.hashes.len())
    }
}

/// Why an offered snapshot is refused.
#[derive(Debug)]
pub(crate) enum OfferRefusal {
    /// Not [`FORMAT`].
    Format,
    /// Inconsistent description.
    Invalid(String),
}

/// Why a chunk is refused.
#[derive(Debug)]
pub(crate) enum ChunkRefusal {
    /// Its hash is not the listed one: fetch it again from another peer.
    Refetch,
    /// The snapshot itself is bad.
    Snapshot(String),
}

/// The height of version 0 of a store (0 unless it was restored from a snapshot).
pub(crate) async fn version_base<S: StateRead>(s: &S) -> anyhow::Result<u64> {
    Ok(match s.nonverifiable_get_raw(crate::state_key::VERSION_BASE.as_bytes()).await? {
        Some(b) => u64::from_be_bytes(b.as_slice().try_into().map_err(|_| anyhow::anyhow!("corrupt {}", crate::state_key::VERSION_BASE))?),
        None => 0,
    })
}

// === The ABCI state-sync connection ===

/// This node's snapshots and a restore in progress.
#[derive(Default)]
pub(crate) struct StateSync {
    /// This node's state-sync snapshots, when it takes them.
    snapshots: std::sync::OnceLock<Arc<Snapshotter>>,
    /// A state-sync restore in progress.
    restore: tokio::sync::Mutex<Option<Restore>>,
}

impl StateSync {
    /// After a commit of `height`: a snapshot when one is due.
    pub(crate) fn after_commit(&self, store: &Store, height: u64) {
        if let Some(s) = self.snapshots.get() {
            s.after_commit(store.snapshot(), height);
        }
    }

    /// Starts taking state-sync snapshots after commits (node-local; once, before serving).
    pub(crate) fn enable(&self, settings: SnapshotSettings) -> Arc<Snapshotter> {
        self.snapshots.get_or_init(|| Snapshotter::new(settings)).clone()
    }

    /// ABCI ListSnapshots: the complete snapshots this node keeps, newest first.
    pub(crate) fn list(&self) -> response::ListSnapshots {
        let snapshots = self.snapshots.get().map(|s| s.list()).unwrap_or_default();
        response::ListSnapshots {
            snapshots: snapshots
                .into_iter()
                .filter_map(|s| {
                    Some(tendermint::abci::types::Snapshot {
                        height: TmHeight::try_from(s.height).ok()?,
                        format: s.format,
                        chunks: s.chunks,
                        hash: s.hash.into(),
                        metadata: s.metadata.into(),
                    })
                })
                .collect(),
        }
    }

    /// ABCI LoadSnapshotChunk: a chunk's bytes, empty when this node does not have it.
    pub(crate) fn load_chunk(&self, req: request::LoadSnapshotChunk) -> response::LoadSnapshotChunk {
        let chunk = self.snapshots.get().map(|s| s.load_chunk(req.height.value(), req.format, req.chunk)).unwrap_or_default();
        response::LoadSnapshotChunk { chunk: chunk.into() }
    }

    /// ABCI OfferSnapshot: accepts a snapshot of format [`crate::statesync::FORMAT`] whose
    /// description is consistent, on a node that has no state yet (a later offer replaces an
    /// unfinished restore).
    pub(crate) async fn offer(&self, store: &Store, req: request::OfferSnapshot) -> response::OfferSnapshot {
        if store.storage().latest_version() != u64::MAX {
            tracing::warn!(height = req.snapshot.height.value(), "snapshot offered to a node that already has state; refused");
            return response::OfferSnapshot::Reject;
        }
        let s = &req.snapshot;
        match Restore::offer(s.height.value(), s.format, s.chunks, &s.hash, &s.metadata, req.app_hash.as_bytes()) {
            Ok(r) => {
                tracing::info!(height = r.height, chunks = s.chunks, "restoring from a state-sync snapshot");
                *self.restore.lock().await = Some(r);
                response::OfferSnapshot::Accept
            }
            Err(OfferRefusal::Format) => response::OfferSnapshot::RejectFormat,
            Err(OfferRefusal::Invalid(why)) => {
                tracing::warn!(height = s.height.value(), why, "snapshot refused");
                response::OfferSnapshot::Reject
            }
        }
    }

    /// ABCI ApplySnapshotChunk. A chunk whose hash is not the listed one is refetched (and its
    /// sender rejected); once the last chunk arrives the state is checked against the offered
    /// app hash and committed, or the snapshot is rejected with nothing written.
    pub(crate) async fn apply_chunk(
        &self,
        shared: &Shared,
        store: &Store,
        admission: &Admission,
        req: request::ApplySnapshotChunk,
    ) -> response::ApplySnapshotChunk {
        use response::ApplySnapshotChunkResult as R;
        let answer = |result, refetch_chunks: Vec<u32>, reject_senders: Vec<String>| response::ApplySnapshotChunk { result, refetch_chunks, reject_senders };
        let mut guard = self.restore.lock().await;
        let Some(restore) = guard.as_mut() else {
            tracing::warn!(index = req.index, "snapshot chunk without an accepted offer");
            return answer(R::RetrySnapshot, vec![], vec![]);
        };
        match restore.accept(req.index, req.chunk.to_vec()) {
            Ok(false) => answer(R::Accept, vec![], vec![]),
            Err(ChunkRefusal::Refetch) => {
                tracing::warn!(index = req.index, sender = req.sender, "snapshot chunk does not match its hash; refetching");
                let senders = if req.sender.is_empty() { vec![] } else { vec![req.sender.clone()] };
                answer(R::Retry, vec![req.index], senders)
            }
            Err(ChunkRefusal::Snapshot(why)) => {
                tracing::warn!(why, "snapshot rejected");
                *guard = None;
                answer(R::RejectSnapshot, vec![], vec![])
            }
            Ok(true) => {
                let Some(done) = guard.take() else { return answer(R::RetrySnapshot, vec![], vec![]) };
                match finish_restore(shared, store, admission, done).await {
                    Ok(()) => answer(R::Accept, vec![], vec![]),
                    Err(why) => {
                        tracing::warn!(why, "snapshot rejected");
                        answer(R::RejectSnapshot, vec![], vec![])
                    }
                }
            }
        }
    }
}

/// Refuses a non-verifiable key outside the records the modules declare
/// ([`crate::modules::snapshot_nonverifiable_prefixes`]).
pub(crate) fn check_record_key(key: &[u8]) -> Result<(), String> {
    if crate::modules::snapshot_nonverifiable_prefixes().iter().any(|p| key.starts_with(p)) {
        Ok(())
    } else {
        Err(format!("a non-verifiable key outside the modules' records ({})", String::from_utf8_lossy(key)))
    }
}

/// What every restored state (a state-sync snapshot, an imported export) goes through once its
/// entries are written: it must hold the state of `height`; each module checks and rebuilds
/// what it derives (the audit rows must chain to the verifiable head, the records must match
/// the lattice); version 0 of the store is then recorded as that height.
pub(crate) async fn finish_restored(delta: &mut StateDelta<Snapshot>, height: u64, what: &str) -> Result<(), String> {
    let held = crate::storage::read_u64(&*delta, state_key::HEIGHT).await.map_err(|e| e.to_string())?.unwrap_or(0);
    if held != height {
        return Err(format!("the {what} of height {height} holds the state of height {held}"));
    }
    crate::modules::restore_snapshot(delta).await.map_err(|e| e.log)?;
    delta.nonverifiable_put_raw(state_key::VERSION_BASE.as_bytes().to_vec(), height.to_be_bytes().to_vec());
    Ok(())
}

/// Writes a complete snapshot's entries and commits them when their root is the app hash the
/// light client verified.
async fn finish_restore(shared: &Shared, store: &Store, admission: &Admission, r: Restore) -> Result<(), String> {
    let mut delta = StateDelta::new(store.snapshot());
    for c in r.chunks {
        for e in c.verifiable {
            let key = String::from_utf8(e.key).map_err(|_| "a verifiable key is not UTF-8".to_string())?;
            delta.put_raw(key, e.value);
        }
        for e in c.nonverifiable {
            check_record_key(&e.key)?;
            delta.nonverifiable_put_raw(e.key, e.value);
        }
    }
    finish_restored(&mut delta, r.height, "snapshot").await?;
    let batch = store.storage().prepare_commit(delta).await.map_err(|e| e.to_string())?;
    if batch.root_hash().0.as_slice() != r.app_hash.as_slice() {
        return Err(format!(
            "the restored state's root {} is not the app hash {} the light client verified",
            const_hex::encode(batch.root_hash().0),
            const_hex::encode(&r.app_hash)
        ));
    }
    store.storage().commit_batch(batch).map_err(|e| e.to_string())?;
    let snap = store.snapshot();
    let chain_id = match snap.get_raw(state_key::CHAIN_ID).await {
        Ok(Some(b)) => String::from_utf8(b).map_err(|e| format!("the restored chain id: {e}"))?,
        Ok(None) => String::new(),
        Err(e) => return Err(lantau_module_api::store::fault(format_args!("reading {}", state_key::CHAIN_ID), e).to_string()),
    };
    shared.set_chain_id(chain_id);
    store.reset_cache();
    admission.forget_blocks();
    admission.reset(store).await;
    tracing::info!(height = r.height, "state restored from a snapshot");
    Ok(())
}

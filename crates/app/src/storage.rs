//! The storage layer: the versioned store (`lantau_store`) with the node's read cache in front of it,
//! and the few records the app itself keeps about the chain (height, block time, block gas
//! limit, chain ids), read the same way by every part of the app.

use std::sync::Arc;

use cnidarium::StateRead;
use lantau_store::{Snapshot, Storage};

use crate::error::AppError;
use crate::history::StateView;
use crate::readcache::{CachedSnapshot, ReadCache};
use crate::state_key;

/// The store and its read cache.
pub(crate) struct Store {
    storage: Storage,
    /// Committed values of hot keys at the latest version (node-local; speed only).
    reads: Arc<ReadCache>,
}

impl Store {
    /// Wraps an opened storage, with a read cache that memoizes and keeps what the modules
    /// ask it to (`Module::MEMOIZED_SCANS`, `Module::CACHED_NONVERIFIABLE`,
    /// `Module::SPARSE_PREFIXES`).
    pub(crate) fn new(storage: Storage) -> Self {
        let reads = Arc::new(
            ReadCache::new(crate::readcache::MAX_ENTRIES)
                .memoizing_scans_of(&crate::modules::memoized_scans())
                .answering_from_scans(&crate::modules::sparse_prefixes(), crate::readcache::MAX_SPARSE_SCAN)
                .caching_nonverifiable(&crate::modules::cached_nonverifiable()),
        );
        reads.reset(storage.latest_version());
        Self { storage, reads }
    }

    /// The storage.
    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The read cache.
    pub(crate) fn reads(&self) -> &ReadCache {
        &self.reads
    }

    /// The read cache, shared (for work on another thread).
    pub(crate) fn reads_shared(&self) -> Arc<ReadCache> {
        self.reads.clone()
    }

    /// The latest committed snapshot.
    pub(crate) fn snapshot(&self) -> Snapshot {
        self.storage.latest_snapshot()
    }

    /// The latest committed snapshot, its verifiable point reads served by the read cache
    /// when it holds them (same values, fewer thread hand-offs).
    pub(crate) fn cached_snapshot(&self) -> CachedSnapshot {
        CachedSnapshot::new(self.storage.latest_snapshot(), self.reads.clone())
    }

    /// Forgets every cached read (the store moved to a version the cache did not follow).
    pub(crate) fn reset_cache(&self) {
        self.reads.reset(self.storage.latest_version());
    }

    /// The committed state after block `height` (`None`: the latest). `Ok(None)` when the
    /// height is in the future or its state is no longer held (the store keeps the recent
    /// versions; version `h` is the state after block `h`, version 0 the genesis state).
    /// Heights the store no longer keeps open come from the node's history
    /// ([`crate::history`]) when it holds them.
    pub(crate) async fn snapshot_at_height(&self, height: Option<u64>) -> Result<Option<StateView>, AppError> {
        let latest = self.snapshot();
        let Some(h) = height else { return Ok(Some(StateView::Live(latest))) };
        let last = height_at(&latest).await?;
        if h > last {
            return Ok(None);
        }
        if h == last {
            return Ok(Some(StateView::Live(latest)));
        }
        let base = crate::statesync::version_base(&latest).await.map_err(|e| AppError::Corrupt { key: state_key::VERSION_BASE, why: e.to_string() })?;
        if let Some(s) = h.checked_sub(base).and_then(|v| self.storage.snapshot(v)) {
            return Ok(Some(StateView::Live(s)));
        }
        Ok(crate::history::PastState::at(latest, h).await.map_err(AppError::store)?.map(StateView::Past))
    }

    /// The earliest height a query can ask for: the history's, or the oldest version
    /// the store keeps open.
    pub(crate) async fn earliest_height(&self) -> Result<u64, AppError> {
        let latest = self.snapshot();
        let last = height_at(&latest).await?;
        if let Some((earliest, _)) = crate::history::span(&latest).await.map_err(AppError::store)? {
            return Ok(earliest.min(last));
        }
        let base = crate::statesync::version_base(&latest).await.map_err(|e| AppError::Corrupt { key: state_key::VERSION_BASE, why: e.to_string() })?;
        let mut h = last;
        while h > base && self.storage.snapshot(h.saturating_sub(1).saturating_sub(base)).is_some() {
            h = h.saturating_sub(1);
        }
        Ok(h)
    }

    /// Shuts the store down.
    pub(crate) async fn release(self) {
        self.storage.release().await;
    }
}

/// A big-endian u64 record.
pub(crate) async fn read_u64<S: StateRead>(s: &S, key: &'static str) -> Result<Option<u64>, AppError> {
    Ok(match s.get_raw(key).await.map_err(AppError::store)? {
        Some(b) => Some(u64::from_be_bytes(b.as_slice().try_into().map_err(|_| AppError::Corrupt { key, why: format!("{} bytes, not 8", b.len()) })?)),
        None => None,
    })
}

/// The height of the last block in a state (0 before the first block).
pub(crate) async fn height_at<S: StateRead>(snap: &S) -> Result<u64, AppError> {
    Ok(read_u64(snap, state_key::HEIGHT).await?.unwrap_or(0))
}

/// The time of the last block in a state (genesis time before the first block).
pub(crate) async fn block_time_at<S: StateRead>(snap: &S) -> Result<time::OffsetDateTime, AppError> {
    let raw = match snap.get_raw(state_key::BLOCK_TIME).await.map_err(AppError::store)? {
        Some(b) => Some(b),
        None => snap.get_raw(state_key::GENESIS_TIME).await.map_err(AppError::store)?,
    };
    let corrupt = |why: String| AppError::Corrupt { key: state_key::BLOCK_TIME, why };
    let nanos = match raw {
        Some(b) => i128::from_be_bytes(b.as_slice().try_into().map_err(|_| corrupt(format!("{} bytes, not 16", b.len())))?),
        None => 0,
    };
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos).map_err(|e| corrupt(e.to_string()))
}

/// The consensus parameter `block.max_gas` in a state: the most gas (summed gas limits) one
/// block may carry; `None` when unlimited (-1).
pub(crate) async fn max_block_gas_at<S: StateRead>(snap: &S) -> Result<Option<u64>, AppError> {
    let raw = snap.get_raw(state_key::MAX_BLOCK_GAS).await.map_err(AppError::store)?;
    Ok(raw.and_then(|b| b.as_slice().try_into().ok().map(i64::from_be_bytes)).and_then(|g| u64::try_from(g).ok()))
}

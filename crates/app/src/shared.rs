//! What every part of the app reads beside the store: its limits, the chain id, the verified
//! signatures, the driver's hook and the gate traces this node keeps.

use std::sync::Arc;

use lantau_module_api::BlockCtx;
use lantau_proto::chain::compliance::v1::GateTrace;

use crate::config::AppConfig;
use crate::hooks::BlockHook;
use crate::sigcache::SigCache;
use crate::trace::TraceBuffer;

/// The app's shared parts.
pub(crate) struct Shared {
    /// The limits.
    pub(crate) cfg: AppConfig,
    /// Verified signatures.
    pub(crate) sigs: SigCache,
    /// The driver's hook (metrics, the tx index rows of each block).
    pub(crate) hook: Arc<dyn BlockHook>,
    /// The chain id (empty before InitChain).
    chain_id: parking_lot::RwLock<String>,
    /// Gate traces this node computed (TxTrace).
    traces: parking_lot::Mutex<TraceBuffer>,
}

impl Shared {
    pub(crate) fn new(cfg: AppConfig, hook: Arc<dyn BlockHook>, chain_id: String) -> Self {
        Self {
            sigs: SigCache::new(cfg.sig_cache_size),
            cfg,
            hook,
            chain_id: parking_lot::RwLock::new(chain_id),
            traces: parking_lot::Mutex::new(Default::default()),
        }
    }

    /// The chain id (empty before InitChain).
    pub(crate) fn chain_id(&self) -> String {
        self.chain_id.read().clone()
    }

    pub(crate) fn set_chain_id(&self, id: String) {
        *self.chain_id.write() = id;
    }

    /// What the pipeline needs beside the state it runs on (no read log).
    pub(crate) fn env(&self) -> crate::pipeline::Env<'_> {
        crate::pipeline::Env { sigs: &self.sigs, hook: &*self.hook, traces: &self.traces, reads: None }
    }

    /// The trace kept for `hash`, if still held at block time `now` (unix seconds).
    pub(crate) fn trace(&self, hash: &[u8; 32], now: i64) -> Option<GateTrace> {
        self.traces.lock().get(hash, now)
    }

    /// The context the next block's transactions are screened in, as seen after a block of
    /// `last_height` at `last_time`: the next height, and a time just after the last block's
    /// (block times strictly increase), so that a revocation committed in the last block
    /// already applies, as it will at execution.
    pub(crate) fn next_block_ctx(&self, last_height: u64, last_time: time::OffsetDateTime) -> BlockCtx {
        BlockCtx {
            height: last_height.saturating_add(1),
            time: last_time.checked_add(time::Duration::nanoseconds(1)).unwrap_or(last_time),
            chain_id: self.chain_id(),
        }
    }
}

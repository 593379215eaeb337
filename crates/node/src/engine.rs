//! The embedded single-validator engine: it reaps the mempool, builds a CometBFT block, drives
//! the app through PrepareProposal → ProcessProposal → FinalizeBlock → Commit, rechecks what is
//! left in the mempool, and publishes the block and its transactions.
//!
//! Admission, the commit and the recheck beside the next block are the pool's
//! ([`crate::txpool`]), which CometBFT mode with the app-side mempool shares. The next block
//! does not wait for the recheck: it runs beside the next block's proposal and execution (on
//! a thread of its own, while the engine's thread executes), and the next commit waits for
//! it. The proposal does not rely on it:
//! PrepareProposal verifies each proposed transaction on the new state as the recheck would
//! (replaying its admission's writes when its keys hold what that admission read, running it
//! again otherwise). Transactions carry their admission-time decoding and footprint from the
//! mempool into the block, so the app does not decode them again.
//!
//! Block time is the proposer's clock (as in CometBFT), made strictly increasing; the state
//! machine only ever sees it through the block. The engine does not sign blocks: there is one
//! validator and no peer to convince; `last_commit` carries no signatures. Networks of several
//! validators run the same app under CometBFT instead.

use std::sync::Arc;
use std::time::Duration;

use lantau_app::tendermint::abci::{request, response, types::CommitInfo};
use lantau_app::tendermint::block::{self, header::Version, Commit, Header};
use lantau_app::tendermint::{account, chain, evidence, merkle, validator, Block, Hash, PublicKey, Time};
use lantau_app::App;
use lantau_rpc::api::{NodeEvent, TxRecord};
use parking_lot::Mutex;
use prost::Message;
use tendermint_proto::v0_38 as pb;
use tokio::sync::broadcast;

use crate::config::ConsensusConfig;
use crate::indexer::{self, Indexer};
use crate::txpool::{RecheckStats, TxPool};

type Sha = lantau_app::tendermint::crypto::default::Sha256;

fn merkle_root(items: &[Vec<u8>]) -> Hash {
    Hash::Sha256(merkle::simple_hash_from_byte_vectors::<Sha>(items))
}

/// The embedded validator.
#[derive(Debug, Clone)]
pub struct Validator {
    /// Address (first 20 bytes of sha256 of the key).
    pub address: account::Id,
    /// ed25519 public key.
    pub pub_key: PublicKey,
    /// Voting power.
    pub power: u64,
}

impl Validator {
    fn set_hash(&self) -> anyhow::Result<Hash> {
        let info = validator::Info::new(self.pub_key, self.power.try_into()?);
        Ok(validator::Set::without_proposer(vec![info]).hash())
    }
}

/// Timing of one block, for `lantaud bench`.
#[derive(Debug, Clone, Copy)]
pub struct BlockTiming {
    /// Height.
    pub height: u64,
    /// Transactions in it.
    pub txs: usize,
    /// The sum of its transactions' gas limits (what `block.max_gas` bounds).
    pub gas_wanted: u64,
    /// The gas its transactions used.
    pub gas_used: u64,
    /// FinalizeBlock (execution and Merkle root), milliseconds.
    pub finalize_ms: f64,
    /// Commit (RocksDB write), with the wait for the previous block's recheck before it:
    /// what the engine spent from the end of FinalizeBlock to the end of the commit,
    /// milliseconds.
    pub commit_ms: f64,
    /// Reaping, proposal and header before FinalizeBlock, milliseconds.
    pub propose_ms: f64,
    /// The commit alone (RocksDB write), milliseconds.
    pub commit_only_ms: f64,
    /// How long the commit waited for the previous block's recheck, milliseconds.
    pub recheck_wait_ms: f64,
    /// The recheck after this block (beside the next block), milliseconds.
    pub recheck_ms: f64,
    /// Transactions re-admitted after the commit.
    pub rechecked: usize,
    /// How long the last recheck round held the check lock (admissions waited), milliseconds.
    pub recheck_locked_ms: f64,
    /// Transactions re-admitted in that round.
    pub recheck_locked_txs: usize,
    /// When the commit (and recheck) finished, on this node's monotonic clock.
    pub committed_at: std::time::Instant,
}

/// What the next header needs from the last block (kept in memory, so producing a block does
/// not read and decode the previous block and its results back from the store).
#[derive(Debug, Clone)]
struct LastBlock {
    height: block::Height,
    time: Time,
    id: block::Id,
    results_hash: Hash,
}

/// The `last_results_hash` of the block after one with these results (CometBFT: the Merkle
/// root of the deterministic fields of each result).
fn results_hash(results: &[lantau_app::tendermint::abci::types::ExecTxResult]) -> Hash {
    let leaves: Vec<Vec<u8>> = results
        .iter()
        .map(|t| {
            pb::abci::ExecTxResult { code: t.code.value(), data: t.data.clone(), gas_wanted: t.gas_wanted, gas_used: t.gas_used, ..Default::default() }
                .encode_to_vec()
        })
        .collect();
    merkle_root(&leaves)
}

/// How many recent block timings the engine keeps.
const TIMING_HISTORY: usize = 100_000;

/// The engine.
pub struct Engine {
    app: Arc<App>,
    indexer: Arc<Indexer>,
    pool: Arc<TxPool>,
    events: broadcast::Sender<NodeEvent>,
    cfg: ConsensusConfig,
    validator: Validator,
    metrics: Arc<crate::metrics::Metrics>,
    timings: Mutex<std::collections::VecDeque<BlockTiming>>,
    /// One block at a time.
    producing: tokio::sync::Mutex<()>,
    /// The last reap left transactions out for a block limit.
    backlog: std::sync::atomic::AtomicBool,
    /// The last block this engine committed.
    last: Mutex<Option<LastBlock>>,
    /// Dev chains' clock controls ([`Engine::increase_time`], [`Engine::set_next_block_time`]).
    clock: Mutex<DevClock>,
    /// A block as soon as a transaction is admitted ([`Engine::set_automine`]).
    automine: std::sync::atomic::AtomicBool,
    /// Wakes the block loop for a block now (automine).
    kick: tokio::sync::Notify,
    /// Dev chains' snapshots ([`Engine::take_snapshot`]): id, state, clock.
    snapshots: Mutex<Vec<(u64, lantau_app::store::Snapshot, DevClock)>>,
    /// The next snapshot's id.
    next_snapshot: std::sync::atomic::AtomicU64,
}

/// The most `evm_snapshot`s a dev chain keeps.
pub const MAX_DEV_SNAPSHOTS: usize = 256;

/// The dev chain's adjustments of the wall clock that stamps blocks.
#[derive(Debug, Default, Clone)]
struct DevClock {
    /// Added to the wall clock, in seconds (`evm_increaseTime`).
    offset_secs: i64,
    /// The next block's time, once (`evm_setNextBlockTimestamp`).
    next: Option<Time>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// A new engine.
    pub fn new(
        app: Arc<App>,
        indexer: Arc<Indexer>,
        pool: Arc<TxPool>,
        events: broadcast::Sender<NodeEvent>,
        cfg: ConsensusConfig,
        validator: Validator,
        metrics: Arc<crate::metrics::Metrics>,
    ) -> Self {
        Self {
            metrics,
            app,
            indexer,
            pool,
            events,
            cfg,
            validator,
            timings: Mutex::new(std::collections::VecDeque::new()),
            producing: tokio::sync::Mutex::new(()),
            backlog: std::sync::atomic::AtomicBool::new(false),
            last: Mutex::new(None),
            clock: Mutex::new(DevClock::default()),
            automine: std::sync::atomic::AtomicBool::new(false),
            kick: tokio::sync::Notify::new(),
            snapshots: Mutex::new(Vec::new()),
            next_snapshot: std::sync::atomic::AtomicU64::new(1),
        }
    }

    /// Moves the clock that stamps blocks `secs` seconds forward (a dev chain's
    /// `evm_increaseTime`); returns the total adjustment.
    pub fn increase_time(&self, secs: i64) -> i64 {
        let mut c = self.clock.lock();
        c.offset_secs = c.offset_secs.saturating_add(secs);
        c.offset_secs
    }

    /// The next block's time (a dev chain's `evm_setNextBlockTimestamp`): after the last
    /// block's, or refused. Later blocks continue from it (the clock's adjustment moves with it).
    pub fn set_next_block_time(&self, unix_secs: i64) -> anyhow::Result<()> {
        let t = Time::from_unix_timestamp(unix_secs, 0).map_err(|e| anyhow::anyhow!("timestamp {unix_secs}: {e}"))?;
        if let Some(last) = self.last.lock().as_ref() {
            anyhow::ensure!(t > last.time, "timestamp {unix_secs} is not after the last block's time {}", last.time);
        }
        let now = Time::now().unix_timestamp();
        let mut c = self.clock.lock();
        c.offset_secs = unix_secs.saturating_sub(now);
        c.next = Some(t);
        Ok(())
    }

    /// A block as soon as each transaction is admitted (on) or at the interval (off).
    pub fn set_automine(&self, on: bool) {
        self.automine.store(on, std::sync::atomic::Ordering::Relaxed);
        if on {
            self.kick.notify_one();
        }
    }

    /// Whether automine is on.
    pub fn automine(&self) -> bool {
        self.automine.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Produces a block now, empty or not (a dev chain's `evm_mine`); its height.
    pub async fn mine(&self) -> anyhow::Result<u64> {
        match self.produce(true).await? {
            Some(h) => Ok(h),
            None => anyhow::bail!("no block was produced"),
        }
    }

    /// The validator.
    pub fn validator(&self) -> &Validator {
        &self.validator
    }

    /// Timing of the last block.
    pub fn last_timing(&self) -> Option<BlockTiming> {
        self.timings.lock().back().copied()
    }

    /// Timings of the recent blocks (up to the last 100,000), oldest first.
    pub fn timings(&self) -> Vec<BlockTiming> {
        self.timings.lock().iter().copied().collect()
    }

    /// Produces blocks every `block_time` until `shutdown` flips to true.
    pub async fn run(self: Arc<Self>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
        // The first tick is one interval away: a new chain's first block was made at start.
        let period = Duration::from_millis(self.cfg.block_time_ms.max(1));
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    if let Err(e) = self.produce_block().await {
                        tracing::error!(error = %e, "block production failed; stopping the engine");
                        return;
                    }
                    // A block limit (gas, bytes, count) left transactions waiting: the next
                    // block starts now rather than at the next tick, so a backlog is worked off
                    // in back-to-back blocks, each bounded by `block.max_gas` (as CometBFT's
                    // `skip_timeout_commit` would). Without a backlog blocks keep the interval.
                    if self.backlog.load(std::sync::atomic::Ordering::Relaxed) {
                        tick.reset_immediately();
                    }
                }
                _ = self.kick.notified() => {
                    if let Err(e) = self.produce_block().await {
                        tracing::error!(error = %e, "block production failed; stopping the engine");
                        return;
                    }
                }
                changed = shutdown.changed() => {
                    // A dropped sender stops the engine too.
                    if changed.is_err() || *shutdown.borrow() {
                        if let Err(e) = self.finish_recheck().await {
                            tracing::warn!(error = %e, "the last recheck failed");
                        }
                        return;
                    }
                }
            }
        }
    }

    /// Builds, executes and commits one block. Returns its height, or None when the mempool is
    /// empty and empty blocks are off.
    pub async fn produce_block(&self) -> anyhow::Result<Option<u64>> {
        self.produce(false).await
    }

    /// [`Engine::produce_block`]; `force`: a block even when the mempool is empty.
    async fn produce(&self, force: bool) -> anyhow::Result<Option<u64>> {
        let _one_at_a_time = self.producing.lock().await;
        let t_start = std::time::Instant::now();
        let max_gas = self.app.queries().max_block_gas().await?;
        // The block carries the decodings made at admission, and their footprints.
        let (reaped, backlog) = self.pool.reap(self.cfg.max_block_bytes, self.cfg.max_block_txs, max_gas);
        self.backlog.store(backlog, std::sync::atomic::Ordering::Relaxed);
        if reaped.is_empty() && !self.cfg.create_empty_blocks && !force {
            return Ok(None);
        }
        let snap = self.app.snapshot();
        let height = self.app.queries().last_height().await?.saturating_add(1);
        let prev = match self.last.lock().clone() {
            Some(l) if l.height.value().saturating_add(1) == height => Some(l),
            _ => None,
        };
        let prev = match prev {
            Some(l) => Some(l),
            // After a restart: read the last block and its results back from the store.
            None if height > 1 => match indexer::block(&snap, height - 1).await? {
                Some(b) => {
                    let results = indexer::block_results(&snap, height - 1, String::new()).await?;
                    Some(LastBlock {
                        height: b.header.height,
                        time: b.header.time,
                        id: lantau_rpc::api::block_id(&b),
                        results_hash: results_hash(results.as_ref().map(|r| r.tx_results.as_slice()).unwrap_or_default()),
                    })
                }
                None => None,
            },
            None => None,
        };
        let now = {
            let mut c = self.clock.lock();
            match c.next.take() {
                Some(t) => t,
                None => {
                    let wall = Time::now();
                    let shifted = if c.offset_secs >= 0 {
                        wall.checked_add(Duration::from_secs(c.offset_secs.unsigned_abs()))
                    } else {
                        wall.checked_sub(Duration::from_secs(c.offset_secs.unsigned_abs()))
                    };
                    shifted.unwrap_or(wall)
                }
            }
        };
        let time = match &prev {
            Some(p) if now <= p.time => p.time.checked_add(Duration::from_millis(1)).unwrap_or(now),
            _ => now,
        };
        let chain_id = self.app.chain_id();
        let vals_hash = self.validator.set_hash()?;
        let h: block::Height = height.try_into()?;

        let prepared = self
            .app
            .prepare_proposal(request::PrepareProposal {
                max_tx_bytes: i64::try_from(self.cfg.max_block_bytes)?,
                txs: reaped.iter().map(|e| e.bytes.as_ref().clone().into()).collect(),
                local_last_commit: None,
                misbehavior: vec![],
                height: h,
                time,
                next_validators_hash: vals_hash,
                proposer_address: self.validator.address,
            })
            .await;
        let txs: Vec<Vec<u8>> = prepared.txs.iter().map(|t| t.to_vec()).collect();

        let last_block_id = prev.as_ref().map(|p| p.id);
        let last_commit = prev.as_ref().map(|p| Commit { height: p.height, round: Default::default(), block_id: p.id, signatures: vec![] });
        let last_results_hash = prev.as_ref().map(|p| p.results_hash);
        let header = Header {
            version: Version { block: 11, app: 1 },
            chain_id: chain::Id::try_from(chain_id)?,
            height: h,
            time,
            last_block_id,
            last_commit_hash: last_commit.as_ref().map(|_| merkle_root(&[])),
            data_hash: Some(merkle_root(&txs.iter().map(|t| lantau_app::tx::tx_hash(t).to_vec()).collect::<Vec<_>>())),
            validators_hash: vals_hash,
            next_validators_hash: vals_hash,
            consensus_hash: Hash::Sha256(lantau_crypto::sha256(b"lantau/consensus-params/v1")),
            app_hash: self.app.queries().app_hash().await?,
            last_results_hash,
            evidence_hash: Some(merkle_root(&[])),
            proposer_address: self.validator.address,
        };
        let block = Block::new(header, txs.clone(), evidence::List::default(), last_commit);
        let block_hash = block.header.hash();

        let accepted = self
            .app
            .process_proposal(request::ProcessProposal {
                txs: prepared.txs.clone(),
                proposed_last_commit: None,
                misbehavior: vec![],
                hash: block_hash,
                height: h,
                time,
                next_validators_hash: vals_hash,
                proposer_address: self.validator.address,
            })
            .await;
        anyhow::ensure!(accepted == response::ProcessProposal::Accept, "own proposal rejected at height {height}");

        let t0 = std::time::Instant::now();
        let propose_ms = t0.duration_since(t_start).as_secs_f64() * 1e3;
        self.indexer.set_pending_block(block.clone());
        let resp = self
            .app
            .finalize_block(request::FinalizeBlock {
                txs: prepared.txs,
                decided_last_commit: CommitInfo { round: Default::default(), votes: vec![] },
                misbehavior: vec![],
                hash: block_hash,
                height: h,
                time,
                next_validators_hash: vals_hash,
                proposer_address: self.validator.address,
            })
            .await?;
        let finalize_ms = t0.elapsed().as_secs_f64() * 1e3;
        self.metrics.block(&resp, finalize_ms / 1e3);

        let t1 = std::time::Instant::now();
        let included: Vec<[u8; 32]> = txs.iter().map(|t| lantau_app::tx::tx_hash(t)).collect();
        let times = self.pool.commit(height, included).await?;
        self.record_recheck(times.finished);
        let (recheck_wait_ms, commit_only_ms) = (times.recheck_wait_ms, times.commit_ms);
        self.metrics.commit(height, commit_only_ms / 1e3);
        let commit_ms = t1.elapsed().as_secs_f64() * 1e3;
        {
            let mut t = self.timings.lock();
            if t.len() >= TIMING_HISTORY {
                t.pop_front();
            }
            let gas = |f: fn(&lantau_app::tendermint::abci::types::ExecTxResult) -> i64| {
                resp.tx_results.iter().map(|r| u64::try_from(f(r)).unwrap_or(0)).fold(0u64, u64::saturating_add)
            };
            t.push_back(BlockTiming {
                height,
                txs: txs.len(),
                gas_wanted: gas(|r| r.gas_wanted),
                gas_used: gas(|r| r.gas_used),
                finalize_ms,
                commit_ms,
                propose_ms,
                commit_only_ms,
                recheck_wait_ms,
                recheck_ms: 0.0,
                rechecked: 0,
                recheck_locked_ms: 0.0,
                recheck_locked_txs: 0,
                committed_at: std::time::Instant::now(),
            });
        }

        *self.last.lock() = Some(LastBlock { height: h, time, id: lantau_rpc::api::block_id(&block), results_hash: results_hash(&resp.tx_results) });

        // What the block leaves behind is freed off this thread, which produces the next block.
        lantau_app::dropper::drop_later(reaped);
        // Publish after the commit: a subscriber never hears of something that may not persist.
        if self.events.receiver_count() == 0 {
            lantau_app::dropper::drop_later((resp, txs, block));
            return Ok(Some(height));
        }
        let timestamp = indexer::rfc3339(time);
        let block = Arc::new(block);
        let _no_subscribers = self.events.send(NodeEvent::NewBlock { block, events: resp.events.clone() });
        for (i, (t, r)) in txs.into_iter().zip(resp.tx_results).enumerate() {
            let rec = TxRecord {
                hash: lantau_app::tx::tx_hash(&t),
                height,
                index: u32::try_from(i).unwrap_or(u32::MAX),
                tx: t,
                result: r,
                timestamp: timestamp.clone(),
            };
            let _no_subscribers = self.events.send(NodeEvent::Tx(Arc::new(rec)));
        }
        Ok(Some(height))
    }

    /// Keeps the latest committed state and the dev clock (a dev chain's `evm_snapshot`);
    /// the snapshot's id. At most [`MAX_DEV_SNAPSHOTS`] are kept (the oldest go first).
    pub async fn take_snapshot(&self) -> u64 {
        let _one_at_a_time = self.producing.lock().await;
        let id = self.next_snapshot.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let clock = self.clock.lock().clone();
        let mut kept = self.snapshots.lock();
        kept.push((id, self.app.snapshot(), clock));
        if kept.len() > MAX_DEV_SNAPSHOTS {
            kept.remove(0);
        }
        id
    }

    /// Returns the chain to snapshot `id` (a dev chain's `evm_revert`): its state, blocks,
    /// index and clock; the mempool is emptied. That snapshot and every later one are used
    /// up. `false` for an unknown id.
    pub async fn revert_to(&self, id: u64) -> anyhow::Result<bool> {
        let _one_at_a_time = self.producing.lock().await;
        let (snap, clock) = {
            let mut kept = self.snapshots.lock();
            let Some(pos) = kept.iter().position(|(i, _, _)| *i == id) else { return Ok(false) };
            let mut later = kept.split_off(pos);
            let (_, snap, clock) = later.swap_remove(0);
            (snap, clock)
        };
        let finished = self.pool.clear().await?;
        self.record_recheck(finished);
        let height = self.app.dev_restore(&snap).await?;
        *self.last.lock() = None;
        *self.clock.lock() = clock;
        tracing::info!(id, height, "dev chain reverted to a snapshot");
        Ok(true)
    }

    /// Waits for the recheck after the last commit, if one runs, and records what it did with
    /// that block's timing.
    async fn finish_recheck(&self) -> anyhow::Result<()> {
        let finished = self.pool.finish_recheck().await?;
        self.record_recheck(finished);
        Ok(())
    }

    /// Records what a finished recheck did with its block's timing.
    fn record_recheck(&self, finished: Option<(u64, RecheckStats)>) {
        let Some((height, stats)) = finished else { return };
        if let Some(t) = self.timings.lock().iter_mut().rev().find(|t| t.height == height) {
            t.recheck_ms = stats.total_ms;
            t.rechecked = stats.rechecked;
            t.recheck_locked_ms = stats.locked_ms;
            t.recheck_locked_txs = stats.locked_txs;
        }
    }
}

//! The embedded single-validator engine: it reaps the mempool, builds a CometBFT block, drives
//! the app through PrepareProposal → ProcessProposal → FinalizeBlock → Commit, rechecks what is
//! left in the mempool, and publishes the block and its transactions.
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
use tokio::sync::{broadcast, RwLock};

use crate::config::ConsensusConfig;
use crate::indexer::{self, Indexer};
use crate::mempool::Mempool;

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
    /// FinalizeBlock (execution and Merkle root), milliseconds.
    pub finalize_ms: f64,
    /// Commit (RocksDB write) and mempool recheck, milliseconds.
    pub commit_ms: f64,
    /// When the commit (and recheck) finished, on this node's monotonic clock.
    pub committed_at: std::time::Instant,
}

/// How many recent block timings the engine keeps.
const TIMING_HISTORY: usize = 100_000;

/// The engine.
pub struct Engine {
    app: Arc<App>,
    indexer: Arc<Indexer>,
    mempool: Arc<Mutex<Mempool>>,
    /// Admissions hold it shared; commit and recheck hold it exclusively, so no admission sees
    /// a half-reset check overlay.
    pub(crate) gate: Arc<RwLock<()>>,
    events: broadcast::Sender<NodeEvent>,
    cfg: ConsensusConfig,
    validator: Validator,
    timings: Mutex<std::collections::VecDeque<BlockTiming>>,
    /// One block at a time.
    producing: tokio::sync::Mutex<()>,
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
        mempool: Arc<Mutex<Mempool>>,
        events: broadcast::Sender<NodeEvent>,
        cfg: ConsensusConfig,
        validator: Validator,
    ) -> Self {
        Self {
            app,
            indexer,
            mempool,
            gate: Arc::new(RwLock::new(())),
            events,
            cfg,
            validator,
            timings: Mutex::new(std::collections::VecDeque::new()),
            producing: tokio::sync::Mutex::new(()),
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
        let mut tick = tokio::time::interval(Duration::from_millis(self.cfg.block_time_ms.max(1)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    if let Err(e) = self.produce_block().await {
                        tracing::error!(error = %e, "block production failed; stopping the engine");
                        return;
                    }
                }
                _ = shutdown.changed() => {
                    if *shutdown.borrow() { return; }
                }
            }
        }
    }

    /// Builds, executes and commits one block. Returns its height, or None when the mempool is
    /// empty and empty blocks are off.
    pub async fn produce_block(&self) -> anyhow::Result<Option<u64>> {
        let _one_at_a_time = self.producing.lock().await;
        let reaped = self.mempool.lock().reap(self.cfg.max_block_bytes, self.cfg.max_block_txs);
        if reaped.is_empty() && !self.cfg.create_empty_blocks {
            return Ok(None);
        }
        let snap = self.app.snapshot();
        let height = self.app.last_height().await?.saturating_add(1);
        let prev = if height > 1 { indexer::block(&snap, height - 1).await? } else { None };
        let prev_results = if height > 1 { indexer::block_results(&snap, height - 1, String::new()).await? } else { None };
        let now = Time::now();
        let time = match &prev {
            Some(p) if now <= p.header.time => p.header.time.checked_add(Duration::from_millis(1)).unwrap_or(now),
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

        let last_block_id = prev.as_ref().map(lantau_rpc::api::block_id);
        let last_commit = last_block_id.map(|id| Commit {
            height: prev.as_ref().map(|p| p.header.height).unwrap_or_default(),
            round: Default::default(),
            block_id: id,
            signatures: vec![],
        });
        let last_results_hash = prev_results.map(|r| {
            let leaves: Vec<Vec<u8>> = r
                .tx_results
                .iter()
                .map(|t| {
                    pb::abci::ExecTxResult { code: t.code.value(), data: t.data.clone(), gas_wanted: t.gas_wanted, gas_used: t.gas_used, ..Default::default() }
                        .encode_to_vec()
                })
                .collect();
            merkle_root(&leaves)
        });
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
            app_hash: self.app.app_hash().await?,
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

        let t1 = std::time::Instant::now();
        {
            let _exclusive = self.gate.write().await;
            self.app.commit().await?;
            let included: Vec<[u8; 32]> = txs.iter().map(|t| lantau_app::tx::tx_hash(t)).collect();
            self.mempool.lock().remove(included);
            self.recheck().await;
        }
        let commit_ms = t1.elapsed().as_secs_f64() * 1e3;
        {
            let mut t = self.timings.lock();
            if t.len() >= TIMING_HISTORY {
                t.pop_front();
            }
            t.push_back(BlockTiming { height, txs: txs.len(), finalize_ms, commit_ms, committed_at: std::time::Instant::now() });
        }

        // Publish after the commit: a subscriber never hears of something that may not persist.
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

    /// Re-admits what is left in the mempool against the new state, dropping what no longer
    /// passes (for instance a sequence that a block just consumed).
    async fn recheck(&self) {
        let entries = self.mempool.lock().entries();
        let mut dropped = Vec::new();
        for e in entries {
            let out = self.app.check_tx_bytes(&e.bytes).await;
            if out.result.is_err() {
                dropped.push(e.hash);
            }
        }
        if !dropped.is_empty() {
            tracing::debug!(count = dropped.len(), "recheck dropped transactions");
            self.mempool.lock().remove(dropped);
        }
    }
}

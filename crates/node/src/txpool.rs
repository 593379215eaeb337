//! The transaction pool: admission into the [`Mempool`], the recheck after each commit, and
//! the forwarding of admitted transactions to peers. One implementation for both drivers: the
//! embedded engine reaps it for its blocks, and under CometBFT with the app-side mempool
//! (`[mempool] app_side`, CometBFT's `mempool.type = "nop"`) the ABCI server reaps it in
//! PrepareProposal and commits through it.
//!
//! Admissions never wait for a block: [`TxPool::commit`] keeps the check overlay, and the
//! recheck builds a new overlay on the new state while admissions continue on the old one;
//! only its last step (re-admitting the few transactions admitted meanwhile, then swapping
//! the overlay) holds the app's check lock. It runs on a thread of its own beside the next
//! block, and the next commit waits for it.
//!
//! Forwarding (`[mempool] peers`): every transaction this node admits from a client is sent,
//! in batches, to the other validators' apps (`POST /lantau/mempool/v1/forwarded` on their
//! REST gateway), which admit it without forwarding it again: a full mesh, as a permissioned
//! validator set is. A peer that is down or slow loses its copy; the transaction still waits
//! here for this node's turn to propose.

use std::sync::Arc;

use lantau_app::App;
use lantau_rpc::api::BroadcastResult;
use parking_lot::Mutex;
use tokio::sync::mpsc;

use crate::mempool::{Entry, Mempool};

/// What a recheck did.
#[derive(Debug, Clone, Copy)]
pub struct RecheckStats {
    /// Transactions re-admitted.
    pub rechecked: usize,
    /// How long its last round held the check lock, milliseconds.
    pub locked_ms: f64,
    /// Transactions re-admitted in that round.
    pub locked_txs: usize,
    /// The whole recheck, milliseconds.
    pub total_ms: f64,
}

/// The recheck after a committed block, running beside the next one.
struct PendingRecheck {
    height: u64,
    task: tokio::task::JoinHandle<anyhow::Result<RecheckStats>>,
}

/// What [`TxPool::commit`] measured.
#[derive(Debug, Clone, Copy)]
pub struct CommitTimes {
    /// Waiting for the previous block's recheck, milliseconds.
    pub recheck_wait_ms: f64,
    /// The commit alone (the store's write), milliseconds.
    pub commit_ms: f64,
    /// The previous block's recheck, which the wait finished: its height and what it did.
    pub finished: Option<(u64, RecheckStats)>,
}

/// The pool.
pub struct TxPool {
    app: Arc<App>,
    mempool: Arc<Mutex<Mempool>>,
    pending: Mutex<Option<PendingRecheck>>,
    /// Held by a commit (from waiting for the last recheck to starting the next) and by a
    /// replacement's rebuild of the check overlay: the two never interleave.
    commit_lock: tokio::sync::Mutex<()>,
    gossip: Option<Gossip>,
}

impl std::fmt::Debug for TxPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxPool").field("size", &self.mempool.lock().size()).finish_non_exhaustive()
    }
}

fn result(hash: [u8; 32], e: lantau_app::module_api::TxError) -> BroadcastResult {
    BroadcastResult { hash, code: e.code, codespace: e.codespace.into(), log: e.log, gas_wanted: 0, gas_used: 0 }
}

impl TxPool {
    /// A pool over `mempool`, admitting into `app`'s check overlay; admitted transactions go to
    /// `peers` (REST base URLs of the other validators' apps) when there are any.
    pub fn new(app: Arc<App>, mempool: Arc<Mutex<Mempool>>, peers: &[String]) -> Arc<Self> {
        let gossip = (!peers.is_empty()).then(|| Gossip::start(peers));
        Arc::new(Self { app, mempool, pending: Mutex::new(None), commit_lock: tokio::sync::Mutex::new(()), gossip })
    }

    /// The mempool.
    pub fn mempool(&self) -> &Arc<Mutex<Mempool>> {
        &self.mempool
    }

    /// Admits a transaction from a client: admission checks, then the mempool; a same-nonce
    /// Ethereum transaction may replace a waiting one ([`crate::mempool::replaces`]). An
    /// admitted transaction is forwarded to the peers.
    pub async fn admit(&self, tx: Vec<u8>) -> BroadcastResult {
        let r = self.admit_or_replace(&tx).await;
        if r.code == 0 {
            if let Some(g) = &self.gossip {
                g.send(Arc::new(tx));
            }
        }
        r
    }

    /// Admits transactions a peer forwarded, in order, without forwarding them again; how many
    /// were admitted. One already waiting here is skipped quietly. A replacement the peer
    /// admitted replaces the waiting transaction here too, by the same rule.
    pub async fn admit_forwarded(&self, txs: Vec<Vec<u8>>) -> usize {
        let mut admitted = 0usize;
        for tx in txs {
            let r = self.admit_or_replace(&tx).await;
            if r.code == 0 {
                admitted = admitted.saturating_add(1);
            } else if (r.codespace.as_str(), r.code) != ("sdk", 19) {
                tracing::debug!(code = r.code, log = %r.log, "a forwarded transaction was refused");
            }
        }
        admitted
    }

    /// Admission, and on a refused nonce the replacement of a waiting Ethereum transaction.
    async fn admit_or_replace(&self, tx: &[u8]) -> BroadcastResult {
        let r = self.admit_inner(tx).await;
        if (r.codespace.as_str(), r.code) == ("sdk", 32) {
            if let Some(replaced) = self.replacement(tx).await {
                return replaced;
            }
        }
        r
    }

    /// An Ethereum transaction whose nonce a waiting one of the same sender already has: it
    /// replaces that one when both its fee cap and its tip are at least
    /// [`crate::mempool::REPLACEMENT_BUMP_PERCENT`] % above (the old one leaves the mempool, the
    /// check overlay is rebuilt without it, and the new one is admitted as any other); otherwise
    /// it is refused as underpriced. `None`: no waiting transaction has its nonce (the refusal
    /// stands).
    async fn replacement(&self, tx: &[u8]) -> Option<BroadcastResult> {
        let new = lantau_app::evm::msg::eth_tx_of(tx)?;
        let waiting = self.mempool.lock().ethereum_of(&new.from, new.nonce)?;
        let old = (waiting.hash, lantau_app::evm::msg::eth_tx_of(&waiting.bytes)?);
        let hash = lantau_app::tx::tx_hash(tx);
        if let Err(e) = crate::mempool::replaces(&old.1, &new) {
            return Some(result(hash, e));
        }
        if let Err(e) = self.drop_and_recheck(old.0).await {
            tracing::error!(error = %e, "rebuilding the check overlay for a replacement failed");
            return None;
        }
        tracing::debug!(old = %const_hex::encode(old.1.hash), new = %new.hash_hex(), nonce = new.nonce, "replaced a waiting Ethereum transaction");
        Some(self.admit_inner(tx).await)
    }

    async fn admit_inner(&self, tx: &[u8]) -> BroadcastResult {
        let tx = tx.to_vec();
        let hash = lantau_app::tx::tx_hash(&tx);
        if self.mempool.lock().contains(&hash) {
            return result(hash, lantau_app::module_api::SdkError::TxInMempoolCache.into());
        }
        // A full mempool answers before any signature work (checked again, under the check
        // lock, at insert): the transaction is only decoded, to learn whether its fee per gas
        // could take the place of cheaper ones.
        let room = self.mempool.lock().check_room(tx.len(), None);
        if room.is_err() {
            let refusal = match lantau_app::tx::decode(&tx, self.app.config()) {
                Ok(d) => self.mempool.lock().check_room(tx.len(), Some(crate::mempool::fee_per_gas(&d))).err(),
                Err(e) => Some(e),
            };
            if let Some(e) = refusal {
                return result(hash, e);
            }
        }
        let bytes = Arc::new(tx);
        let mempool = self.mempool.clone();
        let b2 = bytes.clone();
        let out = self
            .app
            .check_tx_admit(&bytes, move |d, footprint| {
                let evicted = mempool.lock().insert_with(d.hash, b2, d.clone(), footprint)?;
                if !evicted.is_empty() {
                    tracing::debug!(count = evicted.len(), "evicted cheaper transactions from the full mempool");
                }
                Ok(())
            })
            .await;
        match out.result {
            Ok(()) => BroadcastResult { hash, code: 0, codespace: String::new(), log: String::new(), gas_wanted: out.gas_wanted, gas_used: out.gas_used },
            Err(e) => {
                BroadcastResult { hash, code: e.code, codespace: e.codespace.to_string(), log: e.log, gas_wanted: out.gas_wanted, gas_used: out.gas_used }
            }
        }
    }

    /// The entries for a block (see [`Mempool::reap_with_backlog`]), their decodings and
    /// footprints offered to the app, and whether a limit left some out.
    pub fn reap(&self, max_bytes: usize, max_txs: usize, max_gas: Option<u64>) -> (Vec<Entry>, bool) {
        let (reaped, backlog) = self.mempool.lock().reap_with_backlog(max_bytes, max_txs, max_gas);
        self.app.offer_decoded(reaped.iter().map(|e| (e.tx.clone(), e.footprint.clone())));
        (reaped, backlog)
    }

    /// Offers the app the decodings and footprints of those of `txs` that wait here (a
    /// proposal from another validator, whose transactions this node admitted as well).
    pub fn offer_waiting<T: AsRef<[u8]>>(&self, txs: &[T]) {
        let offered: Vec<_> = {
            let m = self.mempool.lock();
            txs.iter().filter_map(|t| m.get(&lantau_app::tx::tx_hash(t.as_ref()))).map(|e| (e.tx, e.footprint)).collect()
        };
        self.app.offer_decoded(offered);
    }

    /// Commits the finalized block `height` whose transactions are `included`: waits for the
    /// previous block's recheck (it built the check overlay on the state this block executed
    /// on), persists the block keeping the check overlay, drops the included transactions,
    /// and starts the recheck of what still waits, beside the next block.
    pub async fn commit(&self, height: u64, included: impl IntoIterator<Item = [u8; 32]>) -> anyhow::Result<CommitTimes> {
        let _no_replacement_meanwhile = self.commit_lock.lock().await;
        let t = std::time::Instant::now();
        let finished = self.finish_recheck().await?;
        let recheck_wait_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = std::time::Instant::now();
        self.app.commit_keeping_check_state().await?;
        let commit_ms = t.elapsed().as_secs_f64() * 1e3;
        self.mempool.lock().remove(included);
        // On a thread of its own: a recheck is a long run of CPU work with few awaits that
        // would stall the admissions queued on a runtime worker.
        let (app, mempool, handle) = (self.app.clone(), self.mempool.clone(), tokio::runtime::Handle::current());
        let task = tokio::task::spawn_blocking(move || handle.block_on(recheck(app, mempool)));
        *self.pending.lock() = Some(PendingRecheck { height, task });
        Ok(CommitTimes { recheck_wait_ms, commit_ms, finished })
    }

    /// Waits for the recheck after the last commit, if one runs: its height and what it did.
    pub async fn finish_recheck(&self) -> anyhow::Result<Option<(u64, RecheckStats)>> {
        let Some(p) = self.pending.lock().take() else { return Ok(None) };
        let stats = p.task.await.map_err(|e| anyhow::anyhow!("the recheck task ended abnormally: {e}"))??;
        Ok(Some((p.height, stats)))
    }

    /// Drops `old` from the mempool and rebuilds the check overlay without it (a same-nonce
    /// Ethereum transaction replaces it); no commit runs meanwhile, and the recheck of the
    /// last commit, if one runs, ends first, so the rebuilt overlay stands on the latest state.
    pub async fn drop_and_recheck(&self, old: [u8; 32]) -> anyhow::Result<()> {
        let _no_commit_meanwhile = self.commit_lock.lock().await;
        self.finish_recheck().await?;
        self.mempool.lock().remove([old]);
        recheck(self.app.clone(), self.mempool.clone()).await.map(|_| ())
    }

    /// Empties the mempool (a dev chain's revert), after the running recheck, which it
    /// returns as [`TxPool::finish_recheck`] does.
    pub async fn clear(&self) -> anyhow::Result<Option<(u64, RecheckStats)>> {
        let _no_commit_meanwhile = self.commit_lock.lock().await;
        let finished = self.finish_recheck().await?;
        let mut pool = self.mempool.lock();
        let waiting: Vec<[u8; 32]> = pool.entries().iter().map(|e| e.hash).collect();
        pool.remove(waiting);
        Ok(finished)
    }
}

/// Re-admits what is left in the mempool against the new state, dropping what no longer
/// passes (for instance a sequence that a block just consumed). Admissions continue on the
/// old check overlay meanwhile; they are re-admitted on the new one in catch-up rounds, the
/// last under the app's check lock, which then swaps the overlays.
async fn recheck(app: Arc<App>, mempool: Arc<Mutex<Mempool>>) -> anyhow::Result<RecheckStats> {
    /// When this few were admitted during a round, the last round runs under the lock.
    const SMALL_ROUND: usize = 64;
    /// Catch-up rounds outside the lock at most.
    const MAX_ROUNDS: usize = 4;
    let started = std::time::Instant::now();
    let mut rebuild = app.begin_check_rebuild().await?;
    let mut dropped = Vec::new();
    let mut footprints = Vec::new();
    let (mut pending, mut mark) = mempool.lock().entries_since(0);
    let mut rechecked = 0;
    for _ in 0..MAX_ROUNDS {
        rechecked += pending.len();
        for e in &pending {
            match app.recheck(&mut rebuild, &e.tx, &e.footprint).await {
                Ok(fp) => {
                    if !Arc::ptr_eq(&fp, &e.footprint) {
                        footprints.push((e.hash, fp));
                    }
                }
                Err(_) => dropped.push(e.hash),
            }
        }
        let (late, next) = mempool.lock().entries_since(mark);
        pending = late;
        mark = next;
        if pending.len() <= SMALL_ROUND {
            break;
        }
    }
    let (replayed, rerun) = rebuild.counts();
    // The last round: under the check lock no admission runs, so everything admitted
    // since `mark` is known; `pending` (listed before) is re-admitted first.
    let listing = mempool.clone();
    let locked_txs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = locked_txs.clone();
    let t = std::time::Instant::now();
    let (failed, late_footprints) = app
        .finish_check_rebuild(rebuild, move || {
            let (late, _) = listing.lock().entries_since(mark);
            let all: Vec<_> = pending.into_iter().chain(late).map(|e| (e.tx, e.footprint)).collect();
            counted.store(all.len(), std::sync::atomic::Ordering::Relaxed);
            all
        })
        .await;
    let locked_ms = t.elapsed().as_secs_f64() * 1e3;
    let locked_txs = locked_txs.load(std::sync::atomic::Ordering::Relaxed);
    dropped.extend(failed);
    footprints.extend(late_footprints);
    {
        let mut m = mempool.lock();
        if !dropped.is_empty() {
            tracing::debug!(count = dropped.len(), "recheck dropped transactions");
            m.remove(dropped);
        }
        m.set_footprints(footprints);
    }
    tracing::trace!(replayed, rerun, "recheck");
    Ok(RecheckStats { rechecked: rechecked + locked_txs, locked_ms, locked_txs, total_ms: started.elapsed().as_secs_f64() * 1e3 })
}

/// Most transactions (and bytes) in one forwarded batch.
const BATCH_TXS: usize = 2_000;
const BATCH_BYTES: usize = 4 * 1024 * 1024;
/// Most transactions waiting to be forwarded to one peer; beyond it a peer's copies are
/// dropped (the transaction still waits here).
const PEER_QUEUE: usize = 50_000;

/// Forwarding to peers: a queue and a task per peer, sending batches in admission order.
struct Gossip {
    peers: Vec<mpsc::Sender<Arc<Vec<u8>>>>,
}

impl Gossip {
    fn start(peers: &[String]) -> Self {
        let http = reqwest::Client::builder().timeout(std::time::Duration::from_secs(10)).build().unwrap_or_default();
        let peers = peers
            .iter()
            .map(|p| {
                let (tx, rx) = mpsc::channel(PEER_QUEUE);
                tokio::spawn(forward(http.clone(), format!("{}{}", p.trim_end_matches('/'), lantau_rpc::rest::FORWARD_PATH), rx));
                tx
            })
            .collect();
        Self { peers }
    }

    fn send(&self, tx: Arc<Vec<u8>>) {
        for p in &self.peers {
            if p.try_send(tx.clone()).is_err() {
                tracing::debug!("a peer's forwarding queue is full; it misses a transaction");
            }
        }
    }
}

/// Sends what arrives on `rx` to `url` in batches (whatever queued while the last one was
/// in flight), one batch at a time, so one sender's transactions arrive in order.
async fn forward(http: reqwest::Client, url: String, mut rx: mpsc::Receiver<Arc<Vec<u8>>>) {
    let mut warned_at: Option<std::time::Instant> = None;
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        let mut bytes = batch[0].len();
        while batch.len() < BATCH_TXS && bytes < BATCH_BYTES {
            match rx.try_recv() {
                Ok(t) => {
                    bytes = bytes.saturating_add(t.len());
                    batch.push(t);
                }
                Err(_) => break,
            }
        }
        let body = lantau_rpc::rest::encode_forwarded(&batch.iter().map(|t| t.as_slice()).collect::<Vec<_>>());
        let sent = http.post(&url).header("content-type", "application/octet-stream").body(body).send().await;
        let failed = match sent {
            Ok(r) if r.status().is_success() => None,
            Ok(r) => Some(format!("HTTP {}", r.status())),
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = failed {
            // Once a minute at most: a peer that is down would otherwise fill the log.
            if warned_at.is_none_or(|t| t.elapsed() > std::time::Duration::from_secs(60)) {
                tracing::warn!(peer = %url, error = %why, txs = batch.len(), "forwarding transactions to a peer failed; it misses them");
                warned_at = Some(std::time::Instant::now());
            }
        }
    }
}

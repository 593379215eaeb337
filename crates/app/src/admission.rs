//! Admission: the check overlay (the latest committed state plus the effects of every
//! transaction admitted since), CheckTx, and the recheck of waiting transactions after a
//! block, by replay of their footprints ([`crate::footprint`]) or by running them again.
//! Simulation runs on a throwaway layer of the same overlay, as CheckTx sees state.

use std::sync::Arc;

use cnidarium::{StateDelta, StateWrite};
use lantau_module_api::reads::{ReadLog, Recording};
use lantau_module_api::{BlockCtx, Event, GasMeter, SdkError, TxError};
use lantau_primitives::Address;
use lantau_store::FlatDelta;
use tendermint::abci::{request, response, Code};

use crate::error::AppError;
use crate::footprint::{BlockWrites, Footprint, Generation, Replay};
use crate::pipeline::Mode;
use crate::readcache::CachedSnapshot;
use crate::shared::Shared;
use crate::storage::{self, Store};
use crate::tx::{self, DecodedTx};

/// The result of admitting (or re-admitting) one transaction.
#[derive(Debug, Clone)]
pub struct CheckOutcome {
    /// sha256 of the bytes.
    pub hash: [u8; 32],
    /// The signer and sequence, when the bytes decoded (the mempool orders by them).
    pub sender: Option<(Address, u64)>,
    /// Gas limit declared.
    pub gas_wanted: u64,
    /// Gas the ante used.
    pub gas_used: u64,
    /// The verdict.
    pub result: Result<(), TxError>,
    /// The decoded transaction, when the bytes decoded (a driver keeps it with its mempool
    /// entry and offers it back with [`crate::App::offer_decoded`] so blocks do not decode
    /// again).
    pub decoded: Option<Arc<DecodedTx>>,
}

/// An overlay admissions run on, with its generation (the keys written into it).
pub(crate) struct Overlay {
    pub(crate) state: FlatDelta<CachedSnapshot>,
    pub(crate) gen: Arc<Generation>,
}

impl Overlay {
    fn on(snap: CachedSnapshot) -> Self {
        let gen = Generation::new(snap.version());
        Self { state: FlatDelta::new(snap), gen }
    }

    /// Applies `changes` (made on this overlay) and notes the keys they write.
    pub(crate) fn apply(&mut self, changes: cnidarium::Cache) {
        self.gen.wrote(crate::footprint::written_keys(&changes));
        changes.apply_to(&mut self.state);
    }

    /// Writes a replayed footprint's writes and notes their keys.
    fn replay(&mut self, footprint: &Footprint) {
        for (k, v) in footprint.writes() {
            match v {
                Some(v) => self.state.put_raw(k.clone(), v.clone()),
                None => self.state.delete(k.clone()),
            }
        }
        self.gen.wrote(footprint.write_keys().iter().copied());
    }
}

/// A check overlay being rebuilt on a newly committed state while admissions continue on the
/// old one; see [`crate::App::begin_check_rebuild`].
pub struct CheckRebuild {
    pub(crate) overlay: Overlay,
    pub(crate) block: BlockCtx,
    /// Transactions replayed, and run again in full.
    replayed: usize,
    rerun_txs: usize,
}

impl CheckRebuild {
    /// `(replayed, run again)` so far.
    pub fn counts(&self) -> (usize, usize) {
        (self.replayed, self.rerun_txs)
    }
}

impl std::fmt::Debug for CheckRebuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckRebuild").field("height", &self.block.height).finish_non_exhaustive()
    }
}

/// The result of simulating a transaction.
#[derive(Debug, Clone)]
pub struct SimulateOutcome {
    /// Gas used by ante and messages.
    pub gas_used: u64,
    /// Events the transaction would emit.
    pub events: Vec<Event>,
    /// The verdict.
    pub result: Result<(), TxError>,
}

/// Waiting transactions by hash: the decoding and footprint of their admission (or last
/// recheck).
type Footprints = std::collections::BTreeMap<[u8; 32], (Arc<DecodedTx>, Arc<Footprint>)>;

/// The admission state.
pub(crate) struct Admission {
    check: tokio::sync::Mutex<Overlay>,
    /// The keys the last blocks wrote (what may differ below a footprint made before them).
    blocks: BlockWrites,
    /// The context admissions run in (next height, last block time), refreshed at every
    /// commit so that CheckTx does not read it from the store each time.
    ctx: parking_lot::RwLock<Option<BlockCtx>>,
    /// The fee collector's balance record key (credited by every admission; see
    /// [`crate::footprint`]).
    collector_balance: String,
    /// The decodings and footprints of the transactions CometBFT's mempool holds (ABCI
    /// CheckTx), by hash: those admitted or rechecked since the last commit, and those of the
    /// round before, which its recheck takes (so a rechecked transaction is not decoded
    /// again: its hash is of the same bytes); what it does not take is dropped at the next
    /// commit.
    comet_footprints: parking_lot::Mutex<(Footprints, Footprints)>,
}

pub(crate) fn internal(e: AppError) -> TxError {
    SdkError::Internal(e.to_string()).into()
}

/// The fee payer's balance record key.
fn payer_balance(tx: &DecodedTx) -> String {
    lantau_bank::state_key::balances(&tx.signer)
}

impl Admission {
    pub(crate) fn new(store: &Store) -> Self {
        Self {
            check: tokio::sync::Mutex::new(Overlay::on(store.cached_snapshot())),
            blocks: BlockWrites::default(),
            ctx: parking_lot::RwLock::new(None),
            collector_balance: lantau_bank::state_key::balances(&crate::ante::fee_collector()),
            comet_footprints: parking_lot::Mutex::new(Default::default()),
        }
    }

    /// The context admissions are screened in (the next block's).
    pub(crate) async fn block_ctx(&self, shared: &Shared, store: &Store) -> Result<BlockCtx, AppError> {
        if let Some(c) = self.ctx.read().clone() {
            return Ok(c);
        }
        let snap = store.snapshot();
        let ctx = shared.next_block_ctx(storage::height_at(&snap).await?, storage::block_time_at(&snap).await?);
        *self.ctx.write() = Some(ctx.clone());
        Ok(ctx)
    }

    /// Drops every admission effect and starts a new check overlay on the latest committed
    /// state.
    pub(crate) async fn reset(&self, store: &Store) {
        *self.ctx.write() = None;
        *self.check.lock().await = Overlay::on(store.cached_snapshot());
    }

    /// A block that made `version` wrote `keys`.
    pub(crate) fn committed(&self, version: u64, keys: crate::footprint::KeySet) {
        self.blocks.committed(version, keys);
    }

    /// Forgets the blocks it knew (the store was replaced).
    pub(crate) fn forget_blocks(&self) {
        self.blocks.clear();
    }

    /// After a commit under CometBFT: the footprints of this round are what its recheck takes.
    pub(crate) fn next_comet_round(&self) {
        let mut fps = self.comet_footprints.lock();
        fps.1 = std::mem::take(&mut fps.0);
    }

    /// The decodings and footprints CometBFT's CheckTx left for these transactions (those it
    /// admitted or rechecked and still holds), for a proposal of them.
    pub(crate) fn comet_checked<'a>(&self, txs: impl IntoIterator<Item = &'a [u8]>) -> Vec<(Arc<DecodedTx>, Arc<Footprint>)> {
        let fps = self.comet_footprints.lock();
        txs.into_iter()
            .filter_map(|t| {
                let hash = tx::tx_hash(t);
                fps.0.get(&hash).or_else(|| fps.1.get(&hash)).cloned()
            })
            .collect()
    }

    /// Decodes a transaction for admission and gives the context it is screened in; a failure
    /// is the admission's answer.
    async fn decode_for_check(&self, shared: &Shared, store: &Store, bytes: &[u8]) -> Result<(Arc<DecodedTx>, BlockCtx), Box<CheckOutcome>> {
        let hash = tx::tx_hash(bytes);
        let decoded = tx::decode(bytes, &shared.cfg)
            .map(Arc::new)
            .map_err(|e| Box::new(CheckOutcome { hash, sender: None, gas_wanted: 0, gas_used: 0, result: Err(e), decoded: None }))?;
        match self.block_ctx(shared, store).await {
            Ok(b) => Ok((decoded, b)),
            Err(e) => Err(Box::new(CheckOutcome {
                hash,
                sender: Some((decoded.signer, decoded.sequence)),
                gas_wanted: decoded.gas_limit,
                gas_used: 0,
                result: Err(internal(e)),
                decoded: Some(decoded),
            })),
        }
    }

    /// Admits a transaction against the check overlay, calling `admit` under the check lock
    /// once the checks passed and before their effects join the overlay; an `admit` error
    /// (mempool full, duplicate) rejects it with nothing applied.
    pub(crate) async fn check_tx_admit(
        &self,
        shared: &Shared,
        store: &Store,
        bytes: &[u8],
        admit: impl FnOnce(&Arc<DecodedTx>, Arc<Footprint>) -> Result<(), TxError> + Send,
    ) -> CheckOutcome {
        let (decoded, block) = match self.decode_for_check(shared, store, bytes).await {
            Ok(x) => x,
            Err(out) => return *out,
        };
        let (hash, sender, gas_wanted) = (decoded.hash, Some((decoded.signer, decoded.sequence)), decoded.gas_limit);
        // No block could carry a transaction wanting more gas than `block.max_gas`.
        let over_block = match storage::max_block_gas_at(&store.cached_snapshot()).await {
            Ok(Some(max)) if decoded.gas_limit > max => Some(TxError::from(SdkError::InvalidGasLimit(format!(
                "gas limit {} exceeds the block's maximum gas {max} (consensus parameter block.max_gas)",
                decoded.gas_limit
            )))),
            Ok(_) => None,
            Err(e) => Some(internal(e)),
        };
        if let Some(e) = over_block {
            return CheckOutcome { hash, sender, gas_wanted, gas_used: 0, result: Err(e), decoded: Some(decoded) };
        }
        // Verify the signature before taking the check lock, so admissions verify in parallel.
        // The account number is immutable once assigned, so the committed snapshot is as good as
        // the check overlay for it; the ante below hits the cache.
        preverify(shared, store, &decoded, &block.chain_id).await;

        let gas = GasMeter::new(decoded.gas_limit);
        let mut check = self.check.lock().await;
        let result = self.admit_on(shared, &mut check, &decoded, &block, &gas, Mode::Check, |fp| admit(&decoded, fp)).await.map(drop);
        CheckOutcome { hash, sender, gas_wanted, gas_used: gas.used(), result, decoded: Some(decoded) }
    }

    /// ABCI CheckTx (CometBFT's mempool): a new transaction is admitted and its footprint kept
    /// for the recheck after the next commit; a `Recheck` replays or runs it again.
    pub(crate) async fn check_tx(&self, shared: &Shared, store: &Store, req: request::CheckTx) -> response::CheckTx {
        let out = match req.kind {
            request::CheckTxKind::New => {
                self.check_tx_admit(shared, store, &req.tx, |tx, fp| {
                    self.comet_footprints.lock().0.insert(tx.hash, (tx.clone(), fp));
                    Ok(())
                })
                .await
            }
            request::CheckTxKind::Recheck => self.recheck_bytes(shared, store, &req.tx).await,
        };
        let (code, log, codespace) = match &out.result {
            Ok(()) => (Code::Ok, String::new(), String::new()),
            Err(e) => (Code::from(e.code), e.log.clone(), e.codespace.to_string()),
        };
        response::CheckTx {
            code,
            log,
            codespace,
            gas_wanted: i64::try_from(out.gas_wanted).unwrap_or(i64::MAX),
            gas_used: i64::try_from(out.gas_used).unwrap_or(i64::MAX),
            ..Default::default()
        }
    }

    /// Re-admits a waiting transaction on the check overlay (CometBFT's recheck), with the
    /// footprint its admission (or last recheck) left.
    async fn recheck_bytes(&self, shared: &Shared, store: &Store, bytes: &[u8]) -> CheckOutcome {
        let kept = self.comet_footprints.lock().1.remove(&tx::tx_hash(bytes));
        let (decoded, block, footprint) = match kept {
            Some((decoded, footprint)) => match self.block_ctx(shared, store).await {
                Ok(block) => (decoded, block, Some(footprint)),
                Err(e) => {
                    let (hash, sender, gas_wanted) = (decoded.hash, Some((decoded.signer, decoded.sequence)), decoded.gas_limit);
                    return CheckOutcome { hash, sender, gas_wanted, gas_used: 0, result: Err(internal(e)), decoded: Some(decoded) };
                }
            },
            None => match self.decode_for_check(shared, store, bytes).await {
                Ok((decoded, block)) => (decoded, block, None),
                Err(out) => return *out,
            },
        };
        let (hash, sender, gas_wanted) = (decoded.hash, Some((decoded.signer, decoded.sequence)), decoded.gas_limit);
        let gas = GasMeter::new(decoded.gas_limit);
        let mut check = self.check.lock().await;
        let result = match self.recheck_on(shared, &mut check, &decoded, &block, &gas, footprint.as_ref()).await {
            Ok((fp, _)) => {
                self.comet_footprints.lock().0.insert(hash, (decoded.clone(), fp));
                Ok(())
            }
            Err(e) => Err(e),
        };
        CheckOutcome { hash, sender, gas_wanted, gas_used: gas.used(), result, decoded: Some(decoded) }
    }

    /// Runs the admission of `tx` (`mode`: check or recheck) on `state`, logging what the ante
    /// and the gates read; when it passes and `admit` takes its footprint, its writes join
    /// `state`. Returns the footprint.
    #[allow(clippy::too_many_arguments)] // the run's inputs, each used once
    async fn admit_on(
        &self,
        shared: &Shared,
        overlay: &mut Overlay,
        tx: &DecodedTx,
        block: &BlockCtx,
        gas: &GasMeter,
        mode: Mode,
        admit: impl FnOnce(Arc<Footprint>) -> Result<(), TxError>,
    ) -> Result<Arc<Footprint>, TxError> {
        let log = ReadLog::new();
        let mut run_on = StateDelta::new(Recording::new(&mut overlay.state, log.clone()));
        let env = crate::pipeline::Env { reads: Some(&log), ..shared.env() };
        crate::pipeline::run(&env, &mut run_on, tx, block, gas, mode).await.result?;
        let (below, changes) = run_on.flatten();
        let state = below.into_inner();
        let footprint = Arc::new(Footprint::of(&*state, &overlay.gen, &changes, log.take(), &self.collector_balance, &payer_balance(tx)).await);
        admit(footprint.clone())?;
        overlay.apply(changes);
        Ok(footprint)
    }

    /// The recheck of one transaction on `state`, whose effects stay only when it passes: its
    /// admission's writes when everything it read holds what it found (`footprint`), the
    /// pipeline's recheck otherwise. Returns the footprint the transaction now has, and
    /// whether it was replayed.
    async fn recheck_on(
        &self,
        shared: &Shared,
        overlay: &mut Overlay,
        tx: &DecodedTx,
        block: &BlockCtx,
        gas: &GasMeter,
        footprint: Option<&Arc<Footprint>>,
    ) -> Result<(Arc<Footprint>, bool), TxError> {
        let replay = match footprint {
            Some(fp) if tx.timeout_height == 0 => fp.replay_on(&overlay.state, &overlay.gen, &self.blocks).await.map(|r| (fp, r)),
            _ => None,
        };
        match replay {
            Some((footprint, Replay::Unchanged)) => {
                overlay.replay(footprint);
                Ok((footprint.clone(), true))
            }
            // The fee came out of a larger balance: a new footprint.
            Some((_, Replay::Rebased(replayed))) => {
                overlay.replay(&replayed);
                Ok((Arc::new(replayed), true))
            }
            None => Ok((self.admit_on(shared, overlay, tx, block, gas, Mode::Recheck, |_| Ok(())).await?, false)),
        }
    }

    /// A new overlay on `snap`, to re-admit waiting transactions on (a rebuild, or the checks
    /// of a proposal).
    pub(crate) async fn rebuild_on(&self, shared: &Shared, snap: CachedSnapshot) -> Result<CheckRebuild, AppError> {
        let block = shared.next_block_ctx(storage::height_at(snap.snapshot()).await?, storage::block_time_at(snap.snapshot()).await?);
        Ok(CheckRebuild { overlay: Overlay::on(snap), block, replayed: 0, rerun_txs: 0 })
    }

    /// Re-admits one waiting transaction on a rebuilt overlay (see [`crate::App::recheck`]).
    pub(crate) async fn recheck(&self, shared: &Shared, r: &mut CheckRebuild, tx: &DecodedTx, footprint: &Arc<Footprint>) -> Result<Arc<Footprint>, TxError> {
        let out = self.recheck_on(shared, &mut r.overlay, tx, &r.block, &GasMeter::new(tx.gas_limit), Some(footprint)).await;
        match &out {
            Ok((_, true)) => r.replayed = r.replayed.saturating_add(1),
            _ => r.rerun_txs = r.rerun_txs.saturating_add(1),
        }
        out.map(|(fp, _)| fp)
    }

    /// Under the check lock: re-admits what `late` returns, then makes the rebuilt overlay
    /// the check overlay (see [`crate::App::finish_check_rebuild`]).
    pub(crate) async fn finish_rebuild(
        &self,
        shared: &Shared,
        mut r: CheckRebuild,
        late: impl FnOnce() -> Vec<(Arc<DecodedTx>, Arc<Footprint>)> + Send,
    ) -> (Vec<[u8; 32]>, Vec<([u8; 32], Arc<Footprint>)>) {
        let mut check = self.check.lock().await;
        let mut failed = Vec::new();
        let mut kept = Vec::new();
        for (tx, fp) in late() {
            match self.recheck(shared, &mut r, &tx, &fp).await {
                Ok(fp) => kept.push((tx.hash, fp)),
                Err(_) => failed.push(tx.hash),
            }
        }
        *check = r.overlay;
        *self.ctx.write() = Some(r.block);
        (failed, kept)
    }

    /// Runs a transaction on a throwaway layer of the admission state without verifying its
    /// signature or requiring the fee floor, to estimate gas. Writes nothing.
    pub(crate) async fn simulate(&self, shared: &Shared, store: &Store, bytes: &[u8]) -> SimulateOutcome {
        let decoded = match tx::decode_for_simulation(bytes, &shared.cfg) {
            Ok(d) => d,
            Err(e) => return SimulateOutcome { gas_used: 0, events: vec![], result: Err(e) },
        };
        let block = match self.block_ctx(shared, store).await {
            Ok(b) => b,
            Err(e) => return SimulateOutcome { gas_used: 0, events: vec![], result: Err(internal(e)) },
        };
        let gas = GasMeter::new(shared.cfg.max_gas_per_tx);
        // On the check overlay, as CheckTx sees state: a sender with sequence n waiting in the
        // mempool simulates n+1. The layer on top is thrown away.
        let check = self.check.lock().await;
        let mut state = StateDelta::new(&check.state);
        let run = crate::pipeline::run(&shared.env(), &mut state, &decoded, &block, &gas, Mode::Simulate).await;
        SimulateOutcome { gas_used: gas.used(), events: run.events, result: run.result }
    }

    /// SimulateTrace: the gate chain alone on a throwaway layer of the admission state.
    /// `Ok(None)` when the node runs without the simulation hook; `Err` when the bytes do not
    /// decode.
    pub(crate) async fn simulate_trace(
        &self,
        shared: &Shared,
        store: &Store,
        bytes: &[u8],
    ) -> Result<Option<lantau_proto::chain::compliance::v1::GateTrace>, TxError> {
        if !shared.cfg.simulation_hook {
            return Ok(None);
        }
        let decoded = tx::decode_for_simulation(bytes, &shared.cfg)?;
        let block = self.block_ctx(shared, store).await.map_err(internal)?;
        let gas = GasMeter::infinite();
        let check = self.check.lock().await;
        let mut state = StateDelta::new(&check.state);
        let run = crate::pipeline::run(&shared.env(), &mut state, &decoded, &block, &gas, Mode::SimulateTrace).await;
        match (run.trace, run.result) {
            (Some(t), _) => Ok(Some(std::sync::Arc::unwrap_or_clone(t))),
            (None, Err(e)) => Err(e),
            (None, Ok(())) => Err(SdkError::Internal("the gates ran without a trace".into()).into()),
        }
    }

    /// The sequence the account's next transaction must carry on the admission state
    /// (committed sequence plus the transactions admitted since).
    pub(crate) async fn pending_sequence(&self, addr: &Address) -> Result<u64, AppError> {
        use lantau_auth::AuthRead as _;
        let check = self.check.lock().await;
        let acct = check.state.account(&GasMeter::infinite(), addr).await.map_err(|e| AppError::Corrupt { key: "auth/account", why: e.log })?;
        Ok(acct.map_or(0, |a| a.sequence))
    }
}

/// Warms the signature cache for `tx` from the committed account (outside the check lock).
async fn preverify(shared: &Shared, store: &Store, tx: &DecodedTx, chain_id: &str) {
    use lantau_auth::AuthRead;
    // An Ethereum transaction's sender was recovered from its signature at decode.
    if tx.eth_hash.is_some() {
        return;
    }
    let snap = store.cached_snapshot();
    let gas = GasMeter::infinite();
    if let Ok(Some(acct)) = snap.account(&gas, &tx.signer).await {
        let pk: Option<[u8; 33]> = tx.pubkey.or_else(|| acct.pub_key.as_ref().try_into().ok());
        if let Some(pk) = pk {
            // The verdict is re-derived by the ante; this only warms the cache.
            let _warm = crate::ante::verify_signature(tx, &pk, chain_id, acct.account_number, &shared.sigs);
        }
    }
}

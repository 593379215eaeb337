//! The ABCI++ façade: [`App`] holds the parts of the state machine, each with the state it
//! owns, and answers each ABCI method by handing it to the part whose job it is.
//!
//! | part | file | owns |
//! | --- | --- | --- |
//! | storage | `storage.rs` | the store and its read cache |
//! | shared | `shared.rs` | limits, chain id, signature cache, the driver's hook, traces |
//! | admission | `admission.rs` | the check overlay, CheckTx, the recheck, simulation |
//! | proposals | `proposal.rs` | offered decodings, the last verified proposal |
//! | execution | `block.rs` | the block executed and not yet committed |
//! | state sync | `statesync.rs` | this node's snapshots, a restore in progress |
//! | queries | `query.rs` | the node's query extension (the view borrows the rest) |
//!
//! Every transaction runs through the one pipeline ([`crate::pipeline::run`]), whichever part
//! calls it.

use std::sync::Arc;

use cnidarium::{StateDelta, StateRead};
use lantau_module_api::{store, GasMeter, TxError};
use lantau_store::{Snapshot, Storage};
use tendermint::abci::{request, response};
use tendermint::block::Height as TmHeight;
use tendermint::AppHash;

use crate::admission::{Admission, CheckOutcome, CheckRebuild};
use crate::block::{to_offset, Blocks};
use crate::config::AppConfig;
use crate::error::AppError;
use crate::footprint::Footprint;
use crate::genesis::AppGenesis;
use crate::hooks::BlockHook;
use crate::optimistic::EarlyRun;
use crate::proposal::Proposals;
use crate::query::Queries;
use crate::readcache::CachedSnapshot;
use crate::shared::Shared;
use crate::state_key;
use crate::statesync::StateSync;
use crate::storage::Store;
use crate::tx::DecodedTx;

/// The Lantau state machine over its store (`lantau_store`).
pub struct App {
    store: Store,
    shared: Shared,
    admission: Admission,
    proposals: Proposals,
    blocks: Blocks,
    /// A block's execution started at ProcessProposal, for its FinalizeBlock.
    optimistic: crate::optimistic::Optimistic,
    sync: StateSync,
    /// The node's queries (the tx index, blocks), when a node installed them.
    query_ext: std::sync::OnceLock<Arc<dyn crate::grpc::QueryExtension>>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").field("chain_id", &self.shared.chain_id()).finish_non_exhaustive()
    }
}

impl App {
    /// Opens (or creates) the state at `path`. An existing store is verified first (every
    /// block read back with its checksum, `store_check`): a damaged one is refused with
    /// [`AppError::Damaged`].
    pub async fn load(path: std::path::PathBuf, cfg: AppConfig, hook: Arc<dyn BlockHook>) -> Result<Self, AppError> {
        let checked = path.clone();
        let verified = tokio::task::spawn_blocking(move || crate::store_check::verify(&checked))
            .await
            .map_err(|e| AppError::Damaged { path: path.clone(), detail: format!("its verification stopped: {e}") })?
            .map_err(|detail| AppError::Damaged { path: path.clone(), detail })?;
        if let Some(v) = verified {
            tracing::info!(files = v.files, mib = v.bytes >> 20, keys = v.keys, ms = v.ms.round(), "verified every block of the app store");
        }
        let storage = Storage::load(path.clone()).await.map_err(|e| AppError::Open { path, detail: format!("{e:#}") })?;
        Self::with_storage(storage, cfg, hook).await
    }

    /// Wraps an opened storage. A store this build cannot run on is released (so its path can
    /// be opened again) and refused.
    pub async fn with_storage(storage: Storage, cfg: AppConfig, hook: Arc<dyn BlockHook>) -> Result<Self, AppError> {
        let chain_id = match Self::runnable(&storage.latest_snapshot(), &cfg).await {
            Ok(c) => c,
            Err(e) => {
                storage.release().await;
                return Err(e);
            }
        };
        let store = Store::new(storage);
        Ok(Self {
            admission: Admission::new(&store),
            shared: Shared::new(cfg, hook, chain_id),
            store,
            proposals: Proposals::default(),
            blocks: Blocks::default(),
            optimistic: Default::default(),
            sync: StateSync::default(),
            query_ext: std::sync::OnceLock::new(),
        })
    }

    /// Whether this build can run on the store at `snap`; its chain id (empty: no chain yet).
    async fn runnable(snap: &Snapshot, cfg: &AppConfig) -> Result<String, AppError> {
        // A store that still holds keys where a module no longer keeps them was written under
        // an older layout.
        for (prefix, what) in crate::modules::retired_verifiable() {
            use futures::StreamExt;
            if std::pin::pin!(snap.prefix_keys(prefix)).next().await.is_some() {
                return Err(AppError::OldLayout { what });
            }
        }
        let chain_id = match snap.get_raw(state_key::CHAIN_ID).await.map_err(AppError::store)? {
            Some(b) => String::from_utf8(b).map_err(|e| AppError::Corrupt { key: state_key::CHAIN_ID, why: e.to_string() })?,
            None => String::new(),
        };
        // A chain's store of another release's module state versions, with no upgrade this
        // binary applies pending, is not run on (a store without a chain has no versions yet).
        if !chain_id.is_empty() {
            crate::upgrades::check_store(snap, &cfg.upgrade_handlers).await?;
        }
        Ok(chain_id)
    }

    /// Shuts the store down (waits for its dispatcher and closes RocksDB), so the same path can
    /// be opened again in this process. Call once every other handle to the app is gone.
    pub async fn release(self) {
        self.store.release().await;
    }

    /// The storage (the node keeps its own records beside the state's, in the same store).
    pub fn storage(&self) -> &Storage {
        self.store.storage()
    }

    /// The latest committed snapshot.
    pub fn snapshot(&self) -> Snapshot {
        self.store.snapshot()
    }

    /// The latest committed snapshot, its verifiable point reads served by the node's read
    /// cache when it holds them (same values, fewer thread hand-offs).
    pub fn cached_snapshot(&self) -> CachedSnapshot {
        self.store.cached_snapshot()
    }

    /// The limits.
    pub fn config(&self) -> &AppConfig {
        &self.shared.cfg
    }

    /// The chain id (empty before InitChain).
    pub fn chain_id(&self) -> String {
        self.shared.chain_id()
    }

    /// The queries: the one router (gRPC methods, ABCI Query), the chain's records, `eth_call`,
    /// simulation and traces.
    pub fn queries(&self) -> Queries<'_> {
        Queries { shared: &self.shared, store: &self.store, admission: &self.admission, ext: &self.query_ext }
    }

    /// Installs the node's queries (once): the router asks them after the modules.
    pub fn set_query_extension(&self, ext: Arc<dyn crate::grpc::QueryExtension>) {
        let _ = self.query_ext.set(ext);
    }

    // === Info / InitChain / Query ===

    /// ABCI Info.
    pub async fn info(&self, _req: request::Info) -> Result<response::Info, AppError> {
        let initialized = !self.chain_id().is_empty();
        let q = self.queries();
        Ok(response::Info {
            data: "lantau".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            app_version: 1,
            last_block_height: TmHeight::try_from(q.last_height().await?)?,
            last_block_app_hash: if initialized { q.app_hash().await? } else { AppHash::default() },
        })
    }

    /// ABCI InitChain: writes genesis and commits it as version 0. Idempotent for the same
    /// chain id: a restart before the first block returns the stored genesis app hash.
    pub async fn init_chain(&self, req: request::InitChain) -> Result<response::InitChain, AppError> {
        if !self.chain_id().is_empty() {
            if self.chain_id() != req.chain_id {
                return Err(AppError::ChainMismatch { stored: self.chain_id(), requested: req.chain_id });
            }
            return Ok(response::InitChain { consensus_params: None, validators: vec![], app_hash: self.queries().app_hash().await? });
        }
        let genesis = AppGenesis::from_json(&req.app_state_bytes).map_err(AppError::Genesis)?;
        if genesis.exported.is_some() {
            return self.import(&genesis, &req).await;
        }
        let mut delta = StateDelta::new(self.snapshot());
        genesis.apply(&mut delta, &req.chain_id, to_offset(req.time)).await.map_err(AppError::Genesis)?;
        let gas = GasMeter::infinite();
        store::put(&mut delta, &gas, state_key::GENESIS_TIME.to_string(), to_offset(req.time).unix_timestamp_nanos().to_be_bytes().to_vec())
            .map_err(AppError::Genesis)?;
        store::put(&mut delta, &gas, state_key::MAX_BLOCK_GAS.to_string(), req.consensus_params.block.max_gas.to_be_bytes().to_vec())
            .map_err(AppError::Genesis)?;
        let root = self.store.storage().commit(delta).await.map_err(AppError::store)?;
        self.store.reset_cache();
        self.shared.set_chain_id(req.chain_id.clone());
        self.admission.forget_blocks();
        self.reset_check_state().await;
        Ok(response::InitChain { consensus_params: None, validators: vec![], app_hash: AppHash::try_from(root.0.to_vec())? })
    }

    /// InitChain from an exported state ([`crate::export`]): the exported entries, checked as
    /// a state-sync restore is, committed as version 0 at the exported height.
    async fn import(&self, genesis: &AppGenesis, req: &request::InitChain) -> Result<response::InitChain, AppError> {
        let refuse = |why: String| AppError::Genesis(lantau_module_api::SdkError::InvalidRequest(format!("exported state: {why}")).into());
        let Some(export) = genesis.exported.as_ref().filter(|_| genesis.is_export_only()) else {
            return Err(refuse("app_state holds the export alone (every module's section empty)".into()));
        };
        let first = export.height.checked_add(1).ok_or_else(|| refuse("height overflows".into()))?;
        if req.initial_height.value() != first {
            return Err(refuse(format!("the state of height {} starts a chain at initial_height {first}, not {}", export.height, req.initial_height)));
        }
        let mut delta = StateDelta::new(self.snapshot());
        export.write(&mut delta).await.map_err(refuse)?;
        if genesis.evm_chain_id != 0 {
            let held = crate::storage::read_u64(&delta, state_key::EVM_CHAIN_ID).await?;
            if held != Some(genesis.evm_chain_id) {
                return Err(refuse(format!("evm_chain_id {} is not the exported state's ({held:?})", genesis.evm_chain_id)));
            }
        }
        // The genesis file decides the chain id and the block gas; a change makes another root.
        let mut changed = Vec::new();
        if crate::export::set_if_changed(&mut delta, state_key::CHAIN_ID, req.chain_id.as_bytes().to_vec()).await.map_err(refuse)? {
            changed.push("chain_id");
        }
        let max_gas = req.consensus_params.block.max_gas.to_be_bytes().to_vec();
        if crate::export::set_if_changed(&mut delta, state_key::MAX_BLOCK_GAS, max_gas).await.map_err(refuse)? {
            changed.push("consensus_params.block.max_gas");
        }
        let batch = self.store.storage().prepare_commit(delta).await.map_err(AppError::store)?;
        let root = batch.root_hash().0;
        if let Some(expected) = export.expected_root().map_err(refuse)? {
            if expected.as_slice() != root.as_slice() {
                let edited = if changed.is_empty() {
                    "an entry differs from the exported state".to_string()
                } else {
                    format!("{} differs from the export", changed.join(" and "))
                };
                return Err(refuse(format!(
                    "the imported state's root {} is not the exported app_hash {} ({edited}); empty app_hash to start a changed state on purpose",
                    const_hex::encode_upper(root),
                    export.app_hash
                )));
            }
        }
        self.store.storage().commit_batch(batch).map_err(AppError::store)?;
        self.store.reset_cache();
        self.shared.set_chain_id(req.chain_id.clone());
        self.admission.forget_blocks();
        self.reset_check_state().await;
        tracing::info!(height = export.height, root = %const_hex::encode_upper(root), "state imported from an export");
        Ok(response::InitChain { consensus_params: None, validators: vec![], app_hash: AppHash::try_from(root.to_vec())? })
    }

    /// ABCI Query: a gRPC method of the one router, or `/store/key` (see
    /// [`Queries::abci_query`]).
    pub async fn abci_query(&self, req: request::Query) -> response::Query {
        self.queries().abci_query(req).await
    }

    // === CheckTx and the recheck ===

    /// Admits a transaction against the check overlay (the latest committed state plus the
    /// ante effects of every transaction admitted since). A rejection writes nothing.
    pub async fn check_tx_bytes(&self, bytes: &[u8]) -> CheckOutcome {
        self.check_tx_admit(bytes, |_, _| Ok(())).await
    }

    /// Like [`App::check_tx_bytes`], calling `admit` under the check lock once the checks
    /// passed and before their effects join the check overlay; an `admit` error (mempool full,
    /// duplicate) rejects the transaction with nothing applied. A mempool inserts there, so its
    /// order is the order in which the check overlay saw the transactions.
    pub async fn check_tx_admit(&self, bytes: &[u8], admit: impl FnOnce(&Arc<DecodedTx>, Arc<Footprint>) -> Result<(), TxError> + Send) -> CheckOutcome {
        self.admission.check_tx_admit(&self.shared, &self.store, bytes, admit).await
    }

    /// ABCI CheckTx. A `Recheck` (CometBFT re-admitting its mempool after a commit, in
    /// mempool order, on the check overlay [`App::commit`] reset) replays the transaction's
    /// admission when everything it read holds what it found ([`crate::footprint`]), and runs
    /// the pipeline's recheck mode (ante and gates) otherwise.
    pub async fn check_tx(&self, req: request::CheckTx) -> response::CheckTx {
        self.admission.check_tx(&self.shared, &self.store, req).await
    }

    /// Drops every admission effect and starts a new check overlay on the latest committed
    /// state. The mempool then re-admits what it still holds.
    pub async fn reset_check_state(&self) {
        self.admission.reset(&self.store).await;
    }

    /// Starts a new check overlay on the latest committed state, for a driver that re-admits
    /// its mempool after [`App::commit_keeping_check_state`] without stopping admissions:
    /// admissions keep running on the old overlay while the driver re-admits each waiting
    /// transaction with [`App::recheck`], then [`App::finish_check_rebuild`] re-admits the few
    /// admitted meanwhile and puts the new overlay in place, under the check lock.
    pub async fn begin_check_rebuild(&self) -> Result<CheckRebuild, AppError> {
        self.admission.rebuild_on(&self.shared, self.store.cached_snapshot()).await
    }

    /// Re-admits one waiting transaction on a rebuilt overlay: the same pipeline as CheckTx
    /// (ante and gate chain), so a transaction whose party was blacklisted since its
    /// admission fails here with the gate's code and leaves the mempool. When the transaction
    /// has no timeout height and everything its admission read holds on the rebuilt overlay
    /// what it found, the admission's writes (`footprint`) are put in place instead
    /// ([`crate::footprint`]). Returns the footprint the transaction now has.
    pub async fn recheck(&self, r: &mut CheckRebuild, tx: &DecodedTx, footprint: &Arc<Footprint>) -> Result<Arc<Footprint>, TxError> {
        self.admission.recheck(&self.shared, r, tx, footprint).await
    }

    /// Under the check lock (so no admission runs meanwhile): re-admits what `late` returns
    /// (the transactions admitted on the old overlay since the driver listed its mempool, in
    /// admission order, with their footprints), then makes the rebuilt overlay the check
    /// overlay. Returns the hashes of the late transactions that no longer pass, and the new
    /// footprints of those that do.
    pub async fn finish_check_rebuild(
        &self,
        r: CheckRebuild,
        late: impl FnOnce() -> Vec<(Arc<DecodedTx>, Arc<Footprint>)> + Send,
    ) -> (Vec<[u8; 32]>, Vec<([u8; 32], Arc<Footprint>)>) {
        self.admission.finish_rebuild(&self.shared, r, late).await
    }

    // === Proposals ===

    /// Offers the decodings of transactions the driver is about to propose (kept from their
    /// admission), with their footprints, replacing any earlier offer; PrepareProposal,
    /// ProcessProposal and FinalizeBlock use them instead of decoding the same bytes again,
    /// and the proposal verifies each as a recheck would ([`App::recheck`]), so the driver
    /// may propose before its recheck of the last block finished. FinalizeBlock forgets them.
    /// Only decodings and footprints returned by this app's CheckTx (or recheck) belong here.
    pub fn offer_decoded(&self, txs: impl IntoIterator<Item = (Arc<DecodedTx>, Arc<Footprint>)>) {
        self.proposals.offer(txs);
    }

    /// Under CometBFT: offers the decodings and footprints this app's CheckTx kept for `txs`
    /// (see [`App::offer_decoded`]), so a proposal of transactions this node admitted verifies
    /// them as the recheck would and FinalizeBlock does not decode them again; the others are
    /// decoded and run in full.
    pub fn offer_checked<T: AsRef<[u8]>>(&self, txs: &[T]) {
        self.proposals.offer(self.admission.comet_checked(txs.iter().map(AsRef::as_ref)));
    }

    /// ABCI PrepareProposal: keeps transactions in order while they fit in `max_tx_bytes`,
    /// decode and still pass admission (ante and gates) on the latest committed state; the
    /// mempool already ordered them by sender and sequence.
    pub async fn prepare_proposal(&self, req: request::PrepareProposal) -> response::PrepareProposal {
        self.proposals.prepare(&self.shared, &self.store, &self.admission, req).await
    }

    /// ABCI ProcessProposal: rejects a block carrying bytes that are not a transaction, or a
    /// transaction that fails admission (ante: signature, sequence, fee floor, gas limit;
    /// gates) on the latest committed state after the block's earlier transactions.
    pub async fn process_proposal(&self, req: request::ProcessProposal) -> response::ProcessProposal {
        self.proposals.process(&self.shared, &self.store, &self.admission, req).await
    }

    /// ABCI ProcessProposal under CometBFT with optimistic execution: as
    /// [`App::process_proposal`], and an accepted block starts executing at once, while the
    /// validators vote on it; [`App::finalize_decided`] takes the result when that block is
    /// decided (docs/decisions.md, "A proposal executes while it is voted on").
    pub async fn process_proposal_executing(self: &Arc<Self>, req: request::ProcessProposal) -> response::ProcessProposal {
        // A run of another round's proposal at this height ends first: it may stage a commit.
        self.optimistic.drop_running().await;
        let decided = crate::optimistic::decided(&req);
        let verdict = self.process_proposal(req).await;
        if let (response::ProcessProposal::Accept, Some(fb)) = (&verdict, decided) {
            let superseded = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (app, run, stop) = (self.clone(), fb.clone(), superseded.clone());
            let task = tokio::spawn(async move { app.execute_block(run, Some(&stop)).await });
            self.optimistic.start(fb, task, superseded);
        }
        verdict
    }

    // === FinalizeBlock / Commit ===

    /// ABCI FinalizeBlock under CometBFT with optimistic execution: the answer of the block's
    /// execution started at ProcessProposal when it executed this very request, else
    /// [`App::finalize_block`] (after any early run of another block has ended); with what
    /// became of the early run.
    pub async fn finalize_decided(self: &Arc<Self>, req: request::FinalizeBlock) -> (Result<response::FinalizeBlock, AppError>, EarlyRun) {
        match self.optimistic.take_for(&req).await {
            Ok(answer) => (answer, EarlyRun::Taken),
            Err(outcome) => (self.finalize_block(req).await, outcome),
        }
    }

    /// ABCI FinalizeBlock: executes every transaction, writes the block's records, and prepares
    /// (but does not persist) the commit, whose root is the returned app hash.
    pub async fn finalize_block(&self, req: request::FinalizeBlock) -> Result<response::FinalizeBlock, AppError> {
        self.execute_block(req, None).await
    }

    /// FinalizeBlock's execution; `superseded` stops it before its next transaction.
    async fn execute_block(
        &self,
        req: request::FinalizeBlock,
        superseded: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<response::FinalizeBlock, AppError> {
        self.blocks.finalize(&self.shared, &self.store, &self.proposals, req, superseded).await
    }

    /// ABCI Commit: persists the staged block atomically (state, tx index, block records), then
    /// starts a new check overlay on the new state (the driver re-admits its mempool).
    pub async fn commit(&self) -> Result<response::Commit, AppError> {
        let resp = self.commit_keeping_check_state().await?;
        self.reset_check_state().await;
        // CometBFT rechecks what its mempool still holds: the footprints of this round.
        self.admission.next_comet_round();
        Ok(resp)
    }

    /// Like [`App::commit`], but the check overlay stays as it is (on the previous state, with
    /// every admission's effects), so admissions continue meanwhile; the driver must rebuild it
    /// ([`App::begin_check_rebuild`] … [`App::finish_check_rebuild`]) or reset it.
    pub async fn commit_keeping_check_state(&self) -> Result<response::Commit, AppError> {
        let (height, keys) = self.blocks.commit(&self.store).await?;
        self.admission.committed(self.store.storage().latest_version(), keys);
        self.sync.after_commit(&self.store, height);
        Ok(response::Commit { data: Default::default(), retain_height: TmHeight::default() })
    }

    // === Dev chains ===

    /// A dev chain's `evm_revert`: makes the latest state equal to `to`, an earlier committed
    /// snapshot held since (every key of both stores: the state, and the node's records kept
    /// beside it: blocks, the tx index, the history), committed as a new store version whose
    /// height is `to`'s again. The driver must hold block production while this runs and
    /// forget what it kept of later blocks. Returns the height restored.
    ///
    /// Only for a dev chain: it rewrites history, which no network could agree on.
    pub async fn dev_restore(&self, to: &Snapshot) -> Result<u64, AppError> {
        let latest = self.snapshot();
        let mut delta = StateDelta::new(latest.clone());
        // Each store's keys set to `to`'s values: equal values are left alone (the Merkle tree
        // writes only changes).
        let (puts, deletes) = key_changes(latest.prefix_raw(""), to.prefix_raw("")).await.map_err(AppError::store)?;
        for (k, v) in puts {
            cnidarium::StateWrite::put_raw(&mut delta, k, v);
        }
        for k in deletes {
            cnidarium::StateWrite::delete(&mut delta, k);
        }
        let (puts, deletes) = key_changes(latest.nonverifiable_prefix_raw(b""), to.nonverifiable_prefix_raw(b"")).await.map_err(AppError::store)?;
        for (k, v) in puts {
            cnidarium::StateWrite::nonverifiable_put_raw(&mut delta, k, v);
        }
        for k in deletes {
            cnidarium::StateWrite::nonverifiable_delete(&mut delta, k);
        }
        // Version v is height base + v (wrapping): the new version is `to`'s height, and the
        // heights below it are answered by the history, as restored.
        let height = crate::storage::height_at(to).await?;
        let version = self.store.storage().latest_version().wrapping_add(1);
        cnidarium::StateWrite::nonverifiable_put_raw(
            &mut delta,
            state_key::VERSION_BASE.as_bytes().to_vec(),
            height.wrapping_sub(version).to_be_bytes().to_vec(),
        );
        self.store.storage().commit(delta).await.map_err(AppError::store)?;
        self.store.reset_cache();
        self.admission.forget_blocks();
        self.reset_check_state().await;
        Ok(height)
    }

    // === State sync ===

    /// Starts taking state-sync snapshots after commits (node-local; once, before serving).
    pub fn enable_snapshots(&self, settings: crate::statesync::SnapshotSettings) -> Arc<crate::statesync::Snapshotter> {
        self.sync.enable(settings)
    }

    /// ABCI ListSnapshots: the complete snapshots this node keeps, newest first.
    pub fn list_snapshots(&self) -> response::ListSnapshots {
        self.sync.list()
    }

    /// ABCI LoadSnapshotChunk: a chunk's bytes, empty when this node does not have it.
    pub fn load_snapshot_chunk(&self, req: request::LoadSnapshotChunk) -> response::LoadSnapshotChunk {
        self.sync.load_chunk(req)
    }

    /// ABCI OfferSnapshot: accepts a snapshot of format [`crate::statesync::FORMAT`] whose
    /// description is consistent, on a node that has no state yet (a later offer replaces an
    /// unfinished restore).
    pub async fn offer_snapshot(&self, req: request::OfferSnapshot) -> response::OfferSnapshot {
        self.sync.offer(&self.store, req).await
    }

    /// ABCI ApplySnapshotChunk. A chunk whose hash is not the listed one is refetched (and its
    /// sender rejected); once the last chunk arrives the state is checked against the offered
    /// app hash and committed, or the snapshot is rejected with nothing written.
    pub async fn apply_snapshot_chunk(&self, req: request::ApplySnapshotChunk) -> response::ApplySnapshotChunk {
        self.sync.apply_chunk(&self.shared, &self.store, &self.admission, req).await
    }
}

/// What turns the store read by `now` into the one read by `then`: the keys to write (absent
/// from `now`, or with another value) and the keys to delete (absent from `then`).
async fn key_changes<K: Ord>(
    now: impl futures::Stream<Item = anyhow::Result<(K, Vec<u8>)>>,
    then: impl futures::Stream<Item = anyhow::Result<(K, Vec<u8>)>>,
) -> anyhow::Result<(Vec<(K, Vec<u8>)>, Vec<K>)> {
    use futures::StreamExt;
    let mut held = std::collections::BTreeMap::new();
    let mut now = std::pin::pin!(now);
    while let Some(kv) = now.next().await {
        let (k, v) = kv?;
        held.insert(k, v);
    }
    let mut puts = Vec::new();
    let mut then = std::pin::pin!(then);
    while let Some(kv) = then.next().await {
        let (k, v) = kv?;
        if held.remove(&k).as_ref() != Some(&v) {
            puts.push((k, v));
        }
    }
    Ok((puts, held.into_keys().collect()))
}

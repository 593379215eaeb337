//! The ABCI++ methods.

use std::sync::Arc;

use cnidarium::{Snapshot, StagedWriteBatch, StateDelta, StateRead, StateWrite, Storage};
use lantau_module_api::{store, BlockCtx, Event, GasMeter, SdkError, TxError};
use lantau_primitives::Address;

use crate::footprint::Footprint;
use lantau_module_api::reads::{ReadLog, Recording};
use tendermint::abci::{request, response, types::ExecTxResult, Code};
use tendermint::block::Height as TmHeight;
use tendermint::AppHash;

use crate::ante;
use crate::config::AppConfig;
use crate::error::AppError;
use crate::genesis::AppGenesis;
use crate::hooks::BlockHook;
use crate::pipeline::Mode;
use crate::readcache::{CachedSnapshot, ReadCache};
use crate::sigcache::SigCache;
use crate::state_key;
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
    /// entry and offers it back with [`App::offer_decoded`] so blocks do not decode again).
    pub decoded: Option<Arc<DecodedTx>>,
}

/// Footprints by transaction hash.
type Footprints = std::collections::BTreeMap<[u8; 32], Arc<Footprint>>;

/// Transactions the driver offered, by hash, with their footprints.
type Offered = std::collections::BTreeMap<[u8; 32], (Arc<DecodedTx>, Arc<Footprint>)>;

/// A check overlay being rebuilt on a newly committed state while admissions continue on the
/// old one; see [`App::begin_check_rebuild`].
pub struct CheckRebuild {
    state: StateDelta<CachedSnapshot>,
    block: BlockCtx,
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

struct Staged {
    batch: StagedWriteBatch,
    height: u64,
    /// For the log line at commit: the block's transactions and time.
    txs: usize,
    time: tendermint::Time,
    /// The version the block executed on, its verifiable write set and its non-verifiable
    /// writes the read cache holds (under the cache's names), to roll the cache forward at
    /// commit.
    base_version: u64,
    writes: Vec<(String, Option<Vec<u8>>)>,
    cached_nv_writes: Vec<(String, Option<Vec<u8>>)>,
}

/// The Lantau state machine over cnidarium storage.
pub struct App {
    storage: Storage,
    cfg: AppConfig,
    sigs: SigCache,
    hook: Arc<dyn BlockHook>,
    chain_id: parking_lot::RwLock<String>,
    check: tokio::sync::Mutex<StateDelta<CachedSnapshot>>,
    /// Committed values of hot keys at the latest version (node-local; speed only).
    reads: Arc<ReadCache>,
    staged: parking_lot::Mutex<Option<Staged>>,
    /// The context admissions run in (next height, last block time), refreshed at every
    /// commit so that CheckTx does not read it from the store each time.
    check_ctx: parking_lot::RwLock<Option<BlockCtx>>,
    /// Gate traces this node computed (TxTrace).
    traces: parking_lot::Mutex<crate::trace::TraceBuffer>,
    /// The footprints of the transactions CometBFT's mempool holds (ABCI CheckTx), by hash:
    /// those admitted or rechecked since the last commit, and those of the round before,
    /// which its recheck takes; what it does not take is dropped at the next commit.
    comet_footprints: parking_lot::Mutex<(Footprints, Footprints)>,
    /// The fee collector's native balance key (credited by every admission; see
    /// [`crate::footprint`]).
    collector_balance: String,
    /// Transactions the driver already decoded (at admission), by hash, for the next block's
    /// PrepareProposal / ProcessProposal / FinalizeBlock. Decoding is pure, so a decoded
    /// transaction is exactly what decoding the same bytes again would give.
    /// With each, the footprint of its admission (or last recheck), so a proposal verifies it
    /// the way the recheck would (replayed when its keys hold what its admission read).
    known: parking_lot::Mutex<Offered>,
    /// The last proposal PrepareProposal verified: the state version and a digest of its
    /// transactions' hashes, in order (ProcessProposal of the same list on the same state
    /// accepts it without verifying it again).
    verified: parking_lot::Mutex<Option<(u64, [u8; 32])>>,
    /// This node's state-sync snapshots, when it takes them.
    snapshots: std::sync::OnceLock<Arc<crate::statesync::Snapshotter>>,
    /// A state-sync restore in progress.
    restore: tokio::sync::Mutex<Option<crate::statesync::Restore>>,
    /// The node's queries (the tx index, blocks), when a node installed them.
    query_ext: std::sync::OnceLock<Arc<dyn crate::grpc::QueryExtension>>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").field("chain_id", &*self.chain_id.read()).finish_non_exhaustive()
    }
}

fn to_offset(t: tendermint::Time) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp_nanos(t.unix_timestamp_nanos()).unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

fn exec_err(e: &TxError, gas_wanted: u64, gas_used: u64, events: Vec<Event>) -> ExecTxResult {
    ExecTxResult {
        code: Code::from(e.code),
        data: Default::default(),
        log: e.log.clone(),
        info: String::new(),
        gas_wanted: i64::try_from(gas_wanted).unwrap_or(i64::MAX),
        gas_used: i64::try_from(gas_used).unwrap_or(i64::MAX),
        events,
        codespace: e.codespace.to_string(),
    }
}

async fn read_u64<S: StateRead>(s: &S, key: &'static str) -> Result<Option<u64>, AppError> {
    Ok(match s.get_raw(key).await.map_err(AppError::store)? {
        Some(b) => Some(u64::from_be_bytes(b.as_slice().try_into().map_err(|_| AppError::Corrupt { key, why: format!("{} bytes, not 8", b.len()) })?)),
        None => None,
    })
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
        let storage = Storage::load(path.clone(), vec![]).await.map_err(|e| AppError::Open { path, detail: format!("{e:#}") })?;
        Self::with_storage(storage, cfg, hook).await
    }

    /// Wraps an opened storage.
    pub async fn with_storage(storage: Storage, cfg: AppConfig, hook: Arc<dyn BlockHook>) -> Result<Self, AppError> {
        let snap = storage.latest_snapshot();
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
        // What the modules ask the read cache to memoize and keep (`Module::MEMOIZED_SCANS`,
        // `Module::CACHED_NONVERIFIABLE`).
        let reads = Arc::new(
            ReadCache::new(crate::readcache::MAX_ENTRIES)
                .memoizing_scans_of(&crate::modules::memoized_scans())
                .caching_nonverifiable(&crate::modules::cached_nonverifiable()),
        );
        reads.reset(snap.version());
        Ok(Self {
            sigs: SigCache::new(cfg.sig_cache_size),
            check: tokio::sync::Mutex::new(StateDelta::new(CachedSnapshot::new(snap, reads.clone()))),
            reads,
            storage,
            cfg,
            hook,
            chain_id: parking_lot::RwLock::new(chain_id),
            staged: parking_lot::Mutex::new(None),
            check_ctx: parking_lot::RwLock::new(None),
            traces: parking_lot::Mutex::new(Default::default()),
            comet_footprints: parking_lot::Mutex::new(Default::default()),
            collector_balance: lantau_bank::state_key::balance(&crate::ante::fee_collector(), lantau_primitives::NATIVE_DENOM),
            known: parking_lot::Mutex::new(std::collections::BTreeMap::new()),
            verified: parking_lot::Mutex::new(None),
            snapshots: std::sync::OnceLock::new(),
            restore: tokio::sync::Mutex::new(None),
            query_ext: std::sync::OnceLock::new(),
        })
    }

    /// Shuts the store down (waits for its dispatcher and closes RocksDB), so the same path can
    /// be opened again in this process. Call once every other handle to the app is gone.
    pub async fn release(self) {
        self.storage.release().await;
    }

    /// The storage (queries read its committed snapshots).
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The latest committed snapshot.
    pub fn snapshot(&self) -> Snapshot {
        self.storage.latest_snapshot()
    }

    /// The latest committed snapshot, its verifiable point reads served by the node's read
    /// cache when it holds them (same values, fewer thread hand-offs).
    pub fn cached_snapshot(&self) -> CachedSnapshot {
        CachedSnapshot::new(self.storage.latest_snapshot(), self.reads.clone())
    }

    /// A query by gRPC method name on the latest committed state (protobuf in and out), through
    /// the one router ([`App::grpc_query`]).
    pub async fn query(&self, method: &str, request: &[u8]) -> Result<Vec<u8>, lantau_module_api::QueryError> {
        self.grpc_query(0, method, request).await
    }

    pub(crate) fn query_extension(&self) -> &std::sync::OnceLock<Arc<dyn crate::grpc::QueryExtension>> {
        &self.query_ext
    }

    /// ABCI Query. `path` is either a gRPC method of a module's query service
    /// (`/chain.kyc.v1.Query/Identity`: protobuf request in `data`, protobuf response in
    /// `value`), routed through the module list like the REST and gRPC servers, or `/store/key`
    /// with a raw store key in `data` (its committed value; with `prove`, the JMT proofs as
    /// `ics23:jmt` proof ops, substore then root). `height` 0 means the latest; an older
    /// height answers from that version while the store keeps it. Codes follow the Cosmos
    /// SDK's (`sdk` codespace): 6 unknown path, 18 invalid request, 26 invalid height,
    /// 38 not found, 1 internal.
    pub async fn abci_query(&self, req: request::Query) -> response::Query {
        let fail = |code: u32, log: String, height: u64| response::Query {
            code: Code::from(code),
            log,
            codespace: "sdk".into(),
            height: TmHeight::try_from(height).unwrap_or_default(),
            ..Default::default()
        };
        let latest = match self.last_height().await {
            Ok(h) => h,
            Err(e) => return fail(1, e.to_string(), 0),
        };
        let asked = req.height.value();
        let height = if asked == 0 { latest } else { asked };
        let snap = match self.snapshot_at_height(Some(height)).await {
            Ok(Some(s)) => s,
            Ok(None) if asked > latest => {
                return fail(26, format!("cannot query with height in the future; please provide a valid height (latest {latest})"), latest)
            }
            Ok(None) => return fail(26, format!("height {asked} is no longer kept by this node (latest {latest})"), latest),
            Err(e) => return fail(1, e.to_string(), latest),
        };
        let ok = |key: Vec<u8>, value: Vec<u8>, proof: Option<tendermint::merkle::proof::ProofOps>| response::Query {
            key: key.into(),
            value: value.into(),
            proof,
            height: TmHeight::try_from(height).unwrap_or_default(),
            ..Default::default()
        };
        let path = req.path.as_str();
        if matches!(path, "/store/key" | "store/key" | "/store/main/key") {
            if req.prove {
                return match snap.get_with_proof(req.data.to_vec()).await {
                    Ok((value, proof)) => {
                        let ops = proof
                            .proofs
                            .iter()
                            .map(|p| tendermint::merkle::proof::ProofOp {
                                field_type: "ics23:jmt".into(),
                                key: req.data.to_vec(),
                                data: prost::Message::encode_to_vec(p),
                            })
                            .collect();
                        ok(req.data.to_vec(), value.unwrap_or_default(), Some(tendermint::merkle::proof::ProofOps { ops }))
                    }
                    Err(e) => fail(18, e.to_string(), height),
                };
            }
            let key = match std::str::from_utf8(&req.data) {
                Ok(k) if !k.is_empty() => k.to_string(),
                _ => return fail(18, "a store key is non-empty UTF-8".into(), height),
            };
            return match cnidarium::StateRead::get_raw(&snap, &key).await {
                Ok(v) => ok(req.data.to_vec(), v.unwrap_or_default(), None),
                Err(e) => fail(1, lantau_module_api::store::fault(format_args!("reading {key}"), e).to_string(), height),
            };
        }
        // Errors read as the Cosmos SDK writes them (a gRPC status wrapped in an sdk error), so
        // clients that match on them (CosmJS: `rpc error: code = NotFound` is a missing
        // account, not a failure) work unchanged.
        match self.route_query(&snap, asked, path, &req.data).await {
            Ok(v) => ok(Vec::new(), v, None),
            Err(lantau_module_api::QueryError::InvalidArgument(m)) if m.starts_with("unknown query path") => fail(6, m, height),
            Err(lantau_module_api::QueryError::NotFound(m)) => fail(38, format!("rpc error: code = NotFound desc = {m}: key not found"), height),
            Err(lantau_module_api::QueryError::InvalidArgument(m)) => {
                fail(18, format!("rpc error: code = InvalidArgument desc = {m}: invalid request"), height)
            }
            Err(lantau_module_api::QueryError::FailedPrecondition(m)) => {
                fail(18, format!("rpc error: code = FailedPrecondition desc = {m}: invalid request"), height)
            }
            Err(lantau_module_api::QueryError::Internal(m)) => fail(1, format!("rpc error: code = Internal desc = {m}"), height),
        }
    }

    /// The admission state (locked while held).
    pub(crate) async fn check_state(&self) -> tokio::sync::MutexGuard<'_, StateDelta<CachedSnapshot>> {
        self.check.lock().await
    }

    /// The limits.
    pub fn config(&self) -> &AppConfig {
        &self.cfg
    }

    /// The chain id (empty before InitChain).
    pub fn chain_id(&self) -> String {
        self.chain_id.read().clone()
    }

    /// The consensus parameter `block.max_gas` of the latest committed state: the most gas
    /// (summed gas limits) one block may carry; `None` when unlimited (-1).
    pub async fn max_block_gas(&self) -> Result<Option<u64>, AppError> {
        Self::max_block_gas_at(self.cached_snapshot()).await
    }

    async fn max_block_gas_at<S: cnidarium::StateRead>(snap: S) -> Result<Option<u64>, AppError> {
        let raw = snap.get_raw(state_key::MAX_BLOCK_GAS).await.map_err(AppError::store)?;
        Ok(raw.and_then(|b| b.as_slice().try_into().ok().map(i64::from_be_bytes)).and_then(|g| u64::try_from(g).ok()))
    }

    /// The height of the last committed block (0 before the first block).
    pub async fn last_height(&self) -> Result<u64, AppError> {
        Self::height_at(&self.snapshot()).await
    }

    /// The height of the last block in a snapshot (0 before the first block).
    pub async fn height_at(snap: &Snapshot) -> Result<u64, AppError> {
        Ok(read_u64(snap, state_key::HEIGHT).await?.unwrap_or(0))
    }

    /// The time of the last committed block (genesis time before the first block).
    pub async fn last_block_time(&self) -> Result<time::OffsetDateTime, AppError> {
        self.block_time_at(&self.snapshot()).await
    }

    pub(crate) async fn block_time_of(&self, snap: &Snapshot) -> Result<time::OffsetDateTime, AppError> {
        self.block_time_at(snap).await
    }

    async fn block_time_at(&self, snap: &Snapshot) -> Result<time::OffsetDateTime, AppError> {
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

    /// The EVM chain id from genesis.
    pub async fn evm_chain_id(&self) -> Result<u64, AppError> {
        Ok(read_u64(&self.snapshot(), state_key::EVM_CHAIN_ID).await?.unwrap_or(0))
    }

    /// The app hash of the latest committed state.
    pub async fn app_hash(&self) -> Result<AppHash, AppError> {
        let root = self.snapshot().root_hash().await.map_err(AppError::store)?;
        Ok(AppHash::try_from(root.0.to_vec())?)
    }

    // === Info / InitChain ===

    /// ABCI Info.
    pub async fn info(&self, _req: request::Info) -> Result<response::Info, AppError> {
        let initialized = !self.chain_id().is_empty();
        Ok(response::Info {
            data: "lantau".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            app_version: 1,
            last_block_height: TmHeight::try_from(self.last_height().await?)?,
            last_block_app_hash: if initialized { self.app_hash().await? } else { AppHash::default() },
        })
    }

    /// ABCI InitChain: writes genesis and commits it as version 0. Idempotent for the same
    /// chain id: a restart before the first block returns the stored genesis app hash.
    pub async fn init_chain(&self, req: request::InitChain) -> Result<response::InitChain, AppError> {
        if !self.chain_id().is_empty() {
            if self.chain_id() != req.chain_id {
                return Err(AppError::ChainMismatch { stored: self.chain_id(), requested: req.chain_id });
            }
            return Ok(response::InitChain { consensus_params: None, validators: vec![], app_hash: self.app_hash().await? });
        }
        let genesis = AppGenesis::from_json(&req.app_state_bytes).map_err(AppError::Genesis)?;
        let mut delta = StateDelta::new(self.snapshot());
        genesis.apply(&mut delta, &req.chain_id, to_offset(req.time)).await.map_err(AppError::Genesis)?;
        let gas = GasMeter::infinite();
        store::put(&mut delta, &gas, state_key::GENESIS_TIME.to_string(), to_offset(req.time).unix_timestamp_nanos().to_be_bytes().to_vec())
            .map_err(AppError::Genesis)?;
        store::put(&mut delta, &gas, state_key::MAX_BLOCK_GAS.to_string(), req.consensus_params.block.max_gas.to_be_bytes().to_vec())
            .map_err(AppError::Genesis)?;
        let root = self.storage.commit(delta).await.map_err(AppError::store)?;
        self.reads.reset(self.storage.latest_version());
        *self.chain_id.write() = req.chain_id.clone();
        self.reset_check_state().await;
        Ok(response::InitChain { consensus_params: None, validators: vec![], app_hash: AppHash::try_from(root.0.to_vec())? })
    }

    // === CheckTx ===

    /// The context admission screens in: the next block's height, and a time just after the
    /// last block's (block times strictly increase), so that a revocation committed in the
    /// last block already applies, as it will at execution.
    fn next_block_ctx(last_height: u64, last_time: time::OffsetDateTime, chain_id: String) -> BlockCtx {
        BlockCtx { height: last_height.saturating_add(1), time: last_time.checked_add(time::Duration::nanoseconds(1)).unwrap_or(last_time), chain_id }
    }

    async fn check_block_ctx(&self) -> Result<BlockCtx, AppError> {
        if let Some(c) = self.check_ctx.read().clone() {
            return Ok(c);
        }
        let ctx = Self::next_block_ctx(self.last_height().await?, self.last_block_time().await?, self.chain_id());
        *self.check_ctx.write() = Some(ctx.clone());
        Ok(ctx)
    }

    /// Admits a transaction against the check overlay (the latest committed state plus the
    /// ante effects of every transaction admitted since). Re-admitting after a commit (recheck)
    /// calls this again for each waiting transaction. A rejection writes nothing.
    pub async fn check_tx_bytes(&self, bytes: &[u8]) -> CheckOutcome {
        self.check_tx_admit(bytes, |_, _| Ok(())).await
    }

    /// Decodes `bytes`, or returns the decoding the driver offered for them.
    fn decode_known(&self, bytes: &[u8]) -> Result<Arc<DecodedTx>, TxError> {
        let hash = tx::tx_hash(bytes);
        if let Some((d, _)) = self.known.lock().get(&hash) {
            return Ok(d.clone());
        }
        tx::decode(bytes, &self.cfg).map(Arc::new)
    }

    /// Offers the decodings of transactions the driver is about to propose (kept from their
    /// admission), with their footprints, replacing any earlier offer; PrepareProposal,
    /// ProcessProposal and FinalizeBlock use them instead of decoding the same bytes again,
    /// and the proposal verifies each as a recheck would ([`App::recheck`]), so the driver
    /// may propose before its recheck of the last block finished. FinalizeBlock forgets them.
    /// Only decodings and footprints returned by this app's CheckTx (or recheck) belong here.
    pub fn offer_decoded(&self, txs: impl IntoIterator<Item = (Arc<DecodedTx>, Arc<Footprint>)>) {
        *self.known.lock() = txs.into_iter().map(|(t, f)| (t.hash, (t, f))).collect();
    }

    /// Like [`App::check_tx_bytes`], calling `admit` under the check lock once the checks
    /// passed and before their effects join the check overlay; an `admit` error (mempool full,
    /// duplicate) rejects the transaction with nothing applied. A mempool inserts there, so its
    /// order is the order in which the check overlay saw the transactions.
    pub async fn check_tx_admit(&self, bytes: &[u8], admit: impl FnOnce(&Arc<DecodedTx>, Arc<Footprint>) -> Result<(), TxError> + Send) -> CheckOutcome {
        let (decoded, block) = match self.decode_for_check(bytes).await {
            Ok(x) => x,
            Err(out) => return *out,
        };
        let (hash, sender, gas_wanted) = (decoded.hash, Some((decoded.signer, decoded.sequence)), decoded.gas_limit);
        // No block could carry a transaction wanting more gas than `block.max_gas`.
        let over_block = match Self::max_block_gas_at(self.cached_snapshot()).await {
            Ok(Some(max)) if decoded.gas_limit > max => Some(TxError::from(SdkError::InvalidGasLimit(format!(
                "gas limit {} exceeds the block's maximum gas {max} (consensus parameter block.max_gas)",
                decoded.gas_limit
            )))),
            Ok(_) => None,
            Err(e) => Some(ante_internal(e)),
        };
        if let Some(e) = over_block {
            return CheckOutcome { hash, sender, gas_wanted, gas_used: 0, result: Err(e), decoded: Some(decoded) };
        }
        // Verify the signature before taking the check lock, so admissions verify in parallel.
        // The account number is immutable once assigned, so the committed snapshot is as good as
        // the check overlay for it; the ante below hits the cache.
        self.preverify(&decoded, &block.chain_id).await;

        let gas = GasMeter::new(decoded.gas_limit);
        let mut check = self.check.lock().await;
        let result = self.admit_on(&mut check, &decoded, &block, &gas, Mode::Check, |fp| admit(&decoded, fp)).await.map(drop);
        CheckOutcome { hash, sender, gas_wanted, gas_used: gas.used(), result, decoded: Some(decoded) }
    }

    /// Runs the admission of `tx` (`mode`: check or recheck) on `state`, logging what the ante
    /// and the gates read; when it passes and `admit` takes its footprint, its writes join
    /// `state`. Returns the footprint.
    async fn admit_on(
        &self,
        state: &mut StateDelta<CachedSnapshot>,
        tx: &DecodedTx,
        block: &BlockCtx,
        gas: &GasMeter,
        mode: Mode,
        admit: impl FnOnce(Arc<Footprint>) -> Result<(), TxError>,
    ) -> Result<Arc<Footprint>, TxError> {
        let log = ReadLog::new();
        let mut overlay = StateDelta::new(Recording::new(state, log.clone()));
        let env = crate::pipeline::Env { reads: Some(&log), ..self.pipeline_env() };
        crate::pipeline::run(&env, &mut overlay, tx, block, gas, mode).await.result?;
        let (below, changes) = overlay.flatten();
        let state = below.into_inner();
        let footprint = Arc::new(Footprint::of(&*state, &changes, log.take(), &self.collector_balance, &Self::payer_balance(tx)).await);
        admit(footprint.clone())?;
        changes.apply_to(state);
        Ok(footprint)
    }

    async fn preverify(&self, tx: &DecodedTx, chain_id: &str) {
        use lantau_auth::AuthRead;
        // An Ethereum transaction's sender was recovered from its signature at decode.
        if tx.eth_hash.is_some() {
            return;
        }
        let snap = self.cached_snapshot();
        let gas = GasMeter::infinite();
        if let Ok(Some(acct)) = snap.account(&gas, &tx.signer).await {
            let pk: Option<[u8; 33]> = tx.pubkey.or_else(|| acct.pub_key.as_ref().try_into().ok());
            if let Some(pk) = pk {
                // The verdict is re-derived by the ante; this only warms the cache.
                let _warm = ante::verify_signature(tx, &pk, chain_id, acct.account_number, &self.sigs);
            }
        }
    }

    /// ABCI CheckTx. A `Recheck` (CometBFT re-admitting its mempool after a commit, in
    /// mempool order, on the check overlay [`App::commit`] reset) replays the transaction's
    /// admission when everything it read holds what it found ([`crate::footprint`]), and runs
    /// the pipeline's recheck mode (ante and gates) otherwise.
    pub async fn check_tx(&self, req: request::CheckTx) -> response::CheckTx {
        let out = match req.kind {
            request::CheckTxKind::New => {
                self.check_tx_admit(&req.tx, |tx, fp| {
                    self.comet_footprints.lock().0.insert(tx.hash, fp);
                    Ok(())
                })
                .await
            }
            request::CheckTxKind::Recheck => self.recheck_bytes(&req.tx).await,
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

    /// Decodes a transaction for admission and gives the context it is screened in; a failure
    /// is the admission's answer.
    async fn decode_for_check(&self, bytes: &[u8]) -> Result<(Arc<DecodedTx>, BlockCtx), Box<CheckOutcome>> {
        let hash = tx::tx_hash(bytes);
        let decoded = tx::decode(bytes, &self.cfg)
            .map(Arc::new)
            .map_err(|e| Box::new(CheckOutcome { hash, sender: None, gas_wanted: 0, gas_used: 0, result: Err(e), decoded: None }))?;
        match self.check_block_ctx().await {
            Ok(b) => Ok((decoded, b)),
            Err(e) => Err(Box::new(CheckOutcome {
                hash,
                sender: Some((decoded.signer, decoded.sequence)),
                gas_wanted: decoded.gas_limit,
                gas_used: 0,
                result: Err(ante_internal(e)),
                decoded: Some(decoded),
            })),
        }
    }

    /// Re-admits a waiting transaction on the check overlay (CometBFT's recheck).
    async fn recheck_bytes(&self, bytes: &[u8]) -> CheckOutcome {
        let (decoded, block) = match self.decode_for_check(bytes).await {
            Ok(x) => x,
            Err(out) => return *out,
        };
        let (hash, sender, gas_wanted) = (decoded.hash, Some((decoded.signer, decoded.sequence)), decoded.gas_limit);
        let gas = GasMeter::new(decoded.gas_limit);
        let footprint = self.comet_footprints.lock().1.remove(&hash);
        let mut check = self.check.lock().await;
        let result = match self.recheck_on(&mut check, &decoded, &block, &gas, footprint.as_ref()).await {
            Ok((fp, _)) => {
                self.comet_footprints.lock().0.insert(hash, fp);
                Ok(())
            }
            Err(e) => Err(e),
        };
        CheckOutcome { hash, sender, gas_wanted, gas_used: gas.used(), result, decoded: Some(decoded) }
    }

    /// The recheck of one transaction on `state`, whose effects stay only when it passes: its
    /// admission's writes when everything it read holds what it found (`footprint`), the
    /// pipeline's recheck otherwise. Returns the footprint the transaction now has, and
    /// whether it was replayed.
    async fn recheck_on(
        &self,
        state: &mut StateDelta<CachedSnapshot>,
        tx: &DecodedTx,
        block: &BlockCtx,
        gas: &GasMeter,
        footprint: Option<&Arc<Footprint>>,
    ) -> Result<(Arc<Footprint>, bool), TxError> {
        let replay = match footprint {
            Some(fp) if tx.timeout_height == 0 => fp.replay_on(&*state).await.map(|r| (fp, r)),
            _ => None,
        };
        if let Some((footprint, replayed)) = replay {
            for (k, v) in replayed.writes() {
                match v {
                    Some(v) => state.put_raw(k.clone(), v.clone()),
                    None => state.delete(k.clone()),
                }
            }
            // Unchanged, or the fee came out of a larger balance (a new footprint).
            return Ok((if replayed == **footprint { footprint.clone() } else { Arc::new(replayed) }, true));
        }
        Ok((self.admit_on(state, tx, block, gas, Mode::Recheck, |_| Ok(())).await?, false))
    }

    /// Drops every admission effect and starts a new check overlay on the latest committed
    /// state. The mempool then re-admits what it still holds.
    pub async fn reset_check_state(&self) {
        *self.check_ctx.write() = None;
        *self.check.lock().await = StateDelta::new(self.cached_snapshot());
    }

    /// Starts a new check overlay on the latest committed state, for a driver that re-admits
    /// its mempool after [`App::commit_keeping_check_state`] without stopping admissions:
    /// admissions keep running on the old overlay while the driver re-admits each waiting
    /// transaction with [`App::recheck`], then [`App::finish_check_rebuild`] re-admits the few
    /// admitted meanwhile and puts the new overlay in place, under the check lock.
    pub async fn begin_check_rebuild(&self) -> Result<CheckRebuild, AppError> {
        self.check_rebuild_on(self.cached_snapshot()).await
    }

    /// The fee payer's native balance key.
    fn payer_balance(tx: &DecodedTx) -> String {
        lantau_bank::state_key::balance(&tx.signer, lantau_primitives::NATIVE_DENOM)
    }

    async fn check_rebuild_on(&self, snap: CachedSnapshot) -> Result<CheckRebuild, AppError> {
        let block = Self::next_block_ctx(Self::height_at(snap.snapshot()).await?, self.block_time_at(snap.snapshot()).await?, self.chain_id());
        Ok(CheckRebuild { state: StateDelta::new(snap), block, replayed: 0, rerun_txs: 0 })
    }

    /// Re-admits one waiting transaction on a rebuilt overlay: the same pipeline as CheckTx
    /// (ante and gate chain), so a transaction whose party was blacklisted since its
    /// admission fails here with the gate's code and leaves the mempool. When the transaction
    /// has no timeout height and everything its admission read holds on the rebuilt overlay
    /// what it found, the admission's writes (`footprint`) are put in place instead
    /// ([`crate::footprint`]). Returns the footprint the transaction now has.
    pub async fn recheck(&self, r: &mut CheckRebuild, tx: &DecodedTx, footprint: &Arc<Footprint>) -> Result<Arc<Footprint>, TxError> {
        let out = self.recheck_on(&mut r.state, tx, &r.block, &GasMeter::new(tx.gas_limit), Some(footprint)).await;
        match &out {
            Ok((_, true)) => r.replayed = r.replayed.saturating_add(1),
            _ => r.rerun_txs = r.rerun_txs.saturating_add(1),
        }
        out.map(|(fp, _)| fp)
    }

    /// Under the check lock (so no admission runs meanwhile): re-admits what `late` returns
    /// (the transactions admitted on the old overlay since the driver listed its mempool, in
    /// admission order, with their footprints), then makes the rebuilt overlay the check
    /// overlay. Returns the hashes of the late transactions that no longer pass, and the new
    /// footprints of those that do.
    pub async fn finish_check_rebuild(
        &self,
        mut r: CheckRebuild,
        late: impl FnOnce() -> Vec<(Arc<DecodedTx>, Arc<Footprint>)> + Send,
    ) -> (Vec<[u8; 32]>, Vec<([u8; 32], Arc<Footprint>)>) {
        let mut check = self.check.lock().await;
        let mut failed = Vec::new();
        let mut kept = Vec::new();
        for (tx, fp) in late() {
            match self.recheck(&mut r, &tx, &fp).await {
                Ok(fp) => kept.push((tx.hash, fp)),
                Err(_) => failed.push(tx.hash),
            }
        }
        *check = r.state;
        *self.check_ctx.write() = Some(r.block);
        (failed, kept)
    }

    // === Proposals ===

    /// Runs each of `txs`, in order, through admission (ante and gates) on a throwaway
    /// overlay of the latest committed state, as the block would meet them: `Ok` for those
    /// that pass, the first failure otherwise. A transaction whose decoding the driver offered
    /// ([`App::offer_decoded`]) is verified as the recheck verifies a waiting transaction:
    /// its admission's writes are replayed when everything that admission read holds what it
    /// found, and it runs again otherwise.
    async fn verify_in_order<T: AsRef<[u8]>>(&self, txs: &[T]) -> Vec<Result<(), TxError>> {
        let mut out = Vec::with_capacity(txs.len());
        let snap = self.cached_snapshot();
        // The block's gas: the sum of its transactions' gas limits, against `block.max_gas`.
        let max_gas = match Self::max_block_gas_at(&snap).await {
            Ok(m) => m,
            Err(e) => {
                let e = ante_internal(e);
                return txs.iter().map(|_| Err(e.clone())).collect();
            }
        };
        let mut block_gas = 0u64;
        let mut r = match self.check_rebuild_on(snap).await {
            Ok(r) => r,
            Err(e) => {
                let e = ante_internal(e);
                return txs.iter().map(|_| Err(e.clone())).collect();
            }
        };
        for t in txs {
            let t = t.as_ref();
            let hash = tx::tx_hash(t);
            let known = self.known.lock().get(&hash).cloned();
            let (decoded, footprint) = match known {
                Some((d, f)) => (d, Some(f)),
                None => match tx::decode(t, &self.cfg) {
                    Ok(d) => (Arc::new(d), None),
                    Err(e) => {
                        out.push(Err(e));
                        continue;
                    }
                },
            };
            let gas_after = block_gas.saturating_add(decoded.gas_limit);
            if let Some(max) = max_gas.filter(|m| gas_after > *m) {
                out.push(Err(SdkError::OutOfGas(format!("the block's gas limits would reach {gas_after}, over the consensus maximum {max}")).into()));
                continue;
            }
            block_gas = gas_after;
            if let Some(fp) = footprint {
                out.push(self.recheck(&mut r, &decoded, &fp).await.map(|_| ()));
                continue;
            }
            let gas = GasMeter::new(decoded.gas_limit);
            let mut overlay = StateDelta::new(&mut r.state);
            let res = crate::pipeline::run(&self.pipeline_env(), &mut overlay, &decoded, &r.block, &gas, Mode::Propose).await.result;
            if res.is_ok() {
                overlay.apply();
            }
            out.push(res);
        }
        out
    }

    /// What the memo of a verified proposal holds for `txs` on `version`.
    fn proposal_digest<T: AsRef<[u8]>>(version: u64, txs: &[T]) -> (u64, [u8; 32]) {
        let mut all = Vec::with_capacity(txs.len().saturating_mul(32));
        for t in txs {
            all.extend_from_slice(&tx::tx_hash(t.as_ref()));
        }
        (version, lantau_crypto::sha256(&all))
    }

    /// ABCI PrepareProposal: keeps transactions in order while they fit in `max_tx_bytes`,
    /// decode and still pass admission (ante and gates) on the latest committed state; the
    /// mempool already ordered them by sender and sequence.
    pub async fn prepare_proposal(&self, req: request::PrepareProposal) -> response::PrepareProposal {
        let max = usize::try_from(req.max_tx_bytes).unwrap_or(usize::MAX);
        let mut total = 0usize;
        let mut fitting = Vec::with_capacity(req.txs.len());
        for t in req.txs {
            let Some(next) = total.checked_add(t.len()) else { break };
            if next > max {
                break;
            }
            total = next;
            fitting.push(t);
        }
        let version = self.cached_snapshot().version();
        let verdicts = self.verify_in_order(&fitting).await;
        let txs: Vec<_> = fitting.into_iter().zip(verdicts).filter(|(_, v)| v.is_ok()).map(|(t, _)| t).collect();
        // Each kept transaction passed after the kept ones before it: the list as proposed
        // passes on this state, which ProcessProposal would verify again.
        *self.verified.lock() = Some(Self::proposal_digest(version, &txs));
        response::PrepareProposal { txs }
    }

    /// ABCI ProcessProposal: rejects a block carrying bytes that are not a transaction, or a
    /// transaction that fails admission (ante: signature, sequence, fee floor, gas limit;
    /// gates) on the latest committed state after the block's earlier transactions.
    pub async fn process_proposal(&self, req: request::ProcessProposal) -> response::ProcessProposal {
        let version = self.cached_snapshot().version();
        if *self.verified.lock() == Some(Self::proposal_digest(version, &req.txs)) {
            return response::ProcessProposal::Accept;
        }
        let verdicts = self.verify_in_order(&req.txs).await;
        match verdicts.iter().position(|v| v.is_err()) {
            None => response::ProcessProposal::Accept,
            Some(i) => {
                if let Some(Err(e)) = verdicts.get(i) {
                    tracing::warn!(height = %req.height, index = i, code = e.code, log = %e.log, "rejecting a proposal");
                }
                response::ProcessProposal::Reject
            }
        }
    }

    // === FinalizeBlock / Commit ===

    /// Executes one transaction on the block overlay.
    async fn deliver_tx(&self, block_state: &mut StateDelta<CachedSnapshot>, decoded: Result<Arc<DecodedTx>, TxError>, block: &BlockCtx) -> ExecTxResult {
        let decoded = match decoded {
            Ok(d) => d,
            Err(e) => return exec_err(&e, 0, 0, vec![]),
        };
        let gas = GasMeter::new(decoded.gas_limit);
        let run = crate::pipeline::run(&self.pipeline_env(), block_state, &decoded, block, &gas, Mode::Deliver).await;
        match run.result {
            Err(e) => exec_err(&e, decoded.gas_limit, gas.used(), run.events),
            Ok(()) => ExecTxResult {
                code: Code::Ok,
                data: Default::default(),
                log: String::new(),
                info: String::new(),
                gas_wanted: i64::try_from(decoded.gas_limit).unwrap_or(i64::MAX),
                gas_used: i64::try_from(gas.used()).unwrap_or(i64::MAX),
                events: run.events,
                codespace: String::new(),
            },
        }
    }

    /// ABCI FinalizeBlock: executes every transaction, writes the block's records, and prepares
    /// (but does not persist) the commit, whose root is the returned app hash.
    pub async fn finalize_block(&self, req: request::FinalizeBlock) -> Result<response::FinalizeBlock, AppError> {
        // A store that failed a read is not executed on (nor committed to): the driver stops.
        AppError::faulted()?;
        let height = req.height.value();
        let snap = self.cached_snapshot();
        let last = Self::height_at(snap.snapshot()).await?;
        if height != last.saturating_add(1) {
            return Err(AppError::HeightOutOfOrder { height, last });
        }
        let block = BlockCtx { height, time: to_offset(req.time), chain_id: self.chain_id() };
        let base_version = snap.version();
        let max_gas = Self::max_block_gas_at(&snap).await?;
        let t_exec = crate::stopwatch::Stopwatch::start();
        let mut state = StateDelta::new(snap);
        let mut tx_results = Vec::with_capacity(req.txs.len());
        // ProcessProposal refuses a block over `block.max_gas`; should one be decided anyway,
        // the transactions past the limit fail (code 11) without executing, on every replica.
        let mut block_gas = 0u64;
        for t in &req.txs {
            let decoded = self.decode_known(t);
            let wanted = decoded.as_ref().map(|d| d.gas_limit).unwrap_or(0);
            block_gas = block_gas.saturating_add(wanted);
            if let Some(max) = max_gas.filter(|m| block_gas > *m) {
                let e = TxError::from(SdkError::OutOfGas(format!("the block's gas limits reach {block_gas}, over the consensus maximum {max}: not executed")));
                tx_results.push(exec_err(&e, wanted, 0, vec![]));
                continue;
            }
            tx_results.push(self.deliver_tx(&mut state, decoded, &block).await);
        }
        // The offered decodings served this block.
        self.known.lock().clear();
        let gas = GasMeter::infinite();
        store::put(&mut state, &gas, state_key::HEIGHT.to_string(), height.to_be_bytes().to_vec()).map_err(AppError::BlockRecord)?;
        store::put(&mut state, &gas, state_key::BLOCK_TIME.to_string(), block.time.unix_timestamp_nanos().to_be_bytes().to_vec())
            .map_err(AppError::BlockRecord)?;

        let mut resp =
            response::FinalizeBlock { events: vec![], tx_results, validator_updates: vec![], consensus_param_updates: None, app_hash: AppHash::default() };
        let exec_ms = t_exec.ms();
        let t_records = crate::stopwatch::Stopwatch::start();
        // Execution ran over the read cache; the commit needs the same writes over the plain
        // snapshot. The verifiable write set also rolls the read cache forward at commit.
        // Meanwhile, on a second thread, the hook builds its rows (the tx index) from the
        // request and the response: neither task reads what the other writes.
        let hook = &*self.hook;
        let (rows, writes, mut state) = std::thread::scope(|scope| {
            let rows = scope.spawn(|| hook.on_finalize(&req, &resp));
            let (cached, changes) = state.flatten();
            let writes: Vec<(String, Option<Vec<u8>>)> = changes.unwritten_changes().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let cached_nv_writes = self.reads.nonverifiable_writes(changes.nonverifiable_changes().iter());
            if tracing::enabled!(tracing::Level::TRACE) {
                let by = count_by_prefix(changes.nonverifiable_changes().keys().map(Vec::as_slice), 3);
                tracing::trace!(?by, "non-verifiable writes of the block's transactions by prefix");
            }
            let mut plain = StateDelta::new(cached.snapshot().clone());
            changes.apply_to(&mut plain);
            (rows.join(), (writes, cached_nv_writes), plain)
        });
        let (writes, cached_nv_writes) = writes;
        // A hook that panicked panics here, as it did when it ran on this thread.
        let rows = rows.unwrap_or_else(|p| std::panic::resume_unwind(p));
        // Hook writes are non-verifiable: they land in the same atomic write but do not change
        // the root, so the hook sees the response before the app hash is known.
        let (index_rows, index_bytes) = (rows.len(), rows.iter().map(|(k, v)| k.len().saturating_add(v.len())).sum::<usize>());
        for (k, v) in rows {
            cnidarium::StateWrite::nonverifiable_put_raw(&mut state, k, v);
        }
        let records_ms = t_records.ms();
        let t_root = crate::stopwatch::Stopwatch::start();
        let batch = self.storage.prepare_commit(state).await.map_err(AppError::store)?;
        let root_ms = t_root.ms();
        tracing::debug!(height, txs = req.txs.len(), exec_ms, records_ms, root_ms, keys = writes.len(), index_rows, index_bytes, "finalize phases");
        if tracing::enabled!(tracing::Level::TRACE) {
            let by = count_by_prefix(writes.iter().map(|(k, _)| k.as_bytes()), 2);
            tracing::trace!(?by, "verifiable writes by prefix");
        }
        resp.app_hash = AppHash::try_from(batch.root_hash().0.to_vec())?;
        // A transaction that met a store failure failed with an internal error no intact
        // replica would give: no result and no app hash of this block are answered.
        AppError::faulted()?;
        *self.staged.lock() = Some(Staged { batch, height, txs: req.txs.len(), time: req.time, base_version, writes, cached_nv_writes });
        Ok(resp)
    }

    /// ABCI Commit: persists the staged block atomically (state, tx index, block records), then
    /// starts a new check overlay on the new state (the driver re-admits its mempool).
    pub async fn commit(&self) -> Result<response::Commit, AppError> {
        let resp = self.commit_keeping_check_state().await?;
        self.reset_check_state().await;
        // CometBFT rechecks what its mempool still holds: the footprints of this round.
        let mut fps = self.comet_footprints.lock();
        fps.1 = std::mem::take(&mut fps.0);
        Ok(resp)
    }

    /// Like [`App::commit`], but the check overlay stays as it is (on the previous state, with
    /// every admission's effects), so admissions continue meanwhile; the driver must rebuild it
    /// ([`App::begin_check_rebuild`] … [`App::finish_check_rebuild`]) or reset it.
    pub async fn commit_keeping_check_state(&self) -> Result<response::Commit, AppError> {
        AppError::faulted()?;
        let staged = self.staged.lock().take().ok_or(AppError::CommitWithoutFinalize)?;
        let root = staged.batch.root_hash().0;
        // cnidarium panics when RocksDB refuses the write (as it does once a background
        // compaction met a damaged block): a store fault, not a crash of the caller.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.storage.commit_batch(staged.batch))) {
            Ok(r) => r.map(drop).map_err(AppError::store)?,
            Err(p) => {
                let why = p.downcast_ref::<&str>().map(|s| (*s).to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default();
                return Err(AppError::Store(Box::new(lantau_module_api::store::fault(
                    format_args!("writing block {}", staged.height),
                    format_args!("the write panicked: {why}"),
                ))));
            }
        }
        self.reads.advance(staged.base_version, self.storage.latest_version(), staged.writes.iter().chain(&staged.cached_nv_writes).map(|(k, v)| (k, v)));
        // One INFO line per block, under either driver.
        tracing::info!(height = staged.height, txs = staged.txs, time = %staged.time, app_hash = %hex::encode_upper(root), "committed block");
        if let Some(s) = self.snapshots.get() {
            s.after_commit(self.storage.latest_snapshot(), staged.height);
        }
        Ok(response::Commit { data: Default::default(), retain_height: TmHeight::default() })
    }

    // === State sync ===

    /// Starts taking state-sync snapshots after commits (node-local; once, before serving).
    pub fn enable_snapshots(&self, settings: crate::statesync::SnapshotSettings) -> Arc<crate::statesync::Snapshotter> {
        self.snapshots.get_or_init(|| crate::statesync::Snapshotter::new(settings)).clone()
    }

    /// ABCI ListSnapshots: the complete snapshots this node keeps, newest first.
    pub fn list_snapshots(&self) -> response::ListSnapshots {
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
    pub fn load_snapshot_chunk(&self, req: request::LoadSnapshotChunk) -> response::LoadSnapshotChunk {
        let chunk = self.snapshots.get().map(|s| s.load_chunk(req.height.value(), req.format, req.chunk)).unwrap_or_default();
        response::LoadSnapshotChunk { chunk: chunk.into() }
    }

    /// ABCI OfferSnapshot: accepts a snapshot of format [`crate::statesync::FORMAT`] whose
    /// description is consistent, on a node that has no state yet (a later offer replaces an
    /// unfinished restore).
    pub async fn offer_snapshot(&self, req: request::OfferSnapshot) -> response::OfferSnapshot {
        use crate::statesync::{OfferRefusal, Restore};
        if self.storage.latest_version() != u64::MAX {
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
    pub async fn apply_snapshot_chunk(&self, req: request::ApplySnapshotChunk) -> response::ApplySnapshotChunk {
        use crate::statesync::ChunkRefusal;
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
                match self.finish_restore(done).await {
                    Ok(()) => answer(R::Accept, vec![], vec![]),
                    Err(why) => {
                        tracing::warn!(why, "snapshot rejected");
                        answer(R::RejectSnapshot, vec![], vec![])
                    }
                }
            }
        }
    }

    async fn finish_restore(&self, r: crate::statesync::Restore) -> Result<(), String> {
        let mut delta = StateDelta::new(self.snapshot());
        let prefixes = crate::modules::snapshot_nonverifiable_prefixes();
        for c in r.chunks {
            for e in c.verifiable {
                let key = String::from_utf8(e.key).map_err(|_| "a verifiable key is not UTF-8".to_string())?;
                delta.put_raw(key, e.value);
            }
            for e in c.nonverifiable {
                if !prefixes.iter().any(|p| e.key.starts_with(p)) {
                    return Err(format!("the snapshot carries a non-verifiable key outside the modules' records ({})", String::from_utf8_lossy(&e.key)));
                }
                delta.nonverifiable_put_raw(e.key, e.value);
            }
        }
        let height = read_u64(&delta, state_key::HEIGHT).await.map_err(|e| e.to_string())?.unwrap_or(0);
        if height != r.height {
            return Err(format!("the snapshot of height {} holds the state of height {height}", r.height));
        }
        crate::modules::restore_snapshot(&mut delta).await.map_err(|e| e.log)?;
        delta.nonverifiable_put_raw(state_key::VERSION_BASE.as_bytes().to_vec(), r.height.to_be_bytes().to_vec());
        let batch = self.storage.prepare_commit(delta).await.map_err(|e| e.to_string())?;
        if batch.root_hash().0.as_slice() != r.app_hash.as_slice() {
            return Err(format!(
                "the restored state's root {} is not the app hash {} the light client verified",
                hex::encode(batch.root_hash().0),
                hex::encode(&r.app_hash)
            ));
        }
        self.storage.commit_batch(batch).map_err(|e| e.to_string())?;
        let snap = self.snapshot();
        let chain_id = match snap.get_raw(state_key::CHAIN_ID).await {
            Ok(Some(b)) => String::from_utf8(b).map_err(|e| format!("the restored chain id: {e}"))?,
            Ok(None) => String::new(),
            Err(e) => return Err(lantau_module_api::store::fault(format_args!("reading {}", state_key::CHAIN_ID), e).to_string()),
        };
        *self.chain_id.write() = chain_id;
        self.reads.reset(self.storage.latest_version());
        self.reset_check_state().await;
        tracing::info!(height = r.height, "state restored from a snapshot");
        Ok(())
    }

    // === Traces ===

    /// TxTrace: the trace this node computed for `hash`, if still in the ring buffer.
    pub async fn tx_trace(&self, hash: &[u8; 32]) -> Option<lantau_proto::chain::compliance::v1::GateTrace> {
        let now = match self.check_block_ctx().await {
            Ok(b) => b.time.unix_timestamp(),
            Err(_) => return None,
        };
        self.traces.lock().get(hash, now)
    }

    /// SimulateTrace: decodes the bytes (no signature, fee or sequence checks) and runs the
    /// gate chain alone on a throwaway overlay of the admission state. Writes nothing. The
    /// trace's hash is the hash of the bytes, as the live trace's will be. `Ok(None)` when the
    /// node runs without the simulation hook; `Err` when the bytes do not decode.
    pub async fn simulate_trace(&self, bytes: &[u8]) -> Result<Option<lantau_proto::chain::compliance::v1::GateTrace>, TxError> {
        if !self.cfg.simulation_hook {
            return Ok(None);
        }
        let decoded = tx::decode_for_simulation(bytes, &self.cfg)?;
        let block = self.check_block_ctx().await.map_err(ante_internal)?;
        let gas = GasMeter::infinite();
        let check = self.check.lock().await;
        let mut state = StateDelta::new(&*check);
        let run = crate::pipeline::run(&self.pipeline_env(), &mut state, &decoded, &block, &gas, Mode::SimulateTrace).await;
        match (run.trace, run.result) {
            (Some(t), _) => Ok(Some(t)),
            (None, Err(e)) => Err(e),
            (None, Ok(())) => Err(SdkError::Internal("the gates ran without a trace".into()).into()),
        }
    }

    // === Simulation ===

    /// Runs a transaction on a throwaway overlay of the admission state without verifying its
    /// signature or requiring the fee floor, to estimate gas. Writes nothing.
    pub async fn simulate(&self, bytes: &[u8]) -> SimulateOutcome {
        let decoded = match tx::decode_for_simulation(bytes, &self.cfg) {
            Ok(d) => d,
            Err(e) => return SimulateOutcome { gas_used: 0, events: vec![], result: Err(e) },
        };
        let block = match self.check_block_ctx().await {
            Ok(b) => b,
            Err(e) => return SimulateOutcome { gas_used: 0, events: vec![], result: Err(ante_internal(e)) },
        };
        let gas = GasMeter::new(self.cfg.max_gas_per_tx);
        // On the check overlay, as CheckTx sees state: a sender with sequence n waiting in the
        // mempool simulates n+1. The overlay on top is thrown away.
        let check = self.check.lock().await;
        let mut state = StateDelta::new(&*check);
        let run = crate::pipeline::run(&self.pipeline_env(), &mut state, &decoded, &block, &gas, Mode::Simulate).await;
        SimulateOutcome { gas_used: gas.used(), events: run.events, result: run.result }
    }

    // === Helpers of the pipeline ===

    /// What the pipeline needs of this app beside the state it runs on.
    fn pipeline_env(&self) -> crate::pipeline::Env<'_> {
        crate::pipeline::Env { sigs: &self.sigs, hook: &*self.hook, traces: &self.traces, reads: None }
    }
}

fn ante_internal(e: AppError) -> TxError {
    SdkError::Internal(e.to_string()).into()
}

/// How many of `keys` fall under each prefix of their first `segments` `/`-separated parts
/// (a diagnostic for the block's writes).
fn count_by_prefix<'a>(keys: impl Iterator<Item = &'a [u8]>, segments: usize) -> std::collections::BTreeMap<String, usize> {
    let mut by = std::collections::BTreeMap::new();
    for k in keys {
        let prefix: Vec<&[u8]> = k.split(|b| *b == b'/').take(segments).collect();
        let n: &mut usize = by.entry(String::from_utf8_lossy(&prefix.join(&b'/')).into_owned()).or_default();
        *n = n.saturating_add(1);
    }
    by
}

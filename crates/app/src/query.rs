//! The queries: everything a client asks of the state machine without submitting a
//! transaction, on committed state (a gRPC method through the one router, ABCI Query, the
//! chain's records, an `eth_call`) or on the admission state (simulation, the pending
//! sequence). [`crate::App::queries`] hands out this view; the rpc servers reach it through
//! the node.
//!
//! The router, in order: the methods the app itself answers (those that need its limits, its
//! node-local parts or more than one module: auth `Params`, bank denom metadata, tx
//! `Simulate`, and compliance `TxTrace` (the trace ring buffer) and `SimulateTrace` (the gates
//! on the admission state)), then each module in list order ([`crate::modules::answer`]),
//! then the node's extension (the tx index and the blocks: tx `GetTx`/`GetTxsEvent`, the
//! tendermint service), which the app does not hold.

use std::sync::{Arc, OnceLock};

use cnidarium::StateDelta;
use cosmos_sdk_proto::cosmos::auth::v1beta1 as auth_pb;
use cosmos_sdk_proto::cosmos::bank::v1beta1 as bank_pb;
use cosmos_sdk_proto::cosmos::tx::v1beta1 as tx_pb;
use lantau_evm::exec::{EvmCall, Interrupt, Outcome};
use lantau_evm::trace::{TraceSlot, TRACE_OBJECT};
use lantau_module_api::{decode_query, BlockCtx, QueryError, SdkError, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1 as compliance_pb;
use lantau_proto::chain::compliance::v1::GateTrace;
use lantau_store::Snapshot;
use prost::Message as _;
use tendermint::abci::{request, response, Code};
use tendermint::block::Height as TmHeight;
use tendermint::AppHash;

use crate::admission::{Admission, SimulateOutcome};
use crate::error::AppError;
use crate::grpc::QueryExtension;
use crate::shared::Shared;
use crate::state_key;
use crate::storage::{self, Store};

/// One block of an `eth_simulateV1` ([`Queries::eth_simulate`]).
#[derive(Debug)]
pub struct SimulatedBlock {
    /// Its height.
    pub height: u64,
    /// Its time.
    pub time: time::OffsetDateTime,
    /// Each call's outcome, or why it could not run.
    pub results: Vec<Result<Outcome, TxError>>,
}

/// The query side of the app (borrowed from it; cheap to make).
#[derive(Clone, Copy)]
pub struct Queries<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) store: &'a Store,
    pub(crate) admission: &'a Admission,
    pub(crate) ext: &'a OnceLock<Arc<dyn QueryExtension>>,
}

impl std::fmt::Debug for Queries<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queries").finish_non_exhaustive()
    }
}

impl Queries<'_> {
    // === The chain's records ===

    /// The height of the last committed block (0 before the first block).
    pub async fn last_height(&self) -> Result<u64, AppError> {
        storage::height_at(&self.store.snapshot()).await
    }

    /// The height of the last block in a snapshot (0 before the first block).
    pub async fn height_at(snap: &Snapshot) -> Result<u64, AppError> {
        storage::height_at(snap).await
    }

    /// The time of the last committed block (genesis time before the first block).
    pub async fn last_block_time(&self) -> Result<time::OffsetDateTime, AppError> {
        storage::block_time_at(&self.store.snapshot()).await
    }

    /// The consensus parameter `block.max_gas` of the latest committed state: the most gas
    /// (summed gas limits) one block may carry; `None` when unlimited (-1).
    pub async fn max_block_gas(&self) -> Result<Option<u64>, AppError> {
        storage::max_block_gas_at(&self.store.cached_snapshot()).await
    }

    /// The EVM chain id from genesis.
    pub async fn evm_chain_id(&self) -> Result<u64, AppError> {
        Ok(storage::read_u64(&self.store.snapshot(), state_key::EVM_CHAIN_ID).await?.unwrap_or(0))
    }

    /// The app hash of the latest committed state.
    pub async fn app_hash(&self) -> Result<AppHash, AppError> {
        let root = self.store.snapshot().root_hash().await.map_err(AppError::store)?;
        Ok(AppHash::try_from(root.0.to_vec())?)
    }

    /// The committed state after block `height` (`None`: the latest). `Ok(None)` when the
    /// height is in the future or its state is no longer held.
    pub async fn snapshot_at_height(&self, height: Option<u64>) -> Result<Option<crate::history::StateView>, AppError> {
        self.store.snapshot_at_height(height).await
    }

    // === On the admission state ===

    /// The sequence the account's next transaction must carry on the admission state
    /// (committed sequence plus the transactions admitted since).
    pub async fn pending_sequence(&self, addr: &Address) -> Result<u64, AppError> {
        self.admission.pending_sequence(addr).await
    }

    /// Runs a transaction on a throwaway layer of the admission state without verifying its
    /// signature or requiring the fee floor, to estimate gas. Writes nothing.
    pub async fn simulate(&self, bytes: &[u8]) -> SimulateOutcome {
        self.admission.simulate(self.shared, self.store, bytes).await
    }

    /// SimulateTrace: decodes the bytes (no signature, fee or sequence checks) and runs the
    /// gate chain alone on a throwaway layer of the admission state. Writes nothing. The
    /// trace's hash is the hash of the bytes, as the live trace's will be. `Ok(None)` when the
    /// node runs without the simulation hook; `Err` when the bytes do not decode.
    pub async fn simulate_trace(&self, bytes: &[u8]) -> Result<Option<GateTrace>, TxError> {
        self.admission.simulate_trace(self.shared, self.store, bytes).await
    }

    /// TxTrace: the trace this node computed for `hash`, if still in the ring buffer.
    pub async fn tx_trace(&self, hash: &[u8; 32]) -> Option<GateTrace> {
        let now = self.admission.block_ctx(self.shared, self.store).await.ok()?.time.unix_timestamp();
        self.shared.trace(hash, now)
    }

    // === The EVM ===

    /// Runs `call` against the state after block `height` (the latest when `None`), as the
    /// next block would: nothing is written. The precompile's gates run as they would in a
    /// mined transaction (spec: EVM rules 1 and 5). The caller bounds it: `call.gas_limit`
    /// (the JSON-RPC's gas cap) and `interrupt` (its time limit, its client going away).
    pub async fn eth_call(&self, height: Option<u64>, call: &EvmCall, interrupt: &Interrupt) -> Result<Outcome, TxError> {
        self.eth_call_traced(height, call, interrupt, None).await
    }

    /// The state an EVM call runs on (after block `height`, the latest when `None`), with its
    /// height and block time; a height the node does not hold is the call's error.
    async fn call_state(&self, height: Option<u64>) -> Result<(crate::history::StateView, u64, time::OffsetDateTime), TxError> {
        let internal = |e: AppError| TxError::from(SdkError::Internal(e.to_string()));
        let snap = self
            .store
            .snapshot_at_height(height)
            .await
            .map_err(internal)?
            .ok_or_else(|| TxError::from(lantau_evm::EvmError::Invalid(format!("no state for block {}", height.unwrap_or(0)))))?;
        let last = storage::height_at(&snap).await.map_err(internal)?;
        let time = storage::block_time_at(&snap).await.map_err(internal)?;
        Ok((snap, last, time))
    }

    /// [`Self::eth_call`], its run traced into `trace` when given (`debug_traceCall`,
    /// `eth_createAccessList`).
    pub async fn eth_call_traced(&self, height: Option<u64>, call: &EvmCall, interrupt: &Interrupt, trace: Option<&TraceSlot>) -> Result<Outcome, TxError> {
        let (snap, last, time) = self.call_state(height).await?;
        let block = BlockCtx { height: last.saturating_add(1), time, chain_id: self.shared.chain_id() };
        let mut state = StateDelta::new(snap);
        if let Some(t) = trace {
            cnidarium::StateWrite::object_put(&mut state, TRACE_OBJECT, t.clone());
        }
        // A placeholder hash of a real one's length: the records a transfer writes cite the
        // hash, and their gas depends on its length, so the estimate matches the mined cost.
        let placeholder = "0".repeat(64);
        lantau_evm::exec::call(&mut state, &block, call, &placeholder, interrupt).await
    }

    /// An audit export of the rows whose block time is in `[from, to]`
    /// ([`crate::audit_export`]), anchored on the state after the block before the latest
    /// (the latest block's header carries its root, which the caller adds as
    /// `anchor.header`).
    pub async fn audit_export(
        &self,
        from: Option<time::OffsetDateTime>,
        to: Option<time::OffsetDateTime>,
    ) -> Result<crate::audit_export::AuditExport, AppError> {
        let latest = self.last_height().await?;
        let anchor = latest.checked_sub(1).ok_or_else(|| AppError::Unavailable("no block yet: an export is anchored on a committed block".into()))?;
        let view = self.store.snapshot_at_height(Some(anchor)).await?;
        let Some(snap) = view.as_ref().and_then(|v| v.live()) else {
            return Err(AppError::Unavailable(format!("the state of height {anchor} is no longer open for proofs")));
        };
        crate::audit_export::build(snap, self.shared.chain_id(), anchor, from, to).await
    }

    /// `eth_simulateV1`: blocks of calls on the state after block `height` (the latest when
    /// `None`), block k at height + k, one second after the one before it; each call runs as a
    /// mined transaction would (the gates included) on the effects of every call before it,
    /// named by its `hash` (the audit rows it writes cite it). A call refused before running
    /// (funds, an invalid call) changes nothing and the next goes on. Nothing is written.
    pub async fn eth_simulate(&self, height: Option<u64>, blocks: &[Vec<(EvmCall, [u8; 32])>], interrupt: &Interrupt) -> Result<Vec<SimulatedBlock>, TxError> {
        let (snap, last, mut time) = self.call_state(height).await?;
        let mut state = StateDelta::new(snap);
        let mut out = Vec::with_capacity(blocks.len());
        for (k, calls) in blocks.iter().enumerate() {
            let h = last.saturating_add(u64::try_from(k).unwrap_or(u64::MAX)).saturating_add(1);
            time = time.saturating_add(time::Duration::seconds(1));
            let block = BlockCtx { height: h, time, chain_id: self.shared.chain_id() };
            let mut results = Vec::with_capacity(calls.len());
            for (call, hash) in calls {
                let mut layer = StateDelta::new(&mut state);
                let r = lantau_evm::exec::simulate(&mut layer, &block, call, &const_hex::encode(hash), interrupt).await;
                if r.is_ok() {
                    layer.apply();
                }
                if interrupt.is_stopped() {
                    return Err(lantau_evm::EvmError::Aborted.into());
                }
                results.push(r);
            }
            out.push(SimulatedBlock { height: h, time, results });
        }
        Ok(out)
    }

    /// Re-executes block `height` (its transactions `txs`, stamped `time`) on the committed
    /// state after the block before it, through the one pipeline as FinalizeBlock ran it (a
    /// scheduled upgrade, the block gas limit, each transaction's ante, gates and messages),
    /// with each slot of `traced` (by transaction index) in place for its transaction's run.
    /// Stops after the last traced transaction; writes nothing. `Ok(false)` when the state
    /// before the block is no longer held (the node's pruning).
    pub async fn replay_block<T: AsRef<[u8]>>(
        &self,
        height: u64,
        time: tendermint::Time,
        txs: &[T],
        traced: &std::collections::BTreeMap<usize, TraceSlot>,
    ) -> Result<bool, AppError> {
        let Some(before) = height.checked_sub(1) else { return Ok(false) };
        let Some(snap) = self.store.snapshot_at_height(Some(before)).await? else { return Ok(false) };
        let max_gas = storage::max_block_gas_at(&snap).await?;
        let block = BlockCtx { height, time: crate::block::to_offset(time), chain_id: self.shared.chain_id() };
        let mut state = StateDelta::new(snap);
        crate::upgrades::begin_block(&mut state, &self.shared.cfg.upgrade_handlers, &block).await?;
        let last = traced.keys().next_back().copied();
        let mut block_gas = 0u64;
        for (i, t) in txs.iter().enumerate() {
            if last.is_none_or(|l| i > l) {
                break;
            }
            let decoded = crate::tx::decode(t.as_ref(), &self.shared.cfg).map(Arc::new);
            block_gas = block_gas.saturating_add(decoded.as_ref().map(|d| d.gas_limit).unwrap_or(0));
            if max_gas.is_some_and(|m| block_gas > m) {
                continue;
            }
            let slot = traced.get(&i);
            if let Some(t) = slot {
                cnidarium::StateWrite::object_put(&mut state, TRACE_OBJECT, t.clone());
            }
            crate::block::deliver_tx(self.shared, &mut state, decoded, &block).await;
            if slot.is_some() {
                cnidarium::StateWrite::object_delete(&mut state, TRACE_OBJECT);
            }
        }
        Ok(true)
    }

    // === The router ===

    /// Answers a gRPC method on the state after block `height` (0: the latest), through the
    /// one router: the app's own methods, the module list, the node's extension.
    pub async fn grpc_query(&self, height: u64, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError> {
        let latest = self.last_height().await.map_err(|e| QueryError::Internal(e.to_string()))?;
        let h = if height == 0 { latest } else { height };
        if h > latest {
            return Err(QueryError::InvalidArgument(format!("cannot query with height in the future; please provide a valid height (latest {latest})")));
        }
        let snap = match self.snapshot_at_height(Some(h)).await.map_err(|e| QueryError::Internal(e.to_string()))? {
            Some(s) => s,
            None => return Err(QueryError::InvalidArgument(self.pruned_message(h, latest).await)),
        };
        self.route(&snap, height, method, request).await
    }

    /// Why a past height is not answered: below the heights the node keeps.
    async fn pruned_message(&self, height: u64, latest: u64) -> String {
        match self.store.earliest_height().await {
            Ok(e) => format!("height {height} is no longer kept by this node: it answers heights {e} to {latest} (its pruning setting, docs/operations.md)"),
            Err(e) => format!("height {height} is no longer kept by this node (latest {latest}): {e}"),
        }
    }

    /// The earliest height this node answers queries at.
    pub async fn earliest_height(&self) -> Result<u64, AppError> {
        self.store.earliest_height().await
    }

    /// The router on a snapshot already chosen (`height` as asked, for the extension).
    async fn route(&self, snap: &crate::history::StateView, height: u64, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError> {
        match method {
            lantau_auth::query::PARAMS => {
                let _: auth_pb::QueryParamsRequest = decode_query(request)?;
                let cfg = &self.shared.cfg;
                let params = auth_pb::Params {
                    max_memo_characters: u64::try_from(cfg.max_memo_chars).unwrap_or(u64::MAX),
                    tx_sig_limit: 1,
                    tx_size_cost_per_byte: lantau_module_api::gas::TX_SIZE_PER_BYTE,
                    sig_verify_cost_ed25519: lantau_module_api::gas::SIG_VERIFY,
                    sig_verify_cost_secp256k1: lantau_module_api::gas::SIG_VERIFY,
                };
                return Ok(auth_pb::QueryParamsResponse { params: Some(params) }.encode_to_vec());
            }
            crate::grpc::DENOMS_METADATA => {
                let _: bank_pb::QueryDenomsMetadataRequest = decode_query(request)?;
                let metadatas = crate::grpc::denoms_metadata(snap).await?;
                let total = u64::try_from(metadatas.len()).unwrap_or(u64::MAX);
                let pagination = Some(cosmos_sdk_proto::cosmos::base::query::v1beta1::PageResponse { next_key: vec![], total });
                return Ok(bank_pb::QueryDenomsMetadataResponse { metadatas, pagination }.encode_to_vec());
            }
            crate::grpc::DENOM_METADATA => {
                let req: bank_pb::QueryDenomMetadataRequest = decode_query(request)?;
                let m = crate::grpc::denoms_metadata(snap).await?.into_iter().find(|m| m.base == req.denom);
                return match m {
                    Some(m) => Ok(bank_pb::QueryDenomMetadataResponse { metadata: Some(m) }.encode_to_vec()),
                    None => Err(QueryError::NotFound(format!("client metadata for denom {}", req.denom))),
                };
            }
            crate::grpc::SIMULATE => {
                let req: tx_pb::SimulateRequest = decode_query(request)?;
                if req.tx_bytes.is_empty() {
                    return Err(QueryError::InvalidArgument("empty txBytes is not allowed".into()));
                }
                let out = self.simulate(&req.tx_bytes).await;
                return match out.result {
                    Ok(()) => Ok(tx_pb::SimulateResponse {
                        gas_info: Some(cosmos_sdk_proto::cosmos::base::abci::v1beta1::GasInfo { gas_wanted: 0, gas_used: out.gas_used }),
                        result: Some(cosmos_sdk_proto::cosmos::base::abci::v1beta1::Result {
                            events: out.events.iter().map(crate::grpc::event).collect(),
                            ..Default::default()
                        }),
                    }
                    .encode_to_vec()),
                    Err(e) => Err(QueryError::InvalidArgument(format!("{}: codespace {} code {}", e.log, e.codespace, e.code))),
                };
            }
            lantau_compliance::QUERY_TX_TRACE => {
                let req: compliance_pb::QueryTxTraceRequest = decode_query(request)?;
                let hash = crate::grpc::tx_hash(&req.tx_hash)?;
                let trace = self.tx_trace(&hash).await;
                return Ok(compliance_pb::QueryTxTraceResponse { found: trace.is_some(), trace }.encode_to_vec());
            }
            lantau_compliance::QUERY_SIMULATE_TRACE => {
                let req: compliance_pb::QuerySimulateTraceRequest = decode_query(request)?;
                if req.tx_bytes.is_empty() {
                    return Err(QueryError::InvalidArgument("tx_bytes is required".into()));
                }
                return match self.simulate_trace(&req.tx_bytes).await {
                    Ok(Some(trace)) => Ok(compliance_pb::QuerySimulateTraceResponse { trace: Some(trace) }.encode_to_vec()),
                    Ok(None) => Err(QueryError::FailedPrecondition("this node runs without the simulation hook".into())),
                    Err(e) => Err(QueryError::InvalidArgument(format!("{}: codespace {} code {}", e.log, e.codespace, e.code))),
                };
            }
            _ => {}
        }
        if let Some(r) = crate::modules::answer(snap, method, request).await {
            return r;
        }
        if let Some(ext) = self.ext.get() {
            if let Some(r) = ext.query(height, method, request).await {
                return r;
            }
        }
        Err(QueryError::InvalidArgument(format!("unknown query path {method}")))
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
            Ok(None) => return fail(26, self.pruned_message(asked, latest).await, latest),
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
                let Some(snap) = snap.live() else {
                    return fail(26, format!("height {height} is answered from this node's history, which keeps values, not Merkle proofs: ask for a proof at one of the last few heights"), height);
                };
                return match snap.get_with_proof(req.data.to_vec()).await {
                    Ok((value, proof)) => {
                        let ops = vec![tendermint::merkle::proof::ProofOp {
                            field_type: "ics23:jmt".into(),
                            key: req.data.to_vec(),
                            data: prost::Message::encode_to_vec(&proof),
                        }];
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
        match self.route(&snap, asked, path, &req.data).await {
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
}

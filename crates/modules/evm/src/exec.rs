//! revm on the chain's store.
//!
//! The EVM reads accounts through [`StoreDb`]: nonce = auth sequence, balance = bank `alantau`
//! balance, code and storage from this module's keys. It runs synchronously (revm is
//! synchronous; cnidarium is async), so each store read is driven to completion in place, off
//! the async scheduler's cooperative path (`block_in_place` on a multi-threaded runtime).
//!
//! The precompile's Cosmos-side writes (stablecoin balances, audit rows, flags, anchors,
//! windows) go to an overlay aligned with revm's call frames: before each precompile call the
//! overlay takes a checkpoint, and a counter in the journaled storage of [`EFFECTS_COUNTER`] counts the
//! calls whose effects stand. A frame that reverts (or runs out of gas) reverts the counter
//! with it; the next precompile call, and the end of the transaction, roll the overlay back to
//! the checkpoint the counter names. So a revert anywhere (including a caller that catches the
//! revert and carries on) undoes exactly the Cosmos writes of the frames it reverts.
//!
//! After the run, the overlay's writes are applied and the EVM's own diff is committed: code,
//! storage, nonces (auth sequences) and native-coin movements (through the bank's one
//! chokepoint, as plain legs: the native coin is not governed by compliance).

use std::collections::BTreeMap;

use alloy_primitives::{Address as EA, Bytes, Log, B256, U256};
use cnidarium::{StateRead, StateWrite};
use lantau_auth::{AuthRead, AuthWrite};
use lantau_bank::{BankRead, BankWrite, Leg, PlainLeg};
use lantau_module_api::{BlockCtx, Event, GasMeter, TxError};
use lantau_primitives::{Address, Coin, NATIVE_DENOM};
use lantau_store::{Checkpoint, Layer, LayerChanges};
use revm::context::result::{ExecutionResult, Output};
use revm::context::{BlockEnv, CfgEnv, Context, TxEnv};
use revm::context_interface::{ContextTr, FrameStack, JournalTr};
use revm::database_interface::DatabaseRef;
use revm::handler::instructions::EthInstructions;
use revm::handler::{precompile_output_to_interpreter_result, EthFrame, EthPrecompiles, PrecompileProvider};
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::{CallInputs, CallScheme, InterpreterResult};
use revm::precompile::{PrecompileHalt, PrecompileOutput};
use revm::primitives::hardfork::SpecId;
use revm::primitives::{AddressSet, TxKind};
use revm::state::{AccountInfo, AccountStatus, Bytecode, EvmState};
use revm::{Database, ExecuteEvm, InspectEvm, MainContext};

use crate::error::EvmError;
use crate::precompile::{self, Call, CallCtx, CallError, Mutability};
use crate::state::{EvmRead, EvmWrite};
use crate::trace::{TraceKind, TraceSlot, TRACE_OBJECT};
use revm_inspectors::tracing::DebugInspector;

/// The hardfork the chain runs: Osaka (Fusaka), the current Ethereum mainnet rules.
pub const SPEC: SpecId = SpecId::OSAKA;

/// A system address whose journaled storage slot 0 counts the precompile calls whose Cosmos
/// effects stand. Never committed.
pub const EFFECTS_COUNTER: EA = EA::new([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0c, 0x05]);

/// An EIP-2930 access list: each account with the storage keys listed for it.
pub type AccessListItems = Vec<(Address, Vec<[u8; 32]>)>;

/// What to run: a mined transaction, or an `eth_call`/`eth_estimateGas` request.
#[derive(Debug, Clone)]
pub struct EvmCall {
    /// `msg.sender` of the outer frame.
    pub caller: Address,
    /// The callee; `None` deploys.
    pub to: Option<Address>,
    /// Value in `alantau` (32 bytes big-endian).
    pub value: [u8; 32],
    /// Calldata or init code.
    pub input: Vec<u8>,
    /// Gas limit.
    pub gas_limit: u64,
    /// The price per gas the caller pays (effective).
    pub gas_price: u128,
    /// The nonce: `Some` for a mined transaction (checked by the ante, presented to the EVM as
    /// the caller's nonce), `None` for a call (no nonce check).
    pub nonce: Option<u64>,
    /// The access list.
    pub access_list: Vec<(Address, Vec<[u8; 32]>)>,
}

impl EvmCall {
    /// The run of a mined transaction.
    pub fn from_tx(tx: &crate::EthTx) -> Self {
        Self {
            caller: tx.from,
            to: tx.to,
            value: tx.value,
            input: tx.input.clone(),
            gas_limit: tx.gas_limit,
            gas_price: tx.effective_gas_price(),
            nonce: Some(tx.nonce),
            access_list: tx.access_list.clone(),
        }
    }
}

/// Stops a call's run from outside (the JSON-RPC's time limit, a client that went away): once
/// [`Interrupt::stop`] is called, the run halts at its next instruction in every frame and
/// [`call`] answers [`EvmError::Aborted`]. Mined transactions run without one: gas bounds them.
#[derive(Debug, Default)]
pub struct Interrupt(std::sync::atomic::AtomicBool);

impl Interrupt {
    /// A new, unset interrupt.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stops the run.
    pub fn stop(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether [`Interrupt::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The inspector that makes a run interruptible: every instruction of every frame first looks
/// at the interrupt, and a stopped run's frames halt one after the other as they resume.
struct Interruptible<'i>(&'i Interrupt);

impl<CTX> revm::Inspector<CTX> for Interruptible<'_> {
    fn step(&mut self, interp: &mut revm::interpreter::Interpreter, _context: &mut CTX) {
        if self.0.is_stopped() {
            interp.halt(revm::interpreter::InstructionResult::OutOfGas);
        }
    }
}

/// The text of a halt, as geth words it (wallets and libraries match these).
fn halt_text(reason: &revm::context::result::HaltReason) -> String {
    use revm::context::result::HaltReason as H;
    match reason {
        H::OutOfGas(_) => "out of gas".into(),
        H::OpcodeNotFound | H::InvalidFEOpcode => "invalid opcode".into(),
        H::InvalidJump => "invalid jump destination".into(),
        H::StackUnderflow => "stack underflow".into(),
        H::StackOverflow => "stack limit reached 1024".into(),
        H::OutOfFunds => "insufficient balance for transfer".into(),
        H::CallTooDeep => "max call depth exceeded".into(),
        H::StateChangeDuringStaticCall => "write protection".into(),
        H::CreateCollision => "contract address collision".into(),
        H::CreateContractSizeLimit => "max code size exceeded".into(),
        H::CreateInitCodeSizeLimit => "max initcode size exceeded".into(),
        H::CreateContractStartingWithEF => "invalid code: must not begin with 0xef".into(),
        H::NonceOverflow => "nonce uint64 overflow".into(),
        H::OutOfOffset => "return data out of bounds".into(),
        H::CallNotAllowedInsideStatic => "write protection".into(),
        other => other.to_string(),
    }
}

/// An Ethereum log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EthLog {
    /// The emitting contract.
    pub address: Address,
    /// Topics.
    pub topics: Vec<[u8; 32]>,
    /// Data.
    pub data: Vec<u8>,
}

/// What a run gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The call returned (receipt status 1).
    pub success: bool,
    /// Gas used, refunds applied (the receipt's `gasUsed`).
    pub gas_used: u64,
    /// Return data, or revert data.
    pub output: Vec<u8>,
    /// Empty on success; "execution reverted" on a revert; the halt reason otherwise.
    pub vm_error: String,
    /// Logs (empty when reverted).
    pub logs: Vec<EthLog>,
    /// The deployed contract.
    pub contract_address: Option<Address>,
    /// Cosmos events of the standing precompile effects (bank transfers, flags), then of the
    /// native-coin movements.
    pub events: Vec<Event>,
    /// The gate verdicts of every screened transfer attempted (reverted ones included), for
    /// the trace buffer.
    pub verdicts: Vec<lantau_compliance::gates::Verdict>,
}

fn ea(a: &Address) -> EA {
    EA::from(a.0)
}

fn la(a: &EA) -> Address {
    Address(a.0 .0)
}

// === driving async store reads from revm's synchronous calls ===

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}

/// Runs `f`, which blocks on store reads, without starving the async workers.
fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

// === the database ===

/// A store failure under the EVM.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct DbError(String);

impl revm::database_interface::DBErrorMarker for DbError {}

impl From<TxError> for DbError {
    fn from(e: TxError) -> Self {
        DbError(e.log)
    }
}

struct StoreDb<'s, S> {
    state: &'s S,
    gas: GasMeter,
    /// The caller's nonce as the EVM must see it (the ante already advanced the sequence).
    caller: Option<(Address, u64)>,
}

impl<S: StateRead + Send + Sync> DatabaseRef for StoreDb<'_, S> {
    type Error = DbError;

    fn basic_ref(&self, address: EA) -> Result<Option<AccountInfo>, DbError> {
        let a = la(&address);
        if address == EFFECTS_COUNTER {
            return Ok(None);
        }
        block_on(async {
            let acct = self.state.account(&self.gas, &a).await?;
            let balance = self.state.balance(&self.gas, &a, NATIVE_DENOM).await?;
            let code_hash = self.state.code_hash(&self.gas, &a).await?;
            if acct.is_none() && balance.0 == 0 && code_hash.is_none() {
                return Ok(None);
            }
            let nonce = match self.caller {
                Some((c, n)) if c == a => n,
                _ => acct.map_or(0, |x| x.sequence),
            };
            let mut info = AccountInfo { balance: U256::from(balance.0), nonce, ..Default::default() };
            if let Some(h) = code_hash {
                // The default info carries empty code; `None` makes revm ask `code_by_hash`.
                info.code_hash = B256::from(h);
                info.code = None;
            }
            Ok(Some(info))
        })
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, DbError> {
        let code = block_on(self.state.code(&self.gas, &code_hash.0))?;
        Ok(code.map(|c| Bytecode::new_raw(Bytes::from(c))).unwrap_or_default())
    }

    fn storage_ref(&self, address: EA, index: U256) -> Result<U256, DbError> {
        if address == EFFECTS_COUNTER {
            return Ok(U256::ZERO);
        }
        let v = block_on(self.state.storage(&self.gas, &la(&address), &index.to_be_bytes::<32>()))?;
        Ok(U256::from_be_bytes(v))
    }

    fn block_hash_ref(&self, _number: u64) -> Result<B256, DbError> {
        // Block hashes are not in the state machine's store (CometBFT holds them); BLOCKHASH
        // answers zero, as for a block out of range.
        Ok(B256::ZERO)
    }
}

/// The same reads, through `&mut` (what revm's journal asks for).
impl<S: StateRead + Send + Sync> Database for StoreDb<'_, S> {
    type Error = DbError;

    fn basic(&mut self, address: EA) -> Result<Option<AccountInfo>, DbError> {
        self.basic_ref(address)
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, DbError> {
        self.code_by_hash_ref(code_hash)
    }

    fn storage(&mut self, address: EA, index: U256) -> Result<U256, DbError> {
        self.storage_ref(address, index)
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, DbError> {
        self.block_hash_ref(number)
    }
}

// === the frame-aligned Cosmos overlay ===

struct Cosmos<'s, S: StateRead + Send + Sync> {
    cur: Layer<&'s S>,
    /// `checkpoints[k]`: the overlay before the (k+1)-th standing call, with the event count
    /// then.
    checkpoints: Vec<(Checkpoint, usize)>,
    events: Vec<Event>,
    verdicts: Vec<lantau_compliance::gates::Verdict>,
}

impl<'s, S: StateRead + Send + Sync> Cosmos<'s, S> {
    /// Rolls back to the state after `k` standing calls.
    fn roll_back_to(&mut self, k: usize) {
        if let Some(&(at, events)) = self.checkpoints.get(k) {
            self.cur.revert(at);
            self.events.truncate(events);
            self.checkpoints.truncate(k);
        }
    }
}

struct Precompiles<'s, 'b, S: StateRead + Send + Sync> {
    inner: EthPrecompiles,
    warm: AddressSet,
    tokens: BTreeMap<EA, String>,
    cosmos: Cosmos<'s, S>,
    block: &'b BlockCtx,
    tx_hash: &'b str,
}

fn counter_of<CTX: ContextTr>(ctx: &mut CTX) -> Result<usize, String> {
    ctx.journal_mut().load_account(EFFECTS_COUNTER).map_err(|e| e.to_string())?;
    let v = ctx.journal_mut().sload(EFFECTS_COUNTER, U256::ZERO).map_err(|e| e.to_string())?.data;
    usize::try_from(v).map_err(|e| e.to_string())
}

impl<'s, S: StateRead + Send + Sync> Precompiles<'s, '_, S> {
    fn call_token<CTX: ContextTr>(&mut self, ctx: &mut CTX, inputs: &CallInputs, denom: &str) -> Result<PrecompileOutput, String> {
        let reservoir = inputs.reservoir;
        let revert = |gas: u64, reason: &str| PrecompileOutput::revert(gas, Bytes::from(precompile::revert_data(reason)), reservoir);
        let input = inputs.input.bytes(ctx);
        let call = match Call::decode(&input) {
            Ok(c) => c,
            Err(CallError::Revert(r)) => return Ok(revert(0, &r)),
            Err(CallError::OutOfGas) => return Ok(PrecompileOutput::halt(PrecompileHalt::OutOfGas, reservoir)),
        };
        let (base_gas, mutability) = call.spec();
        if base_gas > inputs.gas_limit {
            return Ok(PrecompileOutput::halt(PrecompileHalt::OutOfGas, reservoir));
        }
        if mutability == Mutability::NonPayable {
            if inputs.is_static || inputs.scheme == CallScheme::StaticCall {
                return Ok(revert(base_gas, "a state-changing method of the stablecoin precompile cannot be called with STATICCALL"));
            }
            if matches!(inputs.scheme, CallScheme::DelegateCall | CallScheme::CallCode) {
                return Ok(revert(base_gas, "a state-changing method of the stablecoin precompile cannot be called with DELEGATECALL or CALLCODE"));
            }
        }
        if inputs.transfer_value().is_some_and(|v| !v.is_zero()) {
            return Ok(revert(base_gas, "the stablecoin precompile is not payable"));
        }
        // Roll the overlay back past the calls whose frames reverted since.
        let standing = counter_of(ctx)?;
        self.cosmos.roll_back_to(standing);
        let events_before = self.cosmos.events.len();
        // The overlay as it stands, kept for a roll-back; the call writes to `cur` itself.
        let snapshot = self.cosmos.cur.checkpoint();
        let meter = GasMeter::new(inputs.gas_limit.saturating_sub(base_gas));
        let cx = CallCtx { denom, caller: la(&inputs.caller), block: self.block, tx_hash: self.tx_hash };
        let mut events = Vec::new();
        let res = block_on(precompile::execute(&mut self.cosmos.cur, &meter, &call, cx, &mut events));
        let used = base_gas.saturating_add(meter.used());
        match res {
            Ok(done) => {
                self.cosmos.checkpoints.push((snapshot, events_before));
                self.cosmos.events.extend(events);
                if let Some(v) = done.verdict {
                    self.cosmos.verdicts.push(v);
                }
                if let Some((from, to, amount)) = done.transfer_log {
                    let (topics, data) = precompile::transfer_log(&from, &to, amount);
                    ctx.journal_mut().log(Log::new_unchecked(inputs.bytecode_address, topics.into_iter().map(B256::from).collect(), Bytes::from(data)));
                }
                let next = U256::from(standing.saturating_add(1));
                ctx.journal_mut().sstore(EFFECTS_COUNTER, U256::ZERO, next).map_err(|e| e.to_string())?;
                Ok(PrecompileOutput::new(used, Bytes::from(done.output), reservoir))
            }
            Err((err, verdict)) => {
                // A failed call leaves nothing: back to the overlay before it.
                self.cosmos.cur.revert(snapshot);
                if let Some(v) = verdict {
                    self.cosmos.verdicts.push(v);
                }
                Ok(match err {
                    CallError::Revert(r) => revert(used, &r),
                    CallError::OutOfGas => PrecompileOutput::halt(PrecompileHalt::OutOfGas, reservoir),
                })
            }
        }
    }
}

impl<'s, S: StateRead + Send + Sync, CTX: ContextTr<Cfg: revm::context::Cfg<Spec = SpecId>>> PrecompileProvider<CTX> for Precompiles<'s, '_, S> {
    type Output = InterpreterResult;

    fn set_spec(&mut self, spec: SpecId) -> bool {
        if spec == self.inner.spec {
            return false;
        }
        self.inner = EthPrecompiles::new(spec);
        self.warm = self.inner.warm_addresses().clone();
        self.warm.extend(self.tokens.keys().copied());
        true
    }

    fn run(&mut self, ctx: &mut CTX, inputs: &CallInputs) -> Result<Option<InterpreterResult>, String> {
        let Some(denom) = self.tokens.get(&inputs.bytecode_address).cloned() else {
            return self.inner.run(ctx, inputs);
        };
        let out = self.call_token(ctx, inputs, &denom)?;
        Ok(Some(precompile_output_to_interpreter_result(out, inputs.gas_limit)))
    }

    fn warm_addresses(&self) -> &AddressSet {
        &self.warm
    }
}

/// An EVM for one transaction: revm's builders lay out eight call frames up front (each an
/// interpreter with its 32 KiB stack), which pays off for an EVM kept across transactions;
/// this one runs one and is dropped, so each frame is laid out when a call first reaches it.
fn one_shot<CTX: ContextTr, INSP, P>(
    ctx: CTX,
    inspector: INSP,
    precompiles: P,
) -> revm::context::Evm<CTX, INSP, EthInstructions<EthInterpreter, CTX>, P, EthFrame> {
    revm::context::Evm { ctx, inspector, instruction: EthInstructions::new_mainnet_with_spec(SPEC), precompiles, frame_stack: FrameStack::new() }
}

// === the run ===

struct Ran {
    result: ExecutionResult,
    state: EvmState,
    cache: LayerChanges,
    events: Vec<Event>,
    verdicts: Vec<lantau_compliance::gates::Verdict>,
}

#[allow(clippy::too_many_arguments)]
fn run_sync<S: StateRead + Send + Sync>(
    base: &S,
    block: &BlockCtx,
    call: &EvmCall,
    chain_id: u64,
    tokens: BTreeMap<EA, String>,
    tx_hash: &str,
    interrupt: Option<&Interrupt>,
    trace: Option<&TraceSlot>,
) -> Result<Ran, TxError> {
    let db = StoreDb { state: base, gas: GasMeter::infinite(), caller: call.nonce.map(|n| (call.caller, n)) };
    let mut cfg = CfgEnv::new_with_spec(SPEC);
    cfg.chain_id = chain_id;
    cfg.tx_gas_limit_cap = Some(u64::MAX);
    // Gas is paid once, by the ante, in the native coin; the EVM only meters it.
    cfg.disable_fee_charge = true;
    cfg.disable_balance_check = false;
    cfg.disable_base_fee = true;
    cfg.disable_nonce_check = call.nonce.is_none();
    let block_env = BlockEnv {
        number: U256::from(block.height),
        timestamp: U256::from(u64::try_from(block.time.unix_timestamp()).unwrap_or(0)),
        gas_limit: u64::MAX,
        basefee: u64::try_from(crate::tx::BASE_FEE).unwrap_or(u64::MAX),
        prevrandao: Some(B256::ZERO),
        ..Default::default()
    };
    let access_list = revm::context::transaction::AccessList(
        call.access_list
            .iter()
            .map(|(a, keys)| revm::context::transaction::AccessListItem { address: ea(a), storage_keys: keys.iter().map(|k| B256::from(*k)).collect() })
            .collect(),
    );
    let tx = TxEnv::builder()
        .tx_type(Some(if access_list.0.is_empty() { 0 } else { 1 }))
        .caller(ea(&call.caller))
        .gas_limit(call.gas_limit)
        .gas_price(call.gas_price)
        .kind(match call.to {
            Some(to) => TxKind::Call(ea(&to)),
            None => TxKind::Create,
        })
        .value(U256::from_be_bytes(call.value))
        .data(Bytes::from(call.input.clone()))
        .nonce(call.nonce.unwrap_or(0))
        .chain_id(Some(chain_id))
        .access_list(access_list)
        .build()
        .map_err(|e| EvmError::Invalid(format!("{e:?}")))?;
    let inner = EthPrecompiles::new(SPEC);
    let mut warm = inner.warm_addresses().clone();
    warm.extend(tokens.keys().copied());
    let precompiles = Precompiles {
        inner,
        warm,
        tokens,
        cosmos: Cosmos { cur: Layer::new(base), checkpoints: Vec::new(), events: Vec::new(), verdicts: Vec::new() },
        block,
        tx_hash,
    };
    let traced_tx = trace.map(|_| (tx.clone(), block_env.clone()));
    let ctx = Context::mainnet().with_db(db).with_cfg(cfg).with_block(block_env);
    let never = Interrupt::new();
    let (out, mut pc) = match (trace, interrupt) {
        (None, None) => {
            let mut evm = one_shot(ctx, (), precompiles);
            let out = evm.transact(tx);
            (out, evm.precompiles)
        }
        (None, Some(i)) => {
            let mut evm = one_shot(ctx, Interruptible(i), precompiles);
            let out = evm.inspect_tx(tx);
            (out, evm.precompiles)
        }
        (Some(slot), i) => {
            let i = i.or(slot.stop.as_deref()).unwrap_or(&never);
            let (tx_env, block_env) = traced_tx.unwrap_or_default();
            match &slot.kind {
                TraceKind::Debug(opts) => {
                    let dbg = DebugInspector::new((**opts).clone()).map_err(|e| EvmError::Invalid(format!("tracer: {e}")))?;
                    let mut evm = one_shot(ctx, (dbg, Interruptible(i)), precompiles);
                    let out = evm.inspect_tx(tx);
                    if let Ok(o) = &out {
                        // The counter of standing precompile effects is bookkeeping, not state.
                        let mut seen = o.clone();
                        seen.state.remove(&EFFECTS_COUNTER);
                        let mut db = StoreDb { state: base, gas: GasMeter::infinite(), caller: call.nonce.map(|n| (call.caller, n)) };
                        let tx_ctx = slot.tx.map(|(h, index, block)| revm_inspectors::tracing::TransactionContext {
                            block_hash: Some(B256::from(block)),
                            tx_index: Some(index),
                            tx_hash: Some(B256::from(h)),
                        });
                        let frame = evm.inspector.0.get_result(tx_ctx, &tx_env, &block_env, &seen, &mut db);
                        slot.set(frame.map_err(|e| e.to_string()).and_then(|f| serde_json::to_value(f).map_err(|e| e.to_string())));
                    }
                    (out, evm.precompiles)
                }
                TraceKind::AccessList(list) => {
                    let insp = revm_inspectors::access_list::AccessListInspector::new(list.clone());
                    let mut evm = one_shot(ctx, (insp, Interruptible(i)), precompiles);
                    let out = evm.inspect_tx(tx);
                    let (insp, _) = evm.inspector;
                    slot.set(Ok(crate::trace::access_list_json(&insp.into_access_list())));
                    (out, evm.precompiles)
                }
            }
        }
    };
    let out = out.map_err(|e| match e {
        revm::context::result::EVMError::Transaction(t) => TxError::from(EvmError::Invalid(t.to_string())),
        revm::context::result::EVMError::Database(d) => TxError::from(EvmError::Store(d.0)),
        other => TxError::from(EvmError::Store(other.to_string())),
    })?;
    let standing = out.state.get(&EFFECTS_COUNTER).and_then(|a| a.storage.get(&U256::ZERO)).map(|s| usize::try_from(s.present_value).unwrap_or(0)).unwrap_or(0);
    pc.cosmos.roll_back_to(standing);
    let Cosmos { cur, events, verdicts, .. } = pc.cosmos;
    let (_, cache) = cur.into_changes();
    Ok(Ran { result: out.result, state: out.state, cache, events, verdicts })
}

/// Runs a mined transaction's `call` on `state` and writes its effects there (the caller's
/// overlay).
pub async fn run<S: StateWrite + Send + Sync>(state: &mut S, block: &BlockCtx, call: &EvmCall, tx_hash: &str) -> Result<Outcome, TxError> {
    run_inner(state, block, call, tx_hash, None, true).await
}

/// Runs `call` on `state` as [`call`] does (the gates as in a mined transaction, until it ends
/// or `interrupt` stops it) and writes its effects there, so the next call sees them
/// (`eth_simulateV1`: the caller's throwaway overlay).
pub async fn simulate<S: StateWrite + Send + Sync>(
    state: &mut S,
    block: &BlockCtx,
    call: &EvmCall,
    tx_hash: &str,
    interrupt: &Interrupt,
) -> Result<Outcome, TxError> {
    client_run(state, block, call, tx_hash, &format!("0x{tx_hash}"), interrupt, true).await
}

/// A client's run ([`call`], [`simulate`]): as a mined Ethereum transaction named `eth_hash`
/// (the audit rows it writes cite it), under `interrupt`; written to `state` when `commit`.
async fn client_run<S: StateWrite + Send + Sync>(
    state: &mut S,
    block: &BlockCtx,
    call: &EvmCall,
    tx_hash: &str,
    eth_hash: &str,
    interrupt: &Interrupt,
    commit: bool,
) -> Result<Outcome, TxError> {
    use lantau_compliance::audit::{EthTxHash, ETH_TX_HASH_OBJECT};
    state.object_put(ETH_TX_HASH_OBJECT, EthTxHash(eth_hash.to_string()));
    let out = run_inner(state, block, call, tx_hash, Some(interrupt), commit).await;
    state.object_delete(ETH_TX_HASH_OBJECT);
    let out = out?;
    if interrupt.is_stopped() {
        return Err(EvmError::Aborted.into());
    }
    Ok(out)
}

/// Runs `call` on `state` and writes nothing (`eth_call`, estimation), until it ends or
/// `interrupt` stops it ([`EvmError::Aborted`]).
pub async fn call<S: StateWrite + Send + Sync>(
    state: &mut S,
    block: &BlockCtx,
    call: &EvmCall,
    tx_hash: &str,
    interrupt: &Interrupt,
) -> Result<Outcome, TxError> {
    // As a mined Ethereum transaction runs (the handler names it for the audit rows): a
    // placeholder Ethereum hash of a real one's length (and not the Cosmos placeholder, as a
    // real one never is), so the rows a call writes, and their gas, are those of the mined
    // transaction and an estimate matches its cost.
    client_run(state, block, call, tx_hash, &format!("0x{}", "e".repeat(64)), interrupt, false).await
}

/// A run under an interrupt (a client's call) or not (a mined transaction); its effects
/// written to `state` when `commit`.
async fn run_inner<S: StateWrite + Send + Sync>(
    state: &mut S,
    block: &BlockCtx,
    call: &EvmCall,
    tx_hash: &str,
    interrupt: Option<&Interrupt>,
    commit: bool,
) -> Result<Outcome, TxError> {
    let trace: Option<TraceSlot> = state.object_get(TRACE_OBJECT);
    let chain_id = state.evm_chain_id().await?;
    let mut tokens = BTreeMap::new();
    for p in lantau_erc20::query::token_pairs(&*state).await? {
        if let Ok(a) = Address::from_hex(&p.erc20_address) {
            tokens.insert(ea(&a), p.denom);
        }
    }
    let ran = {
        let base: &S = &*state;
        blocking(|| run_sync(base, block, call, chain_id, tokens, tx_hash, interrupt, trace.as_ref()))?
    };
    let mut out = Outcome { verdicts: ran.verdicts, ..Default::default() };
    match ran.result {
        ExecutionResult::Success { gas, logs, output, .. } => {
            out.success = true;
            out.gas_used = gas.tx_gas_used();
            out.logs =
                logs.iter().map(|l| EthLog { address: la(&l.address), topics: l.topics().iter().map(|t| t.0).collect(), data: l.data.data.to_vec() }).collect();
            match output {
                Output::Call(b) => out.output = b.to_vec(),
                Output::Create(b, addr) => {
                    out.output = b.to_vec();
                    out.contract_address = addr.as_ref().map(la);
                }
            }
        }
        ExecutionResult::Revert { gas, output, .. } => {
            out.gas_used = gas.tx_gas_used();
            out.output = output.to_vec();
            out.vm_error = "execution reverted".into();
        }
        ExecutionResult::Halt { reason, gas, .. } => {
            out.gas_used = gas.tx_gas_used();
            out.vm_error = halt_text(&reason);
        }
    }
    if !commit {
        return Ok(out);
    }
    ran.cache.apply_to(&mut *state);
    out.events = ran.events;
    commit_state(state, &ran.state, &mut out.events).await?;
    Ok(out)
}

/// Writes the EVM's diff: nonces, code, storage, then the native-coin movements.
async fn commit_state<S: StateWrite + Send + Sync>(state: &mut S, diff: &EvmState, events: &mut Vec<Event>) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    // Deterministic order: by address, slots by key.
    let accounts: BTreeMap<EA, &revm::state::Account> = diff.iter().filter(|(a, _)| **a != EFFECTS_COUNTER).map(|(a, acc)| (*a, acc)).collect();
    let mut debits: Vec<(Address, u128)> = Vec::new();
    let mut credits: Vec<(Address, u128)> = Vec::new();
    for (a, acc) in accounts {
        if !acc.status.contains(AccountStatus::Touched) {
            continue;
        }
        let addr = la(&a);
        // Native balance: the EVM's final value against the bank's.
        let before = state.balance(&gas, &addr, NATIVE_DENOM).await?.0;
        let after: u128 = acc.info.balance.try_into().map_err(|_| EvmError::Store(format!("balance of {addr} beyond 128 bits")))?;
        match after.cmp(&before) {
            std::cmp::Ordering::Less => debits.push((addr, before.saturating_sub(after))),
            std::cmp::Ordering::Greater => credits.push((addr, after.saturating_sub(before))),
            std::cmp::Ordering::Equal => {}
        }
        if acc.status.contains(AccountStatus::SelfDestructed) {
            state.delete_code(&gas, &addr)?;
            continue;
        }
        // Nonce = auth sequence.
        let stored = state.account(&gas, &addr).await?;
        if stored.as_ref().map_or(acc.info.nonce != 0, |s| s.sequence != acc.info.nonce) {
            let mut rec = state.ensure_account(&gas, &addr).await?;
            rec.sequence = acc.info.nonce;
            state.put_account(&gas, &rec)?;
        }
        if acc.status.contains(AccountStatus::Created) {
            if let Some(code) = acc.info.code.as_ref().filter(|c| !c.is_empty()) {
                state.put_code(&gas, &addr, &acc.info.code_hash.0, code.original_byte_slice())?;
            }
        }
        let slots: BTreeMap<U256, U256> = acc.storage.iter().filter(|(_, s)| s.is_changed()).map(|(k, s)| (*k, s.present_value)).collect();
        for (k, v) in slots {
            state.put_storage(&gas, &addr, &k.to_be_bytes::<32>(), &v.to_be_bytes::<32>())?;
        }
    }
    // Pair debits with credits in address order: the movements sum to zero (gas is paid by the
    // ante, not by the EVM).
    let mut legs = Vec::new();
    let (mut i, mut j) = (0usize, 0usize);
    while let (Some(d), Some(c)) = (debits.get(i).copied(), credits.get(j).copied()) {
        let n = d.1.min(c.1);
        if n > 0 {
            legs.push(Leg::Plain(PlainLeg::new(&d.0, &c.0, &Coin::new(NATIVE_DENOM, n))?));
        }
        if let Some(x) = debits.get_mut(i) {
            x.1 = x.1.saturating_sub(n);
            if x.1 == 0 {
                i = i.saturating_add(1);
            }
        }
        if let Some(x) = credits.get_mut(j) {
            x.1 = x.1.saturating_sub(n);
            if x.1 == 0 {
                j = j.saturating_add(1);
            }
        }
    }
    if debits.get(i).is_some() || credits.get(j).is_some() {
        return Err(EvmError::Store("native coin not conserved by the EVM's diff".into()).into());
    }
    if !legs.is_empty() {
        state.transfer(&gas, legs, events).await?;
    }
    Ok(())
}

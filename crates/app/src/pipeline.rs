//! The one transaction pipeline: ante → gates → messages → record.
//!
//! Admission (check), re-admission after a commit (recheck), the checks of a proposed block
//! (propose: PrepareProposal and ProcessProposal), block execution (deliver), gas
//! estimation (simulate) and the compliance dry run (simulate-trace) all call
//! `run`; the [`Mode`] decides only what differs:
//!
//! | mode | ante | signature | fee floor | gates | messages + record | trace kept |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | check | yes | yes | yes | yes | no (as the Cosmos SDK's CheckTx) | yes |
//! | recheck | yes | yes | yes | yes | no | when it drops the transaction |
//! | propose | yes | yes | yes | yes | no | no |
//! | deliver | yes | yes | yes | yes | yes | yes |
//! | simulate | yes | no | no (pays the floor for its gas) | yes | yes | no |
//! | simulate-trace | no | no | no | yes | no | no (returned) |
//!
//! Which overlay it runs on is the caller's: the pipeline writes its effects into the state it
//! is given (the ante's effects stay once the ante passed, the messages' only when every
//! message and the record succeeded), and the caller applies or drops that state. What it needs
//! of the node around it is explicit (`Env`): it is a function of its inputs, not a method of
//! the app.

use cnidarium::StateWrite;
use cosmos_sdk_proto::Any;
use lantau_compliance::screening::Session;
use lantau_module_api::{event, BlockCtx, Dispatch, Event, ExecCtx, GasMeter, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1::GateTrace;
use std::sync::Arc;

use crate::ante;
use crate::hooks::BlockHook;
use crate::msg::Msg;
use crate::sigcache::SigCache;
use crate::trace::TraceBuffer;
use crate::tx::DecodedTx;
use lantau_store::Layer;

/// What the pipeline reads and keeps outside the state it runs on.
pub(crate) struct Env<'a> {
    /// Verified signatures (the ante consults and fills it).
    pub(crate) sigs: &'a SigCache,
    /// Told of each verdict that stands for an admission or an executed transaction (metrics).
    pub(crate) hook: &'a dyn BlockHook,
    /// Where traces are kept for TxTrace.
    pub(crate) traces: &'a parking_lot::Mutex<TraceBuffer>,
    /// Where the reads of the ante and the gates are logged, when the caller keeps them (the
    /// state the pipeline runs on is then a [`lantau_module_api::reads::Recording`] with this
    /// log, below any overlay of the pipeline's own).
    pub(crate) reads: Option<&'a lantau_module_api::reads::ReadLog>,
}

impl Env<'_> {
    fn keep_trace(&self, hash: [u8; 32], block: &BlockCtx, trace: Arc<GateTrace>) {
        self.traces.lock().put(hash, block.time.unix_timestamp(), trace);
    }
}

/// What differs between the six ways a transaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Admission to the mempool (CheckTx).
    Check,
    /// Re-admission of a waiting transaction on the newly committed state: the ante and the
    /// gates again, so a party blacklisted meanwhile drops it from the mempool.
    Recheck,
    /// The admission checks of a block's transactions before it is decided
    /// (PrepareProposal, ProcessProposal): on consensus rules only, nothing kept.
    Propose,
    /// Execution in a block (FinalizeBlock).
    Deliver,
    /// Gas estimation: no signature check, no fee floor; nothing is kept.
    Simulate,
    /// The gates alone (SimulateTrace): no ante, no messages.
    SimulateTrace,
}

impl Mode {
    fn ante(self) -> Option<ante::Mode> {
        match self {
            Mode::Check | Mode::Recheck => Some(ante::Mode::Check),
            Mode::Deliver | Mode::Propose => Some(ante::Mode::Deliver),
            Mode::Simulate => Some(ante::Mode::Simulate),
            Mode::SimulateTrace => None,
        }
    }

    fn runs_messages(self) -> bool {
        matches!(self, Mode::Deliver | Mode::Simulate)
    }

    /// Whether the run's events are used: those of the modes that run messages (execution's
    /// go into the block's results, a simulation's to its caller); admission, recheck and a
    /// proposal's checks keep only the verdict, so the ante builds no events for them.
    fn keeps_events(self) -> bool {
        self.runs_messages()
    }

    fn keeps_trace(self) -> bool {
        matches!(self, Mode::Check | Mode::Recheck | Mode::Deliver)
    }
}

/// What running a transaction gave.
#[derive(Debug)]
pub struct Run {
    /// The verdict: the first failure of ante, gates, messages or record.
    pub result: Result<(), TxError>,
    /// Events: the ante's once it passed, the messages' (and the record's) on success; none
    /// in a mode that discards them (`Mode::keeps_events`).
    pub events: Vec<Event>,
    /// The gate trace, when the gates ran.
    pub trace: Option<Arc<GateTrace>>,
    /// One response per message once they all ran (the Cosmos SDK's `TxMsgData.msg_responses`).
    pub msg_responses: Vec<Any>,
}

impl Run {
    fn stopped(result: Result<(), TxError>, events: Vec<Event>, trace: Option<Arc<GateTrace>>) -> Self {
        Self { result, events, trace, msg_responses: Vec::new() }
    }
}

/// Runs `tx` on `state` in `mode`, charging `gas`.
pub(crate) async fn run<S: StateWrite + Send + Sync>(env: &Env<'_>, state: &mut S, tx: &DecodedTx, block: &BlockCtx, gas: &GasMeter, mode: Mode) -> Run {
    {
        let mut events = Vec::new();
        if let Some(ante_mode) = mode.ante() {
            let mut ante_state = Layer::new(&mut *state);
            let kept = mode.keeps_events().then_some(&mut events);
            if let Err(e) = ante::run(&mut ante_state, tx, block, gas, env.sigs, ante_mode, kept).await {
                return Run::stopped(Err(e), Vec::new(), None);
            }
            // From here on the fee is paid and the sequence advanced, whatever follows.
            ante_state.apply();
        }
        // The screening session (admission is an early filter; execution judges again on the
        // block's state, because a proposer can put anything in a block).
        let mut session = match crate::screen::open(&*state, gas, block, tx, env.reads).await {
            Ok(s) => s,
            Err(e) => return Run::stopped(Err(e), events, None),
        };
        // A recheck that passes says nothing the admission's trace did not: only a recheck
        // that drops the transaction replaces it (with the reason).
        let rejection = session.rejection().cloned();
        let keep = mode.keeps_trace() && (mode != Mode::Recheck || rejection.is_some());
        let hash_hex = tx.hash_hex();
        let trace = Arc::new(session.verdict().trace(&hash_hex));
        // The trace that stands for the transaction: the node's metrics hear of one per
        // admission and per executed transaction, and TxTrace keeps it (by the Ethereum hash
        // as well when it is the precompile's screening).
        let stand = |t: &Arc<GateTrace>, by_eth: bool| {
            match mode {
                Mode::Check => env.hook.on_verdict("check", t),
                Mode::Deliver => env.hook.on_verdict("deliver", t),
                Mode::Recheck | Mode::Propose | Mode::Simulate | Mode::SimulateTrace => {}
            }
            if keep {
                env.keep_trace(tx.hash, block, Arc::clone(t));
                if let Some(eth) = tx.eth_hash.filter(|_| by_eth) {
                    env.keep_trace(eth, block, Arc::clone(t));
                }
            }
        };
        if let Some(e) = rejection {
            stand(&trace, false);
            return Run::stopped(Err(e), events, Some(trace));
        }
        if !mode.runs_messages() {
            stand(&trace, false);
            return Run::stopped(Ok(()), events, Some(trace));
        }
        let mut msg_state = Layer::new(&mut *state);
        match execute(&mut msg_state, tx, block, gas, &mut session).await {
            Ok(mut done) => {
                // Screenings inside execution (the ERC-20 precompile's): the last one is the
                // transaction's trace, found by the Cosmos and the Ethereum hash.
                match done.inside.pop() {
                    Some(t) => stand(&Arc::new(t), true),
                    None => stand(&trace, false),
                }
                msg_state.apply();
                events.extend(done.events);
                Run { result: Ok(()), events, trace: Some(trace), msg_responses: done.responses }
            }
            Err(e) => {
                stand(&trace, false);
                Run::stopped(Err(e), events, Some(trace))
            }
        }
    }
}

/// What the messages of a transaction gave.
struct Executed {
    events: Vec<Event>,
    /// One per message.
    responses: Vec<Any>,
    /// The traces of screenings run inside execution, in order.
    inside: Vec<GateTrace>,
}

/// The messages, with the session's tokens lent to them, then the session's close (every
/// token used, the verdict recorded). On error the caller drops `state`.
async fn execute<S: StateWrite + Send + Sync>(
    state: &mut S,
    tx: &DecodedTx,
    block: &BlockCtx,
    gas: &GasMeter,
    session: &mut Session,
) -> Result<Executed, TxError> {
    run_messages(state, tx.signer, &tx.msgs, &tx.hash_hex(), block, gas, session).await
}

/// A transaction's messages, signed by `signer`, in order. A message that hands messages on
/// (a group's accepted proposal, [`Dispatch`]) has them run ([`run_dispatch`]) before the next.
async fn run_messages<S: StateWrite + Send + Sync>(
    state: &mut S,
    signer: Address,
    msgs: &[Msg],
    hash_hex: &str,
    block: &BlockCtx,
    gas: &GasMeter,
    session: &mut Session,
) -> Result<Executed, TxError> {
    let mut done = Executed { events: Vec::new(), responses: Vec::with_capacity(msgs.len()), inside: Vec::new() };
    session.lend(state);
    for (i, m) in msgs.iter().enumerate() {
        let mut ctx = ExecCtx::new(block, gas, hash_hex, signer);
        run_message(state, m, i, &mut ctx).await?;
        if let Some(d) = ctx.dispatch.take() {
            run_dispatch(state, block, gas, &mut ctx, &d, session.payload().cloned()).await.map_err(|e| at_index(e, i))?;
        }
        done.add(m, i, &signer, ctx);
    }
    session.close(state, gas, block, hash_hex, &mut done.events).await?;
    Ok(done)
}

/// A group proposal's messages, run as the group: [`run_messages`] without hand-ons (a
/// proposal's messages cannot carry proposals, so this is one level deep).
async fn run_proposal<S: StateWrite + Send + Sync>(
    state: &mut S,
    signer: Address,
    msgs: &[Msg],
    hash_hex: &str,
    block: &BlockCtx,
    gas: &GasMeter,
    session: &mut Session,
) -> Result<Executed, TxError> {
    let mut done = Executed { events: Vec::new(), responses: Vec::with_capacity(msgs.len()), inside: Vec::new() };
    session.lend(state);
    for (i, m) in msgs.iter().enumerate() {
        let mut ctx = ExecCtx::new(block, gas, hash_hex, signer);
        run_message(state, m, i, &mut ctx).await?;
        if ctx.dispatch.is_some() {
            return Err(at_index(lantau_group::GroupError::InvalidMessages(format!("{} cannot run inside a proposal", m.type_url())).into(), i));
        }
        done.add(m, i, &signer, ctx);
    }
    session.close(state, gas, block, hash_hex, &mut done.events).await?;
    Ok(done)
}

fn at_index(e: TxError, i: usize) -> TxError {
    e.wrap(format!("failed to execute message; message index: {i}"))
}

/// One message's handler. On error the loan goes with `state`, which the caller drops.
async fn run_message<S: StateWrite + Send + Sync>(state: &mut S, m: &Msg, i: usize, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
    ctx.msg_index = i;
    ctx.inner_check = Some(inner_check);
    m.execute(state, ctx).await.map_err(|e| at_index(e, i))
}

impl Executed {
    /// Takes in what message `i` gave: its response, its `message` event and its events.
    fn add(&mut self, m: &Msg, i: usize, signer: &Address, mut ctx: ExecCtx<'_>) {
        self.inside.append(&mut ctx.traces);
        self.responses.push(ctx.response.take().unwrap_or_else(|| Any { type_url: format!("{}Response", m.type_url()), value: Vec::new() }));
        self.events.push(message_event(m.type_url(), signer, m.module(), i));
        self.events.extend(ctx.events.into_iter().map(|e| with_msg_index(e, i)));
    }
}

/// How a message carried inside another (a group proposal's) reads: decoded and checked as a
/// transaction's message is, its signer and type URL.
fn inner_check(any: &Any) -> Result<(Address, &'static str), TxError> {
    let m = Msg::from_any(any)?;
    m.check_stateless()?;
    Ok((m.signer(), m.type_url()))
}

/// Runs a group's accepted proposal as the group: its messages through [`run_proposal`] with a
/// screening session of their own (the group the signer, the transaction's Travel Rule
/// payload), on an overlay kept only if every message and the session's close succeed; then
/// the group module records the outcome. The session's gate trace joins the message's traces
/// (TxTrace then explains the group's movements, or why they were refused). A failed run is the
/// proposal's FAILURE, not the transaction's, except running out of gas, which fails the
/// transaction.
async fn run_dispatch<S: StateWrite + Send + Sync>(
    state: &mut S,
    block: &BlockCtx,
    gas: &GasMeter,
    ctx: &mut ExecCtx<'_>,
    d: &Dispatch,
    payload: Option<lantau_compliance::TravelRulePayload>,
) -> Result<(), TxError> {
    let outcome = {
        let mut sub = Layer::new(&mut *state);
        let ran: Result<Executed, TxError> = async {
            let mut msgs = Vec::with_capacity(d.msgs.len());
            for (i, any) in d.msgs.iter().enumerate() {
                let m = Msg::from_any(any).map_err(|e| e.wrap(format!("proposal message {i}")))?;
                m.check_stateless().map_err(|e| e.wrap(format!("proposal message {i}")))?;
                if m.signer() != d.signer || matches!(&m, Msg::Group(g) if !matches!(g, lantau_group::GroupMsg::Update(..))) {
                    return Err(lantau_group::GroupError::InvalidMessages(format!("message {i} ({}) cannot run for the group", m.type_url())).into());
                }
                msgs.push(m);
            }
            let facts: Vec<_> = msgs.iter().enumerate().flat_map(|(i, m)| m.facts(i)).collect();
            let types: Vec<&str> = msgs.iter().map(|m| m.type_url()).collect();
            let mut session = Session::open(&sub, gas, block, d.signer, facts, payload, &types, None).await?;
            ctx.traces.push(session.verdict().trace(ctx.tx_hash));
            if let Some(e) = session.rejection().cloned() {
                return Err(e);
            }
            run_proposal(&mut sub, d.signer, &msgs, ctx.tx_hash, block, gas, &mut session).await
        }
        .await;
        match ran {
            Ok(done) => {
                sub.apply();
                ctx.traces.extend(done.inside);
                // The proposal's events join the message's (which adds its own index).
                ctx.events.extend(done.events.into_iter().map(without_msg_index));
                Ok(())
            }
            Err(e) if e.codespace == "sdk" && e.code == 11 => return Err(e),
            Err(e) => Err(format!("{}:{}: {}", e.codespace, e.code, e.log)),
        }
    };
    lantau_group::handler::record_exec(state, ctx, d, outcome).await
}

fn message_event(action: &str, sender: &Address, module: &str, i: usize) -> Event {
    event("message", [("action", action.to_string()), ("sender", sender.to_bech32()), ("module", module.to_string()), ("msg_index", i.to_string())])
}

fn without_msg_index(mut e: Event) -> Event {
    e.attributes.retain(|a| a.key_str().ok() != Some("msg_index"));
    e
}

fn with_msg_index(mut e: Event, i: usize) -> Event {
    e.attributes.push(("msg_index", i.to_string(), true).into());
    e
}

//! Execution contexts.

use lantau_primitives::{Address, Height};

use crate::event::Event;
use crate::gas::GasMeter;

/// What a block tells the state machine about itself. Block time is the only clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockCtx {
    /// The height being executed (or, for CheckTx, the next height).
    pub height: Height,
    /// The block time, from the header (consensus time, never the local clock).
    pub time: time::OffsetDateTime,
    /// The Cosmos chain id.
    pub chain_id: String,
}

/// How the app reads a message carried inside another (a group proposal's): the signer it
/// names and its type URL, once decoded and checked statelessly as a transaction's message
/// would be.
pub type InnerCheck = fn(&cosmos_sdk_proto::Any) -> Result<(Address, &'static str), crate::TxError>;

/// Messages a handler hands to the app to run as another account once it returns: a group's
/// accepted proposal. The app runs them through the pipeline's message step (their own
/// screening session, all or none) and reports the outcome to the group module.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    /// The account the messages act for (each names it as its signer).
    pub signer: Address,
    /// The messages, in order.
    pub msgs: Vec<cosmos_sdk_proto::Any>,
    /// The proposal they carry.
    pub proposal_id: u64,
    /// Who asked for the run.
    pub executor: Address,
}

/// The per-transaction context handed to message handlers.
#[derive(Debug)]
pub struct ExecCtx<'a> {
    /// The block.
    pub block: &'a BlockCtx,
    /// The transaction's gas meter.
    pub gas: &'a GasMeter,
    /// The transaction hash (upper-case hex), for records that cite it.
    pub tx_hash: &'a str,
    /// The verified signer of the transaction.
    pub signer: Address,
    /// The index of the message being executed.
    pub msg_index: usize,
    /// Events emitted so far by this message.
    pub events: Vec<Event>,
    /// The gate traces of the screenings this message ran inside its execution (the EVM
    /// precompile's transfers), in order; the pipeline keeps the last as the transaction's.
    pub traces: Vec<lantau_proto::chain::compliance::v1::GateTrace>,
    /// The message's response, when its handler gives one (the Cosmos SDK's
    /// `TxMsgData.msg_responses` entry); `None` answers an empty `<message type>Response`.
    pub response: Option<cosmos_sdk_proto::Any>,
    /// The app's reading of inner messages (set by the pipeline; `None` where messages cannot
    /// carry messages, e.g. a module's unit tests).
    pub inner_check: Option<InnerCheck>,
    /// Messages the handler asks the app to run after it ([`Dispatch`]).
    pub dispatch: Option<Dispatch>,
}

impl<'a> ExecCtx<'a> {
    /// A context for one message.
    pub fn new(block: &'a BlockCtx, gas: &'a GasMeter, tx_hash: &'a str, signer: Address) -> Self {
        Self { block, gas, tx_hash, signer, msg_index: 0, events: Vec::new(), traces: Vec::new(), response: None, inner_check: None, dispatch: None }
    }

    /// Records an event.
    pub fn emit(&mut self, e: Event) {
        self.events.push(e);
    }
}

impl ExecCtx<'_> {
    /// Records a typed event (the Cosmos SDK's `EmitTypedEvent` shape).
    pub fn emit_typed<M: prost::Name + serde::Serialize>(&mut self, msg: &M) {
        self.events.push(crate::event::typed(msg));
    }
}

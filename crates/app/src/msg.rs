//! Every message type the chain accepts, decoded from its `Any` into one typed enum. A single
//! `match` per concern (type URL, signer, module, execution): adding a message type means adding
//! one variant and the compiler names every place that must handle it.

use cnidarium::StateWrite;
use cosmos_sdk_proto::cosmos::bank::v1beta1 as bankpb;
use cosmos_sdk_proto::Any;
use lantau_bank::{MultiSendMsg, SendMsg};
use lantau_module_api::{ExecCtx, MsgHandler, SdkError, TxError};
use lantau_primitives::Address;
use prost::Message;

/// `/cosmos.bank.v1beta1.MsgSend`.
pub const MSG_SEND: &str = "/cosmos.bank.v1beta1.MsgSend";
/// `/cosmos.bank.v1beta1.MsgMultiSend`.
pub const MSG_MULTI_SEND: &str = "/cosmos.bank.v1beta1.MsgMultiSend";

/// A decoded, statelessly validated message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// Bank send.
    Send(SendMsg),
    /// Bank multi-send (one input).
    MultiSend(MultiSendMsg),
}

fn decode<M: Message + Default>(any: &Any) -> Result<M, TxError> {
    M::decode(any.value.as_slice())
        .map_err(|e| SdkError::TxDecode(format!("invalid {}: {e}", any.type_url)).into())
}

impl Msg {
    /// Decodes and validates an `Any`. An unknown type URL is a decode error (sdk code 2), as in
    /// the Cosmos SDK, whose interface registry cannot resolve it.
    pub fn from_any(any: &Any) -> Result<Self, TxError> {
        match any.type_url.as_str() {
            MSG_SEND => Ok(Msg::Send(SendMsg::from_proto(&decode::<bankpb::MsgSend>(any)?)?)),
            MSG_MULTI_SEND => Ok(Msg::MultiSend(MultiSendMsg::from_proto(&decode::<bankpb::MsgMultiSend>(any)?)?)),
            other => Err(SdkError::TxDecode(format!("unable to resolve type URL {other}")).into()),
        }
    }

    /// The message's type URL (`message.action`).
    pub fn type_url(&self) -> &'static str {
        match self {
            Msg::Send(_) => MSG_SEND,
            Msg::MultiSend(_) => MSG_MULTI_SEND,
        }
    }

    /// The address that must sign the message.
    pub fn signer(&self) -> Address {
        match self {
            Msg::Send(m) => m.from,
            Msg::MultiSend(m) => m.from,
        }
    }

    /// The module that handles it (`message.module`).
    pub fn module(&self) -> &'static str {
        match self {
            Msg::Send(_) | Msg::MultiSend(_) => lantau_bank::MODULE_NAME,
        }
    }

    /// Stateless checks.
    pub fn check_stateless(&self) -> Result<(), TxError> {
        match self {
            Msg::Send(m) => m.check_stateless(),
            Msg::MultiSend(m) => m.check_stateless(),
        }
    }

    /// State checks and execution.
    pub async fn execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        match self {
            Msg::Send(m) => m.check_and_execute(state, ctx).await,
            Msg::MultiSend(m) => m.check_and_execute(state, ctx).await,
        }
    }
}

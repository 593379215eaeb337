//! The message type URLs more than one module names: the shared vocabulary, written once
//! below the modules. A module that owns a message re-exports its URL from here; one that
//! only judges it (the role gate naming what an agent may sign) reads it from here, so no
//! module spells another's type URLs.

/// The bank's `/cosmos.bank.v1beta1.MsgSend` (the stablecoin send an agent key may make).
pub const MSG_SEND: &str = "/cosmos.bank.v1beta1.MsgSend";
/// The bank's `/cosmos.bank.v1beta1.MsgMultiSend`.
pub const MSG_MULTI_SEND: &str = "/cosmos.bank.v1beta1.MsgMultiSend";

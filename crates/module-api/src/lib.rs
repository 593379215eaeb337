//! The contract every Lantau module follows.
//!
//! - [`gas`]: the deterministic gas meter and its cost table (store reads, writes, bytes,
//!   signatures). Every typed state access in a module charges it.
//! - [`error`]: [`TxError`], the (codespace, code, log) triple every failure becomes, the
//!   [`ErrorCode`] trait each module's error enum implements, and the standard `sdk` codespace.
//! - [`ctx`]: [`BlockCtx`] (height, block time, chain id) and [`ExecCtx`] (the per-transaction
//!   context handed to handlers: block, gas meter, signers, events).
//! - [`event`]: building ABCI events.
//! - [`handler`]: the [`MsgHandler`] trait: `check_stateless` (pure, parallel) and
//!   `check_and_execute` (state checks and writes).
//! - [`module`]: the [`Module`] trait (name, genesis section, message decoding, query routes)
//!   from which the app's one ordered module list wires everything, and [`Fact`], a
//!   stablecoin movement a message declares.
//! - [`reads`]: [`reads::Recording`], a state whose reads are logged, so that whether a
//!   verdict still stands is decided from what it actually read.
//! - [`type_url`]: the message type URLs more than one module names.
//!
//! State goes through one door: each module's `state.rs` defines typed extension traits over
//! cnidarium's `StateRead`/`StateWrite`, and its keys live only in its `state_key.rs`.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod ctx;
pub mod error;
pub mod event;
pub mod gas;
pub mod handler;
pub mod module;
pub mod reads;
pub mod store;
pub mod type_url;

pub use ctx::{BlockCtx, Dispatch, ExecCtx, InnerCheck};
pub use error::{ErrorCode, SdkError, TxError};
pub use event::{event, Event};
pub use gas::{GasMeter, OutOfGas};
pub use handler::MsgHandler;
pub use module::{decode_query, query_address, EmptyGenesis, Fact, Module, ModuleMsg, NoMsg, QueryError};

/// Parses a bech32 address field of a message; failure is sdk code 7 (invalid address), naming
/// the field.
pub fn parse_address(s: &str, field: &str) -> Result<lantau_primitives::Address, TxError> {
    lantau_primitives::Address::from_bech32(s).map_err(|e| SdkError::InvalidAddress(format!("{field}: {e}")).into())
}

/// A duration param in whole seconds, as a protobuf Duration's JSON writes it (`"86400s"`):
/// `None` unless it is digits then `s`, positive.
pub fn duration_secs(s: &str) -> Option<u64> {
    s.strip_suffix('s').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())).and_then(|d| d.parse::<u64>().ok()).filter(|secs| *secs > 0)
}

/// The block time as a protobuf timestamp.
pub fn block_timestamp(block: &BlockCtx) -> lantau_proto::Timestamp {
    lantau_proto::timestamp(block.time)
}

/// Decodes the protobuf message inside an `Any`; failure is sdk code 2 (tx decode), naming the
/// type URL. Every module's `from_any` uses it.
pub fn decode_any<M: prost::Message + Default>(any: &cosmos_sdk_proto::Any) -> Result<M, TxError> {
    M::decode(any.value.as_slice()).map_err(|e| SdkError::TxDecode(format!("invalid {}: {e}", any.type_url)).into())
}

/// A coin in the Cosmos SDK's protobuf form.
pub fn pb_coin(c: &lantau_primitives::Coin) -> cosmos_sdk_proto::cosmos::base::v1beta1::Coin {
    cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: c.denom.clone(), amount: c.amount.to_string() }
}

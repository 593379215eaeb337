//! The [`Module`] trait: what the app needs to know of a module to wire it, so that the app's
//! one ordered list (`lantau_app::modules`) gives routing, genesis and queries.

use std::fmt::Debug;
use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use cosmos_sdk_proto::Any;
use lantau_primitives::{Address, Coin};
use serde::{de::DeserializeOwned, Serialize};

use crate::{BlockCtx, MsgHandler, TxError};

/// A compliance fact: one stablecoin amount moving from one account to another inside a
/// message. The gate chain judges facts; the bank moves a stablecoin only with the proof of
/// screening the gate chain issued for exactly one fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// The debited account.
    pub from: Address,
    /// The credited account.
    pub to: Address,
    /// The stablecoin amount (`hkd.` denom).
    pub amount: Coin,
    /// Index of the message it was projected from.
    pub msg_index: usize,
}

/// A module's decoded message type.
pub trait ModuleMsg: MsgHandler + Clone + Debug + PartialEq + Send + Sync + 'static {
    /// The type URL (`message.action`).
    fn type_url(&self) -> &'static str;
    /// The address that must sign it.
    fn signer(&self) -> Address;
    /// The stablecoin movements it makes (empty for a message that moves none). A handler
    /// that moves a stablecoin without declaring it here finds no proof of screening and
    /// fails; it cannot move it around the gates.
    fn facts(&self, msg_index: usize) -> Vec<Fact>;
}

/// The message type of a module that has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoMsg {}

impl MsgHandler for NoMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        match *self {}
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, _state: &mut S, _ctx: &mut crate::ExecCtx<'_>) -> Result<(), TxError> {
        match *self {}
    }
}

impl ModuleMsg for NoMsg {
    fn type_url(&self) -> &'static str {
        match *self {}
    }
    fn signer(&self) -> Address {
        match *self {}
    }
    fn facts(&self, _msg_index: usize) -> Vec<Fact> {
        match *self {}
    }
}

/// A query failure, mapped to a gRPC status by the servers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// gRPC NotFound (HTTP 404).
    #[error("{0}")]
    NotFound(String),
    /// gRPC InvalidArgument (HTTP 400).
    #[error("{0}")]
    InvalidArgument(String),
    /// gRPC FailedPrecondition (HTTP 400).
    #[error("{0}")]
    FailedPrecondition(String),
    /// gRPC Internal (HTTP 500): a store fault, never bad input.
    #[error("{0}")]
    Internal(String),
}

impl QueryError {
    /// The gRPC status code.
    pub fn grpc_code(&self) -> u32 {
        match self {
            QueryError::InvalidArgument(_) => 3,
            QueryError::NotFound(_) => 5,
            QueryError::FailedPrecondition(_) => 9,
            QueryError::Internal(_) => 13,
        }
    }
}

impl From<TxError> for QueryError {
    /// A module error met while answering a query: a store fault (`sdk` 1) is internal, an
    /// out-of-gas cannot happen (queries are unmetered), anything else is the request's fault.
    fn from(e: TxError) -> Self {
        if e.codespace == "sdk" && e.code == 1 {
            QueryError::Internal(e.log)
        } else {
            QueryError::InvalidArgument(e.log)
        }
    }
}

/// One module of the chain. The app lists its modules once, in order; from that list follow
/// the genesis file's sections and their order, message decoding and routing, and query
/// routing.
pub trait Module: Send + Sync + 'static {
    /// The module's name (`message.module`, its genesis section).
    const NAME: &'static str;

    /// Its section of the genesis file.
    type Genesis: Serialize + DeserializeOwned + Clone + Debug + PartialEq + Send + Sync + 'static;

    /// Its messages ([`NoMsg`] when it has none).
    type Msg: ModuleMsg;

    /// The section's value when the genesis file omits it.
    fn default_genesis() -> Self::Genesis;

    /// Writes the module's genesis state (`block`: height 0, the genesis time). Runs in list
    /// order, so a module may read what an earlier one wrote.
    fn init_genesis<S: StateWrite + Send + Sync>(state: &mut S, genesis: &Self::Genesis, block: &BlockCtx) -> impl Future<Output = Result<(), TxError>> + Send;

    /// Decodes and validates one of its messages; `None` when the type URL is not its.
    fn decode(any: &Any) -> Option<Result<Self::Msg, TxError>> {
        // A module without messages recognises no type URL (the declared-message test catches
        // a module with messages that forgot to override this).
        let _ = any;
        None
    }

    /// Answers a query by its gRPC method name (`/chain.kyc.v1.Query/Identity`), protobuf in
    /// and out; `None` when the method is not its.
    fn query<S: StateRead + Sync>(_state: &S, _method: &str, _request: &[u8]) -> impl Future<Output = Option<Result<Vec<u8>, QueryError>>> + Send {
        async { None }
    }

    /// Prefixes of the non-verifiable store that hold records of the chain (a node restored
    /// from a state-sync snapshot must have them too: the audit log's rows), as opposed to
    /// what a node derives for itself (indexes). Snapshots carry the keys under these
    /// prefixes besides the whole verifiable store.
    const SNAPSHOT_NONVERIFIABLE: &'static [&'static [u8]] = &[];

    /// Prefixes of the non-verifiable store whose records are written once and never changed
    /// or deleted (the audit log's rows and indexes): the node's history of past heights keeps
    /// their one entry for good, so it does not list them for pruning.
    const WRITE_ONCE_NONVERIFIABLE: &'static [&'static [u8]] = &[];

    /// Records of the non-verifiable store that are appended and never rewritten, each key
    /// ending with its sequence number (u64 big-endian) drawn from a counter kept under a
    /// verifiable key: `(prefix, counter key)`. At any height the records are those whose
    /// sequence is at most the counter's value then, so the node's history keeps none of them
    /// and reads them at a past height from the latest state (the audit log).
    const SEQUENCED_NONVERIFIABLE: &'static [(&'static [u8], &'static str)] = &[];

    /// Prefixes of the verifiable store whose scans the app's read cache memoizes per version
    /// (small sets that many transactions scan, like the ERC-20 token pairs).
    const MEMOIZED_SCANS: &'static [&'static str] = &[];

    /// Prefixes of the non-verifiable store whose records the app's read cache keeps (records
    /// a transaction reads more than once, like the velocity windows).
    const CACHED_NONVERIFIABLE: &'static [&'static str] = &[];

    /// Prefixes of the verifiable store that hold few keys while their point reads mostly ask
    /// for keys that are absent (the frozen addresses, read for both parties of every
    /// stablecoin movement). The app's read cache answers those reads from one scan of the
    /// prefix per version, so a first read of an address costs no read of the store.
    const SPARSE_PREFIXES: &'static [&'static str] = &[];

    /// Prefixes this module no longer keeps in the verifiable store, each with what lived
    /// there: a store that still holds keys under one was written by an older layout, and the
    /// app refuses to open it rather than misread it.
    const RETIRED_VERIFIABLE: &'static [(&'static str, &'static str)] = &[];

    /// The version of the module's state layout. A release that changes how the module keeps
    /// its state raises it and teaches [`Module::migrate`] the step from the version before;
    /// an upgrade runs the steps in order (`lantau_app::upgrades`). A store that records no
    /// version for the module holds version 1.
    const STATE_VERSION: u64 = 1;

    /// Moves the module's state from version `from` to `from + 1`, inside the upgrade block's
    /// writes, charging `gas`. Deterministic: reads and writes state only. The default knows no
    /// step: a module that raises [`Module::STATE_VERSION`] must override it.
    fn migrate<S: StateWrite + Send + Sync>(
        state: &mut S,
        from: u64,
        gas: &crate::GasMeter,
        block: &BlockCtx,
    ) -> impl Future<Output = Result<(), TxError>> + Send {
        let _ = (state, gas, block);
        async move { Err(crate::error::internal(format!("the {} module has no migration from state version {from}", Self::NAME))) }
    }

    /// Runs on a state restored from a snapshot, before it commits: checks the non-verifiable
    /// records it carried against the verifiable state (which the app hash proves) and
    /// rebuilds what derives from them. An error refuses the snapshot.
    fn restore_snapshot<S: StateWrite + Send + Sync>(_state: &mut S) -> impl Future<Output = Result<(), TxError>> + Send {
        async { Ok(()) }
    }
}

/// The genesis section of a module that has nothing to set up (`{}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct EmptyGenesis {}

/// Decodes a query's protobuf request; a malformed one is `InvalidArgument`.
pub fn decode_query<M: prost::Message + prost::Name + Default>(request: &[u8]) -> Result<M, QueryError> {
    M::decode(request).map_err(|e| QueryError::InvalidArgument(format!("invalid {}: {e}", M::NAME)))
}

/// Parses a bech32 address field of a query request (`InvalidArgument` naming the field).
pub fn query_address(field: &str, value: &str) -> Result<Address, QueryError> {
    if value.is_empty() {
        return Err(QueryError::InvalidArgument(format!("empty address string is not allowed ({field})")));
    }
    Address::from_bech32(value).map_err(|e| QueryError::InvalidArgument(format!("invalid {field} {value:?}: {e}")))
}

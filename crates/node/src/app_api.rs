//! The state machine's side of [`NodeApi`], written once: both node kinds (the embedded
//! [`crate::EmbeddedNode`] and [`crate::comet::CometNode`] under CometBFT) hold the app and
//! answer these methods from it alike, each a one-line delegation here. A failure of the app
//! ([`lantau_app::AppError`]) is [`NodeError::Internal`] with its message.
//!
//! [`NodeApi`]: lantau_rpc::NodeApi

use lantau_app::evm::exec::{EvmCall, Interrupt, Outcome};
use lantau_app::evm::trace::TraceSlot;
use lantau_app::module_api::{QueryError, TxError};
use lantau_app::store::Snapshot;
use lantau_app::tendermint::abci::{request, response};
use lantau_app::App;
use lantau_rpc::NodeError;

fn internal(e: impl std::fmt::Display) -> NodeError {
    NodeError::Internal(e.to_string())
}

/// [`lantau_rpc::NodeApi::query`]: the app's one query router.
pub(crate) async fn query(app: &App, height: u64, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    app.queries().grpc_query(height, method, request).await
}

/// [`lantau_rpc::NodeApi::abci_query`].
pub(crate) async fn abci_query(app: &App, req: request::Query) -> response::Query {
    app.abci_query(req).await
}

/// [`lantau_rpc::NodeApi::abci_info`].
pub(crate) async fn abci_info(app: &App, req: request::Info) -> Result<response::Info, NodeError> {
    app.info(req).await.map_err(internal)
}

/// [`lantau_rpc::NodeApi::eth_call`].
pub(crate) async fn eth_call(app: &App, height: Option<u64>, call: &EvmCall, interrupt: &Interrupt) -> Result<Outcome, TxError> {
    app.queries().eth_call(height, call, interrupt).await
}

/// [`lantau_rpc::NodeApi::trace_call`].
pub(crate) async fn trace_call(app: &App, height: Option<u64>, call: &EvmCall, interrupt: &Interrupt, trace: &TraceSlot) -> Result<Outcome, TxError> {
    app.queries().eth_call_traced(height, call, interrupt, Some(trace)).await
}

/// [`lantau_rpc::NodeApi::audit_export`]: a request the state cannot answer (an empty log, no
/// block yet) is the request's fault.
pub(crate) async fn audit_export(
    app: &App,
    from: Option<time::OffsetDateTime>,
    to: Option<time::OffsetDateTime>,
) -> Result<lantau_app::audit_export::AuditExport, NodeError> {
    app.queries().audit_export(from, to).await.map_err(|e| match e {
        lantau_app::AppError::Unavailable(m) => NodeError::OverBudget(m),
        other => internal(other),
    })
}

/// [`lantau_rpc::NodeApi::eth_simulate`].
pub(crate) async fn eth_simulate(
    app: &App,
    height: Option<u64>,
    blocks: &[Vec<(EvmCall, [u8; 32])>],
    interrupt: &Interrupt,
) -> Result<Vec<lantau_app::query::SimulatedBlock>, TxError> {
    app.queries().eth_simulate(height, blocks, interrupt).await
}

/// [`lantau_rpc::NodeApi::replay_block`].
pub(crate) async fn replay_block(
    app: &App,
    block: &lantau_app::tendermint::Block,
    traced: &std::collections::BTreeMap<usize, TraceSlot>,
) -> Result<bool, NodeError> {
    app.queries().replay_block(block.header.height.value(), block.header.time, &block.data, traced).await.map_err(internal)
}

/// [`lantau_rpc::NodeApi::state_at`].
pub(crate) async fn state_at(app: &App, height: Option<u64>) -> Result<Option<lantau_app::history::StateView>, NodeError> {
    app.queries().snapshot_at_height(height).await.map_err(internal)
}

/// [`lantau_rpc::NodeApi::last_height`].
pub(crate) async fn last_height(app: &App) -> Result<u64, NodeError> {
    app.queries().last_height().await.map_err(internal)
}

/// [`lantau_rpc::NodeApi::max_block_gas`].
pub(crate) async fn max_block_gas(app: &App) -> Result<Option<u64>, NodeError> {
    app.queries().max_block_gas().await.map_err(internal)
}

/// [`lantau_rpc::NodeApi::evm_chain_id`].
pub(crate) async fn evm_chain_id(app: &App) -> Result<u64, NodeError> {
    app.queries().evm_chain_id().await.map_err(internal)
}

/// [`lantau_rpc::NodeApi::pending_sequence`]: from the app's admission state, which both the
/// embedded engine's mempool and CometBFT's CheckTx keep.
pub(crate) async fn pending_sequence(app: &App, addr: &lantau_primitives::Address) -> Result<u64, NodeError> {
    app.queries().pending_sequence(addr).await.map_err(internal)
}

/// The app hash of the latest committed state, upper hex.
pub(crate) async fn app_hash(app: &App) -> Result<String, NodeError> {
    Ok(const_hex::encode_upper(app.queries().app_hash().await.map_err(internal)?.as_bytes()))
}

/// The height of the last block in a snapshot (0 before the first block).
pub(crate) async fn height_at(snap: &Snapshot) -> Result<u64, NodeError> {
    lantau_app::Queries::height_at(snap).await.map_err(internal)
}

/// The root hash of a snapshot, upper hex: the app hash after its last block.
pub(crate) async fn root_hash(snap: &Snapshot) -> Result<String, NodeError> {
    Ok(const_hex::encode_upper(snap.root_hash().await.map_err(internal)?.0))
}

//! The interface every server uses to reach the node: [`NodeApi`], narrow and typed. The
//! servers see the state machine only through its methods (the one query router, ABCI Query
//! and Info, EVM calls, read-only committed state for the Ethereum reads, a few facts), never
//! as a whole; failures are a [`NodeError`], which each server maps to its own convention.

use std::sync::Arc;

use lantau_app::evm::exec::{EvmCall, Interrupt, Outcome};
use lantau_app::evm::trace::TraceSlot;
use lantau_app::module_api::{QueryError, TxError};
use lantau_app::tendermint::abci::types::ExecTxResult;
use lantau_app::tendermint::abci::{request, response, Event};
use lantau_event_query::Query;

/// A transaction as indexed: where it landed and what it did.
#[derive(Debug, Clone)]
pub struct TxRecord {
    /// sha256 of the bytes.
    pub hash: [u8; 32],
    /// Block height.
    pub height: u64,
    /// Index within the block.
    pub index: u32,
    /// The raw transaction bytes.
    pub tx: Vec<u8>,
    /// The execution result.
    pub result: ExecTxResult,
    /// The block time, RFC 3339.
    pub timestamp: String,
}

/// The answer to a broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BroadcastResult {
    /// sha256 of the bytes (returned even for a rejected transaction).
    pub hash: [u8; 32],
    /// 0 when admitted (SYNC), or always 0 (ASYNC).
    pub code: u32,
    /// Codespace of a rejection.
    pub codespace: String,
    /// Reason of a rejection.
    pub log: String,
    /// Gas declared.
    pub gas_wanted: u64,
    /// Gas used by the admission checks.
    pub gas_used: u64,
}

/// Facts about the node for `status` and `node_info`.
#[derive(Debug, Clone)]
pub struct NodeStatus {
    /// Cosmos chain id (CometBFT `network`).
    pub chain_id: String,
    /// The node's moniker.
    pub moniker: String,
    /// Node id (hex of the first 20 bytes of the node key's hash).
    pub node_id: String,
    /// The RPC listen address.
    pub rpc_address: String,
    /// Latest committed height (0 before the first block).
    pub latest_height: u64,
    /// Hash of the latest block (upper hex), empty before the first block.
    pub latest_block_hash: String,
    /// App hash after the latest block (upper hex).
    pub latest_app_hash: String,
    /// Time of the latest block, RFC 3339.
    pub latest_block_time: String,
    /// Earliest height served.
    pub earliest_height: u64,
    /// Validator address (upper hex).
    pub validator_address: String,
    /// Validator public key (ed25519, base64).
    pub validator_pub_key: String,
    /// Validator voting power.
    pub voting_power: u64,
}

/// What the node publishes to subscribers.
#[derive(Debug, Clone)]
pub enum NodeEvent {
    /// A block was committed; carries the block and its FinalizeBlock events.
    NewBlock {
        /// The block.
        block: Arc<lantau_app::tendermint::Block>,
        /// Block-level events.
        events: Vec<Event>,
    },
    /// A transaction was committed.
    Tx(Arc<TxRecord>),
}

/// Why the node could not answer. The message is the whole reason, as clients read it; each
/// surface maps the variant to its own convention (REST [`crate::error::ApiError`], gRPC
/// status, CometBFT RPC and Ethereum JSON-RPC error codes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeError {
    /// A query refused for what answering it would cost (a search page over the response cap,
    /// a search past its time budget): the message says which limit and how to narrow the
    /// query. The request's fault, never an internal error: REST 400 InvalidArgument, gRPC
    /// InvalidArgument, the CometBFT RPC -32005 Limit exceeded (the Ethereum JSON-RPC, whose
    /// only search is by one hash, answers -32603).
    #[error("{0}")]
    OverBudget(String),
    /// The consensus engine the node reads from did not answer (CometBFT's RPC, for a node
    /// serving a CometBFT validator). Answered as [`NodeError::Internal`] is, on every surface.
    #[error("{0}")]
    Unavailable(String),
    /// The node failed: a store fault, a corrupt index row, an answer of the consensus engine
    /// it cannot read. REST 500 Internal, gRPC Internal, JSON-RPC -32603.
    #[error("{0}")]
    Internal(String),
}

/// One search result page.
#[derive(Debug, Clone, Default)]
pub struct SearchPage {
    /// Every match in the requested order, limited to the page.
    pub txs: Vec<TxRecord>,
    /// Total number of matches.
    pub total: u64,
}

/// A dev chain's controls of its embedded engine (Hardhat's and anvil's `evm_*` methods).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DevOp {
    /// A block now, empty or not.
    Mine,
    /// Move the clock that stamps blocks this many seconds forward.
    IncreaseTime(i64),
    /// The next block's time (unix seconds).
    SetNextBlockTimestamp(i64),
    /// A block as soon as each transaction is admitted, or at the interval.
    SetAutomine(bool),
    /// Raise an account's native balance to this many `alantau` (wei-scaled), by a transfer
    /// from the dev faucet through the bank, mined at once.
    SetBalance(lantau_primitives::Address, u128),
    /// Keep the latest state (and the clock); answers the snapshot's id.
    Snapshot,
    /// Return to a kept snapshot: state, blocks and clock; answers 1, or 0 for an unknown id.
    Revert(u64),
}

/// The refusal of a dev control on a chain that is not a dev chain.
pub const NOT_A_DEV_CHAIN: &str =
    "this method is only served by a dev chain (the embedded engine on a home made with dev accounts, as `lantaud start` and scripts/dev.sh make)";

/// The node, as the servers see it: transactions in (broadcast), committed blocks and
/// transactions out (the index, subscriptions), and the state machine through a few narrow
/// methods by purpose. Module state is read through [`NodeApi::query`], the one router gRPC,
/// `abci_query` and REST share, so every surface gives the same answer for the same request.
#[async_trait::async_trait]
pub trait NodeApi: Send + Sync + 'static {
    // === the state machine ===

    /// Answers a gRPC query method (`/cosmos.bank.v1beta1.Query/Balance`: protobuf request in,
    /// protobuf response out) on the state after block `height` (0: the latest), through the
    /// app's one query router: the app's own methods, the module list, the node's extension
    /// ([`crate::grpc::NodeQueries`]). A refusal keeps its gRPC code and text.
    async fn query(&self, height: u64, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError>;

    /// ABCI Query, as CometBFT would ask it (`abci_query`): a gRPC method path through the
    /// same router, or `/store/key` with proofs when asked; failures are in the response's
    /// code and log (the Cosmos SDK's `sdk` codes).
    async fn abci_query(&self, req: request::Query) -> response::Query;

    /// ABCI Info: the app's name and version, its last committed height and app hash; `req`
    /// names the consensus engine asking (the CometBFT version the RPC server speaks for).
    async fn abci_info(&self, req: request::Info) -> Result<response::Info, NodeError>;

    /// Runs an EVM call against the state after block `height` (the latest when `None`) as the
    /// next block would, writing nothing (`eth_call`, `eth_estimateGas`). The caller bounds it:
    /// `call.gas_limit`, and `interrupt` to stop it. A call the chain refuses (no state kept
    /// for the block, an invalid call) is a [`TxError`] with its codespace and code; a store
    /// fault is the `sdk` 1 one.
    async fn eth_call(&self, height: Option<u64>, call: &EvmCall, interrupt: &Interrupt) -> Result<Outcome, TxError>;

    /// [`NodeApi::eth_call`] with its EVM run traced into `trace` (`debug_traceCall`,
    /// `eth_createAccessList`).
    async fn trace_call(&self, _height: Option<u64>, _call: &EvmCall, _interrupt: &Interrupt, _trace: &TraceSlot) -> Result<Outcome, TxError> {
        Err(TxError::from(lantau_app::module_api::SdkError::Internal("this node does not trace".into())))
    }

    /// An audit export of the rows whose block time is in `[from, to]`, without its header
    /// ([`lantau_app::audit_export`]; the caller adds the header of block `anchor + 1`).
    async fn audit_export(
        &self,
        _from: Option<time::OffsetDateTime>,
        _to: Option<time::OffsetDateTime>,
    ) -> Result<lantau_app::audit_export::AuditExport, NodeError> {
        Err(NodeError::Internal("this node does not export the audit log".into()))
    }

    /// `eth_simulateV1`'s blocks of calls on the state after block `height` (the latest when
    /// `None`), each call named by its hash, under `interrupt`; writes nothing.
    async fn eth_simulate(
        &self,
        _height: Option<u64>,
        _blocks: &[Vec<(EvmCall, [u8; 32])>],
        _interrupt: &Interrupt,
    ) -> Result<Vec<lantau_app::query::SimulatedBlock>, TxError> {
        Err(TxError::from(lantau_app::module_api::SdkError::Internal("this node does not simulate".into())))
    }

    /// Re-executes committed block `block` on the state before it, as it was executed, with
    /// the slots of `traced` (by transaction index) in place for their transactions' EVM runs;
    /// stops after the last traced one and writes nothing. `Ok(false)` when the node no longer
    /// holds the state before the block (its pruning).
    async fn replay_block(&self, _block: &lantau_app::tendermint::Block, _traced: &std::collections::BTreeMap<usize, TraceSlot>) -> Result<bool, NodeError> {
        Err(NodeError::Internal("this node does not trace".into()))
    }

    /// The committed state after block `height` (the latest when `None`), read-only, for the
    /// Ethereum JSON-RPC's state reads (balance, nonce, code, storage); `None` when the node
    /// does not hold it (a future height, or one no longer kept).
    async fn state_at(&self, height: Option<u64>) -> Result<Option<lantau_app::history::StateView>, NodeError>;

    /// The height of the last block the app committed (0 before the first block).
    async fn last_height(&self) -> Result<u64, NodeError>;

    /// How many past heights the node keeps readable (its `[pruning]` setting).
    fn history(&self) -> lantau_app::history::Retention;

    /// The consensus parameter `block.max_gas` of the latest committed state (`None`:
    /// unlimited), which Ethereum clients read as a block's `gasLimit`.
    async fn max_block_gas(&self) -> Result<Option<u64>, NodeError>;

    /// The EVM chain id of genesis (`eth_chainId`, `net_version`).
    async fn evm_chain_id(&self) -> Result<u64, NodeError>;

    // === transactions and blocks ===

    /// Admission checks, then the mempool; returns the verdict.
    async fn broadcast_sync(&self, tx: Vec<u8>) -> BroadcastResult;

    /// Accepts the bytes for admission and returns at once with only the hash.
    async fn broadcast_async(&self, tx: Vec<u8>) -> BroadcastResult;

    /// Admits transactions another validator forwarded (an app-side mempool's peers), in
    /// order, without forwarding them again; how many were admitted. Refused by a node that
    /// keeps no mempool of its own.
    async fn admit_forwarded(&self, _txs: Vec<Vec<u8>>) -> Result<usize, NodeError> {
        Err(NodeError::Unavailable(NO_APP_MEMPOOL.into()))
    }

    /// A committed transaction by hash.
    async fn tx(&self, hash: [u8; 32]) -> Result<Option<TxRecord>, NodeError>;

    /// The committed transaction that carried the Ethereum transaction `eth_hash`, once it ran
    /// (its result holds the evm module's typed receipt).
    async fn eth_tx(&self, eth_hash: [u8; 32]) -> Result<Option<TxRecord>, NodeError>;

    /// Committed transactions matching `query`, oldest first unless `descending`; `page` is
    /// 1-based.
    async fn search_txs(&self, query: &Query, descending: bool, page: u64, per_page: u64) -> Result<SearchPage, NodeError>;

    /// A committed block (latest when `None`).
    async fn block(&self, height: Option<u64>) -> Result<Option<lantau_app::tendermint::Block>, NodeError>;

    /// The results of a committed block (latest when `None`): its height, the tx results and
    /// block events, and the app hash after it.
    async fn block_results(&self, height: Option<u64>) -> Result<Option<BlockResults>, NodeError>;

    /// Node status.
    async fn status(&self) -> Result<NodeStatus, NodeError>;

    /// Subscribes to committed blocks and transactions.
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<NodeEvent>;

    /// Number of transactions waiting in the mempool, and their total bytes.
    async fn mempool_size(&self) -> (usize, usize);

    /// A dev chain's control (the Ethereum JSON-RPC's `evm_*`); refused on any other chain.
    /// Returns the figure the method answers (the new block's height, the clock's total
    /// adjustment in seconds, or 0).
    async fn dev(&self, _op: DevOp) -> Result<i64, NodeError> {
        Err(NodeError::Unavailable(NOT_A_DEV_CHAIN.into()))
    }

    /// The bytes of up to `limit` transactions waiting in the mempool, in its order
    /// (`txpool_content`; CometBFT's `unconfirmed_txs`). None by default.
    async fn unconfirmed_txs(&self, _limit: usize) -> Vec<Vec<u8>> {
        Vec::new()
    }

    /// The height of the committed block whose header hash is `hash`.
    async fn block_height_by_hash(&self, hash: [u8; 32]) -> Result<Option<u64>, NodeError>;

    /// The sequence the account's next transaction must carry, counting the transactions this
    /// node admitted and has not yet committed (`eth_getTransactionCount` at `pending`).
    async fn pending_sequence(&self, addr: &lantau_primitives::Address) -> Result<u64, NodeError>;

    /// Whether this node serves a dev chain's controls ([`NodeApi::dev`]).
    fn is_dev_chain(&self) -> bool {
        false
    }

    /// The genesis document in CometBFT's shape (`genesis` RPC), when this node serves it
    /// (under CometBFT, CometBFT's own RPC does).
    fn genesis_doc(&self) -> Option<serde_json::Value> {
        None
    }
}

/// The refusal of [`NodeApi::admit_forwarded`] by a node whose CometBFT keeps the mempool.
pub const NO_APP_MEMPOOL: &str = "this node keeps no mempool of its own ([mempool] app_side is off): broadcast to its CometBFT";

/// A block's results.
#[derive(Debug, Clone)]
pub struct BlockResults {
    /// Height.
    pub height: u64,
    /// Per-transaction results.
    pub tx_results: Vec<ExecTxResult>,
    /// Block-level events.
    pub finalize_block_events: Vec<Event>,
    /// The app hash after this block (upper hex).
    pub app_hash: String,
}

/// The composite-key view of a committed transaction that queries match against, as CometBFT
/// builds it: `tm.event=Tx`, `tx.hash` (upper hex), `tx.height`, and `<type>.<key>` for every
/// attribute of every event of the result.
pub fn tx_event_map(rec: &TxRecord) -> std::collections::BTreeMap<String, Vec<String>> {
    let attrs = rec.result.events.iter().flat_map(|e| e.attributes.iter().filter_map(move |a| Some((e.kind.as_str(), a.key_str().ok()?, a.value_str().ok()?))));
    event_map(rec.height, &rec.hash, attrs)
}

/// The composite-key view from its parts: `tm.event=Tx`, `tx.hash`, `tx.height`, and
/// `<type>.<key>` for each (event type, attribute key, attribute value).
pub fn event_map<'a>(
    height: u64,
    hash: &[u8; 32],
    attributes: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut m: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    m.entry("tm.event".into()).or_default().push("Tx".into());
    m.entry("tx.hash".into()).or_default().push(const_hex::encode_upper(hash));
    m.entry("tx.height".into()).or_default().push(height.to_string());
    for (kind, k, v) in attributes {
        m.entry(format!("{kind}.{k}")).or_default().push(v.to_string());
    }
    m
}

/// CometBFT's block part size (`types.BlockPartSizeBytes`).
pub const BLOCK_PART_SIZE: usize = 65536;

/// The CometBFT block id of a block: the header hash and the part-set header (the protobuf
/// block cut into 64 KiB parts, and the Merkle root of the parts), computed as CometBFT does so
/// that `header.last_block_id` of a block equals the `block_id` of its parent.
pub fn block_id(b: &lantau_app::tendermint::Block) -> lantau_app::tendermint::block::Id {
    use lantau_app::tendermint::{block, crypto::default::Sha256, merkle, Hash};
    let raw: cosmos_sdk_proto::tendermint::v0_38::types::Block = b.clone().into();
    let bytes = prost::Message::encode_to_vec(&raw);
    let parts: Vec<&[u8]> = bytes.chunks(BLOCK_PART_SIZE).collect();
    let root = merkle::simple_hash_from_byte_vectors::<Sha256>(&parts);
    let total = u32::try_from(parts.len()).unwrap_or(u32::MAX);
    block::Id { hash: b.header.hash(), part_set_header: block::parts::Header::new(total, Hash::Sha256(root)).unwrap_or_default() }
}

//! The methods: one typed enum ([`Method`]) decoded from the request, one match that runs it.

use std::collections::BTreeMap;

use lantau_app::evm::exec::{EvmCall, Outcome};
use lantau_app::evm::trace::TraceSlot;
use lantau_app::evm::EthTx;
use lantau_primitives::{Address, NATIVE_DENOM};
use serde_json::{json, Value};

use super::error::{EthError, Refusal};
use super::render::{self, hex_u128, hex_u64, Receipt};
use super::EthServer;

/// The largest block range `eth_getLogs` scans.
pub const MAX_LOG_RANGE: u64 = 10_000;
/// The most logs `eth_getLogs` returns.
pub const MAX_LOGS: usize = 10_000;
/// The most topic positions in a log filter (a log has at most four topics).
pub const MAX_TOPICS: usize = 4;
/// The most alternatives in one topic position of a log filter (geth's bound).
pub const MAX_SUB_TOPICS: usize = 1_000;
/// The most contract addresses in a log filter (geth's bound).
pub const MAX_FILTER_ADDRESSES: usize = 1_000;

/// Which state a read or call is against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockTag {
    /// The latest committed block (also `safe`, `finalized`: blocks are final at commit).
    Latest,
    /// The admission state (what the next block starts from); reads only.
    Pending,
    /// Genesis.
    Earliest,
    /// A height.
    Number(u64),
}

/// A decoded request.
#[derive(Debug, Clone)]
pub enum Method {
    /// `anvil_impersonateAccount` (true), `anvil_stopImpersonatingAccount` (false), and
    /// Hardhat's names for them.
    Impersonate(Address, bool),
    /// `eth_sendTransaction`: for an impersonated account on a dev chain.
    SendTransaction(Box<EvmCall>, Option<u64>, Option<(u128, u128)>),
    /// `eth_simulateV1`: blocks of calls.
    Simulate(Vec<Vec<EvmCall>>, BlockTag),
    /// `hardhat_mine`, `anvil_mine`: `count` blocks now, `interval` seconds apart.
    MineBlocks {
        /// Blocks.
        count: u64,
        /// Seconds between them.
        interval: i64,
    },
    /// `debug_traceTransaction`: the mined transaction replayed with a tracer.
    TraceTransaction([u8; 32], TraceSlot),
    /// `debug_traceCall`.
    TraceCall(Box<EvmCall>, BlockTag, TraceSlot),
    /// `debug_traceBlockByNumber`, `debug_traceBlockByHash`.
    TraceBlock(BlockRef, TraceSlot),
    /// `eth_createAccessList`.
    CreateAccessList(Box<EvmCall>, BlockTag),
    /// `eth_chainId`.
    ChainId,
    /// `net_version`.
    NetVersion,
    /// `web3_clientVersion`.
    ClientVersion,
    /// `eth_blockNumber`.
    BlockNumber,
    /// `eth_getBalance`.
    GetBalance(Address, BlockTag),
    /// `eth_getTransactionCount`.
    GetTransactionCount(Address, BlockTag),
    /// `eth_getCode`.
    GetCode(Address, BlockTag),
    /// `eth_getStorageAt`.
    GetStorageAt(Address, [u8; 32], BlockTag),
    /// `eth_call`.
    Call(Box<EvmCall>, BlockTag),
    /// `eth_estimateGas`.
    EstimateGas(Box<EvmCall>, BlockTag),
    /// `eth_gasPrice`.
    GasPrice,
    /// `eth_maxPriorityFeePerGas`.
    MaxPriorityFeePerGas,
    /// `eth_feeHistory`.
    FeeHistory(u64, BlockTag, Vec<f64>),
    /// `eth_sendRawTransaction`.
    SendRawTransaction(Vec<u8>),
    /// `eth_getTransactionByHash`.
    GetTransactionByHash([u8; 32]),
    /// `eth_getTransactionReceipt`.
    GetTransactionReceipt([u8; 32]),
    /// `eth_getBlockByNumber`.
    GetBlockByNumber(BlockTag, bool),
    /// `eth_getBlockByHash`.
    GetBlockByHash([u8; 32], bool),
    /// `eth_getBlockTransactionCountByNumber`.
    GetBlockTransactionCountByNumber(BlockTag),
    /// `eth_getLogs`.
    GetLogs(LogFilter),
    /// `eth_syncing`.
    Syncing,
    /// `eth_accounts`.
    Accounts,
    /// `eth_newFilter`.
    NewFilter(LogFilter),
    /// `eth_newBlockFilter`.
    NewBlockFilter,
    /// `eth_newPendingTransactionFilter`.
    NewPendingTransactionFilter,
    /// `eth_getFilterChanges`.
    GetFilterChanges(String),
    /// `eth_getFilterLogs`.
    GetFilterLogs(String),
    /// `eth_uninstallFilter`.
    UninstallFilter(String),
    /// `eth_getBlockTransactionCountByHash`.
    GetBlockTransactionCountByHash([u8; 32]),
    /// `eth_getTransactionByBlockHashAndIndex` / `eth_getTransactionByBlockNumberAndIndex`.
    GetTransactionByBlockAndIndex(BlockRef, u64),
    /// `eth_getBlockReceipts`.
    GetBlockReceipts(BlockRef),
    /// `eth_getUncleCountByBlockHash` / `eth_getUncleCountByBlockNumber`: 0 for a known block.
    GetUncleCount(BlockRef),
    /// `eth_getUncleByBlockHashAndIndex` / `eth_getUncleByBlockNumberAndIndex`: none.
    GetUncle,
    /// `web3_sha3`.
    Sha3(Vec<u8>),
    /// `net_listening`.
    NetListening,
    /// `eth_mining`.
    Mining,
    /// `eth_hashrate`.
    Hashrate,
    /// `txpool_status`.
    TxpoolStatus,
    /// A dev chain's control: `evm_mine`, `hardhat_mine`, `evm_increaseTime`,
    /// `evm_setNextBlockTimestamp`, `evm_setAutomine` (`count`: blocks to mine).
    Dev(crate::api::DevOp, u64),
    /// `txpool_content` (all senders) / `txpool_contentFrom` (one): the waiting Ethereum
    /// transactions by sender and nonce; `inspect`: their one-line summaries (`txpool_inspect`).
    TxpoolContent {
        /// Only this sender.
        from: Option<Address>,
        /// Summaries rather than transaction objects.
        inspect: bool,
    },
}

/// The most blocks one `hardhat_mine` produces.
pub const MAX_DEV_MINE: u64 = 1_000;

/// Seconds as the dev methods take them: a JSON number or a hex quantity.
fn dev_secs(v: &Value) -> Result<i64, EthError> {
    let n = match v {
        Value::Number(n) => n.as_i64().ok_or_else(|| EthError::InvalidParams(format!("expected whole seconds, got {n}")))?,
        other => i64::try_from(quantity_u64(other, "seconds")?).map_err(|_| EthError::InvalidParams("seconds: out of range".into()))?,
    };
    Ok(n)
}

/// The most waiting transactions `txpool_content` lists.
pub const MAX_TXPOOL_LISTED: usize = 10_000;

/// A block named by number or tag, or by hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRef {
    /// A number or a tag.
    Tag(BlockTag),
    /// A block hash.
    Hash([u8; 32]),
}

/// State overrides (the third parameter of `eth_call` and `eth_estimateGas`) and block
/// overrides (the fourth) are refused, never ignored: an answer computed without them would be
/// an answer to another question. Empty objects are accepted.
fn no_overrides(method: &str, params: &[Value]) -> Result<(), EthError> {
    for (i, what) in [(2, "state overrides"), (3, "block overrides")] {
        match param(params, i) {
            None => {}
            Some(Value::Object(o)) if o.is_empty() => {}
            Some(_) => return Err(EthError::InvalidParams(format!("{method}: {what} (parameter {i}) are not supported by this node; call without them"))),
        }
    }
    Ok(())
}

/// A block parameter that may be a hash (EIP-1898's `{"blockHash": ...}` too).
fn block_ref(v: &Value) -> Result<BlockRef, EthError> {
    if let Some(h) = v.get("blockHash") {
        return Ok(BlockRef::Hash(hash32(h, "blockHash")?));
    }
    match v.as_str() {
        Some(s) if s.len() == 66 => Ok(BlockRef::Hash(hash32(v, "block hash")?)),
        _ => Ok(BlockRef::Tag(block_tag(Some(v))?)),
    }
}

/// A filter id parameter: a `0x` hex string.
fn filter_id(v: &Value) -> Result<String, EthError> {
    v.as_str()
        .filter(|s| s.len() > 2 && s.len() <= 66 && s.starts_with("0x") && s[2..].bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_ascii_lowercase)
        .ok_or_else(|| EthError::InvalidParams(format!("filter id: expected a 0x hex string, got {v}")))
}

/// An `eth_getLogs` filter.
#[derive(Debug, Clone, Default)]
pub struct LogFilter {
    /// First block.
    pub from: Option<BlockTag>,
    /// Last block.
    pub to: Option<BlockTag>,
    /// One block by hash (exclusive with from/to).
    pub block_hash: Option<[u8; 32]>,
    /// Emitting contracts (any of).
    pub addresses: Vec<Address>,
    /// Per position: any of these topics (empty = any).
    pub topics: Vec<Vec<[u8; 32]>>,
}

// === parameter decoding ===

fn param(params: &[Value], i: usize) -> Option<&Value> {
    params.get(i).filter(|v| !v.is_null())
}

fn req<'a>(params: &'a [Value], i: usize, what: &str) -> Result<&'a Value, EthError> {
    param(params, i).ok_or_else(|| EthError::InvalidParams(format!("missing value for required argument {i} ({what})")))
}

fn hex_bytes(v: &Value, what: &str) -> Result<Vec<u8>, EthError> {
    let s = v.as_str().ok_or_else(|| EthError::InvalidParams(format!("{what}: expected a 0x-prefixed hex string")))?;
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).ok_or_else(|| EthError::InvalidParams(format!("{what}: hex string without 0x prefix")))?;
    let padded = if h.len() % 2 == 1 { format!("0{h}") } else { h.to_string() };
    hex::decode(padded).map_err(|e| EthError::InvalidParams(format!("{what}: {e}")))
}

fn hash32(v: &Value, what: &str) -> Result<[u8; 32], EthError> {
    let b = hex_bytes(v, what)?;
    b.try_into().map_err(|_| EthError::InvalidParams(format!("{what}: expected 32 bytes")))
}

fn address(v: &Value, what: &str) -> Result<Address, EthError> {
    let s = v.as_str().ok_or_else(|| EthError::InvalidParams(format!("{what}: expected an address")))?;
    Address::parse_any(s).map_err(|e| EthError::InvalidParams(format!("{what}: {e}")))
}

fn quantity(v: &Value, what: &str) -> Result<u128, EthError> {
    let s = v.as_str().ok_or_else(|| EthError::InvalidParams(format!("{what}: expected a hex quantity")))?;
    let h = s.strip_prefix("0x").ok_or_else(|| EthError::InvalidParams(format!("{what}: hex string without 0x prefix")))?;
    if h.is_empty() || h.len() > 32 {
        return Err(EthError::InvalidParams(format!("{what}: invalid quantity {s:?}")));
    }
    u128::from_str_radix(h, 16).map_err(|e| EthError::InvalidParams(format!("{what}: {e}")))
}

fn quantity_u64(v: &Value, what: &str) -> Result<u64, EthError> {
    u64::try_from(quantity(v, what)?).map_err(|_| EthError::InvalidParams(format!("{what}: out of range")))
}

fn block_tag(v: Option<&Value>) -> Result<BlockTag, EthError> {
    let Some(v) = v else { return Ok(BlockTag::Latest) };
    if let Some(o) = v.as_object() {
        // EIP-1898: {"blockNumber": ...} (a hash form is answered by the number it names).
        if let Some(n) = o.get("blockNumber") {
            return block_tag(Some(n));
        }
        return Err(EthError::InvalidParams("block: use a number or a tag; blockHash objects are not supported".into()));
    }
    match v.as_str() {
        Some("latest" | "safe" | "finalized") => Ok(BlockTag::Latest),
        Some("pending") => Ok(BlockTag::Pending),
        Some("earliest") => Ok(BlockTag::Earliest),
        Some(_) => Ok(BlockTag::Number(quantity_u64(v, "block")?)),
        None => Err(EthError::InvalidParams("block: expected a number or a tag".into())),
    }
}

fn call_object(v: &Value) -> Result<EvmCall, EthError> {
    let o = v.as_object().ok_or_else(|| EthError::InvalidParams("call: expected a transaction object".into()))?;
    let get = |k: &str| o.get(k).filter(|v| !v.is_null());
    let input = match get("input").or_else(|| get("data")) {
        Some(d) => hex_bytes(d, "input")?,
        None => Vec::new(),
    };
    let value = match get("value") {
        Some(v) => quantity(v, "value")?,
        None => 0,
    };
    let mut value_word = [0u8; 32];
    value_word[16..].copy_from_slice(&value.to_be_bytes());
    Ok(EvmCall {
        caller: match get("from") {
            Some(f) => address(f, "from")?,
            None => Address([0; 20]),
        },
        to: get("to").map(|t| address(t, "to")).transpose()?,
        value: value_word,
        input,
        gas_limit: match get("gas") {
            Some(g) => quantity_u64(g, "gas")?,
            None => CALL_GAS_CAP,
        },
        gas_price: match get("gasPrice").or_else(|| get("maxFeePerGas")) {
            Some(p) => quantity(p, "gasPrice")?,
            None => 0,
        },
        nonce: None,
        access_list: match get("accessList") {
            Some(l) => access_list(l)?,
            None => Vec::new(),
        },
    })
}

/// An EIP-2930 access list: `[{"address": ..., "storageKeys": [...]}]`.
fn access_list(v: &Value) -> Result<lantau_app::evm::exec::AccessListItems, EthError> {
    let items = v.as_array().ok_or_else(|| EthError::InvalidParams("accessList: expected an array".into()))?;
    items
        .iter()
        .map(|i| {
            let a = address(i.get("address").ok_or_else(|| EthError::InvalidParams("accessList: an entry without address".into()))?, "accessList address")?;
            let keys = match i.get("storageKeys") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(ks)) => ks.iter().map(|k| hash32(k, "storage key")).collect::<Result<_, _>>()?,
                Some(_) => return Err(EthError::InvalidParams("accessList storageKeys: expected an array".into())),
            };
            Ok((a, keys))
        })
        .collect()
}

/// The most blocks one `eth_simulateV1` simulates (geth's bound).
pub const MAX_SIMULATED_BLOCKS: usize = 256;
/// The most calls one `eth_simulateV1` runs, over all its blocks.
pub const MAX_SIMULATED_CALLS: usize = 1_000;

/// `eth_simulateV1`'s payload: `blockStateCalls`, each a list of call objects. State and block
/// overrides, `validation` and `traceTransfers` are refused (-32602), never ignored.
fn simulate_blocks(v: &Value) -> Result<Vec<Vec<EvmCall>>, EthError> {
    let o = v.as_object().ok_or_else(|| EthError::InvalidParams("eth_simulateV1: expected a payload object".into()))?;
    for k in ["validation", "traceTransfers"] {
        if o.get(k).and_then(Value::as_bool) == Some(true) {
            return Err(EthError::InvalidParams(format!("eth_simulateV1: {k} is not supported by this node; simulate without it")));
        }
    }
    let blocks = match o.get("blockStateCalls") {
        Some(Value::Array(b)) => b,
        _ => return Err(EthError::InvalidParams("eth_simulateV1: blockStateCalls: expected an array".into())),
    };
    if blocks.len() > MAX_SIMULATED_BLOCKS {
        return Err(EthError::LimitExceeded(format!("eth_simulateV1: at most {MAX_SIMULATED_BLOCKS} blocks")));
    }
    let mut total = 0usize;
    blocks
        .iter()
        .map(|b| {
            for k in ["stateOverrides", "blockOverrides"] {
                match b.get(k) {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(x)) if x.is_empty() => {}
                    Some(_) => return Err(EthError::InvalidParams(format!("eth_simulateV1: {k} are not supported by this node; simulate without them"))),
                }
            }
            let calls = match b.get("calls") {
                None | Some(Value::Null) => return Ok(Vec::new()),
                Some(Value::Array(c)) => c,
                Some(_) => return Err(EthError::InvalidParams("eth_simulateV1: calls: expected an array".into())),
            };
            total = total.saturating_add(calls.len());
            if total > MAX_SIMULATED_CALLS {
                return Err(EthError::LimitExceeded(format!("eth_simulateV1: at most {MAX_SIMULATED_CALLS} calls")));
            }
            calls.iter().map(call_object).collect()
        })
        .collect()
}

/// The tracer options of `debug_trace*` (parameter `i`), checked now: an unknown tracer or a
/// malformed config is the request's error. `debug_traceCall`'s state and block overrides
/// are refused, as `eth_call`'s are.
fn tracer(method: &str, params: &[Value], i: usize) -> Result<TraceSlot, EthError> {
    let opts = param(params, i);
    if let Some(o) = opts.and_then(Value::as_object) {
        for k in ["stateOverrides", "blockOverrides"] {
            match o.get(k) {
                None | Some(Value::Null) => {}
                Some(Value::Object(x)) if x.is_empty() => {}
                Some(_) => return Err(EthError::InvalidParams(format!("{method}: {k} are not supported by this node; trace without them"))),
            }
        }
    }
    TraceSlot::debug(opts).map_err(EthError::InvalidParams)
}

/// The gas an `eth_call` without `gas` gets before the server's cap applies (the cap is
/// [`CallLimits::gas_cap`]).
pub const CALL_GAS_CAP: u64 = 50_000_000;

/// The bounds of every call that runs the EVM for a client (`eth_call`, `eth_estimateGas`),
/// geth's `--rpc.gascap` and `--rpc.evmtimeout` (docs/decisions.md, "Limits of EVM calls").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallLimits {
    /// The most gas one call runs with: a request asking more is capped to it, as geth does.
    pub gas_cap: u64,
    /// The wall-clock time one request's EVM runs may take (an estimate's whole search
    /// included), waiting for a slot included: past it the run is stopped and the request
    /// answers `execution aborted (timeout = …)`.
    pub timeout: std::time::Duration,
    /// Calls running at once, each on a blocking thread of its own (never on the async
    /// workers that serve the other requests and drive blocks); more wait for a slot.
    pub max_concurrent: usize,
}

impl Default for CallLimits {
    fn default() -> Self {
        Self { gas_cap: CALL_GAS_CAP, timeout: std::time::Duration::from_secs(5), max_concurrent: 4 }
    }
}

/// geth's rendering of a timeout: `5s`, `1.5s`, `200ms`.
fn duration_text(d: std::time::Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{}s", d.as_secs())
    } else if d.as_millis() >= 1000 {
        format!("{}s", d.as_secs_f64())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Stops a run when the request that started it goes away (its client closed the connection,
/// or the HTTP server's own request timeout dropped it).
struct StopOnDrop(std::sync::Arc<lantau_app::evm::exec::Interrupt>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

fn log_filter(v: &Value) -> Result<LogFilter, EthError> {
    let o = v.as_object().ok_or_else(|| EthError::InvalidParams("filter: expected an object".into()))?;
    let get = |k: &str| o.get(k).filter(|v| !v.is_null());
    let mut f = LogFilter {
        from: get("fromBlock").map(|b| block_tag(Some(b))).transpose()?,
        to: get("toBlock").map(|b| block_tag(Some(b))).transpose()?,
        block_hash: get("blockHash").map(|h| hash32(h, "blockHash")).transpose()?,
        ..Default::default()
    };
    match get("address") {
        Some(Value::Array(a)) => f.addresses = a.iter().map(|x| address(x, "address")).collect::<Result<_, _>>()?,
        Some(a) => f.addresses = vec![address(a, "address")?],
        None => {}
    }
    if f.addresses.len() > MAX_FILTER_ADDRESSES {
        return Err(EthError::InvalidParams(format!("exceed max addresses: {} over {MAX_FILTER_ADDRESSES}", f.addresses.len())));
    }
    if let Some(t) = get("topics") {
        let t = t.as_array().ok_or_else(|| EthError::InvalidParams("topics: expected an array".into()))?;
        if t.len() > MAX_TOPICS {
            return Err(EthError::InvalidParams(format!("exceed max topics: {} positions over {MAX_TOPICS}", t.len())));
        }
        if let Some(n) = t.iter().filter_map(Value::as_array).map(Vec::len).find(|n| *n > MAX_SUB_TOPICS) {
            return Err(EthError::InvalidParams(format!("exceed max sub topics: {n} alternatives over {MAX_SUB_TOPICS}")));
        }
        for pos in t {
            f.topics.push(match pos {
                Value::Null => Vec::new(),
                Value::Array(any) => any.iter().map(|x| hash32(x, "topic")).collect::<Result<_, _>>()?,
                one => vec![hash32(one, "topic")?],
            });
        }
    }
    if f.block_hash.is_some() && (f.from.is_some() || f.to.is_some()) {
        return Err(EthError::InvalidParams("filter: blockHash excludes fromBlock/toBlock".into()));
    }
    Ok(f)
}

impl Method {
    /// Decodes a method name and its positional parameters.
    pub fn decode(name: &str, params: &[Value]) -> Result<Self, EthError> {
        Ok(match name {
            "eth_chainId" => Method::ChainId,
            "net_version" => Method::NetVersion,
            "web3_clientVersion" => Method::ClientVersion,
            "eth_blockNumber" => Method::BlockNumber,
            "eth_getBalance" => Method::GetBalance(address(req(params, 0, "address")?, "address")?, block_tag(param(params, 1))?),
            "eth_getTransactionCount" => Method::GetTransactionCount(address(req(params, 0, "address")?, "address")?, block_tag(param(params, 1))?),
            "eth_getCode" => Method::GetCode(address(req(params, 0, "address")?, "address")?, block_tag(param(params, 1))?),
            "eth_getStorageAt" => {
                let slot = quantity_word(req(params, 1, "slot")?)?;
                Method::GetStorageAt(address(req(params, 0, "address")?, "address")?, slot, block_tag(param(params, 2))?)
            }
            "eth_call" => {
                no_overrides(name, params)?;
                Method::Call(Box::new(call_object(req(params, 0, "transaction")?)?), block_tag(param(params, 1))?)
            }
            "eth_estimateGas" => {
                no_overrides(name, params)?;
                Method::EstimateGas(Box::new(call_object(req(params, 0, "transaction")?)?), block_tag(param(params, 1))?)
            }
            "eth_gasPrice" => Method::GasPrice,
            "eth_maxPriorityFeePerGas" => Method::MaxPriorityFeePerGas,
            "eth_feeHistory" => {
                let count = match req(params, 0, "blockCount")? {
                    Value::Number(n) => n.as_u64().ok_or_else(|| EthError::InvalidParams("blockCount: expected a quantity".into()))?,
                    v => quantity_u64(v, "blockCount")?,
                };
                let pct = match param(params, 2) {
                    Some(Value::Array(a)) => {
                        a.iter().map(|x| x.as_f64().ok_or_else(|| EthError::InvalidParams("rewardPercentiles: numbers".into()))).collect::<Result<_, _>>()?
                    }
                    _ => Vec::new(),
                };
                Method::FeeHistory(count, block_tag(param(params, 1))?, pct)
            }
            "eth_sendRawTransaction" => Method::SendRawTransaction(hex_bytes(req(params, 0, "data")?, "data")?),
            "eth_getTransactionByHash" => Method::GetTransactionByHash(hash32(req(params, 0, "hash")?, "hash")?),
            "eth_getTransactionReceipt" => Method::GetTransactionReceipt(hash32(req(params, 0, "hash")?, "hash")?),
            "eth_getBlockByNumber" => {
                Method::GetBlockByNumber(block_tag(Some(req(params, 0, "block")?))?, param(params, 1).and_then(Value::as_bool).unwrap_or(false))
            }
            "eth_getBlockByHash" => {
                Method::GetBlockByHash(hash32(req(params, 0, "hash")?, "hash")?, param(params, 1).and_then(Value::as_bool).unwrap_or(false))
            }
            "eth_getBlockTransactionCountByNumber" => Method::GetBlockTransactionCountByNumber(block_tag(Some(req(params, 0, "block")?))?),
            "eth_getLogs" => Method::GetLogs(log_filter(req(params, 0, "filter")?)?),
            "eth_syncing" => Method::Syncing,
            "eth_accounts" => Method::Accounts,
            "eth_newFilter" => {
                let f = log_filter(req(params, 0, "filter")?)?;
                if f.block_hash.is_some() {
                    return Err(EthError::InvalidParams("eth_newFilter follows blocks by number: use fromBlock/toBlock, not blockHash".into()));
                }
                Method::NewFilter(f)
            }
            "eth_newBlockFilter" => Method::NewBlockFilter,
            "eth_getBlockTransactionCountByHash" => Method::GetBlockTransactionCountByHash(hash32(req(params, 0, "block hash")?, "block hash")?),
            "eth_getTransactionByBlockHashAndIndex" => Method::GetTransactionByBlockAndIndex(
                BlockRef::Hash(hash32(req(params, 0, "block hash")?, "block hash")?),
                quantity_u64(req(params, 1, "index")?, "index")?,
            ),
            "eth_getTransactionByBlockNumberAndIndex" => Method::GetTransactionByBlockAndIndex(
                BlockRef::Tag(block_tag(Some(req(params, 0, "block")?))?),
                quantity_u64(req(params, 1, "index")?, "index")?,
            ),
            "eth_getBlockReceipts" => Method::GetBlockReceipts(block_ref(req(params, 0, "block")?)?),
            "eth_getUncleCountByBlockHash" => Method::GetUncleCount(BlockRef::Hash(hash32(req(params, 0, "block hash")?, "block hash")?)),
            "eth_getUncleCountByBlockNumber" => Method::GetUncleCount(BlockRef::Tag(block_tag(Some(req(params, 0, "block")?))?)),
            "eth_getUncleByBlockHashAndIndex" | "eth_getUncleByBlockNumberAndIndex" => {
                req(params, 0, "block")?;
                req(params, 1, "index")?;
                Method::GetUncle
            }
            "debug_traceTransaction" => Method::TraceTransaction(hash32(req(params, 0, "hash")?, "hash")?, tracer(name, params, 1)?),
            "debug_traceCall" => {
                let slot = tracer(name, params, 2)?;
                Method::TraceCall(Box::new(call_object(req(params, 0, "transaction")?)?), block_tag(param(params, 1))?, slot)
            }
            "debug_traceBlockByNumber" => Method::TraceBlock(BlockRef::Tag(block_tag(Some(req(params, 0, "block")?))?), tracer(name, params, 1)?),
            "debug_traceBlockByHash" => Method::TraceBlock(BlockRef::Hash(hash32(req(params, 0, "block hash")?, "block hash")?), tracer(name, params, 1)?),
            "anvil_impersonateAccount" | "hardhat_impersonateAccount" => Method::Impersonate(address(req(params, 0, "address")?, "address")?, true),
            "anvil_stopImpersonatingAccount" | "hardhat_stopImpersonatingAccount" => {
                Method::Impersonate(address(req(params, 0, "address")?, "address")?, false)
            }
            "eth_sendTransaction" => {
                let o = req(params, 0, "transaction")?;
                let call = call_object(o)?;
                if o.get("from").is_none_or(Value::is_null) {
                    return Err(EthError::InvalidParams("transaction: from is required".into()));
                }
                let nonce = o.get("nonce").filter(|v| !v.is_null()).map(|v| quantity_u64(v, "nonce")).transpose()?;
                // Fees: maxFeePerGas (or gasPrice) and the tip, when given.
                let fee = match (
                    o.get("maxFeePerGas").or_else(|| o.get("gasPrice")).filter(|v| !v.is_null()),
                    o.get("maxPriorityFeePerGas").filter(|v| !v.is_null()),
                ) {
                    (None, None) => None,
                    (cap, tip) => {
                        let tip = tip.map(|t| quantity(t, "maxPriorityFeePerGas")).transpose()?.unwrap_or(0);
                        let cap = cap.map(|c| quantity(c, "maxFeePerGas")).transpose()?.unwrap_or_else(|| lantau_app::evm::tx::BASE_FEE.saturating_add(tip));
                        Some((cap, tip))
                    }
                };
                let gas_given = o.get("gas").is_some_and(|g| !g.is_null());
                Method::SendTransaction(Box::new(EvmCall { gas_limit: if gas_given { call.gas_limit } else { 0 }, ..call }), nonce, fee)
            }
            "eth_simulateV1" => Method::Simulate(simulate_blocks(req(params, 0, "payload")?)?, block_tag(param(params, 1))?),
            "eth_createAccessList" => {
                no_overrides(name, params)?;
                Method::CreateAccessList(Box::new(call_object(req(params, 0, "transaction")?)?), block_tag(param(params, 1))?)
            }
            "web3_sha3" => Method::Sha3(hex_bytes(req(params, 0, "data")?, "data")?),
            "net_listening" => Method::NetListening,
            "eth_mining" => Method::Mining,
            "eth_hashrate" => Method::Hashrate,
            "txpool_status" => Method::TxpoolStatus,
            // The state is a Jellyfish Merkle tree (cnidarium), not Ethereum's Patricia trie: no
            // account or storage proof of Ethereum's shape exists to give.
            "eth_getProof" => {
                return Err(EthError::Server(
                    "eth_getProof is not available: this chain's state is a Jellyfish Merkle tree, not Ethereum's Merkle-Patricia trie; \
                     prove a key with CometBFT's abci_query (prove=true: ICS-23 proofs against the app hash)"
                        .into(),
                ))
            }
            "evm_mine" => {
                // An optional timestamp for the block (Hardhat's and ganache's form).
                match param(params, 0) {
                    Some(t) => Method::Dev(crate::api::DevOp::SetNextBlockTimestamp(dev_secs(t)?), 1),
                    None => Method::Dev(crate::api::DevOp::Mine, 1),
                }
            }
            "hardhat_mine" | "anvil_mine" => {
                let count = param(params, 0).map(|c| quantity_u64(c, "blocks")).transpose()?.unwrap_or(1);
                if count == 0 || count > MAX_DEV_MINE {
                    return Err(EthError::InvalidParams(format!("blocks: 1 to {MAX_DEV_MINE}")));
                }
                // The seconds between the blocks (Hardhat's second parameter; 1 when absent).
                let interval = param(params, 1).map(|i| quantity_u64(i, "interval")).transpose()?.unwrap_or(1);
                let interval = i64::try_from(interval).map_err(|_| EthError::InvalidParams("interval: out of range".into()))?;
                Method::MineBlocks { count, interval }
            }
            "evm_increaseTime" => Method::Dev(crate::api::DevOp::IncreaseTime(dev_secs(req(params, 0, "seconds")?)?), 0),
            "evm_setNextBlockTimestamp" => Method::Dev(crate::api::DevOp::SetNextBlockTimestamp(dev_secs(req(params, 0, "timestamp")?)?), 0),
            "anvil_setBalance" | "hardhat_setBalance" => {
                let who = address(req(params, 0, "address")?, "address")?;
                Method::Dev(crate::api::DevOp::SetBalance(who, quantity(req(params, 1, "balance")?, "balance")?), 0)
            }
            "evm_snapshot" => Method::Dev(crate::api::DevOp::Snapshot, 0),
            "evm_revert" => Method::Dev(crate::api::DevOp::Revert(quantity_u64(req(params, 0, "snapshot id")?, "snapshot id")?), 0),
            "evm_setAutomine" => {
                let on = req(params, 0, "enabled")?.as_bool().ok_or_else(|| EthError::InvalidParams("enabled: expected true or false".into()))?;
                Method::Dev(crate::api::DevOp::SetAutomine(on), 0)
            }
            "txpool_content" => Method::TxpoolContent { from: None, inspect: false },
            "txpool_inspect" => Method::TxpoolContent { from: None, inspect: true },
            "txpool_contentFrom" => Method::TxpoolContent { from: Some(address(req(params, 0, "address")?, "address")?), inspect: false },
            "eth_newPendingTransactionFilter" => Method::NewPendingTransactionFilter,
            "eth_getFilterChanges" => Method::GetFilterChanges(filter_id(req(params, 0, "id")?)?),
            "eth_getFilterLogs" => Method::GetFilterLogs(filter_id(req(params, 0, "id")?)?),
            "eth_uninstallFilter" => Method::UninstallFilter(filter_id(req(params, 0, "id")?)?),
            other => return Err(EthError::MethodNotFound(other.to_string())),
        })
    }
}

/// The least gas limit under which `call` succeeds, searched up to the gas cap; every run
/// under `stop`.
async fn estimate_gas(
    node: std::sync::Arc<dyn crate::api::NodeApi>,
    h: Option<u64>,
    call: EvmCall,
    gas_cap: u64,
    stop: &lantau_app::evm::exec::Interrupt,
) -> Result<Value, EthError> {
    let cap = call.gas_limit.min(gas_cap);
    let first = EthServer::call_result(node.eth_call(h, &EvmCall { gas_limit: cap, ..call.clone() }, stop).await?)?;
    // The gas used is a lower bound (a frame may need its 64th held back): search up to
    // the cap for the least limit that succeeds.
    let (mut lo, mut hi) = (first.gas_used, cap);
    if node.eth_call(h, &EvmCall { gas_limit: lo, ..call.clone() }, stop).await?.success {
        return Ok(json!(hex_u64(lo)));
    }
    while hi.saturating_sub(lo) > lo / 64 + 1 {
        let mid = lo + (hi - lo) / 2;
        if node.eth_call(h, &EvmCall { gas_limit: mid, ..call.clone() }, stop).await?.success {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(json!(hex_u64(hi)))
}

/// geth's `eth_createAccessList`: run with the list so far until the list the run touches is
/// the list it ran with (a list changes the gas, and so what runs); at most
/// [`ACCESS_LIST_ROUNDS`] runs.
async fn create_access_list(
    node: std::sync::Arc<dyn crate::api::NodeApi>,
    h: Option<u64>,
    call: EvmCall,
    stop: &lantau_app::evm::exec::Interrupt,
) -> Result<Value, EthError> {
    let mut list = call.access_list.clone();
    let mut last = None;
    for _ in 0..ACCESS_LIST_ROUNDS {
        let slot = TraceSlot::access_list(&list);
        let out = node.trace_call(h, &EvmCall { access_list: list.clone(), ..call.clone() }, stop, &slot).await?;
        let got = match slot.take() {
            Some(Ok(v)) => v,
            Some(Err(e)) => return Err(EthError::Server(e)),
            None => return Err(internal("the call ran no EVM code")),
        };
        let touched = lantau_app::evm::trace::access_list_from_json(&got);
        let mut answer = json!({"accessList": got, "gasUsed": hex_u64(out.gas_used)});
        if !out.success {
            answer["error"] = json!(if out.vm_error.is_empty() { "execution reverted".to_string() } else { out.vm_error.clone() });
        }
        if touched == list {
            return Ok(answer);
        }
        last = Some(answer);
        list = touched;
    }
    last.ok_or_else(|| internal("no access-list round ran"))
}

/// The most runs `eth_createAccessList` makes before answering the last list.
pub const ACCESS_LIST_ROUNDS: usize = 8;

fn quantity_word(v: &Value) -> Result<[u8; 32], EthError> {
    let b = hex_bytes(v, "slot")?;
    if b.len() > 32 {
        return Err(EthError::InvalidParams("slot: more than 32 bytes".into()));
    }
    let mut w = [0u8; 32];
    w[32 - b.len()..].copy_from_slice(&b);
    Ok(w)
}

// === running ===

fn internal(e: impl std::fmt::Display) -> EthError {
    EthError::Internal(e.to_string())
}

/// How many blocks' receipt sums [`EthServer::before_in_block`] keeps.
const BLOCK_SUMS_KEPT: usize = 16;

impl EthServer {
    async fn height_of(&self, tag: BlockTag) -> Result<Option<u64>, EthError> {
        Ok(match tag {
            BlockTag::Latest | BlockTag::Pending => None,
            BlockTag::Earliest => Some(0),
            BlockTag::Number(n) => Some(n),
        })
    }

    async fn snapshot(&self, tag: BlockTag) -> Result<lantau_app::history::StateView, EthError> {
        let h = self.height_of(tag).await?;
        self.node.state_at(h).await?.ok_or_else(|| EthError::Server(format!("header not found: no state for block {}", h.unwrap_or(0))))
    }

    async fn latest_height(&self) -> Result<u64, EthError> {
        Ok(self.node.last_height().await?)
    }

    /// How many Ethereum transactions block `h` lists (null for a block not held).
    async fn eth_tx_count(&self, h: u64) -> Result<Value, EthError> {
        match self.node.block(Some(h)).await? {
            Some(b) => Ok(json!(hex_u64(b.data.iter().filter(|t| lantau_app::evm::msg::eth_tx_of(t).is_some()).count() as u64))),
            None => Ok(Value::Null),
        }
    }

    /// The height a block reference names (`None`: an unknown hash, or a number past the
    /// latest block).
    async fn ref_height(&self, r: BlockRef) -> Result<Option<u64>, EthError> {
        match r {
            BlockRef::Hash(h) => Ok(self.node.block_height_by_hash(h).await?),
            BlockRef::Tag(t) => {
                let h = self.resolve_height(t).await?;
                Ok((h <= self.latest_height().await?).then_some(h))
            }
        }
    }

    async fn resolve_height(&self, tag: BlockTag) -> Result<u64, EthError> {
        Ok(match tag {
            BlockTag::Latest | BlockTag::Pending => self.latest_height().await?,
            BlockTag::Earliest => 0,
            BlockTag::Number(n) => n,
        })
    }

    fn call_result(out: Outcome) -> Result<Outcome, EthError> {
        if out.success {
            return Ok(out);
        }
        if out.vm_error == "execution reverted" {
            return Err(EthError::Reverted { reason: lantau_app::evm::precompile::revert_reason(&out.output), data: out.output });
        }
        Err(EthError::Server(out.vm_error))
    }

    /// Runs one decoded method for `client` (the peer's address: filters are bounded per
    /// client).
    pub async fn run(&self, m: Method, client: std::net::IpAddr) -> Result<Value, EthError> {
        use super::filters::Kind;
        let now = std::time::Instant::now();
        match m {
            Method::NewFilter(f) => {
                let latest = self.latest_height().await?;
                let from = match f.from {
                    Some(t) => self.resolve_height(t).await?,
                    None => latest,
                };
                // Changes start with the blocks after the later of now and fromBlock.
                let cursor = latest.max(from.saturating_sub(1));
                let until = match f.to {
                    Some(BlockTag::Number(n)) => Some(n),
                    Some(BlockTag::Earliest) => Some(0),
                    _ => None,
                };
                Ok(json!(self.filters.install(client, Kind::Logs { filter: f, until }, cursor, now)?))
            }
            Method::NewBlockFilter => Ok(json!(self.filters.install(client, Kind::Blocks, self.latest_height().await?, now)?)),
            Method::NewPendingTransactionFilter => Ok(json!(self.filters.install(client, Kind::Pending(Default::default()), 0, now)?)),
            Method::GetFilterChanges(id) => {
                let latest = self.latest_height().await?;
                match self.filters.poll(&id, latest, now)? {
                    super::filters::Due::Pending(hashes) => Ok(json!(hashes.iter().map(|h| format!("0x{}", const_hex::encode(h))).collect::<Vec<_>>())),
                    super::filters::Due::Blocks { from, to } => {
                        let mut out = Vec::new();
                        for h in from..=to {
                            out.push(json!(format!("0x{}", const_hex::encode(self.block_hash(h).await?))));
                        }
                        Ok(Value::Array(out))
                    }
                    super::filters::Due::Logs { filter, from, to } => self.logs_in(&filter, from, to).await,
                }
            }
            Method::GetFilterLogs(id) => self.logs(self.filters.log_filter(&id, now)?).await,
            Method::UninstallFilter(id) => Ok(json!(self.filters.uninstall(&id))),
            Method::GetBlockTransactionCountByHash(hash) => match self.node.block_height_by_hash(hash).await? {
                Some(h) => self.eth_tx_count(h).await,
                None => Ok(Value::Null),
            },
            Method::GetTransactionByBlockAndIndex(r, i) => {
                let Some(h) = self.ref_height(r).await? else { return Ok(Value::Null) };
                let Some(b) = self.node.block(Some(h)).await? else { return Ok(Value::Null) };
                let hash = render::block_hash(&b);
                // The index counts the transactions the block object lists (its Ethereum ones).
                let found = b
                    .data
                    .iter()
                    .enumerate()
                    .filter_map(|(pos, raw)| lantau_app::evm::msg::eth_tx_of(raw).map(|t| (pos, t)))
                    .nth(usize::try_from(i).unwrap_or(usize::MAX));
                Ok(found.map(|(pos, tx)| render::transaction(&tx, Some((hash, h, u32::try_from(pos).unwrap_or(u32::MAX))))).unwrap_or(Value::Null))
            }
            Method::TraceTransaction(h, slot) => self.trace_transaction(h, slot).await,
            Method::TraceBlock(r, slot) => self.trace_block(r, slot).await,
            Method::TraceCall(call, tag, slot) => {
                let h = self.height_of(tag).await?;
                let call = EvmCall { gas_limit: call.gas_limit.min(self.calls.gas_cap), ..*call };
                self.bounded(move |node, stop| async move {
                    let slot = slot.stopped_by(stop.clone());
                    node.trace_call(h, &call, &stop, &slot).await?;
                    Self::trace_result(&slot, &stop)
                })
                .await
            }
            Method::Simulate(blocks, tag) => self.simulate(blocks, tag).await,
            Method::Impersonate(who, on) => {
                if !self.node.is_dev_chain() {
                    return Err(EthError::Server(crate::api::NOT_A_DEV_CHAIN.into()));
                }
                let mut set = self.impersonated.lock();
                if on {
                    set.insert(who);
                } else {
                    set.remove(&who);
                }
                Ok(json!(true))
            }
            Method::SendTransaction(call, nonce, fee) => self.send_impersonated(*call, nonce, fee).await,
            Method::CreateAccessList(call, tag) => {
                let h = self.height_of(tag).await?;
                let call = EvmCall { gas_limit: call.gas_limit.min(self.calls.gas_cap), ..*call };
                self.bounded(move |node, stop| async move { create_access_list(node, h, call, &stop).await }).await
            }
            Method::GetBlockReceipts(r) => {
                let Some(h) = self.ref_height(r).await? else { return Ok(Value::Null) };
                let Some(b) = self.node.block(Some(h)).await? else { return Ok(Value::Null) };
                let mut out = Vec::new();
                for raw in &b.data {
                    let Some(tx) = lantau_app::evm::msg::eth_tx_of(raw) else { continue };
                    if let Some(rec) = self.receipt(tx.hash).await? {
                        out.push(render::receipt(&rec));
                    }
                }
                Ok(Value::Array(out))
            }
            Method::GetUncleCount(r) => Ok(match self.ref_height(r).await? {
                Some(h) if self.node.block(Some(h)).await?.is_some() => json!("0x0"),
                _ => Value::Null,
            }),
            Method::GetUncle => Ok(Value::Null),
            Method::Sha3(data) => Ok(json!(format!("0x{}", const_hex::encode(lantau_crypto::keccak256(&data))))),
            Method::NetListening => Ok(json!(true)),
            Method::Mining => Ok(json!(false)),
            Method::Hashrate => Ok(json!("0x0")),
            Method::MineBlocks { count, interval } => {
                let dev = |e: crate::api::NodeError| EthError::Server(e.to_string());
                self.node.dev(crate::api::DevOp::Mine).await.map_err(dev)?;
                for _ in 1..count {
                    let last = self.node.block(None).await?.ok_or_else(|| internal("no block"))?;
                    let next = last.header.time.unix_timestamp().saturating_add(interval);
                    self.node.dev(crate::api::DevOp::SetNextBlockTimestamp(next)).await.map_err(dev)?;
                    self.node.dev(crate::api::DevOp::Mine).await.map_err(dev)?;
                }
                Ok(json!("0x0"))
            }
            Method::Dev(op, count) => {
                let dev = |e: crate::api::NodeError| EthError::Server(e.to_string());
                match op {
                    crate::api::DevOp::Mine => {
                        for _ in 0..count {
                            self.node.dev(op).await.map_err(dev)?;
                        }
                        Ok(json!("0x0"))
                    }
                    crate::api::DevOp::SetNextBlockTimestamp(_) if count == 1 => {
                        // evm_mine with a timestamp: that block's time, then the block.
                        self.node.dev(op).await.map_err(dev)?;
                        self.node.dev(crate::api::DevOp::Mine).await.map_err(dev)?;
                        Ok(json!("0x0"))
                    }
                    crate::api::DevOp::IncreaseTime(_) => Ok(json!(self.node.dev(op).await.map_err(dev)?)),
                    crate::api::DevOp::Snapshot => Ok(json!(hex_u64(u64::try_from(self.node.dev(op).await.map_err(dev)?).unwrap_or(0)))),
                    crate::api::DevOp::Revert(_) => Ok(json!(self.node.dev(op).await.map_err(dev)? == 1)),
                    _ => {
                        self.node.dev(op).await.map_err(dev)?;
                        Ok(Value::Null)
                    }
                }
            }
            Method::TxpoolContent { from, inspect } => {
                let mut pending: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
                for raw in self.node.unconfirmed_txs(MAX_TXPOOL_LISTED).await {
                    let Some(tx) = lantau_app::evm::msg::eth_tx_of(&raw) else { continue };
                    if from.is_some_and(|f| f != tx.from) {
                        continue;
                    }
                    let entry = if inspect {
                        let to = tx.to.map_or_else(|| "contract creation".to_string(), |t| t.to_hex());
                        json!(format!("{to}: {} wei + {} gas × {} wei", tx.value_u128().unwrap_or(0), tx.gas_limit, tx.effective_gas_price()))
                    } else {
                        render::transaction(&tx, None)
                    };
                    pending.entry(tx.from.to_hex()).or_default().insert(tx.nonce.to_string(), entry);
                }
                Ok(match from {
                    Some(f) => json!({"pending": pending.remove(&f.to_hex()).unwrap_or_default(), "queued": {}}),
                    None => json!({"pending": pending, "queued": {}}),
                })
            }
            Method::TxpoolStatus => {
                let (txs, _) = self.node.mempool_size().await;
                Ok(json!({"pending": hex_u64(txs as u64), "queued": "0x0"}))
            }
            Method::ChainId => Ok(json!(hex_u64(self.node.evm_chain_id().await?))),
            Method::NetVersion => Ok(json!(self.node.evm_chain_id().await?.to_string())),
            // A dev chain names itself anvil-compatible first: Hardhat's network helpers
            // (loadFixture, time) serve only nodes whose version starts "anvil" or
            // "HardhatNetwork", and this one answers their methods.
            Method::ClientVersion if self.node.is_dev_chain() => Ok(json!(format!("anvil-compatible lantau/v{}/rust (dev chain)", env!("CARGO_PKG_VERSION")))),
            Method::ClientVersion => Ok(json!(format!("lantau/v{}/rust", env!("CARGO_PKG_VERSION")))),
            Method::BlockNumber => Ok(json!(hex_u64(self.latest_height().await?))),
            Method::GetBalance(a, tag) => {
                let snap = self.snapshot(tag).await?;
                let b = lantau_app::bank::query::balance(&snap, &a, NATIVE_DENOM).await.map_err(internal)?;
                Ok(json!(hex_u128(b.0)))
            }
            Method::GetTransactionCount(a, tag) => {
                let n = if tag == BlockTag::Pending {
                    self.node.pending_sequence(&a).await?
                } else {
                    use lantau_app::auth::AuthRead as _;
                    let snap = self.snapshot(tag).await?;
                    snap.account(&lantau_app::module_api::GasMeter::infinite(), &a).await.map_err(internal)?.map_or(0, |x| x.sequence)
                };
                Ok(json!(hex_u64(n)))
            }
            Method::GetCode(a, tag) => {
                use lantau_app::evm::EvmRead as _;
                let snap = self.snapshot(tag).await?;
                let g = lantau_app::module_api::GasMeter::infinite();
                let code = match snap.code_hash(&g, &a).await.map_err(internal)? {
                    Some(h) => snap.code(&g, &h).await.map_err(internal)?.unwrap_or_default(),
                    None => Vec::new(),
                };
                Ok(json!(format!("0x{}", const_hex::encode(code))))
            }
            Method::GetStorageAt(a, slot, tag) => {
                use lantau_app::evm::EvmRead as _;
                let snap = self.snapshot(tag).await?;
                let v = snap.storage(&lantau_app::module_api::GasMeter::infinite(), &a, &slot).await.map_err(internal)?;
                Ok(json!(format!("0x{}", const_hex::encode(v))))
            }
            Method::Call(call, tag) => {
                let h = self.height_of(tag).await?;
                let call = EvmCall { gas_limit: call.gas_limit.min(self.calls.gas_cap), ..*call };
                let out = self.bounded(move |node, stop| async move { Self::call_result(node.eth_call(h, &call, &stop).await?) }).await?;
                Ok(json!(format!("0x{}", const_hex::encode(out.output))))
            }
            Method::EstimateGas(call, tag) => {
                let h = self.height_of(tag).await?;
                let cap = self.calls.gas_cap;
                self.bounded(move |node, stop| async move { estimate_gas(node, h, *call, cap, &stop).await }).await
            }
            Method::GasPrice => Ok(json!(hex_u128(lantau_app::evm::tx::BASE_FEE))),
            Method::MaxPriorityFeePerGas => Ok(json!("0x0")),
            Method::FeeHistory(count, newest, pct) => {
                let newest = self.resolve_height(newest).await?;
                let count = count.clamp(1, 1024).min(newest.saturating_add(1));
                let oldest = newest.saturating_add(1).saturating_sub(count);
                let n = usize::try_from(count).unwrap_or(1024);
                let base = hex_u128(lantau_app::evm::tx::BASE_FEE);
                let mut out = json!({
                    "oldestBlock": hex_u64(oldest),
                    "baseFeePerGas": vec![base; n.saturating_add(1)],
                    "gasUsedRatio": vec![0.0; n],
                });
                if !pct.is_empty() {
                    out["reward"] = json!(vec![vec!["0x0"; pct.len()]; n]);
                }
                Ok(out)
            }
            Method::SendRawTransaction(raw) => self.send_raw(raw).await,
            Method::GetTransactionByHash(h) => self.transaction_by_hash(h).await,
            Method::GetTransactionReceipt(h) => match self.receipt(h).await? {
                Some(r) => Ok(render::receipt(&r)),
                None => self.cosmos_receipt(h).await,
            },
            Method::GetBlockByNumber(tag, full) => {
                let h = self.resolve_height(tag).await?;
                self.block_json(h, full).await
            }
            Method::GetBlockByHash(hash, full) => match self.node.block_height_by_hash(hash).await? {
                Some(h) => self.block_json(h, full).await,
                None => Ok(Value::Null),
            },
            Method::GetBlockTransactionCountByNumber(tag) => {
                let h = self.resolve_height(tag).await?;
                self.eth_tx_count(h).await
            }
            Method::GetLogs(f) => self.logs(f).await,
            Method::Syncing => Ok(json!(false)),
            Method::Accounts => Ok(json!([])),
        }
    }

    /// Runs `f` (one request's EVM runs) within the call limits: a slot among
    /// `max_concurrent`, a blocking thread of its own, the timeout, and a stop when this
    /// request goes away. The slot is held until the run has really ended.
    async fn bounded<T, F, Fut>(&self, f: F) -> Result<T, EthError>
    where
        T: Send + 'static,
        F: FnOnce(std::sync::Arc<dyn crate::api::NodeApi>, std::sync::Arc<lantau_app::evm::exec::Interrupt>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<T, EthError>> + Send,
    {
        let stop = std::sync::Arc::new(lantau_app::evm::exec::Interrupt::new());
        let _on_drop = StopOnDrop(stop.clone());
        let timeout = self.calls.timeout;
        let aborted = || EthError::Server(format!("execution aborted (timeout = {})", duration_text(timeout)));
        let deadline = tokio::time::Instant::now() + timeout;
        let permit = match tokio::time::timeout_at(deadline, self.call_slots.clone().acquire_owned()).await {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => return Err(internal(e)),
            Err(_) => return Err(aborted()),
        };
        let (node, runtime, run_stop) = (self.node.clone(), tokio::runtime::Handle::current(), stop.clone());
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            runtime.block_on(f(node, run_stop))
        });
        let timer = {
            let stop = stop.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until(deadline).await;
                stop.stop();
            })
        };
        let out = task.await;
        timer.abort();
        match out {
            Err(e) => Err(internal(e)),
            Ok(Err(_)) if stop.is_stopped() => Err(aborted()),
            Ok(r) => r,
        }
    }

    async fn send_raw(&self, raw: Vec<u8>) -> Result<Value, EthError> {
        let tx = lantau_app::evm::tx::decode(&raw).map_err(|e| EthError::Server(e.to_string()))?;
        let envelope = lantau_app::evm::msg::envelope(&tx);
        let r = self.node.broadcast_sync(envelope).await;
        if r.code != 0 {
            return Err(self.refusal(&tx, &r.codespace, r.code, &r.log).await);
        }
        self.remember_pending(&tx);
        self.filters.admitted(tx.hash);
        Ok(json!(tx.hash_hex()))
    }

    /// A refused transaction in geth's words, with the state figures its text carries
    /// ([`Refusal`]): read only for the kinds that need them, on the latest state.
    async fn refusal(&self, tx: &EthTx, codespace: &str, code: u32, log: &str) -> EthError {
        let state_nonce = if Refusal::wants_nonce(codespace, code) { self.node.pending_sequence(&tx.from).await.ok() } else { None };
        let balance = if Refusal::wants_balance(codespace, code) {
            match self.snapshot(BlockTag::Latest).await {
                Ok(snap) => lantau_app::bank::query::balance(&snap, &tx.from, NATIVE_DENOM).await.ok().map(|b| b.0),
                Err(_) => None,
            }
        } else {
            None
        };
        let value = tx.value_u128().unwrap_or(u128::MAX);
        let cost = u128::from(tx.gas_limit).saturating_mul(tx.max_fee_per_gas).saturating_add(value);
        Refusal { codespace, code, log, from: tx.from, nonce: tx.nonce, cost, state_nonce, balance }.to_geth()
    }

    /// The committed Cosmos record of an Ethereum hash.
    async fn mined(&self, eth_hash: [u8; 32]) -> Result<Option<crate::TxRecord>, EthError> {
        Ok(self.node.eth_tx(eth_hash).await?)
    }

    async fn transaction_by_hash(&self, h: [u8; 32]) -> Result<Value, EthError> {
        if let Some(rec) = self.mined(h).await? {
            let Some(tx) = lantau_app::evm::msg::eth_tx_of(&rec.tx) else { return Ok(Value::Null) };
            let block_hash = self.block_hash(rec.height).await?;
            return Ok(render::transaction(&tx, Some((block_hash, rec.height, rec.index))));
        }
        Ok(self.pending(&h).map(|tx| render::transaction(&tx, None)).unwrap_or(Value::Null))
    }

    /// `eth_sendTransaction` for an impersonated account of a dev chain: the node fills the
    /// nonce (the pending one), the gas (estimated) and the fees (the floor, no tip) the
    /// request leaves out, and sends the transaction in the impersonated form (no signature;
    /// the sender named), which only a dev chain's state machine runs. Its gates run as for
    /// any transaction of that sender.
    async fn send_impersonated(&self, call: EvmCall, nonce: Option<u64>, fee: Option<(u128, u128)>) -> Result<Value, EthError> {
        let from = call.caller;
        if !self.node.is_dev_chain() || !self.impersonated.lock().contains(&from) {
            return Err(EthError::Server(format!(
                "unknown account {}: this node holds no keys; sign in the wallet and send with eth_sendRawTransaction (a dev chain sends for an account after anvil_impersonateAccount)",
                from.to_hex()
            )));
        }
        let nonce = match nonce {
            Some(n) => n,
            None => self.node.pending_sequence(&from).await?,
        };
        let gas = if call.gas_limit > 0 {
            call.gas_limit
        } else {
            let cap = self.calls.gas_cap;
            let c = EvmCall { gas_limit: cap, ..call.clone() };
            let est = self.bounded(move |node, stop| async move { estimate_gas(node, None, c, cap, &stop).await }).await?;
            u64::from_str_radix(est.as_str().unwrap_or("0x0").trim_start_matches("0x"), 16).map_err(internal)?
        };
        let (cap, tip) = fee.unwrap_or((lantau_app::evm::tx::BASE_FEE, 0));
        let chain = self.node.evm_chain_id().await?;
        let raw = lantau_app::evm::tx::impersonated_raw(chain, &from, nonce, gas, cap, tip, call.to.as_ref(), call.value, &call.input);
        self.send_raw(raw).await
    }

    /// `eth_simulateV1`: the blocks as geth answers them, each with its `calls` (status,
    /// returnData, gasUsed, logs, and a revert's error with its data). A call refused before
    /// running is the request's error, as in `eth_call`.
    async fn simulate(&self, blocks: Vec<Vec<EvmCall>>, tag: BlockTag) -> Result<Value, EthError> {
        let h = self.height_of(tag).await?;
        let base = match h {
            Some(h) => h,
            None => self.latest_height().await?,
        };
        let mut parent = self.block_hash(base).await?;
        let cap = self.calls.gas_cap;
        // Each call's hash: keccak of its block, position, sender and input (the audit rows a
        // simulated transfer writes cite it, as they cite a mined one's).
        let named: Vec<Vec<(EvmCall, [u8; 32])>> = blocks
            .into_iter()
            .enumerate()
            .map(|(k, calls)| {
                calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let mut pre = Vec::with_capacity(40 + c.input.len());
                        pre.extend_from_slice(b"lantau/simulate");
                        pre.extend_from_slice(&(base.saturating_add(1).saturating_add(k as u64)).to_be_bytes());
                        pre.extend_from_slice(&(i as u64).to_be_bytes());
                        pre.extend_from_slice(&c.caller.0);
                        pre.extend_from_slice(&c.input);
                        let hash = lantau_crypto::keccak256(&pre);
                        (EvmCall { gas_limit: c.gas_limit.min(cap), ..c }, hash)
                    })
                    .collect()
            })
            .collect();
        let hashes: Vec<Vec<[u8; 32]>> = named.iter().map(|b| b.iter().map(|(_, h)| *h).collect()).collect();
        let ran = self.bounded(move |node, stop| async move { Ok(node.eth_simulate(h, &named, &stop).await?) }).await?;
        let mut out = Vec::with_capacity(ran.len());
        for (b, hashes) in ran.into_iter().zip(hashes) {
            let mut pre = b"lantau/simulated-block".to_vec();
            pre.extend_from_slice(&parent);
            for t in &hashes {
                pre.extend_from_slice(t);
            }
            let hash = lantau_crypto::keccak256(&pre);
            let (mut calls, mut all_logs, mut gas_used, mut log_index) = (Vec::new(), Vec::new(), 0u64, 0u64);
            for (i, (r, tx_hash)) in b.results.into_iter().zip(&hashes).enumerate() {
                let r = r?;
                gas_used = gas_used.saturating_add(r.gas_used);
                let index = u32::try_from(i).unwrap_or(u32::MAX);
                let logs: Vec<Value> = r
                    .logs
                    .iter()
                    .map(|l| {
                        let v = render::log(l, tx_hash, b.height, index, &hash, log_index);
                        log_index = log_index.saturating_add(1);
                        v
                    })
                    .collect();
                all_logs.extend(r.logs.iter().cloned());
                let mut call = json!({
                    "status": if r.success { "0x1" } else { "0x0" },
                    "returnData": format!("0x{}", const_hex::encode(&r.output)),
                    "gasUsed": hex_u64(r.gas_used),
                    "logs": logs,
                });
                if !r.success {
                    call["error"] = match Self::call_result(r) {
                        Err(EthError::Reverted { reason, data }) => json!({
                            "code": 3,
                            "message": reason.map(|x| format!("execution reverted: {x}")).unwrap_or_else(|| "execution reverted".into()),
                            "data": format!("0x{}", const_hex::encode(data)),
                        }),
                        Err(e) => json!({"code": -32015, "message": e.to_string()}),
                        Ok(_) => Value::Null,
                    };
                }
                calls.push(call);
            }
            out.push(json!({
                "number": hex_u64(b.height),
                "hash": format!("0x{}", const_hex::encode(hash)),
                "parentHash": format!("0x{}", const_hex::encode(parent)),
                "timestamp": hex_u64(u64::try_from(b.time.unix_timestamp()).unwrap_or(0)),
                "gasLimit": hex_u64(cap),
                "gasUsed": hex_u64(gas_used),
                "baseFeePerGas": hex_u128(lantau_app::evm::tx::BASE_FEE),
                "miner": format!("0x{}", "00".repeat(20)),
                "logsBloom": format!("0x{}", const_hex::encode(render::bloom(&all_logs))),
                "transactions": hashes.iter().map(|t| format!("0x{}", const_hex::encode(t))).collect::<Vec<_>>(),
                "calls": calls,
            }));
            parent = hash;
        }
        Ok(Value::Array(out))
    }

    /// A traced run's frame; a run stopped by the time limit is an error ([`Self::bounded`]
    /// words it), and a transaction that ran no EVM code has no trace.
    fn trace_result(slot: &TraceSlot, stop: &lantau_app::evm::exec::Interrupt) -> Result<Value, EthError> {
        match slot.take() {
            _ if stop.is_stopped() => Err(EthError::Server("execution aborted".into())),
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(EthError::Server(e)),
            None => Err(EthError::Server("the transaction ran no EVM code: it was refused before execution (its receipt says why)".into())),
        }
    }

    /// `debug_traceTransaction`: its block replayed on the state before it, up to and with
    /// the transaction, traced.
    async fn trace_transaction(&self, h: [u8; 32], slot: TraceSlot) -> Result<Value, EthError> {
        let Some(rec) = self.mined(h).await? else {
            if self.node.tx(h).await?.is_some() {
                return Err(EthError::Server(
                    "this is a Cosmos transaction: it ran no EVM code (its stablecoin movements are Transfer logs in eth_getTransactionReceipt; its gates, TxTrace)".into(),
                ));
            }
            return Err(EthError::Server("transaction not found".into()));
        };
        let block = self.node.block(Some(rec.height)).await?.ok_or_else(|| internal(format!("block {} missing", rec.height)))?;
        let index = usize::try_from(rec.index).map_err(internal)?;
        let slot = slot.for_tx(h, index, render::block_hash(&block));
        self.bounded(move |node, stop| async move {
            let slot = slot.stopped_by(stop.clone());
            let traced = std::collections::BTreeMap::from([(index, slot.clone())]);
            if !node.replay_block(&block, &traced).await? {
                return Err(EthError::Server(format!(
                    "required historical state unavailable: the state before block {} is no longer kept by this node",
                    block.header.height
                )));
            }
            Self::trace_result(&slot, &stop)
        })
        .await
    }

    /// `debug_traceBlockBy*`: every Ethereum transaction of the block, traced, as geth lists
    /// them (`[{txHash, result}]`, or `{txHash, error}` for one that ran no EVM code).
    async fn trace_block(&self, r: BlockRef, slot: TraceSlot) -> Result<Value, EthError> {
        let height = match r {
            BlockRef::Tag(t) => self.resolve_height(t).await?,
            BlockRef::Hash(h) => self.node.block_height_by_hash(h).await?.ok_or_else(|| EthError::Server("block not found".into()))?,
        };
        let block = self.node.block(Some(height)).await?.ok_or_else(|| EthError::Server(format!("block #{height} not found")))?;
        let block_hash = render::block_hash(&block);
        let traced: std::collections::BTreeMap<usize, ([u8; 32], TraceSlot)> = block
            .data
            .iter()
            .enumerate()
            .filter_map(|(i, raw)| lantau_app::evm::msg::eth_tx_of(raw).map(|tx| (i, (tx.hash, slot.for_tx(tx.hash, i, block_hash)))))
            .collect();
        if traced.is_empty() {
            return Ok(json!([]));
        }
        self.bounded(move |node, stop| async move {
            let traced: std::collections::BTreeMap<usize, ([u8; 32], TraceSlot)> =
                traced.into_iter().map(|(i, (h, s))| (i, (h, s.stopped_by(stop.clone())))).collect();
            let slots = traced.iter().map(|(i, (_, s))| (*i, s.clone())).collect();
            if !node.replay_block(&block, &slots).await? {
                return Err(EthError::Server(format!(
                    "required historical state unavailable: the state before block {} is no longer kept by this node",
                    block.header.height
                )));
            }
            let mut out = Vec::with_capacity(traced.len());
            for (h, s) in traced.values() {
                let hash = format!("0x{}", const_hex::encode(h));
                out.push(match Self::trace_result(s, &stop) {
                    Ok(v) => json!({"txHash": hash, "result": v}),
                    Err(e) if stop.is_stopped() => return Err(e),
                    Err(e) => json!({"txHash": hash, "error": e.to_string()}),
                });
            }
            Ok(Value::Array(out))
        })
        .await
    }

    async fn block_hash(&self, height: u64) -> Result<[u8; 32], EthError> {
        let b = self.node.block(Some(height)).await?.ok_or_else(|| internal(format!("block {height} missing")))?;
        Ok(render::block_hash(&b))
    }

    async fn receipt(&self, h: [u8; 32]) -> Result<Option<Receipt>, EthError> {
        let Some(rec) = self.mined(h).await? else { return Ok(None) };
        let Some(tx) = lantau_app::evm::msg::eth_tx_of(&rec.tx) else { return Ok(None) };
        let block_hash = self.block_hash(rec.height).await?;
        let (first_log, cumulative) = self.before_in_block(rec.height, &block_hash, rec.index).await?;
        let ran = render::evm_receipt_of(&rec.result);
        let gas_used = render::receipt_gas(ran.as_ref(), tx.gas_limit);
        Ok(Some(Receipt { tx, height: rec.height, index: rec.index, block_hash, first_log, cumulative_gas: cumulative + gas_used, ran }))
    }

    /// The receipt of a Cosmos transaction by its (Cosmos) hash, as the logs of its stablecoin
    /// movements cite it: its Transfer logs with their block-wide indexes, status by its code,
    /// `from` its signer (`message.sender`), no `to`. Null for an unknown hash or an Ethereum
    /// transaction's envelope (its receipt is under the Ethereum hash).
    async fn cosmos_receipt(&self, h: [u8; 32]) -> Result<Value, EthError> {
        let Some(rec) = self.node.tx(h).await? else { return Ok(Value::Null) };
        if lantau_app::evm::msg::eth_tx_of(&rec.tx).is_some() {
            return Ok(Value::Null);
        }
        let block_hash = self.block_hash(rec.height).await?;
        let (first_log, cumulative) = self.before_in_block(rec.height, &block_hash, rec.index).await?;
        Ok(render::cosmos_receipt(&rec, &block_hash, first_log, cumulative))
    }

    /// What the transactions before position `index` of block `height` add up to, as a receipt
    /// counts them: their logs (the block-wide index of this one's first log) and their gas,
    /// transactions of both kinds.
    /// The sums are kept for the last [`BLOCK_SUMS_KEPT`] blocks asked about (`block_hash`
    /// tells a block from another at the same height).
    async fn before_in_block(&self, height: u64, block_hash: &[u8; 32], index: u32) -> Result<(u64, u64), EthError> {
        let at = usize::try_from(index).unwrap_or(usize::MAX);
        let kept = self.block_sums.lock().iter().find(|(h, b, _)| *h == height && b == block_hash).map(|(_, _, s)| s.clone());
        let sums = match kept {
            Some(s) => s,
            None => {
                let results = self.node.block_results(Some(height)).await?;
                let txs = results.as_ref().map(|r| r.tx_results.as_slice()).unwrap_or_default();
                let mut sums = Vec::with_capacity(txs.len().saturating_add(1));
                let (mut logs, mut gas) = (0u64, 0u64);
                sums.push((logs, gas));
                for t in txs {
                    logs = logs.saturating_add(render::tx_logs(t).len() as u64);
                    gas = gas.saturating_add(u64::try_from(t.gas_used).unwrap_or(0));
                    sums.push((logs, gas));
                }
                let sums = std::sync::Arc::new(sums);
                let mut cache = self.block_sums.lock();
                if cache.len() >= BLOCK_SUMS_KEPT {
                    cache.pop_front();
                }
                cache.push_back((height, *block_hash, sums.clone()));
                sums
            }
        };
        Ok(sums.get(at).or(sums.last()).copied().unwrap_or_default())
    }

    async fn block_json(&self, height: u64, full: bool) -> Result<Value, EthError> {
        let Some(b) = self.node.block(Some(height)).await? else { return Ok(Value::Null) };
        let results = self.node.block_results(Some(height)).await?;
        let gas_used: u64 = results.as_ref().map_or(0, |r| r.tx_results.iter().map(|t| u64::try_from(t.gas_used).unwrap_or(0)).sum());
        Ok(render::block(&b, height, gas_used, self.block_gas_limit().await, &render::block_bloom(results.as_ref()), full))
    }

    async fn logs(&self, f: LogFilter) -> Result<Value, EthError> {
        let latest = self.latest_height().await?;
        let (from, to) = match f.block_hash {
            Some(h) => match self.node.block_height_by_hash(h).await? {
                Some(n) => (n, n),
                None => return Err(EthError::Server("unknown block".into())),
            },
            None => {
                let from = match f.from {
                    Some(t) => self.resolve_height(t).await?,
                    None => latest,
                };
                let to = match f.to {
                    Some(t) => self.resolve_height(t).await?,
                    None => latest,
                };
                if from > to {
                    return Err(EthError::InvalidParams(format!("invalid block range params: fromBlock {from} is after toBlock {to}")));
                }
                (from, to.min(latest))
            }
        };
        if to >= from && to - from >= MAX_LOG_RANGE {
            return Err(EthError::LimitExceeded(format!("block range {from}..={to} is over {MAX_LOG_RANGE} blocks: narrow fromBlock/toBlock")));
        }
        self.logs_in(&f, from, to).await
    }

    /// The logs of blocks `from..=to` (none when `from > to`: a range that starts after the
    /// latest block has no logs yet) matching `f`'s addresses and topics, at most [`MAX_LOGS`].
    async fn logs_in(&self, f: &LogFilter, from: u64, to: u64) -> Result<Value, EthError> {
        let mut out = Vec::new();
        for h in from..=to {
            let Some(results) = self.node.block_results(Some(h)).await? else { continue };
            let logs: Vec<Vec<_>> = results.tx_results.iter().map(render::tx_logs).collect();
            if logs.iter().all(Vec::is_empty) {
                continue;
            }
            let Some(b) = self.node.block(Some(h)).await? else { continue };
            let block_hash = render::block_hash(&b);
            let mut log_index = 0u64;
            for (i, tx_logs) in logs.into_iter().enumerate() {
                if tx_logs.is_empty() {
                    continue;
                }
                let tx_hash = render::log_tx_hash(results.tx_results.get(i), b.data.get(i).map(Vec::as_slice));
                for l in tx_logs {
                    let idx = log_index;
                    log_index += 1;
                    if !f.addresses.is_empty() && !f.addresses.contains(&l.address) {
                        continue;
                    }
                    let topics_match = f.topics.iter().enumerate().all(|(p, any)| any.is_empty() || l.topics.get(p).is_some_and(|t| any.contains(t)));
                    if !topics_match {
                        continue;
                    }
                    if out.len() >= MAX_LOGS {
                        return Err(EthError::LimitExceeded(format!("more than {MAX_LOGS} logs: narrow the block range, address or topics")));
                    }
                    out.push(render::log(&l, &tx_hash, h, u32::try_from(i).unwrap_or(u32::MAX), &block_hash, idx));
                }
            }
        }
        Ok(Value::Array(out))
    }

    fn remember_pending(&self, tx: &EthTx) {
        let mut p = self.pending.lock();
        if p.len() >= super::PENDING_MEMO {
            p.clear();
        }
        p.insert(tx.hash, tx.clone());
    }

    fn pending(&self, h: &[u8; 32]) -> Option<EthTx> {
        self.pending.lock().get(h).cloned()
    }
}

/// Unused; keeps the map type named in one place.
pub type PendingMap = BTreeMap<[u8; 32], EthTx>;

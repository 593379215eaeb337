//! The tx index and the embedded engine's block store, written in the non-verifiable store by
//! the app's block hook, inside the same atomic commit as the block's state.
//!
//! Keys (non-verifiable, binary):
//! - `b/<height u64 BE>` → the block (CometBFT protobuf `Block`), embedded engine only;
//! - `B/<header hash 32 bytes>` → height u64 BE (the Ethereum JSON-RPC's block by hash);
//! - `T/<height u64 BE>` → the block's time, RFC 3339 (under CometBFT, which keeps the blocks);
//! - `r/<height u64 BE>` → the block's results (CometBFT protobuf `ResponseFinalizeBlock`)
//!   without `tx_results`, which are read from the `t/` rows in `h/` order (stores written
//!   before kept them here too, and are still read);
//! - `t/<hash 32 bytes>` → the transaction (CometBFT protobuf `TxResult`);
//! - `X/<Ethereum hash 32 bytes>` → the hash of the Cosmos transaction that carried it, for
//!   each included Ethereum transaction (the result of one that ran holds the evm module's
//!   typed receipt);
//! - `H/<height u64 BE>` → the block's transaction hashes, 32 bytes each, in block order (one
//!   row per block);
//! - `P/<SHA-256(value)[..16]><height u64 BE>` → `(tx hash ‖ n u8 ‖ attribute id × n)*`: for
//!   each indexed event attribute value, one row per block listing the block's transactions
//!   that carry the value, in block order, each once with the attributes (`type.key`) that
//!   carried it, named by their ids, the first 4 bytes of SHA-256(`type.key`). An equality
//!   condition is answered by a prefix scan and a filter on the id; the query is then matched
//!   on the stored results, so a row only ever names candidates. One row per value rather
//!   than per attribute and value, and one hash per transaction rather than per attribute: a
//!   transfer's sender is the `message.sender`, `transfer.sender`, `coin_spent.spender` and
//!   `tx.fee_payer` of one transaction, one hash and four ids.
//!
//! Rows that stores written by earlier versions hold, and that are still searched:
//! - `V/<SHA-256(value)[..16]><height u64 BE>` → `(index u32 BE ‖ attribute id ‖ tx hash)*`:
//!   the value rows before the `P/` rows, an entry (and a hash) per transaction and attribute;
//! - `h/<height u64 BE><index u32 BE>` → tx hash: one row per transaction, in block order;
//! - `E/<type.key>\0<value>\0<height u64 BE>` → `(index u32 BE ‖ tx hash)*`: one row per
//!   attribute and value per block;
//! - `e/<type.key>\0<value>\0<height u64 BE><index u32 BE>` → tx hash: one row per attribute
//!   per transaction.
use std::sync::Arc;

use futures::StreamExt;
use lantau_app::cnidarium::StateRead;
use lantau_app::module_api::store;
use lantau_app::store::Snapshot;
use lantau_app::tendermint::abci::{request, response, types::ExecTxResult};
use lantau_app::tendermint::{Block, Time};
use lantau_app::{BlockHook, BlockRows};
use lantau_event_query::{Op, Operand, Query};
use lantau_rpc::api::{event_map, BlockResults, NodeError, SearchPage, TxRecord};
use parking_lot::Mutex;
use prost::Message;
use tendermint_proto::v0_38 as pb;
use tendermint_proto::Protobuf;

fn block_key(h: u64) -> Vec<u8> {
    [b"b/".as_slice(), &h.to_be_bytes()].concat()
}
fn block_hash_key(hash: &[u8]) -> Vec<u8> {
    [b"B/".as_slice(), hash].concat()
}
fn block_time_key(h: u64) -> Vec<u8> {
    [b"T/".as_slice(), &h.to_be_bytes()].concat()
}
fn results_key(h: u64) -> Vec<u8> {
    [b"r/".as_slice(), &h.to_be_bytes()].concat()
}
fn tx_key(hash: &[u8; 32]) -> Vec<u8> {
    [b"t/".as_slice(), hash].concat()
}
fn eth_tx_key(eth_hash: &[u8; 32]) -> Vec<u8> {
    [b"X/".as_slice(), eth_hash].concat()
}
/// A transaction's position row of earlier versions.
#[cfg(test)]
fn height_key(h: u64, i: u32) -> Vec<u8> {
    [b"h/".as_slice(), &h.to_be_bytes(), &i.to_be_bytes()].concat()
}
fn block_txs_key(h: u64) -> Vec<u8> {
    [b"H/".as_slice(), &h.to_be_bytes()].concat()
}
/// Prefix of the per-transaction event rows of earlier versions.
fn event_prefix(key: &str, value: &str) -> Vec<u8> {
    [b"e/".as_slice(), key.as_bytes(), b"\0", value.as_bytes(), b"\0"].concat()
}
/// Prefix of the per-block event rows of earlier versions.
fn event_rows_prefix(key: &str, value: &str) -> Vec<u8> {
    [b"E/".as_slice(), key.as_bytes(), b"\0", value.as_bytes(), b"\0"].concat()
}
/// One transaction in a per-block event row of earlier versions: index u32 BE, then the hash.
const ROW_ENTRY: usize = 4 + 32;
/// Prefix of the per-block value rows of `P/` (postings, written now) or `V/` (earlier).
fn value_rows_prefix(tag: &[u8; 2], value: &str) -> Vec<u8> {
    let h = lantau_crypto::sha256(value.as_bytes());
    [tag.as_slice(), &h[..16]].concat()
}
/// The posting rows, written now.
const POSTINGS: &[u8; 2] = b"P/";
/// The value rows of the version before the posting rows.
const VALUE_ROWS: &[u8; 2] = b"V/";
/// The id of an event attribute (`type.key`) in a value row's entries.
fn attribute_id(tag: &str) -> [u8; 4] {
    let h = lantau_crypto::sha256(tag.as_bytes());
    [h[0], h[1], h[2], h[3]]
}
/// One transaction and attribute in a value row of earlier versions: index u32 BE, the
/// attribute id, then the hash.
const VALUE_ENTRY: usize = 4 + 4 + 32;
/// Most attribute ids one group of a posting row holds (its count is a byte); a transaction
/// with more attributes carrying one value has further groups.
const POSTING_IDS_MAX: u8 = u8::MAX;

/// A posting row being built: groups of (tx hash, n, n attribute ids), the last one open.
#[derive(Default)]
struct Postings {
    bytes: Vec<u8>,
    /// The block index of the last transaction added.
    tx: u32,
    /// Where the last transaction's groups start and where its open group's count byte is
    /// (`None` before the first group).
    open: Option<(usize, usize)>,
}

impl Postings {
    /// Adds attribute `id` of transaction `tx` (hash `hash`); transactions come in block order.
    fn add(&mut self, tx: u32, hash: &[u8; 32], id: [u8; 4]) {
        let mut start = self.bytes.len();
        if let Some((first, at)) = self.open.filter(|_| self.tx == tx) {
            // Once per transaction and attribute, even when two of its events carry it.
            if posting_groups(&self.bytes[first..]).any(|g| g.is_some_and(|(_, ids)| ids.chunks_exact(4).any(|c| c == id))) {
                return;
            }
            let n = self.bytes[at];
            if n < POSTING_IDS_MAX {
                self.bytes[at] = n + 1;
                self.bytes.extend_from_slice(&id);
                return;
            }
            start = first;
        }
        self.bytes.extend_from_slice(hash);
        self.open = Some((start, self.bytes.len()));
        self.tx = tx;
        self.bytes.push(1);
        self.bytes.extend_from_slice(&id);
    }
}

/// A posting row's groups, (hash, attribute ids), in order; `None` (and no more) where the
/// row does not parse.
fn posting_groups(row: &[u8]) -> impl Iterator<Item = Option<([u8; 32], &[u8])>> {
    let mut rest = Some(row);
    std::iter::from_fn(move || {
        let r = rest.filter(|r| !r.is_empty())?;
        let group = (|| {
            let hash: [u8; 32] = r.get(..32)?.try_into().ok()?;
            let end = usize::from(*r.get(32)?).checked_mul(4)?.checked_add(33)?;
            Some((hash, r.get(33..end)?, r.get(end..)?))
        })();
        rest = group.map(|(_, _, tail)| tail);
        Some(group.map(|(hash, ids, _)| (hash, ids)))
    })
}

/// The hashes of a posting row's groups that name attribute `id`, or `None` if the row does
/// not parse.
fn postings_with(row: &[u8], id: [u8; 4]) -> Option<Vec<[u8; 32]>> {
    let mut out = Vec::new();
    for group in posting_groups(row) {
        let (hash, ids) = group?;
        if ids.chunks_exact(4).any(|c| c == id) {
            out.push(hash);
        }
    }
    Some(out)
}

/// The block hook that indexes transactions and stores blocks.
#[derive(Debug, Default)]
pub struct Indexer {
    /// The block the embedded engine is about to finalize (None under CometBFT).
    pending_block: Arc<Mutex<Option<Block>>>,
    /// Where gate verdicts are counted.
    metrics: Option<Arc<crate::metrics::Metrics>>,
}

impl Indexer {
    /// A new indexer.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A new indexer that also reports gate verdicts to `metrics`.
    pub fn with_metrics(metrics: Arc<crate::metrics::Metrics>) -> Arc<Self> {
        Arc::new(Self { pending_block: Default::default(), metrics: Some(metrics) })
    }

    /// Sets the block the next FinalizeBlock belongs to, so it is stored with it.
    pub fn set_pending_block(&self, b: Block) {
        *self.pending_block.lock() = Some(b);
    }
}

impl BlockHook for Indexer {
    fn on_verdict(&self, phase: &'static str, trace: &lantau_proto::chain::compliance::v1::GateTrace) {
        if let Some(m) = &self.metrics {
            m.verdict(phase, trace);
        }
    }

    fn begin_block(&self, height: u64) -> Box<dyn BlockRows> {
        Box::new(IndexRows { height, pending_block: self.pending_block.clone(), ..Default::default() })
    }
}

/// A hashed map: the rows made from one are sorted by key before they are written.
type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// One block's rows: each transaction's as it comes, the attribute values' posting rows and the
/// block's own rows at the end.
#[derive(Default)]
struct IndexRows {
    height: u64,
    /// The indexer's pending block (the embedded engine's), taken when the block finishes.
    pending_block: Arc<Mutex<Option<Block>>>,
    /// The transactions' rows so far.
    out: Vec<(Vec<u8>, Vec<u8>)>,
    /// Attribute value → the block's transactions carrying it (with the attribute's id).
    /// Looked up by value, never read in order (each becomes a row of its own).
    postings: Map<String, Postings>,
    /// Attribute ids by event type, then key.
    ids: Map<String, Map<String, [u8; 4]>>,
    /// The transactions' hashes in block order.
    hashes: Vec<u8>,
}

impl IndexRows {
    /// The id of attribute `key` of events of type `kind`.
    fn attribute_id(&mut self, kind: &str, key: &str) -> [u8; 4] {
        if let Some(id) = self.ids.get(kind).and_then(|by_key| by_key.get(key)) {
            return *id;
        }
        let id = attribute_id(&format!("{kind}.{key}"));
        self.ids.entry(kind.to_string()).or_default().insert(key.to_string(), id);
        id
    }
}

impl BlockRows for IndexRows {
    fn tx(&mut self, index: u32, tx: &[u8], result: &ExecTxResult) {
        let hash = lantau_app::tx::tx_hash(tx);
        self.out.push((tx_key(&hash), tx_result::encode(i64::try_from(self.height).unwrap_or(i64::MAX), index, tx, result)));
        // An Ethereum transaction that ran has the evm module's receipt in its result; one
        // whose Cosmos result failed after its ante took the fee (the ante's `ethereum_tx`
        // event stands) has a receipt all the same, status 0.
        let eth_hash = match lantau_app::evm::receipt::of_result(&result.data) {
            Some(r) => Some(r.hash),
            None if result.code.is_err() && result.events.iter().any(|e| e.kind == "ethereum_tx") => lantau_app::evm::msg::eth_tx_of(tx).map(|t| t.hash),
            None => None,
        };
        if let Some(h) = eth_hash {
            self.out.push((eth_tx_key(&h), hash.to_vec()));
        }
        self.hashes.extend_from_slice(&hash);
        for e in &result.events {
            for a in &e.attributes {
                if !a.index() {
                    continue;
                }
                let (Ok(k), Ok(v)) = (a.key_str(), a.value_str()) else { continue };
                let id = self.attribute_id(&e.kind, k);
                match self.postings.get_mut(v) {
                    Some(p) => p.add(index, &hash, id),
                    None => {
                        let mut p = Postings::default();
                        p.add(index, &hash, id);
                        self.postings.insert(v.to_string(), p);
                    }
                }
            }
        }
    }

    fn finish(self: Box<Self>, req: &request::FinalizeBlock, resp: &response::FinalizeBlock) -> Vec<(Vec<u8>, Vec<u8>)> {
        let IndexRows { height, pending_block, mut out, postings, hashes, .. } = *self;
        match pending_block.lock().take() {
            Some(b) if b.header.height.value() == height => {
                out.push((block_hash_key(b.header.hash().as_bytes()), height.to_be_bytes().to_vec()));
                out.push((block_key(height), Protobuf::<pb::types::Block>::encode_vec(b)));
            }
            // Under CometBFT the blocks are CometBFT's; the index keeps each block's time for
            // the transactions' timestamps.
            _ => out.push((block_time_key(height), rfc3339(req.time).into_bytes())),
        }
        // The block's own results without the transactions' (each is in its `t/` row; the
        // block results are put together from both when read).
        let block_part = response::FinalizeBlock {
            events: resp.events.clone(),
            tx_results: Vec::new(),
            validator_updates: resp.validator_updates.clone(),
            consensus_param_updates: resp.consensus_param_updates.clone(),
            app_hash: resp.app_hash.clone(),
        };
        out.push((results_key(height), pb::abci::ResponseFinalizeBlock::from(block_part).encode_to_vec()));
        if !hashes.is_empty() {
            out.push((block_txs_key(height), hashes));
        }
        for (v, postings) in postings {
            let mut key = value_rows_prefix(POSTINGS, &v);
            key.extend_from_slice(&height.to_be_bytes());
            out.push((key, postings.bytes));
        }
        out
    }
}

/// A `t/` row's value, CometBFT's protobuf `TxResult`, encoded from the response by reference.
///
/// The bytes are those of `pb::abci::TxResult { height, index, tx, result: Some(result.into()) }`
/// (prost's encoding: fields in number order, proto3 defaults left out, an attribute of the
/// v0.34 form left out as the v0.38 conversion leaves it), without the copy of every event
/// that building the owned message took: that copy was most of the index's time on the
/// EVM path (docs/performance.md, "Under CometBFT").
mod tx_result {
    use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};
    use tendermint::abci::{types::ExecTxResult, Event, EventAttribute};

    use lantau_app::tendermint;

    fn len_field(tag: u32, len: usize) -> usize {
        key_len(tag).saturating_add(encoded_len_varint(len as u64)).saturating_add(len)
    }
    fn bytes_len(tag: u32, b: &[u8]) -> usize {
        if b.is_empty() {
            0
        } else {
            len_field(tag, b.len())
        }
    }
    fn varint_len(tag: u32, v: u64) -> usize {
        if v == 0 {
            0
        } else {
            key_len(tag).saturating_add(encoded_len_varint(v))
        }
    }
    fn put_bytes(tag: u32, b: &[u8], buf: &mut Vec<u8>) {
        if !b.is_empty() {
            put_len(tag, b.len(), buf);
            buf.extend_from_slice(b);
        }
    }
    fn put_varint(tag: u32, v: u64, buf: &mut Vec<u8>) {
        if v != 0 {
            encode_key(tag, WireType::Varint, buf);
            encode_varint(v, buf);
        }
    }
    fn put_len(tag: u32, len: usize, buf: &mut Vec<u8>) {
        encode_key(tag, WireType::LengthDelimited, buf);
        encode_varint(len as u64, buf);
    }

    /// The attributes the v0.38 conversion keeps, as (key, value, index).
    fn attributes(e: &Event) -> impl Iterator<Item = (&str, &str, bool)> {
        e.attributes.iter().filter_map(|a| match a {
            EventAttribute::V037(a) => Some((a.key.as_str(), a.value.as_str(), a.index)),
            EventAttribute::V034(_) => None,
        })
    }
    fn attribute_len(k: &str, v: &str, index: bool) -> usize {
        bytes_len(1, k.as_bytes()).saturating_add(bytes_len(2, v.as_bytes())).saturating_add(varint_len(3, u64::from(index)))
    }
    fn event_len(e: &Event) -> usize {
        attributes(e).fold(bytes_len(1, e.kind.as_bytes()), |n, (k, v, i)| n.saturating_add(len_field(2, attribute_len(k, v, i))))
    }
    // Protobuf's int64 is the two's complement as a varint: the casts are the encoding.
    #[allow(clippy::cast_sign_loss, clippy::as_conversions)]
    fn int64(v: i64) -> u64 {
        v as u64
    }
    fn result_len(r: &ExecTxResult) -> usize {
        [
            varint_len(1, u64::from(r.code.value())),
            bytes_len(2, &r.data),
            bytes_len(3, r.log.as_bytes()),
            bytes_len(4, r.info.as_bytes()),
            varint_len(5, int64(r.gas_wanted)),
            varint_len(6, int64(r.gas_used)),
            r.events.iter().fold(0usize, |n, e| n.saturating_add(len_field(7, event_len(e)))),
            bytes_len(8, r.codespace.as_bytes()),
        ]
        .iter()
        .fold(0usize, |n, l| n.saturating_add(*l))
    }

    /// `TxResult { height, index, tx, result }`'s protobuf bytes.
    pub(super) fn encode(height: i64, index: u32, tx: &[u8], r: &ExecTxResult) -> Vec<u8> {
        let rlen = result_len(r);
        let total =
            varint_len(1, int64(height)).saturating_add(varint_len(2, u64::from(index))).saturating_add(bytes_len(3, tx)).saturating_add(len_field(4, rlen));
        let mut buf = Vec::with_capacity(total);
        put_varint(1, int64(height), &mut buf);
        put_varint(2, u64::from(index), &mut buf);
        put_bytes(3, tx, &mut buf);
        put_len(4, rlen, &mut buf);
        put_varint(1, u64::from(r.code.value()), &mut buf);
        put_bytes(2, &r.data, &mut buf);
        put_bytes(3, r.log.as_bytes(), &mut buf);
        put_bytes(4, r.info.as_bytes(), &mut buf);
        put_varint(5, int64(r.gas_wanted), &mut buf);
        put_varint(6, int64(r.gas_used), &mut buf);
        for e in &r.events {
            put_len(7, event_len(e), &mut buf);
            put_bytes(1, e.kind.as_bytes(), &mut buf);
            for (k, v, i) in attributes(e) {
                put_len(2, attribute_len(k, v, i), &mut buf);
                put_bytes(1, k.as_bytes(), &mut buf);
                put_bytes(2, v.as_bytes(), &mut buf);
                put_varint(3, u64::from(i), &mut buf);
            }
        }
        put_bytes(8, r.codespace.as_bytes(), &mut buf);
        buf
    }
}

// === reads ===
//
// Every failure is a `NodeError`: the search refusals for their cost are `OverBudget`, and
// anything else (a store fault, a row that does not decode) `Internal`, with its message.

/// A failure of the index: a store fault or a corrupt row.
fn internal(e: impl std::fmt::Display) -> NodeError {
    NodeError::Internal(e.to_string())
}

/// A non-verifiable read of the index or block store; a failure is a store fault (the node
/// stops), never an absent row.
async fn nv_get(snap: &Snapshot, key: &[u8]) -> Result<Option<Vec<u8>>, NodeError> {
    snap.nonverifiable_get_raw(key).await.map_err(|e| internal(store::fault(format_args!("reading the index row {}", key.escape_ascii()), e)))
}

/// A failed scan of the index under `prefix`, as a store fault.
fn scan_failed(prefix: &[u8], e: impl Into<anyhow::Error>) -> NodeError {
    internal(store::fault(format_args!("scanning the index under {}", prefix.escape_ascii()), e))
}

/// A committed block.
pub async fn block(snap: &Snapshot, height: u64) -> Result<Option<Block>, NodeError> {
    match nv_get(snap, &block_key(height)).await? {
        Some(b) => Ok(Some(<Block as Protobuf<pb::types::Block>>::decode_vec(&b).map_err(internal)?)),
        None => Ok(None),
    }
}

/// The height of the committed block whose header hash is `hash`.
pub async fn block_height_by_hash(snap: &Snapshot, hash: &[u8; 32]) -> Result<Option<u64>, NodeError> {
    match nv_get(snap, &block_hash_key(hash)).await? {
        Some(b) => Ok(Some(u64::from_be_bytes(b.as_slice().try_into().map_err(|_| internal("corrupt block hash row"))?))),
        None => Ok(None),
    }
}

/// A committed block's results.
pub async fn block_results(snap: &Snapshot, height: u64, app_hash: String) -> Result<Option<BlockResults>, NodeError> {
    let Some(raw) = nv_get(snap, &results_key(height)).await? else { return Ok(None) };
    let r = pb::abci::ResponseFinalizeBlock::decode(raw.as_slice()).map_err(internal)?;
    let mut resp = response::FinalizeBlock::try_from(r).map_err(internal)?;
    if resp.tx_results.is_empty() {
        resp.tx_results = block_tx_results(snap, height).await?;
    }
    Ok(Some(BlockResults { height, tx_results: resp.tx_results, finalize_block_events: resp.events, app_hash }))
}

/// The hashes of a block's transactions in block order: its `H/` row, or the `h/` rows of
/// earlier versions.
async fn block_tx_hashes(snap: &Snapshot, height: u64) -> Result<Vec<[u8; 32]>, NodeError> {
    if let Some(row) = nv_get(snap, &block_txs_key(height)).await? {
        return hashes_of(&row).ok_or_else(|| internal(format!("corrupt block transactions row at {height}")));
    }
    let prefix = [b"h/".as_slice(), &height.to_be_bytes()].concat();
    let mut rows = snap.nonverifiable_prefix_raw(&prefix);
    let mut out = Vec::new();
    while let Some(row) = rows.next().await {
        let (_, hash) = row.map_err(|e| scan_failed(&prefix, e))?;
        out.push(hash.as_slice().try_into().map_err(|_| internal(format!("corrupt height row at {height}")))?);
    }
    Ok(out)
}

/// The 32-byte hashes of an `H/` row (None when its length is not a multiple of 32).
fn hashes_of(row: &[u8]) -> Option<Vec<[u8; 32]>> {
    let chunks = row.chunks_exact(32);
    if !chunks.remainder().is_empty() {
        return None;
    }
    chunks.map(|c| <[u8; 32]>::try_from(c).ok()).collect()
}

/// The results of a block's transactions, in block order, from their `t/` rows.
async fn block_tx_results(snap: &Snapshot, height: u64) -> Result<Vec<ExecTxResult>, NodeError> {
    let mut results = Vec::new();
    for hash in block_tx_hashes(snap, height).await? {
        let Some(raw) = nv_get(snap, &tx_key(&hash)).await? else {
            return Err(internal(format!("the index lists a transaction it does not hold at height {height}")));
        };
        let rec = pb::abci::TxResult::decode(raw.as_slice()).map_err(internal)?;
        results.push(ExecTxResult::try_from(rec.result.unwrap_or_default()).map_err(internal)?);
    }
    Ok(results)
}

async fn block_time(snap: &Snapshot, height: u64) -> Result<String, NodeError> {
    Ok(match block(snap, height).await? {
        Some(b) => rfc3339(b.header.time),
        None => match nv_get(snap, &block_time_key(height)).await? {
            Some(t) => String::from_utf8(t).unwrap_or_default(),
            None => String::new(),
        },
    })
}

/// RFC 3339 with the trailing `Z`, as CometBFT prints times.
pub fn rfc3339(t: Time) -> String {
    t.to_rfc3339()
}

/// A committed transaction.
pub async fn tx(snap: &Snapshot, hash: &[u8; 32]) -> Result<Option<TxRecord>, NodeError> {
    let Some(raw) = nv_get(snap, &tx_key(hash)).await? else { return Ok(None) };
    let r = pb::abci::TxResult::decode(raw.as_slice()).map_err(internal)?;
    let height = u64::try_from(r.height).map_err(internal)?;
    let result = ExecTxResult::try_from(r.result.unwrap_or_default()).map_err(internal)?;
    Ok(Some(TxRecord { hash: *hash, height, index: r.index, tx: r.tx.to_vec(), result, timestamp: block_time(snap, height).await? }))
}

/// The committed Cosmos transaction that carried the Ethereum transaction `eth_hash`.
pub async fn eth_tx(snap: &Snapshot, eth_hash: &[u8; 32]) -> Result<Option<TxRecord>, NodeError> {
    let Some(raw) = nv_get(snap, &eth_tx_key(eth_hash)).await? else { return Ok(None) };
    let hash =
        <[u8; 32]>::try_from(raw.as_slice()).map_err(|_| internal(format!("the index row of Ethereum tx 0x{} is not a hash", const_hex::encode(eth_hash))))?;
    tx(snap, &hash).await
}

fn parse_pos(suffix: &[u8]) -> Option<(u64, u32)> {
    let h: [u8; 8] = suffix.get(..8)?.try_into().ok()?;
    let i: [u8; 4] = suffix.get(8..12)?.try_into().ok()?;
    Some((u64::from_be_bytes(h), u32::from_be_bytes(i)))
}

/// Upper bound on candidates one search examines, so a query can never scan without limit.
/// Candidates are examined oldest first; a query matching more than this many transactions
/// sees the oldest ones (narrow it with `tx.height`).
pub const MAX_SEARCH_CANDIDATES: usize = 100_000;

/// Most bytes (transactions and their results, as stored) one search page carries; the JSON
/// rendering is about twice that. A page over it is refused with the page size that fits.
pub const MAX_SEARCH_PAGE_BYTES: usize = 4 << 20;

/// Wall-clock time one search may spend matching candidates (queries run on snapshots, off
/// the block path; this bounds what one request takes from the machine).
pub const SEARCH_TIME_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// About what a result weighs in a response: its data, logs and every event attribute.
fn result_size(r: &ExecTxResult) -> usize {
    let events: usize = r
        .events
        .iter()
        .map(|e| e.attributes.iter().fold(e.kind.len(), |n, a| n.saturating_add(a.key_bytes().len()).saturating_add(a.value_bytes().len())))
        .fold(0, usize::saturating_add);
    r.data.len().saturating_add(r.log.len()).saturating_add(r.info.len()).saturating_add(events)
}

/// Adds to `candidates` (up to [`MAX_SEARCH_CANDIDATES`]) the transactions listed by the
/// per-block rows under `prefix` (keys `prefix ‖ height u64 BE`) whose height is in `heights`:
/// the hashes `listed` reads from a row (`None`: the row does not parse, a corrupt index).
async fn block_row_candidates(
    snap: &Snapshot,
    prefix: &[u8],
    (min_h, max_h): (u64, u64),
    listed: impl Fn(&[u8]) -> Option<Vec<[u8; 32]>>,
    candidates: &mut Vec<[u8; 32]>,
) -> Result<(), NodeError> {
    let mut stream = std::pin::pin!(snap.nonverifiable_prefix_raw(prefix));
    while candidates.len() < MAX_SEARCH_CANDIDATES {
        let Some(item) = stream.next().await else { break };
        let (key, val) = item.map_err(|e| scan_failed(prefix, e))?;
        let Some(h) = key.get(prefix.len()..).and_then(|s| <[u8; 8]>::try_from(s).ok()).map(u64::from_be_bytes) else { continue };
        if h < min_h || h > max_h {
            continue;
        }
        let hashes = listed(&val).ok_or_else(|| internal(format!("corrupt index row {}", key.escape_ascii())))?;
        let room = MAX_SEARCH_CANDIDATES.saturating_sub(candidates.len());
        candidates.extend(hashes.into_iter().take(room));
    }
    Ok(())
}

/// The hashes of fixed-size entries (each ending in the hash) that `keep` accepts: the rows
/// of earlier versions.
fn entries_with(row: &[u8], entry_len: usize, keep: impl Fn(&[u8]) -> bool) -> Option<Vec<[u8; 32]>> {
    if !row.len().is_multiple_of(entry_len) {
        return None;
    }
    row.chunks_exact(entry_len).filter(|e| keep(e)).map(|e| <[u8; 32]>::try_from(&e[entry_len - 32..]).ok()).collect()
}

/// Searches committed transactions. A string equality condition (other than `tm.event`)
/// picks the candidates from the event index; otherwise the transactions in the query's height
/// range are scanned. Every candidate is matched against the whole query on its stored result;
/// full records (with block time) are built only for the requested page.
pub async fn search(snap: &Snapshot, q: &Query, descending: bool, page: u64, per_page: u64) -> Result<SearchPage, NodeError> {
    let (min_h, max_h) = q.height_range();
    let min_h = min_h.unwrap_or(0);
    let max_h = max_h.unwrap_or(u64::MAX);
    if min_h > max_h {
        return Ok(SearchPage::default());
    }
    let mut candidates: Vec<[u8; 32]> = Vec::new();

    let hash_eq = q.conditions.iter().find_map(|c| match (&c.tag[..], &c.op) {
        ("tx.hash", Op::Eq(Operand::Str(s))) => Some(s.clone()),
        _ => None,
    });
    let string_eq = q.conditions.iter().find_map(|c| match (&c.tag[..], &c.op) {
        ("tm.event" | "tx.height" | "tx.hash", _) => None,
        (tag, Op::Eq(Operand::Str(v))) => Some((tag.to_string(), v.clone())),
        _ => None,
    });
    if let Some(h) = hash_eq {
        if let Some(b) = hex::decode(&h).ok().and_then(|b| <[u8; 32]>::try_from(b).ok()) {
            candidates.push(b);
        }
    } else if let Some((k, v)) = string_eq {
        // Rows of earlier versions first (one per attribute per transaction): they are older.
        let prefix = event_prefix(&k, &v);
        let mut stream = std::pin::pin!(snap.nonverifiable_prefix_raw(&prefix));
        while candidates.len() < MAX_SEARCH_CANDIDATES {
            let Some(item) = stream.next().await else { break };
            let (key, val) = item.map_err(|e| scan_failed(&prefix, e))?;
            let Some((h, _)) = key.get(prefix.len()..).and_then(parse_pos) else { continue };
            if h < min_h || h > max_h {
                continue;
            }
            if let Ok(hash) = <[u8; 32]>::try_from(val.as_slice()) {
                candidates.push(hash);
            }
        }
        // Then the per-block rows of earlier versions, in height order; then the value rows of
        // the version before, and the posting rows: the transactions this attribute carried
        // the value in.
        let range = (min_h, max_h);
        block_row_candidates(snap, &event_rows_prefix(&k, &v), range, |row| entries_with(row, ROW_ENTRY, |_| true), &mut candidates).await?;
        let id = attribute_id(&k);
        block_row_candidates(snap, &value_rows_prefix(VALUE_ROWS, &v), range, |row| entries_with(row, VALUE_ENTRY, |e| e[4..8] == id), &mut candidates).await?;
        block_row_candidates(snap, &value_rows_prefix(POSTINGS, &v), range, |row| postings_with(row, id), &mut candidates).await?;
    } else {
        // Every transaction of the height range: the `h/` rows of earlier versions (older
        // heights), then the `H/` rows. cnidarium prepends the prefix to the range bounds.
        for (prefix, pad) in [(b"h/", 4usize), (b"H/", 0)] {
            let start = [&min_h.to_be_bytes()[..], &vec![0u8; pad]].concat();
            let range = match max_h.checked_add(1) {
                Some(end) => snap.nonverifiable_range_raw(Some(prefix), start..[&end.to_be_bytes()[..], &vec![0u8; pad]].concat()),
                None => snap.nonverifiable_range_raw(Some(prefix), start..),
            }
            .map_err(internal)?;
            let mut stream = std::pin::pin!(range);
            while candidates.len() < MAX_SEARCH_CANDIDATES {
                let Some(item) = stream.next().await else { break };
                let (_, val) = item.map_err(|e| scan_failed(prefix, e))?;
                match hashes_of(&val) {
                    Some(hs) => candidates.extend(hs),
                    None => return Err(internal("corrupt block transactions row")),
                }
            }
        }
        candidates.truncate(MAX_SEARCH_CANDIDATES);
    }

    // Match on the stored results; keep only positions.
    let started = std::time::Instant::now();
    let examined_total = candidates.len();
    let mut matched: Vec<(u64, u32, [u8; 32])> = Vec::new();
    for (examined, hash) in candidates.into_iter().enumerate() {
        if examined % 256 == 255 && started.elapsed() > SEARCH_TIME_BUDGET {
            return Err(NodeError::OverBudget(format!(
                "search ran past its {} s budget after examining {examined} of {examined_total} candidate transactions: \
                 add a tx.height range or a more selective event condition (message.sender='...')",
                SEARCH_TIME_BUDGET.as_secs()
            )));
        }
        let Some(raw) = nv_get(snap, &tx_key(&hash)).await? else { continue };
        let r = pb::abci::TxResult::decode(raw.as_slice()).map_err(internal)?;
        let height = u64::try_from(r.height).map_err(internal)?;
        let result = r.result.unwrap_or_default();
        // Matched on the stored result: no block read needed.
        let attrs = result.events.iter().flat_map(|e| e.attributes.iter().map(move |a| (e.r#type.as_str(), a.key.as_str(), a.value.as_str())));
        if q.matches(&event_map(height, &hash, attrs)) {
            matched.push((height, r.index, hash));
        }
    }
    matched.sort();
    matched.dedup();
    if descending {
        matched.reverse();
    }
    let total = matched.len() as u64;
    let skip = usize::try_from(page.saturating_sub(1).saturating_mul(per_page)).unwrap_or(usize::MAX);
    let take = usize::try_from(per_page).unwrap_or(usize::MAX);
    let mut txs = Vec::new();
    let mut bytes = 0usize;
    for (_, _, hash) in matched.into_iter().skip(skip).take(take) {
        if let Some(rec) = tx(snap, &hash).await? {
            let size = rec.tx.len().saturating_add(result_size(&rec.result));
            bytes = bytes.saturating_add(size);
            // The first transaction always fits: a page of one is always answerable.
            if bytes > MAX_SEARCH_PAGE_BYTES && !txs.is_empty() {
                return Err(NodeError::OverBudget(format!(
                    "this page's transactions are over the {} MiB response cap: ask for at most {} per page (limit / per_page)",
                    MAX_SEARCH_PAGE_BYTES >> 20,
                    txs.len()
                )));
            }
            txs.push(rec);
        }
    }
    Ok(SearchPage { txs, total })
}

#[cfg(test)]
mod tests {
    use lantau_app::cnidarium::{StateDelta, StateWrite};
    use lantau_app::store::TempStorage;
    use lantau_app::tendermint::abci::{types::CommitInfo, Event};
    use lantau_app::tendermint::{account, Hash};

    use super::*;

    fn result(events: Vec<Event>) -> ExecTxResult {
        ExecTxResult { events, ..Default::default() }
    }

    fn transfer(sender: &str, recipient: &str) -> Event {
        Event::new("transfer", [("sender", sender, true), ("recipient", recipient, true)])
    }

    fn finalize_request(txs: &[Vec<u8>], height: u32) -> request::FinalizeBlock {
        request::FinalizeBlock {
            txs: txs.iter().map(|t| t.clone().into()).collect(),
            decided_last_commit: CommitInfo { round: Default::default(), votes: vec![] },
            misbehavior: vec![],
            hash: Hash::None,
            height: height.into(),
            time: Time::unix_epoch(),
            next_validators_hash: Hash::None,
            proposer_address: account::Id::new([0; 20]),
        }
    }

    /// The `t/` row encoded by reference is byte for byte the owned message's encoding: every
    /// field set and unset, negative gas, an empty event, an empty attribute, an unindexed one,
    /// and a v0.34 attribute (which the v0.38 message leaves out).
    #[test]
    fn a_tx_row_encodes_as_the_owned_message_does() {
        use lantau_app::tendermint::abci::{v0_34, Code, EventAttribute};
        let mut old_form = Event::new("legacy", [("kept", "yes", true)]);
        old_form.attributes.push(EventAttribute::V034(v0_34::EventAttribute { key: b"k".to_vec(), value: b"v".to_vec(), index: true }));
        let full = ExecTxResult {
            code: Code::from(18),
            data: vec![1, 2, 3].into(),
            log: "the log".into(),
            info: "info".into(),
            gas_wanted: 200_000,
            gas_used: -5,
            events: vec![
                transfer("lantau1alice", "lantau1bob"),
                Event::new("empty", Vec::<(&str, &str, bool)>::new()),
                Event::new("", [("", "", false), ("unindexed", "value", false)]),
                old_form,
            ],
            codespace: "compliance".into(),
        };
        let cases =
            [(7, 3, b"tx bytes".to_vec(), full), (0, 0, vec![], ExecTxResult::default()), (i64::MAX, u32::MAX, vec![0; 300], result(vec![transfer("a", "b")]))];
        for (height, index, tx, r) in cases {
            let owned = pb::abci::TxResult { height, index, tx: tx.clone().into(), result: Some(r.clone().into()) }.encode_to_vec();
            assert_eq!(tx_result::encode(height, index, &tx, &r), owned, "height {height} index {index}");
        }
    }

    async fn search_hashes(snap: &Snapshot, q: &str) -> (Vec<[u8; 32]>, u64) {
        let page = search(snap, &Query::parse(q).unwrap(), false, 1, 100).await.unwrap();
        (page.txs.iter().map(|t| t.hash).collect(), page.total)
    }

    /// Block 1 indexed the way the first version did (one row per attribute per transaction),
    /// block 2 the way the second did (one row per attribute and value per block), block 3 the
    /// way the third did (one row per value per block, an entry per transaction and
    /// attribute), block 4 by the hook (one posting row per value per block): a search finds
    /// all four, oldest first, each transaction once even when two of its events carry the
    /// attribute, and a value's row names a transaction only for the attribute that carried
    /// it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn value_rows_and_rows_of_earlier_versions_are_all_searched() {
        let storage = TempStorage::new().await.unwrap();
        let legacy_tx = |name: &[u8], height: u64| {
            let hash = lantau_app::tx::tx_hash(name);
            let result = Some(result(vec![transfer("alice", "bob")]).into());
            let rec = pb::abci::TxResult { height: i64::try_from(height).unwrap(), index: 0, tx: name.to_vec().into(), result };
            (hash, vec![(tx_key(&hash), rec.encode_to_vec()), (height_key(height, 0), hash.to_vec())])
        };

        // Block 1, the first version's rows.
        let (old_hash, mut rows) = legacy_tx(b"old", 1);
        for (k, v) in [("transfer.sender", "alice"), ("transfer.recipient", "bob")] {
            let mut key = event_prefix(k, v);
            key.extend_from_slice(&[&1u64.to_be_bytes()[..], &0u32.to_be_bytes()].concat());
            rows.push((key, old_hash.to_vec()));
        }
        // Block 2, the second version's rows.
        let (mid_hash, mid_rows) = legacy_tx(b"mid", 2);
        rows.extend(mid_rows);
        for (k, v) in [("transfer.sender", "alice"), ("transfer.recipient", "bob")] {
            let mut key = event_rows_prefix(k, v);
            key.extend_from_slice(&2u64.to_be_bytes());
            rows.push((key, [&0u32.to_be_bytes()[..], &mid_hash].concat()));
        }
        // Block 3, the third version's rows: alice sent, bob received.
        let (v3_hash, v3_rows) = legacy_tx(b"v3", 3);
        rows.extend(v3_rows);
        for (v, tag) in [("alice", "transfer.sender"), ("bob", "transfer.recipient")] {
            let mut key = value_rows_prefix(VALUE_ROWS, v);
            key.extend_from_slice(&3u64.to_be_bytes());
            rows.push((key, [&0u32.to_be_bytes()[..], &attribute_id(tag), &v3_hash].concat()));
        }
        let mut delta = StateDelta::new(storage.latest_snapshot());
        for (k, v) in rows {
            delta.nonverifiable_put_raw(k, v);
        }
        storage.commit(delta).await.unwrap();

        // Block 4, through the hook.
        let txs: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
        let req = finalize_request(&txs, 4);
        let h = |i: usize| lantau_app::tx::tx_hash(&txs[i]);
        let resp = response::FinalizeBlock {
            events: vec![],
            tx_results: vec![
                result(vec![transfer("alice", "bob"), transfer("alice", "carol")]),
                result(vec![transfer("dave", "bob")]),
                result(vec![transfer("alice", "erin")]),
            ],
            validator_updates: vec![],
            consensus_param_updates: None,
            app_hash: Default::default(),
        };
        let written = Indexer::new().rows_of(&req, &resp);
        // One posting row per distinct value: alice, bob, carol, dave, erin.
        let value_rows: Vec<_> = written.iter().filter(|(k, _)| k.starts_with(POSTINGS)).collect();
        assert_eq!(value_rows.len(), 5);
        // Transaction 0 carries alice as transfer.sender twice (one id), transaction 2 once:
        // two groups of one hash and one id.
        let alice = value_rows.iter().find(|(k, _)| k.starts_with(&value_rows_prefix(POSTINGS, "alice"))).unwrap();
        assert_eq!(alice.1, [&h(0)[..], &[1], &attribute_id("transfer.sender"), &h(2), &[1], &attribute_id("transfer.sender")].concat());
        let mut delta = StateDelta::new(storage.latest_snapshot());
        for (k, v) in written {
            delta.nonverifiable_put_raw(k, v);
        }
        storage.commit(delta).await.unwrap();

        let snap = storage.latest_snapshot();
        assert_eq!(search_hashes(&snap, "transfer.sender='alice'").await, (vec![old_hash, mid_hash, v3_hash, h(0), h(2)], 5));
        assert_eq!(search_hashes(&snap, "transfer.recipient='bob'").await, (vec![old_hash, mid_hash, v3_hash, h(0), h(1)], 5));
        assert_eq!(search_hashes(&snap, "transfer.sender='alice' AND tx.height=4").await, (vec![h(0), h(2)], 2));
        assert_eq!(search_hashes(&snap, "transfer.sender='alice' AND tx.height<4").await, (vec![old_hash, mid_hash, v3_hash], 3));
        assert_eq!(search_hashes(&snap, "transfer.recipient='carol'").await, (vec![h(0)], 1));
        assert_eq!(search_hashes(&snap, "transfer.recipient='nobody'").await, (vec![], 0));
        // bob is only ever a recipient: his row names no transaction as a sender.
        assert_eq!(search_hashes(&snap, "transfer.sender='bob'").await, (vec![], 0));
        // The full query still decides: the row names candidates only.
        assert_eq!(search_hashes(&snap, "transfer.sender='alice' AND transfer.recipient='erin'").await, (vec![h(2)], 1));
        // Height conditions alone read the position rows: one per transaction in blocks 1 to
        // 3 (earlier versions), one per block in block 4.
        assert_eq!(written_block_rows(&snap, 4).await, 1);
        assert_eq!(search_hashes(&snap, "tx.height>=1").await, (vec![old_hash, mid_hash, v3_hash, h(0), h(1), h(2)], 6));
        assert_eq!(search_hashes(&snap, "tx.height=4").await, (vec![h(0), h(1), h(2)], 3));
        assert_eq!(search_hashes(&snap, "tx.height<4").await, (vec![old_hash, mid_hash, v3_hash], 3));
        assert_eq!(block_tx_hashes(&snap, 1).await.unwrap(), vec![old_hash]);
        assert_eq!(block_tx_hashes(&snap, 4).await.unwrap(), vec![h(0), h(1), h(2)]);
        assert!(block_tx_hashes(&snap, 5).await.unwrap().is_empty());
    }

    /// A transaction with more attributes carrying one value than a group counts gets a
    /// second group; each is found by its id, a repeated id adds nothing, and a row cut short
    /// does not parse.
    #[test]
    fn a_posting_row_holds_any_number_of_attributes_and_a_cut_one_does_not_parse() {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let id = |i: u32| i.to_be_bytes();
        let mut p = Postings::default();
        for i in 0..300 {
            p.add(0, &a, id(i));
        }
        p.add(0, &a, id(299));
        p.add(0, &a, id(3));
        p.add(1, &b, id(3));
        assert_eq!(p.bytes.len(), 3 * 33 + 301 * 4);
        assert_eq!(p.bytes[32], 255);
        assert_eq!(postings_with(&p.bytes, id(0)), Some(vec![a]));
        assert_eq!(postings_with(&p.bytes, id(299)), Some(vec![a]));
        assert_eq!(postings_with(&p.bytes, id(3)), Some(vec![a, b]));
        assert_eq!(postings_with(&p.bytes, id(300)), Some(vec![]));
        for cut in [1, 4, 33, 40] {
            assert_eq!(postings_with(&p.bytes[..p.bytes.len() - cut], id(3)), None, "cut {cut}");
        }
    }

    /// The `H/` rows of a height.
    async fn written_block_rows(snap: &Snapshot, height: u64) -> usize {
        usize::from(snap.nonverifiable_get_raw(&block_txs_key(height)).await.unwrap().is_some())
    }

    /// Ten transactions of 1 MiB each: a page of 100 is refused with the page size that fits,
    /// and that page size answers.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_search_page_over_the_response_cap_is_refused_with_the_page_size_that_fits() {
        let storage = TempStorage::new().await.unwrap();
        let txs: Vec<Vec<u8>> = (0..10u8).map(|i| vec![i; 1 << 20]).collect();
        let req = finalize_request(&txs, 1);
        let resp = response::FinalizeBlock {
            events: vec![],
            tx_results: txs.iter().map(|_| result(vec![transfer("alice", "bob")])).collect(),
            validator_updates: vec![],
            consensus_param_updates: None,
            app_hash: Default::default(),
        };
        let mut delta = StateDelta::new(storage.latest_snapshot());
        for (k, v) in Indexer::new().rows_of(&req, &resp) {
            delta.nonverifiable_put_raw(k, v);
        }
        storage.commit(delta).await.unwrap();
        let snap = storage.latest_snapshot();
        let q = Query::parse("transfer.sender='alice'").unwrap();
        let e = search(&snap, &q, false, 1, 100).await.unwrap_err();
        let NodeError::OverBudget(b) = e else { panic!("a budget refusal, not a node failure: {e:?}") };
        assert!(b.contains("ask for at most 3 per page"), "{b}");
        let page = search(&snap, &q, false, 2, 3).await.unwrap();
        assert_eq!((page.txs.len(), page.total), (3, 10));
    }
}

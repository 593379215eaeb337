//! CometBFT v0.38 JSON shapes: 64-bit integers as strings, hashes upper hex, bytes base64.

use std::collections::BTreeMap;

use base64::Engine as _;
use lantau_app::tendermint::abci::types::ExecTxResult;
use lantau_app::tendermint::abci::{Event, EventAttribute};
use lantau_app::tendermint::Block;
use serde_json::{json, Value};

use super::jsonrpc::{internal, RpcError};
use crate::api::{BlockResults, TxRecord};

// === scalars ===

/// Standard base64.
pub(crate) fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Upper hex.
pub(crate) fn hex_upper(bytes: &[u8]) -> String {
    const_hex::encode_upper(bytes)
}

/// An upper-hex string (as [`crate::api`] carries app hashes) re-encoded as base64, as
/// CometBFT renders `[]byte` app hashes; text that is not hex gives an empty string.
pub(crate) fn hex_to_b64(hex_text: &str) -> String {
    hex::decode(hex_text).map(|b| b64(&b)).unwrap_or_default()
}

// === events and results ===

fn attribute(a: &EventAttribute) -> Value {
    let text = |r: Result<&str, _>, bytes: &[u8]| match r {
        Ok(s) => s.to_string(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    };
    json!({
        "key": text(a.key_str(), a.key_bytes()),
        "value": text(a.value_str(), a.value_bytes()),
        "index": a.index(),
    })
}

/// One ABCI event: `{type, attributes:[{key, value, index}]}`.
pub(crate) fn event(e: &Event) -> Value {
    json!({ "type": e.kind, "attributes": e.attributes.iter().map(attribute).collect::<Vec<_>>() })
}

/// A list of ABCI events.
pub(crate) fn events(es: &[Event]) -> Value {
    Value::Array(es.iter().map(event).collect())
}

/// An `ExecTxResult` (`data` base64, `null` when empty).
pub(crate) fn exec_tx_result(r: &ExecTxResult) -> Value {
    json!({
        "code": r.code.value(),
        "data": if r.data.is_empty() { Value::Null } else { Value::String(b64(&r.data)) },
        "log": r.log,
        "info": r.info,
        "gas_wanted": r.gas_wanted.to_string(),
        "gas_used": r.gas_used.to_string(),
        "events": events(&r.events),
        "codespace": r.codespace,
    })
}

/// The `tx` / `tx_search` item: `{hash, height, index, tx_result, tx}`.
pub(crate) fn tx(rec: &TxRecord) -> Value {
    json!({
        "hash": hex_upper(&rec.hash),
        "height": rec.height.to_string(),
        "index": rec.index,
        "tx_result": exec_tx_result(&rec.result),
        "tx": b64(&rec.tx),
    })
}

/// The `tendermint/event/Tx` payload's `TxResult`.
pub(crate) fn tx_result_event(rec: &TxRecord) -> Value {
    json!({
        "height": rec.height.to_string(),
        "index": rec.index,
        "tx": b64(&rec.tx),
        "result": exec_tx_result(&rec.result),
    })
}

/// A `ResponseFinalizeBlock`-shaped value from a block's results (when known) and its events.
pub(crate) fn finalize_block(results: Option<&BlockResults>, block_events: &[Event]) -> Value {
    let tx_results: Vec<Value> = results.map(|r| r.tx_results.iter().map(exec_tx_result).collect()).unwrap_or_default();
    json!({
        "events": events(block_events),
        "tx_results": tx_results,
        "validator_updates": [],
        "consensus_param_updates": null,
        "app_hash": results.map(|r| hex_to_b64(&r.app_hash)).unwrap_or_default(),
    })
}

/// The `block_results` result.
pub(crate) fn block_results(r: &BlockResults) -> Value {
    let txs = if r.tx_results.is_empty() { Value::Null } else { Value::Array(r.tx_results.iter().map(exec_tx_result).collect()) };
    json!({
        "height": r.height.to_string(),
        "txs_results": txs,
        "finalize_block_events": events(&r.finalize_block_events),
        "validator_updates": [],
        "consensus_param_updates": null,
        "app_hash": hex_to_b64(&r.app_hash),
    })
}

// === blocks ===

/// The block id CometBFT computes: the header hash, and the part set header of the
/// protobuf-encoded block cut into 64 KiB parts (merkle root of the parts).
pub(crate) fn block_id(b: &Block) -> Value {
    let id = crate::api::block_id(b);
    json!({
        "hash": hex_upper(id.hash.as_bytes()),
        "parts": { "total": id.part_set_header.total, "hash": hex_upper(id.part_set_header.hash.as_bytes()) },
    })
}

/// The block id of "no block".
pub(crate) fn empty_block_id() -> Value {
    json!({ "hash": "", "parts": { "total": 0, "hash": "" } })
}

/// Where tendermint-rs writes `null` for an absent value, CometBFT writes the empty value
/// (clients such as cosmjs read into it): an empty block id in the header.
fn patch_header(header: &mut Value) {
    if let Some(id) = header.get_mut("last_block_id").filter(|v| v.is_null()) {
        *id = empty_block_id();
    }
}

/// A block in CometBFT's JSON: tendermint-rs' serde rendering, with CometBFT's empty values
/// (`last_block_id`, `last_commit` and `evidence`) where tendermint-rs writes `null`.
pub(crate) fn block(b: &Block) -> Result<Value, RpcError> {
    let mut v = serde_json::to_value(b).map_err(internal)?;
    if let Some(h) = v.get_mut("header") {
        patch_header(h);
    }
    if let Some(list) = v.get_mut("evidence").and_then(|e| e.get_mut("evidence")).filter(|l| l.is_null()) {
        *list = json!([]);
    }
    if let Some(c) = v.get_mut("last_commit").filter(|c| c.is_null()) {
        *c = json!({ "height": "0", "round": 0, "block_id": empty_block_id(), "signatures": [] });
    }
    Ok(v)
}

/// A block header in CometBFT's JSON.
pub(crate) fn header(b: &Block) -> Result<Value, RpcError> {
    let mut v = serde_json::to_value(&b.header).map_err(internal)?;
    patch_header(&mut v);
    Ok(v)
}

// === event maps ===

/// The composite-key view of a block-level event (`tm.event=<kind>`, `block.height`, and
/// `<type>.<key>` for every attribute) that subscription queries match against.
pub(crate) fn block_event_map(kind: &str, height: u64, block_events: &[Event]) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in block_events {
        for a in &e.attributes {
            let (Ok(k), Ok(v)) = (a.key_str(), a.value_str()) else { continue };
            m.entry(format!("{}.{}", e.kind, k)).or_default().push(v.to_string());
        }
    }
    m.entry("tm.event".into()).or_default().push(kind.into());
    m.entry("block.height".into()).or_default().push(height.to_string());
    m
}

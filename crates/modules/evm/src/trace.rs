//! Traces of EVM runs: geth's debug tracers (the struct logger, `callTracer`,
//! `prestateTracer`, `4byteTracer`, `flatCallTracer`, `muxTracer`, `noopTracer`) through
//! revm-inspectors' `DebugInspector`, and the access-list inspector behind
//! `eth_createAccessList`.
//!
//! A trace is asked for by putting a [`TraceSlot`] in the state's ephemeral objects under
//! [`TRACE_OBJECT`] before a run: the next EVM run on that state (a mined transaction replayed
//! through the one transaction pipeline, or an `eth_call`) runs with the inspector and leaves
//! its result in the slot. Nothing else about the run changes: the same gates, the same
//! precompile, the same gas, so a trace shows the gate reasons a wallet saw.

use std::sync::Arc;

use alloy_primitives::{Address as EA, B256};
use alloy_rpc_types_trace::geth::GethDebugTracingOptions;
use lantau_primitives::Address;
use parking_lot::Mutex;
use revm::context::transaction::{AccessList, AccessListItem};
use revm_inspectors::tracing::DebugInspector;

/// The ephemeral object under which a [`TraceSlot`] asks the next EVM run for a trace.
pub const TRACE_OBJECT: &str = "evm/trace";

/// What to record.
#[derive(Debug, Clone)]
pub(crate) enum TraceKind {
    /// One of geth's debug tracers, with its options.
    Debug(Box<GethDebugTracingOptions>),
    /// The storage slots and accounts the run touched, starting from this list.
    AccessList(AccessList),
}

/// A request for the trace of one EVM run and the place its result lands (shared by clones,
/// so the run can fill it wherever in the pipeline's overlays it happens).
#[derive(Debug, Clone)]
pub struct TraceSlot {
    pub(crate) kind: TraceKind,
    /// The transaction's Ethereum hash, its index in its block and the block's hash (a
    /// mined transaction; `None` for a call).
    pub(crate) tx: Option<([u8; 32], usize, [u8; 32])>,
    /// Stops the traced run from outside (the JSON-RPC's time limit).
    pub(crate) stop: Option<Arc<crate::exec::Interrupt>>,
    out: Arc<Mutex<Option<Result<serde_json::Value, String>>>>,
}

impl TraceSlot {
    /// A geth debug tracer from the options object of `debug_trace*` (`{"tracer": ...,
    /// "tracerConfig": ..., "disableStorage": ...}`; `null` or absent: the struct logger).
    /// A malformed object, an unknown tracer or a JavaScript tracer is refused with the text
    /// to answer.
    pub fn debug(opts: Option<&serde_json::Value>) -> Result<Self, String> {
        let opts: GethDebugTracingOptions = match opts {
            None | Some(serde_json::Value::Null) => GethDebugTracingOptions::default(),
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("invalid tracer options: {e}"))?,
        };
        if let Some(alloy_rpc_types_trace::geth::GethDebugTracerType::JsTracer(_)) = &opts.tracer {
            return Err("JavaScript tracers are not supported by this node; use a built-in tracer (callTracer, prestateTracer, 4byteTracer, flatCallTracer, muxTracer, noopTracer) or the struct logger".into());
        }
        // The options must make an inspector now (an unknown tracer or a bad config is the
        // caller's error, not a failed run).
        DebugInspector::new(opts.clone()).map_err(|e| format!("{e}: {}", opts.tracer.as_ref().map(|t| format!("{t:?}")).unwrap_or_default()))?;
        Ok(Self { kind: TraceKind::Debug(Box::new(opts)), tx: None, stop: None, out: Arc::default() })
    }

    /// The accounts and slots a run touches, starting from `list` (`eth_createAccessList`).
    pub fn access_list(list: &[(Address, Vec<[u8; 32]>)]) -> Self {
        let items =
            list.iter().map(|(a, keys)| AccessListItem { address: EA::from(a.0), storage_keys: keys.iter().map(|k| B256::from(*k)).collect() }).collect();
        Self { kind: TraceKind::AccessList(AccessList(items)), tx: None, stop: None, out: Arc::default() }
    }

    /// The same request for a mined transaction: its Ethereum hash, index in the block and
    /// the block's hash (they appear in some tracers' output).
    pub fn for_tx(&self, eth_hash: [u8; 32], index: usize, block_hash: [u8; 32]) -> Self {
        Self { kind: self.kind.clone(), tx: Some((eth_hash, index, block_hash)), stop: self.stop.clone(), out: Arc::default() }
    }

    /// The same request, its run stopped when `stop` is.
    pub fn stopped_by(mut self, stop: Arc<crate::exec::Interrupt>) -> Self {
        self.stop = Some(stop);
        self
    }

    /// The result: the tracer's frame as JSON (for an access list, `[{address,
    /// storageKeys}]`), a tracer's failure, or `None` when no EVM run happened.
    pub fn take(&self) -> Option<Result<serde_json::Value, String>> {
        self.out.lock().take()
    }

    pub(crate) fn set(&self, r: Result<serde_json::Value, String>) {
        *self.out.lock() = Some(r);
    }
}

/// An access list as JSON, as `eth_createAccessList` answers it.
pub(crate) fn access_list_json(list: &AccessList) -> serde_json::Value {
    serde_json::Value::Array(
        list.0
            .iter()
            .map(|i| {
                serde_json::json!({
                    "address": format!("{:#x}", i.address),
                    "storageKeys": i.storage_keys.iter().map(|k| format!("{k:#x}")).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// The parsed access list a JSON answer carries (for the next round of
/// `eth_createAccessList`).
pub fn access_list_from_json(v: &serde_json::Value) -> Vec<(Address, Vec<[u8; 32]>)> {
    let Some(items) = v.as_array() else { return Vec::new() };
    items
        .iter()
        .filter_map(|i| {
            let a = Address::from_hex(i.get("address")?.as_str()?).ok()?;
            let keys = i
                .get("storageKeys")?
                .as_array()?
                .iter()
                .filter_map(|k| {
                    let b = hex::decode(k.as_str()?.trim_start_matches("0x")).ok()?;
                    <[u8; 32]>::try_from(b.as_slice()).ok()
                })
                .collect();
            Some((a, keys))
        })
        .collect()
}

//! Compliance screening of a decoded transaction: the facts its messages project, the one
//! gate chain ([`lantau_compliance::gates::run`]) over them, and, once the messages succeeded,
//! the effects the chain asks for (velocity window, Travel Rule anchor). Admission, execution
//! and simulation all call [`screen`]; only execution calls [`record`].

use cnidarium::{StateRead, StateWrite};
use lantau_compliance::gates::{self, Fact, GateInput, Verdict};
use lantau_module_api::{BlockCtx, GasMeter, TxError};

use crate::tx::DecodedTx;

/// The facts of every message, in message order.
pub fn facts(tx: &DecodedTx) -> Vec<Fact> {
    tx.msgs.iter().enumerate().flat_map(|(i, m)| m.facts(i)).collect()
}

/// Runs the gate chain over the transaction against `state`.
pub async fn screen<S: StateRead + Sync>(state: &S, gas: &GasMeter, block: &BlockCtx, tx: &DecodedTx) -> Result<Verdict, TxError> {
    let facts = facts(tx);
    let types: Vec<&str> = tx.msgs.iter().map(|m| m.type_url()).collect();
    gates::run(state, gas, block, GateInput { signer: tx.signer, facts: &facts, payload: tx.payload.as_ref(), msg_types: &types }).await
}

/// Records what a screened transaction leaves behind once its messages succeeded: audit rows,
/// flags (with their events, appended to `events`), velocity windows, the payload anchor.
pub async fn record<S: StateWrite + Send + Sync>(
    state: &mut S,
    gas: &GasMeter,
    block: &BlockCtx,
    tx: &DecodedTx,
    verdict: &Verdict,
    events: &mut Vec<lantau_module_api::Event>,
) -> Result<(), TxError> {
    let facts = facts(tx);
    lantau_compliance::effects::record_verdict(state, gas, block, &facts, verdict, tx.payload.as_ref(), &tx.hash_hex(), events).await
}

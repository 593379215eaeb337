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

/// Runs the gate chain over the transaction against `state`; `reads` is the log of a
/// recording `state`, when the caller keeps what the verdict read.
pub async fn screen<S: StateRead + Sync>(
    state: &S,
    gas: &GasMeter,
    block: &BlockCtx,
    tx: &DecodedTx,
    reads: Option<&lantau_module_api::reads::ReadLog>,
) -> Result<Verdict, TxError> {
    let facts = facts(tx);
    let types: Vec<&str> = tx.msgs.iter().map(|m| m.type_url()).collect();
    #[cfg_attr(not(test), allow(unused_mut))]
    let mut verdict =
        gates::run(state, gas, block, GateInput { signer: tx.signer, facts: &facts, payload: tx.payload.as_ref(), msg_types: &types, reads }).await?;
    // The test module's own gate (a read of a key no module's rules name).
    #[cfg(test)]
    crate::probe::gate(state, gas, tx, &mut verdict).await?;
    Ok(verdict)
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

//! Compliance screening of a decoded transaction: the facts its messages project, and the
//! screening session over them ([`lantau_compliance::screening::Session`]: the one gate
//! chain, the tokens of the movements it passed, and at its close the record of the verdict).
//! Admission, proposals, execution and simulation all open it here; only execution closes it.

use cnidarium::StateRead;
use lantau_compliance::gates::Fact;
use lantau_compliance::screening::Session;
use lantau_module_api::{BlockCtx, GasMeter, TxError};

use crate::tx::DecodedTx;

/// The facts of every message, in message order.
pub fn facts(tx: &DecodedTx) -> Vec<Fact> {
    tx.msgs.iter().enumerate().flat_map(|(i, m)| m.facts(i)).collect()
}

/// Opens the transaction's screening session on `state` (the gate chain runs); `reads` is the
/// log of a recording `state`, when the caller keeps what the verdict read.
pub async fn open<S: StateRead + Sync>(
    state: &S,
    gas: &GasMeter,
    block: &BlockCtx,
    tx: &DecodedTx,
    reads: Option<&lantau_module_api::reads::ReadLog>,
) -> Result<Session, TxError> {
    let types: Vec<&str> = tx.msgs.iter().map(|m| m.type_url()).collect();
    #[cfg_attr(not(test), allow(unused_mut))]
    let mut session = Session::open(state, gas, block, tx.signer, facts(tx), tx.payload.clone(), &types, reads).await?;
    // The test module's own gate (a read of a key no module's rules name).
    #[cfg(test)]
    crate::probe::gate(state, gas, tx, &mut session).await?;
    Ok(session)
}

//! Block production and its checks: PrepareProposal and ProcessProposal verify each
//! transaction of a proposed block as admission would, on the latest committed state after
//! the block's earlier transactions, replaying the footprints of those this node admitted
//! ([`crate::footprint`]), and keep the decodings the driver offered for FinalizeBlock.

use std::sync::Arc;

use cnidarium::StateDelta;
use lantau_module_api::{GasMeter, SdkError, TxError};
use tendermint::abci::{request, response};

use crate::admission::{internal, Admission};
use crate::footprint::Footprint;
use crate::pipeline::Mode;
use crate::shared::Shared;
use crate::storage::{self, Store};
use crate::tx::{self, DecodedTx};

/// Transactions the driver offered, by hash, with their footprints.
type Offered = std::collections::BTreeMap<[u8; 32], (Arc<DecodedTx>, Arc<Footprint>)>;

/// What block production keeps between ABCI calls.
#[derive(Default)]
pub(crate) struct Proposals {
    /// Transactions the driver already decoded (at admission), by hash, for the next block's
    /// PrepareProposal / ProcessProposal / FinalizeBlock. Decoding is pure, so a decoded
    /// transaction is exactly what decoding the same bytes again would give. With each, the
    /// footprint of its admission (or last recheck), so a proposal verifies it the way the
    /// recheck would.
    known: parking_lot::Mutex<Offered>,
    /// The last proposal PrepareProposal verified: the state version and a digest of its
    /// transactions' hashes, in order (ProcessProposal of the same list on the same state
    /// accepts it without verifying it again).
    verified: parking_lot::Mutex<Option<(u64, [u8; 32])>>,
}

/// What the memo of a verified proposal holds for `txs` on `version`.
fn digest<T: AsRef<[u8]>>(version: u64, txs: &[T]) -> (u64, [u8; 32]) {
    let mut all = Vec::with_capacity(txs.len().saturating_mul(32));
    for t in txs {
        all.extend_from_slice(&tx::tx_hash(t.as_ref()));
    }
    (version, lantau_crypto::sha256(&all))
}

impl Proposals {
    /// Replaces the offered decodings (see [`crate::App::offer_decoded`]).
    pub(crate) fn offer(&self, txs: impl IntoIterator<Item = (Arc<DecodedTx>, Arc<Footprint>)>) {
        *self.known.lock() = txs.into_iter().map(|(t, f)| (t.hash, (t, f))).collect();
    }

    /// Decodes `bytes`, or returns the decoding the driver offered for them.
    pub(crate) fn decode(&self, shared: &Shared, bytes: &[u8]) -> Result<Arc<DecodedTx>, TxError> {
        let hash = tx::tx_hash(bytes);
        if let Some((d, _)) = self.known.lock().get(&hash) {
            return Ok(d.clone());
        }
        tx::decode(bytes, &shared.cfg).map(Arc::new)
    }

    /// The offered decodings served a block.
    pub(crate) fn forget(&self) {
        let known = std::mem::take(&mut *self.known.lock());
        crate::dropper::drop_later(known);
    }

    /// Runs each of `txs`, in order, through admission (ante and gates) on a throwaway
    /// overlay of the latest committed state, as the block would meet them: `Ok` for those
    /// that pass, the first failure otherwise. A transaction whose decoding the driver offered
    /// is verified as the recheck verifies a waiting transaction: its admission's writes are
    /// replayed when everything that admission read holds what it found, and it runs again
    /// otherwise.
    async fn verify_in_order<T: AsRef<[u8]>>(&self, shared: &Shared, store: &Store, admission: &Admission, txs: &[T]) -> Vec<Result<(), TxError>> {
        let mut out = Vec::with_capacity(txs.len());
        let snap = store.cached_snapshot();
        // The block's gas: the sum of its transactions' gas limits, against `block.max_gas`.
        let max_gas = match storage::max_block_gas_at(&snap).await {
            Ok(m) => m,
            Err(e) => {
                let e = internal(e);
                return txs.iter().map(|_| Err(e.clone())).collect();
            }
        };
        let mut block_gas = 0u64;
        let mut r = match admission.rebuild_on(shared, snap).await {
            Ok(r) => r,
            Err(e) => {
                let e = internal(e);
                return txs.iter().map(|_| Err(e.clone())).collect();
            }
        };
        for t in txs {
            let t = t.as_ref();
            let hash = tx::tx_hash(t);
            let known = self.known.lock().get(&hash).cloned();
            let (decoded, footprint) = match known {
                Some((d, f)) => (d, Some(f)),
                None => match tx::decode(t, &shared.cfg) {
                    Ok(d) => (Arc::new(d), None),
                    Err(e) => {
                        out.push(Err(e));
                        continue;
                    }
                },
            };
            let gas_after = block_gas.saturating_add(decoded.gas_limit);
            if let Some(max) = max_gas.filter(|m| gas_after > *m) {
                out.push(Err(SdkError::OutOfGas(format!("the block's gas limits would reach {gas_after}, over the consensus maximum {max}")).into()));
                continue;
            }
            block_gas = gas_after;
            if let Some(fp) = footprint {
                out.push(admission.recheck(shared, &mut r, &decoded, &fp).await.map(|_| ()));
                continue;
            }
            let gas = GasMeter::new(decoded.gas_limit);
            let mut run_on = StateDelta::new(&mut r.overlay.state);
            let res = crate::pipeline::run(&shared.env(), &mut run_on, &decoded, &r.block, &gas, Mode::Propose).await.result;
            if res.is_ok() {
                let (_, changes) = run_on.flatten();
                r.overlay.apply(changes);
            }
            out.push(res);
        }
        out
    }

    /// ABCI PrepareProposal (see [`crate::App::prepare_proposal`]).
    pub(crate) async fn prepare(&self, shared: &Shared, store: &Store, admission: &Admission, req: request::PrepareProposal) -> response::PrepareProposal {
        let max = usize::try_from(req.max_tx_bytes).unwrap_or(usize::MAX);
        let mut total = 0usize;
        let mut fitting = Vec::with_capacity(req.txs.len());
        for t in req.txs {
            let Some(next) = total.checked_add(t.len()) else { break };
            if next > max {
                break;
            }
            total = next;
            fitting.push(t);
        }
        let version = store.cached_snapshot().version();
        let verdicts = self.verify_in_order(shared, store, admission, &fitting).await;
        let txs: Vec<_> = fitting.into_iter().zip(verdicts).filter(|(_, v)| v.is_ok()).map(|(t, _)| t).collect();
        // Each kept transaction passed after the kept ones before it: the list as proposed
        // passes on this state, which ProcessProposal would verify again.
        *self.verified.lock() = Some(digest(version, &txs));
        response::PrepareProposal { txs }
    }

    /// ABCI ProcessProposal (see [`crate::App::process_proposal`]).
    pub(crate) async fn process(&self, shared: &Shared, store: &Store, admission: &Admission, req: request::ProcessProposal) -> response::ProcessProposal {
        let version = store.cached_snapshot().version();
        if *self.verified.lock() == Some(digest(version, &req.txs)) {
            return response::ProcessProposal::Accept;
        }
        let verdicts = self.verify_in_order(shared, store, admission, &req.txs).await;
        match verdicts.iter().position(|v| v.is_err()) {
            None => response::ProcessProposal::Accept,
            Some(i) => {
                if let Some(Err(e)) = verdicts.get(i) {
                    tracing::warn!(height = %req.height, index = i, code = e.code, log = %e.log, "rejecting a proposal");
                }
                response::ProcessProposal::Reject
            }
        }
    }
}

//! What a consensus driver adds to each block's commit.
//!
//! The app writes block `H`'s state and calls the hook inside FinalizeBlock, before the commit
//! is prepared, so whatever the hook returns (the tx index, the embedded engine's block store)
//! lands in the non-verifiable store in the same atomic RocksDB write as the state: a crash can
//! never leave an indexed transaction without its state, or the reverse.

use tendermint::abci::{request, response};

/// Produces non-verifiable (key, value) writes for a finalized block.
pub trait BlockHook: Send + Sync {
    /// Called once per block with the request and the response FinalizeBlock is about to return
    /// (its `app_hash` is not computed yet: it is the root of the commit these writes join).
    fn on_finalize(&self, req: &request::FinalizeBlock, resp: &response::FinalizeBlock) -> Vec<(Vec<u8>, Vec<u8>)>;

    /// Called with the gate trace of each transaction screened at admission (`"check"`) or in
    /// a block (`"deliver"`), for the node's metrics. Writes nothing, changes nothing.
    fn on_verdict(&self, phase: &'static str, trace: &lantau_proto::chain::compliance::v1::GateTrace) {
        let _ = (phase, trace);
    }
}

/// A hook that writes nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHook;

impl BlockHook for NoHook {
    fn on_finalize(&self, _: &request::FinalizeBlock, _: &response::FinalizeBlock) -> Vec<(Vec<u8>, Vec<u8>)> {
        Vec::new()
    }
}

//! What a consensus driver adds to each block's commit.
//!
//! The app writes block `H`'s state and makes the hook's rows inside FinalizeBlock, before the
//! commit is prepared, so whatever the hook returns (the tx index, the embedded engine's block
//! store) lands in the non-verifiable store in the same atomic RocksDB write as the state: a
//! crash can never leave an indexed transaction without its state, or the reverse.
//!
//! A block's rows are made while it executes: FinalizeBlock hands each transaction's result to
//! the block's [`BlockRows`] as soon as the transaction ran, on a thread of their own, and
//! finishes them with the block's own part once every transaction ran. The rows do not depend
//! on that timing: they are what [`BlockHook::rows_of`] makes from the finished block.

use tendermint::abci::{request, response, types::ExecTxResult};

/// Produces non-verifiable (key, value) writes for a finalized block.
pub trait BlockHook: Send + Sync {
    /// Starts the rows of the block at `height`.
    fn begin_block(&self, height: u64) -> Box<dyn BlockRows>;

    /// All of a finalized block's rows at once: what [`BlockHook::begin_block`] makes when fed
    /// every transaction of `req` with its result in `resp`, then finished.
    fn rows_of(&self, req: &request::FinalizeBlock, resp: &response::FinalizeBlock) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut rows = self.begin_block(req.height.value());
        for (i, (tx, result)) in req.txs.iter().zip(&resp.tx_results).enumerate() {
            rows.tx(u32::try_from(i).unwrap_or(u32::MAX), tx, result);
        }
        rows.finish(req, resp)
    }

    /// Called with the gate trace of each transaction screened at admission (`"check"`) or in
    /// a block (`"deliver"`), for the node's metrics. Writes nothing, changes nothing.
    fn on_verdict(&self, phase: &'static str, trace: &lantau_proto::chain::compliance::v1::GateTrace) {
        let _ = (phase, trace);
    }
}

/// One block's rows being made.
pub trait BlockRows: Send {
    /// Transaction `index` of the block (in block order, each once), its bytes and its result.
    fn tx(&mut self, index: u32, tx: &[u8], result: &ExecTxResult);

    /// Every row of the block, once all its transactions were handed over: `req` and `resp`
    /// are the block and the response FinalizeBlock is about to return (its `app_hash` is not
    /// computed yet: it is the root of the commit these writes join).
    fn finish(self: Box<Self>, req: &request::FinalizeBlock, resp: &response::FinalizeBlock) -> Vec<(Vec<u8>, Vec<u8>)>;
}

/// A hook that writes nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHook;

impl BlockHook for NoHook {
    fn begin_block(&self, _: u64) -> Box<dyn BlockRows> {
        Box::new(NoHook)
    }
}

impl BlockRows for NoHook {
    fn tx(&mut self, _: u32, _: &[u8], _: &ExecTxResult) {}

    fn finish(self: Box<Self>, _: &request::FinalizeBlock, _: &response::FinalizeBlock) -> Vec<(Vec<u8>, Vec<u8>)> {
        Vec::new()
    }
}

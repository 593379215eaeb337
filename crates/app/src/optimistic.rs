//! Optimistic execution (docs/decisions.md, "A proposal executes while it is voted on"): under
//! CometBFT, a block this node accepts in ProcessProposal starts executing at once, while the
//! validators prevote and precommit it, and FinalizeBlock of that block takes the result instead
//! of executing it then. The early run is FinalizeBlock's own execution
//! ([`crate::App::finalize_block`]) on the request the decided proposal brings (same
//! transactions, height, time, hash, proposer, evidence and last commit), on the same committed
//! state (nothing commits between ProcessProposal and FinalizeBlock), so its answer and staged
//! commit are the ones FinalizeBlock would compute. FinalizeBlock compares its whole request
//! with the one the run was started on; a block decided otherwise (another round's proposal,
//! or one this node did not process) waits for the early run to end, drops it, and is
//! executed as decided.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tendermint::abci::{request, response};

use tokio::task::JoinHandle;

use crate::error::AppError;

/// A block's execution started at ProcessProposal.
struct Running {
    /// The FinalizeBlock request it answers.
    req: request::FinalizeBlock,
    task: JoinHandle<Result<response::FinalizeBlock, AppError>>,
    /// Set when another block is decided: the run stops before its next transaction.
    superseded: Arc<AtomicBool>,
    /// When it started.
    started: crate::stopwatch::Stopwatch,
}

/// The early run, if one was started and not yet taken.
#[derive(Default)]
pub(crate) struct Optimistic(parking_lot::Mutex<Option<Running>>);

/// The FinalizeBlock request of `p`'s block once it is decided; `None` when the proposal
/// carries no last commit (CometBFT always sends one).
pub(crate) fn decided(p: &request::ProcessProposal) -> Option<request::FinalizeBlock> {
    Some(request::FinalizeBlock {
        txs: p.txs.clone(),
        decided_last_commit: p.proposed_last_commit.clone()?,
        misbehavior: p.misbehavior.clone(),
        hash: p.hash,
        height: p.height,
        time: p.time,
        next_validators_hash: p.next_validators_hash,
        proposer_address: p.proposer_address,
    })
}

impl Optimistic {
    /// Keeps `task`, the execution of `req`'s block. An earlier run must have been dropped
    /// ([`Optimistic::drop_running`]).
    /// `superseded` stops it (see [`Running::stop`]).
    pub(crate) fn start(&self, req: request::FinalizeBlock, task: JoinHandle<Result<response::FinalizeBlock, AppError>>, superseded: Arc<AtomicBool>) {
        *self.0.lock() = Some(Running { req, task, superseded, started: crate::stopwatch::Stopwatch::start() });
    }

    /// Stops a run still held and waits for it to end, dropping its result.
    pub(crate) async fn drop_running(&self) {
        let running = self.0.lock().take();
        if let Some(r) = running {
            let height = r.req.height;
            r.stop().await;
            tracing::debug!(%height, "dropped an early execution of a block that was not decided");
        }
    }

    /// The early run's answer when it executed `req`'s block. Otherwise, what became of the
    /// run: none was held, it executed another block (dropped once it ended), or it was
    /// cancelled (the runtime stopping). A panic in it panics here, as it would have in
    /// FinalizeBlock.
    pub(crate) async fn take_for(&self, req: &request::FinalizeBlock) -> Result<Result<response::FinalizeBlock, AppError>, EarlyRun> {
        let Some(running) = self.0.lock().take() else { return Err(EarlyRun::None) };
        if running.req != *req {
            let height = running.req.height;
            running.stop().await;
            tracing::debug!(%height, decided = %req.height, "the decided block is not the one executed early: executing it now");
            return Err(EarlyRun::Dropped);
        }
        // How long the block had been executing when it was decided, and how long
        // FinalizeBlock still waited for it.
        let ahead_ms = running.started.ms();
        let waiting = crate::stopwatch::Stopwatch::start();
        let answer = running.task.await;
        tracing::debug!(height = %req.height, ahead_ms, waited_ms = waiting.ms(), "FinalizeBlock took the early execution");
        match answer {
            Ok(answer) => Ok(answer),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(EarlyRun::Dropped),
        }
    }
}

impl Running {
    /// Stops the run before its next transaction and waits for it to end: one execution at a
    /// time, and a stopped run stages nothing. A run that had already ended may have staged
    /// its commit, which the next execution replaces.
    async fn stop(self) {
        self.superseded.store(true, Ordering::Relaxed);
        let _dropped = self.task.await;
    }
}

/// What FinalizeBlock made of a block's early execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlyRun {
    /// It had executed the decided block: its answer was taken.
    Taken,
    /// It had executed another block (or was cancelled): dropped, the decided block executed.
    Dropped,
    /// None was running (not started, or the proposal was rejected).
    None,
}

impl EarlyRun {
    /// Its name, for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            EarlyRun::Taken => "taken",
            EarlyRun::Dropped => "dropped",
            EarlyRun::None => "none",
        }
    }
}

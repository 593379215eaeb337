//! The ABCI++ server (CometBFT v0.38 protocol, `tower-abci`): the same [`App`] the embedded
//! engine drives, through the same calls, served to a CometBFT process on a socket.
//!
//! CometBFT opens four connections (consensus, mempool, query, snapshot); `tower-abci` runs
//! each request's future on the connection's task, concurrently with the ones before it.
//! CometBFT sends consensus requests one at a time, so they stay ordered; it pipelines
//! CheckTx, and two transactions of one sender must be admitted in the order they arrived,
//! so the mempool service hands them to one task that admits them one after another.
//!
//! With the app-side mempool (`[mempool] app_side`, CometBFT's `mempool.type = "nop"`) the app
//! admits what clients send into its own pool ([`crate::txpool`]), PrepareProposal fills the
//! block from it, and Commit goes through it (the recheck beside the next block, as in the
//! embedded engine); CheckTx is then refused.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use lantau_app::tendermint::abci::{request, response, types::ExecTxResult};
use lantau_app::tendermint::v0_38::abci::{
    ConsensusRequest, ConsensusResponse, InfoRequest, InfoResponse, MempoolRequest, MempoolResponse, SnapshotRequest, SnapshotResponse,
};
use lantau_app::App;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::PollSender;
use tower::Service;
use tower_abci::BoxError;

use crate::metrics::Metrics;
use crate::txpool::TxPool;

type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send + 'static>>;

/// How the consensus connection answers (`[cometbft]` in the app's config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answering {
    /// Whether CometBFT's copy of each FinalizeBlock answer carries the events
    /// (`send_events`).
    pub send_events: bool,
    /// Whether a block accepted in ProcessProposal starts executing before it is decided
    /// (`optimistic_execution`).
    pub optimistic_execution: bool,
}

impl Default for Answering {
    fn default() -> Self {
        Self { send_events: true, optimistic_execution: true }
    }
}

/// Where the ABCI server listens: `tcp://host:port` or `unix:///path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AbciAddr {
    /// A TCP socket.
    Tcp(std::net::SocketAddr),
    /// A Unix domain socket.
    Unix(std::path::PathBuf),
}

impl std::str::FromStr for AbciAddr {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<Self> {
        if let Some(p) = s.strip_prefix("unix://") {
            if p.is_empty() {
                anyhow::bail!("the ABCI address {s:?} names no socket path");
            }
            return Ok(AbciAddr::Unix(p.into()));
        }
        let hostport = s.strip_prefix("tcp://").unwrap_or(s);
        hostport.parse().map(AbciAddr::Tcp).map_err(|e| anyhow::anyhow!("the ABCI address {s:?} is neither tcp://IP:PORT nor unix:///PATH ({e})"))
    }
}

impl std::fmt::Display for AbciAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AbciAddr::Tcp(a) => write!(f, "tcp://{a}"),
            AbciAddr::Unix(p) => write!(f, "unix://{}", p.display()),
        }
    }
}

/// Serves `app` to CometBFT on `addr` until the future is dropped or the listener fails.
/// Each committed block goes to `committed` (the node interface's subscribers) when given and
/// someone listens.
/// With `pool` (the app-side mempool, and the most transactions a block takes from it),
/// proposals are filled from it and commits go through it; CometBFT's mempool must be off.
/// `opts` are the `[cometbft]` settings of how blocks are answered.
pub async fn serve(
    app: Arc<App>,
    metrics: Arc<Metrics>,
    committed: Option<crate::comet::CommitFeed>,
    pool: Option<(Arc<TxPool>, usize)>,
    opts: Answering,
    addr: &AbciAddr,
) -> anyhow::Result<()> {
    // A failed consensus call (a block the app cannot execute or persist) ends the serving:
    // CometBFT stops on the broken connection, and this process exits with the error instead
    // of staying up.
    let (halt, mut halted) = mpsc::unbounded_channel::<String>();
    let server = tower_abci::v038::Server::builder()
        .consensus(Consensus {
            app: app.clone(),
            metrics: metrics.clone(),
            committed: committed.map(Arc::new),
            pending: Arc::new(parking_lot::Mutex::new(None)),
            finalized: Arc::new(parking_lot::Mutex::new(None)),
            pool: pool.clone(),
            opts,
            halt,
        })
        .mempool(Mempool::start(app.clone(), metrics, pool.is_some()))
        .info(Info(app.clone()))
        .snapshot(Snapshots(app))
        .finish()
        .ok_or_else(|| anyhow::anyhow!("ABCI server incomplete"))?;
    if let AbciAddr::Unix(p) = addr {
        // A socket file left by an earlier run would refuse the bind.
        if p.exists() {
            std::fs::remove_file(p)?;
        }
    }
    let listen = async {
        match addr {
            AbciAddr::Tcp(a) => server.listen_tcp(a).await,
            AbciAddr::Unix(p) => server.listen_unix(p).await,
        }
    };
    tokio::select! {
        res = listen => res.map_err(|e| anyhow::anyhow!("ABCI server on {addr}: {e}")),
        Some(why) = halted.recv() => Err(anyhow::anyhow!("ABCI {why}; the app stops (see the log above)")),
    }
}

fn fatal(halt: &mpsc::UnboundedSender<String>, what: &str, e: impl std::fmt::Display) -> BoxError {
    // An error on the consensus connection stops CometBFT: the app cannot go on from a
    // block it failed to execute or persist, and halting is what the spec asks for. The
    // server stops too.
    tracing::error!(error = %e, "ABCI {what} failed");
    let _stopping = halt.send(format!("{what} failed: {e}"));
    format!("{what}: {e}").into()
}

/// A finalized block's height and its transactions' hashes.
type Finalized = (u64, Vec<[u8; 32]>);

/// A finalized block's whole answer (with its events), kept until its Commit; with its request
/// when the commit feed listened as the block was finalized.
struct Pending {
    req: Option<request::FinalizeBlock>,
    resp: response::FinalizeBlock,
}

/// The consensus connection.
#[derive(Clone)]
struct Consensus {
    app: Arc<App>,
    metrics: Arc<Metrics>,
    committed: Option<Arc<crate::comet::CommitFeed>>,
    /// How blocks are answered.
    opts: Answering,
    /// The finalized block's answer, waiting for its Commit.
    pending: Arc<parking_lot::Mutex<Option<Pending>>>,
    /// Its height and transactions' hashes (what the app-side mempool drops at the commit).
    finalized: Arc<parking_lot::Mutex<Option<Finalized>>>,
    /// The app-side mempool and the most transactions a block takes from it.
    pool: Option<(Arc<TxPool>, usize)>,
    /// Stops the server (a consensus call failed).
    halt: mpsc::UnboundedSender<String>,
}

impl Service<ConsensusRequest> for Consensus {
    type Response = ConsensusResponse;
    type Error = BoxError;
    type Future = BoxFuture<ConsensusResponse>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: ConsensusRequest) -> Self::Future {
        let (app, metrics, committed, pending, halt) =
            (self.app.clone(), self.metrics.clone(), self.committed.clone(), self.pending.clone(), self.halt.clone());
        let (finalized, pool, opts) = (self.finalized.clone(), self.pool.clone(), self.opts);
        Box::pin(async move {
            let t = std::time::Instant::now();
            Ok(match req {
                ConsensusRequest::InitChain(r) => ConsensusResponse::InitChain(app.init_chain(r).await.map_err(|e| fatal(&halt, "InitChain", e))?),
                // What this node's CheckTx decoded and screened is offered to the proposal,
                // which then verifies it as the recheck does, and to FinalizeBlock.
                ConsensusRequest::PrepareProposal(mut r) => {
                    match &pool {
                        // The app-side mempool: the proposal is what it holds, as the embedded
                        // engine reaps it (CometBFT's own mempool is off and offers nothing).
                        Some((pool, max_txs)) => {
                            let max_gas = app.queries().max_block_gas().await.map_err(|e| fatal(&halt, "PrepareProposal", e))?;
                            let max_bytes = usize::try_from(r.max_tx_bytes).unwrap_or(0);
                            let (reaped, _) = pool.reap(max_bytes, *max_txs, max_gas);
                            r.txs = reaped.iter().map(|e| e.bytes.as_ref().clone().into()).collect();
                        }
                        None => app.offer_checked(&r.txs),
                    }
                    ConsensusResponse::PrepareProposal(app.prepare_proposal(r).await)
                }
                ConsensusRequest::ProcessProposal(r) => {
                    match &pool {
                        Some((pool, _)) => pool.offer_waiting(&r.txs),
                        None => app.offer_checked(&r.txs),
                    }
                    ConsensusResponse::ProcessProposal(if opts.optimistic_execution {
                        app.process_proposal_executing(r).await
                    } else {
                        app.process_proposal(r).await
                    })
                }
                ConsensusRequest::FinalizeBlock(r) => {
                    if pool.is_some() {
                        *finalized.lock() = Some((r.height.value(), r.txs.iter().map(|t| lantau_app::tx::tx_hash(t)).collect()));
                    }
                    let kept = committed.as_ref().filter(|f| (f.wanted)()).map(|_| r.clone());
                    let resp = if opts.optimistic_execution {
                        let (resp, early) = app.finalize_decided(r).await;
                        metrics.early_run(early);
                        resp
                    } else {
                        app.finalize_block(r).await
                    };
                    let resp = resp.map_err(|e| fatal(&halt, "FinalizeBlock", e))?;
                    metrics.block(&resp, t.elapsed().as_secs_f64());
                    // The answer with its events waits for Commit: then the feed takes it, or
                    // it is freed on a thread of its own (a block's events are hundreds of
                    // thousands of small allocations: freeing them before Commit delayed it).
                    let (for_comet, kept) = match (opts.send_events, kept) {
                        (true, None) => (resp, None),
                        (true, Some(req)) => (resp.clone(), Some(Pending { req: Some(req), resp })),
                        (false, req) => (without_events(&resp), Some(Pending { req, resp })),
                    };
                    *pending.lock() = kept;
                    ConsensusResponse::FinalizeBlock(for_comet)
                }
                ConsensusRequest::Commit => {
                    let resp = match &pool {
                        // The pool commits keeping the check overlay, then rechecks what waits
                        // beside the next block.
                        Some((pool, _)) => {
                            let (height, included) = finalized.lock().take().unwrap_or_default();
                            pool.commit(height, included).await.map_err(|e| fatal(&halt, "Commit", e))?;
                            response::Commit { data: Default::default(), retain_height: Default::default() }
                        }
                        None => app.commit().await.map_err(|e| fatal(&halt, "Commit", e))?,
                    };
                    metrics.commit(app.queries().last_height().await.unwrap_or(0), t.elapsed().as_secs_f64());
                    let kept = pending.lock().take();
                    if let Some(Pending { req, resp }) = kept {
                        match (committed.as_ref(), req) {
                            (Some(feed), Some(req)) => {
                                let _ = feed.tx.send(crate::comet::Committed { req, resp });
                            }
                            _ => lantau_app::dropper::drop_later(resp),
                        }
                    }
                    ConsensusResponse::Commit(resp)
                }
                // Vote extensions are not enabled (`vote_extensions_enable_height` 0).
                ConsensusRequest::ExtendVote(_) => ConsensusResponse::ExtendVote(response::ExtendVote { vote_extension: Default::default() }),
                ConsensusRequest::VerifyVoteExtension(_) => ConsensusResponse::VerifyVoteExtension(response::VerifyVoteExtension::Accept),
            })
        })
    }
}

/// FinalizeBlock's answer without its events: each result's code, codespace, data, log, info
/// and gas (what CometBFT's results hash covers and its `/block_results` shows), the app hash
/// and the updates. Made beside the answer, which keeps its events: no event is copied.
fn without_events(resp: &response::FinalizeBlock) -> response::FinalizeBlock {
    let tx_results = resp
        .tx_results
        .iter()
        .map(|r| ExecTxResult {
            code: r.code,
            data: r.data.clone(),
            log: r.log.clone(),
            info: r.info.clone(),
            gas_wanted: r.gas_wanted,
            gas_used: r.gas_used,
            events: Vec::new(),
            codespace: r.codespace.clone(),
        })
        .collect();
    response::FinalizeBlock {
        events: Vec::new(),
        tx_results,
        validator_updates: resp.validator_updates.clone(),
        consensus_param_updates: resp.consensus_param_updates.clone(),
        app_hash: resp.app_hash.clone(),
    }
}

type CheckJob = (request::CheckTx, oneshot::Sender<response::CheckTx>);

/// The mempool connection: CheckTx (new and recheck), admitted in arrival order.
#[derive(Clone)]
struct Mempool(PollSender<CheckJob>);

/// CheckTx's answer when the app keeps the mempool: CometBFT's must be off.
fn app_side_refusal() -> response::CheckTx {
    response::CheckTx {
        code: 1.into(),
        codespace: "mempool".into(),
        log: "this app keeps the mempool ([mempool] app_side = true): set CometBFT's [mempool] type = \"nop\" and broadcast to the app (REST, JSON-RPC or its CometBFT RPC front)".into(),
        ..Default::default()
    }
}

impl Mempool {
    /// How many CheckTx may wait for the admitting task before the connection stops reading.
    const QUEUE: usize = 1024;

    fn start(app: Arc<App>, metrics: Arc<Metrics>, app_side: bool) -> Self {
        let (tx, mut rx) = mpsc::channel::<CheckJob>(Self::QUEUE);
        tokio::spawn(async move {
            while let Some((req, reply)) = rx.recv().await {
                if app_side {
                    let _gone = reply.send(app_side_refusal());
                    continue;
                }
                let t = std::time::Instant::now();
                let recheck = req.kind == request::CheckTxKind::Recheck;
                let r = app.check_tx(req).await;
                if !recheck {
                    metrics.admission(r.code.value(), &r.codespace, t.elapsed().as_secs_f64());
                }
                let _gone = reply.send(r);
            }
        });
        Mempool(PollSender::new(tx))
    }
}

impl Service<MempoolRequest> for Mempool {
    type Response = MempoolResponse;
    type Error = BoxError;
    type Future = BoxFuture<MempoolResponse>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_reserve(cx).map_err(|_| "the admitting task stopped".into())
    }

    fn call(&mut self, req: MempoolRequest) -> Self::Future {
        let MempoolRequest::CheckTx(req) = req;
        let (reply, answer) = oneshot::channel();
        let sent = self.0.send_item((req, reply)).map_err(|_| BoxError::from("the admitting task stopped"));
        Box::pin(async move {
            sent?;
            let r = answer.await.map_err(|_| BoxError::from("the admitting task dropped a CheckTx"))?;
            Ok(MempoolResponse::CheckTx(r))
        })
    }
}

/// The query connection: Info, Query, Echo.
#[derive(Clone)]
struct Info(Arc<App>);

impl Service<InfoRequest> for Info {
    type Response = InfoResponse;
    type Error = BoxError;
    type Future = BoxFuture<InfoResponse>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: InfoRequest) -> Self::Future {
        let app = self.0.clone();
        Box::pin(async move {
            Ok(match req {
                InfoRequest::Info(r) => InfoResponse::Info(app.info(r).await.map_err(|e| {
                    // A store fault among them stops the process (`serve_abci`).
                    tracing::error!(error = %e, "ABCI Info failed");
                    BoxError::from(format!("Info: {e}"))
                })?),
                InfoRequest::Query(r) => InfoResponse::Query(app.abci_query(r).await),
                InfoRequest::Echo(r) => InfoResponse::Echo(response::Echo { message: r.message }),
            })
        })
    }
}

/// The snapshot connection. State sync is not served yet: no snapshots are listed, and an
/// offered one is rejected, so a joining node falls back to replaying blocks.
#[derive(Clone)]
struct Snapshots(Arc<App>);

impl Service<SnapshotRequest> for Snapshots {
    type Response = SnapshotResponse;
    type Error = BoxError;
    type Future = BoxFuture<SnapshotResponse>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: SnapshotRequest) -> Self::Future {
        let app = self.0.clone();
        Box::pin(async move {
            Ok(match req {
                SnapshotRequest::ListSnapshots => SnapshotResponse::ListSnapshots(app.list_snapshots()),
                SnapshotRequest::OfferSnapshot(r) => SnapshotResponse::OfferSnapshot(app.offer_snapshot(r).await),
                SnapshotRequest::LoadSnapshotChunk(r) => SnapshotResponse::LoadSnapshotChunk(app.load_snapshot_chunk(r)),
                SnapshotRequest::ApplySnapshotChunk(r) => SnapshotResponse::ApplySnapshotChunk(app.apply_snapshot_chunk(r).await),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::AbciAddr;

    #[test]
    fn abci_addresses_parse_as_cometbft_writes_them() {
        assert_eq!("tcp://127.0.0.1:26658".parse::<AbciAddr>().unwrap(), AbciAddr::Tcp("127.0.0.1:26658".parse().unwrap()));
        assert_eq!("127.0.0.1:26658".parse::<AbciAddr>().unwrap(), AbciAddr::Tcp("127.0.0.1:26658".parse().unwrap()));
        assert_eq!("unix:///tmp/app.sock".parse::<AbciAddr>().unwrap(), AbciAddr::Unix("/tmp/app.sock".into()));
        assert!("unix://".parse::<AbciAddr>().is_err());
        assert!("tcp://localhost".parse::<AbciAddr>().is_err());
    }
}

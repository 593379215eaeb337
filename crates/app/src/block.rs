//! Block execution and commit: FinalizeBlock runs every transaction of a decided block
//! through the pipeline on one overlay of the latest committed state, writes the block's
//! records and prepares the commit (whose root is the app hash); Commit persists it.

use std::sync::Arc;

use cosmos_sdk_proto::cosmos::base::abci::v1beta1::TxMsgData;
use lantau_module_api::{store as mstore, BlockCtx, Event, GasMeter, SdkError, TxError};
use lantau_store::{ChangeSet as _, FlatDelta, StagedWriteBatch};
use tendermint::abci::{request, response, types::ExecTxResult, Code};
use tendermint::AppHash;

use crate::error::AppError;
use crate::hooks::BlockRows;
use crate::pipeline::Mode;
use crate::proposal::Proposals;
use crate::shared::Shared;
use crate::state_key;
use crate::storage::{self, Store};
use crate::tx::DecodedTx;

/// A block executed and not yet committed.
struct Staged {
    batch: StagedWriteBatch,
    height: u64,
    /// For the log line at commit: the block's transactions and time.
    txs: usize,
    time: tendermint::Time,
    /// The version the block executed on, its verifiable write set and its non-verifiable
    /// writes the read cache holds (under the cache's names), to roll the cache forward at
    /// commit.
    base_version: u64,
    writes: Vec<(String, Option<Vec<u8>>)>,
    cached_nv_writes: Vec<(String, Option<Vec<u8>>)>,
    /// Every key the block wrote (what admissions made before it must read again).
    keys: crate::footprint::KeySet,
    /// Since its execution began (in ProcessProposal when it ran early): the log line at
    /// commit says how long the block took from there to its commit.
    started: crate::stopwatch::Stopwatch,
}

/// What execution keeps between FinalizeBlock and Commit.
#[derive(Default)]
pub(crate) struct Blocks {
    staged: parking_lot::Mutex<Option<Staged>>,
}

pub(crate) fn to_offset(t: tendermint::Time) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp_nanos(t.unix_timestamp_nanos()).unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

fn exec_err(e: &TxError, gas_wanted: u64, gas_used: u64, events: Vec<Event>) -> ExecTxResult {
    ExecTxResult {
        code: Code::from(e.code),
        data: Default::default(),
        log: e.log.clone(),
        info: String::new(),
        gas_wanted: i64::try_from(gas_wanted).unwrap_or(i64::MAX),
        gas_used: i64::try_from(gas_used).unwrap_or(i64::MAX),
        events,
        codespace: e.codespace.to_string(),
    }
}

/// Executes one transaction on the block overlay.
pub(crate) async fn deliver_tx<S: cnidarium::StateWrite + Send + Sync>(
    shared: &Shared,
    block_state: &mut S,
    decoded: Result<Arc<DecodedTx>, TxError>,
    block: &BlockCtx,
) -> ExecTxResult {
    let decoded = match decoded {
        Ok(d) => d,
        Err(e) => return exec_err(&e, 0, 0, vec![]),
    };
    let gas = GasMeter::new(decoded.gas_limit);
    let run = crate::pipeline::run(&shared.env(), block_state, &decoded, block, &gas, Mode::Deliver).await;
    match run.result {
        Err(e) => exec_err(&e, decoded.gas_limit, gas.used(), run.events),
        Ok(()) => ExecTxResult {
            code: Code::Ok,
            data: prost::Message::encode_to_vec(&TxMsgData { msg_responses: run.msg_responses, ..Default::default() }).into(),
            log: String::new(),
            info: String::new(),
            gas_wanted: i64::try_from(decoded.gas_limit).unwrap_or(i64::MAX),
            gas_used: i64::try_from(gas.used()).unwrap_or(i64::MAX),
            events: run.events,
            codespace: String::new(),
        },
    }
}

/// What the block's finish (after execution) hands back: the staged write, what the read
/// cache and the footprints take at commit, and the phases' sizes and times.
struct Finished {
    staged: anyhow::Result<lantau_store::StagedWriteBatch>,
    writes: Vec<(String, Option<Vec<u8>>)>,
    cached_nv_writes: Vec<(String, Option<Vec<u8>>)>,
    keys: crate::footprint::KeySet,
    index_rows: usize,
    index_bytes: usize,
    flatten_ms: f64,
    root_ms: f64,
    records_ms: f64,
    rows_ms: f64,
    join_ms: f64,
}

impl Blocks {
    /// ABCI FinalizeBlock (see [`crate::App::finalize_block`]).
    pub(crate) async fn finalize(
        &self,
        shared: &Shared,
        store: &Store,
        proposals: &Proposals,
        req: request::FinalizeBlock,
        superseded: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<response::FinalizeBlock, AppError> {
        // A store that failed a read is not executed on (nor committed to): the driver stops.
        AppError::faulted()?;
        let started = crate::stopwatch::Stopwatch::start();
        let height = req.height.value();
        let snap = store.cached_snapshot();
        let last = storage::height_at(snap.snapshot()).await?;
        if height != last.saturating_add(1) {
            return Err(AppError::HeightOutOfOrder { height, last });
        }
        let block = BlockCtx { height, time: to_offset(req.time), chain_id: shared.chain_id() };
        let base_version = snap.version();
        let max_gas = storage::max_block_gas_at(&snap).await?;
        let cached_keys = store.reads().len();
        let t_exec = crate::stopwatch::Stopwatch::start();
        let mut state = FlatDelta::new(snap);
        // A software upgrade scheduled for this height: applied here before any transaction,
        // or the block is not executed (the node stops).
        let upgrade_events = crate::upgrades::begin_block(&mut state, &shared.cfg.upgrade_handlers, &block).await?;
        let mut tx_results = Vec::with_capacity(req.txs.len());
        // The hook's rows of each transaction are made on a thread of their own as its result
        // comes, while the next ones execute.
        let mut feed = RowsFeed::start(shared.hook.begin_block(height));
        // ProcessProposal refuses a block over `block.max_gas`; should one be decided anyway,
        // the transactions past the limit fail (code 11) without executing, on every replica.
        let mut block_gas = 0u64;
        for (i, t) in req.txs.iter().enumerate() {
            // An early execution of a block another was decided over stops here (nothing it
            // did is kept: the block's state is dropped unstaged).
            if superseded.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
                return Err(AppError::Superseded);
            }
            let decoded = proposals.decode(shared, t);
            let wanted = decoded.as_ref().map(|d| d.gas_limit).unwrap_or(0);
            block_gas = block_gas.saturating_add(wanted);
            let result = if let Some(max) = max_gas.filter(|m| block_gas > *m) {
                let e = TxError::from(SdkError::OutOfGas(format!("the block's gas limits reach {block_gas}, over the consensus maximum {max}: not executed")));
                exec_err(&e, wanted, 0, vec![])
            } else {
                deliver_tx(shared, &mut state, decoded, &block).await
            };
            let result = Arc::new(result);
            feed.push(u32::try_from(i).unwrap_or(u32::MAX), t.clone(), result.clone());
            tx_results.push(result);
        }
        feed.flush();
        // The offered decodings served this block.
        proposals.forget();
        let gas = GasMeter::infinite();
        mstore::put(&mut state, &gas, state_key::HEIGHT.to_string(), height.to_be_bytes().to_vec()).map_err(AppError::BlockRecord)?;
        mstore::put(&mut state, &gas, state_key::BLOCK_TIME.to_string(), block.time.unix_timestamp_nanos().to_be_bytes().to_vec())
            .map_err(AppError::BlockRecord)?;

        let exec_ms = t_exec.ms();
        let t_finish = crate::stopwatch::Stopwatch::start();
        // The node's history of past heights: its baseline and pruning, read from the committed
        // state before this block.
        let retention = shared.cfg.history;
        let upkeep = crate::history::upkeep(&store.snapshot(), height, retention).await.map_err(AppError::store)?;
        // Execution ran over the read cache; the store takes its changes as they are. The
        // block's finish then runs on three threads, none reading what another writes: the
        // tree's update; the block's records (its writes for the read cache, the keys it
        // wrote); and the history's rows, then the block's write started with its
        // non-verifiable rows (its own, the history's, the hook's: the transactions' made during
        // execution, and the block's own, made meanwhile on a fourth). The tree's part joins
        // that write last. They run off the runtime's threads, which keep serving meanwhile.
        let (storage, reads) = (store.storage().clone(), store.reads_shared());
        let finish = move || {
            let t = crate::stopwatch::Stopwatch::start();
            // The rows' thread let go of the results once it made their rows.
            let rows = feed.close().unwrap_or_else(|p| std::panic::resume_unwind(p));
            let resp = response::FinalizeBlock {
                events: upgrade_events,
                tx_results: tx_results.into_iter().map(|r| Arc::try_unwrap(r).unwrap_or_else(|r| (*r).clone())).collect(),
                validator_updates: vec![],
                consensus_param_updates: None,
                app_hash: AppHash::default(),
            };
            let (_, changes) = state.flatten();
            let flatten_ms = t.ms();
            let (records, rows_side, tree, root_ms) = std::thread::scope(|scope| {
                let rows = scope.spawn(|| in_key_order(rows.finish(&req, &resp)));
                let records = scope.spawn(|| {
                    let t = crate::stopwatch::Stopwatch::start();
                    let writes: Vec<(String, Option<Vec<u8>>)> = changes.unwritten_changes().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                    let cached_nv_writes = reads.nonverifiable_writes(changes.nonverifiable_changes().iter());
                    let keys: crate::footprint::KeySet = crate::footprint::written_keys(&changes).collect();
                    if tracing::enabled!(tracing::Level::TRACE) {
                        let by = count_by_prefix(changes.nonverifiable_changes().keys().map(Vec::as_slice), 3);
                        tracing::trace!(?by, "non-verifiable writes of the block's transactions by prefix");
                    }
                    (writes, cached_nv_writes, keys, t.ms())
                });
                let rows_side = scope.spawn(|| {
                    let t = crate::stopwatch::Stopwatch::start();
                    let history = match retention {
                        crate::history::Retention::Off => Vec::new(),
                        _ => in_key_order(crate::history::rows(height, changes.unwritten_changes(), changes.nonverifiable_changes())),
                    };
                    // Node-local rows: the history, its upkeep, the hook's rows. They follow the
                    // block's own non-verifiable changes, outside the tree (the hook sees the
                    // response before the app hash is known).
                    let rows = rows.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                    let own = changes.nonverifiable_changes().iter().map(|(k, v)| (k.as_slice(), v.as_deref()));
                    let history_rows = history.iter().map(|(k, v)| (k.as_slice(), Some(v.as_slice())));
                    let upkeep_rows = upkeep.iter().map(|(k, v)| (k.as_slice(), v.as_deref()));
                    let index_rows = rows.iter().map(|(k, v)| (k.as_slice(), Some(v.as_slice())));
                    let staged =
                        storage.stage_rows(base_version, changes.unwritten_changes().len(), own.chain(history_rows).chain(upkeep_rows).chain(index_rows));
                    (staged, history, rows, t.ms())
                });
                let t = crate::stopwatch::Stopwatch::start();
                let tree = storage.update_tree(base_version, &changes);
                let root_ms = t.ms();
                // A task that panicked panics here, as it would have on this thread.
                let records = records.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                (records, rows_side.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), tree, root_ms)
            });
            let (writes, cached_nv_writes, mut keys, records_ms) = records;
            let (staged_rows, history, rows, rows_ms) = rows_side;
            let t = crate::stopwatch::Stopwatch::start();
            keys.extend(rows.iter().map(|(k, _)| crate::footprint::fingerprint(1, k)));
            let staged = staged_rows.and_then(|staged_rows| storage.staged(staged_rows, tree?));
            let finished = Finished {
                staged,
                writes,
                cached_nv_writes,
                keys,
                index_rows: rows.len(),
                index_bytes: rows.iter().map(|(k, v)| k.len().saturating_add(v.len())).sum(),
                flatten_ms,
                root_ms,
                records_ms,
                rows_ms,
                join_ms: t.ms(),
            };
            crate::dropper::drop_later((changes, history, upkeep, rows));
            (finished, req, resp)
        };
        let (finished, req, mut resp) = match tokio::task::spawn_blocking(finish).await {
            Ok(done) => done,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => return Err(AppError::store(lantau_store::Stopping.into())),
        };
        let Finished { staged, writes, cached_nv_writes, keys, index_rows, index_bytes, flatten_ms, root_ms, records_ms, rows_ms, join_ms } = finished;
        let batch = staged.map_err(AppError::store)?;
        let finish_ms = t_finish.ms();
        tracing::debug!(
            height,
            txs = req.txs.len(),
            cached_keys,
            exec_ms,
            finish_ms,
            flatten_ms,
            root_ms,
            records_ms,
            rows_ms,
            join_ms,
            keys = writes.len(),
            index_rows,
            index_bytes,
            batch_entries = batch.entries(),
            batch_bytes = batch.bytes(),
            "finalize phases"
        );
        if tracing::enabled!(tracing::Level::TRACE) {
            let by = count_by_prefix(writes.iter().map(|(k, _)| k.as_bytes()), 2);
            tracing::trace!(?by, "verifiable writes by prefix");
        }
        resp.app_hash = AppHash::try_from(batch.root_hash().0.to_vec())?;
        // A transaction that met a store failure failed with an internal error no intact
        // replica would give: no result and no app hash of this block are answered.
        AppError::faulted()?;
        *self.staged.lock() = Some(Staged { batch, height, txs: req.txs.len(), time: req.time, base_version, writes, cached_nv_writes, keys, started });
        Ok(resp)
    }

    /// Persists the staged block atomically (state, tx index, block records) and rolls the
    /// read cache forward. Returns the height committed and the keys the block wrote.
    pub(crate) async fn commit(&self, store: &Store) -> Result<(u64, crate::footprint::KeySet), AppError> {
        AppError::faulted()?;
        let staged = self.staged.lock().take().ok_or(AppError::CommitWithoutFinalize)?;
        let root = staged.batch.root_hash().0;
        // A refused write (RocksDB refuses writes once a compaction met a damaged block) is a
        // store fault: the store returns it as an error.
        let t_write = crate::stopwatch::Stopwatch::start();
        store.storage().commit_batch(staged.batch).map_err(AppError::store)?;
        let write_ms = t_write.ms().round();
        store.reads().advance(staged.base_version, store.storage().latest_version(), staged.writes.iter().chain(&staged.cached_nv_writes).map(|(k, v)| (k, v)));
        // One INFO line per block, under either driver; `block_ms` is the wall time from the
        // start of its execution to here (under CometBFT it includes the votes the execution
        // overlapped); `write_ms` is the store's write of it.
        let block_ms = staged.started.ms().round();
        tracing::info!(height = staged.height, txs = staged.txs, time = %staged.time, block_ms, write_ms, app_hash = %const_hex::encode_upper(root), "committed block");
        crate::dropper::drop_later((staged.writes, staged.cached_nv_writes));
        Ok((staged.height, staged.keys))
    }
}

/// The hook's rows of a block being executed: the transactions' results, handed over in
/// batches to a thread that makes their rows while the next transactions execute.
enum RowsFeed {
    Thread {
        sender: std::sync::mpsc::Sender<Vec<FedTx>>,
        batch: Vec<FedTx>,
        thread: std::thread::JoinHandle<Option<Box<dyn BlockRows>>>,
    },
    /// Where no thread could be started: the rows are made as each result comes.
    Inline(Box<dyn BlockRows>),
}

/// A transaction handed to the rows: its index in the block, its bytes and its result.
type FedTx = (u32, bytes::Bytes, Arc<ExecTxResult>);

/// Results handed over together (one wakeup of the rows' thread each).
const FEED_BATCH: usize = 64;

impl RowsFeed {
    fn start(rows: Box<dyn BlockRows>) -> Self {
        let (sender, receiver) = std::sync::mpsc::channel::<Vec<FedTx>>();
        // The rows reach the thread through a channel, so that they stay here if none starts.
        let (hand, take) = std::sync::mpsc::sync_channel::<Box<dyn BlockRows>>(1);
        let work = move || {
            let mut rows = take.recv().ok()?;
            for batch in receiver {
                for (i, tx, result) in batch {
                    rows.tx(i, &tx, &result);
                }
            }
            Some(rows)
        };
        match std::thread::Builder::new().name("lantau-rows".into()).spawn(work) {
            Ok(thread) => match hand.send(rows) {
                Ok(()) => Self::Thread { sender, batch: Vec::with_capacity(FEED_BATCH), thread },
                Err(std::sync::mpsc::SendError(rows)) => Self::Inline(rows),
            },
            Err(e) => {
                tracing::warn!(error = %e, "no thread for the block's rows: they are made on the block's own");
                Self::Inline(rows)
            }
        }
    }

    /// Transaction `index`, its bytes and its result.
    fn push(&mut self, index: u32, tx: bytes::Bytes, result: Arc<ExecTxResult>) {
        match self {
            Self::Thread { sender, batch, .. } => {
                batch.push((index, tx, result));
                if batch.len() >= FEED_BATCH {
                    Self::send(sender, batch);
                }
            }
            Self::Inline(rows) => rows.tx(index, &tx, &result),
        }
    }

    /// Hands over the results pushed since the last batch.
    fn flush(&mut self) {
        if let Self::Thread { sender, batch, .. } = self {
            Self::send(sender, batch);
        }
    }

    fn send(sender: &std::sync::mpsc::Sender<Vec<FedTx>>, batch: &mut Vec<FedTx>) {
        if batch.is_empty() {
            return;
        }
        // A thread that is gone panicked: `close` says so.
        let _ = sender.send(std::mem::replace(batch, Vec::with_capacity(FEED_BATCH)));
    }

    /// The rows of every transaction pushed, once the thread made them (it then holds none of
    /// the results); the thread's panic if it panicked.
    fn close(mut self) -> std::thread::Result<Box<dyn BlockRows>> {
        self.flush();
        match self {
            Self::Thread { sender, thread, .. } => {
                drop(sender);
                // The thread is handed the rows before this variant is made.
                thread.join()?.ok_or_else(|| Box::new("the block's rows never reached their thread") as Box<dyn std::any::Any + Send>)
            }
            Self::Inline(rows) => Ok(rows),
        }
    }
}

/// Rows sorted by key, stably (a key written twice keeps its last value): RocksDB inserts a
/// batch into its memtable faster in key order, each insert starting where the last one ended.
fn in_key_order(mut rows: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<(Vec<u8>, Vec<u8>)> {
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// How many of `keys` fall under each prefix of their first `segments` `/`-separated parts
/// (a diagnostic for the block's writes).
fn count_by_prefix<'a>(keys: impl Iterator<Item = &'a [u8]>, segments: usize) -> std::collections::BTreeMap<String, usize> {
    let mut by = std::collections::BTreeMap::new();
    for k in keys {
        let prefix: Vec<&[u8]> = k.split(|b| *b == b'/').take(segments).collect();
        let n: &mut usize = by.entry(String::from_utf8_lossy(&prefix.join(&b'/')).into_owned()).or_default();
        *n = n.saturating_add(1);
    }
    by
}

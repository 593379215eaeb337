//! The Prometheus endpoint (`--metrics.laddr`, `GET /metrics`, OpenMetrics text).
//!
//! Both drivers feed the same [`Metrics`]: the embedded engine and the ABCI server record
//! admissions, blocks and commits through [`Metrics::admission`], [`Metrics::block`] and
//! [`Metrics::commit`]; the app's block hook reports each gate trace ([`Metrics::verdict`]).
//! Nothing here is read by the state machine.

use std::path::PathBuf;
use std::sync::Arc;

use lantau_app::tendermint::abci::response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// A transaction's outcome: `ok`, or the codespace and code that refused it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    /// `ok` or `error`.
    pub result: String,
    /// The error's codespace (empty when ok).
    pub codespace: String,
    /// The error's code (0 when ok).
    pub code: u32,
}

/// One gate's verdict.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GateLabels {
    /// `check` (admission) or `deliver` (in a block).
    pub phase: String,
    /// The gate.
    pub gate: String,
    /// `pass`, `fail`, `flag`, `skip`.
    pub status: String,
}

/// What FinalizeBlock made of a block's early execution.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EarlyLabels {
    /// `taken`, `dropped`, `none`.
    pub outcome: String,
}

/// A flag's decorator.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FlagLabels {
    /// `threshold`, `velocity`.
    pub decorator: String,
}

/// The node's metrics.
pub struct Metrics {
    registry: Registry,
    height: Gauge,
    txs: Family<ResultLabels, Counter>,
    admissions: Family<ResultLabels, Counter>,
    admission_seconds: Histogram,
    finalize_seconds: Histogram,
    commit_seconds: Histogram,
    block_txs: Histogram,
    mempool_txs: Gauge,
    mempool_bytes: Gauge,
    gates: Family<GateLabels, Counter>,
    /// The gate counters already made, by gate name, then phase and status: a verdict is one
    /// lookup, with no label built (each transaction reports every gate twice).
    gate_counters: parking_lot::RwLock<GateCounters>,
    flags: Family<FlagLabels, Counter>,
    early_runs: Family<EarlyLabels, Counter>,
    store_bytes: Gauge,
    store_dir: Option<PathBuf>,
    /// Reads the mempool's (transactions, bytes) at each scrape (the embedded engine's).
    mempool_source: parking_lot::Mutex<Option<MempoolSource>>,
}

/// Gate counters by gate name, then (phase, status).
type GateCounters = std::collections::HashMap<String, Vec<(&'static str, i32, Counter)>>;

type MempoolSource = Box<dyn Fn() -> (usize, usize) + Send + Sync>;

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn seconds() -> Histogram {
    // 100 µs … ~52 s.
    Histogram::new(exponential_buckets(0.0001, 2.0, 20))
}

impl Metrics {
    /// A new set, measuring the store's size under `store_dir` at each scrape.
    pub fn new(store_dir: Option<PathBuf>) -> Arc<Self> {
        let mut registry = Registry::with_prefix("lantau");
        let m = Metrics {
            height: Gauge::default(),
            txs: Family::default(),
            admissions: Family::default(),
            admission_seconds: seconds(),
            finalize_seconds: seconds(),
            commit_seconds: seconds(),
            block_txs: Histogram::new(exponential_buckets(1.0, 4.0, 10)),
            mempool_txs: Gauge::default(),
            mempool_bytes: Gauge::default(),
            gates: Family::default(),
            gate_counters: parking_lot::RwLock::default(),
            flags: Family::default(),
            early_runs: Family::default(),
            store_bytes: Gauge::default(),
            store_dir,
            mempool_source: parking_lot::Mutex::new(None),
            registry: Registry::default(),
        };
        registry.register("block_height", "Height of the last committed block", m.height.clone());
        registry.register("txs", "Transactions executed in blocks, by result", m.txs.clone());
        registry.register("admissions", "Transactions offered for admission (CheckTx), by result", m.admissions.clone());
        registry.register("admission_seconds", "Time to admit a transaction (CheckTx)", m.admission_seconds.clone());
        registry.register("finalize_block_seconds", "Time to execute a block (FinalizeBlock)", m.finalize_seconds.clone());
        registry.register("commit_seconds", "Time to persist a block (Commit)", m.commit_seconds.clone());
        registry.register("block_txs", "Transactions per block", m.block_txs.clone());
        registry.register("mempool_txs", "Transactions waiting in the mempool", m.mempool_txs.clone());
        registry.register("mempool_bytes", "Bytes waiting in the mempool", m.mempool_bytes.clone());
        registry.register("gate_verdicts", "Gate verdicts, by phase, gate and status", m.gates.clone());
        registry.register("flags_raised", "Flags raised, by decorator", m.flags.clone());
        registry.register(
            "early_executions",
            "Blocks executed while voted on (optimistic execution), by what FinalizeBlock made of the run: taken, dropped (another block was decided) or none",
            m.early_runs.clone(),
        );
        registry.register("store_bytes", "Size of the state store on disk", m.store_bytes.clone());
        Arc::new(Metrics { registry, ..m })
    }

    /// An admission's outcome and duration.
    pub fn admission(&self, code: u32, codespace: &str, seconds: f64) {
        self.admissions.get_or_create(&result_labels(code, codespace)).inc();
        self.admission_seconds.observe(seconds);
    }

    /// A finalized block: its transactions' results and the flags they raised.
    pub fn block(&self, resp: &response::FinalizeBlock, seconds: f64) {
        self.finalize_seconds.observe(seconds);
        self.block_txs.observe(resp.tx_results.len() as f64);
        for r in &resp.tx_results {
            self.txs.get_or_create(&result_labels(r.code.value(), &r.codespace)).inc();
            for e in r.events.iter().filter(|e| e.kind == "chain.compliance.v1.EventFlagEmitted") {
                let decorator = e
                    .attributes
                    .iter()
                    .find(|a| a.key_bytes() == b"decorator")
                    .and_then(|a| a.value_str().ok())
                    .map(|v| v.trim_matches('"').to_string())
                    .unwrap_or_default();
                self.flags.get_or_create(&FlagLabels { decorator }).inc();
            }
        }
    }

    /// What FinalizeBlock made of its block's early execution.
    pub fn early_run(&self, early: lantau_app::optimistic::EarlyRun) {
        self.early_runs.get_or_create(&EarlyLabels { outcome: early.as_str().to_string() }).inc();
    }

    /// A commit of block `height`.
    pub fn commit(&self, height: u64, seconds: f64) {
        self.commit_seconds.observe(seconds);
        self.height.set(i64::try_from(height).unwrap_or(i64::MAX));
    }

    /// Where the mempool's size is read at each scrape.
    pub fn mempool_source(&self, read: impl Fn() -> (usize, usize) + Send + Sync + 'static) {
        *self.mempool_source.lock() = Some(Box::new(read));
    }

    /// Each gate's verdict in a trace.
    pub fn verdict(&self, phase: &'static str, trace: &lantau_proto::chain::compliance::v1::GateTrace) {
        for g in &trace.results {
            let known =
                self.gate_counters.read().get(g.name.as_str()).and_then(|c| c.iter().find(|(p, s, _)| *p == phase && *s == g.status)).map(|(.., c)| c.clone());
            if let Some(c) = known {
                c.inc();
                continue;
            }
            let status = match lantau_proto::chain::compliance::v1::DecoratorResult::try_from(g.status) {
                Ok(s) => s.as_str_name().trim_start_matches("DECORATOR_RESULT_").to_ascii_lowercase(),
                Err(_) => g.status.to_string(),
            };
            // The family's counter, shared (a counter is a handle on one atomic).
            let c = self.gates.get_or_create(&GateLabels { phase: phase.into(), gate: g.name.clone(), status }).clone();
            c.inc();
            let mut made = self.gate_counters.write();
            let slot = made.entry(g.name.clone()).or_default();
            if !slot.iter().any(|(p, s, _)| *p == phase && *s == g.status) {
                slot.push((phase, g.status, c));
            }
        }
    }

    /// The OpenMetrics text of every metric.
    pub fn render(&self) -> String {
        if let Some(dir) = &self.store_dir {
            self.store_bytes.set(i64::try_from(dir_size(dir)).unwrap_or(i64::MAX));
        }
        if let Some(read) = self.mempool_source.lock().as_ref() {
            let (txs, bytes) = read();
            self.mempool_txs.set(i64::try_from(txs).unwrap_or(i64::MAX));
            self.mempool_bytes.set(i64::try_from(bytes).unwrap_or(i64::MAX));
        }
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

fn result_labels(code: u32, codespace: &str) -> ResultLabels {
    if code == 0 {
        ResultLabels { result: "ok".into(), codespace: String::new(), code: 0 }
    } else {
        ResultLabels { result: "error".into(), codespace: codespace.into(), code }
    }
}

fn dir_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// The router of `GET /metrics`.
pub fn router(metrics: Arc<Metrics>) -> axum::Router {
    use axum::routing::get;
    axum::Router::new().route(
        "/metrics",
        get(move || {
            let m = metrics.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], m.render()) }
        }),
    )
}

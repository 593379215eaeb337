//! Heavy queries (transaction search, the audit log, the flag queue, the report) take turns:
//! at most one fewer at once than the machine has cores, so at least one core's worth of the
//! servers' threads stays free for everything else (status, broadcasts, balances) however many
//! clients ask for broad searches at once. A heavy query waits its turn without holding a
//! thread; one that cannot get a turn within [`WAIT`] is refused as busy.

use std::sync::OnceLock;
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};

/// How long a heavy query waits for its turn before it is refused.
pub const WAIT: Duration = Duration::from_secs(10);

fn turns() -> &'static Semaphore {
    static TURNS: OnceLock<Semaphore> = OnceLock::new();
    TURNS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        Semaphore::new(cores.saturating_sub(1).max(1))
    })
}

/// The gRPC methods (also reachable through CometBFT's `abci_query` by path) that are heavy:
/// transaction search, the audit log, the flag queue and the report.
pub const HEAVY_METHODS: &[&str] =
    &[crate::grpc::GET_TXS_EVENT, lantau_app::compliance::QUERY_AUDIT_LOG, lantau_app::compliance::QUERY_FLAGS, lantau_app::compliance::QUERY_REPORT];

/// A turn when `method` is one of [`HEAVY_METHODS`], nothing otherwise.
pub async fn turn_for_method(method: &str) -> Result<Option<SemaphorePermit<'static>>, String> {
    if HEAVY_METHODS.contains(&method) {
        turn().await.map(Some)
    } else {
        Ok(None)
    }
}

/// Waits (bounded) for a heavy query's turn; held while the query runs and its answer renders.
pub async fn turn() -> Result<SemaphorePermit<'static>, String> {
    match tokio::time::timeout(WAIT, turns().acquire()).await {
        Ok(Ok(p)) => Ok(p),
        _ => Err(format!(
            "the node is busy answering other broad queries (searches, audit log, flags, report) and this one waited {} s for its turn; retry, or narrow it",
            WAIT.as_secs()
        )),
    }
}

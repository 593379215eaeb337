//! Limits of the state machine. They are consensus rules: every validator must use the same.

/// State-machine limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppConfig {
    /// Largest accepted transaction, in bytes (sdk code 21 above it).
    pub max_tx_bytes: usize,
    /// Largest gas limit a transaction may declare (sdk code 41 above it).
    pub max_gas_per_tx: u64,
    /// Longest memo, in characters (sdk code 12 above it).
    pub max_memo_chars: usize,
    /// How many verified signatures the node remembers, to skip re-verifying at execution the
    /// bytes it already verified at admission.
    pub sig_cache_size: usize,
    /// Whether the node serves SimulateTrace (a node without the hook answers
    /// FailedPrecondition). Node-local, not a consensus rule.
    pub simulation_hook: bool,
    /// Names of upgrades this node applies besides the release's own
    /// (`upgrades::RELEASE_HANDLERS`): for tests of the upgrade path. A consensus rule: every
    /// validator of a network must run the same.
    pub upgrade_handlers: Vec<String>,
    /// How many past heights the node keeps readable (`crate::history`). Node-local.
    pub history: crate::history::Retention,
}

/// 64 KiB: room for a multi-send with a few hundred outputs, far above any transfer.
pub const DEFAULT_MAX_TX_BYTES: usize = 64 * 1024;
/// 30 million gas, the Ethereum mainnet block gas limit, per transaction.
pub const DEFAULT_MAX_GAS_PER_TX: u64 = 30_000_000;

impl Default for AppConfig {
    fn default() -> Self {
        Self {
            max_tx_bytes: DEFAULT_MAX_TX_BYTES,
            max_gas_per_tx: DEFAULT_MAX_GAS_PER_TX,
            max_memo_chars: 256,
            sig_cache_size: 200_000,
            history: crate::history::Retention::default(),
            simulation_hook: true,
            upgrade_handlers: Vec::new(),
        }
    }
}

//! Wall-clock durations for the log only (FinalizeBlock's phases at debug level, each block's
//! `block_ms` at commit). Nothing
//! measured here reaches state, events or results: the state machine uses block time.

#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

/// A started stopwatch.
pub(crate) struct Stopwatch(std::time::Instant);

impl Stopwatch {
    /// Starts one.
    pub(crate) fn start() -> Self {
        Self(std::time::Instant::now())
    }

    /// Milliseconds since it started.
    pub(crate) fn ms(&self) -> f64 {
        self.0.elapsed().as_secs_f64() * 1e3
    }
}

//! Polling filters: `eth_newFilter`, `eth_newBlockFilter`, `eth_newPendingTransactionFilter`,
//! `eth_getFilterChanges`, `eth_getFilterLogs`, `eth_uninstallFilter`, as geth keeps them: in
//! the node's memory (not in state), each removed after [`FILTER_IDLE`] without a poll.
//!
//! A filter remembers the last block it delivered (its cursor), so each block's hashes and logs
//! reach a poller exactly once, whatever the polling rhythm; a poll delivers at most
//! [`MAX_POLL_BLOCKS`] blocks and the next poll goes on from there. A pending-transaction filter
//! collects the hashes of the Ethereum transactions this node admitted (through
//! `eth_sendRawTransaction`) since its last poll, at most [`MAX_PENDING_BACKLOG`] (the oldest are
//! dropped). Bounds: [`MAX_FILTERS`] on the node, [`MAX_FILTERS_PER_CLIENT`] per client address.

use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::methods::LogFilter;
use super::EthError;

/// A filter not polled for this long is removed (geth's `filterTimeout`).
pub const FILTER_IDLE: Duration = Duration::from_secs(5 * 60);
/// The most filters a node keeps.
pub const MAX_FILTERS: usize = 4096;
/// The most filters one client address keeps.
pub const MAX_FILTERS_PER_CLIENT: usize = 64;
/// The most blocks one poll of a block or log filter covers.
pub const MAX_POLL_BLOCKS: u64 = 1000;
/// The most transaction hashes a pending-transaction filter holds between polls.
pub const MAX_PENDING_BACKLOG: usize = 4096;

/// What a filter watches.
#[derive(Debug, Clone)]
pub enum Kind {
    /// New blocks' hashes.
    Blocks,
    /// Hashes of Ethereum transactions admitted by this node.
    Pending(VecDeque<[u8; 32]>),
    /// Logs matching the filter, with the filter's own block bounds resolved at creation.
    Logs {
        /// The filter as given (addresses, topics).
        filter: LogFilter,
        /// The last block it covers (`None`: it follows the chain).
        until: Option<u64>,
    },
}

#[derive(Debug)]
struct Filter {
    kind: Kind,
    client: IpAddr,
    /// The last block delivered.
    cursor: u64,
    touched: Instant,
}

/// What a poll has to deliver.
#[derive(Debug)]
pub enum Due {
    /// Blocks `from..=to` (empty when `from > to`): their hashes.
    Blocks {
        /// The first block.
        from: u64,
        /// The last block.
        to: u64,
    },
    /// These transaction hashes.
    Pending(Vec<[u8; 32]>),
    /// Logs of blocks `from..=to` matching `filter`.
    Logs {
        /// The addresses and topics.
        filter: LogFilter,
        /// The first block.
        from: u64,
        /// The last block.
        to: u64,
    },
}

/// The node's filters.
#[derive(Debug, Default)]
pub struct Filters {
    inner: Mutex<BTreeMap<String, Filter>>,
}

fn not_found() -> EthError {
    EthError::Server("filter not found".into())
}

impl Filters {
    /// Installs a filter for `client`, delivering from after block `cursor`; its id.
    pub fn install(&self, client: IpAddr, kind: Kind, cursor: u64, now: Instant) -> Result<String, EthError> {
        let mut m = self.inner.lock();
        m.retain(|_, f| now.saturating_duration_since(f.touched) < FILTER_IDLE);
        if m.len() >= MAX_FILTERS {
            return Err(EthError::LimitExceeded(format!(
                "the node keeps at most {MAX_FILTERS} filters: uninstall some (eth_uninstallFilter) or wait for idle ones to expire"
            )));
        }
        if m.values().filter(|f| f.client == client).count() >= MAX_FILTERS_PER_CLIENT {
            return Err(EthError::LimitExceeded(format!(
                "at most {MAX_FILTERS_PER_CLIENT} filters per client: uninstall some (eth_uninstallFilter) or let them expire ({} s without a poll)",
                FILTER_IDLE.as_secs()
            )));
        }
        let id = loop {
            let id = format!("0x{}", const_hex::encode(rand::random::<[u8; 16]>()));
            if !m.contains_key(&id) {
                break id;
            }
        };
        m.insert(id.clone(), Filter { kind, client, cursor, touched: now });
        Ok(id)
    }

    /// Removes a filter; whether it existed.
    pub fn uninstall(&self, id: &str) -> bool {
        self.inner.lock().remove(&id.to_ascii_lowercase()).is_some()
    }

    /// Records a transaction this node admitted in every pending-transaction filter.
    pub fn admitted(&self, hash: [u8; 32]) {
        for f in self.inner.lock().values_mut() {
            if let Kind::Pending(q) = &mut f.kind {
                if q.len() >= MAX_PENDING_BACKLOG {
                    q.pop_front();
                }
                q.push_back(hash);
            }
        }
    }

    /// What a poll of `id` delivers now that the chain is at `latest`, moving the cursor past
    /// it (so it is delivered once).
    pub fn poll(&self, id: &str, latest: u64, now: Instant) -> Result<Due, EthError> {
        let mut m = self.inner.lock();
        let f = m.get_mut(&id.to_ascii_lowercase()).filter(|f| now.saturating_duration_since(f.touched) < FILTER_IDLE).ok_or_else(not_found)?;
        f.touched = now;
        let from = f.cursor.saturating_add(1);
        let to = |until: Option<u64>| latest.min(until.unwrap_or(u64::MAX)).min(from.saturating_add(MAX_POLL_BLOCKS - 1));
        Ok(match &mut f.kind {
            Kind::Pending(q) => Due::Pending(q.drain(..).collect()),
            Kind::Blocks => {
                let to = to(None);
                f.cursor = f.cursor.max(to);
                Due::Blocks { from, to }
            }
            Kind::Logs { filter, until } => {
                let to = to(*until);
                f.cursor = f.cursor.max(to);
                Due::Logs { filter: filter.clone(), from, to }
            }
        })
    }

    /// A log filter's whole query (for `eth_getFilterLogs`); refreshes its lifetime.
    pub fn log_filter(&self, id: &str, now: Instant) -> Result<LogFilter, EthError> {
        let mut m = self.inner.lock();
        let f = m.get_mut(&id.to_ascii_lowercase()).filter(|f| now.saturating_duration_since(f.touched) < FILTER_IDLE).ok_or_else(not_found)?;
        f.touched = now;
        match &f.kind {
            Kind::Logs { filter, .. } => Ok(filter.clone()),
            _ => Err(EthError::InvalidParams("eth_getFilterLogs: not a log filter (eth_newFilter)".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, n])
    }

    #[test]
    fn each_block_is_delivered_once_and_a_poll_is_bounded() {
        let f = Filters::default();
        let t = Instant::now();
        let id = f.install(ip(1), Kind::Blocks, 10, t).unwrap();
        assert!(matches!(f.poll(&id, 10, t).unwrap(), Due::Blocks { from: 11, to: 10 }));
        assert!(matches!(f.poll(&id, 12, t).unwrap(), Due::Blocks { from: 11, to: 12 }));
        assert!(matches!(f.poll(&id, 12, t).unwrap(), Due::Blocks { from: 13, to: 12 }));
        assert!(matches!(f.poll(&id, 5000, t).unwrap(), Due::Blocks { from: 13, to: 1012 }));
        assert!(matches!(f.poll(&id.to_uppercase().replace("0X", "0x"), 5000, t).unwrap(), Due::Blocks { from: 1013, to: 2012 }));
    }

    #[test]
    fn a_log_filter_stops_at_its_to_block() {
        let f = Filters::default();
        let t = Instant::now();
        let id = f.install(ip(1), Kind::Logs { filter: LogFilter::default(), until: Some(15) }, 10, t).unwrap();
        assert!(matches!(f.poll(&id, 20, t).unwrap(), Due::Logs { from: 11, to: 15, .. }));
        assert!(matches!(f.poll(&id, 30, t).unwrap(), Due::Logs { from: 16, to: 15, .. }));
        assert!(f.log_filter(&id, t).is_ok());
        let blocks = f.install(ip(1), Kind::Blocks, 0, t).unwrap();
        assert!(f.log_filter(&blocks, t).is_err());
    }

    #[test]
    fn pending_hashes_are_kept_until_polled_and_bounded() {
        let f = Filters::default();
        let t = Instant::now();
        let id = f.install(ip(1), Kind::Pending(VecDeque::new()), 0, t).unwrap();
        f.admitted([1; 32]);
        f.admitted([2; 32]);
        assert!(matches!(f.poll(&id, 0, t).unwrap(), Due::Pending(h) if h == vec![[1; 32], [2; 32]]));
        assert!(matches!(f.poll(&id, 0, t).unwrap(), Due::Pending(h) if h.is_empty()));
        for i in 0..MAX_PENDING_BACKLOG + 5 {
            f.admitted([(i % 251) as u8; 32]);
        }
        assert!(matches!(f.poll(&id, 0, t).unwrap(), Due::Pending(h) if h.len() == MAX_PENDING_BACKLOG));
    }

    #[test]
    fn filters_expire_when_idle_are_bounded_per_client_and_uninstall_once() {
        let f = Filters::default();
        let t = Instant::now();
        let id = f.install(ip(1), Kind::Blocks, 0, t).unwrap();
        assert!(f.poll(&id, 0, t + FILTER_IDLE - Duration::from_secs(1)).is_ok());
        assert_eq!(f.poll(&id, 0, t + FILTER_IDLE * 2).unwrap_err(), EthError::Server("filter not found".into()));
        for _ in 0..MAX_FILTERS_PER_CLIENT {
            f.install(ip(2), Kind::Blocks, 0, t).unwrap();
        }
        let e = f.install(ip(2), Kind::Blocks, 0, t).unwrap_err();
        assert_eq!(e.code(), -32005, "{e}");
        // Another client is not held back.
        let other = f.install(ip(3), Kind::Blocks, 0, t).unwrap();
        assert!(f.uninstall(&other));
        assert!(!f.uninstall(&other));
        // Idle filters free their client's room.
        assert!(f.install(ip(2), Kind::Blocks, 0, t + FILTER_IDLE).is_ok());
    }
}

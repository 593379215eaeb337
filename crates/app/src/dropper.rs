//! Values freed on a thread of their own, off the path that produces the next block.
//!
//! What a block leaves behind (its results, the mempool entries it included with their
//! decodings and footprints, the writes the read cache took in) is hundreds of thousands of
//! small allocations in a block of 10,000 transfers. Freeing them where they were last used
//! held the block's thread (and, for the mempool's entries, the mempool's lock) for ~5 % of
//! such a block's time. [`drop_later`] hands them to one background thread instead. Freeing
//! memory reads and writes no state, so replicas cannot tell the difference.
use std::sync::mpsc::{channel, Sender};
use std::sync::OnceLock;

type Retired = Box<dyn Send>;

/// The background thread's inbox; `None` when the thread could not be started.
fn inbox() -> Option<&'static Sender<Retired>> {
    static INBOX: OnceLock<Option<Sender<Retired>>> = OnceLock::new();
    INBOX
        .get_or_init(|| {
            let (tx, rx) = channel::<Retired>();
            let started = std::thread::Builder::new().name("lantau-drop".into()).spawn(move || {
                for retired in rx {
                    drop(retired);
                }
            });
            started.ok().map(|_| tx)
        })
        .as_ref()
}

/// Drops `value` on the background thread; where it is when that thread is not running.
pub fn drop_later<T: Send + 'static>(value: T) {
    let retired: Retired = Box::new(value);
    match inbox() {
        Some(tx) => {
            // A send fails only when the thread is gone; the value comes back and drops here.
            let _ = tx.send(retired);
        }
        None => drop(retired),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reports the thread it was dropped on.
    struct Witness(std::sync::mpsc::Sender<std::thread::ThreadId>);

    impl Drop for Witness {
        fn drop(&mut self) {
            let _ = self.0.send(std::thread::current().id());
        }
    }

    #[test]
    fn values_are_dropped_on_another_thread() {
        let (tx, rx) = channel();
        drop_later(vec![Witness(tx.clone()), Witness(tx)]);
        for _ in 0..2 {
            let on = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("dropped within 10 s");
            assert_ne!(on, std::thread::current().id());
        }
    }
}

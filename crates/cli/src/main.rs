//! `lantaud`: the Lantau node and CLI in one binary. The node itself is the `lantau-node`
//! library; this crate is the command line over it and over the client library.
//!
//! Layout: `cli.rs` (the command tree, `start`/`init`/`keys`, bank tx and queries, output),
//! `cli/registry.rs` (kyc, stablecoin, reserve and erc20 commands), `cli/compliance.rs`
//! (compliance and delegation commands), `bench.rs` (`lantaud bench`). `main` only sets up
//! logging and the runtime.

#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // not the state machine
#![cfg_attr(test, allow(unused_crate_dependencies))] // dev-dependencies serve tests/it

mod bench;
mod cli;

/// mimalloc for every Rust allocation of the node: under load glibc's malloc and free took a
/// fifth of the CPU (docs/performance.md, "The EVM path: profile").
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;

/// How long the node keeps memory it freed before it goes back to the OS ([`keep_freed_memory`]).
const PURGE_AFTER_MS: std::ffi::c_long = 10_000;

/// mimalloc hands memory it has freed back to the OS after its purge delay (1 s in mimalloc 3).
/// A node under load frees a block's working set once the block is committed and allocates it
/// again for the next one a second or more later, so each block faulted the same pages in
/// again: about a million minor faults for 60,000 gated transfers under CometBFT, ~7 % of the
/// app's CPU in a profile (docs/performance.md, "Under CometBFT"). The node keeps freed memory
/// for [`PURGE_AFTER_MS`] (jemalloc's default decay), longer than blocks are apart under load,
/// and a quiet node still gives it back. `MIMALLOC_PURGE_DELAY` in the environment (mimalloc's
/// own setting) wins.
fn keep_freed_memory() {
    /// `mi_option_purge_delay` in mimalloc 3's `mimalloc.h` (after `eager_commit_delay`, 14);
    /// the bindings name the options around it but not this one.
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    /// mimalloc 3's default purge delay: the option at that index is the purge delay only if
    /// it holds this, so another mimalloc's numbering is left alone.
    const DEFAULT_MS: std::ffi::c_long = 1000;
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() || std::env::var_os("MIMALLOC_RESET_DELAY").is_some() {
        return;
    }
    // SAFETY: reading and setting an allocator option; both calls are thread-safe and take no
    // pointers.
    unsafe {
        if libmimalloc_sys::mi_option_get(PURGE_DELAY) == DEFAULT_MS {
            libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_AFTER_MS);
        }
    }
}

/// RocksDB's C++ allocates through glibc's malloc (the node's Rust code through mimalloc). A
/// block's write batch grows by doubling to ~100 MB on a blocking thread, and glibc serves an
/// allocation that large with a fresh mapping (a thread's arena holds at most 64 MiB, and its
/// mmap threshold tops out at 32 MiB) and unmaps it when freed: every block faulted in and
/// zeroed its batch's pages again. One arena (it grows without that bound), no mappings below
/// 1 GiB and no trimming below 512 MiB free keep that memory from one block to the next: the
/// Commit of a full block took ~30 ms less (199 against 165-171 ms; docs/performance.md). A
/// `GLIBC_TUNABLES` or `MALLOC_ARENA_MAX` in the environment is left to decide instead.
fn keep_store_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("GLIBC_TUNABLES").is_none() && std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt takes integers only; called before any thread is started.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
        }
    }
}

/// Transparent huge pages off for this process. mimalloc asks for huge pages on its arenas
/// (`MADV_HUGEPAGE`), so the first touch of each 2 MiB of a growing heap faults in and zeroes
/// the whole 2 MiB, mostly for a few small allocations: in a profile of a full block the
/// kernel's page zeroing was ~40 % of the block's samples, and without huge pages the same
/// block executed and committed in ~27 % less time (docs/performance.md, "The gas schedule").
/// `prctl(PR_SET_THP_DISABLE)` covers every allocation of the process (mimalloc's arenas
/// reserved before `main`, RocksDB's), where mimalloc's own option would reach only later
/// arenas. `LANTAU_ALLOW_THP=1` leaves the system's setting.
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    if !huge_pages_allowed() {
        // SAFETY: prctl with integer arguments only; it changes this process's THP policy.
        let _ = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
}

/// Whether the environment keeps the system's transparent huge pages (`LANTAU_ALLOW_THP=1`).
#[cfg(target_os = "linux")]
fn huge_pages_allowed() -> bool {
    std::env::var_os("LANTAU_ALLOW_THP").is_some_and(|v| v == "1")
}

fn main() -> std::process::ExitCode {
    use std::io::IsTerminal as _;
    no_transparent_huge_pages();
    keep_freed_memory();
    keep_store_memory();
    let args = cli::Cli::parse();
    let json_errors = args.output_format() == cli::Output::Json;
    // `LANTAU_LOG`, else `RUST_LOG` (the usual EnvFilter syntax: `info`, `lantau_node=debug`),
    // else `info`. Colours only on a terminal, and never under `NO_COLOR`.
    let filter = ["LANTAU_LOG", "RUST_LOG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().and_then(|s| tracing_subscriber::EnvFilter::try_new(s).ok()))
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt().with_env_filter(filter).with_ansi(ansi).with_writer(std::io::stderr).init();
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match rt.block_on(cli::run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // Under `--output json` the error is a JSON object too (on stderr, like the text).
            if json_errors {
                eprintln!("{}", serde_json::json!({"error": format!("{e:#}")}));
            } else {
                eprintln!("error: {e:#}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    /// The option the node sets is mimalloc's purge delay: it held mimalloc 3's default before,
    /// and the node's setting after (unless the environment chose one).
    #[test]
    fn the_node_keeps_freed_memory_for_reuse() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() || std::env::var_os("MIMALLOC_RESET_DELAY").is_some() {
            return;
        }
        super::keep_freed_memory();
        // SAFETY: reading an allocator option.
        let now = unsafe { libmimalloc_sys::mi_option_get(15) };
        assert_eq!(now, super::PURGE_AFTER_MS, "the node's purge delay");
    }

    /// The node's process runs without transparent huge pages (unless `LANTAU_ALLOW_THP=1`).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_node_turns_transparent_huge_pages_off() {
        if super::huge_pages_allowed() {
            return;
        }
        super::no_transparent_huge_pages();
        // SAFETY: prctl reading this process's THP policy.
        let off = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        assert_eq!(off, 1, "PR_GET_THP_DISABLE");
    }
}

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

fn main() -> std::process::ExitCode {
    use std::io::IsTerminal as _;
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

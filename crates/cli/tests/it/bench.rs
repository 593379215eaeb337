//! `lantaud bench --cometbft` and `--kvstore` run end to end on a tiny load: the network
//! starts (the apps keeping the mempool, or CometBFT), every transaction sent is admitted and
//! committed, and the report carries its keys.
//! No figure is asserted (benchmarks are not tests).

use std::process::Command;

use serde_json::Value;

fn bench(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_lantaud"))
        .args(["bench", "--output", "json", "--accounts", "6", "--per-account", "3", "--concurrency", "3", "--duration", "60", "--timeout-commit", "200ms"])
        .args(args)
        .env("LANTAU_LOG", "warn")
        .output()
        .unwrap();
    assert!(out.status.success(), "bench {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("bench {args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn assert_all_committed(r: &Value, driver: &str) {
    assert_eq!(r["driver"], driver, "{r}");
    assert_eq!(r["sent"], 18, "{r}");
    assert_eq!(r["admitted"], 18, "{r}");
    assert_eq!(r["committed"], 18, "{r}");
    for key in [
        "committed_tx_per_s",
        "end_to_end_tx_per_s",
        "cpu_us_per_committed_tx",
        "cometbft_cpu_us_per_committed_tx",
        "secp256k1_verify_per_s",
        "block_interval_ms_avg",
    ] {
        assert!(r[key].is_number(), "{key} missing: {r}");
    }
    assert!(r["inclusion_blocks"]["p99"].as_f64().is_some_and(|b| b >= 1.0), "{r}");
}

#[test]
fn gated_transfers_under_cometbft_and_the_kvstore_ceiling_are_all_committed() {
    let gated = bench(&["--cometbft", "--stablecoin"]);
    assert_all_committed(&gated, "cometbft");
    assert_eq!(gated["app_mempool"], true, "the apps keep the mempool by default: {gated}");
    assert!(gated["app_cpu_us_per_committed_tx"].as_f64().is_some_and(|c| c > 0.0), "{gated}");
    assert_eq!(gated["offered_tx_per_s"], 0, "{gated}");
    // CometBFT's own mempool (CheckTx over ABCI), the load through CometBFT's RPC, offered at
    // 30 transactions per second: the 18th is not due before 17/30 s.
    let native = bench(&["--cometbft", "--cometbft-mempool", "--rate", "30"]);
    assert_all_committed(&native, "cometbft");
    assert_eq!(native["app_mempool"], false, "{native}");
    assert_eq!(native["offered_tx_per_s"], 30, "{native}");
    assert!(native["broadcast_seconds"].as_f64().is_some_and(|s| s >= 17.0 / 30.0), "the load was not paced: {native}");
    let kv = bench(&["--kvstore"]);
    assert_all_committed(&kv, "cometbft-kvstore");
    assert_eq!(kv["app_cpu_us_per_committed_tx"], 0.0, "{kv}");
}

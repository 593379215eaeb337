//! `lantaud bench --ops`: what each kind of store operation costs on this machine, the
//! measurements behind the gas schedule (`lantau_module_api::gas`, `docs/performance.md`,
//! "The gas schedule").
//!
//! It opens the node's store on a temporary directory, as the node does, fills it with `--ops-keys`
//! verifiable keys and as many non-verifiable rows, and times, in blocks of `--ops-block`
//! operations each committed as the node commits a block:
//!
//! - writing existing verifiable keys (the Merkle tree's update and RocksDB's write), with small
//!   and large values (the per-byte slope), and creating keys the tree never held;
//! - writing non-verifiable rows (RocksDB only), small and large;
//! - reading verifiable keys from the snapshot (no read cache) and through the node's read cache
//!   once it holds them, and reading non-verifiable rows;
//! - the libsecp256k1 verification of the calibration.
//!
//! Each block's figure is its time less the time of committing an empty block, divided by its
//! operations; the report gives the median block of `--ops-rounds`.

use std::sync::Arc;
use std::time::Instant;

use lantau_app::cnidarium::{StateDelta, StateRead, StateWrite};
use lantau_app::readcache::{CachedSnapshot, ReadCache};
use lantau_app::store::Storage;
use serde_json::json;

/// What `--ops` measures.
#[derive(Debug, Clone, Copy)]
pub(super) struct OpsArgs {
    /// Verifiable keys (and non-verifiable rows) the store holds before measuring.
    pub keys: usize,
    /// Operations per measured block.
    pub block: usize,
    /// Measured blocks per operation (the median is reported).
    pub rounds: usize,
}

/// The kinds of write measured.
#[derive(Debug, Clone, Copy)]
enum Write {
    /// A verifiable key the tree holds.
    Existing,
    /// A verifiable key the tree never held.
    New,
    /// A non-verifiable row never written.
    Row,
}

/// A value of `len` bytes that differs per `(i, round)`.
fn value(i: usize, round: usize, len: usize) -> Vec<u8> {
    let seed = lantau_crypto::sha256(format!("{i}-{round}").as_bytes());
    seed.iter().copied().cycle().take(len).collect()
}

fn vkey(i: usize) -> String {
    format!("bench/ops/v/{i:010}")
}

fn nvkey(i: usize) -> Vec<u8> {
    format!("bench/ops/nv/{i:010}").into_bytes()
}

/// The `k`-th of `n` keys in an order spread over the whole key space (a stride coprime with
/// `n`), so that consecutive operations do not share tree nodes more than a block's do.
fn spread(k: usize, n: usize) -> usize {
    (k.wrapping_mul(7_919).wrapping_add(13)) % n.max(1)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(0.0)
}

/// Microseconds of one commit of `delta`.
async fn commit_us(storage: &Storage, delta: StateDelta<lantau_app::store::Snapshot>) -> anyhow::Result<f64> {
    let t = Instant::now();
    storage.commit(delta).await?;
    Ok(t.elapsed().as_secs_f64() * 1e6)
}

pub(super) async fn run(o: OpsArgs, json_out: bool, verify_per_s: f64) -> anyhow::Result<()> {
    anyhow::ensure!(o.keys >= o.block && o.block >= 100 && o.rounds >= 1, "need --ops-keys >= --ops-block >= 100 and --ops-rounds >= 1");
    let dir = tempfile::tempdir()?;
    let storage = Storage::load(dir.path().to_path_buf()).await?;

    // Fill the store as a chain that has run a while would be filled.
    eprintln!("bench: ops: filling the store with {} verifiable keys and {} non-verifiable rows", o.keys, o.keys);
    let fill = 20_000usize;
    for start in (0..o.keys).step_by(fill) {
        let mut d = StateDelta::new(storage.latest_snapshot());
        for i in start..(start + fill).min(o.keys) {
            d.put_raw(vkey(i), value(i, 0, 40));
            d.nonverifiable_put_raw(nvkey(i), value(i, 0, 200));
        }
        storage.commit(d).await?;
    }

    let mut empty = Vec::new();
    for _ in 0..o.rounds.max(3) {
        empty.push(commit_us(&storage, StateDelta::new(storage.latest_snapshot())).await?);
    }
    let empty_us = median(empty);

    // Writes: each round a block of `block` writes, committed.
    let mut round = 0usize;
    let mut next_fresh = o.keys;
    let per_op = |xs: Vec<f64>| (median(xs) - empty_us).max(0.0) / o.block as f64;
    let mut figures = Vec::new();
    for (name, kind, len) in [
        ("verifiable write, existing key, 40-byte value", Write::Existing, 40usize),
        ("verifiable write, existing key, 1,000-byte value", Write::Existing, 1_000),
        ("verifiable write, new key, 40-byte value", Write::New, 40),
        ("non-verifiable write, new row, 200-byte value", Write::Row, 200),
        ("non-verifiable write, new row, 2,000-byte value", Write::Row, 2_000),
    ] {
        let mut xs = Vec::new();
        for _ in 0..o.rounds {
            round += 1;
            let mut d = StateDelta::new(storage.latest_snapshot());
            for k in 0..o.block {
                let v = value(k, round, len);
                match kind {
                    Write::Existing => d.put_raw(vkey(spread(k + round * o.block, o.keys)), v),
                    Write::New => d.put_raw(vkey(next_fresh + k), v),
                    Write::Row => d.nonverifiable_put_raw(nvkey(next_fresh + k), v),
                }
            }
            next_fresh += o.block;
            xs.push(commit_us(&storage, d).await?);
        }
        figures.push((name, per_op(xs)));
    }

    // Reads: `block` distinct keys per round, each read once.
    let reads = |round: usize| (0..o.block).map(move |k| spread(k + round * o.block + 1, o.keys));
    let mut cold = Vec::new();
    let mut cached = Vec::new();
    let mut nv = Vec::new();
    for r in 0..o.rounds {
        let snap = storage.latest_snapshot();
        let t = Instant::now();
        for i in reads(r) {
            std::hint::black_box(snap.get_raw(&vkey(i)).await?);
        }
        cold.push(t.elapsed().as_secs_f64() * 1e6 / o.block as f64);

        let cache = Arc::new(ReadCache::new(lantau_app::readcache::MAX_ENTRIES));
        cache.reset(snap.version());
        let cs = CachedSnapshot::new(snap.clone(), cache);
        for i in reads(r) {
            cs.get_raw(&vkey(i)).await?;
        }
        let t = Instant::now();
        for i in reads(r) {
            std::hint::black_box(cs.get_raw(&vkey(i)).await?);
        }
        cached.push(t.elapsed().as_secs_f64() * 1e6 / o.block as f64);

        let t = Instant::now();
        for i in reads(r) {
            std::hint::black_box(snap.nonverifiable_get_raw(&nvkey(i)).await?);
        }
        nv.push(t.elapsed().as_secs_f64() * 1e6 / o.block as f64);
    }
    figures.push(("verifiable read, from the snapshot", median(cold)));
    figures.push(("verifiable read, from the read cache", median(cached)));
    figures.push(("non-verifiable read, from the snapshot", median(nv)));
    figures.push(("secp256k1 signature verification", if verify_per_s > 0.0 { 1e6 / verify_per_s } else { 0.0 }));
    storage.release().await;

    if json_out {
        let ops: serde_json::Map<String, serde_json::Value> = figures.iter().map(|(n, us)| ((*n).to_string(), json!(us))).collect();
        let out = json!({
            "workload": "store operations",
            "secp256k1_verify_per_s": verify_per_s,
            "keys": o.keys,
            "ops_per_block": o.block,
            "rounds": o.rounds,
            "empty_commit_us": empty_us,
            "us_per_op": ops,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "store operations: {} verifiable keys and as many non-verifiable rows; blocks of {} operations; median of {} blocks",
            o.keys, o.block, o.rounds
        );
        println!("an empty block commits in {empty_us:.0} µs (subtracted from each block)");
        for (n, us) in &figures {
            println!("  {us:8.2} µs  {n}");
        }
    }
    Ok(())
}

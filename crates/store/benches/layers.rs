//! A transaction's layers: cnidarium's `StateDelta`s against [`lantau_store::Layer`]s, each
//! run the way the pipeline runs an EVM `transferWithTravelRule` on the block's
//! [`lantau_store::FlatDelta`]: the ante's layer (fee and sequence), the messages' layer, and
//! in it the EVM's Cosmos effects (checkpointed before the precompile's call, then written into
//! the messages' layer), applied into the block's layer. The two are run in turns in one
//! process, so a machine whose speed drifts slows both alike; each turn prints the time per
//! transaction, and the last line the medians.
//!
//! Run: `cargo bench --workspace --bench layers` (options after `--`: `--txs 5000 --rounds 5`).

#![allow(unused_crate_dependencies, clippy::disallowed_types, clippy::disallowed_methods, missing_docs)]

use std::time::Instant;

use cnidarium::{StateDelta, StateRead, StateWrite};
use lantau_store::{FlatDelta, Layer, Snapshot, TempStorage};

/// Parties in the store below (each with a balance and an account).
const PARTIES: u64 = 20_000;

fn balance(i: u64) -> String {
    format!("bank/balances/{:040x}/hkd.demo", i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fn account(i: u64) -> String {
    format!("auth/accounts/{:040x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fn kyc(i: u64) -> String {
    format!("kyc/records/{:040x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fn read<S: StateRead>(s: &S, key: &str) -> Option<Vec<u8>> {
    futures::executor::block_on(s.get_raw(key)).unwrap()
}

/// The ante: the fee from the sender to the collector, the sequence.
fn ante<S: StateWrite>(s: &mut S, tx: u64) {
    let from = tx % PARTIES;
    let v = read(s, &balance(from)).unwrap_or_default();
    s.put_raw(balance(from), [v.as_slice(), b"-fee"].concat());
    let c = read(s, "bank/balances/collector/alhk").unwrap_or_default();
    s.put_raw("bank/balances/collector/alhk".into(), c.iter().take(32).copied().chain([1]).collect());
    let a = read(s, &account(from)).unwrap_or_default();
    s.put_raw(account(from), [a.as_slice(), b"+1"].concat());
}

/// The precompile's call: the gates' reads, the transfer, the compliance records and rows.
fn call<S: StateWrite>(s: &mut S, tx: u64) {
    let (from, to) = (tx % PARTIES, (tx + 1) % PARTIES);
    for k in [kyc(from), kyc(to), "compliance/params".to_string(), "sanctions/list/version".to_string()] {
        let _ = read(s, &k);
    }
    for (i, k) in [balance(from), balance(to)].into_iter().enumerate() {
        let v = read(s, &k).unwrap_or_default();
        s.put_raw(k, v.iter().take(40).copied().chain([i as u8]).collect());
    }
    for w in 0..6u64 {
        s.put_raw(format!("compliance/velocity/{from:016x}/{w}"), vec![7; 48]);
    }
    s.put_raw(format!("compliance/anchor/{tx:016x}"), vec![1; 32]);
    s.put_raw(format!("compliance/flags/{tx:016x}"), vec![2; 120]);
    for r in 0..6u64 {
        s.nonverifiable_put_raw(format!("audit/rows/{tx:016x}/{r}").into_bytes(), vec![3; 220]);
    }
}

/// After the EVM: the nonce and the refund.
fn after<S: StateWrite>(s: &mut S, tx: u64) {
    let from = tx % PARTIES;
    s.put_raw(account(from), vec![9; 60]);
    let v = read(s, &balance(from)).unwrap_or_default();
    s.put_raw(balance(from), [v.as_slice(), b"+refund"].concat());
}

fn with_deltas(block: &mut FlatDelta<Snapshot>, tx: u64) {
    let mut a = StateDelta::new(&mut *block);
    ante(&mut a, tx);
    a.apply();
    let mut msg = StateDelta::new(&mut *block);
    msg.object_put("eth_tx_hash", tx);
    let changes = {
        let mut cur = StateDelta::new(&msg);
        let _kept = cur.fork();
        call(&mut cur, tx);
        cur.flatten().1
    };
    changes.apply_to(&mut msg);
    after(&mut msg, tx);
    msg.object_delete("eth_tx_hash");
    msg.apply();
}

fn with_layers(block: &mut FlatDelta<Snapshot>, tx: u64) {
    let mut a = Layer::new(&mut *block);
    ante(&mut a, tx);
    a.apply();
    let mut msg = Layer::new(&mut *block);
    msg.object_put("eth_tx_hash", tx);
    let changes = {
        let mut cur = Layer::new(&msg);
        let _kept = cur.checkpoint();
        call(&mut cur, tx);
        cur.into_changes().1
    };
    changes.apply_to(&mut msg);
    after(&mut msg, tx);
    msg.object_delete("eth_tx_hash");
    msg.apply();
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let (mut txs, mut rounds) = (5_000u64, 5usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--txs" => txs = args.next().ok_or_else(|| anyhow::anyhow!("--txs needs a value"))?.parse()?,
            "--rounds" => rounds = args.next().ok_or_else(|| anyhow::anyhow!("--rounds needs a value"))?.parse()?,
            "--bench" => {}
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    let storage = rt.block_on(TempStorage::new())?;
    let mut genesis = StateDelta::new(storage.latest_snapshot());
    for i in 0..PARTIES {
        genesis.put_raw(balance(i), vec![5; 40]);
        genesis.put_raw(account(i), vec![6; 60]);
        genesis.put_raw(kyc(i), vec![8; 90]);
    }
    rt.block_on(storage.commit(genesis))?;
    let (mut deltas, mut layers) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for layered in [round % 2 == 0, round % 2 != 0] {
            let mut block = FlatDelta::new(storage.latest_snapshot());
            let t = Instant::now();
            for tx in 0..txs {
                if layered {
                    with_layers(&mut block, tx);
                } else {
                    with_deltas(&mut block, tx);
                }
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / txs as f64;
            let (name, all) = if layered { ("layers", &mut layers) } else { ("deltas", &mut deltas) };
            println!("round {round}: {name} {us:.2} µs per transaction ({txs} transactions on one block's layer)");
            all.push(us);
            drop(block);
        }
    }
    let (d, l) = (median(&mut deltas), median(&mut layers));
    println!("median over {rounds} rounds: cnidarium's deltas {d:.2} µs, layers {l:.2} µs per transaction ({:.0} % less)", (d - l) * 100.0 / d);
    Ok(())
}

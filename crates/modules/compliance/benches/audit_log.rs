//! AuditLog query benchmark: builds a log of `--rows` rows (default 1,000,000) over
//! `--subjects` subjects (default 1,000) and four tx_types, committed through cnidarium in
//! blocks of `--per-block` rows (default 10,000) in a temporary directory, then times
//! `query::audit_log` filtered by subject over `--queries` different subjects (default 100) and
//! prints p50/p99/max and the rows returned. A few other filter shapes are timed for context.
//!
//! Run: `cargo bench --bench audit_log` (add `-- --rows 100000` for a quick run).

#![allow(unused_crate_dependencies, clippy::disallowed_types, clippy::disallowed_methods, missing_docs)]

use std::time::{Duration, Instant};

use cnidarium::{StateDelta, TempStorage};
use cosmos_sdk_proto::cosmos::base::v1beta1::Coin;
use lantau_compliance::audit::{AuditEntry, AuditFilter, AuditWrite};
use lantau_compliance::query::audit_log;
use lantau_module_api::{BlockCtx, GasMeter};
use lantau_primitives::Address;
use lantau_proto::Timestamp;
use sha2::{Digest, Sha256};

const TX_TYPES: [&str; 4] = ["transfer", "transfer", "threshold_flag", "velocity_flag"];
const T0: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z
const BLOCK_SECONDS: i64 = 5;

struct Opts {
    rows: u64,
    subjects: u64,
    per_block: u64,
    queries: u64,
}

fn parse() -> anyhow::Result<Opts> {
    let mut o = Opts { rows: 1_000_000, subjects: 1_000, per_block: 10_000, queries: 100 };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || -> anyhow::Result<u64> { Ok(args.next().ok_or_else(|| anyhow::anyhow!("{a} needs a value"))?.parse()?) };
        match a.as_str() {
            "--rows" => o.rows = val()?,
            "--subjects" => o.subjects = val()?,
            "--per-block" => o.per_block = val()?,
            "--queries" => o.queries = val()?,
            "--bench" => {} // passed by `cargo bench`
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    anyhow::ensure!(o.rows > 0 && o.subjects > 0 && o.per_block > 0 && o.queries > 0, "all values must be positive");
    Ok(o)
}

fn subject(i: u64) -> Address {
    let mut a = [0u8; 20];
    a[..8].copy_from_slice(&i.to_be_bytes());
    a[19] = 0x5a;
    Address(a)
}

fn tx_hash(i: u64) -> String {
    const_hex::encode_upper(Sha256::digest(i.to_be_bytes()))
}

fn row(i: u64, o: &Opts) -> AuditEntry {
    let tx_type = TX_TYPES[usize::try_from(i % 4).unwrap_or(0)];
    let mut metadata = std::collections::BTreeMap::new();
    if tx_type != "transfer" {
        metadata.insert("flag_id".to_string(), i.to_string());
        metadata.insert("decorator".to_string(), tx_type.trim_end_matches("_flag").to_string());
    }
    AuditEntry {
        tx_type: tx_type.into(),
        subject: subject(i % o.subjects).to_bech32(),
        counterparty: subject((i.wrapping_mul(31).wrapping_add(7)) % o.subjects).to_bech32(),
        amount: Some(Coin { denom: "hkd.demo".into(), amount: (100 + i % 1_000_000).to_string() }),
        // A transfer and the flag rows it raised share a transaction hash.
        tx_hash: tx_hash(i / 4),
        metadata,
        ..Default::default()
    }
}

fn pct(sorted: &[Duration], p: usize) -> Duration {
    let idx = (sorted.len().saturating_sub(1) * p) / 100;
    sorted.get(idx).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

async fn time_query(storage: &TempStorage, f: &AuditFilter) -> anyhow::Result<(Duration, usize)> {
    let snap = storage.latest_snapshot();
    let t = Instant::now();
    let rows = audit_log(&snap, f).await.map_err(|e| anyhow::anyhow!(e.log))?;
    Ok((t.elapsed(), rows.len()))
}

async fn run(o: Opts) -> anyhow::Result<()> {
    let storage = TempStorage::new().await?;
    let gas = GasMeter::infinite();
    let t_build = Instant::now();
    let mut appended = 0u64;
    let mut height = 0u64;
    while appended < o.rows {
        height += 1;
        let time = time::OffsetDateTime::from_unix_timestamp(T0 + BLOCK_SECONDS * i64::try_from(height)?)?;
        let block = BlockCtx { height, time, chain_id: "lantau-bench-1".into() };
        let mut delta = StateDelta::new(storage.latest_snapshot());
        let end = (appended + o.per_block).min(o.rows);
        for i in appended..end {
            delta.append_audit(&gas, &block, row(i, &o)).await.map_err(|e| anyhow::anyhow!(e.log))?;
        }
        storage.commit(delta).await?;
        appended = end;
    }
    let build = t_build.elapsed();
    println!(
        "built {} rows in {} blocks over {} subjects in {:.1} s ({:.0} rows/s)",
        o.rows,
        height,
        o.subjects,
        build.as_secs_f64(),
        o.rows as f64 / build.as_secs_f64()
    );

    // Subject-filtered queries, each over a different subject.
    let mut times = Vec::new();
    let mut returned = 0usize;
    for q in 0..o.queries {
        let s = subject(q.wrapping_mul(7919) % o.subjects);
        let (d, n) = time_query(&storage, &AuditFilter { subject: Some(s), ..Default::default() }).await?;
        times.push(d);
        returned += n;
    }
    times.sort();
    println!(
        "audit_log subject=<one of {}>: {} queries, p50 {}, p99 {}, max {}, rows returned {} per query on average",
        o.subjects,
        o.queries,
        ms(pct(&times, 50)),
        ms(pct(&times, 99)),
        ms(*times.last().unwrap_or(&Duration::ZERO)),
        returned / usize::try_from(o.queries)?
    );

    // Other shapes, for context (one run each, after the subject queries warmed the cache).
    let mid = T0 + BLOCK_SECONDS * i64::try_from(height / 2)?;
    let window = (Timestamp { seconds: mid, nanos: 0 }, Timestamp { seconds: mid + 3 * BLOCK_SECONDS, nanos: 0 });
    let shapes = [
        ("tx_hash=<one tx>", AuditFilter { tx_hash: Some(tx_hash(o.rows / 8).to_lowercase()), ..Default::default() }),
        ("subject + 3-block time window", AuditFilter { subject: Some(subject(1)), from: Some(window.0), to: Some(window.1), ..Default::default() }),
        (
            "tx_type=velocity_flag + 3-block time window",
            AuditFilter { tx_type: Some("velocity_flag".into()), from: Some(window.0), to: Some(window.1), ..Default::default() },
        ),
        ("3-block time window only", AuditFilter { from: Some(window.0), to: Some(window.1), ..Default::default() }),
    ];
    for (name, f) in shapes {
        let (d, n) = time_query(&storage, &f).await?;
        println!("audit_log {name}: {} ({n} rows)", ms(d));
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let o = parse()?;
    tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(run(o))
}

//! Unit tests of the audit log on temporary cnidarium stores.

#![allow(clippy::unwrap_used)]

use cnidarium::{StateDelta, TempStorage};
use cosmos_sdk_proto::cosmos::base::v1beta1::Coin;

use super::*;
use crate::query::audit_log;
use lantau_module_api::BlockCtx;
use prost::Message;

fn addr(i: u8) -> Address {
    Address([i; 20])
}

fn block(height: u64, secs: i64) -> BlockCtx {
    BlockCtx { height, time: time::OffsetDateTime::from_unix_timestamp(secs).unwrap(), chain_id: "lantau-test-1".into() }
}

fn ts(secs: i64) -> Timestamp {
    Timestamp { seconds: secs, nanos: 0 }
}

fn entry(tx_type: &str, subject: u8, counterparty: u8, tx_hash: &str) -> AuditEntry {
    AuditEntry {
        tx_type: tx_type.into(),
        subject: addr(subject).to_bech32(),
        counterparty: addr(counterparty).to_bech32(),
        amount: Some(Coin { denom: "hkd.demo".into(), amount: "1000".into() }),
        tx_hash: tx_hash.into(),
        metadata: [("decorator".to_string(), "threshold".to_string())].into_iter().collect(),
        ..Default::default()
    }
}

/// Commits one block of `entries` at (height, secs); returns their sequences.
async fn commit_block(storage: &TempStorage, height: u64, secs: i64, entries: Vec<AuditEntry>) -> Vec<u64> {
    let mut delta = StateDelta::new(storage.latest_snapshot());
    let gas = GasMeter::infinite();
    let b = block(height, secs);
    let mut seqs = Vec::new();
    for e in entries {
        seqs.push(delta.append_audit(&gas, &b, e).await.unwrap());
    }
    storage.commit(delta).await.unwrap();
    seqs
}

/// A small log over three blocks:
/// 1 transfer   a→b  AA..  t=100
/// 2 threshold  a→b  AA..  t=100
/// 3 transfer   c→a  BB..  t=200
/// 4 flag_review b   CC..  t=200
/// 5 transfer   a→c  DD..  t=300
async fn sample() -> TempStorage {
    let s = TempStorage::new().await.unwrap();
    let h = |c: char| c.to_string().repeat(64);
    commit_block(&s, 1, 100, vec![entry("transfer", 1, 2, &h('A')), entry("threshold_flag", 1, 2, &h('A'))]).await;
    commit_block(&s, 2, 200, vec![entry("transfer", 3, 1, &h('B')), entry("flag_review", 2, 0, &h('C'))]).await;
    commit_block(&s, 3, 300, vec![entry("transfer", 1, 3, &h('D'))]).await;
    s
}

async fn seqs(s: &TempStorage, f: AuditFilter) -> Vec<u64> {
    audit_log(&s.latest_snapshot(), &f).await.unwrap().iter().map(|e| e.sequence).collect()
}

#[tokio::test]
async fn audit_sequence_is_gapless_across_blocks_and_rows_carry_their_block() {
    let s = TempStorage::new().await.unwrap();
    assert_eq!(commit_block(&s, 1, 100, vec![entry("transfer", 1, 2, ""), entry("transfer", 1, 2, "")]).await, vec![1, 2]);
    assert_eq!(commit_block(&s, 2, 105, vec![]).await, Vec::<u64>::new());
    assert_eq!(commit_block(&s, 3, 110, vec![entry("rule_update", 4, 0, "")]).await, vec![3]);
    let snap = s.latest_snapshot();
    assert_eq!(snap.audit_sequence(&GasMeter::infinite()).await.unwrap(), 3);
    let all = audit_log(&snap, &AuditFilter::default()).await.unwrap();
    assert_eq!(all.iter().map(|e| e.sequence).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(all[2].block_height, 3);
    assert_eq!(all[2].block_time, Some(ts(110)));
    assert_eq!(all[0].metadata.get("decorator").map(String::as_str), Some("threshold"));
}

#[tokio::test]
async fn audit_rows_of_a_dropped_overlay_leave_nothing_behind() {
    let s = sample().await;
    let head_before = s.latest_snapshot().audit_head(&GasMeter::infinite()).await.unwrap();
    {
        // A transaction's overlay on top of the block's: it appends, then fails and is dropped.
        let mut block_delta = StateDelta::new(s.latest_snapshot());
        let mut tx = StateDelta::new(&mut block_delta);
        let gas = GasMeter::infinite();
        assert_eq!(tx.append_audit(&gas, &block(4, 400), entry("transfer", 9, 1, "")).await.unwrap(), 6);
        // The overlay sees its own row...
        let f = AuditFilter { subject: Some(addr(9)), ..Default::default() };
        assert_eq!(audit_log(&tx, &f).await.unwrap().len(), 1);
        drop(tx);
        // ...the block does not, once it is dropped; the next append reuses sequence 6.
        assert!(audit_log(&block_delta, &f).await.unwrap().is_empty());
        assert_eq!(block_delta.append_audit(&gas, &block(4, 400), entry("transfer", 8, 1, "")).await.unwrap(), 6);
    }
    let snap = s.latest_snapshot();
    assert_eq!(snap.audit_sequence(&GasMeter::infinite()).await.unwrap(), 5);
    assert_eq!(snap.audit_head(&GasMeter::infinite()).await.unwrap(), head_before);
    assert_eq!(seqs(&s, AuditFilter::default()).await, vec![1, 2, 3, 4, 5]);
    assert!(seqs(&s, AuditFilter { subject: Some(addr(9)), ..Default::default() }).await.is_empty());
}

#[tokio::test]
async fn audit_each_filter_alone_selects_its_rows_in_sequence_order() {
    let s = sample().await;
    assert_eq!(seqs(&s, AuditFilter::default()).await, vec![1, 2, 3, 4, 5]);
    assert_eq!(seqs(&s, AuditFilter { subject: Some(addr(1)), ..Default::default() }).await, vec![1, 2, 5]);
    assert_eq!(seqs(&s, AuditFilter { subject: Some(addr(2)), ..Default::default() }).await, vec![4]);
    assert!(seqs(&s, AuditFilter { subject: Some(addr(7)), ..Default::default() }).await.is_empty());
    assert_eq!(seqs(&s, AuditFilter { tx_type: Some("transfer".into()), ..Default::default() }).await, vec![1, 3, 5]);
    assert!(seqs(&s, AuditFilter { tx_type: Some("transfe".into()), ..Default::default() }).await.is_empty());
    assert!(seqs(&s, AuditFilter { tx_type: Some("transfer/".into()), ..Default::default() }).await.is_empty());
    assert_eq!(seqs(&s, AuditFilter { tx_hash: Some("a".repeat(64)), ..Default::default() }).await, vec![1, 2]);
    assert_eq!(seqs(&s, AuditFilter { from: Some(ts(200)), ..Default::default() }).await, vec![3, 4, 5]);
    assert_eq!(seqs(&s, AuditFilter { to: Some(ts(200)), ..Default::default() }).await, vec![1, 2]);
}

#[tokio::test]
async fn audit_filters_combine_with_and() {
    let s = sample().await;
    let a = Some(addr(1));
    assert_eq!(seqs(&s, AuditFilter { subject: a, tx_type: Some("transfer".into()), ..Default::default() }).await, vec![1, 5]);
    assert_eq!(
        seqs(&s, AuditFilter { subject: a, tx_hash: Some("AA".repeat(32)), tx_type: Some("threshold_flag".into()), ..Default::default() }).await,
        vec![2]
    );
    assert_eq!(seqs(&s, AuditFilter { subject: a, from: Some(ts(150)), to: Some(ts(301)), ..Default::default() }).await, vec![5]);
    assert_eq!(seqs(&s, AuditFilter { tx_type: Some("transfer".into()), from: Some(ts(100)), to: Some(ts(300)), ..Default::default() }).await, vec![1, 3]);
    assert!(seqs(&s, AuditFilter { subject: Some(addr(3)), tx_hash: Some("a".repeat(64)), ..Default::default() }).await.is_empty());
    assert!(seqs(&s, AuditFilter { tx_hash: Some("b".repeat(64)), tx_type: Some("flag_review".into()), ..Default::default() }).await.is_empty());
}

#[tokio::test]
async fn audit_tx_hash_matches_in_any_case() {
    let s = sample().await;
    for h in ["d".repeat(64), "D".repeat(64), format!("{}{}", "d".repeat(32), "D".repeat(32))] {
        assert_eq!(seqs(&s, AuditFilter { tx_hash: Some(h), ..Default::default() }).await, vec![5]);
    }
    // Stored as written (upper case here), matched either way.
    let rows = audit_log(&s.latest_snapshot(), &AuditFilter { tx_hash: Some("c".repeat(64)), ..Default::default() }).await.unwrap();
    assert_eq!(rows[0].tx_hash, "C".repeat(64));
    assert!(seqs(&s, AuditFilter { tx_hash: Some("zz".into()), ..Default::default() }).await.is_empty());
    assert!(seqs(&s, AuditFilter { tx_hash: Some("d".repeat(63)), ..Default::default() }).await.is_empty());
}

#[tokio::test]
async fn audit_from_is_inclusive_and_to_is_exclusive() {
    let s = sample().await;
    let range = |from: Option<i64>, to: Option<i64>| AuditFilter { from: from.map(ts), to: to.map(ts), ..Default::default() };
    assert_eq!(seqs(&s, range(Some(100), Some(200))).await, vec![1, 2]);
    assert_eq!(seqs(&s, range(Some(200), Some(300))).await, vec![3, 4]);
    assert_eq!(seqs(&s, range(Some(200), Some(301))).await, vec![3, 4, 5]);
    assert_eq!(seqs(&s, range(Some(101), None)).await, vec![3, 4, 5]);
    assert!(seqs(&s, range(Some(200), Some(200))).await.is_empty());
    assert!(seqs(&s, range(Some(300), Some(100))).await.is_empty());
    // Nanosecond precision at the bounds.
    let just_before = Timestamp { seconds: 299, nanos: 999_999_999 };
    let f = AuditFilter { from: Some(just_before), to: Some(Timestamp { seconds: 300, nanos: 1 }), ..Default::default() };
    assert_eq!(seqs(&s, f).await, vec![5]);
    let f = AuditFilter { subject: Some(addr(1)), to: Some(just_before), ..Default::default() };
    assert_eq!(seqs(&s, f).await, vec![1, 2]);
    // Times before the epoch order correctly too.
    let f = AuditFilter { from: Some(ts(-5)), to: Some(ts(150)), ..Default::default() };
    assert_eq!(seqs(&s, f).await, vec![1, 2]);
}

#[tokio::test]
async fn audit_head_commits_to_every_row_deterministically() {
    let a = sample().await;
    let b = sample().await;
    let gas = GasMeter::infinite();
    let (ha, hb) = (a.latest_snapshot().audit_head(&gas).await.unwrap(), b.latest_snapshot().audit_head(&gas).await.unwrap());
    assert_eq!(ha, hb);
    assert_ne!(ha, [0u8; 32]);
    assert_eq!(a.latest_snapshot().root_hash().await.unwrap(), b.latest_snapshot().root_hash().await.unwrap());

    // The head is the chain over the encoded rows, recomputable from the log alone.
    let mut head = [0u8; 32];
    for row in audit_log(&a.latest_snapshot(), &AuditFilter::default()).await.unwrap() {
        head = chain_head(&head, &row.encode_to_vec());
    }
    assert_eq!(head, ha);

    // A different row moves the head and the app hash.
    commit_block(&a, 4, 400, vec![entry("transfer", 1, 2, "")]).await;
    commit_block(&b, 4, 400, vec![entry("transfer", 1, 3, "")]).await;
    let (ha2, hb2) = (a.latest_snapshot().audit_head(&gas).await.unwrap(), b.latest_snapshot().audit_head(&gas).await.unwrap());
    assert_ne!(ha2, ha);
    assert_ne!(ha2, hb2);
    assert_ne!(a.latest_snapshot().root_hash().await.unwrap(), b.latest_snapshot().root_hash().await.unwrap());
}

#[tokio::test]
async fn audit_append_charges_deterministic_gas_and_stops_when_out_of_gas() {
    let s = TempStorage::new().await.unwrap();
    let used = |e: AuditEntry| {
        let snap = s.latest_snapshot();
        async move {
            let mut d = StateDelta::new(snap);
            let gas = GasMeter::infinite();
            d.append_audit(&gas, &block(1, 1), e).await.unwrap();
            gas.used()
        }
    };
    let g1 = used(entry("transfer", 1, 2, "ab")).await;
    assert_eq!(g1, used(entry("transfer", 1, 2, "ab")).await);
    assert!(g1 > used(entry("transfer", 1, 2, "")).await, "the hash index row costs gas");

    let mut d = StateDelta::new(s.latest_snapshot());
    let gas = GasMeter::new(g1 - 1);
    let err = d.append_audit(&gas, &block(1, 1), entry("transfer", 1, 2, "ab")).await.unwrap_err();
    assert_eq!((err.codespace, err.code), ("sdk", 11));
    assert!(audit_log(&d, &AuditFilter::default()).await.unwrap().is_empty());
    assert_eq!(d.audit_sequence(&GasMeter::infinite()).await.unwrap(), 0);
}

#[tokio::test]
async fn audit_rejects_malformed_entries_and_writes_nothing() {
    let s = TempStorage::new().await.unwrap();
    let mut d = StateDelta::new(s.latest_snapshot());
    let gas = GasMeter::infinite();
    let b = block(1, 1);
    for bad in [
        entry("", 1, 2, ""),
        entry("Transfer", 1, 2, ""),
        entry("a/b", 1, 2, ""),
        entry(&"x".repeat(MAX_TX_TYPE_LEN + 1), 1, 2, ""),
        entry("transfer", 1, 2, "xyz"),
        entry("transfer", 1, 2, "0x12"),
        AuditEntry { subject: "lantau1notanaddress".into(), ..entry("transfer", 1, 2, "") },
        AuditEntry { counterparty: "0x0101010101010101010101010101010101010101".into(), ..entry("transfer", 1, 2, "") },
    ] {
        let err = d.append_audit(&gas, &b, bad).await.unwrap_err();
        assert_eq!((err.codespace, err.code), ("compliance", 5), "{}", err.log);
    }
    assert_eq!(d.audit_sequence(&gas).await.unwrap(), 0);

    // An empty counterparty is allowed.
    let e = AuditEntry { subject: addr(5).to_bech32(), counterparty: String::new(), ..entry("rule_update", 0, 0, "") };
    assert_eq!(d.append_audit(&gas, &b, e).await.unwrap(), 1);
    let rows = audit_log(&d, &AuditFilter { subject: Some(addr(5)), ..Default::default() }).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].subject, addr(5).to_bech32());
    assert_eq!(rows[0].counterparty, "");
}

#[tokio::test]
async fn audit_rows_without_subject_or_hash_are_found_by_type_and_time() {
    let s = TempStorage::new().await.unwrap();
    let e = AuditEntry { subject: String::new(), counterparty: String::new(), ..entry("sanctions_update", 0, 0, "") };
    commit_block(&s, 1, 50, vec![e]).await;
    assert_eq!(seqs(&s, AuditFilter { tx_type: Some("sanctions_update".into()), ..Default::default() }).await, vec![1]);
    assert_eq!(seqs(&s, AuditFilter { from: Some(ts(50)), ..Default::default() }).await, vec![1]);
    assert!(seqs(&s, AuditFilter { subject: Some(addr(0)), ..Default::default() }).await.is_empty());
}

#[tokio::test]
async fn a_filter_matching_more_than_the_query_limit_is_refused_with_how_to_narrow_it() {
    let s = TempStorage::new().await.unwrap();
    let per_block = 10_000;
    let blocks = crate::query::MAX_QUERY_ROWS / per_block + 1;
    for b in 0..blocks {
        let h = u64::try_from(b).unwrap() + 1;
        let rows = (0..per_block).map(|i| entry("transfer", 1, u8::try_from(i % 200).unwrap(), &"e".repeat(64))).collect();
        commit_block(&s, h, 100 * i64::try_from(h).unwrap(), rows).await;
    }
    let snap = s.latest_snapshot();
    // The whole log, and one subject's rows (the covering index): both over the limit.
    for f in [AuditFilter::default(), AuditFilter { subject: Some(addr(1)), ..Default::default() }] {
        let e = audit_log(&snap, &f).await.unwrap_err();
        assert_eq!((e.codespace, e.code), ("sdk", 18), "{}", e.log);
        assert!(e.log.contains("more than 50000 entries") && e.log.contains("narrow it with"), "{}", e.log);
        assert!(matches!(lantau_module_api::QueryError::from(e), lantau_module_api::QueryError::InvalidArgument(_)));
    }
    // A narrower window answers.
    let f = AuditFilter { from: Some(ts(100)), to: Some(ts(300)), ..Default::default() };
    assert_eq!(audit_log(&snap, &f).await.unwrap().len(), 2 * per_block);
}

/// A time window alone is found by binary search over the rows (there is no time index): over
/// 30 blocks of 0 to 3 rows, every window with bounds on, between and outside the block times
/// selects exactly the rows a filter over the whole log selects.
#[tokio::test]
async fn a_time_window_alone_selects_what_filtering_every_row_selects() {
    let s = TempStorage::new().await.unwrap();
    let h = |c: char| c.to_string().repeat(64);
    let mut times = Vec::new();
    for height in 1..=30u64 {
        let secs = i64::try_from(height * 10).unwrap();
        let rows = (height * 7 % 4) as usize;
        let mut entries = Vec::new();
        for i in 0..rows {
            entries.push(entry("transfer", (i + 1) as u8, 9, &h('E')));
        }
        for seq in commit_block(&s, height, secs, entries).await {
            times.push((seq, secs));
        }
    }
    let bounds: Vec<Option<i64>> = std::iter::once(None).chain((0..=32).map(|i| Some(i * 10 - 5))).chain((0..=32).map(|i| Some(i * 10))).collect();
    for from in &bounds {
        for to in &bounds {
            let f = AuditFilter { from: from.map(ts), to: to.map(ts), ..Default::default() };
            if f.from.is_none() && f.to.is_none() {
                continue;
            }
            let want: Vec<u64> = times.iter().filter(|(_, t)| from.is_none_or(|b| *t >= b) && to.is_none_or(|b| *t < b)).map(|(seq, _)| *seq).collect();
            assert_eq!(seqs(&s, f).await, want, "from {from:?} to {to:?}");
        }
    }
}

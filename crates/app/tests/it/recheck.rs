//! The recheck re-screens: a transfer admitted before its recipient was blacklisted leaves the
//! mempool at the next recheck with the gate's code, and a block that carries it anyway
//! executes it as a rejection (fee paid, nothing moved).

use std::sync::Arc;

use lantau_client::{msg_send, to_any, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::Coin;
use lantau_proto::chain::compliance::v1 as cpb;

use crate::compliance_props::{block_req, genesis, key, new_chain, DENOM};

fn signed(k: &SecretKey, account_number: u64, sequence: u64, b: TxBuilder) -> Vec<u8> {
    b.sign(k, &SignerData { chain_id: "recheck-1".into(), account_number, sequence })
}

/// A full-tier Travel Rule payload between the genesis VASPs.
fn full_payload() -> cpb::TravelRulePayload {
    cpb::TravelRulePayload {
        tx_hash: String::new(),
        originator_ref: "r1".into(),
        beneficiary_ref: "r2".into(),
        originator_vasp: "VASP-1".into(),
        beneficiary_vasp: "VASP-2".into(),
        tier: "full".into(),
    }
}

/// k1's gated transfer of 100 to k2 with a full Travel Rule payload, at sequence `seq`.
fn gated_transfer(keys: &[SecretKey], seq: u64) -> Vec<u8> {
    let (from, to) = (&keys[1], &keys[2]);
    let msg = msg_send(&from.address(), &to.address(), &[Coin::new(DENOM, 100u128)]);
    signed(from, 1, seq, TxBuilder::new(vec![msg]).gas(400_000).travel_rule(&full_payload()))
}

/// Admits `bytes` (it must pass) and returns its decoding and the footprint the mempool keeps.
async fn admit_keeping_footprint(app: &lantau_app::App, bytes: Vec<u8>) -> (Arc<lantau_app::tx::DecodedTx>, Arc<lantau_app::Footprint>) {
    let got = Arc::new(parking_lot::Mutex::new(None));
    let kept = got.clone();
    let out = app
        .check_tx_admit(&bytes, move |_, fp| {
            *kept.lock() = Some(fp);
            Ok(())
        })
        .await;
    assert!(out.result.is_ok(), "{:?}", out.result);
    let fp = got.lock().take().expect("a footprint");
    (out.decoded.expect("decoded"), fp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_whose_recipient_is_blacklisted_after_admission_is_dropped_at_recheck_with_code_18() {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (_dir, app, init) = new_chain("recheck-1", genesis(&keys)).await;
    init.unwrap();

    // k1 (full tier) pays k2 (full tier): admitted.
    let payload = full_payload();
    let transfer = signed(
        &keys[1],
        1,
        0,
        TxBuilder::new(vec![msg_send(&keys[1].address(), &keys[2].address(), &[Coin::new(DENOM, 500u128)])]).gas(400_000).travel_rule(&payload),
    );
    let (decoded, footprint) = admit_keeping_footprint(&app, transfer.clone()).await;

    // A block without it blacklists k2 (a sanctions push naming its address).
    let push = signed(
        &keys[0],
        0,
        0,
        TxBuilder::new(vec![to_any(&cpb::MsgUpdateSanctionsList {
            authority: keys[0].address().to_bech32(),
            blocked_addresses: vec![keys[2].address().to_bech32()],
            blocked_vasps: vec![],
            reason: String::new(),
            evidence_ref: "list-1".into(),
        })])
        .gas(1_000_000),
    );
    let r = app.finalize_block(block_req(1, vec![push])).await.unwrap();
    assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
    app.commit_keeping_check_state().await.unwrap();

    // The recheck, as a driver runs it after the commit: the transfer fails the KYC gate.
    let mut rebuild = app.begin_check_rebuild().await.unwrap();
    // (Its footprint is not replayed: the block wrote the recipient's identity, which the KYC gate read.)
    let err = app.recheck(&mut rebuild, &decoded, &footprint).await.expect_err("the recheck must drop it");
    assert_eq!((err.codespace, err.code), ("compliance", 18), "{}", err.log);
    assert_eq!(err.log, format!("recipient={}: address is blacklisted", keys[2].address().to_bech32()));
    assert_eq!(rebuild.counts(), (0, 1));
    assert!(app.finish_check_rebuild(rebuild, Vec::new).await.0.is_empty());
    // The gate trace this node keeps explains why.
    let trace = app.queries().tx_trace(&decoded.hash).await.expect("trace kept at recheck");
    assert!(!trace.accepted);
    assert_eq!(trace.results[0].name, "kyc_gate");

    // A proposer that includes it anyway gets the same code at execution; nothing moves.
    let before = lantau_app::bank::query::balance(&app.snapshot(), &keys[2].address(), DENOM).await.unwrap();
    let r = app.finalize_block(block_req(2, vec![transfer])).await.unwrap();
    app.commit().await.unwrap();
    assert_eq!((r.tx_results[0].codespace.as_str(), r.tx_results[0].code.value()), ("compliance", 18));
    let after = lantau_app::bank::query::balance(&app.snapshot(), &keys[2].address(), DENOM).await.unwrap();
    assert_eq!(before, after);
    app.release().await;
}

/// After a block that touched nothing a waiting transaction's admission read,
/// the recheck replays its admission's writes: the sender's next sequence is still taken.
/// A waiting transaction whose fee payer the block paid replays too, taking its fee from the
/// larger balance: exactly what running it again gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_transaction_the_block_left_alone_is_replayed_and_one_whose_payer_it_paid_pays_from_the_new_balance() {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (_dir, app, init) = new_chain("recheck-1", genesis(&keys)).await;
    init.unwrap();
    let native = |from: usize, seq: u64, to: usize| {
        signed(
            &keys[from],
            from as u64,
            seq,
            TxBuilder::new(vec![msg_send(&keys[from].address(), &keys[to].address(), &[Coin::new("alantau", 5u128)])]).gas(200_000),
        )
    };
    let admit = |bytes: Vec<u8>| admit_keeping_footprint(&app, bytes);
    // Waiting: k3's transfer (left alone by the block) and k4's (the block pays k4).
    let (t3, fp3) = admit(native(3, 0, 5)).await;
    let (t4, fp4) = admit(native(4, 0, 5)).await;
    let r = app.finalize_block(block_req(1, vec![native(6, 0, 4)])).await.unwrap();
    assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
    app.commit_keeping_check_state().await.unwrap();

    let mut rebuild = app.begin_check_rebuild().await.unwrap();
    let same = app.recheck(&mut rebuild, &t3, &fp3).await.unwrap();
    assert!(Arc::ptr_eq(&same, &fp3), "replayed: the footprint stands");
    let new4 = app.recheck(&mut rebuild, &t4, &fp4).await.unwrap();
    assert_ne!(*new4, *fp4, "k4's balance rose: the fee comes out of the new balance");
    assert_eq!(rebuild.counts(), (2, 0));
    // Running it again in full (a footprint that never replays) writes the same.
    let mut full = app.begin_check_rebuild().await.unwrap();
    let rerun = app.recheck(&mut full, &t4, &lantau_app::Footprint::none()).await.unwrap();
    assert_eq!(full.counts(), (0, 1));
    assert_eq!(*rerun, *new4, "the replay wrote what the ante would");
    let (failed, _) = app.finish_check_rebuild(rebuild, Vec::new).await;
    assert!(failed.is_empty());
    // The new overlay holds both sequences: sequence 0 again is refused, 1 is admitted.
    for from in [3, 4] {
        let again = app.check_tx_bytes(&native(from, 0, 5)).await;
        assert_eq!(again.result.expect_err("sequence 0 is taken").code, 32, "k{from}");
        assert!(app.check_tx_bytes(&native(from, 1, 5)).await.result.is_ok(), "k{from}");
    }
}

/// A block that included a sender's earlier transaction wrote the very account and fee
/// balance its admission wrote (a gated stablecoin transfer moves no native coin), so the
/// sender's next waiting transaction still replays; after a native send, whose amount the
/// admission did not deduct, the next one runs again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_senders_next_transaction_replays_when_the_block_wrote_what_its_admission_expected() {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (_dir, app, init) = new_chain("recheck-1", genesis(&keys)).await;
    init.unwrap();
    let gated = |seq: u64| gated_transfer(&keys, seq);
    let native = |seq: u64| {
        signed(&keys[5], 5, seq, TxBuilder::new(vec![msg_send(&keys[5].address(), &keys[6].address(), &[Coin::new("alantau", 5u128)])]).gas(200_000))
    };
    let admit = |bytes: Vec<u8>| admit_keeping_footprint(&app, bytes);
    let g0 = gated(0);
    admit(g0.clone()).await;
    let (g1, fpg1) = admit(gated(1)).await;
    let n0 = native(0);
    admit(n0.clone()).await;
    let (n1, fpn1) = admit(native(1)).await;
    // The block carries each sender's first transaction, as a proposal reaps them.
    let r = app.finalize_block(block_req(1, vec![g0, n0])).await.unwrap();
    for t in &r.tx_results {
        assert!(t.code.is_ok(), "{}", t.log);
    }
    app.commit_keeping_check_state().await.unwrap();

    let mut rebuild = app.begin_check_rebuild().await.unwrap();
    // The admission took only the fee from k1's balance record; the block moved the record's
    // stablecoin entry too, which the admission did not take: replayed, with the fee taken
    // from the record as it is now.
    let replayed = app.recheck(&mut rebuild, &g1, &fpg1).await.unwrap();
    assert_eq!(rebuild.counts(), (1, 0), "the gated transfer's reads hold what its admission found: replayed");
    let again = app.recheck(&mut rebuild, &n1, &fpn1).await.unwrap();
    assert_ne!(*again, *fpn1, "the native send moved k5's coin: its next one ran again");
    assert_eq!(rebuild.counts(), (1, 1));
    // Running it again in full writes what the replay wrote.
    let mut full = app.begin_check_rebuild().await.unwrap();
    let rerun = app.recheck(&mut full, &g1, &lantau_app::Footprint::none()).await.unwrap();
    assert_eq!((full.counts(), &*rerun), ((0, 1), &*replayed), "the replay wrote what the ante would");
    assert!(app.finish_check_rebuild(rebuild, Vec::new).await.0.is_empty());
    // The rebuilt overlay expects sequence 2 from both.
    assert_eq!(app.check_tx_bytes(&gated(1)).await.result.expect_err("taken").code, 32);
    assert!(app.check_tx_bytes(&gated(2)).await.result.is_ok());
    assert_eq!(app.check_tx_bytes(&native(1)).await.result.expect_err("taken").code, 32);
    assert!(app.check_tx_bytes(&native(2)).await.result.is_ok());
}

/// A sender's waiting transactions replay one after another, each on what the replay before it
/// wrote, and a transaction run in full after them sees those writes: the overlay a recheck
/// builds is the same whichever way each transaction was rechecked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_senders_waiting_transactions_replay_on_the_writes_before_them_and_a_full_run_after_them_sees_those_writes() {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (_dir, app, init) = new_chain("recheck-1", genesis(&keys)).await;
    init.unwrap();
    let gated = |seq: u64| gated_transfer(&keys, seq);
    let admit = |bytes: Vec<u8>| admit_keeping_footprint(&app, bytes);
    let g0 = gated(0);
    admit(g0.clone()).await;
    let mut waiting = Vec::new();
    for seq in 1..=3 {
        waiting.push(admit(gated(seq)).await);
    }
    let r = app.finalize_block(block_req(1, vec![g0])).await.unwrap();
    assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
    app.commit_keeping_check_state().await.unwrap();

    // The first two replay (the block moved the record's stablecoin: each pays its fee from
    // the record as the replay before it left it); the third runs in full after them.
    let mut rebuild = app.begin_check_rebuild().await.unwrap();
    let mut rechecked = Vec::new();
    for (tx, fp) in &waiting[..2] {
        rechecked.push(app.recheck(&mut rebuild, tx, fp).await.unwrap());
    }
    assert_eq!(rebuild.counts(), (2, 0), "both replayed");
    rechecked.push(app.recheck(&mut rebuild, &waiting[2].0, &lantau_app::Footprint::none()).await.expect("sequence 3 is next after the replays"));
    assert_eq!(rebuild.counts(), (2, 1));
    // All three run in full write the same.
    let mut full = app.begin_check_rebuild().await.unwrap();
    for ((tx, _), got) in waiting.iter().zip(&rechecked) {
        let rerun = app.recheck(&mut full, tx, &lantau_app::Footprint::none()).await.unwrap();
        assert_eq!(*rerun, **got, "sequence {}", tx.sequence);
    }
    assert!(app.finish_check_rebuild(rebuild, Vec::new).await.0.is_empty());
    // The rebuilt overlay expects sequence 4.
    assert_eq!(app.check_tx_bytes(&gated(3)).await.result.expect_err("taken").code, 32);
    assert!(app.check_tx_bytes(&gated(4)).await.result.is_ok());
}

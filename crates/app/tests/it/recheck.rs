//! The recheck re-screens: a transfer admitted before its recipient was blacklisted leaves the
//! mempool at the next recheck with the gate's code, and a block that carries it anyway
//! executes it as a rejection (fee paid, nothing moved).

use lantau_client::{msg_send, to_any, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::Coin;
use lantau_proto::chain::compliance::v1 as cpb;

use crate::compliance_props::{block_req, genesis, key, new_chain, DENOM};

fn signed(k: &SecretKey, account_number: u64, sequence: u64, b: TxBuilder) -> Vec<u8> {
    b.sign(k, &SignerData { chain_id: "recheck-1".into(), account_number, sequence })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_whose_recipient_is_blacklisted_after_admission_is_dropped_at_recheck_with_code_18() {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (_dir, app, init) = new_chain("recheck-1", genesis(&keys)).await;
    init.unwrap();

    // k1 (full tier) pays k2 (full tier): admitted.
    let payload = cpb::TravelRulePayload {
        tx_hash: String::new(),
        originator_ref: "r1".into(),
        beneficiary_ref: "r2".into(),
        originator_vasp: "VASP-1".into(),
        beneficiary_vasp: "VASP-2".into(),
        tier: "full".into(),
    };
    let transfer = signed(
        &keys[1],
        1,
        0,
        TxBuilder::new(vec![msg_send(&keys[1].address(), &keys[2].address(), &[Coin::new(DENOM, 500u128)])]).gas(400_000).travel_rule(&payload),
    );
    let admitted = app.check_tx_bytes(&transfer).await;
    assert!(admitted.result.is_ok(), "{:?}", admitted.result);
    let decoded = admitted.decoded.expect("decoded at admission");

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
    let err = app.recheck(&mut rebuild, &decoded).await.expect_err("the recheck must drop it");
    assert_eq!((err.codespace, err.code), ("compliance", 18), "{}", err.log);
    assert_eq!(err.log, format!("recipient={}: address is blacklisted", keys[2].address().to_bech32()));
    assert!(app.finish_check_rebuild(rebuild, Vec::new).await.is_empty());
    // The gate trace this node keeps explains why.
    let trace = app.tx_trace(&decoded.hash).await.expect("trace kept at recheck");
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

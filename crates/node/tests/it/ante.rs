//! The ante rules of the spec's Authentication section, through signed transactions.

use std::time::Duration;

use cosmos_sdk_proto::cosmos::tx::v1beta1::TxRaw;
use cosmos_sdk_proto::Any;
use lantau_client::{msg_send, SignerData, TxBuilder};
use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use prost::Message;

fn send(amount: u128) -> TxBuilder {
    let alice = dev_key("alice");
    TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, amount)])]).gas(120_000)
}

async fn verdict(n: &TestNode, tx: &[u8]) -> (u32, String, String) {
    let b = n.client.broadcast(tx, "BROADCAST_MODE_SYNC").await.unwrap();
    (b.code, b.codespace, b.raw_log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_tx_signed_at_the_same_sequence_is_rejected() {
    let n = TestNode::start_with(Default::default(), 2_000).await.unwrap();
    let alice = dev_key("alice");
    let t1 = n.sign(&alice, &send(1)).await.unwrap();
    let t2 = n.sign(&alice, &send(2)).await.unwrap();
    assert_eq!(verdict(&n, &t1).await.0, 0);
    let (code, space, log) = verdict(&n, &t2).await;
    assert_eq!((code, space.as_str()), (32, "sdk"), "{log}");
    assert!(log.contains("account sequence mismatch, expected 1, got 0"), "{log}");
    // The same bytes again: already in the mempool.
    assert_eq!(verdict(&n, &t1).await.0, 19);
    // A next sequence signed ahead is admitted behind the first.
    let (num, _) = n.client.account(&alice.address()).await.unwrap().unwrap();
    let t3 = send(3).sign(&alice, &SignerData { chain_id: n.chain_id.clone(), account_number: num, sequence: 1 });
    assert_eq!(verdict(&n, &t3).await.0, 0);
    let r = n.client.wait_for_tx(&lantau_client::tx::tx_hash_hex(&t3), Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
    assert_eq!(r.code, 0, "{}", r.raw_log);
    // After landing, the first bytes fail on the stale sequence.
    assert_eq!(verdict(&n, &t1).await.0, 32);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejection_at_admission_does_not_advance_the_sequence() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let cheap = n.sign(&alice, &send(1).fee(1)).await.unwrap();
    let (code, space, log) = verdict(&n, &cheap).await;
    assert_eq!((code, space.as_str()), (13, "sdk"), "{log}");
    assert!(log.contains("insufficient fee"), "{log}");
    assert_eq!(n.client.account(&alice.address()).await.unwrap().unwrap().1, 0);
    // The corrected transaction is re-signed at the same sequence and lands.
    let good = n.sign(&alice, &send(1)).await.unwrap();
    assert_eq!(verdict(&n, &good).await.0, 0);
    let r = n.client.wait_for_tx(&lantau_client::tx::tx_hash_hex(&good), Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
    assert_eq!(r.code, 0);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_signatures_chain_ids_and_sequences_are_rejected() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let (num, seq) = n.client.account(&alice.address()).await.unwrap().unwrap();

    // Another chain id: the signature does not verify.
    let other = send(1).sign(&alice, &SignerData { chain_id: "other-chain".into(), account_number: num, sequence: seq });
    let (code, _, log) = verdict(&n, &other).await;
    assert_eq!(code, 4, "{log}");
    assert!(log.contains("chain-id"), "{log}");

    // A future sequence.
    let future = send(1).sign(&alice, &SignerData { chain_id: n.chain_id.clone(), account_number: num, sequence: seq + 5 });
    assert_eq!(verdict(&n, &future).await.0, 32);

    // High-S: flip s to n - s and the recovery bit.
    let good = send(1).sign(&alice, &SignerData { chain_id: n.chain_id.clone(), account_number: num, sequence: seq });
    let mut raw = TxRaw::decode(good.as_slice()).unwrap();
    let sig = &mut raw.signatures[0];
    let order = hex::decode("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141").unwrap();
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let d = i16::from(order[i]) - i16::from(sig[32 + i]) - borrow;
        sig[32 + i] = (d.rem_euclid(256)) as u8;
        borrow = if d < 0 { 1 } else { 0 };
    }
    sig[64] ^= 1;
    let (code, _, log) = verdict(&n, &raw.encode_to_vec()).await;
    assert_eq!(code, 4, "{log}");

    // A corrupted signature.
    let mut raw = TxRaw::decode(good.as_slice()).unwrap();
    raw.signatures[0][5] ^= 0xff;
    assert_eq!(verdict(&n, &raw.encode_to_vec()).await.0, 4);

    // A signature of the wrong length.
    let mut raw = TxRaw::decode(good.as_slice()).unwrap();
    raw.signatures[0].truncate(10);
    assert_eq!(verdict(&n, &raw.encode_to_vec()).await.0, 4);

    // Nothing was written by any of these.
    assert_eq!(n.client.account(&alice.address()).await.unwrap().unwrap().1, seq);
    // The good one still lands.
    assert_eq!(verdict(&n, &good).await.0, 0);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_unknown_oversized_and_gas_limit_violations_are_rejected() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let (num, seq) = n.client.account(&alice.address()).await.unwrap().unwrap();
    let signer = SignerData { chain_id: n.chain_id.clone(), account_number: num, sequence: seq };

    assert_eq!(verdict(&n, &[0xde, 0xad, 0xbe, 0xef]).await.0, 2);

    let unknown = TxBuilder::new(vec![Any { type_url: "/cosmos.gov.v1.MsgVote".into(), value: vec![] }]).sign(&alice, &signer);
    let (code, _, log) = verdict(&n, &unknown).await;
    assert_eq!(code, 2, "{log}");
    assert!(log.contains("unable to resolve type URL /cosmos.gov.v1.MsgVote"), "{log}");

    let big = send(1).memo("x".repeat(70_000)).sign(&alice, &signer);
    assert_eq!(verdict(&n, &big).await.0, 21);

    let memo = send(1).memo("x".repeat(300)).sign(&alice, &signer);
    assert_eq!(verdict(&n, &memo).await.0, 12);

    let over = send(1).gas(31_000_000).sign(&alice, &signer);
    assert_eq!(verdict(&n, &over).await.0, 41);

    let tiny = send(1).gas(1_000).sign(&alice, &signer);
    let (code, _, log) = verdict(&n, &tiny).await;
    assert_eq!(code, 11, "{log}");

    let wrong_denom_fee = {
        let mut b = send(1);
        b.fee = Some(1);
        b
    }
    .sign(&alice, &signer);
    assert_eq!(verdict(&n, &wrong_denom_fee).await.0, 13);

    let zero = TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, 0u128)])]).sign(&alice, &signer);
    assert_eq!(verdict(&n, &zero).await.0, 10);

    // Signed by alice for a message whose signer is bob.
    let bob_msg = TxBuilder::new(vec![msg_send(&dev_addr("bob"), &alice.address(), &[Coin::new(NATIVE_DENOM, 1u128)])]).sign(&alice, &signer);
    assert_eq!(verdict(&n, &bob_msg).await.0, 4);

    // An account that does not exist cannot pay.
    let stranger = lantau_crypto::SecretKey::from_bytes(&[7u8; 32]).unwrap();
    let s = TxBuilder::new(vec![msg_send(&stranger.address(), &alice.address(), &[Coin::new(NATIVE_DENOM, 1u128)])])
        .sign(&stranger, &SignerData { chain_id: n.chain_id.clone(), account_number: 0, sequence: 0 });
    assert_eq!(verdict(&n, &s).await.0, 9);

    assert_eq!(n.client.account(&alice.address()).await.unwrap().unwrap().1, seq);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admitted_transfer_can_fail_in_the_block_and_still_pays_its_fee() {
    let n = TestNode::start().await.unwrap();
    let carol = dev_key("carol");
    let balance = n.client.balance(&carol.address(), NATIVE_DENOM).await.unwrap().0;
    let tx =
        n.sign(&carol, &TxBuilder::new(vec![msg_send(&carol.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, balance)])]).gas(100_000)).await.unwrap();
    let b = n.client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap();
    assert_eq!(b.code, 0, "admission does not execute messages: {}", b.raw_log);
    let r = n.client.wait_for_tx(&b.txhash, Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
    assert_eq!((r.code, r.codespace.as_str()), (5, "sdk"), "{}", r.raw_log);
    assert!(r.raw_log.contains("insufficient funds"), "{}", r.raw_log);
    let fee = 100_000u128 * 1_000_000_000;
    assert_eq!(n.client.balance(&carol.address(), NATIVE_DENOM).await.unwrap().0, balance - fee);
    assert_eq!(n.client.account(&carol.address()).await.unwrap().unwrap().1, 1);
    n.stop().await;
}

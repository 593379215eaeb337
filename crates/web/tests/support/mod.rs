//! What the web faces' tests share: sending as a wallet does, the threshold flag a large
//! transfer raises, and the refusal a BLOCKED subject meets.

#![allow(dead_code)] // each test binary uses a part

use std::time::Duration;

use lantau_client::sender::{Sender, Sent};
use lantau_client::{msg_send, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::Coin;
use lantau_test_utils::{dev_addr, dev_key, TestNode};

/// Signs (gas by simulation), broadcasts and confirms.
pub(crate) async fn send(n: &TestNode, key: &SecretKey, b: TxBuilder) -> Sent {
    Sender::new(n.client.clone(), key.clone(), Duration::from_secs(20)).send_tx(b).await.unwrap()
}

/// An HKD transfer from alice with the Travel Rule payload the registry gives.
pub(crate) async fn alice_pays(n: &TestNode, to: &lantau_primitives::Address, cents: u128) -> Sent {
    let alice = dev_key("alice");
    let payload = n.client.travel_rule_payload(&alice.address(), to).await.unwrap();
    send(n, &alice, TxBuilder::new(vec![msg_send(&alice.address(), to, &[Coin::new("hkd.demo", cents)])]).travel_rule(&payload)).await
}

/// A large transfer from alice to the issuer: the threshold gate flags it. Returns its hash.
pub(crate) async fn raise_threshold_flag(n: &TestNode) -> String {
    let sent = alice_pays(n, &dev_addr("issuer"), 800_000).await;
    assert!(sent.is_success(), "{sent:?}");
    sent.txhash().to_string()
}

/// alice's next transfer is refused at admission with code 18 (her flag closed BLOCKED).
pub(crate) async fn alices_next_transfer_is_refused_with_code_18(n: &TestNode) {
    match alice_pays(n, &dev_addr("bob"), 100).await {
        Sent::Refused(b) => assert_eq!((b.codespace.as_str(), b.code), ("compliance", 18), "{b:?}"),
        other => panic!("alice's next transfer was not refused at admission: {other:?}"),
    }
}

/// `personal_sign` as a wallet does it (v is 27 or 28): a Sign-In with Ethereum signature.
pub(crate) fn personal_sign(key: &SecretKey, message: &str) -> String {
    let mut sig = key.sign_digest(&lantau_web::siwe::personal_digest(message));
    sig[64] += 27;
    format!("0x{}", const_hex::encode(sig))
}

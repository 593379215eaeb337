//! The Prometheus endpoint, scraped after a gated transfer.

use std::time::Duration;

use lantau_client::{msg_send, TxBuilder};
use lantau_primitives::Coin;
use lantau_test_utils::{dev_addr, dev_key, TestNode};

/// The value of the first sample whose line starts with `prefix` (name and labels).
fn sample(text: &str, prefix: &str) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find(|l| l.starts_with(prefix))?.rsplit(' ').next()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_endpoint_counts_blocks_admissions_and_gate_verdicts() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let p = n.client.travel_rule_payload(&alice.address(), &dev_addr("issuer")).await.unwrap();
    let b = TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("issuer"), &[Coin::new("hkd.demo", 250u128)])]).gas(400_000).travel_rule(&p);
    let r = n.client.broadcast(&n.sign(&alice, &b).await.unwrap(), "BROADCAST_MODE_SYNC").await.unwrap();
    assert_eq!(r.code, 0, "{}", r.raw_log);
    let tx = n.client.wait_for_tx(&r.txhash, Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
    assert_eq!(tx.code, 0, "{}", tx.raw_log);
    // A refused one: carol has no identity.
    let pc = lantau_proto::chain::compliance::v1::TravelRulePayload { tier: "full".into(), ..p.clone() };
    let bad = TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("carol"), &[Coin::new("hkd.demo", 1u128)])]).gas(400_000).travel_rule(&pc);
    let r2 = n.client.broadcast(&n.sign(&alice, &bad).await.unwrap(), "BROADCAST_MODE_SYNC").await.unwrap();
    assert_ne!(r2.code, 0);

    let resp = reqwest::get(format!("http://{}/metrics", n.node.metrics_addr)).await.unwrap();
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("application/openmetrics-text"));
    let text = resp.text().await.unwrap();
    let height: u64 = tx.height.parse().unwrap();
    assert!(sample(&text, "lantau_block_height ").unwrap() >= height as f64, "{text}");
    assert!(sample(&text, "lantau_txs_total{result=\"ok\"").unwrap() >= 1.0, "{text}");
    assert!(sample(&text, "lantau_admissions_total{result=\"ok\"").unwrap() >= 1.0, "{text}");
    assert!(sample(&text, "lantau_admissions_total{result=\"error\",codespace=\"compliance\"").unwrap() >= 1.0, "{text}");
    assert!(sample(&text, "lantau_admission_seconds_count").unwrap() >= 2.0, "{text}");
    assert!(sample(&text, "lantau_finalize_block_seconds_count").unwrap() >= 1.0, "{text}");
    assert!(sample(&text, "lantau_commit_seconds_count").unwrap() >= 1.0, "{text}");
    assert!(sample(&text, "lantau_gate_verdicts_total{phase=\"deliver\"").unwrap() >= 1.0, "{text}");
    assert!(text.contains("status=\"fail\""), "the refused transfer's failing gate: {text}");
    assert!(sample(&text, "lantau_store_bytes ").unwrap() > 0.0, "{text}");
    assert!(text.contains("lantau_mempool_txs "), "{text}");
    n.stop().await;
}

//! The standard tx service: broadcast, confirm by GET tx and by WebSocket, search, balances.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use lantau_client::{msg_send, TxBuilder};
use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

async fn next_json<S>(ws: &mut S) -> Value
where
    S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(30), ws.next()).await.expect("ws message within 30s").unwrap().unwrap();
        if let Message::Text(t) = msg {
            return serde_json::from_str(&t).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_msg_send_is_confirmed_by_get_tx_and_websocket_and_moves_balances() {
    let n = TestNode::start().await.unwrap();
    let (alice, bob) = (dev_key("alice"), dev_addr("bob"));
    let bob_before = n.client.balance(&bob, NATIVE_DENOM).await.unwrap();
    let alice_before = n.client.balance(&alice.address(), NATIVE_DENOM).await.unwrap();

    // Subscribe first.
    let ws_url = format!("ws://{}/websocket", n.node.rpc_addr);
    let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url).await.unwrap();
    let q = format!("tm.event='Tx' AND message.sender='{}'", alice.address());
    ws.send(Message::Text(json!({"jsonrpc":"2.0","id":7,"method":"subscribe","params":{"query": q}}).to_string().into())).await.unwrap();
    let ack = next_json(&mut ws).await;
    assert_eq!(ack["id"], 7);
    assert!(ack.get("error").is_none(), "{ack}");

    let tx = n.sign(&alice, &TxBuilder::new(vec![msg_send(&alice.address(), &bob, &[Coin::new(NATIVE_DENOM, 1234u128)])]).gas(150_000)).await.unwrap();
    let b = n.client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap();
    assert_eq!(b.code, 0, "{}", b.raw_log);
    assert_eq!(b.txhash.len(), 64);
    assert_eq!(b.txhash, b.txhash.to_uppercase());

    let r = n.client.wait_for_tx(&b.txhash, Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
    assert_eq!(r.code, 0, "{}", r.raw_log);
    assert!(r.height.parse::<u64>().unwrap() >= 1);
    let kinds: Vec<&str> = r.events.iter().filter_map(|e| e["type"].as_str()).collect();
    for k in ["coin_spent", "coin_received", "transfer", "message", "tx"] {
        assert!(kinds.contains(&k), "missing {k} in {kinds:?}");
    }

    // The block's results list it, with its events (the index keeps each transaction's
    // result once; block_results puts the block together from them).
    let url = format!("http://{}/block_results?height={}", n.node.rpc_addr, r.height);
    let br: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    let results = br["result"]["txs_results"].as_array().unwrap_or_else(|| panic!("{br}"));
    let ours: Vec<&Value> = results.iter().filter(|t| t["events"].as_array().is_some_and(|e| e.iter().any(|e| e["type"] == "transfer"))).collect();
    assert!(!ours.is_empty(), "{br}");
    assert_eq!(results.iter().map(|t| t["code"].as_u64().unwrap_or(0)).max(), Some(0), "{br}");
    assert_eq!(br["result"]["height"], r.height);

    let ev = next_json(&mut ws).await;
    assert_eq!(ev["id"], 7);
    assert_eq!(ev["result"]["data"]["type"], "tendermint/event/Tx");
    assert_eq!(ev["result"]["events"]["tx.hash"][0], b.txhash);

    let fee = 150_000u128 * 1_000_000_000;
    assert_eq!(n.client.balance(&bob, NATIVE_DENOM).await.unwrap().0, bob_before.0 + 1234);
    assert_eq!(n.client.balance(&alice.address(), NATIVE_DENOM).await.unwrap().0, alice_before.0 - 1234 - fee);
    let (_, seq) = n.client.account(&alice.address()).await.unwrap().unwrap();
    assert_eq!(seq, 1);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_by_sender_and_recipient_oldest_first_by_default() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let carol = dev_addr("carol");
    let mut hashes = Vec::new();
    for i in 0..3u128 {
        let tx = n.sign(&alice, &TxBuilder::new(vec![msg_send(&alice.address(), &carol, &[Coin::new(NATIVE_DENOM, 10 + i)])])).await.unwrap();
        let b = n.client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap();
        assert_eq!(b.code, 0, "{}", b.raw_log);
        n.client.wait_for_tx(&b.txhash, Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
        hashes.push(b.txhash);
    }
    let (total, txs) = n.client.search(&format!("message.sender='{}'", alice.address()), false, 100).await.unwrap();
    assert_eq!(total, 3);
    assert_eq!(txs.iter().map(|t| t.txhash.clone()).collect::<Vec<_>>(), hashes);
    let (_, desc) = n.client.search(&format!("transfer.recipient='{carol}'"), true, 100).await.unwrap();
    assert_eq!(desc.first().unwrap().txhash, hashes[2]);
    let h: u64 = txs[0].height.parse().unwrap();
    let (t, _) = n.client.search(&format!("tx.height={h} AND message.sender='{}'", alice.address()), false, 10).await.unwrap();
    assert!(t >= 1);

    // Raw REST: the default order is oldest first, and `total` is a string.
    let url = format!("{}/cosmos/tx/v1beta1/txs?query=message.sender%3D%27{}%27&limit=2", n.rest_url, alice.address());
    let v: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    assert_eq!(v["total"], "3");
    assert_eq!(v["tx_responses"].as_array().unwrap().len(), 2);
    assert_eq!(v["tx_responses"][0]["txhash"], hashes[0]);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_bad_inputs_get_clear_errors() {
    let n = TestNode::start().await.unwrap();
    let http = reqwest::Client::new();
    let get = |p: &str| {
        let u = format!("{}{}", n.rest_url, p);
        let h = http.clone();
        async move {
            let r = h.get(u).send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (s, v) = get("/cosmos/bank/v1beta1/balances/notanaddress").await;
    assert_eq!((s, v["code"].as_i64()), (400, Some(3)), "{v}");
    let (s, v) = get("/cosmos/auth/v1beta1/accounts/0x1234").await;
    assert_eq!(s, 400, "{v}");
    let (s, v) = get(&format!("/cosmos/auth/v1beta1/accounts/{}", lantau_primitives::Address([9; 20]))).await;
    assert_eq!((s, v["code"].as_i64()), (404, Some(5)), "{v}");
    let (s, v) = get("/cosmos/tx/v1beta1/txs?query=message.sender%3D%27x%27+OR+a%3D%27b%27").await;
    assert_eq!(s, 400, "{v}");
    assert!(v["message"].as_str().unwrap().contains("OR"), "{v}");
    let (s, _) = get("/cosmos/tx/v1beta1/txs?query=tx.height%3D").await;
    assert_eq!(s, 400);
    let (s, _) = get("/cosmos/tx/v1beta1/txs").await;
    assert_eq!(s, 400);
    let (s, v) = get(&format!("/cosmos/tx/v1beta1/txs/{}", "AB".repeat(32))).await;
    assert_eq!((s, v["code"].as_i64()), (404, Some(5)), "{v}");
    let (s, _) = get("/cosmos/tx/v1beta1/txs/nothex").await;
    assert_eq!(s, 400);
    let (s, v) = get("/no/such/path").await;
    assert_eq!((s, v["code"].as_i64()), (404, Some(5)));
    let (s, v) = get("/cosmos/base/tendermint/v1beta1/node_info").await;
    assert_eq!(s, 200);
    assert_eq!(v["default_node_info"]["network"], n.chain_id);

    let post = |body: Value| {
        let u = format!("{}/cosmos/tx/v1beta1/txs", n.rest_url);
        let h = http.clone();
        async move {
            let r = h.post(u).json(&body).send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    assert_eq!(post(json!({"tx_bytes": "!!!", "mode": "BROADCAST_MODE_SYNC"})).await.0, 400);
    assert_eq!(post(json!({"tx_bytes": "", "mode": "BROADCAST_MODE_SYNC"})).await.0, 400);
    assert_eq!(post(json!({"tx_bytes": "AAAA", "mode": "BROADCAST_MODE_FOO"})).await.0, 400);
    assert_eq!(post(json!({"tx_bytes": "AAAA", "mode": "BROADCAST_MODE_BLOCK"})).await.0, 400);
    // Bytes that are not a transaction: a verdict, not an HTTP error.
    let (s, v) = post(json!({"tx_bytes": "3q2+7w==", "mode": "BROADCAST_MODE_SYNC"})).await;
    assert_eq!(s, 200);
    assert_eq!((v["tx_response"]["code"].as_u64(), v["tx_response"]["codespace"].as_str()), (Some(2), Some("sdk")), "{v}");
    let r = http.post(format!("{}/cosmos/tx/v1beta1/txs", n.rest_url)).body("{not json").header("content-type", "application/json").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 400);
    // The node still serves.
    assert!(n.client.chain_id().await.is_ok());
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_broadcast_returns_only_the_hash_and_the_tx_lands() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let tx = n.sign(&alice, &TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, 5u128)])])).await.unwrap();
    let b = n.client.broadcast(&tx, "BROADCAST_MODE_ASYNC").await.unwrap();
    assert_eq!(b.code, 0);
    assert_eq!(b.txhash, lantau_client::tx::tx_hash_hex(&tx));
    let r = n.client.wait_for_tx(&b.txhash, Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
    assert_eq!(r.code, 0);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_estimates_gas_without_writing() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let tx = n.sign(&alice, &TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, 5u128)])])).await.unwrap();
    let gas = n.client.simulate(&tx).await.unwrap();
    assert!(gas > 10_000 && gas < 200_000, "gas {gas}");
    let (_, seq) = n.client.account(&alice.address()).await.unwrap().unwrap();
    assert_eq!(seq, 0);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_address_that_receives_coins_gets_an_account_and_can_send() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let fresh = lantau_crypto::SecretKey::random();
    assert!(n.client.account(&fresh.address()).await.unwrap().is_none());
    let fund = n.sign(&alice, &TxBuilder::new(vec![msg_send(&alice.address(), &fresh.address(), &[Coin::new(NATIVE_DENOM, 10u128.pow(18))])])).await.unwrap();
    let b = n.client.broadcast(&fund, "BROADCAST_MODE_SYNC").await.unwrap();
    assert_eq!(b.code, 0, "{}", b.raw_log);
    n.client.wait_for_tx(&b.txhash, Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
    let (num, seq) = n.client.account(&fresh.address()).await.unwrap().expect("the recipient has an account now");
    assert!(num >= 8, "numbered after the genesis accounts: {num}");
    assert_eq!(seq, 0);
    let back =
        n.sign(&fresh, &TxBuilder::new(vec![msg_send(&fresh.address(), &alice.address(), &[Coin::new(NATIVE_DENOM, 1u128)])]).gas(100_000)).await.unwrap();
    let r = match n.client.broadcast_and_confirm(&back, Duration::from_secs(30)).await.unwrap() {
        lantau_client::Confirmation::Included(r) => r,
        lantau_client::Confirmation::Rejected(b) => panic!("rejected: {}", b.raw_log),
    };
    assert_eq!(r.code, 0, "{}", r.raw_log);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_by_height_alone_and_empty_ranges() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let tx = n.sign(&alice, &TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, 3u128)])])).await.unwrap();
    let b = n.client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap();
    let r = n.client.wait_for_tx(&b.txhash, Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
    let h: u64 = r.height.parse().unwrap();
    let (total, txs) = n.client.search(&format!("tx.height={h}"), false, 10).await.unwrap();
    assert_eq!(total, 1);
    assert_eq!(txs[0].txhash, b.txhash);
    let (total, _) = n.client.search("tm.event='Tx'", false, 10).await.unwrap();
    assert_eq!(total, 1);
    let (total, _) = n.client.search(&format!("tx.height>={h} AND tx.height<={h}"), true, 10).await.unwrap();
    assert_eq!(total, 1);
    let (total, _) = n.client.search("tx.height>10 AND tx.height<5", false, 10).await.unwrap();
    assert_eq!(total, 0);
    let (total, _) = n.client.search(&format!("tx.hash='{}'", b.txhash), false, 10).await.unwrap();
    assert_eq!(total, 1);
    // A number compared to a value like "3alantau" matches as CometBFT does (by its numeric prefix).
    let (total, _) = n.client.search(&format!("tx.height={h} AND transfer.amount=3"), false, 10).await.unwrap();
    assert_eq!(total, 1);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_accepts_an_unsigned_transaction_as_wallet_libraries_send_it() {
    use cosmos_sdk_proto::cosmos::tx::v1beta1::TxRaw;
    use prost::Message;
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let signed = n.sign(&alice, &TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, 5u128)])]).fee(0)).await.unwrap();
    let mut raw = TxRaw::decode(signed.as_slice()).unwrap();
    raw.signatures = vec![vec![]];
    let gas = n.client.simulate(&raw.encode_to_vec()).await.unwrap();
    assert!(gas > 10_000, "gas {gas}");
    raw.signatures = vec![];
    assert!(n.client.simulate(&raw.encode_to_vec()).await.unwrap() > 10_000);
    n.stop().await;
}

/// The spec's client flows, the same suite the 4-validator CometBFT test runs against a
/// validator (`lantau_test_utils::flows`), against the embedded engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spec_client_flows_pass_on_the_embedded_engine() {
    let n = TestNode::start().await.unwrap();
    let e = lantau_test_utils::flows::Endpoints { rest: n.rest_url.clone(), rpc: n.rpc_url.clone(), json_rpc: n.eth_url.clone() };
    let r = lantau_test_utils::flows::spec_client_flows(&e, &dev_key("alice"), &dev_addr("issuer")).await.unwrap();
    assert_ne!(r.sync_hash, r.async_hash);
    n.stop().await;
}

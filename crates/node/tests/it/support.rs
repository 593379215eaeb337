//! Helpers shared by the compliance end-to-end tests: sign and broadcast (SYNC), confirm by
//! the transaction query, typed events of a result, and the delegation messages.

use std::time::Duration;

use lantau_client::{msg_send, to_any, Broadcast, TxBuilder, TxResponse};
use lantau_crypto::SecretKey;
use lantau_primitives::{Address, Coin};
use lantau_proto::chain::compliance::v1 as cpb;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::Value;

/// A fresh, deterministic key (never a dev account).
pub(crate) fn key(n: u8) -> SecretKey {
    SecretKey::from_bytes(&[n; 32]).unwrap()
}

/// Signs with the current sequence and broadcasts SYNC: the admission verdict.
pub(crate) async fn sync_key(n: &TestNode, k: &SecretKey, b: &TxBuilder) -> Broadcast {
    let tx = n.sign(k, b).await.unwrap();
    n.client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap()
}

/// Waits (bounded) for the transaction query.
pub(crate) async fn confirm(n: &TestNode, hash: &str) -> TxResponse {
    n.client.wait_for_tx(hash, Duration::from_secs(30), Duration::from_millis(20)).await.unwrap()
}

/// Admits and executes: the executed result (panics on an admission rejection).
pub(crate) async fn exec(n: &TestNode, k: &SecretKey, b: &TxBuilder) -> TxResponse {
    let r = sync_key(n, k, b).await;
    assert_eq!(r.code, 0, "rejected at admission: {r:?}");
    confirm(n, &r.txhash).await
}

/// Admits and executes, expecting success.
pub(crate) async fn ok(n: &TestNode, k: &SecretKey, b: &TxBuilder) -> TxResponse {
    let t = exec(n, k, b).await;
    assert_eq!(t.code, 0, "{}", t.raw_log);
    t
}

/// One message, default gas.
pub(crate) fn one<M: prost::Name>(m: &M) -> TxBuilder {
    TxBuilder::new(vec![to_any(m)]).gas(400_000)
}

/// A bank send.
pub(crate) fn send(from: &Address, to: &Address, coin: Coin) -> TxBuilder {
    TxBuilder::new(vec![msg_send(from, to, &[coin])]).gas(400_000)
}

/// Gas money for a fresh key, from a dev account.
pub(crate) async fn fund(n: &TestNode, from: &str, to: &Address) {
    ok(n, &dev_key(from), &send(&dev_addr(from), to, Coin::new("alantau", 10u128.pow(18)))).await;
}

/// The typed events of a result with this type (`chain.compliance.v1.EventFlagResolved`).
pub(crate) fn events<'a>(t: &'a TxResponse, ty: &str) -> Vec<&'a Value> {
    t.events.iter().filter(|e| e["type"] == ty).collect()
}

/// An attribute's JSON-decoded value (typed events carry JSON values).
pub(crate) fn attr(e: &Value, key: &str) -> Value {
    let raw = e["attributes"].as_array().and_then(|a| a.iter().find(|x| x["key"] == key)).map(|x| x["value"].clone()).unwrap_or(Value::Null);
    raw.as_str().and_then(|s| serde_json::from_str(s).ok()).unwrap_or(raw)
}

/// MsgBindSubRole signed by `parent`.
pub(crate) fn bind(parent: &Address, sub: &Address, role: cpb::SubRole, label: &str, envelope: Option<(Coin, Coin)>) -> TxBuilder {
    one(&cpb::MsgBindSubRole {
        parent: parent.to_bech32(),
        sub_addr: sub.to_bech32(),
        role: role as i32,
        label: label.into(),
        policy_envelope: envelope
            .map(|(d, p)| cpb::PolicyEnvelope { daily_cap: Some(lantau_client::pb_coin(&d)), per_tx_cap: Some(lantau_client::pb_coin(&p)) }),
    })
}

/// MsgRevokeSubRole signed by `parent`.
pub(crate) fn revoke(parent: &Address, sub: &Address) -> TxBuilder {
    one(&cpb::MsgRevokeSubRole { parent: parent.to_bech32(), sub_addr: sub.to_bech32() })
}

/// A hkd.demo transfer with the payload the registry gives for (`as_sender`, `as_recipient`)
/// (a sub-key's payload is its parent's).
pub(crate) async fn hkd(n: &TestNode, from: &Address, to: &Address, amount: u128, as_sender: &Address, as_recipient: &Address) -> TxBuilder {
    let p = n.client.travel_rule_payload(as_sender, as_recipient).await.unwrap();
    send(from, to, Coin::new("hkd.demo", amount)).travel_rule(&p)
}

/// A GET answering an error: (HTTP status, body).
pub(crate) async fn get_err(n: &TestNode, path: &str) -> (u16, Value) {
    let resp = reqwest::get(format!("{}{path}", n.rest_url)).await.unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

/// The audit rows of a transaction.
pub(crate) async fn audit_rows(n: &TestNode, tx_hash: &str) -> Vec<Value> {
    let v = n.client.query(&format!("/chain/compliance/v1/audit_log?tx_hash={tx_hash}")).await.unwrap();
    v["entries"].as_array().unwrap().clone()
}

/// The audit log's length.
pub(crate) async fn audit_len(n: &TestNode) -> usize {
    n.client.query("/chain/compliance/v1/audit_log").await.unwrap()["entries"].as_array().unwrap().len()
}

/// One Ethereum JSON-RPC call: its `result`, or `{"error": ...}`.
pub(crate) async fn eth_rpc(n: &TestNode, method: &str, params: &Value) -> Value {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let v: Value = reqwest::Client::new().post(&n.eth_url).json(&body).send().await.unwrap().json().await.unwrap();
    v.get("result").cloned().unwrap_or_else(|| serde_json::json!({"error": v["error"]}))
}

/// Sends a signed Ethereum transaction and waits (bounded) for a successful receipt.
pub(crate) async fn eth_send(n: &TestNode, key: &SecretKey, to: Option<Address>, input: Vec<u8>) -> Value {
    let nonce = eth_rpc(n, "eth_getTransactionCount", &serde_json::json!([key.address().to_hex(), "latest"])).await;
    let nonce = u64::from_str_radix(nonce.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let raw = lantau_client::eth::sign(
        key,
        &lantau_client::eth::Unsigned {
            chain_id: Some(lantau_node::home::DEV_EVM_CHAIN_ID),
            nonce,
            gas_limit: 1_000_000,
            max_fee_per_gas: 2_000_000_000,
            max_priority_fee_per_gas: Some(1_000_000_000),
            to,
            input,
            ..Default::default()
        },
    );
    let hash = eth_rpc(n, "eth_sendRawTransaction", &serde_json::json!([format!("0x{}", const_hex::encode(raw))])).await;
    let hash = hash.as_str().unwrap_or_else(|| panic!("eth_sendRawTransaction: {hash}")).to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let r = eth_rpc(n, "eth_getTransactionReceipt", &serde_json::json!([hash])).await;
        if !r.is_null() {
            assert_eq!(r["status"], "0x1", "{r}");
            return r;
        }
        assert!(tokio::time::Instant::now() < deadline, "no receipt for {hash}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

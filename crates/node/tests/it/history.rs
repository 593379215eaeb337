//! Reads at a past height on every face, beyond the versions the store keeps open: REST
//! (`x-cosmos-block-height`), gRPC (the same header), CometBFT's `abci_query` (`height`) and
//! the Ethereum JSON-RPC (`eth_getBalance`, `eth_call`, `eth_getStorageAt` at a block number);
//! a height below what the node keeps is refused with a clear error.

use cosmos_sdk_proto::cosmos::bank::v1beta1 as bank;
use lantau_primitives::Coin;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use prost::Message as _;
use serde_json::{json, Value};

use crate::compliance_grpc::{abci_at, grpc_at};
use crate::support::*;

async fn rest_at(n: &TestNode, path: &str, height: u64) -> (u16, Value) {
    let r = reqwest::Client::new().get(format!("{}{path}", n.rest_url)).header("x-cosmos-block-height", height.to_string()).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn eth(n: &TestNode, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    reqwest::Client::new().post(&n.eth_url).json(&body).send().await.unwrap().json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_balance_as_of_an_old_height_reads_the_same_on_every_face() {
    let n = TestNode::start_with(lantau_node::home::InitOptions::default(), 50).await.unwrap();
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    let path = format!("/cosmos/bank/v1beta1/balances/{alice}/by_denom?denom=hkd.demo");
    let t = ok(&n, &dev_key("alice"), &hkd(&n, &alice, &issuer, 1_234, &alice, &issuer).await).await;
    let at: u64 = t.height.parse().unwrap();
    let before = at - 1;
    let (_, then) = rest_at(&n, &path, before).await;
    let (_, after) = rest_at(&n, &path, at).await;
    let native_then = eth(&n, "eth_getBalance", json!([alice.to_hex(), format!("0x{before:x}")])).await["result"].clone();
    // Well past the versions the store keeps open (ten).
    n.wait_for_height(at + 25).await.unwrap();
    ok(&n, &dev_key("alice"), &send(&alice, &issuer, Coin::new("alantau", 1u128))).await;

    // REST.
    assert_eq!(rest_at(&n, &path, before).await, (200, then.clone()));
    assert_eq!(rest_at(&n, &path, at).await, (200, after.clone()));
    assert_ne!(then, after);
    // gRPC and abci_query: the same answer.
    let req = bank::QueryBalanceRequest { address: alice.to_bech32(), denom: "hkd.demo".into() };
    let want = then["balance"]["amount"].as_str().unwrap().to_string();
    for bytes in [
        grpc_at(&n.grpc_url, "/cosmos.bank.v1beta1.Query/Balance", &req, Some(before)).await.unwrap(),
        abci_at(&n, "/cosmos.bank.v1beta1.Query/Balance", &req, before).await.unwrap(),
    ] {
        assert_eq!(bank::QueryBalanceResponse::decode(bytes.as_slice()).unwrap().balance.unwrap().amount, want);
    }
    // The audit log as of then has no row of the transfer; now it has.
    let (_, log_then) = rest_at(&n, &format!("/chain/compliance/v1/audit_log?tx_hash={}", t.txhash), before).await;
    let (_, log_now) = rest_at(&n, &format!("/chain/compliance/v1/audit_log?tx_hash={}", t.txhash), at + 20).await;
    assert_eq!((log_then["entries"].as_array().unwrap().len(), log_now["entries"].as_array().unwrap().len()), (0, 1));
    // The Ethereum JSON-RPC at a block number: the native balance and the precompile's
    // balanceOf.
    assert_eq!(eth(&n, "eth_getBalance", json!([alice.to_hex(), format!("0x{before:x}")])).await["result"], native_then);
    let mut data = lantau_app::evm::precompile::selector_of("balanceOf(address)").to_vec();
    data.extend_from_slice(&[0u8; 12]);
    data.extend_from_slice(&alice.0);
    let token = lantau_app::erc20::token_address("hkd.demo").to_hex();
    let call = |h: u64| json!([{"to": token, "data": format!("0x{}", const_hex::encode(&data))}, format!("0x{h:x}")]);
    let old = eth(&n, "eth_call", call(before)).await;
    assert_eq!(u128::from_str_radix(old["result"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap().to_string(), want, "{old}");
    let new = eth(&n, "eth_call", call(at)).await;
    assert_ne!(old["result"], new["result"]);

    // Below what the node keeps (the dev chain keeps 100,000 heights from genesis; the
    // future stands in for it here): refused, with the heights it answers.
    let (s, v) = rest_at(&n, &path, 10_000_000).await;
    assert_eq!(s, 400, "{v}");
    n.stop().await;
}

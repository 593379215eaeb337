//! The gRPC server driven by a client in another language: Python grpcio with the Cosmos
//! SDK's generated stubs (cosmpy), `tests/grpc-client/client.py`, run as a child process
//! (bank, auth, tx and tendermint services, a height header, status codes, reflection, whose
//! descriptors of the `cosmos.*` services it compares field by field with cosmpy's); and
//! gRPC-web over plain HTTP/1.1, as a browser sends it.

use std::process::Command;

use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use prost::Message as _;
use serde_json::Value;

use crate::support::{ok, send};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_grpcio_queries_broadcasts_and_reflects_and_grpc_web_answers_http1() {
    let n = TestNode::start().await.unwrap();
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    let p = n.client.travel_rule_payload(&alice, &issuer).await.unwrap();
    let t = ok(&n, &dev_key("alice"), &send(&alice, &issuer, Coin::new("hkd.demo", 321u128)).travel_rule(&p)).await;
    // Signed at alice's next sequence, for Simulate and BroadcastTx over gRPC.
    let next = n.sign(&dev_key("alice"), &send(&alice, &dev_addr("bob"), Coin::new(NATIVE_DENOM, 55u128))).await.unwrap();

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/grpc-client");
    let python = dir.join(".venv/bin/python");
    assert!(python.exists(), "the gRPC client's virtualenv is missing: run scripts/prereqs.sh (it installs tests/grpc-client/requirements.txt)");
    let target = n.grpc_url.trim_start_matches("http://").to_string();
    let out = Command::new(&python)
        .arg(dir.join("client.py"))
        .args([target.as_str(), &alice.to_bech32(), &n.chain_id, &t.txhash, &const_hex::encode(&next)])
        .output()
        .expect("python runs");
    assert!(out.status.success(), "client.py failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or("{}")).unwrap();
    eprintln!("client.py: {r}");
    assert_eq!(r["unknown_method"], "UNIMPLEMENTED", "{r}");
    assert_eq!(r["at_height"]["asked"], r["at_height"]["answered"], "{r}");
    // Reflection describes the Cosmos SDK services the node answers (proto-reflection/), and
    // every message their methods reach matches cosmpy's descriptor of the same name.
    let services: Vec<&str> = r["services"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    for s in ["cosmos.auth.v1beta1.Query", "cosmos.bank.v1beta1.Query", "cosmos.tx.v1beta1.Service", "cosmos.base.tendermint.v1beta1.Service"] {
        assert!(services.contains(&s), "{s} not listed by reflection: {services:?}");
    }
    let refl = &r["reflection"];
    assert_eq!(refl["differences"], serde_json::json!([]), "reflection's cosmos.* descriptors differ from cosmpy's: {refl:#}");
    assert_eq!(refl["unserved"], serde_json::json!([]), "reflection describes methods the node does not serve: {refl}");
    assert!(refl["compared_types"].as_u64().unwrap() >= 90, "too few types compared: {refl}");
    let sent = r["broadcast"].as_str().unwrap().to_string();
    n.client.wait_for_tx(&sent, std::time::Duration::from_secs(30), std::time::Duration::from_millis(50)).await.unwrap();

    // gRPC-web: one length-prefixed message in an HTTP/1.1 POST; the answer's frames are the
    // message and then the trailers (flag 0x80) with grpc-status.
    let req = cosmos_sdk_proto::cosmos::bank::v1beta1::QueryBalanceRequest { address: alice.to_bech32(), denom: "hkd.demo".into() }.encode_to_vec();
    let mut body = vec![0u8];
    body.extend_from_slice(&u32::try_from(req.len()).unwrap().to_be_bytes());
    body.extend_from_slice(&req);
    let http = reqwest::Client::builder().http1_only().build().unwrap();
    let resp = http
        .post(format!("{}/cosmos.bank.v1beta1.Query/Balance", n.grpc_url))
        .header("content-type", "application/grpc-web+proto")
        .header("x-grpc-web", "1")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("application/grpc-web"), "{:?}", resp.headers());
    let bytes = resp.bytes().await.unwrap();
    assert_eq!(bytes[0], 0, "a data frame first");
    let len = u32::from_be_bytes(bytes[1..5].try_into().unwrap()) as usize;
    let bal = cosmos_sdk_proto::cosmos::bank::v1beta1::QueryBalanceResponse::decode(&bytes[5..5 + len]).unwrap();
    assert_eq!(bal.balance.unwrap().denom, "hkd.demo");
    let trailers = &bytes[5 + len..];
    assert_eq!(trailers[0], 0x80, "then the trailers");
    assert!(String::from_utf8_lossy(&trailers[5..]).contains("grpc-status:0"), "{:?}", String::from_utf8_lossy(trailers));
    n.stop().await;
}

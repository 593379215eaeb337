//! The `lantaud` CLI against a running node: keys, a signed send confirmed, queries.

use std::process::Command;

use lantau_test_utils::{dev_addr, TestNode};
use serde_json::Value;

fn lantaud(home: &std::path::Path, args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lantaud")).arg("--home").arg(home).args(["--output", "json"]).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.success(), v, format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_sends_and_queries_against_a_running_node() {
    let n = TestNode::start().await.unwrap();
    let home = n.home.path().to_path_buf();
    let node = n.rest_url.clone();
    let bob = dev_addr("bob");

    let (ok, v, log) = lantaud(&home, &["keys", "list"]);
    assert!(ok, "{log}");
    assert_eq!(v.as_array().unwrap().len(), 8, "{v}");
    let (ok, v, log) = lantaud(&home, &["keys", "show", "alice"]);
    assert!(ok, "{log}");
    assert_eq!(v["hex_address"], dev_addr("alice").to_hex());

    let before = n.client.balance(&bob, "alantau").await.unwrap().0;
    let h = home.clone();
    let nd = node.clone();
    let (ok, v, log) = tokio::task::spawn_blocking(move || lantaud(&h, &["tx", "bank", "send", "alice", "bob", "777alantau", "--node", &nd])).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(v["code"], 0, "{v}");
    assert_eq!(n.client.balance(&bob, "alantau").await.unwrap().0, before + 777);
    let hash = v["txhash"].as_str().unwrap().to_string();

    let h = home.clone();
    let nd = node.clone();
    let (ok, v, log) = tokio::task::spawn_blocking(move || lantaud(&h, &["query", "tx", &hash, "--node", &nd])).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(v["code"], 0);

    let h = home.clone();
    let nd = node.clone();
    let (ok, v, log) = tokio::task::spawn_blocking(move || lantaud(&h, &["query", "auth", "account", "alice", "--node", &nd])).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(v["sequence"], "1");

    let h = home.clone();
    let nd = node.clone();
    let (ok, v, log) = tokio::task::spawn_blocking(move || lantaud(&h, &["query", "bank", "balances", &bob.to_hex(), "--node", &nd])).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(v["balances"][0]["denom"], "alantau");

    // A send the chain rejects at admission exits non-zero with the reason.
    let h = home.clone();
    let nd = node.clone();
    let (ok, _, log) = tokio::task::spawn_blocking(move || lantaud(&h, &["tx", "bank", "send", "alice", "bob", "1alantau", "--fees", "1", "--gas", "100000", "--node", &nd])).await.unwrap();
    assert!(!ok);
    assert!(log.contains("insufficient fee"), "{log}");

    // Keys: import, export round trip; a bad name fails.
    let sk = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
    let (ok, v, log) = lantaud(&home, &["keys", "import", "imported", sk]);
    assert!(ok, "{log}");
    assert_eq!(v["hex_address"], "0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
    let (ok, v, _) = lantaud(&home, &["keys", "export", "imported"]);
    assert!(ok);
    assert_eq!(v["private_key"], format!("0x{sk}"));
    let (ok, _, _) = lantaud(&home, &["keys", "show", "bad name!"]);
    assert!(!ok);
    n.stop().await;
}

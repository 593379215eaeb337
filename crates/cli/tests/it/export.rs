//! `lantaud export` and `lantaud init --genesis` with the real binary: a dev chain with gated
//! transfers (one flagged), a reviewed flag and an EVM-path transfer is stopped and exported;
//! a new home started from the export answers every query as the old chain did, exports the
//! same bytes again, and goes on from the next height.

use std::process::Command;
use std::time::Duration;

use lantau_client::RestClient;
use lantau_test_utils::poll;
use serde_json::Value;

use crate::crash::free_port;
use crate::upgrade::{exited, lantaud, start, start_with_eth};

/// A node process, killed if the test ends (or panics) without stopping it.
struct Node(std::process::Child);

impl Drop for Node {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Stops the node with SIGTERM and waits for a clean exit.
async fn stop(mut node: Node) {
    let st = Command::new("kill").args(["-TERM", &node.0.id().to_string()]).status().unwrap();
    assert!(st.success());
    let status = exited(&mut node.0).await;
    assert!(status.success(), "the node did not stop cleanly on SIGTERM: {status}");
}

async fn get(base: &str, path: &str) -> (u16, String) {
    let r = reqwest::get(format!("{base}{path}")).await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

fn export(home: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_lantaud")).arg("export").arg("--home").arg(home).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exported_chain_restarts_from_a_new_home_with_every_query_answering_the_same() {
    let (old, new) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (ok, _, out) = lantaud(old.path(), &["init"]);
    assert!(ok, "{out}");
    let api = free_port();
    let base = format!("http://127.0.0.1:{api}");
    let eth = free_port();
    let child = Node(start_with_eth(old.path(), api, eth, &old.path().join("node.log")));
    let client = RestClient::new(&base);
    poll(Duration::from_secs(60), || async { client.chain_id().await.is_ok() }).await.unwrap();

    // A history: gated transfers (the large one raises a threshold flag), the reviewer's
    // escalation of that flag, native coin, and a transfer through the precompile.
    let accounts: Vec<Value> = serde_json::from_slice(&std::fs::read(old.path().join("dev-accounts.json")).unwrap()).unwrap();
    let addr = |name: &str| accounts.iter().find(|a| a["name"] == name).unwrap()["address"].as_str().unwrap().to_string();
    let hex_addr = |name: &str| accounts.iter().find(|a| a["name"] == name).unwrap()["hex_address"].as_str().unwrap().to_string();
    let h = old.path().to_path_buf();
    let run = |args: Vec<String>| {
        let h = h.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (ok, v, out) = lantaud(&h, &args);
            assert!(ok, "{args:?}: {out}");
            v
        }
    };
    let node = ["--node".to_string(), base.clone()];
    let tx = |a: &[&str]| a.iter().map(|s| s.to_string()).chain(node.iter().cloned()).collect::<Vec<_>>();
    run(tx(&["tx", "bank", "send", "alice", "issuer", "12.34hkd.demo"])).await;
    run(tx(&["tx", "bank", "send", "alice", "bob", "1lantau"])).await;
    run(tx(&["tx", "bank", "send", "alice", "issuer", "8000.00hkd.demo"])).await;
    let flags: Value = serde_json::from_str(&get(&base, "/chain/compliance/v1/flags").await.1).unwrap();
    let flag = flags["flags"][0]["flag_id"].as_str().expect("a flag raised").to_string();
    run(tx(&["tx", "compliance", "escalate-flag", "reviewer", &flag, "--hash", "ab12"])).await;
    run(tx(&["tx", "evm", "transfer-with-travel-rule", "alice", &hex_addr("issuer"), "500", "--json-rpc", &format!("http://127.0.0.1:{eth}")])).await;
    // A group of alice and bob with bob's proposal waiting for alice.
    run(tx(&["tx", "group", "create", "alice", "--member", "alice", "--member", "bob", "--threshold", "2"])).await;
    let groups: Value = serde_json::from_str(&get(&base, &format!("/chain/group/v1/groups_by_member/{}", addr("alice"))).await.1).unwrap();
    let group = groups["groups"][0]["address"].as_str().expect("a group").to_string();
    let proposal = old.path().join("proposal.json");
    let pay = serde_json::json!([{"@type": "/cosmos.bank.v1beta1.MsgSend", "from_address": group, "to_address": addr("carol"), "amount": [{"denom": "alantau", "amount": "1"}]}]);
    std::fs::write(&proposal, pay.to_string()).unwrap();
    run(tx(&["tx", "group", "propose", "bob", &group, proposal.to_str().unwrap()])).await;

    let mut paths: Vec<String> = [
        "/cosmos/bank/v1beta1/supply",
        "/chain/compliance/v1/audit_log",
        "/chain/compliance/v1/flags",
        "/chain/compliance/v1/params",
        "/chain/compliance/v1/sanctions",
        "/chain/kyc/v1/params",
        "/chain/reserve/v1/params",
        "/chain/stablecoin/v1/denoms",
        "/cosmos/upgrade/v1beta1/module_versions",
        "/cosmos/evm/erc20/v1/token_pairs",
        "/chain/group/v1/proposals/1",
        "/chain/group/v1/proposals/1/votes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for name in ["alice", "bob", "carol", "issuer", "reviewer"] {
        let a = addr(name);
        paths.push(format!("/cosmos/bank/v1beta1/balances/{a}"));
        paths.push(format!("/cosmos/auth/v1beta1/accounts/{a}"));
        paths.push(format!("/chain/kyc/v1/identity/{a}"));
        paths.push(format!("/chain/compliance/v1/sub_roles/{a}"));
        paths.push(format!("/chain/group/v1/groups_by_member/{a}"));
    }
    let mut before = Vec::new();
    for p in &paths {
        before.push(get(&base, p).await);
    }
    let last = crate::upgrade::height(&base).await;
    stop(child).await;

    // Export, start a new home from it.
    let file = old.path().join("exported.json");
    let exported = export(old.path());
    std::fs::write(&file, &exported).unwrap();
    let g: Value = serde_json::from_str(&exported).unwrap();
    let at: u64 = g["app_state"]["exported"]["height"].as_str().unwrap().parse().unwrap();
    assert!(at >= last, "exported height {at}, last seen {last}");
    assert_eq!(g["initial_height"], (at + 1).to_string());
    let sections: Vec<&str> = g["app_state"]["exported"]["modules"].as_array().unwrap().iter().map(|m| m["module"].as_str().unwrap()).collect();
    assert_eq!(sections[..3], ["app", "auth", "bank"]);
    assert!(g["app_state"]["exported"]["modules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["module"] == "compliance" && !m["records"].as_array().unwrap().is_empty()));
    let (ok, _, out) = lantaud(old.path(), &["export", "--height", &(at - 1).to_string()]);
    assert!(!ok && out.contains(&format!("holds the state of height {at} only")), "{out}");

    let (ok, v, out) = lantaud(new.path(), &["init", "--genesis", file.to_str().unwrap()]);
    assert!(ok, "{out}");
    assert_eq!(v["exported_height"], at);
    // No empty blocks: the new chain stays at the exported height until a transaction comes.
    let cfg = new.path().join("config/config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap().replace("create_empty_blocks = true", "create_empty_blocks = false");
    std::fs::write(&cfg, text).unwrap();
    let api = free_port();
    let base = format!("http://127.0.0.1:{api}");
    let child = Node(start(new.path(), api, &new.path().join("node.log")));
    let client = RestClient::new(&base);
    poll(Duration::from_secs(60), || async { client.chain_id().await.is_ok() }).await.unwrap();
    for (p, b) in paths.iter().zip(&before) {
        assert_eq!(&get(&base, p).await, b, "{p} answers differently on the imported chain");
    }
    stop(child).await;
    assert_eq!(export(new.path()), exported, "the imported chain exports other bytes");

    // It goes on from the next height.
    let child = Node(start(new.path(), api, &new.path().join("node.log")));
    poll(Duration::from_secs(60), || async { client.chain_id().await.is_ok() }).await.unwrap();
    let hn = new.path().to_path_buf();
    let b = base.clone();
    // The keys come with their operator: the old home's keyring.
    let keyring = new.path().join("keyring-test");
    std::fs::create_dir_all(&keyring).unwrap();
    for f in std::fs::read_dir(old.path().join("keyring-test")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), keyring.join(f.file_name())).unwrap();
    }
    let issuer = addr("issuer");
    let (ok, v, out) =
        tokio::task::spawn_blocking(move || lantaud(&hn, &["tx", "bank", "send", "alice", &issuer, "1.00hkd.demo", "--node", &b])).await.unwrap();
    assert!(ok, "{out}");
    assert_eq!(v["height"].as_str().map(|s| s.parse::<u64>().unwrap()).or(v["height"].as_u64()), Some(at + 1), "{v}");
    stop(child).await;
}

//! The `lantaud` CLI against a running node: keys, a signed send confirmed, queries.

use std::process::Command;

use lantau_test_utils::{dev_addr, TestNode};
use serde_json::Value;

/// Like [`lantaud`], with `input` on stdin.
fn lantaud_stdin(home: &std::path::Path, args: &[&str], input: &str) -> (bool, Value, String) {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_lantaud"))
        .arg("--home")
        .arg(home)
        .args(["--output", "json"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.success(), v, format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)))
}

fn lantaud(home: &std::path::Path, args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lantaud")).arg("--home").arg(home).args(["--output", "json"]).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.success(), v, format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)))
}

/// `lantaud ARGS --node NODE` off the runtime's threads: what the tests against a running node
/// call as `run(args).await.unwrap()`.
fn runner(home: &std::path::Path, node: &str) -> impl Fn(Vec<String>) -> tokio::task::JoinHandle<(bool, Value, String)> {
    let (home, node) = (home.to_path_buf(), node.to_string());
    move |args: Vec<String>| {
        let (h, nd) = (home.clone(), node.clone());
        tokio::task::spawn_blocking(move || {
            let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
            a.extend(["--node", nd.as_str()]);
            lantaud(&h, &a)
        })
    }
}

/// Owned arguments.
fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_sends_and_queries_against_a_running_node() {
    let n = TestNode::start().await.unwrap();
    let home = n.home.path().to_path_buf();
    let node = n.rest_url.clone();
    let bob = dev_addr("bob");

    let (ok, v, log) = lantaud(&home, &["keys", "list"]);
    assert!(ok, "{log}");
    assert_eq!(v.as_array().unwrap().len(), lantau_node::home::DEV_ACCOUNT_NAMES.len(), "{v}");
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
    let (ok, _, log) =
        tokio::task::spawn_blocking(move || lantaud(&h, &["tx", "bank", "send", "alice", "bob", "1alantau", "--fees", "1", "--gas", "100000", "--node", &nd]))
            .await
            .unwrap();
    assert!(!ok);
    assert!(log.contains("insufficient fee"), "{log}");

    // Keys: import, export round trip; a bad name fails.
    let sk = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
    let (ok, v, log) = lantaud_stdin(&home, &["keys", "import", "imported"], &format!("{sk}\n"));
    assert!(ok, "{log}");
    assert_eq!(v["hex_address"], "0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
    let (ok, v, _) = lantaud(&home, &["keys", "export", "imported"]);
    assert!(ok);
    assert_eq!(v["private_key"], format!("0x{sk}"));
    let (ok, _, _) = lantaud(&home, &["keys", "show", "bad name!"]);
    assert!(!ok);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_drives_the_registries() {
    let n = TestNode::start().await.unwrap();
    let home = n.home.path().to_path_buf();
    let node = n.rest_url.clone();
    let run = runner(&home, &node);
    let s = strings;

    // kyc: enrol carol, read her back.
    let (ok, v, log) = run(s(&["tx", "kyc", "enroll", "registrar", "carol", "retail_basic", "--ivms-ref", "ivms101:carol"])).await.unwrap();
    assert!(ok && v["code"] == 0, "{log}");
    let (ok, v, log) = run(s(&["query", "kyc", "identity", "carol"])).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(v["identity"]["level"], "LEVEL_RETAIL_BASIC");
    // A rejected message exits non-zero with the module's code.
    let (ok, _, log) = run(s(&["tx", "kyc", "enroll", "alice", "carol", "retail_basic"])).await.unwrap();
    assert!(!ok && log.contains("not a registrar"), "{log}");
    // A missing identity is an error exit, not an empty answer.
    let (ok, _, _) = run(s(&["query", "kyc", "identity", &dev_addr("registrar").to_bech32()])).await.unwrap();
    assert!(!ok);

    // stablecoin: mint, pause, unpause, freeze; denoms and token pairs.
    // Display units: HKD 2.50 is 250 base units.
    let (ok, _, log) = run(s(&["tx", "stablecoin", "mint", "issuer", "carol", "2.50hkd.demo"])).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(n.client.balance(&dev_addr("carol"), "hkd.demo").await.unwrap().0, lantau_node::home::DEV_HKD_BALANCE + 250);
    let (ok, _, log) = run(s(&["tx", "stablecoin", "pause", "issuer"])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, _) = run(s(&["query", "stablecoin", "denom", "hkd.demo"])).await.unwrap();
    assert!(ok && v["paused"] == true, "{v}");
    let (ok, _, log) = run(s(&["tx", "stablecoin", "unpause", "issuer"])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, _, log) = run(s(&["tx", "stablecoin", "freeze", "compliance_authority", "carol"])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, _) = run(s(&["query", "stablecoin", "frozen", "carol"])).await.unwrap();
    assert!(ok && v["frozen"] == true, "{v}");
    // A stablecoin send fills its Travel Rule payload from the registry.
    let (ok, v, log) = run(s(&["tx", "bank", "send", "bob", "alice", "300hkd.demo"])).await.unwrap();
    assert!(ok && v["code"] == 0, "{log}");
    let (ok, v, log) = run(s(&["tx", "bank", "send", "bob", "alice", "300hkd.demo", "--travel-rule", r#"{"tier":"full"}"#])).await.unwrap();
    assert!(!ok && v["codespace"] == "compliance" && v["code"] == 20 && v["txhash"].as_str().is_some(), "{log}");
    // --dry-run prints the simulated trace; queries cover the compliance module.
    let (ok, v, log) = run(s(&["tx", "bank", "send", "bob", "alice", "5hkd.demo", "--dry-run"])).await.unwrap();
    assert!(ok && v["trace"]["accepted"] == true && v["trace"]["results"].as_array().unwrap().len() == 7, "{log}");
    let (ok, v, log) = run(s(&["query", "compliance", "audit-log", "--subject", "bob", "--tx-type", "transfer"])).await.unwrap();
    assert!(ok && v["entries"].as_array().unwrap().len() == 1, "{log}");
    for q in [&["query", "compliance", "flags"][..], &["query", "compliance", "report", "--format", "csv"], &["query", "compliance", "sanctions"]] {
        let (ok, _, log) = run(s(q)).await.unwrap();
        assert!(ok, "{log}");
    }
    let (ok, v, _) = run(s(&["query", "erc20", "token-pairs"])).await.unwrap();
    assert!(ok && v["token_pairs"][0]["denom"] == "hkd.demo", "{v}");

    // reserve: submit, co-sign, latest.
    let (ok, _, log) = run(s(&[
        "tx",
        "reserve",
        "submit-attestation",
        "issuer",
        "300000250hkd.demo",
        "300000250hkd.demo",
        "--random-day",
        "2026-01-01T00:00:00Z",
        "--base-units",
    ]))
    .await
    .unwrap();
    assert!(ok, "{log}");
    // Attestation 1 is the dev genesis's attested reserve: this submission is 2.
    let (ok, _, log) = run(s(&["tx", "reserve", "cosign", "auditor", "2"])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, _) = run(s(&["query", "reserve", "latest", "issuer"])).await.unwrap();
    assert!(ok && v["attestation"]["state"] == "ATTESTATION_STATE_ATTESTED", "{v}");

    // The issuer's controls, as the README shows them, by the dev operations desk (`treasury`,
    // every role of hkd.demo): a REDEEM pause, a redemption paid and one rejected, a seizure.
    let (ok, _, log) = run(s(&["tx", "stablecoin", "pause", "treasury", "--denom", "hkd.demo", "--features", "REDEEM"])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, _, log) = run(s(&["tx", "stablecoin", "request-redemption", "alice", "2.50hkd.demo", "--payout-ref", "HSBC 004-1"])).await.unwrap();
    assert!(!ok && log.contains("REDEEM of hkd.demo is paused"), "{log}");
    let (ok, _, log) = run(s(&["tx", "stablecoin", "unpause", "treasury", "--denom", "hkd.demo", "--features", "REDEEM"])).await.unwrap();
    assert!(ok, "{log}");
    for _ in 0..2 {
        let (ok, v, log) = run(s(&["tx", "stablecoin", "request-redemption", "alice", "2.50hkd.demo", "--payout-ref", "HSBC 004-1"])).await.unwrap();
        assert!(ok && v["code"] == 0, "{log}");
    }
    let (ok, v, log) = run(s(&["query", "stablecoin", "redemptions", "--status", "REQUESTED", "--holder", "alice"])).await.unwrap();
    assert!(ok && v["redemptions"].as_array().unwrap().len() == 2 && v["redemptions"][0]["amount"]["amount"] == "250", "{log}");
    let (ok, _, log) = run(s(&["tx", "stablecoin", "settle-redemption", "treasury", "1", "--payment-ref", "CHATS-0001"])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, _, log) = run(s(&["tx", "stablecoin", "reject-redemption", "treasury", "2", "--reason", "payout account mismatch"])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, _) = run(s(&["query", "stablecoin", "redemption", "1"])).await.unwrap();
    assert!(ok && v["redemption"]["status"] == "REDEMPTION_STATUS_PAID", "{v}");
    let (ok, v, _) = run(s(&["query", "stablecoin", "redemptions", "--status", "REJECTED"])).await.unwrap();
    assert!(ok && v["redemptions"][0]["reason"] == "payout account mismatch", "{v}");
    let (ok, _, log) =
        run(s(&["tx", "stablecoin", "seize", "treasury", "bob", "alice", "1.00hkd.demo", "--evidence-ref", "HCMP-1/2026", "--reason", "court order"]))
            .await
            .unwrap();
    assert!(ok, "{log}");
    let (ok, mut v, _) = run(s(&["query", "stablecoin", "params"])).await.unwrap();
    assert!(ok && v["params"]["redemption_deadline"] == "86400s", "{v}");
    v["params"]["redemption_deadline"] = serde_json::json!("172800s");
    let file = home.join("stablecoin-params.json");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let (ok, _, log) = run(s(&["tx", "stablecoin", "update-params", "governance", file.to_str().unwrap()])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, _) = run(s(&["query", "stablecoin", "params"])).await.unwrap();
    assert!(ok && v["params"]["redemption_deadline"] == "172800s", "{v}");

    // Params through a JSON file: read, edit, update (governance).
    let (ok, mut v, _) = run(s(&["query", "kyc", "params"])).await.unwrap();
    assert!(ok);
    v["params"]["registrars"].as_array_mut().unwrap().push(serde_json::json!(dev_addr("alice").to_bech32()));
    let file = home.join("kyc-params.json");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let (ok, _, log) = run(s(&["tx", "kyc", "update-params", "governance", file.to_str().unwrap()])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, _) = run(s(&["query", "kyc", "params"])).await.unwrap();
    assert!(ok && v["params"]["registrars"].as_array().unwrap().len() == 2, "{v}");
    let (ok, v, _) = run(s(&["query", "compliance", "params"])).await.unwrap();
    assert!(ok && v["params"]["rules"]["velocity_tx_limit"] == "10", "{v}");
    n.stop().await;
}

/// The reviewer's workflow with the CLI, as docs/reviewer-workflow.md tells it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_reviewer_workflow_and_delegation() {
    let n = TestNode::start().await.unwrap();
    let home = n.home.path().to_path_buf();
    let node = n.rest_url.clone();
    let run = move |args: Vec<String>| {
        let (h, nd) = (home.clone(), node.clone());
        tokio::task::spawn_blocking(move || {
            let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
            a.extend(["--node", &nd]);
            lantaud(&h, &a)
        })
    };
    let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    for (name, byte) in [("desk", "21"), ("mlro", "22"), ("bot", "23")] {
        let (ok, _, log) = lantaud_stdin(n.home.path(), &["keys", "import", name], &byte.repeat(32));
        assert!(ok, "{log}");
    }
    for who in ["desk", "mlro"] {
        let (ok, v, log) = run(args(&format!("tx bank send issuer {who} 1000000000000000000alantau"))).await.unwrap();
        assert!(ok && v["code"] == 0, "{log}");
    }
    let (ok, v, log) = run(args("tx compliance bind-sub-role issuer desk reviewer --label review-desk")).await.unwrap();
    assert!(ok && v["code"] == 0, "{log}");
    let (ok, _, log) = run(args("tx compliance bind-sub-role issuer mlro officer --label MLRO")).await.unwrap();
    assert!(ok, "{log}");
    // A large transfer raises a threshold flag; the worklist shows it.
    let (ok, _, log) = run(args("tx bank send alice issuer 800000hkd.demo")).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, log) = run(args("query compliance flags --status emitted")).await.unwrap();
    assert!(ok, "{log}");
    let id = v["flags"][0]["flag_id"].as_str().unwrap().to_string();
    let text = Command::new(env!("CARGO_BIN_EXE_lantaud"))
        .args(["--home", n.home.path().to_str().unwrap(), "query", "compliance", "flags", "--node", &n.rest_url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(text.contains("EMITTED") && text.contains("threshold") && text.contains("800000.00hkd.demo") && text.contains("1 to review"), "{text}");
    // The reviewer escalates with a note; the officer closes with evidence from a file.
    let (ok, _, log) = run(args(&format!("tx compliance review-flag desk {id} escalated --hash note-1"))).await.unwrap();
    assert!(ok, "{log}");
    let evidence = n.home.path().join("evidence.txt");
    std::fs::write(&evidence, b"case file").unwrap();
    let (ok, v, log) = run(args(&format!("tx compliance close-flag mlro {id} approved --file {}", evidence.display()))).await.unwrap();
    assert!(ok && v["code"] == 0, "{log}");
    let (ok, v, _) = run(args("query compliance flags --status resolved_approved")).await.unwrap();
    assert!(ok);
    assert_eq!(v["flags"][0]["flag_id"], id.as_str());
    assert_eq!(v["flags"][0]["evidence_hash"].as_str().unwrap().len(), 64);
    // A reviewer key closing is refused at admission (11): the command fails with the reason.
    let (ok, _, log) = run(args(&format!("tx compliance close-flag desk {id} approved"))).await.unwrap();
    assert!(!ok && log.contains("may not sign"), "{log}");
    // Who is a sub-key, and of whom.
    let (ok, v, log) = run(args("query compliance sub-role-parent desk")).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!((v["answer"].as_str(), v["role"].as_str()), (Some("sub_key"), Some("SUB_ROLE_REVIEWER")));
    let (ok, v, _) = run(args("query compliance sub-role-parent bob")).await.unwrap();
    assert!(ok && v["answer"] == "primary_key", "{v}");
    let (ok, v, _) = run(args("query compliance sub-roles issuer --role officer")).await.unwrap();
    assert!(ok);
    // mlro, and the dev chain's genesis officer.
    assert_eq!(v["bindings"].as_array().unwrap().len(), 2);
    // An agent with its envelope in one transaction, and its remaining capacity.
    let (ok, _, log) = run(args("tx compliance bind-sub-role bob bot agent --daily-cap 1000hkd.demo --per-tx-cap 100hkd.demo")).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, log) = run(args("query compliance agent-policy bob bot")).await.unwrap();
    assert!(ok, "{log}");
    // JSON keeps the chain's base units: HKD 1000.00 and 100.00.
    assert_eq!((v["remaining"]["daily_remaining"].as_str(), v["remaining"]["per_tx_max"].as_str()), (Some("100000"), Some("10000")));
    let (ok, _, log) = run(args("tx compliance revoke-sub-role bob bot")).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, _) = run(args("query compliance agent-policy bob bot")).await.unwrap();
    assert!(ok && v["remaining"]["revoked"] == true, "{v}");
    n.stop().await;
}

/// Operator and client basics: the client config (`config set node`, `LANTAU_NODE`, a bare
/// `host:port`), errors as JSON under `--output json`, a refused send showing its hash and
/// compliance code, `version --long`, completions, one process per home, and `reset --dev`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_client_config_errors_version_completions_home_lock_and_reset() {
    // Blocks every 2 s, so the consecutive sends below land in the mempool together.
    let n = TestNode::start_with(lantau_node::home::InitOptions::default(), 2000).await.unwrap();
    let home = n.home.path().to_path_buf();
    let bare = n.rest_url.trim_start_matches("http://").to_string();
    let run = |args: Vec<String>| {
        let home = home.clone();
        tokio::task::spawn_blocking(move || lantaud(&home, &args.iter().map(String::as_str).collect::<Vec<_>>()))
    };
    let argv = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();

    // No --node: the client config's node (set as a bare host:port).
    let (ok, v, log) = run(argv(&format!("config set node {bare}"))).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(v["node"], n.rest_url, "{v}");
    let (ok, v, log) = run(argv("query bank balances bob")).await.unwrap();
    assert!(ok, "{log}");
    assert!(v["balances"].as_array().is_some_and(|b| !b.is_empty()), "{v}");
    let (ok, v, _) = run(argv("config get node")).await.unwrap();
    assert!(ok);
    assert_eq!(v["node"], n.rest_url);
    // A bad address: one clear error, as JSON under --output json.
    let (ok, _, log) = run(argv("query bank balances bob --node ://nowhere")).await.unwrap();
    assert!(!ok);
    let err: Value = serde_json::from_str(log.lines().last().unwrap_or("{}")).unwrap_or(Value::Null);
    assert!(err["error"].as_str().is_some_and(|e| e.contains("invalid node address")), "{log}");

    // A send the gates refuse (a stablecoin to an address without identity): the hash, the
    // codespace and the code, exit status non-zero.
    let nobody = lantau_crypto::secret_key_from_mnemonic(lantau_node::home::DEV_MNEMONIC, 99).unwrap().address();
    let (ok, v, log) = run(argv(&format!("tx bank send alice {} 100hkd.demo", nobody.to_bech32()))).await.unwrap();
    assert!(!ok, "{log}");
    assert_eq!(v["codespace"], "compliance", "{log}");
    assert!(v["code"].as_u64().is_some_and(|c| c > 0) && v["txhash"].as_str().is_some_and(|h| h.len() == 64), "{log}");

    // Consecutive sends without waiting: each signs with the sequence the node will expect
    // next (its mempool counted), so the second is not a sequence mismatch.
    for amount in ["11alantau", "12alantau", "13alantau"] {
        let (ok, v, log) = run(argv(&format!("tx bank send bob carol {amount} --no-wait"))).await.unwrap();
        assert!(ok && v["code"] == 0, "{log}");
    }

    // Display units both ways: a HKD 1.50 send moves 150 base units; the balance prints in
    // HKD with cents, or in base units with --base-units; too many decimals is refused.
    let carol = dev_addr("carol");
    let before = n.client.balance(&carol, "hkd.demo").await.unwrap().0;
    let (ok, _, log) = run(argv("tx bank send alice issuer 1.50hkd.demo")).await.unwrap();
    assert!(ok, "{log}");
    let (ok, _, log) = run(argv("tx bank send alice issuer 1.505hkd.demo")).await.unwrap();
    assert!(!ok && log.contains("at most 2 decimals"), "{log}");
    let text = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lantaud")).arg("--home").arg(&home).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let shown = text(&["query", "bank", "balances", "carol"]);
    assert!(shown.contains(&format!("{}.{:02}hkd.demo", before / 100, before % 100)), "{shown}");
    let shown = text(&["query", "bank", "balances", "carol", "--base-units"]);
    assert!(shown.contains(&format!("{before}hkd.demo")), "{shown}");

    // version --long names the commit.
    let (ok, v, log) = run(argv("version --long")).await.unwrap();
    assert!(ok, "{log}");
    assert!(v["commit"].as_str().is_some_and(|c| c.len() >= 7), "{v}");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    // Completions for bash.
    let out = Command::new(env!("CARGO_BIN_EXE_lantaud")).args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("lantaud"));

    // A second node on the same home: one line, no panic.
    let out = Command::new(env!("CARGO_BIN_EXE_lantaud"))
        .args(["start", "--home", home.to_str().unwrap(), "--api.address", "127.0.0.1:0", "--rpc.laddr", "127.0.0.1:0"])
        .args(["--json-rpc.address", "127.0.0.1:0", "--json-rpc.ws-address", "127.0.0.1:0", "--metrics.laddr", "127.0.0.1:0", "--grpc.address", "127.0.0.1:0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success() && err.contains("in use by another lantaud") && !err.contains("panicked"), "{err}");
    // reset --dev: refused while the node runs; done once it stopped.
    let (ok, _, log) = run(argv("reset --dev")).await.unwrap();
    assert!(!ok && log.contains("in use"), "{log}");
    let dir = n.stop().await;
    let (ok, _, log) = lantaud(dir.path(), &["reset", "--dev"]);
    assert!(ok, "{log}");
    assert!(!dir.path().join("data/state").exists());
    assert!(dir.path().join("config/genesis.json").exists(), "config and genesis stay");
}

/// The offline flow, as the README's REST walkthrough uses it: `--generate-only`, `tx sign`,
/// `tx encode` (the bytes REST's broadcast takes, posted as JSON), `tx decode`, and
/// `tx broadcast FILE` for a gated stablecoin transfer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_generates_signs_encodes_and_broadcasts_a_transaction_file() {
    let n = TestNode::start().await.unwrap();
    let home = n.home.path().to_path_buf();
    let nd = n.rest_url.clone();
    let run = runner(&home, &nd);
    let argv = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let (ok, unsigned, log) = run(argv("tx bank send alice bob 4242alantau --generate-only")).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(unsigned["body"]["messages"][0]["@type"], "/cosmos.bank.v1beta1.MsgSend", "{unsigned}");
    assert_eq!(unsigned["signatures"], serde_json::json!([]), "{unsigned}");
    let dir = tempfile::tempdir().unwrap();
    let f = |name: &str, v: &Value| {
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
        p.to_str().unwrap().to_string()
    };
    let unsigned_file = f("unsigned.json", &unsigned);
    let (ok, signed, log) = run(vec!["tx".into(), "sign".into(), unsigned_file, "--from".into(), "alice".into()]).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(signed["signatures"].as_array().map(Vec::len), Some(1), "{signed}");
    let signed_file = f("signed.json", &signed);
    let (ok, enc, log) = run(vec!["tx".into(), "encode".into(), signed_file.clone()]).await.unwrap();
    assert!(ok, "{log}");
    let b64 = enc["tx_bytes"].as_str().unwrap().to_string();
    let (ok, dec, log) = run(vec!["tx".into(), "decode".into(), b64.clone()]).await.unwrap();
    assert!(ok && dec == signed, "{log}");
    // REST's broadcast with the encoded bytes, as the README's curl does.
    let before = n.client.balance(&dev_addr("bob"), "alantau").await.unwrap().0;
    let r: Value = reqwest::Client::new()
        .post(format!("{}/cosmos/tx/v1beta1/txs", n.rest_url))
        .header("content-type", "application/json")
        .body(serde_json::json!({"tx_bytes": b64, "mode": "BROADCAST_MODE_SYNC"}).to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["tx_response"]["code"], 0, "{r}");
    let hash = r["tx_response"]["txhash"].as_str().unwrap().to_string();
    n.client.wait_for_tx(&hash, std::time::Duration::from_secs(30), std::time::Duration::from_millis(50)).await.unwrap();
    assert_eq!(n.client.balance(&dev_addr("bob"), "alantau").await.unwrap().0, before + 4242);

    // A gated transfer through a file: its Travel Rule option survives the round trip.
    let (ok, unsigned, log) = run(argv("tx bank send alice issuer 2.00hkd.demo --generate-only")).await.unwrap();
    assert!(ok, "{log}");
    assert_eq!(unsigned["body"]["extension_options"][0]["@type"], "/chain.compliance.v1.TravelRulePayload", "{unsigned}");
    let unsigned_file = f("unsigned2.json", &unsigned);
    let (ok, signed, log) = run(vec!["tx".into(), "sign".into(), unsigned_file, "--from".into(), "alice".into()]).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, log) = run(vec!["tx".into(), "broadcast".into(), f("signed2.json", &signed)]).await.unwrap();
    assert!(ok && v["code"] == 0, "{log}");
    n.stop().await;
}

/// `lantaud audit export` writes the audit rows with the hash chain and the proofs against the
/// chain; `lantaud audit verify` checks the file with no node, and names the row of an edited
/// file: fields edited against their bytes, or bytes re-encoded (the chain breaks there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_audit_export_verifies_offline_and_an_edited_row_is_named() {
    use prost::Message as _;
    let n = TestNode::start().await.unwrap();
    let home = n.home.path().to_path_buf();
    let node = n.rest_url.clone();
    let run = runner(&home, &node);
    let s = strings;
    // Rows: an enrolment and a mint.
    let (ok, _, log) = run(s(&["tx", "kyc", "enroll", "registrar", "carol", "retail_basic", "--ivms-ref", "ivms101:carol"])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, _, log) = run(s(&["tx", "stablecoin", "mint", "issuer", "carol", "2.50hkd.demo"])).await.unwrap();
    assert!(ok, "{log}");
    let rows: serde_json::Value = n.client.query("/chain/compliance/v1/audit_log").await.unwrap();
    let count = rows["entries"].as_array().unwrap().len() as u64;
    // The export is anchored on the block before the latest: wait until it holds every row.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let export = loop {
        let (ok, v, log) = run(s(&["audit", "export"])).await.unwrap();
        assert!(ok, "{log}");
        if v["anchor"]["audit_sequence"].as_u64() >= Some(count) {
            break v;
        }
        assert!(std::time::Instant::now() < deadline, "the export never anchored every row: {v}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.json");
    let verify = |x: &serde_json::Value| {
        std::fs::write(&file, serde_json::to_vec(x).unwrap()).unwrap();
        lantaud(&home, &["audit", "verify", file.to_str().unwrap()])
    };
    let (ok, v, log) = verify(&export);
    assert!(ok, "{log}");
    assert_eq!(v["verified"], true);
    assert_eq!(v["rows"].as_u64(), export["anchor"]["audit_sequence"].as_u64(), "{v}");

    // A range after every row: digests only, still verified.
    let (ok, later, log) = run(s(&["audit", "export", "--from", "2999-01-01T00:00:00Z"])).await.unwrap();
    assert!(ok, "{log}");
    let (ok, v, log) = verify(&later);
    assert!(ok && v["rows"] == 0, "{log}");

    // The last row edited in its readable fields: named.
    let last = export["links"].as_array().unwrap().len() - 1;
    let seq = export["links"][last]["sequence"].as_u64().unwrap();
    let mut edited = export.clone();
    edited["links"][last]["entry"]["tx_type"] = serde_json::json!("forged");
    let (ok, _, log) = verify(&edited);
    assert!(!ok && log.contains(&format!("row {seq}: its fields were edited")), "{log}");
    // Its bytes re-encoded with another type (and its fields to match): the chain breaks at it.
    let mut entry = lantau_app::compliance::AuditEntry::decode(hex::decode(export["links"][last]["row"].as_str().unwrap()).unwrap().as_slice()).unwrap();
    entry.tx_type = "forged".into();
    let mut forged = export.clone();
    forged["links"][last]["row"] = serde_json::json!(const_hex::encode(entry.encode_to_vec()));
    forged["links"][last]["entry"] = serde_json::to_value(&entry).unwrap();
    let (ok, _, log) = verify(&forged);
    assert!(!ok && log.contains(&format!("row {seq} breaks the hash chain")), "{log}");
    n.stop().await;
}

/// Group accounts from the CLI: alice and bob hold an account 2-of-2; alice proposes a payment
/// from it (a file of messages), bob's vote runs it; the queries show the group, the pending
/// proposal, then the executed one and both votes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_creates_a_group_and_runs_its_proposal() {
    let n = TestNode::start().await.unwrap();
    let home = n.home.path().to_path_buf();
    let node = n.rest_url.clone();
    let run = runner(&home, &node);
    let s = strings;

    let (ok, v, log) =
        run(s(&["tx", "group", "create", "governance", "--member", "alice", "--member", "bob:1", "--threshold", "2", "--voting-period", "3600s"]))
            .await
            .unwrap();
    assert!(ok && v["code"] == 0, "{log}");
    let (ok, v, log) = run(s(&["query", "group", "by-member", "bob"])).await.unwrap();
    assert!(ok, "{log}");
    let group = v["groups"][0]["address"].as_str().unwrap().to_string();
    let (ok, v, log) = run(s(&["query", "group", "info", &group])).await.unwrap();
    assert!(ok && v["group"]["threshold"] == "2", "{log}");
    let (ok, _, log) = run(s(&["tx", "bank", "send", "alice", &group, "1000alantau"])).await.unwrap();
    assert!(ok, "{log}");

    let file = n.home.path().join("pay-carol.json");
    let carol = dev_addr("carol").to_bech32();
    let msgs = serde_json::json!([{"@type": "/cosmos.bank.v1beta1.MsgSend", "from_address": group, "to_address": carol, "amount": [{"denom": "alantau", "amount": "5"}]}]);
    std::fs::write(&file, msgs.to_string()).unwrap();
    let before = n.client.balance(&dev_addr("carol"), "alantau").await.unwrap().0;
    let (ok, v, log) = run(s(&["tx", "group", "propose", "alice", &group, file.to_str().unwrap(), "--exec"])).await.unwrap();
    assert!(ok && v["code"] == 0, "{log}");
    let (ok, v, log) = run(s(&["query", "group", "proposals", &group, "--pending"])).await.unwrap();
    assert!(ok, "{log}");
    let id = v["proposals"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(n.client.balance(&dev_addr("carol"), "alantau").await.unwrap().0, before);
    // A bad option is refused before anything is signed.
    let (ok, _, log) = run(s(&["tx", "group", "vote", "bob", &id, "maybe"])).await.unwrap();
    assert!(!ok && log.contains("yes, no or abstain"), "{log}");
    let (ok, v, log) = run(s(&["tx", "group", "vote", "bob", &id, "yes", "--exec"])).await.unwrap();
    assert!(ok && v["code"] == 0, "{log}");
    assert_eq!(n.client.balance(&dev_addr("carol"), "alantau").await.unwrap().0, before + 5);
    let (ok, v, log) = run(s(&["query", "group", "proposal", &id])).await.unwrap();
    assert!(ok && v["proposal"]["executor_result"] == "EXECUTOR_RESULT_SUCCESS", "{log}");
    let (ok, v, log) = run(s(&["query", "group", "votes", &id])).await.unwrap();
    assert!(ok && v["votes"].as_array().unwrap().len() == 2, "{log}");
    n.stop().await;
}

/// `lantaud console` with no `--key`: the desk holds every key of the home's keyring and
/// opens no session; it prints its sign-in page's address, serves the page, refuses the API
/// without a session and issues sign-in challenges. With `--key`, it prints a signed-in URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_console_serves_the_desk_with_the_keyrings_keys() {
    use std::io::BufRead as _;
    let n = TestNode::start().await.unwrap();
    let home = n.home.path().to_path_buf();
    for (extra, want) in [(vec![], "sign in with your wallet"), (vec!["--key", "reviewer"], "#token=")] {
        let port = crate::crash::free_port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_lantaud"))
            .arg("--home")
            .arg(&home)
            .args(["console", "--address", &format!("127.0.0.1:{port}"), "--node", &n.rest_url, "--rpc", &n.rpc_url, "--evm-rpc", &n.eth_url])
            .args(&extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let line = tokio::task::spawn_blocking(move || std::io::BufReader::new(stdout).lines().next().and_then(Result::ok).unwrap_or_default()).await.unwrap();
        if !line.contains(want) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{line}\n{}", String::from_utf8_lossy(&out.stderr));
        }
        assert!(line.contains(&format!("127.0.0.1:{port}")), "{line}");
        let base = format!("http://127.0.0.1:{port}");
        assert_eq!(reqwest::get(format!("{base}/")).await.unwrap().status().as_u16(), 200);
        assert_eq!(reqwest::get(format!("{base}/api/session")).await.unwrap().status().as_u16(), 401);
        let ch: Value = reqwest::Client::new()
            .post(format!("{base}/api/signin/challenge"))
            .json(&serde_json::json!({"address": dev_addr("officer").to_hex()}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(ch["message"].as_str().unwrap().contains("Chain ID: 852"), "{ch}");
        let _ = child.kill();
        let _ = child.wait();
    }
    n.stop().await;
}

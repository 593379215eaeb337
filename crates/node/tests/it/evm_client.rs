//! The EVM path driven by a real Ethereum client (viem, from npm) with Solidity test contracts
//! compiled by solc-js: `tests/evm-client/client.mjs`, run as a child process against this
//! node. Then balances, the audit log, the trace and search are checked to agree across the
//! Cosmos and EVM paths.

use std::process::Command;

use lantau_client::eth::create_address;
use lantau_proto::chain::kyc::v1 as kpb;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use prost::Message as _;
use serde_json::Value;

use crate::support::{hkd, ok, one};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viem_deploys_calls_and_transfers_and_both_paths_agree() {
    let n = TestNode::start().await.unwrap();
    // The recipient is the issuer: at full tier the Travel Rule needs the beneficiary's VASP.
    let (alice, bob, carol) = (dev_addr("alice"), dev_addr("issuer"), dev_addr("carol"));
    // The intermediary contract carol will deploy first: enrolled (full tier, alice's VASP)
    // and funded over the Cosmos path before it exists.
    let inter = create_address(&carol, 0);
    ok(
        &n,
        &dev_key("registrar"),
        &one(&kpb::MsgEnrollIdentity {
            registrar: dev_addr("registrar").to_bech32(),
            address: inter.to_bech32(),
            level: kpb::Level::RetailPlus as i32,
            vasp_identifier: lantau_node::home::DEV_ALICE_VASP.into(),
            ivms101_off_chain_ref: "ivms101:intermediary-0001".into(),
            expires_at: None,
        }),
    )
    .await;
    let funding = ok(&n, &dev_key("alice"), &hkd(&n, &alice, &inter, 1_000, &alice, &inter).await).await;
    let p_ab = n.client.travel_rule_payload(&alice, &bob).await.unwrap().encode_to_vec();
    let p_ib = n.client.travel_rule_payload(&inter, &bob).await.unwrap().encode_to_vec();

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/evm-client");
    assert!(dir.join("node_modules/viem").exists(), "viem is not installed: run scripts/prereqs.sh (it installs tests/evm-client's npm packages)");
    let out = Command::new("node")
        .arg(dir.join("client.mjs"))
        .env("ETH_URL", &n.eth_url)
        .env("ALICE_KEY", format!("0x{}", dev_key("alice").to_hex().trim_start_matches("0x")))
        .env("CAROL_KEY", format!("0x{}", dev_key("carol").to_hex().trim_start_matches("0x")))
        .env("BOB", bob.to_hex())
        .env("TOKEN", lantau_app::erc20::token_address("hkd.demo").to_hex())
        .env("PAYLOAD_ALICE_BOB", format!("0x{}", const_hex::encode(&p_ab)))
        .env("PAYLOAD_INTERMEDIARY_BOB", format!("0x{}", const_hex::encode(&p_ib)))
        .env("INTERMEDIARY", inter.to_hex())
        .output()
        .expect("node runs");
    assert!(out.status.success(), "client.mjs failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let r: Value = serde_json::from_str(stdout.lines().last().unwrap_or("{}")).unwrap();

    // The audit log: one transfer row per standing movement, none for the reverted ones.
    let audit: Value = n.client.query("/chain/compliance/v1/audit_log").await.unwrap();
    let rows: Vec<&Value> = audit["entries"].as_array().unwrap().iter().filter(|e| e["tx_type"] == "transfer").collect();
    let count = |from: &lantau_primitives::Address, to: &lantau_primitives::Address, amount: &str| {
        rows.iter().filter(|e| e["subject"] == from.to_bech32() && e["counterparty"] == to.to_bech32() && e["amount"]["amount"] == amount).count()
    };
    assert_eq!(count(&alice, &inter, "1000"), 1, "the Cosmos funding");
    assert_eq!(count(&alice, &bob, "250"), 1, "the viem transfer");
    assert_eq!(count(&inter, &bob, "100"), 1, "the intermediary's own payment");
    assert_eq!(count(&inter, &bob, "60"), 0, "the caught payment left no row");
    assert_eq!(count(&alice, &carol, "7"), 0, "the gated payment left no row");
    // Balances agree with the bank.
    let b = n.client.query(&format!("/cosmos/bank/v1beta1/balances/{}/by_denom?denom=hkd.demo", inter.to_bech32())).await.unwrap();
    assert_eq!(b["balance"]["amount"], "900");
    // The trace of the gated one, by its Ethereum hash.
    let v = n.client.query(&format!("/chain/compliance/v1/tx_trace/{}", r["gated"].as_str().unwrap())).await.unwrap();
    assert_eq!(v["trace"]["accepted"], false, "{v}");
    // Search: the bech32 sender finds stablecoin transfers of both paths, the hex form only
    // the EVM ones.
    let search = |q: String| {
        let n = &n;
        async move { n.client.query(&format!("/cosmos/tx/v1beta1/txs?query={}&limit=100", urlencode(&q))).await.unwrap() }
    };
    let by_bech32 = search(format!("message.sender='{}'", alice.to_bech32())).await;
    let hashes: Vec<String> = by_bech32["tx_responses"].as_array().unwrap().iter().map(|t| t["txhash"].as_str().unwrap().to_string()).collect();
    assert!(hashes.contains(&funding.txhash), "the Cosmos send");
    let by_hex = search(format!("message.sender='{}'", alice.to_hex())).await;
    let evm_only = by_hex["tx_responses"].as_array().unwrap();
    assert!(!evm_only.is_empty());
    assert!(evm_only.iter().all(|t| !events_of(t, "ethereum_tx").is_empty()), "the hex form finds only EVM transactions");
    assert!(evm_only.len() < hashes.len());
    n.stop().await;
}

/// ethers v6 and web3.py over HTTP: `contract.on`, `create_filter`, block and pending filters
/// deliver each event once; ethers classifies the node's refusals as geth's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ethers_and_web3py_filters_deliver_each_event_once() {
    let n = TestNode::start().await.unwrap();
    let (alice, bob) = (dev_addr("alice"), dev_addr("issuer"));
    let payload = format!("0x{}", const_hex::encode(n.client.travel_rule_payload(&alice, &bob).await.unwrap().encode_to_vec()));
    let key = format!("0x{}", dev_key("alice").to_hex().trim_start_matches("0x"));
    let token = lantau_app::erc20::token_address("hkd.demo").to_hex();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    assert!(root.join("evm-client/node_modules/ethers").exists(), "ethers is not installed: run scripts/prereqs.sh");
    let out = Command::new("node")
        .arg(root.join("evm-client/filters.mjs"))
        .env("ETH_URL", &n.eth_url)
        .env("ALICE_KEY", &key)
        .env("BOB", bob.to_hex())
        .env("TOKEN", &token)
        .env("PAYLOAD_ALICE_BOB", &payload)
        .env("N", "3")
        .output()
        .expect("node runs");
    assert!(out.status.success(), "filters.mjs failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let python = root.join("web3-client/.venv/bin/python");
    assert!(python.exists(), "web3.py is not installed: run scripts/prereqs.sh (it installs tests/web3-client/requirements.txt)");
    let out = Command::new(python)
        .arg(root.join("web3-client/filters.py"))
        .env("ETH_URL", &n.eth_url)
        .env("ALICE_KEY", &key)
        .env("BOB", bob.to_hex())
        .env("TOKEN", &token)
        .env("PAYLOAD_ALICE_BOB", &payload)
        .output()
        .expect("python runs");
    assert!(out.status.success(), "filters.py failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    n.stop().await;
}

/// A stock Hardhat 2 project (tests/hardhat: OpenZeppelin's ERC-20 and a time lock, tested
/// with hardhat-toolbox's matchers `emit`, `revertedWith`, `revertedWithCustomError().withArgs`,
/// `changeTokenBalances`, `changeEtherBalance(s)` and the network helpers `loadFixture` and
/// `time.increase`) passes unmodified against a dev chain with automine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stock_hardhat_project_passes_against_a_dev_chain() {
    let n = TestNode::start_with(lantau_node::home::InitOptions::default(), 60_000).await.unwrap();
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "evm_setAutomine", "params": [true]});
    let r: Value = reqwest::Client::new().post(&n.eth_url).json(&body).send().await.unwrap().json().await.unwrap();
    assert!(r.get("error").is_none(), "{r}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hardhat");
    assert!(dir.join("node_modules/hardhat").exists(), "Hardhat is not installed: run scripts/prereqs.sh (it installs tests/hardhat's npm packages)");
    let out_dir = tempfile::tempdir().unwrap();
    let (url, out_path) = (n.eth_url.clone(), out_dir.path().to_path_buf());
    let dir2 = dir.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(dir2.join("node_modules/hardhat/internal/cli/bootstrap.js"))
            .arg("test")
            .current_dir(&dir2)
            .env("LANTAU_ETH_URL", url)
            .env("LANTAU_HARDHAT_OUT", out_path)
            .env("HARDHAT_DISABLE_TELEMETRY_PROMPT", "true")
            .env("NO_COLOR", "1")
            .output()
            .expect("node runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "hardhat test failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("13 passing") && !stdout.contains("failing"), "{stdout}");
    n.stop().await;
}

fn events_of<'a>(t: &'a Value, kind: &str) -> Vec<&'a Value> {
    t["events"].as_array().map(|a| a.iter().filter(|e| e["type"] == kind).collect()).unwrap_or_default()
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

//! The golden store: a dev home of a release, with data in every module, kept as a fixture
//! (`tests/fixtures/golden/<release>.tar.gz`, with the answers its queries gave in
//! `<release>.answers.json`). The next release opens that home, applies the upgrade the
//! fixture's chain stopped at (`golden-next`, as every node of a network stops at an
//! upgrade's height), and must answer every recorded query as the old
//! release did and go on producing blocks. Every release keeps this test for the fixture of the
//! release before it.
//!
//! `scripts/golden-store.sh` writes the fixture of the current release (the ignored test
//! `golden::write_the_golden_store_of_this_release`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::{eth_rpc, eth_send};
use lantau_client::{eth, to_any, TxBuilder};
use lantau_node::config::NodeConfig;
use lantau_node::home::{init_home, Home, InitOptions};
use lantau_primitives::{Address, Coin};
use lantau_proto::chain::compliance::v1 as cpb;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use prost::Message as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::support::*;

/// The release whose fixture the test opens: the one before this one (today, this one).
const FIXTURE_RELEASE: &str = "0.1.0";
/// The upgrade the fixture schedules.
const PLAN: &str = "golden-next";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden")
}

/// What the fixture's queries answered when it was written.
#[derive(Debug, Serialize, Deserialize)]
struct Answers {
    /// The release that wrote the fixture.
    release: String,
    /// The height of its last block.
    height: u64,
    /// The upgrade it schedules, and at which height.
    plan: String,
    plan_height: u64,
    /// REST: (path, HTTP status, JSON body).
    rest: Vec<(String, u16, Value)>,
    /// Ethereum JSON-RPC: (method, params, the response's `result`, or `{"error": ...}`).
    eth: Vec<(String, Value, Value)>,
}

async fn rest(n: &TestNode, path: &str) -> (u16, Value) {
    let r = reqwest::get(format!("{}{path}", n.rest_url)).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// A contract whose constructor stores 42 at slot 0 and whose code returns slot 0.
const STORE_42: &str = "602a600055600b6011600039600b6000f360005460005260206000f3";

/// The id of the flag the last transaction raised.
async fn raised(n: &TestNode, t: &lantau_client::TxResponse) -> String {
    let rows = audit_rows(n, &t.txhash).await;
    let row = rows.iter().find(|r| r["tx_type"].as_str().is_some_and(|s| s.ends_with("_flag"))).unwrap_or_else(|| panic!("no flag: {rows:?}"));
    row["metadata"]["flag_id"].as_str().unwrap().to_string()
}

/// A history that leaves data in every module, then the plan; returns the REST paths and
/// JSON-RPC calls whose answers the fixture records, and the plan's height.
async fn history(n: &TestNode) -> (Vec<String>, Vec<(String, Value)>, u64) {
    let (gov, ca, issuer, registrar, auditor) =
        (dev_addr("governance"), dev_addr("compliance_authority"), dev_addr("issuer"), dev_addr("registrar"), dev_addr("auditor"));
    let (alice, bob, reviewer, officer) = (dev_addr("alice"), dev_addr("bob"), dev_key("reviewer"), dev_key("officer"));
    let (dave, agent, sanctioned, frozen) = (key(61), key(62), key(63), key(64));
    let hkd_coin = |n: u128| lantau_client::pb_coin(&Coin::new("hkd.demo", n));
    let mut txs = Vec::new();

    // kyc: an enrolment (full tier, with a VASP).
    let enroll = lantau_proto::chain::kyc::v1::MsgEnrollIdentity {
        registrar: registrar.to_bech32(),
        address: dave.address().to_bech32(),
        level: lantau_proto::chain::kyc::v1::Level::RetailPlus as i32,
        vasp_identifier: "VASP-GOLDEN-DAVE".into(),
        ivms101_off_chain_ref: "ivms101:dave-0001".into(),
        expires_at: None,
    };
    ok(n, &dev_key("registrar"), &one(&enroll)).await;
    fund(n, "governance", &dave.address()).await;
    fund(n, "governance", &agent.address()).await;
    // stablecoin: a mint, a freeze (a burn below).
    let mint =
        lantau_proto::chain::stablecoin::v1::MsgMint { issuer: issuer.to_bech32(), recipient: dave.address().to_bech32(), amount: Some(hkd_coin(2_000_000)) };
    ok(n, &dev_key("issuer"), &one(&mint)).await;
    ok(
        n,
        &dev_key("compliance_authority"),
        &one(&lantau_proto::chain::stablecoin::v1::MsgFreeze { authority: ca.to_bech32(), address: frozen.address().to_bech32() }),
    )
    .await;
    // reserve: an attestation submitted and co-signed.
    let submit = lantau_proto::chain::reserve::v1::MsgSubmitAttestation {
        issuer: issuer.to_bech32(),
        circulation: Some(hkd_coin(301_999_900)),
        reserve_market_value: Some(hkd_coin(310_000_000)),
        random_day: Some(lantau_proto::Timestamp { seconds: 1_767_225_600, nanos: 0 }),
    };
    ok(n, &dev_key("issuer"), &one(&submit)).await;
    ok(n, &dev_key("auditor"), &one(&lantau_proto::chain::reserve::v1::MsgCosignAttestation { auditor: auditor.to_bech32(), attestation_id: 2 })).await;
    // compliance: an agent within its envelope, sanctions.
    let cap = |d: u128, p: u128| Some((Coin::new("hkd.demo", d), Coin::new("hkd.demo", p)));
    ok(n, &dev_key("alice"), &bind(&alice, &agent.address(), cpb::SubRole::Agent, "golden agent", cap(1_000_000, 600_000))).await;
    // Paying one's own agent: the agent is evaluated as alice.
    ok(n, &dev_key("alice"), &hkd(n, &alice, &agent.address(), 50_000, &alice, &alice).await).await;
    txs.push(ok(n, &agent, &hkd(n, &agent.address(), &issuer, 12_345, &alice, &issuer).await).await.txhash);
    let sanctions = cpb::MsgUpdateSanctionsList {
        authority: ca.to_bech32(),
        blocked_addresses: vec![sanctioned.address().to_bech32()],
        blocked_vasps: vec!["VASP-GOLDEN-SANCTIONED".into()],
        reason: "golden store".into(),
        evidence_ref: "doc:golden".into(),
    };
    ok(n, &dev_key("compliance_authority"), &one(&sanctions)).await;
    // Flags in every status: EMITTED, RESOLVED_APPROVED (reviewer), PENDING_OFFICER
    // (escalated), RESOLVED_BLOCKED (escalated, closed by the officer: dave is blacklisted).
    let mut flags = Vec::new();
    for _ in 0..3 {
        let t = ok(n, &dev_key("alice"), &hkd(n, &alice, &issuer, 800_000, &alice, &issuer).await).await;
        flags.push(raised(n, &t).await);
        txs.push(t.txhash);
    }
    let t = ok(n, &dave, &hkd(n, &dave.address(), &issuer, 900_000, &dave.address(), &issuer).await).await;
    flags.push(raised(n, &t).await);
    txs.push(t.txhash);
    let review = |id: &str, decision: &str| {
        one(&cpb::MsgReviewFlag {
            reviewer: reviewer.address().to_bech32(),
            flag_id: id.into(),
            decision: decision.into(),
            reviewer_evidence_hash: "ab12".into(),
        })
    };
    let escalate = |id: &str| one(&cpb::MsgEscalateFlag { reviewer: reviewer.address().to_bech32(), flag_id: id.into(), officer_note_hash: "cd34".into() });
    ok(n, &reviewer, &review(&flags[1], "APPROVED")).await;
    ok(n, &reviewer, &escalate(&flags[2])).await;
    ok(n, &reviewer, &escalate(&flags[3])).await;
    let close = cpb::MsgCloseFlag {
        officer: officer.address().to_bech32(),
        flag_id: flags[3].clone(),
        decision: "BLOCKED".into(),
        officer_evidence_hash: "ef56".into(),
    };
    ok(n, &officer, &one(&close)).await;
    // The issuer burns part of what it received.
    ok(n, &dev_key("issuer"), &one(&lantau_proto::chain::stablecoin::v1::MsgBurn { issuer: issuer.to_bech32(), amount: Some(hkd_coin(100)) })).await;
    // A rejected transfer (the recipient has no identity): an audit row of its own.
    let r = sync_key(n, &dev_key("bob"), &hkd(n, &bob, &dev_addr("carol"), 10, &bob, &dev_addr("carol")).await).await;
    assert_ne!(r.code, 0, "a transfer to carol, who has no identity, is refused");
    // The rules, last (the flags above were raised under the defaults).
    let rule = cpb::MsgUpdateRule {
        authority: ca.to_bech32(),
        rules: Some(cpb::Rules { travel_rule_full_threshold: 800_000, velocity_window_seconds: 120, velocity_tx_limit: 12 }),
    };
    ok(n, &dev_key("compliance_authority"), &one(&rule)).await;
    // evm: a contract with storage; a transfer through the stablecoin precompile.
    let deployed = eth_send(n, &dev_key("alice"), None, hex::decode(STORE_42).unwrap()).await;
    let contract = deployed["contractAddress"].as_str().unwrap().to_string();
    let token = lantau_app::erc20::token_address("hkd.demo");
    let payload = n.client.travel_rule_payload(&alice, &issuer).await.unwrap();
    let via_evm = eth_send(n, &dev_key("alice"), Some(token), eth::transfer_with_travel_rule_calldata(&issuer, 4_321, &payload.encode_to_vec())).await;
    // upgrade: the plan the next release applies.
    let height: u64 = n.node.node.app().queries().last_height().await.unwrap();
    // The block after the one that schedules it.
    let plan_height = height + 2;
    let plan = cosmos_sdk_proto::cosmos::upgrade::v1beta1::MsgSoftwareUpgrade {
        authority: gov.to_bech32(),
        plan: Some(cosmos_sdk_proto::cosmos::upgrade::v1beta1::Plan {
            name: PLAN.into(),
            height: i64::try_from(plan_height).unwrap(),
            info: "the golden store's upgrade".into(),
            ..Default::default()
        }),
    };
    ok(n, &dev_key("governance"), &TxBuilder::new(vec![to_any(&plan)]).gas(400_000)).await;

    let mut paths: Vec<String> = [
        "/cosmos/bank/v1beta1/supply",
        "/cosmos/bank/v1beta1/denoms_metadata",
        "/cosmos/bank/v1beta1/params",
        "/cosmos/auth/v1beta1/params",
        "/chain/kyc/v1/params",
        "/chain/reserve/v1/params",
        "/chain/stablecoin/v1/denoms",
        "/chain/stablecoin/v1/denoms/hkd.demo",
        "/chain/compliance/v1/params",
        "/chain/compliance/v1/sanctions",
        "/chain/compliance/v1/flags",
        "/chain/compliance/v1/audit_log",
        "/chain/compliance/v1/report",
        "/cosmos/evm/erc20/v1/token_pairs",
        "/cosmos/upgrade/v1beta1/module_versions",
        "/cosmos/upgrade/v1beta1/authority",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    paths.push(format!("/chain/reserve/v1/attestations/{issuer}/latest"));
    paths.push(format!("/chain/compliance/v1/agent_policy/{alice}/{}", agent.address()));
    paths.push(format!("/chain/compliance/v1/sub_role_parent/{}", agent.address()));
    let mut holders: Vec<Address> = ["governance", "compliance_authority", "issuer", "registrar", "auditor", "alice", "bob", "carol", "reviewer", "officer"]
        .iter()
        .map(|a| dev_addr(a))
        .collect();
    holders.extend([dave.address(), agent.address(), sanctioned.address(), frozen.address()]);
    for a in &holders {
        paths.push(format!("/cosmos/bank/v1beta1/balances/{a}"));
        paths.push(format!("/cosmos/auth/v1beta1/accounts/{a}"));
        paths.push(format!("/chain/kyc/v1/identity/{a}"));
        paths.push(format!("/chain/stablecoin/v1/frozen/{a}"));
        paths.push(format!("/chain/compliance/v1/sub_roles/{a}"));
        paths.push(format!("/chain/reserve/v1/reserve_for_address/{a}"));
    }
    // (TxTrace answers from the node's memory of recent traces, not from state: not recorded.)
    for h in &txs {
        paths.push(format!("/chain/compliance/v1/travel_rule/{h}"));
        paths.push(format!("/chain/compliance/v1/audit_log?tx_hash={h}"));
    }
    let mut calls: Vec<(String, Value)> = vec![
        ("eth_getCode".into(), json!([contract, "latest"])),
        ("eth_getStorageAt".into(), json!([contract, "0x0", "latest"])),
        ("eth_call".into(), json!([{"to": contract, "data": "0x"}, "latest"])),
        ("eth_chainId".into(), json!([])),
    ];
    for a in &holders {
        calls.push(("eth_getBalance".into(), json!([a.to_hex(), "latest"])));
        calls.push(("eth_getTransactionCount".into(), json!([a.to_hex(), "latest"])));
        let mut data = lantau_app::evm::precompile::selector_of("balanceOf(address)").to_vec();
        data.extend_from_slice(&[0u8; 12]);
        data.extend_from_slice(&a.0);
        calls.push(("eth_call".into(), json!([{"to": token.to_hex(), "data": format!("0x{}", const_hex::encode(data))}, "latest"])));
    }
    let _ = via_evm;
    (paths, calls, plan_height)
}

/// Writes the fixture of this release (run by `scripts/golden-store.sh`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes the fixture: scripts/golden-store.sh"]
async fn write_the_golden_store_of_this_release() {
    let home = tempfile::tempdir().unwrap();
    init_home(home.path(), &InitOptions::default()).unwrap();
    // No empty blocks: the home stays below the plan's height once written.
    let cfg_path = Home(home.path().to_path_buf()).config();
    let mut cfg = NodeConfig::load(&cfg_path).unwrap();
    cfg.consensus.create_empty_blocks = false;
    cfg.save(&cfg_path).unwrap();
    let n = TestNode::start_in(home, 50).await.unwrap();
    let (paths, calls, plan_height) = history(&n).await;
    let height = n.node.node.app().queries().last_height().await.unwrap();
    assert!(height < plan_height);
    let mut answers = Answers { release: env!("CARGO_PKG_VERSION").into(), height, plan: PLAN.into(), plan_height, rest: vec![], eth: vec![] };
    for p in paths {
        let (status, body) = rest(&n, &p).await;
        assert!(status == 200 || status == 404, "{p}: {status} {body}");
        answers.rest.push((p, status, body));
    }
    for (m, params) in calls {
        let r = eth_rpc(&n, &m, &params).await;
        assert!(r.get("error").is_none(), "{m} {params}: {r}");
        answers.eth.push((m, params, r));
    }
    // A transaction makes the engine build the plan's block: this release stops before it,
    // as every node of the network would (UPGRADE "golden-next" NEEDED).
    let r = sync_key(&n, &dev_key("bob"), &send(&dev_addr("bob"), &dev_addr("alice"), Coin::new("alantau", 1u128))).await;
    assert_eq!(r.code, 0, "{r:?}");
    let mut n = n;
    tokio::time::timeout(Duration::from_secs(30), n.node.engine_stopped()).await.expect("the engine stops at the plan's height");
    let home = n.stop().await;
    assert_eq!(lantau_app::export::export_store(Home(home.path().to_path_buf()).state()).await.unwrap().height, height, "no block after the answers");

    let dir = fixtures();
    std::fs::create_dir_all(&dir).unwrap();
    let release = env!("CARGO_PKG_VERSION");
    let file = std::fs::File::create(dir.join(format!("{release}.tar.gz"))).unwrap();
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(file, flate2::Compression::best()));
    // The home without RocksDB's info logs and lock file, in name order.
    for part in ["config", "data/state", "keyring-test"] {
        let mut names: Vec<String> = std::fs::read_dir(home.path().join(part)).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.retain(|f| !f.starts_with("LOG") && f != "LOCK");
        names.sort();
        for f in names {
            tar.append_path_with_name(home.path().join(part).join(&f), format!("{part}/{f}")).unwrap();
        }
    }
    tar.append_path_with_name(home.path().join("dev-accounts.json"), "dev-accounts.json").unwrap();
    tar.into_inner().unwrap().finish().unwrap();
    std::fs::write(dir.join(format!("{release}.answers.json")), serde_json::to_vec_pretty(&answers).unwrap()).unwrap();
}

/// Whether `now` holds everything `before` did: equal scalars, arrays of the same length whose
/// items extend, objects with every key of `before` extended (and maybe more).
fn extends(before: &Value, now: &Value) -> bool {
    match (before, now) {
        (Value::Object(b), Value::Object(n)) => b.iter().all(|(k, v)| n.get(k).is_some_and(|m| extends(v, m))),
        (Value::Array(b), Value::Array(n)) => b.len() == n.len() && b.iter().zip(n).all(|(x, y)| extends(x, y)),
        _ => before == now,
    }
}

/// Opens the previous release's golden store, applies its upgrade, answers as it did, goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_previous_release_golden_store_upgrades_and_answers_as_before() {
    let dir = fixtures();
    let answers: Answers = serde_json::from_slice(&std::fs::read(dir.join(format!("{FIXTURE_RELEASE}.answers.json"))).unwrap()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let file = std::fs::File::open(dir.join(format!("{FIXTURE_RELEASE}.tar.gz"))).unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(file)).unpack(home.path()).unwrap();
    // This binary applies the fixture's upgrade (a release names its handlers; the node config
    // adds one that migrates nothing), and blocks come without transactions.
    let cfg_path = Home(home.path().to_path_buf()).config();
    let mut cfg = NodeConfig::load(&cfg_path).unwrap();
    cfg.consensus.create_empty_blocks = true;
    cfg.upgrade_handlers = vec![answers.plan.clone()];
    cfg.save(&cfg_path).unwrap();
    let n = TestNode::start_in(home, 50).await.unwrap();
    n.wait_for_height(answers.plan_height + 1).await.unwrap();
    let (status, applied) = rest(&n, &format!("/cosmos/upgrade/v1beta1/applied_plan/{}", answers.plan)).await;
    assert_eq!((status, applied["height"].as_str()), (200, Some(answers.plan_height.to_string().as_str())), "{applied}");
    assert_eq!(rest(&n, "/cosmos/upgrade/v1beta1/current_plan").await.1["plan"], Value::Null);

    // As before: every field the old release answered, with the same value; a later release
    // may add fields (readers tolerate new keys).
    // The module versions are the one answer an upgrade changes: now this build's (the
    // upgrade ran each module's migrations from the fixture's versions).
    let (_, v) = rest(&n, "/cosmos/upgrade/v1beta1/module_versions").await;
    for m in v["module_versions"].as_array().unwrap() {
        let want = lantau_app::modules::STATE_VERSIONS.iter().find(|(name, _)| m["name"] == *name).map(|(_, v)| v.to_string());
        assert_eq!(m["version"].as_str(), want.as_deref(), "{v}");
    }
    // The auth params carry the gas schedule's signature and byte charges, a consensus rule a
    // release may change (this one did: docs/performance.md, "The gas schedule"): now this
    // build's.
    let (_, p) = rest(&n, "/cosmos/auth/v1beta1/params").await;
    assert_eq!(p["params"]["sig_verify_cost_secp256k1"], lantau_app::module_api::gas::SIG_VERIFY.to_string(), "{p}");
    assert_eq!(p["params"]["tx_size_cost_per_byte"], lantau_app::module_api::gas::TX_SIZE_PER_BYTE.to_string(), "{p}");
    let changed_by_release = ["/cosmos/upgrade/v1beta1/module_versions", "/cosmos/auth/v1beta1/params"];
    for (path, status, body) in answers.rest.iter().filter(|(p, _, _)| !changed_by_release.contains(&p.as_str())) {
        let (s, now) = rest(&n, path).await;
        assert!(s == *status && extends(body, &now), "{path} answers differently after the upgrade:\nbefore {status} {body}\nnow {s} {now}");
    }
    for (method, params, result) in &answers.eth {
        let now = eth_rpc(&n, method, params).await;
        assert!(extends(result, &now), "{method} {params} answers differently after the upgrade:\nbefore {result}\nnow {now}");
    }
    assert!(answers.rest.len() > 100 && answers.eth.len() > 40);
    // Below the upgrade the state keeps its old layout (the bank's balances before their
    // migration to one record per address): the balances at the fixture's last height answer
    // as they did.
    let mut balances = 0;
    for (path, status, body) in answers.rest.iter().filter(|(p, _, _)| p.starts_with("/cosmos/bank/v1beta1/balances/")) {
        let r = reqwest::Client::new().get(format!("{}{path}", n.rest_url)).header("x-cosmos-block-height", answers.height.to_string()).send().await.unwrap();
        let (s, then) = (r.status().as_u16(), r.json::<Value>().await.unwrap_or(Value::Null));
        assert!(s == *status && extends(body, &then), "{path} at height {} answers differently:\nbefore {status} {body}\nnow {s} {then}", answers.height);
        balances += 1;
    }
    assert!(balances >= 5, "{balances} balance queries recorded");

    // The reserve module's migration recorded the issuer's latest ATTESTED attestation: the
    // issuer mints against it.
    let mint = lantau_proto::chain::stablecoin::v1::MsgMint {
        issuer: dev_addr("issuer").to_bech32(),
        recipient: dev_addr("alice").to_bech32(),
        amount: Some(lantau_client::pb_coin(&Coin::new("hkd.demo", 1_000u128))),
    };
    ok(&n, &dev_key("issuer"), &one(&mint)).await;
    // The chain goes on: a gated transfer, its audit row after the fixture's.
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    let t = ok(&n, &dev_key("alice"), &hkd(&n, &alice, &issuer, 777, &alice, &issuer).await).await;
    assert!(t.height.parse::<u64>().unwrap() > answers.plan_height, "{t:?}");
    let rows = audit_rows(&n, &t.txhash).await;
    let before = answers.rest.iter().find(|(p, _, _)| p == "/chain/compliance/v1/audit_log").unwrap().2["entries"].as_array().unwrap().len();
    assert_eq!(rows[0]["sequence"], (before + 2).to_string(), "after the fixture's rows and the mint's: {rows:?}");
    n.stop().await;
}

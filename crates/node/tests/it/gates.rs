//! The gate chain through REST: at admission (SYNC broadcast) and again at execution (tx query).

use std::time::Duration;

use lantau_client::{msg_send, to_any, TxBuilder};
use lantau_primitives::Coin;
use lantau_proto::chain::kyc::v1 as kpb;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::Value;

fn hkd(from: &str, to: &str, amount: u128) -> TxBuilder {
    TxBuilder::new(vec![msg_send(&dev_addr(from), &dev_addr(to), &[Coin::new("hkd.demo", amount)])]).gas(300_000)
}

async fn sync(n: &TestNode, key: &str, b: &TxBuilder) -> lantau_client::Broadcast {
    let tx = n.sign(&dev_key(key), b).await.unwrap();
    n.client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap()
}

async fn confirm(n: &TestNode, hash: &str) -> lantau_client::TxResponse {
    n.client.wait_for_tx(hash, Duration::from_secs(30), Duration::from_millis(20)).await.unwrap()
}

fn blacklist(who: &str) -> TxBuilder {
    TxBuilder::new(vec![to_any(&kpb::MsgBlacklistAddress {
        authority: dev_addr("compliance_authority").to_bech32(),
        address: dev_addr(who).to_bech32(),
        reason: "test".into(),
        evidence_ref: "doc".into(),
    })])
    .gas(300_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blacklisted_recipient_is_rejected_at_admission_with_code_18() {
    let n = TestNode::start().await.unwrap();
    let b = sync(&n, "compliance_authority", &blacklist("alice")).await;
    assert_eq!(confirm(&n, &b.txhash).await.code, 0);
    let p = n.client.travel_rule_payload(&dev_addr("bob"), &dev_addr("alice")).await.unwrap();
    let r = sync(&n, "bob", &hkd("bob", "alice", 100).travel_rule(&p)).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 18), "{r:?}");
    assert_eq!(r.raw_log, format!("recipient={}: address is blacklisted", dev_addr("alice").to_bech32()));
    // A rejection at admission does not advance the sequence.
    assert_eq!(n.client.account(&dev_addr("bob")).await.unwrap().unwrap().1, 0);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn travel_rule_payload_rules_apply_at_admission() {
    let n = TestNode::start().await.unwrap();
    // No payload.
    let r = sync(&n, "bob", &hkd("bob", "alice", 100)).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 20), "{r:?}");
    // A tier claim that is not the sender's registered tier.
    let mut p = n.client.travel_rule_payload(&dev_addr("bob"), &dev_addr("alice")).await.unwrap();
    p.tier = "full".into();
    let r = sync(&n, "bob", &hkd("bob", "alice", 100).travel_rule(&p)).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 21), "{r:?}");
    assert!(r.raw_log.contains("Travel Rule requirements are not met") && r.raw_log.contains("LEVEL_RETAIL_BASIC"), "{}", r.raw_log);
    // A minimal-tier sender at the threshold.
    p.tier = "minimal".into();
    let r = sync(&n, "bob", &hkd("bob", "alice", 800_000).travel_rule(&p)).await;
    assert_eq!(r.code, 21, "{r:?}");
    // carol has no identity: tier none, no reference.
    let pc = n.client.travel_rule_payload(&dev_addr("carol"), &dev_addr("alice")).await.unwrap();
    let r = sync(&n, "carol", &hkd("carol", "alice", 100).travel_rule(&pc)).await;
    assert_eq!(r.code, 20, "{r:?}");
    // A full-tier sender to a recipient without a VASP.
    let pa = n.client.travel_rule_payload(&dev_addr("alice"), &dev_addr("bob")).await.unwrap();
    let r = sync(&n, "alice", &hkd("alice", "bob", 100).travel_rule(&pa)).await;
    assert_eq!(r.code, 20, "{r:?}");
    // A native transfer needs nothing.
    let native = TxBuilder::new(vec![msg_send(&dev_addr("carol"), &dev_addr("alice"), &[Coin::new("alantau", 1u128)])]).gas(300_000);
    let r = sync(&n, "carol", &native).await;
    assert_eq!(r.code, 0, "{r:?}");
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_admitted_then_rejected_in_the_block_shows_the_same_code_and_moves_nothing() {
    let n = TestNode::start_with(Default::default(), 1_500).await.unwrap();
    let p = n.client.travel_rule_payload(&dev_addr("bob"), &dev_addr("alice")).await.unwrap();
    // The blacklisting is admitted first; CheckTx does not execute it, so the transfer is
    // admitted too; in the block the blacklisting runs first and the gate stops the transfer.
    let bl = sync(&n, "compliance_authority", &blacklist("alice")).await;
    let tr = sync(&n, "bob", &hkd("bob", "alice", 100).travel_rule(&p)).await;
    assert_eq!((bl.code, tr.code), (0, 0), "{bl:?} {tr:?}");
    assert_eq!(confirm(&n, &bl.txhash).await.code, 0);
    let r = confirm(&n, &tr.txhash).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 18), "{}", r.raw_log);
    assert_eq!(r.raw_log, format!("recipient={}: address is blacklisted", dev_addr("alice").to_bech32()));
    assert_eq!(n.client.balance(&dev_addr("alice"), "hkd.demo").await.unwrap().0, 100_000_000);
    assert_eq!(n.client.balance(&dev_addr("bob"), "hkd.demo").await.unwrap().0, 100_000_000);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screened_transfer_anchors_its_payload_under_the_lower_case_hash() {
    let n = TestNode::start().await.unwrap();
    let p = n.client.travel_rule_payload(&dev_addr("alice"), &dev_addr("issuer")).await.unwrap();
    let r = sync(&n, "alice", &hkd("alice", "issuer", 250).travel_rule(&p)).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(confirm(&n, &r.txhash).await.code, 0);
    let lower = r.txhash.to_ascii_lowercase();
    let v: Value = n.client.query(&format!("/chain/compliance/v1/travel_rule/{lower}")).await.unwrap();
    assert_eq!(v["payload"]["tx_hash"], lower);
    assert_eq!(v["payload"]["tier"], "full");
    assert_eq!(v["payload"]["originator_vasp"], lantau_node::home::DEV_ALICE_VASP);
    // Upper case, or a hash never anchored: 404 with code 5.
    for h in [r.txhash.clone(), "ab".repeat(32)] {
        let resp = reqwest::get(format!("{}/chain/compliance/v1/travel_rule/{h}", n.rest_url)).await.unwrap();
        assert_eq!(resp.status(), 404);
        assert_eq!(resp.json::<Value>().await.unwrap()["code"], 5);
    }
    assert_eq!(n.client.balance(&dev_addr("issuer"), "hkd.demo").await.unwrap().0, 250);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screened_transfers_write_audit_rows_and_advisory_gates_raise_flags() {
    let n = TestNode::start().await.unwrap();
    // A large transfer from alice (full tier) to the issuer: the threshold gate flags it.
    let p = n.client.travel_rule_payload(&dev_addr("alice"), &dev_addr("issuer")).await.unwrap();
    let r = sync(&n, "alice", &hkd("alice", "issuer", 800_000).travel_rule(&p)).await;
    assert_eq!(r.code, 0, "{r:?}");
    let t = confirm(&n, &r.txhash).await;
    assert_eq!(t.code, 0, "{}", t.raw_log);
    assert!(t.events.iter().any(|e| e["type"] == "chain.compliance.v1.EventFlagEmitted"), "{:?}", t.events);

    let v = n.client.query(&format!("/chain/compliance/v1/audit_log?tx_hash={}", r.txhash.to_ascii_lowercase())).await.unwrap();
    let rows = v["entries"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    assert_eq!(rows[0]["tx_type"], "transfer");
    assert_eq!(rows[0]["subject"], dev_addr("alice").to_bech32());
    assert_eq!(rows[0]["amount"]["amount"], "800000");
    assert_eq!(rows[1]["tx_type"], "threshold_flag");
    let flag_id = rows[1]["metadata"]["flag_id"].as_str().unwrap().to_string();
    assert_eq!(rows[1]["metadata"]["decorator"], "threshold");

    let v = n.client.query(&format!("/chain/compliance/v1/flags?vasp={}", lantau_node::home::DEV_ALICE_VASP)).await.unwrap();
    let flags = v["flags"].as_array().unwrap();
    assert_eq!(flags.len(), 1, "{v}");
    assert_eq!(flags[0]["flag_id"], flag_id);
    assert_eq!(flags[0]["status"], "FLAG_STATUS_EMITTED");
    assert_eq!(flags[0]["decorator"], "threshold");
    assert_eq!(flags[0]["subject"], dev_addr("alice").to_bech32());

    // Ten transfers inside the window: the tenth raises a velocity flag with an empty vasp.
    let pb = n.client.travel_rule_payload(&dev_addr("bob"), &dev_addr("alice")).await.unwrap();
    let mut last = String::new();
    for _ in 0..10 {
        let r = sync(&n, "bob", &hkd("bob", "alice", 1).travel_rule(&pb)).await;
        assert_eq!(r.code, 0, "{r:?}");
        last = r.txhash.clone();
        confirm(&n, &r.txhash).await;
    }
    let v = n.client.query(&format!("/chain/compliance/v1/flags?tx_hash={last}")).await.unwrap();
    assert_eq!(v["flags"][0]["decorator"], "velocity", "{v}");
    assert_eq!(v["flags"][0]["vasp"], "");
    // A VASP-filtered query omits every velocity flag; status UNSPECIFIED or omitted means all.
    let all = n.client.query("/chain/compliance/v1/flags").await.unwrap()["flags"].as_array().unwrap().len();
    let unspecified = n.client.query("/chain/compliance/v1/flags?status=FLAG_STATUS_UNSPECIFIED").await.unwrap()["flags"].as_array().unwrap().len();
    assert_eq!((all, unspecified), (2, 2));
    let by_vasp = n.client.query(&format!("/chain/compliance/v1/flags?vasp={}", lantau_node::home::DEV_ALICE_VASP)).await.unwrap();
    assert_eq!(by_vasp["flags"].as_array().unwrap().len(), 1);
    // One transfer row per screened transfer: bob has ten.
    let v = n.client.query(&format!("/chain/compliance/v1/audit_log?subject={}&tx_type=transfer", dev_addr("bob").to_bech32())).await.unwrap();
    assert_eq!(v["entries"].as_array().unwrap().len(), 10);
    n.stop().await;
}

fn sanctions_push(addresses: &[&str], vasps: &[&str], reason: &str) -> TxBuilder {
    TxBuilder::new(vec![to_any(&lantau_proto::chain::compliance::v1::MsgUpdateSanctionsList {
        authority: dev_addr("compliance_authority").to_bech32(),
        blocked_addresses: addresses.iter().map(|a| dev_addr(a).to_bech32()).collect(),
        blocked_vasps: vasps.iter().map(|v| v.to_string()).collect(),
        reason: reason.into(),
        evidence_ref: "ofac-2026-11".into(),
    })])
    .gas(400_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sanctions_pushes_blacklist_addresses_additively_and_replace_the_vasp_list() {
    let n = TestNode::start().await.unwrap();
    // Only the compliance authority pushes.
    let r = sync(
        &n,
        "governance",
        &TxBuilder::new(vec![to_any(&lantau_proto::chain::compliance::v1::MsgUpdateSanctionsList {
            authority: dev_addr("governance").to_bech32(),
            ..Default::default()
        })])
        .gas(300_000),
    )
    .await;
    assert_eq!(confirm(&n, &r.txhash).await.code, 3);

    let r = sync(&n, "compliance_authority", &sanctions_push(&["carol"], &[lantau_node::home::DEV_ALICE_VASP, "VASP-X"], "")).await;
    let t = confirm(&n, &r.txhash).await;
    assert_eq!(t.code, 0, "{}", t.raw_log);
    let ev = t.events.iter().find(|e| e["type"] == "chain.compliance.v1.EventSanctionsUpdated").unwrap();
    let attr = |k: &str| ev["attributes"].as_array().unwrap().iter().find(|a| a["key"] == k).unwrap()["value"].as_str().unwrap().to_string();
    assert_eq!(attr("added_vasps"), format!("[\"{}\",\"VASP-X\"]", lantau_node::home::DEV_ALICE_VASP));
    assert_eq!(attr("reason"), "\"sanctions_list_push\"");
    // carol is blacklisted through the registry, with the default reason.
    let level_ev = t.events.iter().find(|e| e["type"] == "chain.kyc.v1.EventLevelChanged").unwrap();
    assert!(level_ev.to_string().contains("sanctions_list_push"));
    let id = n.client.identity(&dev_addr("carol")).await.unwrap().unwrap();
    assert_eq!(id.level, kpb::Level::Blacklisted as i32);
    let v = n.client.query("/chain/compliance/v1/sanctions").await.unwrap();
    assert_eq!(v["set"]["blocked_addresses"], serde_json::json!([]));
    assert_eq!(v["set"]["blocked_vasps"].as_array().unwrap().len(), 2);

    // alice's VASP is sanctioned: her transfers fail with 19.
    let p = n.client.travel_rule_payload(&dev_addr("alice"), &dev_addr("issuer")).await.unwrap();
    let r = sync(&n, "alice", &hkd("alice", "issuer", 5).travel_rule(&p)).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 19), "{r:?}");

    // Replace semantics: a push without alice's VASP lifts it; carol stays blacklisted.
    let r = sync(&n, "compliance_authority", &sanctions_push(&[], &["VASP-X"], "weekly")).await;
    let t = confirm(&n, &r.txhash).await;
    assert_eq!(t.code, 0, "{}", t.raw_log);
    let ev = t.events.iter().find(|e| e["type"] == "chain.compliance.v1.EventSanctionsUpdated").unwrap().to_string();
    assert!(ev.contains(lantau_node::home::DEV_ALICE_VASP), "removed delta: {ev}");
    let r = sync(&n, "alice", &hkd("alice", "issuer", 5).travel_rule(&p)).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(n.client.identity(&dev_addr("carol")).await.unwrap().unwrap().level, kpb::Level::Blacklisted as i32);
    let v = n.client.query("/chain/compliance/v1/audit_log?tx_type=sanctions_update").await.unwrap();
    assert_eq!(v["entries"].as_array().unwrap().len(), 2);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compliance_authority_replaces_the_whole_rules_row() {
    let n = TestNode::start().await.unwrap();
    let rule = |who: &str, rules: Option<lantau_proto::chain::compliance::v1::Rules>| {
        TxBuilder::new(vec![to_any(&lantau_proto::chain::compliance::v1::MsgUpdateRule { authority: dev_addr(who).to_bech32(), rules })]).gas(300_000)
    };
    let rules = lantau_proto::chain::compliance::v1::Rules { travel_rule_full_threshold: 1_000, velocity_window_seconds: 30, velocity_tx_limit: 3 };
    let r = sync(&n, "governance", &rule("governance", Some(rules))).await;
    assert_eq!(confirm(&n, &r.txhash).await.code, 3);
    let r = sync(&n, "compliance_authority", &rule("compliance_authority", None)).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 4), "{r:?}");
    let r = sync(&n, "compliance_authority", &rule("compliance_authority", Some(rules))).await;
    let t = confirm(&n, &r.txhash).await;
    assert_eq!(t.code, 0, "{}", t.raw_log);
    assert!(t.events.iter().any(|e| e["type"] == "chain.compliance.v1.EventRuleUpdated"));
    let v = n.client.query("/chain/compliance/v1/params").await.unwrap();
    assert_eq!(v["params"]["rules"], serde_json::json!({"travel_rule_full_threshold": "1000", "velocity_window_seconds": "30", "velocity_tx_limit": "3"}));
    let v = n.client.query("/chain/compliance/v1/audit_log?tx_type=rule_update").await.unwrap();
    assert_eq!(v["entries"].as_array().unwrap().len(), 1);
    // The new threshold applies: bob (minimal) can no longer move 1000.
    let p = n.client.travel_rule_payload(&dev_addr("bob"), &dev_addr("alice")).await.unwrap();
    let r = sync(&n, "bob", &hkd("bob", "alice", 1_000).travel_rule(&p)).await;
    assert_eq!(r.code, 21, "{r:?}");
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traces_explain_a_transfer_gate_by_gate_and_simulation_writes_nothing() {
    let n = TestNode::start().await.unwrap();
    let http = reqwest::Client::new();
    let p = n.client.travel_rule_payload(&dev_addr("bob"), &dev_addr("alice")).await.unwrap();
    let b = hkd("bob", "alice", 100).travel_rule(&p);
    let tx = n.sign(&dev_key("bob"), &b).await.unwrap();
    let hash = lantau_client::tx::tx_hash_hex(&tx);
    use base64::Engine as _;
    let body = serde_json::json!({"tx_bytes": base64::engine::general_purpose::STANDARD.encode(&tx)});

    // Simulation: seven rows, accepted, same hash as the live trace, nothing written.
    let v: Value = http.post(format!("{}/chain/compliance/v1/simulate_trace", n.rest_url)).json(&body).send().await.unwrap().json().await.unwrap();
    let t = &v["trace"];
    assert_eq!(t["tx_hash"], hash);
    assert_eq!(t["accepted"], true);
    let rows = t["results"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, lantau_app::compliance::gates::GATE_NAMES);
    assert!(rows.iter().all(|r| r["status"] == "DECORATOR_RESULT_PASS" && r["reason"].as_str().is_some_and(|s| !s.is_empty())), "{t}");
    assert_eq!(rows.iter().filter(|r| r["blocking"] == true).count(), 5);
    assert!(rows[0]["gas_used"].as_str().is_some());
    assert_eq!(n.client.account(&dev_addr("bob")).await.unwrap().unwrap().1, 0);
    let v: Value = n.client.query(&format!("/chain/compliance/v1/tx_trace/{hash}")).await.unwrap();
    assert_eq!(v["found"], false, "a simulation leaves no trace: {v}");

    // The live trace after broadcast.
    let r = n.client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap();
    assert_eq!(r.code, 0);
    confirm(&n, &r.txhash).await;
    let v: Value = n.client.query(&format!("/chain/compliance/v1/tx_trace/{}", hash.to_ascii_lowercase())).await.unwrap();
    assert_eq!(v["found"], true);
    assert_eq!(v["trace"]["tx_hash"], hash);
    assert_eq!(v["trace"]["results"].as_array().unwrap().len(), 7);

    // A rejected simulation explains the failing gate.
    let mut bad = p.clone();
    bad.tier = "full".into();
    let tx = n.sign(&dev_key("bob"), &hkd("bob", "alice", 100).travel_rule(&bad)).await.unwrap();
    let body = serde_json::json!({"tx_bytes": base64::engine::general_purpose::STANDARD.encode(&tx)});
    let v: Value = http.post(format!("{}/chain/compliance/v1/simulate_trace", n.rest_url)).json(&body).send().await.unwrap().json().await.unwrap();
    assert_eq!(v["trace"]["accepted"], false);
    assert_eq!(v["trace"]["results"][3]["status"], "DECORATOR_RESULT_FAIL");

    // Undecodable bytes: InvalidArgument. An unknown hash: found false.
    let r = http.post(format!("{}/chain/compliance/v1/simulate_trace", n.rest_url)).json(&serde_json::json!({"tx_bytes": "AAAA"})).send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], 3);
    let v: Value = n.client.query(&format!("/chain/compliance/v1/tx_trace/{}", "00".repeat(32))).await.unwrap();
    assert_eq!(v, serde_json::json!({"trace": null, "found": false}));
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_without_the_simulation_hook_answers_failed_precondition() {
    let home = tempfile::tempdir().unwrap();
    lantau_node::home::init_home(home.path(), &Default::default()).unwrap();
    let cfg_path = home.path().join("config/config.toml");
    let mut cfg = lantau_node::config::NodeConfig::load(&cfg_path).unwrap();
    cfg.simulation_hook = false;
    cfg.save(&cfg_path).unwrap();
    let n = TestNode::start_in(home, 100).await.unwrap();
    let tx = n.sign(&dev_key("bob"), &hkd("bob", "alice", 1)).await.unwrap();
    use base64::Engine as _;
    let r = reqwest::Client::new()
        .post(format!("{}/chain/compliance/v1/simulate_trace", n.rest_url))
        .json(&serde_json::json!({"tx_bytes": base64::engine::general_purpose::STANDARD.encode(&tx)}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], 9);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_has_four_sections_in_order_whatever_the_format() {
    let n = TestNode::start().await.unwrap();
    let p = n.client.travel_rule_payload(&dev_addr("alice"), &dev_addr("issuer")).await.unwrap();
    let r = sync(&n, "alice", &hkd("alice", "issuer", 900_000).travel_rule(&p)).await;
    assert_eq!(confirm(&n, &r.txhash).await.code, 0);
    for q in ["", "?format=pdf", "?format=csv&period_start=2020-01-01T00:00:00Z"] {
        let v = n.client.query(&format!("/chain/compliance/v1/report{q}")).await.unwrap();
        let names: Vec<&str> = v["sections"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["par_value_daily", "sanctions_hits", "threshold_flags", "review_closures"]);
        assert_eq!(v["sections"][0]["rows"], serde_json::json!([]));
        assert_eq!(v["sections"][1]["rows"], serde_json::json!([]));
        assert_eq!(v["sections"][2]["rows"][0]["cells"]["decorator"], "threshold", "{v}");
        assert_eq!(v["sections"][3]["rows"], serde_json::json!([]));
    }
    // A period before the flag: empty sections, still all four.
    let v = n.client.query("/chain/compliance/v1/report?period_end=2020-01-01T00:00:00Z").await.unwrap();
    assert_eq!(v["sections"].as_array().unwrap().len(), 4);
    assert_eq!(v["sections"][2]["rows"], serde_json::json!([]));
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_errors_follow_the_spec() {
    let n = TestNode::start().await.unwrap();
    for path in ["tx_trace", "tx_trace/", "travel_rule", "travel_rule/"] {
        let r = reqwest::get(format!("{}/chain/compliance/v1/{path}", n.rest_url)).await.unwrap();
        assert_eq!(r.status(), 400, "{path}");
        let v: Value = r.json().await.unwrap();
        assert_eq!((v["code"].as_i64(), v["details"].clone()), (Some(3), serde_json::json!([])), "{path}");
    }
    for path in ["audit_log?subject=nope", "flags?status=BOGUS", "flags?from=yesterday", "tx_trace/xyz"] {
        let r = reqwest::get(format!("{}/chain/compliance/v1/{path}", n.rest_url)).await.unwrap();
        assert_eq!(r.status(), 400, "{path}");
    }
    n.stop().await;
}

/// The registrar's MsgUpdateIdentity for alice (her dev record) with this expiry.
fn alice_expiring(at: Option<lantau_proto::Timestamp>) -> TxBuilder {
    TxBuilder::new(vec![to_any(&kpb::MsgUpdateIdentity {
        registrar: dev_addr("registrar").to_bech32(),
        address: dev_addr("alice").to_bech32(),
        level: kpb::Level::RetailPlus as i32,
        vasp_identifier: lantau_node::home::DEV_ALICE_VASP.into(),
        ivms101_off_chain_ref: "ivms101:alice-0001".into(),
        expires_at: at,
    })])
    .gas(300_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lapsed_identity_is_refused_with_code_22_on_both_paths_until_renewed() {
    use lantau_client::eth;
    use prost::Message as _;
    let n = TestNode::start().await.unwrap();
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    let app = n.node.node.app();
    let block_time = || async { app.queries().last_block_time().await.unwrap() };
    // An expiry not after the block time is refused (kyc 11); a later one is recorded.
    let past = lantau_proto::timestamp(block_time().await - time::Duration::seconds(1));
    let r = confirm(&n, &sync(&n, "registrar", &alice_expiring(Some(past))).await.txhash).await;
    assert_eq!((r.codespace.as_str(), r.code), ("kyc", 11), "{}", r.raw_log);
    let at = lantau_proto::timestamp(block_time().await + time::Duration::seconds(2));
    let when = at.to_rfc3339().unwrap();
    let r = confirm(&n, &sync(&n, "registrar", &alice_expiring(Some(at))).await.txhash).await;
    assert_eq!(r.code, 0, "{}", r.raw_log);
    let v: Value = n.client.query(&format!("/chain/kyc/v1/identity/{alice}")).await.unwrap();
    assert_eq!(v["identity"]["expires_at"], when.as_str(), "{v}");
    // Until then alice sends.
    let p = n.client.travel_rule_payload(&alice, &issuer).await.unwrap();
    let r = confirm(&n, &sync(&n, "alice", &hkd("alice", "issuer", 100).travel_rule(&p)).await.txhash).await;
    assert_eq!(r.code, 0, "{}", r.raw_log);

    // From the first block at or after the expiry, she is refused as sender and as recipient.
    lantau_test_utils::poll(Duration::from_secs(30), || async { lantau_proto::timestamp(block_time().await).seconds > at.seconds }).await.unwrap();
    let r = sync(&n, "alice", &hkd("alice", "issuer", 100).travel_rule(&p)).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 22), "{r:?}");
    assert_eq!(r.raw_log, format!("sender={}: identity expired at {when}", alice.to_bech32()));
    let back = n.client.travel_rule_payload(&issuer, &alice).await.unwrap();
    let r = sync(&n, "issuer", &hkd("issuer", "alice", 100).travel_rule(&back)).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 22), "{r:?}");
    assert_eq!(r.raw_log, format!("recipient={}: identity expired at {when}", alice.to_bech32()));
    // The trace names the gate.
    use base64::Engine as _;
    let tx = n.sign(&dev_key("alice"), &hkd("alice", "issuer", 100).travel_rule(&p)).await.unwrap();
    let body = serde_json::json!({"tx_bytes": base64::engine::general_purpose::STANDARD.encode(&tx)});
    let v: Value =
        reqwest::Client::new().post(format!("{}/chain/compliance/v1/simulate_trace", n.rest_url)).json(&body).send().await.unwrap().json().await.unwrap();
    assert_eq!(v["trace"]["results"][0]["name"], "kyc_gate");
    assert_eq!(v["trace"]["results"][0]["status"], "DECORATOR_RESULT_FAIL", "{v}");
    assert_eq!(v["trace"]["results"][0]["reason"], format!("sender={}: identity expired at {when}", alice.to_bech32()));
    // The EVM path: the precompile's call reverts with the same reason, either way.
    let token = lantau_app::erc20::token_address("hkd.demo").to_hex();
    let call = |from: &lantau_primitives::Address, to: &lantau_primitives::Address, p: &lantau_proto::chain::compliance::v1::TravelRulePayload| {
        let data = eth::transfer_with_travel_rule_calldata(to, 100, &p.encode_to_vec());
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": [{"from": from.to_hex(), "to": token, "data": format!("0x{}", const_hex::encode(data))}, "latest"]})
    };
    for (body, party) in [(call(&alice, &issuer, &p), "sender"), (call(&issuer, &alice, &back), "recipient")] {
        let e: Value = reqwest::Client::new().post(&n.eth_url).json(&body).send().await.unwrap().json().await.unwrap();
        assert_eq!(e["error"]["code"], 3, "{e}");
        assert_eq!(e["error"]["message"], format!("execution reverted: {party}={}: identity expired at {when}", alice.to_bech32()), "{e}");
    }

    // A renewal (a later expiry) lets her send again.
    let later = lantau_proto::timestamp(block_time().await + time::Duration::days(365));
    let r = confirm(&n, &sync(&n, "registrar", &alice_expiring(Some(later))).await.txhash).await;
    assert_eq!(r.code, 0, "{}", r.raw_log);
    let r = confirm(&n, &sync(&n, "alice", &hkd("alice", "issuer", 100).travel_rule(&p)).await.txhash).await;
    assert_eq!(r.code, 0, "{}", r.raw_log);
    n.stop().await;
}

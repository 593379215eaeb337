//! The flag review workflow through signed transactions over REST: every row of the flag
//! state table, every transition outside it, and who may sign what.

use lantau_client::TxBuilder;
use lantau_crypto::SecretKey;
use lantau_primitives::{Address, Coin};
use lantau_proto::chain::compliance::v1 as cpb;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::Value;

use crate::support::*;

struct Desk {
    n: TestNode,
    reviewer: SecretKey,
    officer: SecretKey,
}

/// A node where the issuer has bound a reviewer and an officer (both funded for gas).
async fn desk() -> Desk {
    let n = TestNode::start().await.unwrap();
    let (reviewer, officer) = (key(21), key(22));
    let issuer = dev_addr("issuer");
    for k in [&reviewer, &officer] {
        fund(&n, "issuer", &k.address()).await;
    }
    ok(&n, &dev_key("issuer"), &bind(&issuer, &reviewer.address(), cpb::SubRole::Reviewer, "review desk", None)).await;
    ok(&n, &dev_key("issuer"), &bind(&issuer, &officer.address(), cpb::SubRole::Officer, "MLRO", None)).await;
    Desk { n, reviewer, officer }
}

/// A large transfer from alice: the threshold gate raises a flag; returns its id.
async fn raise(n: &TestNode) -> String {
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    let t = ok(n, &dev_key("alice"), &hkd(n, &alice, &issuer, 800_000, &alice, &issuer).await).await;
    let rows = audit_rows(n, &t.txhash).await;
    let row = rows.iter().find(|r| r["tx_type"] == "threshold_flag").expect("a threshold flag");
    row["metadata"]["flag_id"].as_str().unwrap().to_string()
}

async fn flag(n: &TestNode, id: &str) -> Value {
    let v = n.client.query("/chain/compliance/v1/flags").await.unwrap();
    v["flags"].as_array().unwrap().iter().find(|f| f["flag_id"] == id).cloned().expect("flag listed")
}

fn review(k: &SecretKey, id: &str, decision: &str, evidence: &str) -> TxBuilder {
    one(&cpb::MsgReviewFlag { reviewer: k.address().to_bech32(), flag_id: id.into(), decision: decision.into(), reviewer_evidence_hash: evidence.into() })
}

fn escalate(k: &SecretKey, id: &str, note: &str) -> TxBuilder {
    one(&cpb::MsgEscalateFlag { reviewer: k.address().to_bech32(), flag_id: id.into(), officer_note_hash: note.into() })
}

fn close(k: &SecretKey, id: &str, decision: &str, evidence: &str) -> TxBuilder {
    one(&cpb::MsgCloseFlag { officer: k.address().to_bech32(), flag_id: id.into(), decision: decision.into(), officer_evidence_hash: evidence.into() })
}

/// Executes and expects the compliance handler code `code`, with the flag and the audit log
/// unchanged.
async fn fails(n: &TestNode, k: &SecretKey, b: &TxBuilder, id: &str, code: u32) {
    let (before, rows) = (flag(n, id).await, audit_len(n).await);
    let t = exec(n, k, b).await;
    assert_eq!((t.codespace.as_str(), t.code), ("compliance", code), "{}", t.raw_log);
    assert_eq!(flag(n, id).await, before, "a failed move changed the flag");
    assert_eq!(audit_len(n).await, rows, "a failed move wrote audit rows");
}

/// Rejected at admission by the role gate (code 11).
async fn refused(n: &TestNode, k: &SecretKey, b: &TxBuilder) -> String {
    let r = sync_key(n, k, b).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 11), "{r:?}");
    r.raw_log
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_approved_resolves_with_events_and_an_audit_row() {
    let Desk { n, reviewer, .. } = desk().await;
    let id = raise(&n).await;
    assert_eq!(flag(&n, &id).await["status"], "FLAG_STATUS_EMITTED");
    let t = ok(&n, &reviewer, &review(&reviewer, &id, "APPROVED", "ab12")).await;
    let f = flag(&n, &id).await;
    assert_eq!((f["status"].as_str(), f["resolution"].as_str()), (Some("FLAG_STATUS_RESOLVED_APPROVED"), Some("APPROVED")));
    assert_eq!(f["reviewer"], reviewer.address().to_bech32());
    // The flag was written (EventFlagEmitted) and resolved (EventFlagResolved), in that order.
    let emitted = events(&t, "chain.compliance.v1.EventFlagEmitted");
    assert_eq!(emitted.len(), 1);
    assert_eq!(attr(emitted[0], "flag_id"), id.as_str());
    assert_eq!(attr(emitted[0], "status"), "FLAG_STATUS_RESOLVED_APPROVED");
    let resolved = events(&t, "chain.compliance.v1.EventFlagResolved");
    assert_eq!(resolved.len(), 1);
    assert_eq!(attr(resolved[0], "decision"), "APPROVED");
    assert_eq!(attr(resolved[0], "resolver"), reviewer.address().to_bech32().as_str());
    assert_eq!(attr(resolved[0], "evidence_hash"), "ab12");
    let types: Vec<&str> = t.events.iter().filter_map(|e| e["type"].as_str()).collect();
    let pos = |ty: &str| types.iter().position(|t| *t == ty).unwrap();
    assert!(pos("chain.compliance.v1.EventFlagEmitted") < pos("chain.compliance.v1.EventFlagResolved"));
    let rows = audit_rows(&n, &t.txhash).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["tx_type"], "flag_review");
    assert_eq!(rows[0]["metadata"]["flag_id"], id.as_str());
    assert_eq!(rows[0]["metadata"]["reviewer"], reviewer.address().to_bech32());
    assert_eq!(rows[0]["subject"], dev_addr("alice").to_bech32());
    // Terminal: no review, escalation or close moves it again.
    fails(&n, &reviewer, &review(&reviewer, &id, "BLOCKED", ""), &id, 7).await;
    fails(&n, &reviewer, &escalate(&reviewer, &id, "n"), &id, 7).await;
    // The report now lists it under review_closures, not threshold_flags.
    let report = n.client.query("/chain/compliance/v1/report").await.unwrap();
    let section = |name: &str| report["sections"].as_array().unwrap().iter().find(|s| s["name"] == name).cloned().unwrap();
    let has = |s: &Value| s["rows"].as_array().unwrap().iter().any(|r| r["cells"]["flag_id"] == id.as_str());
    assert!(has(&section("review_closures")) && !has(&section("threshold_flags")), "{report}");
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escalation_paths_and_the_officers_close() {
    let Desk { n, reviewer, officer } = desk().await;
    let (a, b) = (raise(&n).await, raise(&n).await);

    // EMITTED --MsgEscalateFlag--> PENDING_OFFICER, carrying the note hash.
    let t = ok(&n, &reviewer, &escalate(&reviewer, &a, "note-hash-1")).await;
    let f = flag(&n, &a).await;
    assert_eq!((f["status"].as_str(), f["officer_note_hash"].as_str()), (Some("FLAG_STATUS_PENDING_OFFICER"), Some("note-hash-1")));
    let esc = events(&t, "chain.compliance.v1.EventFlagEscalated");
    assert_eq!((esc.len(), attr(esc[0], "officer_note_hash")), (1, Value::from("note-hash-1")));
    assert_eq!(events(&t, "chain.compliance.v1.EventFlagEmitted").len(), 1);
    assert!(events(&t, "chain.compliance.v1.EventFlagResolved").is_empty());
    let rows = audit_rows(&n, &t.txhash).await;
    assert_eq!((rows[0]["tx_type"].as_str(), rows[0]["metadata"]["flag_id"].as_str()), (Some("flag_escalate"), Some(a.as_str())));
    assert_eq!(rows[0]["metadata"]["reviewer"], reviewer.address().to_bech32());

    // EMITTED --MsgReviewFlag ESCALATED--> PENDING_OFFICER.
    let t = ok(&n, &reviewer, &review(&reviewer, &b, "ESCALATED", "why")).await;
    assert_eq!(flag(&n, &b).await["status"], "FLAG_STATUS_PENDING_OFFICER");
    assert_eq!(events(&t, "chain.compliance.v1.EventFlagEscalated").len(), 1);

    // A pending flag cannot be reviewed or escalated again (7); an officer's close is the
    // only way on. A close decision of ESCALATED is refused at admission (9).
    fails(&n, &reviewer, &review(&reviewer, &a, "APPROVED", ""), &a, 7).await;
    fails(&n, &reviewer, &escalate(&reviewer, &a, ""), &a, 7).await;
    let r = sync_key(&n, &officer, &close(&officer, &a, "ESCALATED", "")).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 9), "{r:?}");

    // PENDING_OFFICER --close APPROVED--> RESOLVED_APPROVED.
    let t = ok(&n, &officer, &close(&officer, &a, "APPROVED", "ev-a")).await;
    let f = flag(&n, &a).await;
    assert_eq!((f["status"].as_str(), f["officer"].as_str()), (Some("FLAG_STATUS_RESOLVED_APPROVED"), Some(officer.address().to_bech32().as_str())));
    let res = events(&t, "chain.compliance.v1.EventFlagResolved");
    assert_eq!((attr(res[0], "decision"), attr(res[0], "resolver")), (Value::from("APPROVED"), Value::from(officer.address().to_bech32())));
    let rows = audit_rows(&n, &t.txhash).await;
    assert_eq!((rows[0]["tx_type"].as_str(), rows[0]["metadata"]["reviewer"].as_str()), (Some("flag_close"), Some(officer.address().to_bech32().as_str())));
    fails(&n, &officer, &close(&officer, &a, "BLOCKED", ""), &a, 8).await;

    // PENDING_OFFICER --close BLOCKED--> RESOLVED_BLOCKED, the subject blacklisted.
    let t = ok(&n, &officer, &close(&officer, &b, "BLOCKED", "ev-b")).await;
    assert_eq!(flag(&n, &b).await["status"], "FLAG_STATUS_RESOLVED_BLOCKED");
    let lc = events(&t, "chain.kyc.v1.EventLevelChanged");
    assert_eq!(attr(lc[0], "evidence_ref"), format!("flag/{b}").as_str());
    let id = n.client.identity(&dev_addr("alice")).await.unwrap().unwrap();
    assert_eq!(id.level, lantau_proto::chain::kyc::v1::Level::Blacklisted as i32);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_review_blacklists_the_subject_and_stops_its_next_transfer_at_admission() {
    let Desk { n, reviewer, officer } = desk().await;
    let id = raise(&n).await;
    let other = raise(&n).await;
    // Closing an EMITTED flag is not in the table (8).
    fails(&n, &officer, &close(&officer, &id, "APPROVED", ""), &id, 8).await;
    let t = ok(&n, &reviewer, &review(&reviewer, &id, "BLOCKED", "sar-draft")).await;
    let f = flag(&n, &id).await;
    assert_eq!((f["status"].as_str(), f["resolution"].as_str()), (Some("FLAG_STATUS_RESOLVED_BLOCKED"), Some("BLOCKED")));
    let lc = events(&t, "chain.kyc.v1.EventLevelChanged");
    assert_eq!(lc.len(), 1);
    assert_eq!(attr(lc[0], "address"), dev_addr("alice").to_bech32().as_str());
    assert_eq!(attr(lc[0], "evidence_ref"), format!("flag/{id}").as_str());
    assert_eq!(attr(events(&t, "chain.compliance.v1.EventFlagResolved")[0], "decision"), "BLOCKED");
    // alice's next transfer is refused at admission with code 18, naming her.
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    let r = sync_key(&n, &dev_key("alice"), &hkd(&n, &alice, &issuer, 100, &alice, &issuer).await).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 18), "{r:?}");
    assert_eq!(r.raw_log, format!("sender={}: address is blacklisted", alice.to_bech32()));
    // Blocking a second flag of a subject already blacklisted stays idempotent.
    let t = ok(&n, &reviewer, &review(&reviewer, &other, "BLOCKED", "")).await;
    assert!(events(&t, "chain.kyc.v1.EventLevelChanged").is_empty());
    n.stop().await;
}

/// Four eyes (`params.block_requires_officer`): a reviewer's BLOCKED escalates with its
/// proposal and blacklists nobody; the officer's close decides (BLOCKED blacklists, APPROVED
/// does not). Off again, a reviewer's BLOCKED blacklists as the spec says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_block_requires_officer_a_reviewers_blocked_waits_for_the_officer() {
    let Desk { n, reviewer, officer } = desk().await;
    let set = |on: bool| {
        let params = cpb::Params {
            authority: dev_addr("compliance_authority").to_bech32(),
            rules: Some(lantau_app::compliance::default_rules()),
            block_requires_officer: on,
        };
        one(&cpb::MsgUpdateParams { authority: dev_addr("governance").to_bech32(), params: Some(params) })
    };
    ok(&n, &dev_key("governance"), &set(true)).await;
    let p = n.client.query("/chain/compliance/v1/params").await.unwrap();
    assert_eq!(p["params"]["block_requires_officer"], true, "{p}");
    let alice = dev_addr("alice");
    let level = |n: &TestNode| {
        let c = n.client.clone();
        async move { c.query(&format!("/chain/kyc/v1/identity/{}", dev_addr("alice").to_bech32())).await.unwrap()["identity"]["level"].clone() }
    };
    let before = level(&n).await;

    // The reviewer's BLOCKED: escalated with its proposal, nobody blacklisted.
    let (first, second, third) = (raise(&n).await, raise(&n).await, raise(&n).await);
    let t = ok(&n, &reviewer, &review(&reviewer, &first, "BLOCKED", "sar-draft-1")).await;
    assert!(events(&t, "chain.kyc.v1.EventLevelChanged").is_empty());
    let esc = events(&t, "chain.compliance.v1.EventFlagEscalated");
    assert_eq!(attr(esc[0], "proposed_decision"), "BLOCKED");
    let f = flag(&n, &first).await;
    assert_eq!(
        (f["status"].as_str(), f["proposed_decision"].as_str(), f["officer_note_hash"].as_str()),
        (Some("FLAG_STATUS_PENDING_OFFICER"), Some("BLOCKED"), Some("sar-draft-1")),
        "{f}"
    );
    assert_eq!(level(&n).await, before);
    let rows = audit_rows(&n, &t.txhash).await;
    let row = rows.iter().find(|r| r["tx_type"] == "flag_review").unwrap();
    assert_eq!((row["metadata"]["decision"].as_str(), row["metadata"]["escalated"].as_str()), (Some("BLOCKED"), Some("block_requires_officer")), "{row}");
    // alice still sends: nobody was blacklisted yet.
    ok(&n, &dev_key("alice"), &hkd(&n, &alice, &dev_addr("issuer"), 100, &alice, &dev_addr("issuer")).await).await;
    // The officer overrules one (APPROVED: nothing happens to alice) and confirms the other.
    ok(&n, &reviewer, &review(&reviewer, &second, "BLOCKED", "sar-draft-2")).await;
    ok(&n, &officer, &close(&officer, &first, "APPROVED", "false-positive")).await;
    assert_eq!(flag(&n, &first).await["status"], "FLAG_STATUS_RESOLVED_APPROVED");
    assert_eq!(level(&n).await, before);
    let t = ok(&n, &officer, &close(&officer, &second, "BLOCKED", "sar-filed")).await;
    assert_eq!(events(&t, "chain.kyc.v1.EventLevelChanged").len(), 1);
    assert_eq!(level(&n).await, "LEVEL_BLACKLISTED");

    // Off: the spec's behaviour, a reviewer's BLOCKED resolves at once.
    ok(&n, &dev_key("governance"), &set(false)).await;
    assert_eq!(n.client.query("/chain/compliance/v1/params").await.unwrap()["params"]["block_requires_officer"], false);
    ok(&n, &reviewer, &review(&reviewer, &third, "BLOCKED", "")).await;
    assert_eq!(flag(&n, &third).await["status"], "FLAG_STATUS_RESOLVED_BLOCKED");
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_active_bindings_of_the_right_role_may_move_a_flag() {
    let Desk { n, reviewer, officer } = desk().await;
    let id = raise(&n).await;
    // A key without a binding: the handler refuses (10 reviewer, 12 officer).
    let bob = dev_key("bob");
    fails(&n, &bob, &review(&bob, &id, "APPROVED", ""), &id, 10).await;
    fails(&n, &bob, &escalate(&bob, &id, ""), &id, 10).await;
    fails(&n, &bob, &close(&bob, &id, "APPROVED", ""), &id, 12).await;
    // A reviewer key closing, an officer key reviewing or escalating: the role gate refuses at
    // admission (11), naming the role.
    let log = refused(&n, &reviewer, &close(&reviewer, &id, "APPROVED", "")).await;
    assert!(log.contains("SUB_ROLE_REVIEWER") && log.contains("MsgCloseFlag"), "{log}");
    refused(&n, &officer, &review(&officer, &id, "APPROVED", "")).await;
    refused(&n, &officer, &escalate(&officer, &id, "")).await;
    // An unknown flag (6), a malformed id (26, at admission).
    let t = exec(&n, &reviewer, &review(&reviewer, &id.replace(&id, "999999"), "APPROVED", "")).await;
    assert_eq!((t.codespace.as_str(), t.code), ("compliance", 6), "{}", t.raw_log);
    let r = sync_key(&n, &reviewer, &review(&reviewer, "seven", "APPROVED", "")).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 26), "{r:?}");
    // After its revocation, from the next block on, the reviewer may sign nothing (11).
    let t = ok(&n, &dev_key("issuer"), &revoke(&dev_addr("issuer"), &reviewer.address())).await;
    // The revocation is committed; admission has moved on once the next block is.
    n.wait_for_height(t.height.parse::<u64>().unwrap() + 1).await.unwrap();
    let log = refused(&n, &reviewer, &review(&reviewer, &id, "APPROVED", "")).await;
    assert!(log.contains("revoked"), "{log}");
    assert_eq!(flag(&n, &id).await["status"], "FLAG_STATUS_EMITTED");
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviewers_and_officers_need_a_licensed_issuer_parent() {
    let n = TestNode::start().await.unwrap();
    let k = key(31);
    // alice is LEVEL_RETAIL_PLUS: she may bind an agent, not a reviewer or an officer (16).
    for role in [cpb::SubRole::Reviewer, cpb::SubRole::Officer] {
        let t = exec(&n, &dev_key("alice"), &bind(&dev_addr("alice"), &k.address(), role, "x", None)).await;
        assert_eq!((t.codespace.as_str(), t.code), ("compliance", 16), "{}", t.raw_log);
        assert!(t.raw_log.contains("LEVEL_LICENSED_ISSUER") && t.raw_log.contains("LEVEL_RETAIL_PLUS"), "{}", t.raw_log);
    }
    let (s, body) = get_err(&n, &format!("/chain/compliance/v1/sub_role_parent/{}", k.address().to_bech32())).await;
    assert_eq!(s, 404, "{body}");
    let _: Address = k.address();
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegated_keys_flag_names_the_key_and_blocked_blacklists_only_it() {
    let Desk { n, reviewer, .. } = desk().await;
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    // alice's payment agent, allowed large transfers.
    let agent = key(45);
    let envelope = Some((Coin::new("hkd.demo", 5_000_000u128), Coin::new("hkd.demo", 1_000_000u128)));
    ok(&n, &dev_key("alice"), &bind(&alice, &agent.address(), cpb::SubRole::Agent, "treasury bot", envelope)).await;
    fund(&n, "alice", &agent.address()).await;
    ok(&n, &dev_key("alice"), &hkd(&n, &alice, &agent.address(), 2_000_000, &alice, &alice).await).await;
    // A large transfer by the agent: the flag's subject is the agent key, its VASP alice's.
    let t = ok(&n, &agent, &hkd(&n, &agent.address(), &issuer, 800_000, &alice, &issuer).await).await;
    let rows = audit_rows(&n, &t.txhash).await;
    let row = rows.iter().find(|r| r["tx_type"] == "threshold_flag").expect("a threshold flag");
    let id = row["metadata"]["flag_id"].as_str().unwrap().to_string();
    assert_eq!(row["subject"], agent.address().to_bech32());
    let f = flag(&n, &id).await;
    assert_eq!(f["subject"], agent.address().to_bech32());
    assert_eq!(f["vasp"], lantau_node::home::DEV_ALICE_VASP);
    // BLOCKED blacklists the agent, not alice.
    ok(&n, &reviewer, &review(&reviewer, &id, "BLOCKED", "e1")).await;
    let level = |a: Address| {
        let n = &n;
        async move { n.client.identity(&a).await.unwrap().map(|i| i.level).unwrap_or(0) }
    };
    assert_eq!(level(agent.address()).await, lantau_proto::chain::kyc::v1::Level::Blacklisted as i32);
    assert_ne!(level(alice).await, lantau_proto::chain::kyc::v1::Level::Blacklisted as i32);
    let r = sync_key(&n, &agent, &hkd(&n, &agent.address(), &issuer, 1, &alice, &issuer).await).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 18), "{r:?}");
    ok(&n, &dev_key("alice"), &hkd(&n, &alice, &issuer, 1, &alice, &issuer).await).await;
    n.stop().await;
}

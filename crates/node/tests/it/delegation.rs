//! Delegated sub-keys through signed transactions over REST: the binding state table, the
//! delegation rules, agent envelopes and the three queries.

use lantau_client::ParentAnswer;
use lantau_crypto::SecretKey;
use lantau_primitives::{Address, Coin};
use lantau_proto::chain::compliance::v1 as cpb;
use lantau_proto::chain::kyc::v1 as kpb;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::Value;

use crate::support::*;

fn caps(daily: u128, per_tx: u128) -> Option<(Coin, Coin)> {
    Some((Coin::new("hkd.demo", daily), Coin::new("hkd.demo", per_tx)))
}

fn policy(parent: &Address, sub: &Address, daily: Coin, per_tx: Coin) -> lantau_client::TxBuilder {
    one(&cpb::MsgBindAgentPolicy {
        parent: parent.to_bech32(),
        sub_addr: sub.to_bech32(),
        daily_cap: Some(lantau_client::pb_coin(&daily)),
        per_tx_cap: Some(lantau_client::pb_coin(&per_tx)),
    })
}

async fn code(n: &TestNode, k: &SecretKey, b: &lantau_client::TxBuilder) -> (String, u32, String) {
    let t = exec(n, k, b).await;
    (t.codespace, t.code, t.raw_log)
}

async fn bindings(n: &TestNode, parent: &Address, role: &str) -> Vec<Value> {
    let q = if role.is_empty() { String::new() } else { format!("?role={role}") };
    let v = n.client.query(&format!("/chain/compliance/v1/sub_roles/{}{q}", parent.to_bech32())).await.unwrap();
    assert_eq!(v["pagination"]["next_key"], Value::Null);
    v["bindings"].as_array().unwrap().clone()
}

/// bob (LEVEL_RETAIL_BASIC) binds an agent with an envelope of 1,000.00 a day, 600.00 a
/// transfer, funds it with gas money and 5,000.00 HKD.
async fn agent_of_bob(n: &TestNode) -> SecretKey {
    let (bob, agent) = (dev_addr("bob"), key(41));
    let t = ok(n, &dev_key("bob"), &bind(&bob, &agent.address(), cpb::SubRole::Agent, "payments bot", caps(100_000, 60_000))).await;
    let bound = events(&t, "chain.compliance.v1.EventSubRoleBound");
    assert_eq!((attr(bound[0], "role"), attr(bound[0], "label")), (Value::from("SUB_ROLE_AGENT"), Value::from("payments bot")));
    let pol = events(&t, "chain.compliance.v1.EventAgentPolicyUpdated");
    assert_eq!(attr(pol[0], "daily_cap")["amount"], "100000");
    let types: Vec<String> = audit_rows(n, &t.txhash).await.iter().map(|r| r["tx_type"].as_str().unwrap().to_string()).collect();
    assert_eq!(types, ["sub_role_bound", "agent_policy_update"]);
    fund(n, "bob", &agent.address()).await;
    // Paying one's own agent: the agent is evaluated as bob, so bob's payload fits both sides.
    ok(n, &dev_key("bob"), &hkd(n, &bob, &agent.address(), 500_000, &bob, &bob).await).await;
    agent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_spends_as_its_parent_within_its_envelope() {
    let n = TestNode::start().await.unwrap();
    let (bob, alice) = (dev_addr("bob"), dev_addr("alice"));
    let agent = agent_of_bob(&n).await;
    let a = agent.address();
    // Within the envelope: bob's identity, bob's payload.
    let t = ok(&n, &agent, &hkd(&n, &a, &alice, 50_000, &bob, &alice).await).await;
    assert_eq!(audit_rows(&n, &t.txhash).await[0]["subject"], a.to_bech32());
    let v = n.client.query(&format!("/chain/compliance/v1/agent_policy/{}/{}", bob.to_bech32(), a.to_bech32())).await.unwrap();
    assert_eq!(v["policy"]["per_tx_cap"]["amount"], "60000");
    assert_eq!(v["window"]["spent_last_24h"], serde_json::json!({"denom": "hkd.demo", "amount": "50000"}));
    assert_ne!(v["window"]["window_start"], "1970-01-01T00:00:00Z");
    // The client computes what is left.
    let (p, w) = n.client.agent_policy(&bob, &a).await.unwrap().unwrap();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let c = lantau_client::remaining_capacity(&p, &w, now);
    assert_eq!((c.daily_remaining, c.per_tx_max), (50_000, 50_000));
    // Over the per-transfer cap (13).
    let r = sync_key(&n, &agent, &hkd(&n, &a, &alice, 60_001, &bob, &alice).await).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 13), "{r:?}");
    assert!(r.raw_log.contains("per-transaction cap"), "{}", r.raw_log);
    // Over the daily cap: 50,000 spent, 50,001 more (13).
    let r = sync_key(&n, &agent, &hkd(&n, &a, &alice, 50_001, &bob, &alice).await).await;
    assert_eq!(r.code, 13, "{r:?}");
    assert!(r.raw_log.contains("daily cap"), "{}", r.raw_log);
    // Exactly up to the daily cap passes.
    ok(&n, &agent, &hkd(&n, &a, &alice, 50_000, &bob, &alice).await).await;
    // Another denom than the envelope's (14): the envelope moves to hkd.other.
    ok(&n, &dev_key("bob"), &policy(&bob, &a, Coin::new("hkd.other", 10), Coin::new("hkd.other", 10))).await;
    let r = sync_key(&n, &agent, &hkd(&n, &a, &alice, 1, &bob, &alice).await).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 14), "{r:?}");
    // Native coin stays free: gas money.
    ok(&n, &agent, &send(&a, &alice, Coin::new("alantau", 1u128))).await;
    // Any other message: refused by the role gate (11), on every message it signs.
    let r = sync_key(&n, &agent, &bind(&a, &key(42).address(), cpb::SubRole::Agent, "", None)).await;
    assert_eq!((r.code, r.codespace.as_str()), (11, "compliance"), "{r:?}");
    assert!(r.raw_log.contains("MsgBindSubRole") && r.raw_log.contains("SUB_ROLE_AGENT"), "{}", r.raw_log);
    // A MsgSend next to a message the role does not allow: refused as a whole.
    let mixed = lantau_client::TxBuilder::new(vec![
        lantau_client::msg_send(&a, &alice, &[Coin::new("alantau", 1u128)]),
        lantau_client::to_any(&cpb::MsgRevokeSubRole { parent: a.to_bech32(), sub_addr: alice.to_bech32() }),
    ])
    .gas(400_000);
    assert_eq!(sync_key(&n, &agent, &mixed).await.code, 11);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blacklisted_parents_agent_is_stopped_and_named() {
    let n = TestNode::start().await.unwrap();
    let (bob, alice) = (dev_addr("bob"), dev_addr("alice"));
    let agent = agent_of_bob(&n).await;
    ok(
        &n,
        &dev_key("compliance_authority"),
        &one(&kpb::MsgBlacklistAddress {
            authority: dev_addr("compliance_authority").to_bech32(),
            address: bob.to_bech32(),
            reason: "test".into(),
            evidence_ref: "case-1".into(),
        }),
    )
    .await;
    let r = sync_key(&n, &agent, &hkd(&n, &agent.address(), &alice, 100, &bob, &alice).await).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 18), "{r:?}");
    assert_eq!(r.raw_log, format!("sender={} (parent of sub-key {}): address is blacklisted", bob.to_bech32(), agent.address().to_bech32()));
    // A blacklisted parent binds nothing more (16).
    let (_, c, log) = code(&n, &dev_key("bob"), &bind(&bob, &key(43).address(), cpb::SubRole::Agent, "", None)).await;
    assert_eq!(c, 16, "{log}");
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_rules_upsert_conflicts_and_revocation() {
    let n = TestNode::start().await.unwrap();
    let (bob, alice, issuer) = (dev_addr("bob"), dev_addr("alice"), dev_addr("issuer"));
    let (k1, k2) = (key(51), key(52));
    // carol has no identity record: she may bind nothing (16).
    let (_, c, log) = code(&n, &dev_key("carol"), &bind(&dev_addr("carol"), &k1.address(), cpb::SubRole::Agent, "", None)).await;
    assert_eq!(c, 16, "{log}");
    // A key with an identity record of its own is not a sub-key (25).
    let (_, c, log) = code(&n, &dev_key("bob"), &bind(&bob, &alice, cpb::SubRole::Agent, "", None)).await;
    assert_eq!(c, 25, "{log}");
    // Bound by bob; claimed by another parent: refused (15).
    ok(&n, &dev_key("bob"), &bind(&bob, &k1.address(), cpb::SubRole::Agent, "first", None)).await;
    let (_, c, log) = code(&n, &dev_key("alice"), &bind(&alice, &k1.address(), cpb::SubRole::Agent, "mine", None)).await;
    assert_eq!(c, 15, "{log}");
    assert!(log.contains(&bob.to_bech32()), "{log}");
    // Same parent again: an upsert, not a second binding.
    ok(&n, &dev_key("bob"), &bind(&bob, &k1.address(), cpb::SubRole::Agent, "renamed", caps(10, 10))).await;
    let list = bindings(&n, &bob, "").await;
    assert_eq!(list.len(), 1);
    assert_eq!((list[0]["label"].as_str(), list[0]["revoked_at"].as_str()), (Some("renamed"), Some("1970-01-01T00:00:00Z")));
    // The issuer binds a reviewer and an agent; the role filter.
    ok(&n, &dev_key("issuer"), &bind(&issuer, &k2.address(), cpb::SubRole::Reviewer, "desk", None)).await;
    let r = sync_key(&n, &dev_key("issuer"), &bind(&issuer, &key(53).address(), cpb::SubRole::Agent, "bot", None)).await;
    confirm(&n, &r.txhash).await;
    // (The dev chain's genesis binds a reviewer and an officer to the issuer.)
    assert_eq!(bindings(&n, &issuer, "").await.len(), 4);
    assert_eq!(bindings(&n, &issuer, "SUB_ROLE_REVIEWER").await.len(), 2);
    assert_eq!(bindings(&n, &issuer, "SUB_ROLE_OFFICER").await.len(), 1);
    assert_eq!(bindings(&n, &issuer, "SUB_ROLE_AGENT").await.len(), 1);
    // A policy for a reviewer (23), for nobody's sub-key (17), for another parent's (17).
    let (_, c, _) = code(&n, &dev_key("issuer"), &policy(&issuer, &k2.address(), Coin::new("hkd.demo", 5), Coin::new("hkd.demo", 5))).await;
    assert_eq!(c, 23);
    let (_, c, _) = code(&n, &dev_key("issuer"), &policy(&issuer, &key(59).address(), Coin::new("hkd.demo", 5), Coin::new("hkd.demo", 5))).await;
    assert_eq!(c, 17);
    let (_, c, _) = code(&n, &dev_key("issuer"), &policy(&issuer, &k1.address(), Coin::new("hkd.demo", 5), Coin::new("hkd.demo", 5))).await;
    assert_eq!(c, 17);
    // Invalid envelopes are refused at admission (24).
    let r = sync_key(&n, &dev_key("bob"), &policy(&bob, &k1.address(), Coin::new("hkd.demo", 5), Coin::new("hkd.demo", 6))).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 24), "{r:?}");
    let r = sync_key(&n, &dev_key("bob"), &policy(&bob, &k1.address(), Coin::new("hkd.demo", 5), Coin::new("hkd.other", 1))).await;
    assert_eq!(r.code, 24, "{r:?}");

    // Revocation: stamped, the policy revoked in the same transaction, twice fails (30).
    let t = ok(&n, &dev_key("bob"), &revoke(&bob, &k1.address())).await;
    assert_eq!(events(&t, "chain.compliance.v1.EventSubRoleRevoked").len(), 1);
    assert_eq!(audit_rows(&n, &t.txhash).await[0]["tx_type"], "sub_role_revoked");
    let list = bindings(&n, &bob, "SUB_ROLE_AGENT").await;
    assert_eq!(list.len(), 1, "revoked bindings stay listed");
    assert_ne!(list[0]["revoked_at"], "1970-01-01T00:00:00Z");
    let v = n.client.query(&format!("/chain/compliance/v1/agent_policy/{}/{}", bob.to_bech32(), k1.address().to_bech32())).await.unwrap();
    assert_eq!(v["policy"]["revoked"], true);
    let (_, c, _) = code(&n, &dev_key("bob"), &revoke(&bob, &k1.address())).await;
    assert_eq!(c, 30);
    let (_, c, _) = code(&n, &dev_key("bob"), &policy(&bob, &k1.address(), Coin::new("hkd.demo", 5), Coin::new("hkd.demo", 5))).await;
    assert_eq!(c, 30);
    // Revoking someone else's sub-key (17).
    let (_, c, _) = code(&n, &dev_key("alice"), &revoke(&alice, &k2.address())).await;
    assert_eq!(c, 17);
    // The revoked key, from the next block on, signs nothing, not even gas money (11).
    fund(&n, "bob", &k1.address()).await;
    let r = sync_key(&n, &k1, &send(&k1.address(), &bob, Coin::new("alantau", 1u128))).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 11), "{r:?}");
    // Still claimed by bob (another parent: 15); bob re-binding re-activates it, without the
    // old spending rights until a new envelope.
    let (_, c, _) = code(&n, &dev_key("alice"), &bind(&alice, &k1.address(), cpb::SubRole::Agent, "", None)).await;
    assert_eq!(c, 15);
    ok(&n, &dev_key("bob"), &bind(&bob, &k1.address(), cpb::SubRole::Agent, "back", None)).await;
    assert_eq!(bindings(&n, &bob, "").await[0]["revoked_at"], "1970-01-01T00:00:00Z");
    ok(&n, &k1, &send(&k1.address(), &bob, Coin::new("alantau", 1u128))).await;
    let v = n.client.query(&format!("/chain/compliance/v1/agent_policy/{}/{}", bob.to_bech32(), k1.address().to_bech32())).await.unwrap();
    assert_eq!(v["policy"]["revoked"], true);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_role_parent_and_agent_policy_queries() {
    let n = TestNode::start().await.unwrap();
    let (bob, k) = (dev_addr("bob"), key(61));
    let addr = k.address().to_bech32();
    // Unbound: exactly the spec's body, and the client's proof of a primary key.
    let (s, body) = get_err(&n, &format!("/chain/compliance/v1/sub_role_parent/{addr}")).await;
    assert_eq!(s, 404);
    assert_eq!(body, serde_json::json!({"code": 5, "message": format!("no sub-role binding for {addr}"), "details": []}));
    assert!(matches!(n.client.sub_role_parent(&addr).await, ParentAnswer::PrimaryKey));
    // An unparseable address: 400.
    let (s, body) = get_err(&n, "/chain/compliance/v1/sub_role_parent/nonsense").await;
    assert_eq!((s, body["code"].as_i64()), (400, Some(3)), "{body}");
    // No policy: 404.
    let (s, _) = get_err(&n, &format!("/chain/compliance/v1/agent_policy/{}/{addr}", bob.to_bech32())).await;
    assert_eq!(s, 404);
    ok(&n, &dev_key("bob"), &bind(&bob, &k.address(), cpb::SubRole::Agent, "bot", caps(7_000, 700))).await;
    let v = n.client.query(&format!("/chain/compliance/v1/sub_role_parent/{addr}")).await.unwrap();
    assert_eq!(v["parent"], bob.to_bech32());
    assert_eq!(v["binding"]["role"], "SUB_ROLE_AGENT");
    match n.client.sub_role_parent(&addr).await {
        ParentAnswer::SubKey { parent, active, .. } => assert!(parent == bob && active),
        other => panic!("{other:?}"),
    }
    // A fresh agent's window: nothing spent, from the zero timestamp; the client sees the
    // whole daily cap.
    let v = n.client.query(&format!("/chain/compliance/v1/agent_policy/{}/{addr}", bob.to_bech32())).await.unwrap();
    assert_eq!(v["window"]["spent_last_24h"]["amount"], "0");
    assert_eq!(v["window"]["window_start"], "1970-01-01T00:00:00Z");
    let (p, w) = n.client.agent_policy(&bob, &k.address()).await.unwrap().unwrap();
    let c = lantau_client::remaining_capacity(&p, &w, time::OffsetDateTime::now_utc().unix_timestamp());
    assert_eq!((c.daily_remaining, c.per_tx_max), (7_000, 700));
    // Under the wrong parent: 404.
    let (s, _) = get_err(&n, &format!("/chain/compliance/v1/agent_policy/{}/{addr}", dev_addr("alice").to_bech32())).await;
    assert_eq!(s, 404);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blacklisted_sub_key_is_refused_whoever_it_acts_for() {
    let n = TestNode::start().await.unwrap();
    let (bob, alice) = (dev_addr("bob"), dev_addr("alice"));
    let agent = agent_of_bob(&n).await;
    let a = agent.address();
    // The agent itself is blacklisted (its parent is not): as sender, refused with 18 naming
    // the key itself.
    ok(
        &n,
        &dev_key("compliance_authority"),
        &one(&kpb::MsgBlacklistAddress {
            authority: dev_addr("compliance_authority").to_bech32(),
            address: a.to_bech32(),
            reason: "compromised key".into(),
            evidence_ref: "case-7".into(),
        }),
    )
    .await;
    let r = sync_key(&n, &agent, &hkd(&n, &a, &alice, 100, &bob, &alice).await).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 18), "{r:?}");
    assert_eq!(r.raw_log, format!("sender={} (sub-key of {}): address is blacklisted", a.to_bech32(), bob.to_bech32()));
    // As recipient too: paying the blacklisted agent is refused, though bob is in good standing.
    let r = sync_key(&n, &dev_key("bob"), &hkd(&n, &bob, &a, 100, &bob, &bob).await).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 18), "{r:?}");
    assert!(r.raw_log.starts_with(&format!("recipient={} (sub-key of", a.to_bech32())), "{}", r.raw_log);
    // bob himself still transfers.
    ok(&n, &dev_key("bob"), &hkd(&n, &bob, &alice, 100, &bob, &alice).await).await;

    // A second agent blacklisted by a sanctions push with its address.
    let second = key(44);
    ok(&n, &dev_key("bob"), &bind(&bob, &second.address(), cpb::SubRole::Agent, "", caps(100_000, 60_000))).await;
    fund(&n, "bob", &second.address()).await;
    ok(&n, &dev_key("bob"), &hkd(&n, &bob, &second.address(), 1_000, &bob, &bob).await).await;
    ok(
        &n,
        &dev_key("compliance_authority"),
        &one(&cpb::MsgUpdateSanctionsList {
            authority: dev_addr("compliance_authority").to_bech32(),
            blocked_addresses: vec![second.address().to_bech32()],
            blocked_vasps: vec![],
            reason: String::new(),
            evidence_ref: "list-2026-11".into(),
        }),
    )
    .await;
    let r = sync_key(&n, &second, &hkd(&n, &second.address(), &alice, 100, &bob, &alice).await).await;
    assert_eq!((r.codespace.as_str(), r.code), ("compliance", 18), "{r:?}");
    n.stop().await;
}

/// A dev chain starts with the issuer's reviewer and officer bound (genesis `sub_roles`), so
/// the reviewers' console works on it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dev_chain_starts_with_the_issuers_reviewer_and_officer_bound() {
    let n = TestNode::start().await.unwrap();
    for (name, role) in [("reviewer", "SUB_ROLE_REVIEWER"), ("officer", "SUB_ROLE_OFFICER")] {
        let v = n.client.query(&format!("/chain/compliance/v1/sub_role_parent/{}", dev_addr(name).to_bech32())).await.unwrap();
        assert_eq!(v["parent"], dev_addr("issuer").to_bech32(), "{v}");
        assert_eq!((v["binding"]["role"].as_str(), v["binding"]["revoked_at"].as_str()), (Some(role), Some("1970-01-01T00:00:00Z")), "{v}");
    }
    // Genesis writes no audit rows.
    let log = n.client.query("/chain/compliance/v1/audit_log").await.unwrap();
    assert!(log["entries"].as_array().unwrap().is_empty(), "{log}");
    n.stop().await;
}

//! Group accounts (dual control), end to end on a dev chain: a 2-of-3 group becomes the
//! compliance authority; a freeze runs only once the second member approves; a proposal that
//! expires does nothing; a proposal whose message fails is the proposal's failure (nothing it
//! did is kept) and not the transaction's; a group changes its members by its own proposal,
//! which aborts its older ones; every step is an audit row.

use cosmos_sdk_proto::Any;
use lantau_client::{msg_send, to_any, TxBuilder, TxResponse};
use lantau_crypto::SecretKey;
use lantau_primitives::{Address, Coin};
use lantau_proto::chain::compliance::v1 as cpb;
use lantau_proto::chain::group::v1 as gpb;
use lantau_proto::chain::stablecoin::v1 as spb;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::{json, Value};

use crate::support::*;

/// The group's members are three officers' own keys (fresh, funded); other names are dev
/// accounts.
fn k(name: &str) -> SecretKey {
    match name {
        "ann" => key(71),
        "ben" => key(72),
        "cat" => key(73),
        _ => dev_key(name),
    }
}

fn b32(name: &str) -> String {
    k(name).address().to_bech32()
}

fn member(name: &str) -> gpb::Member {
    gpb::Member { address: b32(name), weight: 1 }
}

fn propose(group: &str, proposer: &str, msgs: Vec<Any>, exec: bool) -> TxBuilder {
    TxBuilder::new(vec![to_any(&gpb::MsgSubmitProposal {
        group_address: group.into(),
        proposer: b32(proposer),
        messages: msgs,
        metadata: String::new(),
        exec,
    })])
    .gas(1_000_000)
}

fn vote(id: u64, voter: &str, option: gpb::VoteOption, exec: bool) -> TxBuilder {
    TxBuilder::new(vec![to_any(&gpb::MsgVote { proposal_id: id, voter: b32(voter), option: option as i32, exec })]).gas(1_000_000)
}

fn freeze(group: &str, who: &str) -> Any {
    to_any(&spb::MsgFreeze { authority: group.into(), address: b32(who) })
}

/// Runs, expecting a failure of `codespace`/`code` (at admission or in the block).
async fn refused(n: &TestNode, k: &SecretKey, b: &TxBuilder, codespace: &str, code: u32) -> String {
    let r = sync_key(n, k, b).await;
    if r.code != 0 {
        assert_eq!((r.codespace.as_str(), r.code), (codespace, code), "{}", r.raw_log);
        return r.raw_log;
    }
    let t = confirm(n, &r.txhash).await;
    assert_eq!((t.codespace.as_str(), t.code), (codespace, code), "{}", t.raw_log);
    t.raw_log
}

async fn frozen(n: &TestNode, who: &str) -> bool {
    n.client.query(&format!("/chain/stablecoin/v1/frozen/{}", b32(who))).await.unwrap()["frozen"] == true
}

async fn proposal(n: &TestNode, id: u64) -> Value {
    n.client.query(&format!("/chain/group/v1/proposals/{id}")).await.unwrap()["proposal"].clone()
}

fn proposal_id(t: &TxResponse) -> u64 {
    let e = events(t, "chain.group.v1.EventSubmitProposal");
    attr(e.first().expect("EventSubmitProposal"), "proposal_id").as_str().unwrap().parse().unwrap()
}

/// The audit row of `tx_type` the transaction wrote.
async fn row(n: &TestNode, t: &TxResponse, tx_type: &str) -> Value {
    let rows = audit_rows(n, &t.txhash).await;
    rows.iter().find(|r| r["tx_type"] == tx_type).cloned().unwrap_or_else(|| panic!("no {tx_type} row in {rows:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_of_three_group_as_compliance_authority_freezes_only_after_the_second_approval() {
    let n = TestNode::start().await.unwrap();
    for m in ["ann", "ben", "cat"] {
        fund(&n, "faucet", &k(m).address()).await;
    }
    let gov = dev_key("governance");
    // The desk's group: three officers, any two of them.
    let create = gpb::MsgCreateGroup {
        creator: b32("governance"),
        members: vec![member("ann"), member("ben"), member("cat")],
        threshold: 2,
        voting_period: "3600s".into(),
        metadata: "compliance desk".into(),
    };
    let t = ok(&n, &gov, &one(&create)).await;
    let group = n.client.query(&format!("/chain/group/v1/groups_by_member/{}", b32("ben"))).await.unwrap()["groups"][0].clone();
    let g = group["address"].as_str().unwrap().to_string();
    assert_eq!((group["threshold"].as_str(), group["total_weight"].as_str(), group["version"].as_str()), (Some("2"), Some("3"), Some("1")), "{group}");
    assert_eq!(row(&n, &t, "group_create").await["subject"], g.as_str());
    let info = n.client.query(&format!("/chain/group/v1/groups/{g}")).await.unwrap();
    assert_eq!(info["group"]["members"].as_array().unwrap().len(), 3, "{info}");

    // Governance makes the group the compliance authority; the old key no longer freezes.
    let params = cpb::Params { authority: g.clone(), rules: Some(lantau_app::compliance::default_rules()), block_requires_officer: false };
    ok(&n, &gov, &one(&cpb::MsgUpdateParams { authority: b32("governance"), params: Some(params) })).await;
    let ca = dev_key("compliance_authority");
    refused(&n, &ca, &one(&spb::MsgFreeze { authority: b32("compliance_authority"), address: b32("bob") }), "stablecoin", 9).await;

    // A proposal's messages must be the group's, and cannot carry group votes or executions.
    let not_ours = to_any(&spb::MsgFreeze { authority: b32("ann"), address: b32("bob") });
    refused(&n, &k("ann"), &propose(&g, "ann", vec![not_ours], false), "group", 8).await;
    let nested = to_any(&gpb::MsgExec { proposal_id: 1, executor: g.clone() });
    refused(&n, &k("ann"), &propose(&g, "ann", vec![nested], false), "group", 8).await;
    refused(&n, &dev_key("alice"), &propose(&g, "alice", vec![freeze(&g, "bob")], false), "group", 3).await;

    // Ann proposes the freeze (its YES); one approval of two: nothing happens yet.
    let t = ok(&n, &k("ann"), &propose(&g, "ann", vec![freeze(&g, "bob")], true)).await;
    let id = proposal_id(&t);
    assert!(!frozen(&n, "bob").await);
    let p = proposal(&n, id).await;
    assert_eq!(
        (p["status"].as_str(), p["yes_weight"].as_str(), p["executor_result"].as_str()),
        (Some("PROPOSAL_STATUS_SUBMITTED"), Some("1"), Some("EXECUTOR_RESULT_NOT_RUN")),
        "{p}"
    );
    let r = row(&n, &t, "group_proposal").await;
    assert_eq!((r["subject"].as_str(), r["counterparty"].as_str()), (Some(g.as_str()), Some(b32("ann").as_str())), "{r}");
    assert_eq!(r["metadata"]["proposal_id"], id.to_string());
    assert_eq!(r["metadata"]["messages"], "/chain.stablecoin.v1.MsgFreeze");
    // Not yet accepted: no one can execute it; no one votes twice; outsiders do not vote.
    refused(&n, &dev_key("alice"), &one(&gpb::MsgExec { proposal_id: id, executor: b32("alice") }), "group", 13).await;
    refused(&n, &k("ann"), &vote(id, "ann", gpb::VoteOption::Yes, true), "group", 9).await;
    refused(&n, &dev_key("alice"), &vote(id, "alice", gpb::VoteOption::Yes, true), "group", 3).await;
    let pending = n.client.query(&format!("/chain/group/v1/proposals_by_group/{g}?pending_only=true")).await.unwrap();
    assert_eq!(pending["proposals"].as_array().unwrap().len(), 1, "{pending}");

    // Ben's approval is the second: the freeze runs in the same transaction.
    let t = ok(&n, &k("ben"), &vote(id, "ben", gpb::VoteOption::Yes, true)).await;
    assert!(frozen(&n, "bob").await);
    let p = proposal(&n, id).await;
    assert_eq!((p["status"].as_str(), p["executor_result"].as_str()), (Some("PROPOSAL_STATUS_ACCEPTED"), Some("EXECUTOR_RESULT_SUCCESS")), "{p}");
    assert_eq!(row(&n, &t, "group_vote").await["metadata"]["status"], "PROPOSAL_STATUS_ACCEPTED");
    let r = row(&n, &t, "group_exec").await;
    assert_eq!((r["metadata"]["result"].as_str(), r["counterparty"].as_str()), (Some("EXECUTOR_RESULT_SUCCESS"), Some(b32("ben").as_str())), "{r}");
    let votes = n.client.query(&format!("/chain/group/v1/proposals/{id}/votes")).await.unwrap();
    assert_eq!(votes["votes"].as_array().unwrap().len(), 2, "{votes}");
    // Executed once.
    refused(&n, &k("cat"), &one(&gpb::MsgExec { proposal_id: id, executor: b32("cat") }), "group", 16).await;
    let pending = n.client.query(&format!("/chain/group/v1/proposals_by_group/{g}?pending_only=true")).await.unwrap();
    assert_eq!(pending["proposals"].as_array().unwrap().len(), 0, "{pending}");

    // A proposal that fails (the group holds no HKD, and no identity): the transaction
    // succeeds, the proposal records the failure, nothing moved; it may be tried again.
    let pay = msg_send(&Address::from_bech32(&g).unwrap(), &dev_addr("alice"), &[Coin::new("hkd.demo", 5u128)]);
    let id2 = proposal_id(&ok(&n, &k("ann"), &propose(&g, "ann", vec![pay], false)).await);
    let t = ok(&n, &k("cat"), &vote(id2, "cat", gpb::VoteOption::Yes, true)).await;
    let p = proposal(&n, id2).await;
    assert_eq!(p["executor_result"], "EXECUTOR_RESULT_FAILURE", "{p}");
    assert!(!p["result_log"].as_str().unwrap().is_empty(), "{p}");
    assert_eq!(row(&n, &t, "group_exec").await["metadata"]["result"], "EXECUTOR_RESULT_FAILURE");
    assert!(audit_rows(&n, &t.txhash).await.iter().all(|r| r["tx_type"] != "transfer"));
    // TxTrace explains it: the group's movement, screened as the group's, refused by a gate.
    let trace = n.client.query(&format!("/chain/compliance/v1/tx_trace/{}", t.txhash)).await.unwrap();
    assert_eq!((trace["found"].as_bool(), trace["trace"]["accepted"].as_bool()), (Some(true), Some(false)), "{trace}");
    assert!(
        trace["trace"]["results"].as_array().unwrap().iter().any(|r| r["name"] == "travel_rule_tier_gate" && r["status"] == "DECORATOR_RESULT_FAIL"),
        "{trace}"
    );
    let t = ok(&n, &dev_key("alice"), &one(&gpb::MsgExec { proposal_id: id2, executor: b32("alice") })).await;
    assert_eq!(row(&n, &t, "group_exec").await["metadata"]["result"], "EXECUTOR_RESULT_FAILURE");

    // A proposal that expires does nothing: the unfreeze gets its second vote too late.
    let unfreeze = to_any(&spb::MsgUnfreeze { authority: g.clone(), address: b32("bob") });
    let id3 = proposal_id(&ok(&n, &k("ann"), &propose(&g, "ann", vec![unfreeze], false)).await);
    eth_rpc(&n, "evm_increaseTime", &json!([7200])).await;
    eth_rpc(&n, "evm_mine", &json!([])).await;
    assert_eq!(proposal(&n, id3).await["status"], "PROPOSAL_STATUS_EXPIRED");
    let log = refused(&n, &k("ben"), &vote(id3, "ben", gpb::VoteOption::Yes, true), "group", 10).await;
    assert!(log.contains("expired"), "{log}");
    assert!(frozen(&n, "bob").await);

    // The group changes its own members (ann and ben, both needed) by a proposal;
    // a proposal made before the change is aborted.
    let stale = proposal_id(&ok(&n, &k("ann"), &propose(&g, "ann", vec![freeze(&g, "alice")], false)).await);
    let update = to_any(&gpb::MsgUpdateGroup {
        group_address: g.clone(),
        members: vec![member("ann"), member("ben")],
        threshold: 2,
        voting_period: "3600s".into(),
        metadata: "compliance desk, two officers".into(),
    });
    let id4 = proposal_id(&ok(&n, &k("ben"), &propose(&g, "ben", vec![update], false)).await);
    let t = ok(&n, &k("cat"), &vote(id4, "cat", gpb::VoteOption::Yes, true)).await;
    assert_eq!(row(&n, &t, "group_update").await["metadata"]["version"], "2");
    let info = n.client.query(&format!("/chain/group/v1/groups/{g}")).await.unwrap();
    assert_eq!((info["group"]["version"].as_str(), info["group"]["members"].as_array().unwrap().len()), (Some("2"), 2), "{info}");
    assert_eq!(proposal(&n, stale).await["status"], "PROPOSAL_STATUS_ABORTED");
    refused(&n, &k("ben"), &vote(stale, "ben", gpb::VoteOption::Yes, true), "group", 11).await;
    assert!(!frozen(&n, "alice").await);
    let gone = n.client.query(&format!("/chain/group/v1/groups_by_member/{}", b32("cat"))).await.unwrap();
    assert_eq!(gone["groups"].as_array().unwrap().len(), 0, "{gone}");
    n.stop().await;
}

/// A network that starts with its compliance authority under 2-of-3: the group is in the
/// genesis file (its address derived from its id), the compliance params name that address,
/// and the group's first proposal freezes an account once two members approve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_genesis_group_is_the_compliance_authority_from_the_first_block() {
    let home = tempfile::tempdir().unwrap();
    lantau_node::home::init_home(home.path(), &Default::default()).unwrap();
    let path = home.path().join("config/genesis.json");
    let mut genesis: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let group = lantau_app::group::group_address(1).to_bech32();
    genesis["app_state"]["group"]["groups"] = json!([{
        "id": "1", "address": group, "threshold": "2", "voting_period": "86400s", "metadata": "compliance authority",
        "members": [{"address": b32("ann"), "weight": "1"}, {"address": b32("ben"), "weight": "1"}, {"address": b32("cat"), "weight": "1"}],
    }]);
    genesis["app_state"]["compliance"]["params"]["authority"] = json!(group);
    std::fs::write(&path, serde_json::to_vec_pretty(&genesis).unwrap()).unwrap();
    let n = TestNode::start_in(home, 100).await.unwrap();
    let info = n.client.query(&format!("/chain/group/v1/groups/{group}")).await.unwrap();
    assert_eq!((info["group"]["version"].as_str(), info["group"]["total_weight"].as_str()), (Some("1"), Some("3")), "{info}");
    let params = n.client.query("/chain/compliance/v1/params").await.unwrap();
    assert_eq!(params["params"]["authority"], group.as_str(), "{params}");
    for m in ["ann", "ben"] {
        fund(&n, "faucet", &k(m).address()).await;
    }
    let id = proposal_id(&ok(&n, &k("ann"), &propose(&group, "ann", vec![freeze(&group, "bob")], false)).await);
    assert!(!frozen(&n, "bob").await);
    ok(&n, &k("ben"), &vote(id, "ben", gpb::VoteOption::Yes, true)).await;
    assert!(frozen(&n, "bob").await);

    // A genesis group whose address is not the one its id derives is refused.
    let home = tempfile::tempdir().unwrap();
    lantau_node::home::init_home(home.path(), &Default::default()).unwrap();
    let path = home.path().join("config/genesis.json");
    let mut bad: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    bad["app_state"]["group"]["groups"] =
        json!([{"id": "1", "address": b32("alice"), "threshold": "1", "voting_period": "60s", "members": [{"address": b32("ann"), "weight": "1"}]}]);
    std::fs::write(&path, serde_json::to_vec_pretty(&bad).unwrap()).unwrap();
    let Err(e) = TestNode::start_in(home, 100).await else { panic!("a genesis group at a wrong address was accepted") };
    assert!(format!("{e:#}").contains("is not the one its id derives"), "{e:#}");
    n.stop().await;
}

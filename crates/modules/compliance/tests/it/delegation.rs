//! `delegation.rs`: MsgBindSubRole, MsgRevokeSubRole, MsgBindAgentPolicy (signed by the parent).

use cnidarium::StateDelta;
use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
use lantau_compliance::msg::{BindSubRole, Envelope};
use lantau_compliance::state::{ComplianceRead, ComplianceWrite};
use lantau_compliance::{AgentPolicy, AgentWindow, ComplianceMsg, SubRole, SubRoleBinding};
use lantau_kyc::Level;
use lantau_module_api::GasMeter;

use crate::*;

/// A second key without identity: the agent in these tests.
const AGENT: Address = Address([0x44; 20]);

fn envelope(daily: u128, per_tx: u128) -> Envelope {
    Envelope { daily_cap: Coin::new(DENOM, daily), per_tx_cap: Coin::new(DENOM, per_tx) }
}

fn bind(parent: Address, sub: Address, role: SubRole, envelope: Option<Envelope>) -> ComplianceMsg {
    ComplianceMsg::BindSubRole(BindSubRole { parent, sub, role, label: "desk".into(), envelope })
}

fn pb_coin(amount: u128) -> Option<PbCoin> {
    Some(PbCoin { denom: DENOM.into(), amount: amount.to_string() })
}

async fn binding(s: &Storage, sub: &Address) -> Option<SubRoleBinding> {
    s.latest_snapshot().binding(&GasMeter::infinite(), sub).await.unwrap()
}

async fn bindings_of(s: &Storage, parent: &Address) -> Vec<SubRoleBinding> {
    s.latest_snapshot().bindings_of(parent).await.unwrap()
}

async fn policy(s: &Storage, sub: &Address) -> Option<AgentPolicy> {
    s.latest_snapshot().agent_policy(&GasMeter::infinite(), sub).await.unwrap()
}

fn never_revoked() -> Option<lantau_proto::Timestamp> {
    Some(lantau_proto::Timestamp::default())
}

// === MsgBindSubRole ===

#[tokio::test]
async fn a_licensed_issuer_binds_a_reviewer_stored_under_the_sub_key_and_listed_under_the_parent() {
    let (_d, s) = bare().await;
    let events = run(&s, bind(ISSUER, FRESH, SubRole::Reviewer, None)).await.unwrap();
    let want = SubRoleBinding {
        parent: ISSUER.to_bech32(),
        sub_addr: FRESH.to_bech32(),
        role: SubRole::Reviewer as i32,
        label: "desk".into(),
        revoked_at: never_revoked(),
    };
    assert_eq!(binding(&s, &FRESH).await, Some(want.clone()));
    assert_eq!(bindings_of(&s, &ISSUER).await, [want]);
    assert_eq!(policy(&s, &FRESH).await, None);
    assert_eq!(kinds(&events), ["EventSubRoleBound"]);
    assert_eq!(attr(&events, "EventSubRoleBound", "role").unwrap(), "SUB_ROLE_REVIEWER");
    assert_eq!(attr(&events, "EventSubRoleBound", "sub_addr").unwrap(), FRESH.to_bech32());
    let row = audit_of(&s, "sub_role_bound").await.pop().unwrap();
    assert_eq!((row.subject.as_str(), row.counterparty.as_str(), row.tx_hash.as_str()), (ISSUER.to_bech32().as_str(), FRESH.to_bech32().as_str(), TX_HASH));
    for (k, v) in [("sub_addr", FRESH.to_bech32().as_str()), ("role", "SUB_ROLE_REVIEWER"), ("label", "desk"), ("rebound", "false")] {
        assert_eq!(meta(&row, k), v, "{k}");
    }
    assert!(!row.metadata.contains_key("reactivated_from"));
}

#[tokio::test]
async fn a_licensed_issuer_binds_an_officer() {
    let (_d, s) = bare().await;
    run(&s, bind(ISSUER, FRESH, SubRole::Officer, None)).await.unwrap();
    assert_eq!(binding(&s, &FRESH).await.unwrap().role, SubRole::Officer as i32);
}

#[tokio::test]
async fn a_retail_parent_binds_an_agent_and_its_envelope_lands_as_the_policy_in_the_same_transaction() {
    let (_d, s) = bare().await;
    let rows = audit_rows(&s).await;
    let events = run(&s, bind(RETAIL, AGENT, SubRole::Agent, Some(envelope(1_000, 100)))).await.unwrap();
    assert_eq!(binding(&s, &AGENT).await.unwrap().role, SubRole::Agent as i32);
    assert_eq!(
        policy(&s, &AGENT).await,
        Some(AgentPolicy { parent: RETAIL.to_bech32(), sub_addr: AGENT.to_bech32(), daily_cap: pb_coin(1_000), per_tx_cap: pb_coin(100), revoked: false })
    );
    assert_eq!(kinds(&events), ["EventSubRoleBound", "EventAgentPolicyUpdated"]);
    assert_eq!(attr(&events, "EventAgentPolicyUpdated", "revoked").unwrap(), "false");
    assert_eq!(audit_rows(&s).await, rows + 2);
    let row = audit_of(&s, "agent_policy_update").await.pop().unwrap();
    assert_eq!(meta(&row, "daily_cap"), "1000hkd.demo");
    assert_eq!(meta(&row, "per_tx_cap"), "100hkd.demo");
    assert_eq!(meta(&row, "revoked"), "false");
}

#[tokio::test]
async fn an_agent_bound_without_an_envelope_has_no_policy() {
    let (_d, s) = bare().await;
    let events = run(&s, bind(RETAIL, AGENT, SubRole::Agent, None)).await.unwrap();
    assert_eq!(kinds(&events), ["EventSubRoleBound"]);
    assert_eq!(policy(&s, &AGENT).await, None);
}

#[tokio::test]
async fn a_parent_whose_level_does_not_satisfy_the_role_is_refused_with_code_16() {
    let (_d, s) = bare().await;
    let rows = audit_rows(&s).await;
    // Reviewer and officer need LEVEL_LICENSED_ISSUER.
    for (parent, role) in [(RETAIL, SubRole::Reviewer), (RETAIL, SubRole::Officer), (BOB, SubRole::Reviewer)] {
        assert_eq!(code(run(&s, bind(parent, FRESH, role, None)).await), ("compliance", 16), "{role:?}");
    }
    // An agent needs a parent with a record, not blacklisted.
    assert_eq!(code(run(&s, bind(MALLORY, AGENT, SubRole::Agent, None)).await), ("compliance", 16), "no identity record");
    set_level(&s, RETAIL, Level::Blacklisted).await;
    assert_eq!(code(run(&s, bind(RETAIL, AGENT, SubRole::Agent, Some(envelope(10, 10)))).await), ("compliance", 16), "blacklisted");
    assert_eq!(binding(&s, &FRESH).await, None);
    assert_eq!(binding(&s, &AGENT).await, None);
    assert_eq!(policy(&s, &AGENT).await, None);
    assert_eq!(audit_rows(&s).await, rows);
}

#[tokio::test]
async fn a_sub_key_bound_to_another_parent_is_refused_with_code_15_even_once_revoked() {
    let (_d, s) = bare().await;
    set_level(&s, BOB, Level::LicensedIssuer).await;
    run(&s, bind(ISSUER, FRESH, SubRole::Reviewer, None)).await.unwrap();
    assert_eq!(code(run(&s, bind(BOB, FRESH, SubRole::Officer, None)).await), ("compliance", 15));
    run(&s, ComplianceMsg::RevokeSubRole(ISSUER, FRESH)).await.unwrap();
    assert_eq!(code(run(&s, bind(BOB, FRESH, SubRole::Officer, None)).await), ("compliance", 15), "a revoked binding keeps the key claimed");
    assert_eq!(binding(&s, &FRESH).await.unwrap().parent, ISSUER.to_bech32());
    assert!(bindings_of(&s, &BOB).await.is_empty());
}

#[tokio::test]
async fn a_new_sub_key_with_an_identity_record_of_its_own_is_refused_with_code_25() {
    let (_d, s) = bare().await;
    assert_eq!(code(run(&s, bind(ISSUER, ALICE, SubRole::Reviewer, None)).await), ("compliance", 25));
    assert_eq!(code(run(&s, bind(RETAIL, BOB, SubRole::Agent, None)).await), ("compliance", 25));
    // Its own parent: the parent has a record, so the handler refuses it too (decoding does first).
    assert_eq!(code(run(&s, bind(ISSUER, ISSUER, SubRole::Reviewer, None)).await), ("compliance", 25));
    assert_eq!(binding(&s, &ALICE).await, None);
    assert_eq!(binding(&s, &ISSUER).await, None);
}

#[tokio::test]
async fn rebinding_a_sub_key_that_got_an_identity_record_of_its_own_since_is_refused_with_code_25() {
    let (_d, s) = bare().await;
    run(&s, bind(ISSUER, FRESH, SubRole::Reviewer, None)).await.unwrap();
    // The key is enrolled (or a sanctions push blacklists it) after it was bound.
    set_level(&s, FRESH, Level::RetailBasic).await;
    assert_eq!(code(run(&s, bind(ISSUER, FRESH, SubRole::Officer, None)).await), ("compliance", 25));
    let b = binding(&s, &FRESH).await.unwrap();
    assert_eq!(b.role, SubRole::Reviewer as i32, "the binding stays as it was");
}

#[tokio::test]
async fn the_same_parent_rebinding_an_agent_to_another_role_upserts_it_and_revokes_its_policy() {
    let (_d, s) = bare().await;
    set_level(&s, RETAIL, Level::LicensedIssuer).await;
    run(&s, bind(RETAIL, AGENT, SubRole::Agent, Some(envelope(1_000, 100)))).await.unwrap();
    let events = run(&s, bind(RETAIL, AGENT, SubRole::Reviewer, None)).await.unwrap();
    assert_eq!(kinds(&events), ["EventSubRoleBound"]);
    let b = binding(&s, &AGENT).await.unwrap();
    assert_eq!((b.role, b.revoked_at), (SubRole::Reviewer as i32, never_revoked()));
    assert_eq!(bindings_of(&s, &RETAIL).await, [b]);
    assert!(policy(&s, &AGENT).await.unwrap().revoked, "a key moved off the agent role keeps no spending rights");
    let row = audit_of(&s, "sub_role_bound").await.pop().unwrap();
    assert_eq!(meta(&row, "rebound"), "true");
    assert_eq!(meta(&row, "role"), "SUB_ROLE_REVIEWER");
}

#[tokio::test]
async fn rebinding_a_revoked_sub_key_reactivates_it_and_records_when_it_was_revoked() {
    let (_d, s) = bare().await;
    run(&s, bind(ISSUER, FRESH, SubRole::Reviewer, None)).await.unwrap();
    run(&s, ComplianceMsg::RevokeSubRole(ISSUER, FRESH)).await.unwrap();
    assert_eq!(binding(&s, &FRESH).await.unwrap().revoked_at.unwrap().seconds, T0);
    run_in(&s, &block_at(9, T0 + 10), bind(ISSUER, FRESH, SubRole::Reviewer, None)).await.unwrap();
    assert_eq!(binding(&s, &FRESH).await.unwrap().revoked_at, never_revoked());
    let row = audit_of(&s, "sub_role_bound").await.pop().unwrap();
    assert_eq!(meta(&row, "rebound"), "true");
    assert_eq!(meta(&row, "reactivated_from"), lantau_proto::Timestamp { seconds: T0, nanos: 0 }.to_rfc3339().unwrap());
}

// === MsgRevokeSubRole ===

#[tokio::test]
async fn the_parent_revokes_an_agent_at_the_block_time_and_its_policy_with_it() {
    let (_d, s) = bare().await;
    run(&s, bind(RETAIL, AGENT, SubRole::Agent, Some(envelope(1_000, 100)))).await.unwrap();
    let events = run_in(&s, &block_at(8, T0 + 3), ComplianceMsg::RevokeSubRole(RETAIL, AGENT)).await.unwrap();
    let b = binding(&s, &AGENT).await.unwrap();
    assert_eq!(b.revoked_at.unwrap().seconds, T0 + 3);
    assert_eq!(bindings_of(&s, &RETAIL).await, [b], "a revoked binding stays listed");
    assert!(policy(&s, &AGENT).await.unwrap().revoked);
    assert_eq!(kinds(&events), ["EventSubRoleRevoked"]);
    assert_eq!(attr(&events, "EventSubRoleRevoked", "sub_addr").unwrap(), AGENT.to_bech32());
    let row = audit_of(&s, "sub_role_revoked").await.pop().unwrap();
    assert_eq!((row.subject.as_str(), row.counterparty.as_str()), (RETAIL.to_bech32().as_str(), AGENT.to_bech32().as_str()));
    assert_eq!(meta(&row, "role"), "SUB_ROLE_AGENT");
    assert_eq!(meta(&row, "policy_revoked"), "true");
}

#[tokio::test]
async fn revoking_a_reviewer_revokes_no_policy() {
    let (_d, s) = setup().await;
    run(&s, ComplianceMsg::RevokeSubRole(ISSUER, REVIEWER)).await.unwrap();
    let row = audit_of(&s, "sub_role_revoked").await.pop().unwrap();
    assert_eq!(meta(&row, "role"), "SUB_ROLE_REVIEWER");
    assert_eq!(meta(&row, "policy_revoked"), "false");
}

#[tokio::test]
async fn revoking_a_binding_that_is_not_under_the_signer_is_refused_with_code_17() {
    let (_d, s) = setup().await;
    let rows = audit_rows(&s).await;
    assert_eq!(code(run(&s, ComplianceMsg::RevokeSubRole(ISSUER, FRESH)).await), ("compliance", 17), "never bound");
    assert_eq!(code(run(&s, ComplianceMsg::RevokeSubRole(RETAIL, REVIEWER)).await), ("compliance", 17), "another parent's");
    assert_eq!(binding(&s, &REVIEWER).await.unwrap().revoked_at, never_revoked());
    assert_eq!(audit_rows(&s).await, rows);
}

#[tokio::test]
async fn revoking_twice_is_refused_with_code_22() {
    let (_d, s) = setup().await;
    run(&s, ComplianceMsg::RevokeSubRole(ISSUER, REVIEWER)).await.unwrap();
    let rows = audit_rows(&s).await;
    assert_eq!(code(run_in(&s, &block_at(8, T0 + 1), ComplianceMsg::RevokeSubRole(ISSUER, REVIEWER)).await), ("compliance", 30));
    assert_eq!(binding(&s, &REVIEWER).await.unwrap().revoked_at.unwrap().seconds, T0, "the first revocation's time stays");
    assert_eq!(audit_rows(&s).await, rows);
}

// === MsgBindAgentPolicy ===

#[tokio::test]
async fn the_parent_replaces_an_agents_policy_keeping_its_spend_window() {
    let (_d, s) = bare().await;
    run(&s, bind(RETAIL, AGENT, SubRole::Agent, Some(envelope(1_000, 100)))).await.unwrap();
    let window = AgentWindow {
        parent: RETAIL.to_bech32(),
        sub_addr: AGENT.to_bech32(),
        spent_last_24h: pb_coin(40),
        window_start: Some(lantau_proto::Timestamp { seconds: T0 - 60, nanos: 0 }),
    };
    let mut d = StateDelta::new(s.latest_snapshot());
    d.put_agent_window(&GasMeter::infinite(), &AGENT, &window).unwrap();
    s.commit(d).await.unwrap();

    let events = run(&s, ComplianceMsg::BindAgentPolicy(RETAIL, AGENT, envelope(5_000, 500))).await.unwrap();
    let p = policy(&s, &AGENT).await.unwrap();
    assert_eq!((p.daily_cap, p.per_tx_cap, p.revoked), (pb_coin(5_000), pb_coin(500), false));
    assert_eq!(s.latest_snapshot().agent_window(&GasMeter::infinite(), &AGENT).await.unwrap(), Some(window), "the day's spending still counts");
    assert_eq!(kinds(&events), ["EventAgentPolicyUpdated"]);
    let rows = audit_of(&s, "agent_policy_update").await;
    assert_eq!(rows.len(), 2);
    assert_eq!(meta(&rows[1], "daily_cap"), "5000hkd.demo");
    assert_eq!(meta(&rows[1], "sub_addr"), AGENT.to_bech32());
}

#[tokio::test]
async fn a_policy_for_an_agent_bound_without_one_is_created() {
    let (_d, s) = bare().await;
    run(&s, bind(RETAIL, AGENT, SubRole::Agent, None)).await.unwrap();
    run(&s, ComplianceMsg::BindAgentPolicy(RETAIL, AGENT, envelope(10, 10))).await.unwrap();
    assert_eq!(policy(&s, &AGENT).await.unwrap().daily_cap, pb_coin(10));
}

#[tokio::test]
async fn a_policy_for_a_binding_not_under_the_signer_is_refused_with_code_17() {
    let (_d, s) = bare().await;
    assert_eq!(code(run(&s, ComplianceMsg::BindAgentPolicy(RETAIL, AGENT, envelope(10, 10))).await), ("compliance", 17));
    run(&s, bind(RETAIL, AGENT, SubRole::Agent, None)).await.unwrap();
    assert_eq!(code(run(&s, ComplianceMsg::BindAgentPolicy(ISSUER, AGENT, envelope(10, 10))).await), ("compliance", 17));
    assert_eq!(policy(&s, &AGENT).await, None);
}

#[tokio::test]
async fn a_policy_for_a_binding_that_is_not_an_agent_is_refused_with_code_23() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, ComplianceMsg::BindAgentPolicy(ISSUER, REVIEWER, envelope(10, 10))).await), ("compliance", 23));
    assert_eq!(policy(&s, &REVIEWER).await, None);
}

#[tokio::test]
async fn a_policy_for_a_revoked_agent_is_refused_with_code_30() {
    let (_d, s) = bare().await;
    run(&s, bind(RETAIL, AGENT, SubRole::Agent, Some(envelope(1_000, 100)))).await.unwrap();
    run(&s, ComplianceMsg::RevokeSubRole(RETAIL, AGENT)).await.unwrap();
    let rows = audit_rows(&s).await;
    assert_eq!(code(run(&s, ComplianceMsg::BindAgentPolicy(RETAIL, AGENT, envelope(5_000, 500))).await), ("compliance", 30));
    let p = policy(&s, &AGENT).await.unwrap();
    assert!(p.revoked);
    assert_eq!(p.daily_cap, pb_coin(1_000));
    assert_eq!(audit_rows(&s).await, rows);
}

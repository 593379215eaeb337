//! `handler.rs`: MsgUpdateParams (governance), MsgUpdateSanctionsList and MsgUpdateRule (the
//! compliance authority).

use cnidarium::StateDelta;
use cosmos_sdk_proto::Any;
use lantau_authority::AuthorityRead;
use lantau_compliance::msg::{UpdateParams, UpdateSanctions};
use lantau_compliance::state::{ComplianceRead, ComplianceWrite};
use lantau_compliance::{ComplianceMsg, Rules, SanctionsSet};
use lantau_kyc::Level;
use lantau_module_api::GasMeter;
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1 as pb;
use prost::Name;

use crate::*;

const NEW_AUTHORITY: Address = Address([0xC1; 20]);

fn rules(threshold: u64, window: u64, limit: u64) -> Rules {
    Rules { travel_rule_full_threshold: threshold, velocity_window_seconds: window, velocity_tx_limit: limit }
}

fn any<M: Name>(m: &M) -> Any {
    Any { type_url: M::type_url(), value: m.encode_to_vec() }
}

/// Decodes and validates as the module list does.
fn decode<M: Name>(m: &M) -> Result<ComplianceMsg, lantau_module_api::TxError> {
    ComplianceMsg::from_any(&any(m)).expect("a compliance type URL")
}

async fn current_rules(s: &cnidarium::Storage) -> Rules {
    s.latest_snapshot().rules(&GasMeter::infinite()).await.unwrap()
}

async fn sanctions(s: &cnidarium::Storage) -> SanctionsSet {
    s.latest_snapshot().sanctions(&GasMeter::infinite()).await.unwrap()
}

fn push(authority: Address, addresses: Vec<Address>, vasps: &[&str]) -> ComplianceMsg {
    ComplianceMsg::UpdateSanctions(UpdateSanctions {
        authority,
        addresses,
        vasps: vasps.iter().map(|v| v.to_string()).collect(),
        reason: "ofac".into(),
        evidence_ref: "doc-7".into(),
    })
}

// === MsgUpdateParams ===

#[tokio::test]
async fn governance_replaces_the_compliance_authority_and_the_rules_together() {
    let (_d, s) = bare().await;
    let m = ComplianceMsg::UpdateParams(UpdateParams {
        authority: GOVERNANCE,
        compliance_authority: NEW_AUTHORITY,
        rules: rules(1_000, 30, 5),
        block_requires_officer: false,
    });
    let events = run(&s, m).await.unwrap();
    assert_eq!(s.latest_snapshot().compliance_authority(&GasMeter::infinite()).await.unwrap(), NEW_AUTHORITY);
    assert_eq!(current_rules(&s).await, rules(1_000, 30, 5));
    assert_eq!(kinds(&events), ["EventParamsUpdated"]);
    assert_eq!(attr(&events, "EventParamsUpdated", "authority").unwrap(), GOVERNANCE.to_bech32());
    assert_eq!(attr(&events, "EventParamsUpdated", "compliance_authority").unwrap(), NEW_AUTHORITY.to_bech32());
    // The authority moved: the old one is refused, the new one is obeyed.
    assert_eq!(code(run(&s, ComplianceMsg::UpdateRule(COMPLIANCE, rules(2, 2, 2))).await), ("compliance", 3));
    run(&s, ComplianceMsg::UpdateRule(NEW_AUTHORITY, rules(2, 2, 2))).await.unwrap();
    assert_eq!(current_rules(&s).await, rules(2, 2, 2));
}

#[tokio::test]
async fn params_updated_by_someone_not_governance_are_refused_with_code_2_and_change_nothing() {
    let (_d, s) = bare().await;
    let before = current_rules(&s).await;
    let m = ComplianceMsg::UpdateParams(UpdateParams {
        authority: COMPLIANCE,
        compliance_authority: MALLORY,
        rules: rules(1, 1, 1),
        block_requires_officer: false,
    });
    assert_eq!(code(run(&s, m).await), ("compliance", 2));
    assert_eq!(s.latest_snapshot().compliance_authority(&GasMeter::infinite()).await.unwrap(), COMPLIANCE);
    assert_eq!(current_rules(&s).await, before);
}

#[tokio::test]
async fn params_or_rules_with_a_zero_value_are_refused_at_decoding_with_code_4() {
    let zero = pb::MsgUpdateRule { authority: COMPLIANCE.to_bech32(), rules: Some(rules(800_000, 60, 0)) };
    assert_eq!(decode(&zero).map(|_| ()).unwrap_err().code, 4);
    let missing = pb::MsgUpdateRule { authority: COMPLIANCE.to_bech32(), rules: None };
    assert_eq!(decode(&missing).map(|_| ()).unwrap_err().code, 4);
    let params = pb::MsgUpdateParams {
        authority: GOVERNANCE.to_bech32(),
        params: Some(pb::Params { authority: COMPLIANCE.to_bech32(), rules: Some(rules(0, 60, 10)), block_requires_officer: false }),
    };
    assert_eq!(decode(&params).map(|_| ()).unwrap_err().code, 4);
}

// === MsgUpdateSanctionsList ===

#[tokio::test]
async fn the_authority_pushes_sanctions_blacklisting_the_addresses_and_replacing_the_vasp_set() {
    let (_d, s) = bare().await;
    let rows = audit_rows(&s).await;
    // Decoded as the app decodes it: VASPs sorted and deduplicated, addresses deduplicated,
    // an empty reason defaulted.
    let m = decode(&pb::MsgUpdateSanctionsList {
        authority: COMPLIANCE.to_bech32(),
        blocked_addresses: vec![MALLORY.to_bech32(), ALICE.to_bech32(), MALLORY.to_bech32()],
        blocked_vasps: vec!["VASP-Y".into(), "VASP-X".into(), "VASP-Y".into()],
        reason: String::new(),
        evidence_ref: "doc-7".into(),
    })
    .unwrap();
    let events = run(&s, m).await.unwrap();

    assert_eq!(level(&s, &MALLORY).await, Level::Blacklisted, "an address without a record is blacklisted too");
    assert_eq!(level(&s, &ALICE).await, Level::Blacklisted);
    assert_eq!(sanctions(&s).await, SanctionsSet { blocked_addresses: vec![], blocked_vasps: vec!["VASP-X".into(), "VASP-Y".into()] });

    assert_eq!(kinds(&events), ["EventLevelChanged", "EventLevelChanged", "EventSanctionsUpdated"]);
    assert_eq!(attr(&events, "EventLevelChanged", "reason").unwrap(), "sanctions_list_push");
    assert_eq!(attr(&events, "EventLevelChanged", "evidence_ref").unwrap(), "doc-7");
    assert_eq!(attr(&events, "EventSanctionsUpdated", "added_vasps").unwrap(), r#"["VASP-X","VASP-Y"]"#);
    assert_eq!(attr(&events, "EventSanctionsUpdated", "removed_vasps").unwrap(), "[]");
    assert_eq!(attr(&events, "EventSanctionsUpdated", "added_addresses").unwrap(), format!(r#"["{}","{}"]"#, MALLORY.to_bech32(), ALICE.to_bech32()));

    // Two KYC `blacklist` rows, then the push's own row.
    assert_eq!(audit_rows(&s).await, rows + 3);
    assert_eq!(audit_of(&s, "blacklist").await.len(), 2);
    let row = audit_of(&s, "sanctions_update").await.pop().unwrap();
    assert_eq!((row.subject.as_str(), row.tx_hash.as_str()), (COMPLIANCE.to_bech32().as_str(), TX_HASH));
    assert_eq!(meta(&row, "reason"), "sanctions_list_push");
    assert_eq!(meta(&row, "evidence_ref"), "doc-7");
    assert_eq!(meta(&row, "added_vasps"), "VASP-X,VASP-Y");
    assert_eq!(meta(&row, "removed_vasps"), "");
    assert_eq!(meta(&row, "added_addresses"), format!("{},{}", MALLORY.to_bech32(), ALICE.to_bech32()));
}

#[tokio::test]
async fn a_second_push_reports_the_vasp_deltas_and_only_newly_blacklisted_addresses() {
    let (_d, s) = bare().await;
    // A genesis set with addresses, which no gate reads: the first push empties them.
    let mut d = StateDelta::new(s.latest_snapshot());
    d.put_sanctions(&GasMeter::infinite(), &SanctionsSet { blocked_addresses: vec![BOB.to_bech32()], blocked_vasps: vec!["VASP-W".into(), "VASP-X".into()] })
        .unwrap();
    s.commit(d).await.unwrap();
    run(&s, push(COMPLIANCE, vec![ALICE], &["VASP-X"])).await.unwrap();
    assert_eq!(sanctions(&s).await, SanctionsSet { blocked_addresses: vec![], blocked_vasps: vec!["VASP-X".into()] });
    assert_eq!(level(&s, &BOB).await, Level::Institutional, "the genesis address list blacklists nobody");

    let events = run(&s, push(COMPLIANCE, vec![ALICE, MALLORY], &["VASP-Y", "VASP-Z"])).await.unwrap();
    assert_eq!(kinds(&events), ["EventLevelChanged", "EventSanctionsUpdated"], "ALICE is blacklisted already: idempotent, no event");
    assert_eq!(attr(&events, "EventLevelChanged", "address").unwrap(), MALLORY.to_bech32());
    assert_eq!(attr(&events, "EventSanctionsUpdated", "added_vasps").unwrap(), r#"["VASP-Y","VASP-Z"]"#);
    assert_eq!(attr(&events, "EventSanctionsUpdated", "removed_vasps").unwrap(), r#"["VASP-X"]"#);
    assert_eq!(attr(&events, "EventSanctionsUpdated", "added_addresses").unwrap(), format!(r#"["{}"]"#, MALLORY.to_bech32()));
    assert_eq!(attr(&events, "EventSanctionsUpdated", "reason").unwrap(), "ofac");
    let rows = audit_of(&s, "sanctions_update").await;
    assert_eq!(rows.len(), 2);
    assert_eq!(meta(&rows[0], "removed_vasps"), "VASP-W");
    assert_eq!(meta(&rows[1], "added_addresses"), MALLORY.to_bech32());
    assert_eq!(meta(&rows[1], "removed_vasps"), "VASP-X");
}

#[tokio::test]
async fn a_sanctions_push_by_someone_not_the_compliance_authority_is_refused_with_code_3_and_blacklists_nobody() {
    let (_d, s) = bare().await;
    let rows = audit_rows(&s).await;
    for signer in [GOVERNANCE, MALLORY] {
        assert_eq!(code(run(&s, push(signer, vec![ALICE], &["VASP-X"])).await), ("compliance", 3));
    }
    assert_eq!(level(&s, &ALICE).await, Level::RetailPlus);
    assert_eq!(sanctions(&s).await, SanctionsSet::default());
    assert_eq!(audit_rows(&s).await, rows);
}

// === MsgUpdateRule ===

#[tokio::test]
async fn the_authority_replaces_the_rules_with_an_event_and_a_rule_update_row() {
    let (_d, s) = bare().await;
    let events = run(&s, ComplianceMsg::UpdateRule(COMPLIANCE, rules(500_000, 120, 3))).await.unwrap();
    assert_eq!(current_rules(&s).await, rules(500_000, 120, 3));
    assert_eq!(kinds(&events), ["EventRuleUpdated"]);
    assert_eq!(attr(&events, "EventRuleUpdated", "authority").unwrap(), COMPLIANCE.to_bech32());
    let r = attr(&events, "EventRuleUpdated", "rules").unwrap();
    assert!(r.contains(r#""travel_rule_full_threshold":"500000""#) && r.contains(r#""velocity_tx_limit":"3""#), "{r}");
    let row = audit_of(&s, "rule_update").await.pop().unwrap();
    assert_eq!(row.subject, COMPLIANCE.to_bech32());
    assert_eq!(row.tx_hash, TX_HASH);
    assert_eq!(meta(&row, "travel_rule_full_threshold"), "500000");
    assert_eq!(meta(&row, "velocity_window_seconds"), "120");
    assert_eq!(meta(&row, "velocity_tx_limit"), "3");
}

#[tokio::test]
async fn rules_updated_by_someone_not_the_compliance_authority_are_refused_with_code_3() {
    let (_d, s) = bare().await;
    let before = current_rules(&s).await;
    let rows = audit_rows(&s).await;
    for signer in [GOVERNANCE, MALLORY] {
        assert_eq!(code(run(&s, ComplianceMsg::UpdateRule(signer, rules(1, 1, 1))).await), ("compliance", 3));
    }
    assert_eq!(current_rules(&s).await, before);
    assert_eq!(audit_rows(&s).await, rows);
}

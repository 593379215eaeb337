//! Unit tests of the KYC message handlers on a temporary store: each handler's success path and
//! the errors its authority and state checks return (codespace `kyc`, docs/modules/kyc.md).

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Duration;

use cnidarium::{StateDelta, Storage};
use lantau_audit::AuditRead;
use lantau_authority::AuthorityWrite;
use lantau_kyc::msg::{BlacklistAddress, IdentityFields, UpdateParams};
use lantau_kyc::{Identity, KycMsg, KycRead, KycWrite, Level};
use lantau_module_api::{BlockCtx, Event, ExecCtx, GasMeter, MsgHandler, TxError};
use lantau_primitives::Address;

// === fixtures ===

const GOVERNANCE: Address = Address([0xA0; 20]);
const COMPLIANCE: Address = Address([0xC0; 20]);
const REGISTRAR: Address = Address([0x0E; 20]);
const ALICE: Address = Address([1; 20]);
const MALLORY: Address = Address([0x66; 20]);

fn block() -> BlockCtx {
    BlockCtx { height: 7, time: (std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000)).into(), chain_id: "lantau-test-1".into() }
}

/// A store with both authorities set and the default params with one registrar.
async fn setup() -> (tempfile::TempDir, Storage) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
    let mut d = StateDelta::new(storage.latest_snapshot());
    let g = GasMeter::infinite();
    d.set_governance_authority(&g, &GOVERNANCE).unwrap();
    d.set_compliance_authority(&g, &COMPLIANCE).unwrap();
    let mut params = lantau_kyc::tier::default_params();
    params.registrars.push(REGISTRAR.to_bech32());
    d.put_kyc_params(&g, &params).unwrap();
    storage.commit(d).await.unwrap();
    (dir, storage)
}

/// Runs `msg` signed by its signer in a transaction of its own; commits only on success.
async fn run(storage: &Storage, msg: KycMsg) -> Result<Vec<Event>, TxError> {
    let mut d = StateDelta::new(storage.latest_snapshot());
    let gas = GasMeter::infinite();
    let block = block();
    let mut ctx = ExecCtx::new(&block, &gas, "ABCDEF0123", msg.signer());
    msg.check_and_execute(&mut d, &mut ctx).await?;
    let events = ctx.events;
    storage.commit(d).await.unwrap();
    Ok(events)
}

fn fields(registrar: Address, address: Address, level: Level) -> IdentityFields {
    IdentityFields { registrar, address, level, vasp_identifier: "VASP-A".into(), ivms101_off_chain_ref: "ivms-ref-a".into(), expires_at: None }
}

fn enroll(registrar: Address, address: Address, level: Level) -> KycMsg {
    KycMsg::Enroll(fields(registrar, address, level))
}

fn update(registrar: Address, address: Address, level: Level) -> KycMsg {
    KycMsg::Update(fields(registrar, address, level))
}

fn blacklist(authority: Address, address: Address) -> KycMsg {
    KycMsg::Blacklist(BlacklistAddress { authority, address, reason: "sanctions".into(), evidence_ref: "doc-1".into() })
}

async fn identity(storage: &Storage, a: &Address) -> Option<Identity> {
    storage.latest_snapshot().identity(&GasMeter::infinite(), a).await.unwrap()
}

async fn audit_rows(storage: &Storage) -> u64 {
    storage.latest_snapshot().audit_sequence(&GasMeter::infinite()).await.unwrap()
}

fn kinds(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

fn code(r: Result<Vec<Event>, TxError>) -> (&'static str, u32) {
    let e = r.unwrap_err();
    (e.codespace, e.code)
}

// === MsgEnrollIdentity ===

#[tokio::test]
async fn a_registrar_enrols_an_address_and_the_record_carries_the_block_time() {
    let (_d, s) = setup().await;
    let events = run(&s, enroll(REGISTRAR, ALICE, Level::RetailPlus)).await.unwrap();
    let id = identity(&s, &ALICE).await.unwrap();
    assert_eq!(id.address, ALICE.to_bech32());
    assert_eq!(id.level, Level::RetailPlus as i32);
    assert_eq!(id.vasp_identifier, "VASP-A");
    assert_eq!(id.ivms101_off_chain_ref, "ivms-ref-a");
    assert_eq!(id.enrolled_at.unwrap().seconds, 1_800_000_000);
    assert_eq!(id.last_level_change, id.enrolled_at);
    assert!(kinds(&events).iter().any(|k| k.ends_with("EventIdentityEnrolled")), "{events:?}");
    assert_eq!(audit_rows(&s).await, 1, "an enrolment is an audited action");
}

#[tokio::test]
async fn an_enrolment_by_someone_not_a_registrar_is_refused_with_code_5() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, enroll(MALLORY, ALICE, Level::RetailPlus)).await), ("kyc", 5));
    assert!(identity(&s, &ALICE).await.is_none());
}

#[tokio::test]
async fn enrolling_an_address_that_already_has_a_record_is_refused_with_code_3() {
    let (_d, s) = setup().await;
    run(&s, enroll(REGISTRAR, ALICE, Level::RetailBasic)).await.unwrap();
    assert_eq!(code(run(&s, enroll(REGISTRAR, ALICE, Level::Institutional)).await), ("kyc", 3));
    assert_eq!(identity(&s, &ALICE).await.unwrap().level, Level::RetailBasic as i32);
}

// === MsgUpdateIdentity ===

#[tokio::test]
async fn a_registrar_update_that_changes_the_level_emits_a_level_change_and_is_audited() {
    let (_d, s) = setup().await;
    run(&s, enroll(REGISTRAR, ALICE, Level::RetailBasic)).await.unwrap();
    let events = run(&s, update(REGISTRAR, ALICE, Level::Institutional)).await.unwrap();
    assert_eq!(identity(&s, &ALICE).await.unwrap().level, Level::Institutional as i32);
    let k = kinds(&events);
    assert!(k.iter().any(|k| k.ends_with("EventIdentityUpdated")), "{k:?}");
    assert!(k.iter().any(|k| k.ends_with("EventLevelChanged")), "{k:?}");
    assert_eq!(audit_rows(&s).await, 2);
}

#[tokio::test]
async fn an_update_that_keeps_the_level_changes_the_fields_but_records_no_level_change() {
    let (_d, s) = setup().await;
    run(&s, enroll(REGISTRAR, ALICE, Level::RetailPlus)).await.unwrap();
    let mut m = fields(REGISTRAR, ALICE, Level::RetailPlus);
    m.vasp_identifier = "VASP-B".into();
    let events = run(&s, KycMsg::Update(m)).await.unwrap();
    assert_eq!(identity(&s, &ALICE).await.unwrap().vasp_identifier, "VASP-B");
    assert!(!kinds(&events).iter().any(|k| k.ends_with("EventLevelChanged")));
    assert_eq!(audit_rows(&s).await, 1, "only the enrolment is audited");
}

#[tokio::test]
async fn updating_an_address_without_a_record_is_refused_with_code_4() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, update(REGISTRAR, ALICE, Level::RetailPlus)).await), ("kyc", 4));
}

#[tokio::test]
async fn an_update_by_someone_not_a_registrar_is_refused_with_code_5() {
    let (_d, s) = setup().await;
    run(&s, enroll(REGISTRAR, ALICE, Level::RetailBasic)).await.unwrap();
    assert_eq!(code(run(&s, update(MALLORY, ALICE, Level::Institutional)).await), ("kyc", 5));
    assert_eq!(identity(&s, &ALICE).await.unwrap().level, Level::RetailBasic as i32);
}

#[tokio::test]
async fn a_registrar_cannot_update_a_blacklisted_identity_code_8() {
    let (_d, s) = setup().await;
    run(&s, enroll(REGISTRAR, ALICE, Level::RetailBasic)).await.unwrap();
    run(&s, blacklist(COMPLIANCE, ALICE)).await.unwrap();
    assert_eq!(code(run(&s, update(REGISTRAR, ALICE, Level::RetailPlus)).await), ("kyc", 8));
    assert_eq!(identity(&s, &ALICE).await.unwrap().level, Level::Blacklisted as i32);
}

// === MsgBlacklistAddress ===

#[tokio::test]
async fn the_compliance_authority_blacklists_an_identity_keeping_its_vasp_and_reference() {
    let (_d, s) = setup().await;
    run(&s, enroll(REGISTRAR, ALICE, Level::Institutional)).await.unwrap();
    let events = run(&s, blacklist(COMPLIANCE, ALICE)).await.unwrap();
    let id = identity(&s, &ALICE).await.unwrap();
    assert_eq!(id.level, Level::Blacklisted as i32);
    assert_eq!(id.vasp_identifier, "VASP-A");
    assert_eq!(id.ivms101_off_chain_ref, "ivms-ref-a");
    assert!(kinds(&events).iter().any(|k| k.ends_with("EventLevelChanged")));
    assert_eq!(audit_rows(&s).await, 2);
}

#[tokio::test]
async fn blacklisting_an_address_without_a_record_creates_one() {
    let (_d, s) = setup().await;
    run(&s, blacklist(COMPLIANCE, ALICE)).await.unwrap();
    let id = identity(&s, &ALICE).await.unwrap();
    assert_eq!(id.level, Level::Blacklisted as i32);
    assert!(id.vasp_identifier.is_empty());
}

#[tokio::test]
async fn blacklisting_twice_succeeds_and_the_second_time_changes_nothing() {
    let (_d, s) = setup().await;
    run(&s, blacklist(COMPLIANCE, ALICE)).await.unwrap();
    let events = run(&s, blacklist(COMPLIANCE, ALICE)).await.unwrap();
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(audit_rows(&s).await, 1);
}

#[tokio::test]
async fn a_blacklisting_by_someone_not_the_compliance_authority_is_refused_with_code_6() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, blacklist(GOVERNANCE, ALICE)).await), ("kyc", 6));
    assert!(identity(&s, &ALICE).await.is_none());
}

// === MsgUpdateParams ===

#[tokio::test]
async fn governance_replaces_the_params() {
    let (_d, s) = setup().await;
    let mut params = lantau_kyc::tier::default_params();
    params.registrars = vec![MALLORY.to_bech32()];
    let events = run(&s, KycMsg::UpdateParams(UpdateParams { authority: GOVERNANCE, params: params.clone() })).await.unwrap();
    assert_eq!(s.latest_snapshot().kyc_params(&GasMeter::infinite()).await.unwrap(), params);
    assert!(kinds(&events).iter().any(|k| k.ends_with("EventParamsUpdated")));
    // The old registrar is no longer one; the new one is.
    assert_eq!(code(run(&s, enroll(REGISTRAR, ALICE, Level::RetailBasic)).await), ("kyc", 5));
    run(&s, enroll(MALLORY, ALICE, Level::RetailBasic)).await.unwrap();
}

#[tokio::test]
async fn a_params_update_by_someone_not_governance_is_refused_with_code_7() {
    let (_d, s) = setup().await;
    let m = KycMsg::UpdateParams(UpdateParams { authority: COMPLIANCE, params: lantau_kyc::tier::default_params() });
    assert_eq!(code(run(&s, m).await), ("kyc", 7));
}

// === refused before any handler runs (decoding) ===

fn decode<M: prost::Name>(type_url: &str, m: &M) -> Result<KycMsg, TxError> {
    KycMsg::from_any(&cosmos_sdk_proto::Any { type_url: type_url.into(), value: m.encode_to_vec() }).unwrap()
}

#[test]
fn a_registrar_cannot_assign_level_blacklisted_code_2() {
    use lantau_proto::chain::kyc::v1 as pb;
    let m = pb::MsgEnrollIdentity { registrar: REGISTRAR.to_bech32(), address: ALICE.to_bech32(), level: Level::Blacklisted as i32, ..Default::default() };
    let e = decode(lantau_kyc::msg::MSG_ENROLL_IDENTITY, &m).unwrap_err();
    assert_eq!((e.codespace, e.code), ("kyc", 2));
}

#[test]
fn params_naming_a_level_twice_are_refused_with_code_9() {
    use lantau_proto::chain::kyc::v1 as pb;
    let mut params = lantau_kyc::tier::default_params();
    let first = params.level_definitions[0].clone();
    params.level_definitions.push(first);
    let m = pb::MsgUpdateParams { authority: GOVERNANCE.to_bech32(), params: Some(params) };
    let e = decode(lantau_kyc::msg::MSG_UPDATE_PARAMS, &m).unwrap_err();
    assert_eq!((e.codespace, e.code), ("kyc", 9));
}

#[test]
fn a_blacklist_reason_over_the_limit_is_refused_with_code_10() {
    use lantau_proto::chain::kyc::v1 as pb;
    let m = pb::MsgBlacklistAddress {
        authority: COMPLIANCE.to_bech32(),
        address: ALICE.to_bech32(),
        reason: "x".repeat(lantau_kyc::MAX_REASON_LEN + 1),
        evidence_ref: String::new(),
    };
    let e = decode(lantau_kyc::msg::MSG_BLACKLIST_ADDRESS, &m).unwrap_err();
    assert_eq!((e.codespace, e.code), ("kyc", 10));
}

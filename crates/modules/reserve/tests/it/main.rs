//! Unit tests of the reserve message handlers on a temporary store: submit (an issuer), co-sign
//! (a registered auditor), update params (governance); each handler's success path and the
//! errors it returns (codespace `reserve`, docs/modules/reserve.md).

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Duration;

use cnidarium::{StateDelta, Storage};
use lantau_authority::AuthorityWrite;
use lantau_bank::{BankRead, BankWrite};
use lantau_module_api::{BlockCtx, Event, ExecCtx, GasMeter, MsgHandler, TxError};
use lantau_primitives::{Address, Coin};
use lantau_proto::Timestamp;
use lantau_reserve::msg::SubmitAttestation;
use lantau_reserve::{AttestationState, Params, ReserveMsg, ReserveRead, ReserveWrite};
use prost::Message as _;

// === fixtures ===

const GOVERNANCE: Address = Address([0xA0; 20]);
const ISSUER: Address = Address([0x15; 20]);
const AUDITOR: Address = Address([0xAD; 20]);
const MALLORY: Address = Address([0x66; 20]);
const DENOM: &str = "hkd.demo";
const BLOCK_SECS: i64 = 1_800_000_000;

fn block() -> BlockCtx {
    BlockCtx { height: 7, time: (std::time::UNIX_EPOCH + Duration::from_secs(BLOCK_SECS.unsigned_abs())).into(), chain_id: "lantau-test-1".into() }
}

/// Governance set; ISSUER issues `hkd.demo`; AUDITOR is the one registered auditor.
async fn setup() -> (tempfile::TempDir, Storage) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
    let mut d = StateDelta::new(storage.latest_snapshot());
    let g = GasMeter::infinite();
    d.set_governance_authority(&g, &GOVERNANCE).unwrap();
    let new = d.new_denom(&g, DENOM, &ISSUER).await.unwrap().unwrap();
    d.create_denom(&g, new, "HKD Demo", lantau_stablecoin::DECIMALS).unwrap();
    d.put_reserve_params(&g, &Params { auditors: vec![AUDITOR.to_bech32()], ..Default::default() }).unwrap();
    storage.commit(d).await.unwrap();
    (dir, storage)
}

/// Runs `msg` signed by its signer in a transaction of its own; commits only on success.
async fn run(storage: &Storage, msg: ReserveMsg) -> Result<Vec<Event>, TxError> {
    let mut d = StateDelta::new(storage.latest_snapshot());
    let gas = GasMeter::infinite();
    let block = block();
    let mut ctx = ExecCtx::new(&block, &gas, "ABCDEF0123", msg.signer());
    msg.check_and_execute(&mut d, &mut ctx).await?;
    let events = ctx.events;
    storage.commit(d).await.unwrap();
    Ok(events)
}

fn submission(issuer: Address, denom: &str, random_day_secs: i64) -> SubmitAttestation {
    SubmitAttestation {
        issuer,
        circulation: Coin::new(denom, 1_000u128),
        reserve_market_value: Coin::new(denom, 1_050u128),
        random_day: Timestamp { seconds: random_day_secs, nanos: 0 },
    }
}

fn submit(issuer: Address) -> ReserveMsg {
    ReserveMsg::Submit(submission(issuer, DENOM, BLOCK_SECS - 86_400))
}

fn has(events: &[Event], suffix: &str) -> bool {
    events.iter().any(|e| e.kind.ends_with(suffix))
}

fn code(r: Result<Vec<Event>, TxError>) -> (&'static str, u32) {
    let e = r.unwrap_err();
    (e.codespace, e.code)
}

// === MsgSubmitAttestation ===

#[tokio::test]
async fn an_issuer_submits_attestations_numbered_from_1_and_the_latest_is_its_last() {
    let (_d, s) = setup().await;
    let events = run(&s, submit(ISSUER)).await.unwrap();
    assert!(has(&events, "EventAttestationSubmitted"), "{events:?}");
    run(&s, submit(ISSUER)).await.unwrap();
    let snap = s.latest_snapshot();
    let g = GasMeter::infinite();
    let first = snap.attestation(&g, 1).await.unwrap().unwrap();
    assert_eq!(first.issuer, ISSUER.to_bech32());
    assert_eq!(first.state, AttestationState::Submitted as i32);
    assert_eq!(first.submitted_height, 7);
    assert_eq!(first.submitted_at.unwrap().seconds, BLOCK_SECS);
    assert_eq!(snap.latest_attestation(&g, &ISSUER).await.unwrap().unwrap().id, 2);
}

#[tokio::test]
async fn a_submission_by_someone_who_issues_nothing_is_refused_with_code_3() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, ReserveMsg::Submit(submission(MALLORY, DENOM, BLOCK_SECS))).await), ("reserve", 3));
}

#[tokio::test]
async fn a_submission_in_another_denom_is_refused_with_code_5() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, ReserveMsg::Submit(submission(ISSUER, "hkd.other", BLOCK_SECS))).await), ("reserve", 5));
    assert!(s.latest_snapshot().attestation(&GasMeter::infinite(), 1).await.unwrap().is_none());
}

#[tokio::test]
async fn a_random_day_after_the_block_time_is_refused_with_code_10() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, ReserveMsg::Submit(submission(ISSUER, DENOM, BLOCK_SECS + 1))).await), ("reserve", 10));
    // The block time itself is allowed.
    run(&s, ReserveMsg::Submit(submission(ISSUER, DENOM, BLOCK_SECS))).await.unwrap();
}

// === MsgCosignAttestation ===

#[tokio::test]
async fn a_registered_auditor_cosigns_a_submitted_attestation() {
    let (_d, s) = setup().await;
    run(&s, submit(ISSUER)).await.unwrap();
    let events = run(&s, ReserveMsg::Cosign(AUDITOR, 1)).await.unwrap();
    assert!(has(&events, "EventAttestationCosigned"), "{events:?}");
    let a = s.latest_snapshot().attestation(&GasMeter::infinite(), 1).await.unwrap().unwrap();
    assert_eq!(a.state, AttestationState::Attested as i32);
    assert_eq!(a.auditor, AUDITOR.to_bech32());
    assert_eq!(a.attested_at.unwrap().seconds, BLOCK_SECS);
}

#[tokio::test]
async fn a_cosignature_by_someone_not_a_registered_auditor_is_refused_with_code_7() {
    let (_d, s) = setup().await;
    run(&s, submit(ISSUER)).await.unwrap();
    assert_eq!(code(run(&s, ReserveMsg::Cosign(MALLORY, 1)).await), ("reserve", 7));
}

#[tokio::test]
async fn cosigning_an_unknown_attestation_is_refused_with_code_6() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, ReserveMsg::Cosign(AUDITOR, 9)).await), ("reserve", 6));
}

#[tokio::test]
async fn cosigning_an_attested_attestation_again_is_refused_with_code_8() {
    let (_d, s) = setup().await;
    run(&s, submit(ISSUER)).await.unwrap();
    run(&s, ReserveMsg::Cosign(AUDITOR, 1)).await.unwrap();
    assert_eq!(code(run(&s, ReserveMsg::Cosign(AUDITOR, 1)).await), ("reserve", 8));
}

#[tokio::test]
async fn an_issuer_registered_as_an_auditor_cannot_cosign_its_own_attestation_code_11() {
    let (_d, s) = setup().await;
    let mut d = StateDelta::new(s.latest_snapshot());
    d.put_reserve_params(&GasMeter::infinite(), &Params { auditors: vec![AUDITOR.to_bech32(), ISSUER.to_bech32()], ..Default::default() }).unwrap();
    s.commit(d).await.unwrap();
    run(&s, submit(ISSUER)).await.unwrap();
    assert_eq!(code(run(&s, ReserveMsg::Cosign(ISSUER, 1)).await), ("reserve", 11));
}

// === MsgUpdateParams ===

#[tokio::test]
async fn governance_replaces_the_auditors() {
    let (_d, s) = setup().await;
    let params = Params { auditors: vec![MALLORY.to_bech32()], ..Default::default() };
    let events = run(&s, ReserveMsg::UpdateParams(GOVERNANCE, params.clone())).await.unwrap();
    assert!(has(&events, "EventParamsUpdated"));
    assert_eq!(s.latest_snapshot().reserve_params(&GasMeter::infinite()).await.unwrap(), params);
    run(&s, submit(ISSUER)).await.unwrap();
    assert_eq!(code(run(&s, ReserveMsg::Cosign(AUDITOR, 1)).await), ("reserve", 7), "the old auditor is no longer registered");
    run(&s, ReserveMsg::Cosign(MALLORY, 1)).await.unwrap();
}

#[tokio::test]
async fn a_params_update_by_someone_not_governance_is_refused_with_code_2() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, ReserveMsg::UpdateParams(ISSUER, Params { auditors: vec![], ..Default::default() })).await), ("reserve", 2));
}

// === refused before any handler runs (decoding) ===

fn decode<M: prost::Name>(type_url: &str, m: &M) -> (&'static str, u32) {
    let e = ReserveMsg::from_any(&cosmos_sdk_proto::Any { type_url: type_url.into(), value: m.encode_to_vec() }).unwrap().unwrap_err();
    (e.codespace, e.code)
}

#[test]
fn a_zero_amount_a_missing_random_day_and_a_twice_listed_auditor_are_refused_with_codes_4_10_9() {
    use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
    use lantau_proto::chain::reserve::v1 as pb;
    use lantau_reserve::msg::{MSG_SUBMIT_ATTESTATION, MSG_UPDATE_PARAMS};
    let ok = pb::MsgSubmitAttestation {
        issuer: ISSUER.to_bech32(),
        circulation: Some(PbCoin { denom: DENOM.into(), amount: "1".into() }),
        reserve_market_value: Some(PbCoin { denom: DENOM.into(), amount: "1".into() }),
        random_day: Some(Timestamp { seconds: BLOCK_SECS, nanos: 0 }),
    };
    assert!(ReserveMsg::from_any(&cosmos_sdk_proto::Any { type_url: MSG_SUBMIT_ATTESTATION.into(), value: ok.encode_to_vec() }).unwrap().is_ok());
    let zero = pb::MsgSubmitAttestation { circulation: Some(PbCoin { denom: DENOM.into(), amount: "0".into() }), ..ok.clone() };
    assert_eq!(decode(MSG_SUBMIT_ATTESTATION, &zero), ("reserve", 4));
    assert_eq!(decode(MSG_SUBMIT_ATTESTATION, &pb::MsgSubmitAttestation { random_day: None, ..ok.clone() }), ("reserve", 10));
    let twice = pb::MsgUpdateParams {
        authority: GOVERNANCE.to_bech32(),
        params: Some(Params { auditors: vec![AUDITOR.to_bech32(), AUDITOR.to_bech32()], ..Default::default() }),
    };
    assert_eq!(decode(MSG_UPDATE_PARAMS, &twice), ("reserve", 9));
}

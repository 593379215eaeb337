//! Unit tests of the stablecoin message handlers on a temporary store: create (governance),
//! mint, burn, pause, unpause (the issuer), freeze, unfreeze (the compliance authority); each
//! handler's success path and the errors it returns (codespace `stablecoin`, and the bank's
//! chokepoint codes, docs/modules/stablecoin.md).

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Duration;

use cnidarium::{StateDelta, Storage};
use lantau_authority::AuthorityWrite;
use lantau_bank::BankRead;
use lantau_compliance::AuditRead;
use lantau_erc20::Erc20Read;
use lantau_kyc::{KycRead, KycWrite, Level};
use lantau_module_api::{BlockCtx, Event, ExecCtx, GasMeter, MsgHandler, TxError};
use lantau_primitives::{Address, Amount, Coin, Denom};
use lantau_stablecoin::msg::{Burn, CreateDenom, Mint};
use lantau_stablecoin::StablecoinMsg;
use prost::Message as _;

// === fixtures ===

const GOVERNANCE: Address = Address([0xA0; 20]);
const COMPLIANCE: Address = Address([0xC0; 20]);
const ISSUER: Address = Address([0x15; 20]);
const OTHER_ISSUER: Address = Address([0x16; 20]);
const ALICE: Address = Address([1; 20]);
const MALLORY: Address = Address([0x66; 20]);
const DENOM: &str = "hkd.demo";

fn block() -> BlockCtx {
    BlockCtx { height: 7, time: (std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000)).into(), chain_id: "lantau-test-1".into() }
}

/// A store with both authorities and the default KYC params; no denom yet.
async fn empty() -> (tempfile::TempDir, Storage) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
    let mut d = StateDelta::new(storage.latest_snapshot());
    let g = GasMeter::infinite();
    d.set_governance_authority(&g, &GOVERNANCE).unwrap();
    d.set_compliance_authority(&g, &COMPLIANCE).unwrap();
    d.put_kyc_params(&g, &lantau_kyc::tier::default_params()).unwrap();
    storage.commit(d).await.unwrap();
    (dir, storage)
}

/// [`empty`], then governance creates `hkd.demo` for ISSUER, whose reserve (an ATTESTED
/// attestation of 1,000,000,000) backs the mints of the tests.
async fn setup() -> (tempfile::TempDir, Storage) {
    let (dir, storage) = empty().await;
    run(&storage, create(GOVERNANCE, ISSUER, DENOM)).await.unwrap();
    let mut d = StateDelta::new(storage.latest_snapshot());
    let g = GasMeter::infinite();
    let coin = |n: u128| Some(lantau_module_api::pb_coin(&Coin::new(DENOM, n)));
    let t = Some(lantau_proto::Timestamp { seconds: 1_800_000_000 - 60, nanos: 0 });
    let a = lantau_reserve::Attestation {
        id: 1,
        issuer: ISSUER.to_bech32(),
        state: lantau_reserve::AttestationState::Attested as i32,
        circulation: coin(0),
        reserve_market_value: coin(1_000_000_000),
        random_day: t,
        submitted_at: t,
        submitted_height: 1,
        auditor: Address([0x77; 20]).to_bech32(),
        attested_at: t,
    };
    lantau_reserve::ReserveWrite::put_attestation(&mut d, &g, &a, Some(&ISSUER)).unwrap();
    lantau_reserve::ReserveWrite::record_attested(&mut d, &g, &ISSUER, 1).await.unwrap();
    storage.commit(d).await.unwrap();
    (dir, storage)
}

/// Runs `msg` signed by its signer in a transaction of its own; commits only on success.
async fn run(storage: &Storage, msg: StablecoinMsg) -> Result<Vec<Event>, TxError> {
    let mut d = StateDelta::new(storage.latest_snapshot());
    let gas = GasMeter::infinite();
    let block = block();
    let mut ctx = ExecCtx::new(&block, &gas, "ABCDEF0123", msg.signer());
    msg.check_and_execute(&mut d, &mut ctx).await?;
    let events = ctx.events;
    storage.commit(d).await.unwrap();
    Ok(events)
}

/// Blacklists `a` directly in the identity registry, as a sanctions push does.
async fn blacklist(storage: &Storage, a: &Address) {
    let mut d = StateDelta::new(storage.latest_snapshot());
    d.blacklist(&GasMeter::infinite(), &block(), "", a, "sanctions", "", &mut Vec::new()).await.unwrap();
    storage.commit(d).await.unwrap();
}

fn create(authority: Address, issuer: Address, denom: &str) -> StablecoinMsg {
    StablecoinMsg::CreateDenom(CreateDenom { authority, issuer, denom: Denom::new(denom).unwrap(), display: "HKD Demo".into() })
}

fn mint(issuer: Address, recipient: Address, amount: u128) -> StablecoinMsg {
    StablecoinMsg::Mint(Mint { issuer, recipient, amount: Coin::new(DENOM, amount) })
}

fn burn(issuer: Address, amount: u128) -> StablecoinMsg {
    StablecoinMsg::Burn(Burn { issuer, amount: Coin::new(DENOM, amount) })
}

async fn balance(storage: &Storage, a: &Address) -> u128 {
    storage.latest_snapshot().balance(&GasMeter::infinite(), a, DENOM).await.unwrap().0
}

async fn supply(storage: &Storage) -> Amount {
    storage.latest_snapshot().supply(&GasMeter::infinite(), DENOM).await.unwrap()
}

async fn paused(storage: &Storage) -> bool {
    storage.latest_snapshot().is_send_paused(&GasMeter::infinite(), DENOM).await.unwrap()
}

async fn frozen(storage: &Storage, a: &Address) -> bool {
    storage.latest_snapshot().is_frozen(&GasMeter::infinite(), a).await.unwrap()
}

async fn audit_rows(storage: &Storage) -> u64 {
    storage.latest_snapshot().audit_sequence(&GasMeter::infinite()).await.unwrap()
}

fn has(events: &[Event], suffix: &str) -> bool {
    events.iter().any(|e| e.kind.ends_with(suffix))
}

fn code(r: Result<Vec<Event>, TxError>) -> (&'static str, u32) {
    let e = r.unwrap_err();
    (e.codespace, e.code)
}

// === MsgCreateDenom ===

#[tokio::test]
async fn governance_creates_a_denom_whose_issuer_becomes_a_licensed_issuer_with_a_token_pair() {
    let (_d, s) = empty().await;
    let events = run(&s, create(GOVERNANCE, ISSUER, DENOM)).await.unwrap();
    let snap = s.latest_snapshot();
    let g = GasMeter::infinite();
    let rec = snap.denom_record(&g, DENOM).await.unwrap().unwrap();
    assert_eq!((rec.issuer.as_str(), rec.display.as_str(), rec.decimals), (ISSUER.to_bech32().as_str(), "HKD Demo", lantau_stablecoin::DECIMALS));
    assert_eq!(snap.issuer_denom(&g, &ISSUER).await.unwrap().as_deref(), Some(DENOM));
    assert_eq!(snap.identity(&g, &ISSUER).await.unwrap().unwrap().level, Level::LicensedIssuer as i32);
    assert_eq!(snap.token_pair(&g, DENOM).await.unwrap().unwrap().erc20_address, lantau_erc20::token_address(DENOM).to_hex());
    assert!(has(&events, "EventDenomCreated"), "{events:?}");
}

#[tokio::test]
async fn a_denom_created_by_someone_not_governance_is_refused_with_code_8() {
    let (_d, s) = empty().await;
    assert_eq!(code(run(&s, create(COMPLIANCE, ISSUER, DENOM)).await), ("stablecoin", 8));
    assert!(s.latest_snapshot().denom_record(&GasMeter::infinite(), DENOM).await.unwrap().is_none());
}

#[tokio::test]
async fn creating_a_denom_that_exists_is_refused_with_code_4() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, create(GOVERNANCE, OTHER_ISSUER, DENOM)).await), ("stablecoin", 4));
}

#[tokio::test]
async fn an_issuer_that_has_a_denom_cannot_get_a_second_code_5() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, create(GOVERNANCE, ISSUER, "hkd.second")).await), ("stablecoin", 5));
}

#[tokio::test]
async fn a_blacklisted_address_cannot_become_an_issuer_code_16() {
    let (_d, s) = empty().await;
    blacklist(&s, &ISSUER).await;
    assert_eq!(code(run(&s, create(GOVERNANCE, ISSUER, DENOM)).await), ("stablecoin", 16));
}

// === MsgMint ===

#[tokio::test]
async fn the_issuer_mints_to_a_recipient_raising_its_balance_and_the_supply_with_an_audit_row() {
    let (_d, s) = setup().await;
    let rows = audit_rows(&s).await;
    let events = run(&s, mint(ISSUER, ALICE, 1_000)).await.unwrap();
    assert_eq!(balance(&s, &ALICE).await, 1_000);
    assert_eq!(supply(&s).await, Amount(1_000));
    assert_eq!(audit_rows(&s).await, rows + 1);
    assert!(has(&events, "coinbase") && has(&events, "EventMinted"), "{events:?}");
}

#[tokio::test]
async fn a_mint_by_someone_not_the_issuer_is_refused_with_code_7() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, mint(MALLORY, MALLORY, 1)).await), ("stablecoin", 7));
    assert_eq!(supply(&s).await, Amount(0));
}

#[tokio::test]
async fn a_mint_of_an_unknown_denom_is_refused_with_code_6() {
    let (_d, s) = setup().await;
    let m = StablecoinMsg::Mint(Mint { issuer: ISSUER, recipient: ALICE, amount: Coin::new("hkd.nope", 1u128) });
    assert_eq!(code(run(&s, m).await), ("stablecoin", 6));
}

#[tokio::test]
async fn a_mint_while_the_denom_is_paused_is_refused_with_code_17() {
    let (_d, s) = setup().await;
    run(&s, StablecoinMsg::Pause(all(ISSUER))).await.unwrap();
    assert_eq!(code(run(&s, mint(ISSUER, ALICE, 1)).await), ("stablecoin", 17));
}

#[tokio::test]
async fn a_mint_to_a_blacklisted_recipient_is_refused_with_code_15() {
    let (_d, s) = setup().await;
    blacklist(&s, &ALICE).await;
    assert_eq!(code(run(&s, mint(ISSUER, ALICE, 1)).await), ("stablecoin", 15));
    assert_eq!(balance(&s, &ALICE).await, 0);
}

#[tokio::test]
async fn a_mint_to_a_frozen_recipient_is_refused_by_the_bank_with_code_10() {
    let (_d, s) = setup().await;
    run(&s, StablecoinMsg::Freeze(COMPLIANCE, ALICE)).await.unwrap();
    assert_eq!(code(run(&s, mint(ISSUER, ALICE, 1)).await), ("bank", 10));
    assert_eq!(balance(&s, &ALICE).await, 0);
}

// === MsgBurn ===

#[tokio::test]
async fn the_issuer_burns_its_own_coins_lowering_its_balance_and_the_supply() {
    let (_d, s) = setup().await;
    run(&s, mint(ISSUER, ISSUER, 1_000)).await.unwrap();
    let events = run(&s, burn(ISSUER, 400)).await.unwrap();
    assert_eq!(balance(&s, &ISSUER).await, 600);
    assert_eq!(supply(&s).await, Amount(600));
    assert!(has(&events, "EventBurned"), "{events:?}");
}

#[tokio::test]
async fn a_burn_beyond_the_issuers_balance_is_refused_with_sdk_code_5() {
    let (_d, s) = setup().await;
    run(&s, mint(ISSUER, ISSUER, 10)).await.unwrap();
    assert_eq!(code(run(&s, burn(ISSUER, 11)).await), ("sdk", 5));
    assert_eq!(supply(&s).await, Amount(10));
}

#[tokio::test]
async fn a_burn_by_someone_not_the_issuer_is_refused_with_code_7() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, burn(MALLORY, 1)).await), ("stablecoin", 7));
}

#[tokio::test]
async fn a_burn_while_the_denom_is_paused_is_refused_with_code_17() {
    let (_d, s) = setup().await;
    run(&s, mint(ISSUER, ISSUER, 10)).await.unwrap();
    run(&s, StablecoinMsg::Pause(all(ISSUER))).await.unwrap();
    assert_eq!(code(run(&s, burn(ISSUER, 1)).await), ("stablecoin", 17));
}

// === MsgPause, MsgUnpause ===

/// A pause (or unpause) of every feature of the signer's own denom.
fn all(a: Address) -> lantau_stablecoin::msg::Pause {
    lantau_stablecoin::msg::Pause { authority: a, denom: None, features: lantau_bank::Features::ALL }
}

#[tokio::test]
async fn the_issuer_pauses_and_unpauses_its_denom() {
    let (_d, s) = setup().await;
    let events = run(&s, StablecoinMsg::Pause(all(ISSUER))).await.unwrap();
    assert!(paused(&s).await);
    assert!(has(&events, "EventPaused"));
    let events = run(&s, StablecoinMsg::Unpause(all(ISSUER))).await.unwrap();
    assert!(!paused(&s).await);
    assert!(has(&events, "EventUnpaused"));
}

#[tokio::test]
async fn pausing_a_paused_denom_is_refused_with_code_11() {
    let (_d, s) = setup().await;
    run(&s, StablecoinMsg::Pause(all(ISSUER))).await.unwrap();
    assert_eq!(code(run(&s, StablecoinMsg::Pause(all(ISSUER))).await), ("stablecoin", 11));
}

#[tokio::test]
async fn unpausing_a_denom_that_is_not_paused_is_refused_with_code_12() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, StablecoinMsg::Unpause(all(ISSUER))).await), ("stablecoin", 12));
}

#[tokio::test]
async fn a_pause_or_unpause_by_someone_who_issues_nothing_is_refused_with_code_19() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, StablecoinMsg::Pause(all(MALLORY))).await), ("stablecoin", 19));
    assert_eq!(code(run(&s, StablecoinMsg::Unpause(all(MALLORY))).await), ("stablecoin", 19));
    assert!(!paused(&s).await);
}

// === MsgFreeze, MsgUnfreeze ===

#[tokio::test]
async fn the_compliance_authority_freezes_and_unfreezes_an_address_with_audit_rows() {
    let (_d, s) = setup().await;
    let rows = audit_rows(&s).await;
    let events = run(&s, StablecoinMsg::Freeze(COMPLIANCE, ALICE)).await.unwrap();
    assert!(frozen(&s, &ALICE).await);
    assert!(has(&events, "EventFrozen"));
    let events = run(&s, StablecoinMsg::Unfreeze(COMPLIANCE, ALICE)).await.unwrap();
    assert!(!frozen(&s, &ALICE).await);
    assert!(has(&events, "EventUnfrozen"));
    assert_eq!(audit_rows(&s).await, rows + 2);
}

#[tokio::test]
async fn freezing_a_frozen_address_is_refused_with_code_13() {
    let (_d, s) = setup().await;
    run(&s, StablecoinMsg::Freeze(COMPLIANCE, ALICE)).await.unwrap();
    assert_eq!(code(run(&s, StablecoinMsg::Freeze(COMPLIANCE, ALICE)).await), ("stablecoin", 13));
}

#[tokio::test]
async fn unfreezing_an_address_that_is_not_frozen_is_refused_with_code_14() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, StablecoinMsg::Unfreeze(COMPLIANCE, ALICE)).await), ("stablecoin", 14));
}

#[tokio::test]
async fn a_freeze_or_unfreeze_by_someone_not_the_compliance_authority_is_refused_with_code_9() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, StablecoinMsg::Freeze(GOVERNANCE, ALICE)).await), ("stablecoin", 9));
    run(&s, StablecoinMsg::Freeze(COMPLIANCE, ALICE)).await.unwrap();
    assert_eq!(code(run(&s, StablecoinMsg::Unfreeze(ISSUER, ALICE)).await), ("stablecoin", 9));
    assert!(frozen(&s, &ALICE).await);
}

// === refused before any handler runs (decoding) ===

fn decode<M: prost::Name>(type_url: &str, m: &M) -> (&'static str, u32) {
    let e = StablecoinMsg::from_any(&cosmos_sdk_proto::Any { type_url: type_url.into(), value: m.encode_to_vec() }).unwrap().unwrap_err();
    (e.codespace, e.code)
}

#[test]
fn a_denom_outside_hkd_or_with_other_decimals_or_a_bad_display_is_refused_with_codes_2_3_18() {
    use lantau_proto::chain::stablecoin::v1 as pb;
    use lantau_stablecoin::msg::MSG_CREATE_DENOM;
    let ok = pb::MsgCreateDenom {
        authority: GOVERNANCE.to_bech32(),
        issuer: ISSUER.to_bech32(),
        denom: DENOM.into(),
        display: "HKD Demo".into(),
        decimals: lantau_stablecoin::DECIMALS,
    };
    assert!(StablecoinMsg::from_any(&cosmos_sdk_proto::Any { type_url: MSG_CREATE_DENOM.into(), value: ok.encode_to_vec() }).unwrap().is_ok());
    assert_eq!(decode(MSG_CREATE_DENOM, &pb::MsgCreateDenom { denom: "usd.demo".into(), ..ok.clone() }), ("stablecoin", 2));
    assert_eq!(decode(MSG_CREATE_DENOM, &pb::MsgCreateDenom { decimals: 6, ..ok.clone() }), ("stablecoin", 3));
    assert_eq!(decode(MSG_CREATE_DENOM, &pb::MsgCreateDenom { display: String::new(), ..ok.clone() }), ("stablecoin", 18));
}

#[test]
fn a_mint_of_zero_is_refused_with_code_10() {
    use lantau_proto::chain::stablecoin::v1 as pb;
    let m = pb::MsgMint {
        issuer: ISSUER.to_bech32(),
        recipient: ALICE.to_bech32(),
        amount: Some(cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: DENOM.into(), amount: "0".into() }),
    };
    assert_eq!(decode(lantau_stablecoin::msg::MSG_MINT, &m), ("stablecoin", 10));
}

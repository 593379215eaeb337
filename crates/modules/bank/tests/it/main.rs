//! Unit tests of the bank message handlers on a temporary store: `MsgSend` and `MsgMultiSend`,
//! their success paths and the errors they return (codespace `bank` and `sdk`,
//! docs/modules/bank.md). A stablecoin leg needs the gate chain's proof of screening, which
//! needs identities (the KYC module, above the bank, not a dependency of this crate), so here
//! a stablecoin leg is exercised only in its refusal without a proof.

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Duration;

use cnidarium::{StateDelta, Storage};
use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
use lantau_auth::AuthRead;
use lantau_bank::genesis::{Balance, GenesisState};
use lantau_bank::{BankMsg, BankRead, MultiSendMsg, SendMsg};
use lantau_module_api::{BlockCtx, Event, ExecCtx, GasMeter, ModuleMsg, MsgHandler, TxError};
use lantau_primitives::{Address, Amount, Coin};

// === fixtures ===

const ALICE: Address = Address([1; 20]);
const BOB: Address = Address([2; 20]);
const CAROL: Address = Address([3; 20]);
const STABLE: &str = "hkd.demo";

fn block(height: u64) -> BlockCtx {
    BlockCtx { height, time: (std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000)).into(), chain_id: "lantau-test-1".into() }
}

fn coin(denom: &str, amount: u128) -> Coin {
    Coin::new(denom, amount)
}

/// A store after the bank's genesis: alice holds 1000 alantau and 500 hkd.demo, bob 10 alantau.
async fn setup() -> (tempfile::TempDir, Storage) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
    let mut d = StateDelta::new(storage.latest_snapshot());
    let genesis = GenesisState {
        balances: vec![
            Balance { address: ALICE, coins: vec![coin("alantau", 1000), coin(STABLE, 500)] },
            Balance { address: BOB, coins: vec![coin("alantau", 10)] },
        ],
    };
    lantau_bank::genesis::init_genesis(&mut d, &genesis, &block(0)).await.unwrap();
    storage.commit(d).await.unwrap();
    (dir, storage)
}

/// Runs `msg` signed by its signer in a transaction of its own; commits only on success.
async fn run(storage: &Storage, msg: BankMsg) -> Result<Vec<Event>, TxError> {
    let mut d = StateDelta::new(storage.latest_snapshot());
    let gas = GasMeter::infinite();
    let block = block(5);
    let mut ctx = ExecCtx::new(&block, &gas, "ABCDEF0123", msg.signer());
    msg.check_stateless()?;
    msg.check_and_execute(&mut d, &mut ctx).await?;
    let events = ctx.events;
    storage.commit(d).await.unwrap();
    Ok(events)
}

fn send(from: Address, to: Address, amount: Vec<Coin>) -> BankMsg {
    BankMsg::Send(SendMsg { from, to, amount })
}

fn multi_send(from: Address, outputs: Vec<(Address, Vec<Coin>)>) -> BankMsg {
    let mut input: Vec<Coin> = Vec::new();
    for (_, coins) in &outputs {
        for c in coins {
            match input.iter_mut().find(|i| i.denom == c.denom) {
                Some(i) => i.amount = i.amount.checked_add(c.amount).unwrap(),
                None => input.push(c.clone()),
            }
        }
    }
    BankMsg::MultiSend(MultiSendMsg { from, input, outputs })
}

async fn balance(storage: &Storage, a: &Address, denom: &str) -> u128 {
    storage.latest_snapshot().balance(&GasMeter::infinite(), a, denom).await.unwrap().0
}

async fn supply(storage: &Storage, denom: &str) -> Amount {
    storage.latest_snapshot().supply(&GasMeter::infinite(), denom).await.unwrap()
}

fn code(r: Result<Vec<Event>, TxError>) -> (&'static str, u32) {
    let e = r.unwrap_err();
    (e.codespace, e.code)
}

fn kinds(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

fn pb_coin(denom: &str, amount: &str) -> PbCoin {
    PbCoin { denom: denom.into(), amount: amount.into() }
}

// === MsgSend ===

#[tokio::test]
async fn a_native_send_moves_the_coins_and_emits_the_sdk_events() {
    let (_d, s) = setup().await;
    let events = run(&s, send(ALICE, BOB, vec![coin("alantau", 300)])).await.unwrap();
    assert_eq!(balance(&s, &ALICE, "alantau").await, 700);
    assert_eq!(balance(&s, &BOB, "alantau").await, 310);
    assert_eq!(supply(&s, "alantau").await, Amount(1010), "a send conserves supply");
    assert_eq!(kinds(&events), ["coin_spent", "coin_received", "transfer"]);
}

#[tokio::test]
async fn a_send_to_a_new_address_creates_its_account() {
    let (_d, s) = setup().await;
    assert!(s.latest_snapshot().account(&GasMeter::infinite(), &CAROL).await.unwrap().is_none());
    run(&s, send(ALICE, CAROL, vec![coin("alantau", 1)])).await.unwrap();
    assert!(s.latest_snapshot().account(&GasMeter::infinite(), &CAROL).await.unwrap().is_some());
    assert_eq!(balance(&s, &CAROL, "alantau").await, 1);
}

#[tokio::test]
async fn sending_the_whole_balance_leaves_zero() {
    let (_d, s) = setup().await;
    run(&s, send(BOB, ALICE, vec![coin("alantau", 10)])).await.unwrap();
    assert_eq!(balance(&s, &BOB, "alantau").await, 0);
    assert_eq!(balance(&s, &ALICE, "alantau").await, 1010);
}

#[tokio::test]
async fn a_send_beyond_the_balance_is_refused_with_sdk_code_5_and_moves_nothing() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, send(BOB, ALICE, vec![coin("alantau", 11)])).await), ("sdk", 5));
    assert_eq!(balance(&s, &BOB, "alantau").await, 10);
    assert_eq!(balance(&s, &ALICE, "alantau").await, 1000);
}

#[tokio::test]
async fn a_stablecoin_send_the_gates_did_not_screen_is_refused_with_compliance_code_27() {
    let (_d, s) = setup().await;
    let r = run(&s, send(ALICE, BOB, vec![coin("alantau", 1), coin(STABLE, 5)])).await;
    assert_eq!(code(r), ("compliance", 27));
    assert_eq!(balance(&s, &ALICE, STABLE).await, 500);
    assert_eq!(balance(&s, &ALICE, "alantau").await, 1000, "nothing of the message moved");
}

#[test]
fn a_send_declares_one_compliance_fact_per_stablecoin_coin() {
    let m = send(ALICE, BOB, vec![coin("alantau", 1), coin(STABLE, 5)]);
    let facts = m.facts(3);
    assert_eq!(facts.len(), 1);
    assert_eq!((facts[0].from, facts[0].to, facts[0].amount.clone(), facts[0].msg_index), (ALICE, BOB, coin(STABLE, 5), 3));
}

// === MsgMultiSend ===

#[tokio::test]
async fn a_multi_send_pays_every_output_from_the_one_input() {
    let (_d, s) = setup().await;
    run(&s, multi_send(ALICE, vec![(BOB, vec![coin("alantau", 100)]), (CAROL, vec![coin("alantau", 200)])])).await.unwrap();
    assert_eq!(balance(&s, &ALICE, "alantau").await, 700);
    assert_eq!(balance(&s, &BOB, "alantau").await, 110);
    assert_eq!(balance(&s, &CAROL, "alantau").await, 200);
    assert_eq!(supply(&s, "alantau").await, Amount(1010));
}

#[tokio::test]
async fn a_multi_send_whose_outputs_exceed_the_balance_is_refused_with_sdk_code_5_and_pays_no_output() {
    let (_d, s) = setup().await;
    let r = run(&s, multi_send(BOB, vec![(ALICE, vec![coin("alantau", 6)]), (CAROL, vec![coin("alantau", 6)])])).await;
    assert_eq!(code(r), ("sdk", 5));
    assert_eq!(balance(&s, &BOB, "alantau").await, 10);
    assert_eq!(balance(&s, &CAROL, "alantau").await, 0);
}

#[tokio::test]
async fn a_multi_send_of_an_unscreened_stablecoin_is_refused_with_compliance_code_27() {
    let (_d, s) = setup().await;
    let r = run(&s, multi_send(ALICE, vec![(BOB, vec![coin("alantau", 1)]), (CAROL, vec![coin(STABLE, 1)])])).await;
    assert_eq!(code(r), ("compliance", 27));
    assert_eq!(balance(&s, &BOB, "alantau").await, 10);
}

// === refused before any handler runs (decoding) ===

fn multi(inputs: Vec<(Address, Vec<PbCoin>)>, outputs: Vec<(Address, Vec<PbCoin>)>) -> pb::MsgMultiSend {
    pb::MsgMultiSend {
        inputs: inputs.into_iter().map(|(a, coins)| pb::Input { address: a.to_bech32(), coins }).collect(),
        outputs: outputs.into_iter().map(|(a, coins)| pb::Output { address: a.to_bech32(), coins }).collect(),
    }
}

fn decode_code(r: Result<MultiSendMsg, TxError>) -> (&'static str, u32) {
    let e = r.unwrap_err();
    (e.codespace, e.code)
}

#[test]
fn a_multi_send_without_inputs_is_refused_with_code_2() {
    let m = multi(vec![], vec![(BOB, vec![pb_coin("alantau", "1")])]);
    assert_eq!(decode_code(MultiSendMsg::from_proto(&m)), ("bank", 2));
}

#[test]
fn a_multi_send_without_outputs_is_refused_with_code_3() {
    let m = multi(vec![(ALICE, vec![pb_coin("alantau", "1")])], vec![]);
    assert_eq!(decode_code(MultiSendMsg::from_proto(&m)), ("bank", 3));
}

#[test]
fn a_multi_send_whose_outputs_do_not_sum_to_the_input_is_refused_with_code_4() {
    let m = multi(vec![(ALICE, vec![pb_coin("alantau", "5")])], vec![(BOB, vec![pb_coin("alantau", "4")])]);
    assert_eq!(decode_code(MultiSendMsg::from_proto(&m)), ("bank", 4));
}

#[test]
fn a_multi_send_with_two_inputs_is_refused_with_code_9() {
    let m = multi(vec![(ALICE, vec![pb_coin("alantau", "1")]), (BOB, vec![pb_coin("alantau", "1")])], vec![(CAROL, vec![pb_coin("alantau", "2")])]);
    assert_eq!(decode_code(MultiSendMsg::from_proto(&m)), ("bank", 9));
}

#[test]
fn a_send_with_a_bad_address_or_bad_coins_is_refused_with_sdk_codes_7_and_10() {
    let ok = pb::MsgSend { from_address: ALICE.to_bech32(), to_address: BOB.to_bech32(), amount: vec![pb_coin("alantau", "1")] };
    assert!(SendMsg::from_proto(&ok).is_ok());
    let bad_addr = pb::MsgSend { to_address: "lantau1nope".into(), ..ok.clone() };
    let e = SendMsg::from_proto(&bad_addr).unwrap_err();
    assert_eq!((e.codespace, e.code), ("sdk", 7));
    for coins in [vec![], vec![pb_coin("alantau", "0")], vec![pb_coin("hkd.demo", "1"), pb_coin("alantau", "1")]] {
        let e = SendMsg::from_proto(&pb::MsgSend { amount: coins.clone(), ..ok.clone() }).unwrap_err();
        assert_eq!((e.codespace, e.code), ("sdk", 10), "{coins:?}");
    }
}

#[test]
fn a_stablecoin_cannot_be_a_plain_leg_code_11() {
    let e = lantau_bank::PlainLeg::new(&ALICE, &BOB, &coin(STABLE, 1)).unwrap_err();
    assert_eq!((e.codespace, e.code), ("bank", 11));
}

// === denoms and issuance ===

#[tokio::test]
async fn only_the_issuer_the_denom_record_names_gets_the_proof_that_mints_and_burns() {
    use lantau_bank::{BankWrite, DenomClash, IssuerOf};
    let (_dir, storage) = setup().await;
    let g = GasMeter::infinite();
    let mut d = StateDelta::new(storage.latest_snapshot());
    let new = d.new_denom(&g, "hkd.new", &BOB).await.unwrap().unwrap();
    let rec = d.create_denom(&g, new, "HKD New", 2).unwrap();
    assert_eq!((rec.denom.as_str(), rec.issuer.clone()), ("hkd.new", BOB.to_bech32()));
    // The record is written once: neither the denom nor its issuer can be taken again.
    assert_eq!(d.new_denom(&g, "hkd.new", &CAROL).await.unwrap().unwrap_err(), DenomClash::DenomExists);
    assert_eq!(d.new_denom(&g, "hkd.other", &BOB).await.unwrap().unwrap_err(), DenomClash::IssuerHasDenom("hkd.new".into()));
    assert_eq!(d.issuer_of(&g, "hkd.new", &CAROL).await.unwrap(), IssuerOf::Other(BOB.to_bech32()));
    assert_eq!(d.issuer_of(&g, "hkd.none", &BOB).await.unwrap(), IssuerOf::UnknownDenom);
    let IssuerOf::Issuer(issuer) = d.issuer_of(&g, "hkd.new", &BOB).await.unwrap() else { panic!("bob issues hkd.new") };
    let mut events = Vec::new();
    d.mint(&g, &block(5), "AA", &issuer, &CAROL, Amount(70), &mut events).await.unwrap();
    d.mint(&g, &block(5), "BB", &issuer, &BOB, Amount(30), &mut events).await.unwrap();
    d.burn(&g, &block(5), "CC", &issuer, Amount(10), &mut events).await.unwrap();
    assert_eq!(d.balance(&g, &CAROL, "hkd.new").await.unwrap(), Amount(70));
    assert_eq!(d.balance(&g, &BOB, "hkd.new").await.unwrap(), Amount(20));
    assert_eq!(d.supply(&g, "hkd.new").await.unwrap(), Amount(90));
    // A burn beyond the issuer's own balance moves nothing.
    assert!(d.burn(&g, &block(5), "DD", &issuer, Amount(21), &mut events).await.is_err());
    // Each issuance left its audit row, subject the issuer.
    let rows = lantau_compliance::audit::scan(&d, &Default::default()).await.unwrap();
    let rows: Vec<_> = rows.iter().map(|r| (r.tx_type.as_str(), r.subject.clone(), r.counterparty.clone(), r.tx_hash.as_str())).collect();
    assert_eq!(
        rows,
        vec![
            ("mint", BOB.to_bech32(), CAROL.to_bech32(), "AA"),
            ("mint", BOB.to_bech32(), BOB.to_bech32(), "BB"),
            ("burn", BOB.to_bech32(), BOB.to_bech32(), "CC"),
        ]
    );
}

#[tokio::test]
async fn the_migration_to_version_2_makes_one_record_per_address_and_version_1_reads_as_before() {
    use cnidarium::{StateRead, StateWrite};
    use futures::StreamExt;
    use lantau_module_api::Module;
    use lantau_upgrade::UpgradeWrite;
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
    // A store of state version 1: a key per address and denom.
    let v1 = |a: &Address, d: &str| format!("bank/bal/{}/{d}", a.to_key_hex());
    let mut d = StateDelta::new(storage.latest_snapshot());
    d.put_raw(v1(&ALICE, "alantau"), 1000u128.to_be_bytes().to_vec());
    d.put_raw(v1(&ALICE, STABLE), 500u128.to_be_bytes().to_vec());
    d.put_raw(v1(&BOB, "alantau"), 10u128.to_be_bytes().to_vec());
    storage.commit(d).await.unwrap();
    let before = storage.latest_snapshot();
    let gas = GasMeter::infinite();
    let alice = vec![coin("alantau", 1000), coin(STABLE, 500)];
    assert_eq!(before.all_balances(&ALICE).await.unwrap(), alice, "version 1 reads its own layout");
    assert_eq!(before.balance(&gas, &BOB, "alantau").await.unwrap(), Amount(10));
    assert_eq!(before.balance(&gas, &CAROL, "alantau").await.unwrap(), Amount::ZERO);

    let mut d = StateDelta::new(before.clone());
    lantau_bank::Bank::migrate(&mut d, 1, &gas, &block(7)).await.unwrap();
    d.set_module_version(&gas, "bank", 2).unwrap();
    storage.commit(d).await.unwrap();
    let after = storage.latest_snapshot();
    assert_eq!(after.prefix_raw("bank/bal/").count().await, 0, "no key of version 1 is left");
    let records: Vec<String> = after.prefix_raw("bank/balances/").map(|r| r.unwrap().0).collect().await;
    assert_eq!(records, vec![format!("bank/balances/{}", ALICE.to_key_hex()), format!("bank/balances/{}", BOB.to_key_hex())]);
    assert_eq!(after.all_balances(&ALICE).await.unwrap(), alice);
    assert_eq!(after.balance(&gas, &BOB, "alantau").await.unwrap(), Amount(10));
    assert_eq!(after.balance(&gas, &CAROL, "alantau").await.unwrap(), Amount::ZERO);
    // The balances move as before on the new layout.
    run(&storage, BankMsg::Send(SendMsg { from: BOB, to: CAROL, amount: vec![coin("alantau", 10)] })).await.unwrap();
    let now = storage.latest_snapshot();
    assert_eq!(now.all_balances(&BOB).await.unwrap(), vec![]);
    assert!(now.get_raw(&format!("bank/balances/{}", BOB.to_key_hex())).await.unwrap().is_none(), "an empty record is deleted");
    assert_eq!(now.all_balances(&CAROL).await.unwrap(), vec![coin("alantau", 10)]);
    // The snapshot before the upgrade still reads as version 1 did.
    assert_eq!(before.all_balances(&ALICE).await.unwrap(), alice);
}

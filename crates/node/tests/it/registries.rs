//! The registries (kyc, stablecoin, erc20 token pairs, reserve, authorities) through signed
//! transactions end to end: broadcast, block, query.

use std::time::Duration;

use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
use cosmos_sdk_proto::Any;
use lantau_client::{msg_send, to_any, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::{Address, Coin};
use lantau_proto::chain::{compliance::v1 as cpb, kyc::v1 as kpb, reserve::v1 as rpb, stablecoin::v1 as spb};
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::Value;

/// The verdict of a transaction: the admission rejection, or the execution result once it is
/// included.
#[derive(Debug)]
struct Outcome {
    admitted: bool,
    code: u32,
    codespace: String,
    log: String,
    events: Vec<Value>,
    hash: String,
}

impl Outcome {
    fn txhash(&self) -> &str {
        &self.hash
    }
    fn ok(&self) -> &Self {
        assert!(self.admitted && self.code == 0, "expected success, got {self:?}");
        self
    }
    fn fails(&self, codespace: &str, code: u32) -> &Self {
        assert_eq!((self.codespace.as_str(), self.code), (codespace, code), "{self:?}");
        self
    }
    fn log_has(&self, s: &str) -> &Self {
        assert!(self.log.contains(s), "{s:?} not in {:?}", self.log);
        self
    }
    fn event(&self, kind: &str) -> Option<&Value> {
        self.events.iter().find(|e| e["type"] == kind)
    }
    fn attr(&self, kind: &str, key: &str) -> Option<String> {
        let e = self.event(kind)?;
        e["attributes"].as_array()?.iter().find(|a| a["key"] == key).and_then(|a| a["value"].as_str().map(str::to_string))
    }
}

async fn exec(n: &TestNode, key: &SecretKey, msg: Any) -> Outcome {
    exec_b(n, key, TxBuilder::new(vec![msg]).gas(400_000)).await
}

/// A stablecoin send between dev accounts, carrying the payload filled from the registry.
async fn hkd(n: &TestNode, from: &str, to: &str, amount: u128) -> Outcome {
    let p = n.client.travel_rule_payload(&dev_addr(from), &dev_addr(to)).await.unwrap();
    exec_b(n, &dev_key(from), TxBuilder::new(vec![hkd_send(from, to, amount)]).gas(400_000).travel_rule(&p)).await
}

async fn exec_b(n: &TestNode, key: &SecretKey, b: TxBuilder) -> Outcome {
    let tx = n.sign(key, &b).await.unwrap();
    let b = n.client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap();
    if b.code != 0 {
        return Outcome { admitted: false, code: b.code, codespace: b.codespace, log: b.raw_log, events: vec![], hash: b.txhash };
    }
    let r = n.client.wait_for_tx(&b.txhash, Duration::from_secs(30), Duration::from_millis(20)).await.unwrap();
    Outcome { admitted: true, code: r.code, codespace: r.codespace, log: r.raw_log, events: r.events, hash: b.txhash }
}

fn b32(name: &str) -> String {
    dev_addr(name).to_bech32()
}

fn coin(amount: &str, denom: &str) -> Option<PbCoin> {
    Some(PbCoin { denom: denom.into(), amount: amount.into() })
}

fn enroll(registrar: &str, addr: &Address, level: kpb::Level, vasp: &str, reference: &str) -> Any {
    to_any(&kpb::MsgEnrollIdentity {
        registrar: b32(registrar),
        address: addr.to_bech32(),
        level: level as i32,
        vasp_identifier: vasp.into(),
        ivms101_off_chain_ref: reference.into(),
        expires_at: None,
    })
}

fn update(registrar: &str, addr: &Address, level: i32, vasp: &str, reference: &str) -> Any {
    to_any(&kpb::MsgUpdateIdentity {
        registrar: b32(registrar),
        address: addr.to_bech32(),
        level,
        vasp_identifier: vasp.into(),
        ivms101_off_chain_ref: reference.into(),
        expires_at: None,
    })
}

async fn identity(n: &TestNode, addr: &Address) -> Option<kpb::Identity> {
    n.client.identity(addr).await.unwrap()
}

fn fresh() -> Address {
    SecretKey::random().address()
}

// === kyc ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrars_enrol_and_update_identities_and_no_one_else_can() {
    let n = TestNode::start().await.unwrap();
    let reg = dev_key("registrar");
    let carol = dev_addr("carol");

    exec(&n, &reg, enroll("registrar", &carol, kpb::Level::RetailBasic, "", "ivms101:carol")).await.ok();
    let id = identity(&n, &carol).await.unwrap();
    assert_eq!((id.level, id.ivms101_off_chain_ref.as_str()), (kpb::Level::RetailBasic as i32, "ivms101:carol"));
    assert!(id.enrolled_at.is_some() && id.enrolled_at == id.last_level_change);

    // Enrolling twice, or by a non-registrar, fails in the handler and writes nothing.
    exec(&n, &reg, enroll("registrar", &carol, kpb::Level::RetailPlus, "", "x")).await.fails("kyc", 3);
    let stranger = fresh();
    exec(&n, &dev_key("alice"), enroll("alice", &stranger, kpb::Level::RetailBasic, "", "x")).await.fails("kyc", 5).log_has("not a registrar");
    assert!(identity(&n, &stranger).await.is_none());

    // Update: the level change is stamped and announced.
    let o = exec(&n, &reg, update("registrar", &carol, kpb::Level::RetailPlus as i32, "VASP-X", "ivms101:carol")).await;
    o.ok();
    assert_eq!(o.attr("chain.kyc.v1.EventLevelChanged", "level").as_deref(), Some("\"LEVEL_RETAIL_PLUS\""));
    let id2 = identity(&n, &carol).await.unwrap();
    assert_eq!((id2.level, id2.vasp_identifier.as_str()), (kpb::Level::RetailPlus as i32, "VASP-X"));
    assert_eq!(id2.enrolled_at, id.enrolled_at);
    exec(&n, &reg, update("registrar", &stranger, 1, "", "")).await.fails("kyc", 4);
    exec(&n, &dev_key("bob"), update("bob", &carol, 1, "", "")).await.fails("kyc", 5);

    // Bad input is refused at admission with the module's code.
    for (level, why) in [(0, "cannot be assigned"), (99, "unknown level"), (6, "cannot assign LEVEL_BLACKLISTED")] {
        exec(&n, &reg, update("registrar", &carol, level, "", "")).await.fails("kyc", 2).log_has(why);
    }
    exec(&n, &reg, update("registrar", &carol, 1, &"v".repeat(200), "")).await.fails("kyc", 10);
    let bad_addr = to_any(&kpb::MsgEnrollIdentity { registrar: b32("registrar"), address: "lantau1nope".into(), level: 1, ..Default::default() });
    exec(&n, &reg, bad_addr).await.fails("sdk", 7);
    assert_eq!(identity(&n, &carol).await.unwrap(), id2);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compliance_authority_blacklists_one_address_keeping_its_vasp_and_reference() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_addr("alice");
    let before = identity(&n, &alice).await.unwrap();
    let bl = |signer: &str, addr: &Address| {
        to_any(&kpb::MsgBlacklistAddress {
            authority: b32(signer),
            address: addr.to_bech32(),
            reason: "court order".into(),
            evidence_ref: "doc://hk/2026/17".into(),
        })
    };
    exec(&n, &dev_key("governance"), bl("governance", &alice)).await.fails("kyc", 6).log_has("compliance authority");

    let o = exec(&n, &dev_key("compliance_authority"), bl("compliance_authority", &alice)).await;
    o.ok();
    assert_eq!(o.attr("chain.kyc.v1.EventLevelChanged", "reason").as_deref(), Some("\"court order\""));
    assert_eq!(o.attr("chain.kyc.v1.EventLevelChanged", "evidence_ref").as_deref(), Some("\"doc://hk/2026/17\""));
    assert_eq!(o.attr("chain.kyc.v1.EventLevelChanged", "previous_level").as_deref(), Some("\"LEVEL_RETAIL_PLUS\""));
    let after = identity(&n, &alice).await.unwrap();
    assert_eq!(after.level, kpb::Level::Blacklisted as i32);
    assert_eq!((after.vasp_identifier, after.ivms101_off_chain_ref), (before.vasp_identifier, before.ivms101_off_chain_ref));

    // Idempotent: again succeeds, changes nothing, announces nothing.
    let again = exec(&n, &dev_key("compliance_authority"), bl("compliance_authority", &alice)).await;
    again.ok();
    assert!(again.event("chain.kyc.v1.EventLevelChanged").is_none());

    // A registrar cannot lift it.
    exec(&n, &dev_key("registrar"), update("registrar", &alice, 1, "", "")).await.fails("kyc", 8);

    // An address without a record gets a blacklisted one.
    let stranger = fresh();
    exec(&n, &dev_key("compliance_authority"), bl("compliance_authority", &stranger)).await.ok();
    let id = identity(&n, &stranger).await.unwrap();
    assert_eq!(id.level, kpb::Level::Blacklisted as i32);
    assert!(id.vasp_identifier.is_empty() && id.ivms101_off_chain_ref.is_empty());
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_queries_answer_the_spec_shapes() {
    let n = TestNode::start().await.unwrap();
    let http = reqwest::Client::new();
    let carol = b32("carol");
    let r = http.get(format!("{}/chain/kyc/v1/identity/{carol}", n.rest_url)).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["code"], 5);
    assert_eq!(body["details"], serde_json::json!([]));
    assert!(body["message"].as_str().unwrap().contains(&carol));

    let r = http.get(format!("{}/chain/kyc/v1/identity/not-an-address", n.rest_url)).send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], 3);

    let v: Value = http.get(format!("{}/chain/kyc/v1/identity/{}", n.rest_url, b32("alice"))).send().await.unwrap().json().await.unwrap();
    let id = &v["identity"];
    assert_eq!(id["address"], b32("alice"));
    assert_eq!(id["level"], "LEVEL_RETAIL_PLUS");
    assert_eq!(id["vasp_identifier"], lantau_node::home::DEV_ALICE_VASP);
    assert_eq!(id["enrolled_at"], "2026-01-01T00:00:00Z");
    assert_eq!(id["last_level_change"], "2026-01-01T00:00:00Z");

    let v: Value = http.get(format!("{}/chain/kyc/v1/params", n.rest_url)).send().await.unwrap().json().await.unwrap();
    let defs = v["params"]["level_definitions"].as_array().unwrap();
    assert_eq!(defs[0], serde_json::json!({"level": "LEVEL_RETAIL_BASIC", "travel_rule_tier": "minimal"}));
    assert!(defs[1..].iter().all(|d| d["travel_rule_tier"] == "full"), "{v}");
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_governance_changes_kyc_params() {
    let n = TestNode::start().await.unwrap();
    let mut params = lantau_app::kyc::tier::default_params();
    params.registrars = vec![b32("registrar"), b32("alice")];
    params.level_definitions[0].travel_rule_tier = "none".into();
    let msg = |signer: &str, p: &kpb::Params| to_any(&kpb::MsgUpdateParams { authority: b32(signer), params: Some(p.clone()) });

    exec(&n, &dev_key("registrar"), msg("registrar", &params)).await.fails("kyc", 7).log_has("governance authority");
    exec(&n, &dev_key("compliance_authority"), msg("compliance_authority", &params)).await.fails("kyc", 7);
    let mut bad = params.clone();
    bad.level_definitions[0].travel_rule_tier = "medium".into();
    exec(&n, &dev_key("governance"), msg("governance", &bad)).await.fails("kyc", 9);
    let mut dup = params.clone();
    dup.registrars.push(b32("alice"));
    exec(&n, &dev_key("governance"), msg("governance", &dup)).await.fails("kyc", 9);

    exec(&n, &dev_key("governance"), msg("governance", &params)).await.ok();
    let v = n.client.query("/chain/kyc/v1/params").await.unwrap();
    assert_eq!(v["params"]["level_definitions"][0]["travel_rule_tier"], "none");
    // The new registrar enrols.
    exec(&n, &dev_key("alice"), enroll("alice", &fresh(), kpb::Level::RetailBasic, "", "r")).await.ok();
    n.stop().await;
}

// === stablecoin and token pairs ===

fn create_denom(signer: &str, issuer: &Address, denom: &str, decimals: u32) -> Any {
    to_any(&spb::MsgCreateDenom { authority: b32(signer), issuer: issuer.to_bech32(), denom: denom.into(), display: "ACME HKD".into(), decimals })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governance_whitelists_an_issuer_and_creates_its_denom_and_token_pair() {
    let n = TestNode::start().await.unwrap();
    let gov = dev_key("governance");
    let carol = dev_addr("carol");
    assert!(identity(&n, &carol).await.is_none());

    exec(&n, &dev_key("alice"), create_denom("alice", &carol, "hkd.acme", 2)).await.fails("stablecoin", 8);
    let o = exec(&n, &gov, create_denom("governance", &carol, "hkd.acme", 2)).await;
    o.ok();
    let erc20 = lantau_app::erc20::token_address("hkd.acme").to_hex();
    assert_eq!(o.attr("chain.stablecoin.v1.EventDenomCreated", "erc20_address"), Some(format!("\"{erc20}\"")));

    // The issuer had no identity: it is now a level-5 record with both fields empty.
    let id = identity(&n, &carol).await.unwrap();
    assert_eq!(id.level, kpb::Level::LicensedIssuer as i32);
    assert!(id.vasp_identifier.is_empty() && id.ivms101_off_chain_ref.is_empty());

    let v = n.client.query("/chain/stablecoin/v1/denoms").await.unwrap();
    let denoms = v["denoms"].as_array().unwrap();
    assert_eq!(denoms.len(), 2, "{v}");
    assert_eq!(denoms[0], serde_json::json!({"denom": "hkd.acme", "display": "ACME HKD", "issuer": carol.to_bech32(), "decimals": 2}));
    assert_eq!(denoms[1]["denom"], "hkd.demo");

    let v = n.client.query("/cosmos/evm/erc20/v1/token_pairs").await.unwrap();
    let pairs = v["token_pairs"].as_array().unwrap();
    let acme = pairs.iter().find(|p| p["denom"] == "hkd.acme").unwrap();
    assert_eq!(acme["erc20_address"], erc20);
    assert_eq!(acme["enabled"], true);
    let demo = pairs.iter().find(|p| p["denom"] == "hkd.demo").unwrap();
    assert_eq!(demo["erc20_address"], lantau_app::erc20::token_address("hkd.demo").to_hex());
    let one = n.client.query(&format!("/cosmos/evm/erc20/v1/token_pairs/{erc20}")).await.unwrap();
    assert_eq!(one["token_pair"]["denom"], "hkd.acme");

    // Duplicates and bad input.
    exec(&n, &gov, create_denom("governance", &fresh(), "hkd.acme", 2)).await.fails("stablecoin", 4);
    exec(&n, &gov, create_denom("governance", &carol, "hkd.acme2", 2)).await.fails("stablecoin", 5);
    exec(&n, &gov, create_denom("governance", &fresh(), "usd.acme", 2)).await.fails("stablecoin", 2);
    exec(&n, &gov, create_denom("governance", &fresh(), "hkd.", 2)).await.fails("stablecoin", 2);
    exec(&n, &gov, create_denom("governance", &fresh(), "hkd.six", 6)).await.fails("stablecoin", 3).log_has("exactly 2 decimals");
    // A blacklisted address cannot become an issuer.
    let bad = fresh();
    exec(
        &n,
        &dev_key("compliance_authority"),
        to_any(&kpb::MsgBlacklistAddress { authority: b32("compliance_authority"), address: bad.to_bech32(), ..Default::default() }),
    )
    .await
    .ok();
    exec(&n, &gov, create_denom("governance", &bad, "hkd.bad", 2)).await.fails("stablecoin", 16);
    assert_eq!(n.client.query("/chain/stablecoin/v1/denoms").await.unwrap()["denoms"].as_array().unwrap().len(), 2);
    n.stop().await;
}

fn mint(signer: &str, to: &Address, amount: &str, denom: &str) -> Any {
    to_any(&spb::MsgMint { issuer: b32(signer), recipient: to.to_bech32(), amount: coin(amount, denom) })
}

async fn supply(n: &TestNode, denom: &str) -> String {
    n.client.query(&format!("/chain/stablecoin/v1/denoms/{denom}")).await.unwrap()["supply"]["amount"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_issuer_mints_and_burns() {
    let n = TestNode::start().await.unwrap();
    let issuer = dev_key("issuer");
    let alice = dev_addr("alice");
    assert_eq!(supply(&n, "hkd.demo").await, "300000000");

    exec(&n, &issuer, mint("issuer", &alice, "500", "hkd.demo")).await.ok();
    assert_eq!(n.client.balance(&alice, "hkd.demo").await.unwrap().0, 100_000_500);
    assert_eq!(supply(&n, "hkd.demo").await, "300000500");

    exec(&n, &dev_key("alice"), mint("alice", &alice, "500", "hkd.demo")).await.fails("stablecoin", 7).log_has("not the issuer");
    exec(&n, &dev_key("governance"), mint("governance", &alice, "500", "hkd.demo")).await.fails("stablecoin", 7);
    exec(&n, &issuer, mint("issuer", &alice, "0", "hkd.demo")).await.fails("stablecoin", 10);
    exec(&n, &issuer, mint("issuer", &alice, "-5", "hkd.demo")).await.fails("stablecoin", 10);
    exec(&n, &issuer, mint("issuer", &alice, "5", "hkd.nope")).await.fails("stablecoin", 6);
    exec(&n, &issuer, mint("issuer", &alice, "5", "HKD")).await.fails("stablecoin", 2);
    let no_amount = to_any(&spb::MsgMint { issuer: b32("issuer"), recipient: alice.to_bech32(), amount: None });
    exec(&n, &issuer, no_amount).await.fails("stablecoin", 10);

    // Minting to a blacklisted address fails.
    let bad = fresh();
    exec(
        &n,
        &dev_key("compliance_authority"),
        to_any(&kpb::MsgBlacklistAddress { authority: b32("compliance_authority"), address: bad.to_bech32(), ..Default::default() }),
    )
    .await
    .ok();
    exec(&n, &issuer, mint("issuer", &bad, "5", "hkd.demo")).await.fails("stablecoin", 15).log_has("blacklisted");

    // Burn from the issuer's own balance.
    let burn = |amount: &str| to_any(&spb::MsgBurn { issuer: b32("issuer"), amount: coin(amount, "hkd.demo") });
    exec(&n, &issuer, burn("1")).await.fails("sdk", 5);
    exec(&n, &issuer, mint("issuer", &dev_addr("issuer"), "300", "hkd.demo")).await.ok();
    exec(&n, &issuer, burn("100")).await.ok();
    assert_eq!(n.client.balance(&dev_addr("issuer"), "hkd.demo").await.unwrap().0, 200);
    assert_eq!(supply(&n, "hkd.demo").await, "300000700");
    exec(&n, &dev_key("alice"), to_any(&spb::MsgBurn { issuer: b32("alice"), amount: coin("1", "hkd.demo") })).await.fails("stablecoin", 7);
    n.stop().await;
}

fn hkd_send(from: &str, to: &str, amount: u128) -> Any {
    msg_send(&dev_addr(from), &dev_addr(to), &[Coin::new("hkd.demo", amount)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_denom_cannot_move_and_an_admitted_transfer_fails_in_the_block() {
    // A long block time so that the pause and the transfer share a block.
    let n = TestNode::start_with(Default::default(), 1_500).await.unwrap();
    let issuer = dev_key("issuer");
    let alice = dev_key("alice");
    let pause = n.sign(&issuer, &TxBuilder::new(vec![to_any(&spb::MsgPause { authority: b32("issuer"), ..Default::default() })]).gas(300_000)).await.unwrap();
    let bob = dev_key("bob");
    let payload = n.client.travel_rule_payload(&dev_addr("bob"), &dev_addr("alice")).await.unwrap();
    let send = n.sign(&bob, &TxBuilder::new(vec![hkd_send("bob", "alice", 100)]).gas(300_000).travel_rule(&payload)).await.unwrap();
    let p = n.client.broadcast(&pause, "BROADCAST_MODE_SYNC").await.unwrap();
    let s = n.client.broadcast(&send, "BROADCAST_MODE_SYNC").await.unwrap();
    assert_eq!((p.code, s.code), (0, 0), "both admitted: {p:?} {s:?}");
    let pr = n.client.wait_for_tx(&p.txhash, Duration::from_secs(30), Duration::from_millis(20)).await.unwrap();
    let sr = n.client.wait_for_tx(&s.txhash, Duration::from_secs(30), Duration::from_millis(20)).await.unwrap();
    assert_eq!(pr.code, 0, "{}", pr.raw_log);
    assert_eq!((sr.codespace.as_str(), sr.code), ("bank", 5), "{}", sr.raw_log);
    assert!(sr.raw_log.contains("hkd.demo transfers are paused"), "{}", sr.raw_log);
    assert_eq!(n.client.balance(&dev_addr("alice"), "hkd.demo").await.unwrap().0, 100_000_000);
    assert_eq!(n.client.query("/chain/stablecoin/v1/denoms/hkd.demo").await.unwrap()["paused"], true);

    // Mint waits too; pausing twice, or by someone who issues nothing, fails.
    exec(&n, &issuer, mint("issuer", &dev_addr("alice"), "1", "hkd.demo")).await.fails("stablecoin", 17);
    exec(&n, &issuer, to_any(&spb::MsgPause { authority: b32("issuer"), ..Default::default() })).await.fails("stablecoin", 11);
    exec(&n, &alice, to_any(&spb::MsgUnpause { authority: b32("alice"), ..Default::default() })).await.fails("stablecoin", 19);
    // Native coin still moves.
    exec(&n, &alice, msg_send(&dev_addr("alice"), &dev_addr("bob"), &[Coin::new("alantau", 1u128)])).await.ok();

    exec(&n, &issuer, to_any(&spb::MsgUnpause { authority: b32("issuer"), ..Default::default() })).await.ok();
    exec(&n, &issuer, to_any(&spb::MsgUnpause { authority: b32("issuer"), ..Default::default() })).await.fails("stablecoin", 12);
    hkd(&n, "bob", "alice", 100).await.ok();
    assert_eq!(n.client.balance(&dev_addr("alice"), "hkd.demo").await.unwrap().0, 100_000_100);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_address_can_neither_send_nor_receive_stablecoins() {
    let n = TestNode::start().await.unwrap();
    let ca = dev_key("compliance_authority");
    let freeze = |signer: &str, who: &str| to_any(&spb::MsgFreeze { authority: b32(signer), address: b32(who) });
    let unfreeze = |signer: &str, who: &str| to_any(&spb::MsgUnfreeze { authority: b32(signer), address: b32(who) });

    exec(&n, &dev_key("issuer"), freeze("issuer", "alice")).await.fails("stablecoin", 9);
    exec(&n, &ca, freeze("compliance_authority", "alice")).await.ok();
    assert_eq!(n.client.query(&format!("/chain/stablecoin/v1/frozen/{}", b32("alice"))).await.unwrap()["frozen"], true);
    exec(&n, &ca, freeze("compliance_authority", "alice")).await.fails("stablecoin", 13);

    // The gates pass (valid payloads); the chokepoint refuses at execution.
    hkd(&n, "bob", "alice", 5).await.fails("bank", 10).log_has("is frozen");
    hkd(&n, "alice", "issuer", 5).await.fails("bank", 10);
    exec(&n, &dev_key("issuer"), mint("issuer", &dev_addr("alice"), "5", "hkd.demo")).await.fails("bank", 10);
    // Gas money still moves.
    exec(&n, &dev_key("alice"), msg_send(&dev_addr("alice"), &dev_addr("bob"), &[Coin::new("alantau", 1u128)])).await.ok();

    exec(&n, &dev_key("bob"), unfreeze("bob", "alice")).await.fails("stablecoin", 9);
    exec(&n, &ca, unfreeze("compliance_authority", "alice")).await.ok();
    exec(&n, &ca, unfreeze("compliance_authority", "alice")).await.fails("stablecoin", 14);
    hkd(&n, "alice", "issuer", 5).await.ok();
    n.stop().await;
}

// === reserve ===

fn submit(signer: &str, circulation: &str, reserve: &str, denom: &str, day: &str) -> Any {
    to_any(&rpb::MsgSubmitAttestation {
        issuer: b32(signer),
        circulation: coin(circulation, denom),
        reserve_market_value: coin(reserve, denom),
        random_day: Some(serde_json::from_value(serde_json::json!(day)).unwrap()),
    })
}

fn cosign(signer: &str, id: u64) -> Any {
    to_any(&rpb::MsgCosignAttestation { auditor: b32(signer), attestation_id: id })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_auditor_cosigns_an_attestation_once() {
    // A chain whose issuer has no attestation yet: the dev genesis without its attested reserve.
    let home = tempfile::tempdir().unwrap();
    lantau_node::home::init_home(home.path(), &Default::default()).unwrap();
    let genesis_path = home.path().join("config/genesis.json");
    let mut genesis: Value = serde_json::from_slice(&std::fs::read(&genesis_path).unwrap()).unwrap();
    genesis["app_state"]["reserve"]["attestations"] = serde_json::json!([]);
    std::fs::write(&genesis_path, serde_json::to_vec(&genesis).unwrap()).unwrap();
    let n = TestNode::start_in(home, 100).await.unwrap();
    let issuer = dev_key("issuer");
    let auditor = dev_key("auditor");
    let latest = format!("/chain/reserve/v1/attestations/{}/latest", b32("issuer"));
    assert!(n.client.query_opt(&latest).await.unwrap().is_none());
    // Until the issuer has one, the holder's binding says so: `"attestation": null`, not absent.
    let for_alice = format!("/chain/reserve/v1/reserve_for_address/{}", b32("alice"));
    let v = n.client.query(&for_alice).await.unwrap();
    let b = v["bindings"][0].as_object().unwrap();
    assert_eq!((b["denom"].as_str(), b.get("attestation")), (Some("hkd.demo"), Some(&Value::Null)), "{v}");

    exec(&n, &issuer, submit("issuer", "300000000", "300500000", "hkd.demo", "2026-01-01T00:00:00Z")).await.ok();
    let v = n.client.query(&latest).await.unwrap();
    let a = &v["attestation"];
    assert_eq!((a["id"].as_str(), a["state"].as_str()), (Some("1"), Some("ATTESTATION_STATE_SUBMITTED")), "{v}");
    assert_eq!(a["circulation"], serde_json::json!({"denom": "hkd.demo", "amount": "300000000"}));
    assert_eq!(a["reserve_market_value"]["amount"], "300500000");
    assert_eq!(a["random_day"], "2026-01-01T00:00:00Z");

    exec(&n, &dev_key("registrar"), cosign("registrar", 1)).await.fails("reserve", 7).log_has("not a registered auditor");
    exec(&n, &auditor, cosign("auditor", 99)).await.fails("reserve", 6);
    exec(&n, &auditor, cosign("auditor", 1)).await.ok();
    let a = n.client.query(&latest).await.unwrap()["attestation"].clone();
    assert_eq!(a["state"], "ATTESTATION_STATE_ATTESTED");
    assert_eq!(a["auditor"], b32("auditor"));
    exec(&n, &auditor, cosign("auditor", 1)).await.fails("reserve", 8);

    // The holder's view: each stablecoin held, with its issuer's latest attestation.
    let v = n.client.query(&for_alice).await.unwrap();
    let b = &v["bindings"][0];
    assert_eq!(b["denom"], "hkd.demo");
    assert_eq!(b["balance"], serde_json::json!({"denom": "hkd.demo", "amount": "100000000"}));
    assert_eq!(b["attestation"]["state"], "ATTESTATION_STATE_ATTESTED");

    // Bad input.
    exec(&n, &dev_key("alice"), submit("alice", "1", "1", "hkd.demo", "2026-01-01T00:00:00Z")).await.fails("reserve", 3);
    exec(&n, &issuer, submit("issuer", "1", "1", "alantau", "2026-01-01T00:00:00Z")).await.fails("reserve", 5);
    exec(&n, &issuer, submit("issuer", "0", "1", "hkd.demo", "2026-01-01T00:00:00Z")).await.fails("reserve", 4);
    exec(&n, &issuer, submit("issuer", "1", "1", "hkd.demo", "2999-01-01T00:00:00Z")).await.fails("reserve", 10);
    let no_day = to_any(&rpb::MsgSubmitAttestation {
        issuer: b32("issuer"),
        circulation: coin("1", "hkd.demo"),
        reserve_market_value: coin("1", "hkd.demo"),
        random_day: None,
    });
    exec(&n, &issuer, no_day).await.fails("reserve", 10);

    // Governance registers auditors; an issuer never co-signs its own attestation.
    let params = |auditors: Vec<String>| rpb::Params { auditors, ..Default::default() };
    let upd = |signer: &str, p: rpb::Params| to_any(&rpb::MsgUpdateParams { authority: b32(signer), params: Some(p) });
    exec(&n, &issuer, upd("issuer", params(vec![b32("issuer")]))).await.fails("reserve", 2);
    exec(&n, &dev_key("governance"), upd("governance", params(vec![b32("auditor"), b32("auditor")]))).await.fails("reserve", 9);
    exec(&n, &dev_key("governance"), upd("governance", params(vec![b32("auditor"), b32("issuer")]))).await.ok();
    exec(&n, &issuer, submit("issuer", "2", "2", "hkd.demo", "2026-01-01T00:00:00Z")).await.ok();
    exec(&n, &issuer, cosign("issuer", 2)).await.fails("reserve", 11);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dev_issuer_starts_with_a_reserve_attested_by_the_dev_auditor() {
    let n = TestNode::start().await.unwrap();
    let v = n.client.query(&format!("/chain/reserve/v1/attestations/{}/latest", b32("issuer"))).await.unwrap();
    let a = &v["attestation"];
    assert_eq!((a["id"].as_str(), a["state"].as_str()), (Some("1"), Some("ATTESTATION_STATE_ATTESTED")), "{v}");
    assert_eq!(a["auditor"], b32("auditor"));
    assert_eq!(a["circulation"], serde_json::json!({"denom": "hkd.demo", "amount": "300000000"}));
    assert_eq!(a["reserve_market_value"], serde_json::json!({"denom": "hkd.demo", "amount": "306000000"}));
    let v = n.client.query(&format!("/chain/reserve/v1/reserve_for_address/{}", b32("bob"))).await.unwrap();
    assert_eq!(v["bindings"][0]["attestation"]["state"], "ATTESTATION_STATE_ATTESTED", "{v}");
    // The next submission continues the genesis ids.
    exec(&n, &dev_key("issuer"), submit("issuer", "1", "1", "hkd.demo", "2026-01-01T00:00:00Z")).await.ok();
    let v = n.client.query(&format!("/chain/reserve/v1/attestations/{}/latest", b32("issuer"))).await.unwrap();
    assert_eq!(v["attestation"]["id"], "2", "{v}");
    n.stop().await;
}

// === authorities ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governance_rotates_the_compliance_authority() {
    let n = TestNode::start().await.unwrap();
    let v = n.client.query("/chain/compliance/v1/params").await.unwrap();
    assert_eq!(v["params"]["authority"], b32("compliance_authority"));
    assert_eq!(v["params"]["rules"], serde_json::json!({"travel_rule_full_threshold": "800000", "velocity_window_seconds": "60", "velocity_tx_limit": "10"}));

    let rules = cpb::Rules { travel_rule_full_threshold: 500_000, velocity_window_seconds: 30, velocity_tx_limit: 5 };
    let upd = |signer: &str, authority: &str, rules: cpb::Rules| {
        to_any(&cpb::MsgUpdateParams {
            authority: b32(signer),
            params: Some(cpb::Params { authority: b32(authority), rules: Some(rules), block_requires_officer: false }),
        })
    };
    exec(&n, &dev_key("compliance_authority"), upd("compliance_authority", "alice", rules)).await.fails("compliance", 2);
    let zero = cpb::Rules { velocity_tx_limit: 0, ..rules };
    exec(&n, &dev_key("governance"), upd("governance", "alice", zero)).await.fails("compliance", 4);
    exec(&n, &dev_key("governance"), upd("governance", "alice", rules)).await.ok();
    let v = n.client.query("/chain/compliance/v1/params").await.unwrap();
    assert_eq!(v["params"]["authority"], b32("alice"));
    assert_eq!(v["params"]["rules"]["velocity_tx_limit"], "5");

    // The old compliance authority no longer signs freezes or blacklists; the new one does.
    let freeze = |signer: &str| to_any(&spb::MsgFreeze { authority: b32(signer), address: b32("carol") });
    exec(&n, &dev_key("compliance_authority"), freeze("compliance_authority")).await.fails("stablecoin", 9);
    exec(&n, &dev_key("alice"), freeze("alice")).await.ok();
    let bl = to_any(&kpb::MsgBlacklistAddress { authority: b32("compliance_authority"), address: b32("carol"), ..Default::default() });
    exec(&n, &dev_key("compliance_authority"), bl).await.fails("kyc", 6);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dev_genesis_gives_the_named_accounts_their_roles() {
    let n = TestNode::start().await.unwrap();
    let issuer = identity(&n, &dev_addr("issuer")).await.unwrap();
    assert_eq!(issuer.level, kpb::Level::LicensedIssuer as i32);
    assert_eq!(issuer.vasp_identifier, lantau_node::home::DEV_ISSUER_VASP);
    let alice = identity(&n, &dev_addr("alice")).await.unwrap();
    assert!(!alice.vasp_identifier.is_empty() && !alice.ivms101_off_chain_ref.is_empty());
    let bob = identity(&n, &dev_addr("bob")).await.unwrap();
    assert_eq!(bob.level, kpb::Level::RetailBasic as i32);
    assert!(bob.vasp_identifier.is_empty() && !bob.ivms101_off_chain_ref.is_empty());
    assert!(identity(&n, &dev_addr("carol")).await.is_none());

    let d = n.client.query("/chain/stablecoin/v1/denoms").await.unwrap();
    assert_eq!(d["denoms"][0]["issuer"], b32("issuer"));
    assert_eq!(n.client.query("/chain/kyc/v1/params").await.unwrap()["params"]["registrars"], serde_json::json!([b32("registrar")]));
    assert_eq!(n.client.query("/chain/reserve/v1/params").await.unwrap()["params"]["auditors"], serde_json::json!([b32("auditor")]));
    for c in ["alice", "bob", "carol"] {
        assert_eq!(n.client.balance(&dev_addr(c), "hkd.demo").await.unwrap().0, lantau_node::home::DEV_HKD_BALANCE);
    }
    for name in lantau_node::home::DEV_ACCOUNT_NAMES {
        assert!(n.client.balance(&dev_addr(name), "alantau").await.unwrap().0 > 0, "{name} has gas money");
    }
    // The issuer's operations desk holds every role of hkd.demo, the minter's with an allowance.
    let roles = n.client.query("/chain/stablecoin/v1/roles/hkd.demo").await.unwrap();
    let held: Vec<(&str, &str)> = roles["roles"].as_array().unwrap().iter().map(|g| (g["role"].as_str().unwrap(), g["address"].as_str().unwrap())).collect();
    let treasury = b32("treasury");
    assert_eq!(held, ["minter", "pauser", "redeemer", "seizer"].map(|r| (r, treasury.as_str())), "{roles}");
    assert_eq!(roles["roles"][0]["allowance"]["amount"], lantau_node::home::DEV_MINTER_ALLOWANCE.to_string());
    assert_eq!(n.client.query("/chain/stablecoin/v1/params").await.unwrap()["params"]["redemption_deadline"], "86400s");
    let accounts: Vec<lantau_node::home::DevAccount> = serde_json::from_slice(&std::fs::read(n.home.path().join("dev-accounts.json")).unwrap()).unwrap();
    let names: Vec<&str> = accounts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, lantau_node::home::DEV_ACCOUNT_NAMES);
    n.stop().await;
}

/// The one audit row of `tx_type` about `subject`, from the AuditLog query.
async fn audit_row(n: &TestNode, tx_type: &str, subject: &Address) -> Value {
    let v = n.client.query(&format!("/chain/compliance/v1/audit_log?subject={}&tx_type={tx_type}", subject.to_bech32())).await.unwrap();
    let rows = v["entries"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), 1, "{tx_type} rows about {subject}: {v}");
    rows[0].clone()
}

/// Every enforcement action writes an audit row through the one writer, with
/// its reason and evidence in metadata and the transaction's hash: an enrolment, a level
/// change, a blacklisting with its court order, a freeze and an unfreeze, a pause and a resume
/// (mints and burns already had theirs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_enforcement_action_writes_an_audit_row() {
    let n = TestNode::start().await.unwrap();
    let dave = fresh();
    let o = exec(&n, &dev_key("registrar"), enroll("registrar", &dave, kpb::Level::RetailBasic, "VASP-D", "ivms101:dave")).await;
    o.ok();
    let row = audit_row(&n, "identity_enrolled", &dave).await;
    assert_eq!(row["metadata"]["level"], "LEVEL_RETAIL_BASIC");
    assert_eq!(row["metadata"]["ivms101_off_chain_ref"], "ivms101:dave");
    assert_eq!(row["metadata"]["registrar"], b32("registrar"));
    assert!(!row["tx_hash"].as_str().unwrap().is_empty());

    exec(&n, &dev_key("registrar"), update("registrar", &dave, kpb::Level::RetailPlus as i32, "VASP-D", "ivms101:dave")).await.ok();
    let row = audit_row(&n, "level_change", &dave).await;
    assert_eq!((row["metadata"]["previous_level"].as_str(), row["metadata"]["level"].as_str()), (Some("LEVEL_RETAIL_BASIC"), Some("LEVEL_RETAIL_PLUS")));

    let bl = kpb::MsgBlacklistAddress {
        authority: b32("compliance_authority"),
        address: dave.to_bech32(),
        reason: "court order".into(),
        evidence_ref: "doc://hk/2026/17".into(),
    };
    exec(&n, &dev_key("compliance_authority"), to_any(&bl)).await.ok();
    let row = audit_row(&n, "blacklist", &dave).await;
    assert_eq!(row["metadata"]["reason"], "court order");
    assert_eq!(row["metadata"]["evidence_ref"], "doc://hk/2026/17");
    assert_eq!(row["metadata"]["previous_level"], "LEVEL_RETAIL_PLUS");

    let carol = dev_addr("carol");
    exec(&n, &dev_key("compliance_authority"), to_any(&spb::MsgFreeze { authority: b32("compliance_authority"), address: b32("carol") })).await.ok();
    exec(&n, &dev_key("compliance_authority"), to_any(&spb::MsgUnfreeze { authority: b32("compliance_authority"), address: b32("carol") })).await.ok();
    for t in ["freeze", "unfreeze"] {
        assert_eq!(audit_row(&n, t, &carol).await["metadata"]["authority"], b32("compliance_authority"));
    }
    let issuer = dev_addr("issuer");
    exec(&n, &dev_key("issuer"), to_any(&spb::MsgPause { authority: b32("issuer"), ..Default::default() })).await.ok();
    exec(&n, &dev_key("issuer"), to_any(&spb::MsgUnpause { authority: b32("issuer"), ..Default::default() })).await.ok();
    for t in ["pause", "unpause"] {
        assert_eq!(audit_row(&n, t, &issuer).await["metadata"]["denom"], "hkd.demo");
    }
    // The subject's timeline has the whole story, in order.
    let v = n.client.query(&format!("/chain/compliance/v1/audit_log?subject={}", dave.to_bech32())).await.unwrap();
    let types: Vec<&str> = v["entries"].as_array().unwrap().iter().map(|e| e["tx_type"].as_str().unwrap()).collect();
    assert_eq!(types, vec!["identity_enrolled", "level_change", "blacklist"]);
    n.stop().await;
}

fn pause(signer: &str, features: &[&str]) -> Any {
    to_any(&spb::MsgPause { authority: b32(signer), denom: "hkd.demo".into(), features: features.iter().map(|f| f.to_string()).collect() })
}

fn unpause(signer: &str, features: &[&str]) -> Any {
    to_any(&spb::MsgUnpause { authority: b32(signer), denom: "hkd.demo".into(), features: features.iter().map(|f| f.to_string()).collect() })
}

fn burn(signer: &str, amount: &str) -> Any {
    to_any(&spb::MsgBurn { issuer: b32(signer), amount: coin(amount, "hkd.demo") })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_feature_pauses_alone_and_the_denom_shows_which() {
    let n = TestNode::start().await.unwrap();
    let issuer = dev_key("issuer");
    let alice = dev_addr("alice");
    let features = |n: &TestNode| {
        let n = n.client.clone();
        async move { n.query("/chain/stablecoin/v1/denoms/hkd.demo").await.unwrap()["paused_features"].clone() }
    };
    // The issuer gets coins to burn.
    hkd(&n, "alice", "issuer", 1_000).await.ok();

    // TRANSFER alone: transfers stop (both paths' chokepoint), mint and burn go on.
    let o = exec(&n, &issuer, pause("issuer", &["TRANSFER"])).await;
    o.ok();
    assert!(o.event("chain.stablecoin.v1.EventPaused").is_some(), "{o:?}");
    assert_eq!(features(&n).await, serde_json::json!(["TRANSFER"]));
    assert_eq!(n.client.query("/chain/stablecoin/v1/denoms/hkd.demo").await.unwrap()["paused"], true);
    hkd(&n, "alice", "issuer", 1).await.fails("bank", 5).log_has("hkd.demo transfers are paused");
    exec(&n, &issuer, mint("issuer", &alice, "1", "hkd.demo")).await.ok();
    exec(&n, &issuer, burn("issuer", "1")).await.ok();
    exec(&n, &issuer, unpause("issuer", &["TRANSFER"])).await.ok();
    assert_eq!(features(&n).await, serde_json::json!([]));

    // MINT alone.
    exec(&n, &issuer, pause("issuer", &["MINT"])).await.ok();
    exec(&n, &issuer, mint("issuer", &alice, "1", "hkd.demo")).await.fails("stablecoin", 17).log_has("MINT of hkd.demo is paused");
    hkd(&n, "alice", "issuer", 1).await.ok();
    exec(&n, &issuer, burn("issuer", "1")).await.ok();
    // BURN besides: both listed, in order; pausing what is paused already fails.
    exec(&n, &issuer, pause("issuer", &["BURN"])).await.ok();
    assert_eq!(features(&n).await, serde_json::json!(["MINT", "BURN"]));
    assert_eq!(n.client.query("/chain/stablecoin/v1/denoms/hkd.demo").await.unwrap()["paused"], false);
    exec(&n, &issuer, burn("issuer", "1")).await.fails("stablecoin", 17).log_has("BURN of hkd.demo is paused");
    exec(&n, &issuer, pause("issuer", &["MINT", "BURN"])).await.fails("stablecoin", 11);
    // Lifting one leaves the other; lifting what is not paused fails.
    exec(&n, &issuer, unpause("issuer", &["MINT"])).await.ok();
    assert_eq!(features(&n).await, serde_json::json!(["BURN"]));
    exec(&n, &issuer, unpause("issuer", &["MINT"])).await.fails("stablecoin", 12);
    exec(&n, &issuer, mint("issuer", &alice, "1", "hkd.demo")).await.ok();
    // An empty list is every feature (as before features existed); unpausing all lifts them.
    exec(&n, &issuer, pause("issuer", &[])).await.ok();
    assert_eq!(features(&n).await, serde_json::json!(["TRANSFER", "MINT", "BURN", "SEIZE", "REDEEM"]));
    exec(&n, &issuer, unpause("issuer", &[])).await.ok();
    assert_eq!(features(&n).await, serde_json::json!([]));
    // An unknown feature is refused at admission; only the issuer pauses its denom.
    exec(&n, &issuer, pause("issuer", &["transfer"])).await.fails("stablecoin", 20);
    exec(&n, &dev_key("alice"), pause("alice", &["MINT"])).await.fails("stablecoin", 7).log_has("is not the issuer of hkd.demo");
    // Every pause and unpause is audited with the features.
    let rows = n.client.query("/chain/compliance/v1/audit_log?tx_type=pause").await.unwrap();
    let rows = rows["entries"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert_eq!(rows[1]["metadata"]["features"], "MINT");
    n.stop().await;
}

fn set_role(role: &str, who: &Address, allowance: Option<&str>) -> Any {
    to_any(&spb::MsgSetRole {
        issuer: b32("issuer"),
        denom: "hkd.demo".into(),
        role: role.into(),
        address: who.to_bech32(),
        allowance: allowance.and_then(|a| coin(a, "hkd.demo")),
    })
}

fn revoke_role(role: &str, who: &Address) -> Any {
    to_any(&spb::MsgRevokeRole { issuer: b32("issuer"), denom: "hkd.demo".into(), role: role.into(), address: who.to_bech32() })
}

fn mint_by(k: &SecretKey, to: &Address, amount: &str) -> Any {
    to_any(&spb::MsgMint { issuer: k.address().to_bech32(), recipient: to.to_bech32(), amount: coin(amount, "hkd.demo") })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_issuer_grants_roles_and_a_minter_mints_within_its_allowance() {
    let n = TestNode::start().await.unwrap();
    let issuer = dev_key("issuer");
    let (minter, pauser) = (crate::support::key(71), crate::support::key(72));
    for k in [&minter, &pauser] {
        crate::support::fund(&n, "governance", &k.address()).await;
    }
    let alice = dev_addr("alice");
    // The grants this test makes (the dev genesis's to `treasury` aside).
    let roles = |n: &TestNode| {
        let c = n.client.clone();
        async move {
            let all = c.query("/chain/stablecoin/v1/roles/hkd.demo").await.unwrap()["roles"].clone();
            Value::from(all.as_array().unwrap().iter().filter(|g| g["address"] != b32("treasury")).cloned().collect::<Vec<_>>())
        }
    };

    // Malformed grants are refused at admission (21); only the issuer grants (7).
    exec(&n, &issuer, set_role("owner", &minter.address(), None)).await.fails("stablecoin", 21);
    exec(&n, &issuer, set_role("minter", &minter.address(), None)).await.fails("stablecoin", 21).log_has("a minter needs an allowance");
    exec(&n, &issuer, set_role("pauser", &pauser.address(), Some("5"))).await.fails("stablecoin", 21);
    exec(
        &n,
        &dev_key("alice"),
        to_any(&spb::MsgSetRole { issuer: b32("alice"), denom: "hkd.demo".into(), role: "pauser".into(), address: b32("bob"), allowance: None }),
    )
    .await
    .fails("stablecoin", 7);

    // A minter with 1,000: it mints 600, then 500 is over what is left.
    let o = exec(&n, &issuer, set_role("minter", &minter.address(), Some("1000"))).await;
    o.ok();
    assert!(o.event("chain.stablecoin.v1.EventRoleSet").is_some(), "{o:?}");
    exec(&n, &issuer, set_role("pauser", &pauser.address(), None)).await.ok();
    let r = roles(&n).await;
    assert_eq!(r.as_array().unwrap().len(), 2, "{r}");
    assert_eq!((r[0]["role"].clone(), r[0]["allowance"]["amount"].clone()), (Value::from("minter"), Value::from("1000")), "{r}");
    assert_eq!((r[1]["role"].clone(), r[1]["allowance"].clone()), (Value::from("pauser"), Value::Null), "{r}");
    let before = supply(&n, "hkd.demo").await.parse::<u128>().unwrap();
    let o = exec(&n, &minter, mint_by(&minter, &alice, "600")).await;
    o.ok();
    assert_eq!(supply(&n, "hkd.demo").await.parse::<u128>().unwrap(), before + 600);
    assert_eq!(roles(&n).await[0]["allowance"]["amount"], "400");
    let mints = n.client.query(&format!("/chain/compliance/v1/audit_log?tx_hash={}", o.txhash())).await.unwrap();
    let row = &mints["entries"][0];
    assert_eq!(
        (row["tx_type"].clone(), row["subject"].clone(), row["metadata"]["minter"].clone()),
        ("mint".into(), b32("issuer").into(), minter.address().to_bech32().into()),
        "{row}"
    );
    exec(&n, &minter, mint_by(&minter, &alice, "500"))
        .await
        .fails("stablecoin", 23)
        .log_has(&format!("mint of 500hkd.demo by minter {} is over its allowance of 400hkd.demo", minter.address().to_bech32()));
    // The issuer sets a new allowance; its own mints are not counted against anyone's.
    exec(&n, &issuer, set_role("minter", &minter.address(), Some("500"))).await.ok();
    exec(&n, &minter, mint_by(&minter, &alice, "500")).await.ok();
    exec(&n, &issuer, mint("issuer", &alice, "10000", "hkd.demo")).await.ok();
    assert_eq!(roles(&n).await[0]["allowance"]["amount"], "0");

    // The pauser pauses and lifts a feature of the denom it names, as the issuer would.
    exec(&n, &pauser, to_any(&spb::MsgPause { authority: pauser.address().to_bech32(), denom: "hkd.demo".into(), features: vec!["MINT".into()] })).await.ok();
    exec(&n, &issuer, mint("issuer", &alice, "1", "hkd.demo")).await.fails("stablecoin", 17);
    exec(&n, &pauser, to_any(&spb::MsgUnpause { authority: pauser.address().to_bech32(), denom: "hkd.demo".into(), features: vec![] })).await.ok();

    // Revoked: the minter is refused as anyone else (7); revoking twice fails (22).
    let o = exec(&n, &issuer, revoke_role("minter", &minter.address())).await;
    o.ok();
    assert!(o.event("chain.stablecoin.v1.EventRoleRevoked").is_some());
    exec(&n, &issuer, set_role("minter", &minter.address(), Some("5"))).await.ok();
    exec(&n, &issuer, revoke_role("minter", &minter.address())).await.ok();
    exec(&n, &minter, mint_by(&minter, &alice, "1")).await.fails("stablecoin", 7);
    exec(&n, &issuer, revoke_role("minter", &minter.address())).await.fails("stablecoin", 22);
    exec(&n, &pauser, to_any(&spb::MsgPause { authority: pauser.address().to_bech32(), denom: "hkd.demo".into(), features: vec![] })).await.ok();
    exec(&n, &issuer, revoke_role("pauser", &pauser.address())).await.ok();
    exec(&n, &pauser, to_any(&spb::MsgUnpause { authority: pauser.address().to_bech32(), denom: "hkd.demo".into(), features: vec![] }))
        .await
        .fails("stablecoin", 7);
    assert_eq!(roles(&n).await, serde_json::json!([]));
    // Every grant and revocation is a role_update row, subject the holder.
    let rows = n.client.query("/chain/compliance/v1/audit_log?tx_type=role_update").await.unwrap();
    let rows = rows["entries"].as_array().unwrap();
    let actions: Vec<&str> = rows.iter().map(|r| r["metadata"]["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["granted", "granted", "updated", "revoked", "granted", "revoked", "revoked"], "{rows:?}");
    assert_eq!(rows[0]["subject"], minter.address().to_bech32());
    assert_eq!(rows[0]["metadata"]["allowance"], "1000hkd.demo");
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mint_stays_within_the_latest_attested_reserve_and_needs_a_fresh_attestation() {
    let n = TestNode::start().await.unwrap();
    let (issuer, gov) = (dev_key("issuer"), dev_key("governance"));
    let alice = dev_addr("alice");
    // The dev reserve: 306,000,000 attested against 300,000,000 in circulation.
    assert_eq!(supply(&n, "hkd.demo").await, "300000000");
    exec(&n, &issuer, mint("issuer", &alice, "6000001", "hkd.demo"))
        .await
        .fails("stablecoin", 24)
        .log_has("circulation would be 306000001hkd.demo, over the reserve_market_value 306000000hkd.demo of attestation 1");
    // Frozen coins count in circulation: freezing a holder frees no room.
    exec(&n, &dev_key("compliance_authority"), to_any(&spb::MsgFreeze { authority: b32("compliance_authority"), address: b32("carol") })).await.ok();
    exec(&n, &issuer, mint("issuer", &alice, "6000001", "hkd.demo")).await.fails("stablecoin", 24);
    exec(&n, &issuer, mint("issuer", &alice, "6000000", "hkd.demo")).await.ok();
    exec(&n, &issuer, mint("issuer", &alice, "1", "hkd.demo")).await.fails("stablecoin", 24);

    // A minter is held to the same reserve.
    let minter = crate::support::key(73);
    crate::support::fund(&n, "governance", &minter.address()).await;
    exec(&n, &issuer, set_role("minter", &minter.address(), Some("1000"))).await.ok();
    exec(&n, &minter, mint_by(&minter, &alice, "1")).await.fails("stablecoin", 24);

    // An attestation older than max_attestation_age backs nothing.
    let params = |age: &str| {
        to_any(&rpb::MsgUpdateParams {
            authority: b32("governance"),
            params: Some(rpb::Params { auditors: vec![b32("auditor")], max_attestation_age: age.into() }),
        })
    };
    exec(&n, &gov, params("5 days")).await.fails("reserve", 9).log_has("whole seconds");
    exec(&n, &gov, params("60s")).await.ok();
    exec(&n, &issuer, mint("issuer", &alice, "1", "hkd.demo"))
        .await
        .fails("stablecoin", 26)
        .log_has("attestation 1 was attested 2026-01-01T00:00:00Z, more than max_attestation_age 60s");
    // A new attestation, co-signed: the reserve it shows is the limit now.
    exec(&n, &issuer, submit("issuer", "306000000", "310000000", "hkd.demo", "2026-11-01T00:00:00Z")).await.ok();
    exec(&n, &issuer, mint("issuer", &alice, "1", "hkd.demo")).await.fails("stablecoin", 26);
    exec(&n, &dev_key("auditor"), cosign("auditor", 2)).await.ok();
    exec(&n, &issuer, mint("issuer", &alice, "4000000", "hkd.demo")).await.ok();
    exec(&n, &minter, mint_by(&minter, &alice, "1")).await.fails("stablecoin", 24).log_has("of attestation 2");

    // An issuer with no attested reserve mints nothing.
    let acme = crate::support::key(74);
    crate::support::fund(&n, "governance", &acme.address()).await;
    exec(&n, &gov, create_denom("governance", &acme.address(), "hkd.acme", 2)).await.ok();
    let o = exec(&n, &acme, to_any(&spb::MsgMint { issuer: acme.address().to_bech32(), recipient: alice.to_bech32(), amount: coin("1", "hkd.acme") })).await;
    o.fails("stablecoin", 25).log_has(&format!("its issuer {} has no ATTESTED reserve attestation", acme.address().to_bech32()));
    n.stop().await;
}

fn seize(k: &SecretKey, from: &Address, to: &Address, amount: &str, evidence: &str, memo: &str) -> Any {
    to_any(&spb::MsgSeize {
        seizer: k.address().to_bech32(),
        denom: "hkd.demo".into(),
        from: from.to_bech32(),
        to: to.to_bech32(),
        amount: amount.into(),
        evidence_ref: evidence.into(),
        memo: memo.into(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seizer_moves_coins_from_a_blacklisted_or_frozen_holder_to_a_recipient_that_passes_kyc() {
    let n = TestNode::start().await.unwrap();
    let (issuer, ca) = (dev_key("issuer"), dev_key("compliance_authority"));
    let (bob, carol, registrar) = (dev_addr("bob"), dev_addr("carol"), dev_addr("registrar"));
    let seizer = crate::support::key(75);
    crate::support::fund(&n, "governance", &seizer.address()).await;
    exec(&n, &issuer, set_role("seizer", &seizer.address(), None)).await.ok();
    let bal = |a: Address| {
        let c = n.client.clone();
        async move { c.balance(&a, "hkd.demo").await.unwrap().0 }
    };
    let before = supply(&n, "hkd.demo").await;
    let blacklist = |who: &Address| {
        to_any(&kpb::MsgBlacklistAddress {
            authority: b32("compliance_authority"),
            address: who.to_bech32(),
            reason: "court".into(),
            evidence_ref: "order-1".into(),
        })
    };

    // From a blacklisted holder to the issuer: moved, supply unchanged, audited.
    exec(&n, &ca, blacklist(&bob)).await.ok();
    let o = exec(&n, &seizer, seize(&seizer, &bob, &dev_addr("issuer"), "1000", "HCMP-123/2026", "court order: freeze and surrender")).await;
    o.ok();
    assert!(o.event("chain.stablecoin.v1.EventSeized").is_some(), "{o:?}");
    assert_eq!(bal(bob).await, 100_000_000 - 1_000);
    assert_eq!(supply(&n, "hkd.demo").await, before);
    let rows = n.client.query(&format!("/chain/compliance/v1/audit_log?tx_hash={}", o.txhash())).await.unwrap();
    let row = &rows["entries"][0];
    assert_eq!(
        (row["tx_type"].as_str(), row["subject"].as_str(), row["counterparty"].as_str()),
        (Some("seize"), Some(bob.to_bech32().as_str()), Some(b32("issuer").as_str())),
        "{row}"
    );
    assert_eq!(row["amount"]["amount"], "1000");
    assert_eq!(row["metadata"]["seizer"], seizer.address().to_bech32());
    assert_eq!(row["metadata"]["evidence_ref"], "HCMP-123/2026");
    assert_eq!(row["metadata"]["memo"], "court order: freeze and surrender");

    // From a frozen holder, by the issuer itself.
    exec(&n, &ca, to_any(&spb::MsgFreeze { authority: b32("compliance_authority"), address: carol.to_bech32() })).await.ok();
    exec(&n, &issuer, seize(&issuer, &carol, &dev_addr("issuer"), "500", "HCMP-124/2026", "order")).await.ok();
    assert_eq!(bal(carol).await, 100_000_000 - 500);

    // The recipient must pass the KYC gate and not be frozen.
    exec(&n, &seizer, seize(&seizer, &dev_addr("alice"), &bob, "1", "e", "m"))
        .await
        .fails("stablecoin", 28)
        .log_has(&format!("recipient={}: address is blacklisted", bob.to_bech32()));
    let nobody = crate::support::key(76).address();
    exec(&n, &seizer, seize(&seizer, &dev_addr("alice"), &nobody, "1", "e", "m")).await.fails("stablecoin", 28).log_has("has no identity record");
    exec(&n, &seizer, seize(&seizer, &dev_addr("alice"), &carol, "1", "e", "m")).await.fails("stablecoin", 28).log_has("has no identity record");
    let freeze = |a: &str, on: bool| {
        if on {
            to_any(&spb::MsgFreeze { authority: b32("compliance_authority"), address: b32(a) })
        } else {
            to_any(&spb::MsgUnfreeze { authority: b32("compliance_authority"), address: b32(a) })
        }
    };
    exec(&n, &ca, freeze("alice", true)).await.ok();
    exec(&n, &seizer, seize(&seizer, &dev_addr("issuer"), &dev_addr("alice"), "1", "e", "m")).await.fails("bank", 10);
    exec(&n, &ca, freeze("alice", false)).await.ok();
    // Evidence and memo are required; only a seizer or the issuer seizes.
    exec(&n, &seizer, seize(&seizer, &dev_addr("alice"), &registrar, "1", "", "m")).await.fails("stablecoin", 27);
    exec(&n, &seizer, seize(&seizer, &dev_addr("alice"), &registrar, "1", "e", " ")).await.fails("stablecoin", 27);
    exec(&n, &dev_key("alice"), seize(&dev_key("alice"), &bob, &dev_addr("alice"), "1", "e", "m")).await.fails("stablecoin", 7);
    // SEIZE paused alone: refused in the chokepoint.
    exec(&n, &issuer, pause("issuer", &["SEIZE"])).await.ok();
    exec(&n, &seizer, seize(&seizer, &bob, &dev_addr("issuer"), "1", "e", "m")).await.fails("bank", 12).log_has("SEIZE of hkd.demo is paused");
    hkd(&n, "alice", "issuer", 1).await.ok();
    n.stop().await;
}

fn request_redemption(holder: &str, amount: &str, payout_ref: &str) -> Any {
    to_any(&spb::MsgRequestRedemption { holder: b32(holder), denom: "hkd.demo".into(), amount: amount.into(), payout_ref: payout_ref.into() })
}

fn settle(redeemer: &str, id: u64, payment_ref: &str) -> Any {
    to_any(&spb::MsgSettleRedemption { redeemer: b32(redeemer), id, payment_ref: payment_ref.into() })
}

fn reject(redeemer: &str, id: u64, reason: &str) -> Any {
    to_any(&spb::MsgRejectRedemption { redeemer: b32(redeemer), id, reason: reason.into() })
}

/// The id a request opened (its `EventRedemptionRequested`).
fn redemption_id(o: &Outcome) -> u64 {
    o.ok();
    o.attr("chain.stablecoin.v1.EventRedemptionRequested", "id").unwrap_or_else(|| panic!("no request event: {o:?}")).trim_matches('"').parse().unwrap()
}

async fn redemption(n: &TestNode, id: u64) -> Value {
    n.client.query(&format!("/chain/stablecoin/v1/redemptions/{id}")).await.unwrap()["redemption"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redemption_is_paid_or_rejected_through_the_escrow_and_each_step_is_audited() {
    let n = TestNode::start().await.unwrap();
    let (alice, escrow) = (dev_addr("alice"), lantau_app::bank::redemption_escrow());
    let bal = |a: Address| {
        let c = n.client.clone();
        async move { c.balance(&a, "hkd.demo").await.unwrap().0 }
    };
    let before = supply(&n, "hkd.demo").await;

    // The request: the amount moves into the escrow, which still counts in circulation.
    let o = exec(&n, &dev_key("alice"), request_redemption("alice", "25000", "HSBC 004-123456-001")).await;
    let id = redemption_id(&o);
    assert_eq!((bal(alice).await, bal(escrow).await), (100_000_000 - 25_000, 25_000));
    assert_eq!(supply(&n, "hkd.demo").await, before);
    let r = redemption(&n, id).await;
    assert_eq!(r["status"], "REDEMPTION_STATUS_REQUESTED", "{r}");
    assert_eq!(
        (r["holder"].as_str(), r["amount"]["amount"].as_str(), r["payout_ref"].as_str()),
        (Some(b32("alice").as_str()), Some("25000"), Some("HSBC 004-123456-001"))
    );
    let at = |f: &str| time::OffsetDateTime::parse(r[f].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
    assert_eq!(at("deadline") - at("requested_at"), time::Duration::days(1), "{r}");
    assert_eq!(r["request_tx_hash"], o.txhash());
    let row = audit_row(&n, "redemption_request", &alice).await;
    assert_eq!((row["counterparty"].as_str(), row["amount"]["amount"].as_str()), (Some(escrow.to_bech32().as_str()), Some("25000")), "{row}");
    assert_eq!(
        (row["metadata"]["redemption_id"].as_str(), row["metadata"]["payout_ref"].as_str()),
        (Some(id.to_string().as_str()), Some("HSBC 004-123456-001"))
    );

    // The treasury (a redeemer) settles it: the escrow is burned; it cannot be settled twice.
    let o = exec(&n, &dev_key("treasury"), settle("treasury", id, "CHATS-20261127-0001")).await;
    o.ok();
    assert!(o.event("chain.stablecoin.v1.EventRedemptionPaid").is_some(), "{o:?}");
    assert_eq!(bal(escrow).await, 0);
    assert_eq!(supply(&n, "hkd.demo").await.parse::<u128>().unwrap(), before.parse::<u128>().unwrap() - 25_000);
    let r = redemption(&n, id).await;
    assert_eq!(
        (r["status"].as_str(), r["payment_ref"].as_str(), r["redeemer"].as_str()),
        (Some("REDEMPTION_STATUS_PAID"), Some("CHATS-20261127-0001"), Some(b32("treasury").as_str()))
    );
    let row = audit_row(&n, "redemption_paid", &alice).await;
    assert_eq!((row["counterparty"].as_str(), row["metadata"]["redeemer"].as_str()), (Some(b32("issuer").as_str()), Some(b32("treasury").as_str())), "{row}");
    assert_eq!(row["metadata"]["payment_ref"], "CHATS-20261127-0001");
    exec(&n, &dev_key("treasury"), settle("treasury", id, "again")).await.fails("stablecoin", 32).log_has("already REDEMPTION_STATUS_PAID");
    exec(&n, &dev_key("treasury"), reject("treasury", id, "late")).await.fails("stablecoin", 32);

    // Another, rejected by the issuer itself: the escrow goes back to the holder.
    let id2 = redemption_id(&exec(&n, &dev_key("alice"), request_redemption("alice", "10000", "HSBC 004-123456-001")).await);
    assert_eq!(id2, id + 1);
    exec(&n, &dev_key("issuer"), reject("issuer", id2, "payout account does not match the customer's records")).await.ok();
    assert_eq!((bal(alice).await, bal(escrow).await), (100_000_000 - 25_000, 0));
    let r = redemption(&n, id2).await;
    assert_eq!(
        (r["status"].as_str(), r["reason"].as_str()),
        (Some("REDEMPTION_STATUS_REJECTED"), Some("payout account does not match the customer's records"))
    );
    assert_eq!(audit_row(&n, "redemption_rejected", &alice).await["metadata"]["redemption_id"], id2.to_string());

    // Refusals: a holder without an identity (or blacklisted), a signer that is neither the
    // issuer nor a redeemer, an unknown id, a missing reference, more than the balance.
    exec(&n, &dev_key("carol"), request_redemption("carol", "1", "x")).await.fails("stablecoin", 33).log_has("has no identity record");
    let id3 = redemption_id(&exec(&n, &dev_key("bob"), request_redemption("bob", "100", "bob's account")).await);
    exec(&n, &dev_key("alice"), settle("alice", id3, "p")).await.fails("stablecoin", 7);
    exec(&n, &dev_key("treasury"), settle("treasury", 999, "p")).await.fails("stablecoin", 31);
    exec(&n, &dev_key("alice"), request_redemption("alice", "1", " ")).await.fails("stablecoin", 30);
    exec(&n, &dev_key("treasury"), reject("treasury", id3, "")).await.fails("stablecoin", 30);
    exec(&n, &dev_key("alice"), request_redemption("alice", "0", "x")).await.fails("stablecoin", 10);
    exec(&n, &dev_key("alice"), request_redemption("alice", "1000000000", "x")).await.fails("sdk", 5);
    let ca = dev_key("compliance_authority");
    exec(
        &n,
        &ca,
        to_any(&kpb::MsgBlacklistAddress { authority: b32("compliance_authority"), address: b32("bob"), reason: "r".into(), evidence_ref: "e".into() }),
    )
    .await
    .ok();
    exec(&n, &dev_key("bob"), request_redemption("bob", "1", "x")).await.fails("stablecoin", 33).log_has("blacklisted");

    // REDEEM paused alone: no new request, while transfers go on and an open request is still
    // settled.
    exec(&n, &dev_key("treasury"), pause("treasury", &["REDEEM"])).await.ok();
    exec(&n, &dev_key("alice"), request_redemption("alice", "1", "x")).await.fails("stablecoin", 17).log_has("REDEEM of hkd.demo is paused");
    hkd(&n, "alice", "issuer", 1).await.ok();
    exec(&n, &dev_key("treasury"), settle("treasury", id3, "paid before the pause")).await.ok();
    exec(&n, &dev_key("treasury"), unpause("treasury", &["REDEEM"])).await.ok();

    // Lists: by holder, by status, paged.
    let list = |q: &str| {
        let c = n.client.clone();
        let q = q.to_string();
        async move { c.query(&format!("/chain/stablecoin/v1/redemptions{q}")).await.unwrap() }
    };
    let ids = |v: &Value| v["redemptions"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().parse::<u64>().unwrap()).collect::<Vec<_>>();
    assert_eq!(ids(&list(&format!("?holder={}", b32("alice"))).await), vec![id, id2]);
    assert_eq!(ids(&list("?status=PAID&denom=hkd.demo").await), vec![id, id3]);
    assert_eq!(ids(&list("?status=REDEMPTION_STATUS_REJECTED").await), vec![id2]);
    let first = list("?pagination.limit=2").await;
    assert_eq!(ids(&first), vec![id, id2]);
    let next = first["pagination"]["next_key"].as_str().unwrap().to_string();
    let rest = list(&format!("?pagination.limit=2&pagination.key={}", next.replace('+', "%2B").replace('/', "%2F").replace('=', "%3D"))).await;
    assert_eq!(ids(&rest), vec![id3]);
    assert!(rest["pagination"]["next_key"].is_null(), "{rest}");
    let bad = reqwest::get(format!("{}/chain/stablecoin/v1/redemptions?status=LATE", n.rest_url)).await.unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    assert_eq!(reqwest::get(format!("{}/chain/stablecoin/v1/redemptions/77", n.rest_url)).await.unwrap().status().as_u16(), 404);
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_redemption_past_its_deadline_is_overdue_and_the_precompile_requests_one() {
    use lantau_client::eth;
    let n = TestNode::start().await.unwrap();
    let gov = dev_key("governance");
    // Only governance sets the deadline, a whole number of seconds.
    let params_by = |who: &str, d: &str| to_any(&spb::MsgUpdateParams { authority: b32(who), params: Some(spb::Params { redemption_deadline: d.into() }) });
    let params = |d: &str| params_by("governance", d);
    exec(&n, &dev_key("issuer"), params_by("issuer", "1s")).await.fails("stablecoin", 8);
    exec(&n, &gov, params("1d")).await.fails("stablecoin", 29);
    exec(&n, &gov, params("1s")).await.ok();

    let o = exec(&n, &dev_key("alice"), request_redemption("alice", "500", "HSBC 004-123456-001")).await;
    let id = redemption_id(&o);
    let height = n.client.tx(o.txhash()).await.unwrap().unwrap().height;
    // Past the deadline, at a later block's time, it shows OVERDUE; the answer at the
    // request's height still says REQUESTED.
    lantau_test_utils::poll(Duration::from_secs(30), || async { redemption(&n, id).await["status"] == "REDEMPTION_STATUS_OVERDUE" }).await.unwrap();
    let list = n.client.query("/chain/stablecoin/v1/redemptions?status=OVERDUE").await.unwrap();
    assert_eq!(list["redemptions"][0]["id"], id.to_string(), "{list}");
    assert_eq!(n.client.query("/chain/stablecoin/v1/redemptions?status=REQUESTED").await.unwrap()["redemptions"], serde_json::json!([]));
    let then: Value = reqwest::Client::new()
        .get(format!("{}/chain/stablecoin/v1/redemptions/{id}", n.rest_url))
        .header("x-cosmos-block-height", height.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(then["redemption"]["status"], "REDEMPTION_STATUS_REQUESTED", "{then}");
    // An overdue request is still settled.
    exec(&n, &dev_key("treasury"), settle("treasury", id, "late payment")).await.ok();
    assert_eq!(redemption(&n, id).await["status"], "REDEMPTION_STATUS_PAID");

    // The EVM path: redeem(uint256,bytes) from the holder's EOA opens the same record, with a
    // Transfer to the escrow.
    exec(&n, &gov, params("86400s")).await.ok();
    let token = lantau_app::erc20::token_address("hkd.demo");
    let receipt = crate::support::eth_send(&n, &dev_key("alice"), Some(token), eth::redeem_calldata(700, "HSBC 004-123456-001")).await;
    let log = &receipt["logs"][0];
    let escrow = lantau_app::bank::redemption_escrow();
    assert_eq!(log["topics"][2].as_str().unwrap()[26..], escrow.to_hex()[2..].to_lowercase(), "{receipt}");
    // Its audit row is found by the Ethereum hash and carries it.
    let eth_hash = receipt["transactionHash"].as_str().unwrap();
    let rows = n.client.query(&format!("/chain/compliance/v1/audit_log?tx_hash={eth_hash}&tx_type=redemption_request")).await.unwrap();
    assert_eq!(rows["entries"][0]["metadata"]["eth_tx_hash"], eth_hash, "{rows}");
    let mine = n.client.query(&format!("/chain/stablecoin/v1/redemptions?holder={}&status=REQUESTED", b32("alice"))).await.unwrap();
    let r = &mine["redemptions"][0];
    assert_eq!((r["amount"]["amount"].as_str(), r["payout_ref"].as_str()), (Some("700"), Some("HSBC 004-123456-001")), "{mine}");
    // Paused, the precompile's request reverts with the same reason.
    exec(&n, &dev_key("issuer"), pause("issuer", &["REDEEM"])).await.ok();
    let data = eth::redeem_calldata(1, "x");
    let body = serde_json::json!([{"from": dev_addr("alice").to_hex(), "to": token.to_hex(), "data": format!("0x{}", const_hex::encode(data))}, "latest"]);
    let e = crate::support::eth_rpc(&n, "eth_call", &body).await;
    assert_eq!(e["error"]["message"], "execution reverted: REDEEM of hkd.demo is paused by its issuer", "{e}");
    n.stop().await;
}

//! Property test of the compliance module on the state machine: random sequences of
//! stablecoin transfers (good, wrong-tier and payload-less; by primary keys, a reviewer key and
//! an agent key), rule updates, sanctions pushes, flag reviews and the agent's revocation.
//! After every run: stablecoin supply is conserved, every screened transfer has exactly one
//! `transfer` audit row, the audit sequence has no gaps, and admission and execution agree on
//! every gate verdict when state did not change in between.

use std::sync::Arc;

use lantau_app::compliance::{AuditFilter, Params, Rules};
use lantau_app::tendermint::abci::{request, types::CommitInfo};
use lantau_app::tendermint::{account, Hash, Time};
use lantau_app::{App, AppConfig, AppGenesis, NoHook};
use lantau_client::{msg_send, to_any, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_proto::chain::compliance::v1 as cpb;
use lantau_proto::chain::kyc::v1::{Identity, Level};
use proptest::prelude::*;

pub(crate) const DENOM: &str = "hkd.t";
const START: u128 = 10_000_000;

pub(crate) fn key(i: u8) -> SecretKey {
    SecretKey::from_bytes(&lantau_crypto::sha256(&[i, 42])).unwrap()
}

/// k0 governance, compliance authority and issuer (LEVEL_LICENSED_ISSUER, VASP-0); k1, k2 full
/// tier (VASP-1, VASP-2); k3 minimal tier; k4 no identity; k5 (no identity) becomes k0's
/// reviewer and k6 (no identity) k1's agent in the first two blocks.
pub(crate) fn genesis(keys: &[SecretKey]) -> Vec<u8> {
    let mut g = AppGenesis { evm_chain_id: 852, ..Default::default() };
    g.authority.governance = Some(keys[0].address());
    g.compliance.params = Some(Params { authority: String::new(), rules: Some(lantau_app::compliance::default_rules()), block_requires_officer: false });
    let id = |k: &SecretKey, level: Level, vasp: &str, r: &str| Identity {
        address: k.address().to_bech32(),
        level: level as i32,
        vasp_identifier: vasp.into(),
        ivms101_off_chain_ref: r.into(),
        ..Default::default()
    };
    g.kyc.params = Some(lantau_app::kyc::tier::default_params());
    g.kyc.identities = vec![
        id(&keys[0], Level::LicensedIssuer, "VASP-0", "r0"),
        id(&keys[1], Level::RetailPlus, "VASP-1", "r1"),
        id(&keys[2], Level::Institutional, "VASP-2", "r2"),
        id(&keys[3], Level::RetailBasic, "", "r3"),
    ];
    g.stablecoin.denoms.push(lantau_proto::chain::stablecoin::v1::Denom {
        denom: DENOM.into(),
        display: "HKD".into(),
        issuer: keys[0].address().to_bech32(),
        decimals: 2,
    });
    for (i, k) in keys.iter().enumerate() {
        let mut coins = vec![Coin::new(NATIVE_DENOM, 10u128.pow(24))];
        if i > 0 {
            coins.push(Coin::new(DENOM, START));
        }
        g.bank.balances.push(lantau_app::bank::genesis::Balance { address: k.address(), coins });
    }
    serde_json::to_vec(&g).unwrap()
}

pub(crate) fn block_req(height: u64, txs: Vec<Vec<u8>>) -> request::FinalizeBlock {
    request::FinalizeBlock {
        txs: txs.into_iter().map(bytes::Bytes::from).collect(),
        decided_last_commit: CommitInfo { round: Default::default(), votes: vec![] },
        misbehavior: vec![],
        hash: Hash::Sha256(lantau_crypto::sha256(&height.to_be_bytes())),
        height: height.try_into().unwrap(),
        time: Time::from_unix_timestamp(1_700_000_000 + 5 * i64::try_from(height).unwrap(), 0).unwrap(),
        next_validators_hash: Hash::None,
        proposer_address: account::Id::new([1; 20]),
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// (from 1..5, to 1..5, amount, payload: 0 registry-correct, 1 wrong tier, 2 none)
    Transfer(usize, usize, u128, u8),
    Rule(u64, u64, u64),
    /// (sanction VASP-1, sanction VASP-2, blacklist k4)
    Sanctions(bool, bool, bool),
    /// k5 reviews flag `id` with decision 0 APPROVED, 1 BLOCKED, 2 ESCALATED, 3 invalid.
    Review(u64, u8),
    /// k1 revokes its agent k6.
    RevokeAgent,
    /// (from 1..5, to 1..5, a, b): one MsgMultiSend paying `to` twice (a, then b) and k4 some
    /// native coin: two stablecoin movements in one message.
    MultiSend(usize, usize, u128, u128),
    /// k0, the issuer, mints `amount` to (0..5).
    Mint(usize, u128),
    /// k0 burns.
    Burn(u128),
}

/// The gate codes: an admitted transaction never fails with one of these at execution when
/// nothing changed in between.
const GATE_CODES: [u32; 8] = [11, 13, 14, 18, 19, 20, 21, 22];

pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (1usize..7, 1usize..7, 1u128..1_500_000, 0u8..3).prop_map(|(f, t, a, p)| Op::Transfer(f, t, a, p)),
        2 => (1u64..6, 0u8..4).prop_map(|(id, d)| Op::Review(id, d)),
        1 => Just(Op::RevokeAgent),
        1 => (100_000u64..1_000_000, 1u64..120, 1u64..6).prop_map(|(a, b, c)| Op::Rule(a, b, c)),
        1 => (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(a, b, c)| Op::Sanctions(a, b, c)),
        2 => (1usize..5, 1usize..5, 1u128..700_000, 1u128..700_000).prop_map(|(f, t, a, b)| Op::MultiSend(f, t, a, b)),
        1 => (0usize..5, 1u128..1_000_000).prop_map(|(t, a)| Op::Mint(t, a)),
        1 => (1u128..1_000_000).prop_map(Op::Burn),
    ]
}

fn payload(keys: &[SecretKey], from: usize, to: usize, kind: u8) -> Option<cpb::TravelRulePayload> {
    // k5 and k6 are sub-keys: their payload is their parent's (k0, k1).
    let (refs, vasps, tiers) = (
        ["r0", "r1", "r2", "r3", "", "r0", "r1"],
        ["VASP-0", "VASP-1", "VASP-2", "", "", "VASP-0", "VASP-1"],
        ["full", "full", "full", "minimal", "none", "full", "full"],
    );
    let _ = keys;
    match kind {
        2 => None,
        k => Some(cpb::TravelRulePayload {
            tx_hash: String::new(),
            originator_ref: refs[from].into(),
            beneficiary_ref: refs[to].into(),
            originator_vasp: vasps[from].into(),
            beneficiary_vasp: vasps[to].into(),
            tier: if k == 1 { (if tiers[from] == "full" { "minimal" } else { "full" }).into() } else { tiers[from].into() },
        }),
    }
}

/// A fresh app on a temporary store, its chain initialised from `genesis` (JSON app state) at
/// block time 1,700,000,000; the init error, if any, is returned with the app.
pub(crate) async fn new_chain(chain_id: &str, genesis: Vec<u8>) -> (tempfile::TempDir, App, Result<(), lantau_app::AppError>) {
    new_chain_with(chain_id, genesis, AppConfig::default()).await
}

/// [`new_chain`] with this app config.
pub(crate) async fn new_chain_with(chain_id: &str, genesis: Vec<u8>, cfg: AppConfig) -> (tempfile::TempDir, App, Result<(), lantau_app::AppError>) {
    let dir = tempfile::tempdir().unwrap();
    let app = App::load(dir.path().to_path_buf(), cfg, Arc::new(NoHook)).await.unwrap();
    let init = app
        .init_chain(request::InitChain {
            time: Time::from_unix_timestamp(1_700_000_000, 0).unwrap(),
            chain_id: chain_id.into(),
            consensus_params: super::determinism::test_params(),
            validators: vec![],
            app_state_bytes: genesis.into(),
            initial_height: 1u32.into(),
        })
        .await
        .map(|_| ());
    (dir, app, init)
}

async fn run(ops: Vec<Op>) -> (usize, usize) {
    let h = history(ops).await;
    h.app.release().await;
    (h.screened_ok, h.rejected)
}

/// A chain after a history of `ops`, its invariants checked.
pub(crate) struct History {
    /// The store's directory.
    pub(crate) _dir: tempfile::TempDir,
    /// The app, open on it.
    pub(crate) app: App,
    /// k0..k6.
    pub(crate) keys: Vec<SecretKey>,
    /// The height of the last block.
    pub(crate) height: u64,
    /// With `record`: the queries' answers after each block, by height.
    pub(crate) answers: std::collections::BTreeMap<u64, crate::export::Answers>,
    screened_ok: usize,
    rejected: usize,
}

/// Runs `ops` (one transaction a block, after the two setup blocks) on a new chain `prop-1`
/// and checks the invariants.
pub(crate) async fn history(ops: Vec<Op>) -> History {
    history_with(ops, AppConfig::default(), false).await
}

/// [`history`] on an app with `cfg`; with `record`, every block's query answers are kept.
pub(crate) async fn history_with(ops: Vec<Op>, cfg: AppConfig, record: bool) -> History {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (dir, app, init) = new_chain_with("prop-1", genesis(&keys), cfg).await;
    let mut answers = std::collections::BTreeMap::new();
    init.unwrap();
    let mut seqs = [0u64; 7];
    let mut screened_ok = 0usize;
    let mut rejected = 0usize;
    // Every committed stablecoin movement between accounts, from the bank's events.
    let mut movements: Vec<(String, String, String)> = Vec::new();
    let mut issuances = 0usize;
    let bind = |parent: usize, sub: usize, role: cpb::SubRole, envelope: Option<cpb::PolicyEnvelope>| {
        to_any(&cpb::MsgBindSubRole {
            parent: keys[parent].address().to_bech32(),
            sub_addr: keys[sub].address().to_bech32(),
            role: role as i32,
            label: String::new(),
            policy_envelope: envelope,
        })
    };
    let cap = |n: u128| Some(lantau_client::pb_coin(&Coin::new(DENOM, n)));
    let setup = [
        (0, bind(0, 5, cpb::SubRole::Reviewer, None)),
        (1, bind(1, 6, cpb::SubRole::Agent, Some(cpb::PolicyEnvelope { daily_cap: cap(1_000_000), per_tx_cap: cap(600_000) }))),
    ];
    for (i, (signer, msg)) in setup.into_iter().enumerate() {
        let tx = TxBuilder::new(vec![msg])
            .gas(1_000_000)
            .sign(&keys[signer], &SignerData { chain_id: "prop-1".into(), account_number: u64::try_from(signer).unwrap(), sequence: seqs[signer] });
        seqs[signer] += 1;
        let r = app.finalize_block(block_req(u64::try_from(i).unwrap() + 1, vec![tx])).await.unwrap();
        app.commit().await.unwrap();
        assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
        if record {
            answers.insert(u64::try_from(i).unwrap() + 1, crate::export::answers(&app, &keys, 0).await);
        }
    }
    let mut height = 2;
    for (i, op) in ops.into_iter().enumerate() {
        height = u64::try_from(i).unwrap() + 1 + 2;
        let op_kind = op.clone();
        let (signer, msg, p) = match op {
            Op::Review(id, d) => (
                5,
                to_any(&cpb::MsgReviewFlag {
                    reviewer: keys[5].address().to_bech32(),
                    flag_id: id.to_string(),
                    decision: ["APPROVED", "BLOCKED", "ESCALATED", "MAYBE"][usize::from(d)].into(),
                    reviewer_evidence_hash: "e".into(),
                }),
                None,
            ),
            Op::RevokeAgent => (1, to_any(&cpb::MsgRevokeSubRole { parent: keys[1].address().to_bech32(), sub_addr: keys[6].address().to_bech32() }), None),
            Op::Transfer(f, t, a, k) => (f, msg_send(&keys[f].address(), &keys[t].address(), &[Coin::new(DENOM, a)]), payload(&keys, f, t, k)),
            Op::MultiSend(f, t, a, b) => {
                use cosmos_sdk_proto::cosmos::bank::v1beta1 as bpb;
                let c = |d: &str, n: u128| lantau_client::pb_coin(&Coin::new(d, n));
                let mut input = vec![c(NATIVE_DENOM, 7), c(DENOM, a + b)];
                input.sort_by(|x, y| x.denom.cmp(&y.denom));
                let m = bpb::MsgMultiSend {
                    inputs: vec![bpb::Input { address: keys[f].address().to_bech32(), coins: input }],
                    outputs: vec![
                        bpb::Output { address: keys[t].address().to_bech32(), coins: vec![c(DENOM, a)] },
                        bpb::Output { address: keys[4].address().to_bech32(), coins: vec![c(NATIVE_DENOM, 7)] },
                        bpb::Output { address: keys[t].address().to_bech32(), coins: vec![c(DENOM, b)] },
                    ],
                };
                (f, to_any(&m), payload(&keys, f, t, 0))
            }
            Op::Mint(t, a) => (
                0,
                to_any(&lantau_proto::chain::stablecoin::v1::MsgMint {
                    issuer: keys[0].address().to_bech32(),
                    recipient: keys[t].address().to_bech32(),
                    amount: Some(lantau_client::pb_coin(&Coin::new(DENOM, a))),
                }),
                None,
            ),
            Op::Burn(a) => (
                0,
                to_any(&lantau_proto::chain::stablecoin::v1::MsgBurn {
                    issuer: keys[0].address().to_bech32(),
                    amount: Some(lantau_client::pb_coin(&Coin::new(DENOM, a))),
                }),
                None,
            ),
            Op::Rule(th, w, l) => (
                0,
                to_any(&cpb::MsgUpdateRule {
                    authority: keys[0].address().to_bech32(),
                    rules: Some(Rules { travel_rule_full_threshold: th, velocity_window_seconds: w, velocity_tx_limit: l }),
                }),
                None,
            ),
            Op::Sanctions(v1, v2, a4) => (
                0,
                to_any(&cpb::MsgUpdateSanctionsList {
                    authority: keys[0].address().to_bech32(),
                    blocked_addresses: if a4 { vec![keys[4].address().to_bech32()] } else { vec![] },
                    blocked_vasps: [(v1, "VASP-1"), (v2, "VASP-2")].iter().filter(|(b, _)| *b).map(|(_, v)| v.to_string()).collect(),
                    reason: String::new(),
                    evidence_ref: "doc".into(),
                }),
                None,
            ),
        };
        // A message that does not decode (an invalid decision) fails before the ante: its
        // transaction consumes no sequence.
        let consumes_sequence = !matches!(op_kind, Op::Review(_, 3));
        let mut b = TxBuilder::new(vec![msg]).gas(1_000_000);
        if let Some(p) = &p {
            b = b.travel_rule(p);
        }
        let tx = b.sign(&keys[signer], &SignerData { chain_id: "prop-1".into(), account_number: u64::try_from(signer).unwrap(), sequence: seqs[signer] });
        if consumes_sequence {
            seqs[signer] += 1;
        }
        // Admission on the committed state, then execution of the same bytes in the next block.
        let admitted = app.check_tx_bytes(&tx).await.result;
        let r = app.finalize_block(block_req(height, vec![tx])).await.unwrap();
        app.commit().await.unwrap();
        if record {
            answers.insert(height, crate::export::answers(&app, &keys, 0).await);
        }
        let exec = &r.tx_results[0];
        match &admitted {
            Err(e) if e.codespace == "compliance" => {
                rejected += 1;
                assert_eq!((exec.codespace.as_str(), exec.code.value(), exec.log.as_str()), (e.codespace, e.code, e.log.as_str()), "verdicts differ");
            }
            Err(e) => panic!("unexpected admission failure {e:?}"),
            Ok(()) => assert!(!(exec.codespace == "compliance" && GATE_CODES.contains(&exec.code.value())), "admitted but rejected by a gate: {}", exec.log),
        }
        if exec.code.is_ok() && op_is_transfer(&r) {
            screened_ok += 1;
        }
        if exec.code.is_ok() {
            movements.extend(stablecoin_movements(&r));
            if matches!(op_kind, Op::Mint(..) | Op::Burn(..)) {
                issuances += 1;
            }
        }
    }
    let snap = app.snapshot();
    // Supply conserved: the balances add up to the supply, which moved only by the issuer's
    // audited mints and burns.
    let mut total = 0u128;
    for k in &keys {
        total += lantau_app::bank::query::balance(&snap, &k.address(), DENOM).await.unwrap().0;
    }
    let supply = lantau_app::bank::query::supply(&snap, DENOM).await.unwrap().0;
    assert_eq!(total, supply);
    let rows = lantau_app::compliance::query::audit_log(&snap, &AuditFilter::default()).await.unwrap();
    let minted: u128 = rows.iter().filter(|r| r.tx_type == "mint").map(|r| r.amount.as_ref().unwrap().amount.parse::<u128>().unwrap()).sum();
    let burned: u128 = rows.iter().filter(|r| r.tx_type == "burn").map(|r| r.amount.as_ref().unwrap().amount.parse::<u128>().unwrap()).sum();
    assert_eq!(supply, 6 * START + minted - burned);
    assert_eq!(rows.iter().filter(|r| r.tx_type == "mint" || r.tx_type == "burn").count(), issuances);
    // Every committed stablecoin movement between accounts has exactly one `transfer` audit
    // row with the same sender, recipient and amount, and there is no other transfer row.
    let mut audited: Vec<(String, String, String)> = rows
        .iter()
        .filter(|r| r.tx_type == "transfer")
        .map(|r| (r.subject.clone(), r.counterparty.clone(), format!("{}{}", r.amount.as_ref().unwrap().amount, r.amount.as_ref().unwrap().denom)))
        .collect();
    audited.sort();
    movements.sort();
    assert_eq!(audited, movements, "movements and transfer audit rows differ");
    assert!(rows.iter().filter(|r| r.tx_type == "transfer").count() >= screened_ok);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.sequence, u64::try_from(i).unwrap() + 1, "audit sequence has a gap");
    }
    // The flags and velocity windows (non-verifiable records, raised, overwritten and reviewed
    // above) sum to the lattice the app hash commits to.
    lantau_app::compliance::records::check(&snap).await.unwrap();
    if screened_ok > 0 {
        // A screened transfer wrote its sender's velocity window.
        assert_ne!(lantau_app::compliance::records::lattice(&snap).await.unwrap(), lantau_app::compliance::records::Lattice::identity());
    }
    History { _dir: dir, app, keys, height, answers, screened_ok, rejected }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_history_exercises_successes_rejections_and_updates() {
    let ops = vec![
        Op::Transfer(1, 2, 100, 0),
        Op::Transfer(3, 1, 50, 0),
        Op::Transfer(3, 1, 900_000, 0),
        Op::Transfer(1, 2, 5, 2),
        Op::Sanctions(false, false, true),
        Op::Transfer(2, 1, 7, 0),
        Op::Sanctions(true, false, false),
        Op::Transfer(2, 1, 7, 0),
        Op::Sanctions(false, false, false),
        Op::Transfer(1, 2, 5, 0),
        Op::Rule(100_000, 60, 2),
        Op::Transfer(1, 2, 150_000, 0),
        Op::Transfer(4, 1, 5, 0),
        // The agent within and over its caps; the reviewer may not send (11).
        Op::Transfer(6, 2, 500_000, 0),
        Op::Transfer(6, 2, 600_001, 0),
        Op::Transfer(6, 2, 500_001, 0),
        Op::Transfer(5, 1, 1, 0),
        // Flag 1 is the large 1→2 (threshold); BLOCKED blacklists k1, whose agent k6 then
        // stops (18), as does k1; reviewing it again fails in the block (7, not a gate).
        Op::Review(1, 1),
        Op::Transfer(6, 2, 1, 0),
        Op::Transfer(1, 2, 1, 0),
        Op::Review(1, 0),
        Op::Review(2, 3),
        Op::RevokeAgent,
        Op::Transfer(6, 2, 1, 0),
    ];
    let (ok, rejected) = run(ops).await;
    // Successes: 1, 2, the first 2→1, 1→2 after the lifted sanction, the large 1→2 (flagged, not
    // blocked), the agent's 500,000. Rejections: minimal over threshold (21), no payload (20),
    // 2→1 to a sanctioned VASP (19), blacklisted sender (18), the agent over its per-tx (13) and
    // daily (13) caps, the reviewer's send (11), the agent and k1 after the BLOCKED review (18,
    // 18), the invalid decision (9, at decoding), the revoked agent (11).
    assert_eq!((ok, rejected), (6, 11));
}

/// The stablecoin movements between accounts of a block's first result, one per coin of each
/// bank `transfer` event (sender, recipient, amount).
fn stablecoin_movements(r: &lantau_app::tendermint::abci::response::FinalizeBlock) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for e in r.tx_results[0].events.iter().filter(|e| e.kind == "transfer") {
        let get = |k: &str| e.attributes.iter().find(|a| a.key_str().unwrap() == k).unwrap().value_str().unwrap().to_string();
        let (from, to, amount) = (get("sender"), get("recipient"), get("amount"));
        for coin in amount.split(',').filter(|c| c.ends_with(DENOM)) {
            out.push((from.clone(), to.clone(), coin.to_string()));
        }
    }
    out
}

/// Whether a successful result was a stablecoin transfer (its events carry a hkd amount).
fn op_is_transfer(r: &lantau_app::tendermint::abci::response::FinalizeBlock) -> bool {
    r.tx_results[0].events.iter().any(|e| e.kind == "transfer" && e.attributes.iter().any(|a| a.value_str().is_ok_and(|v| v.ends_with(DENOM))))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn compliance_invariants_hold_over_random_histories(ops in proptest::collection::vec(op(), 1..25)) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(run(ops));
    }
}

//! Export and import, as the Cosmos SDK's import/export test does it: a random history
//! (gated transfers, multi-sends, mints and burns, sanctions, rule updates, flags raised and
//! reviewed, sub-roles and an agent's window), exported, imported into a fresh store, exported
//! again: the two exports are byte-equal, every query answers the same, and the next block
//! reaches the same app hash on the old chain and the imported one. An edited export is
//! refused.

use std::sync::Arc;

use base64::Engine as _;
use lantau_app::export::StateExport;
use lantau_app::tendermint::abci::request;
use lantau_app::tendermint::Time;
use lantau_app::{App, AppConfig, NoHook};
use lantau_client::{msg_send, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::{Coin, NATIVE_DENOM};
use proptest::prelude::*;
use prost::Message;

use crate::compliance_props::{block_req, history, op, Op};

/// Each query's method and its answer (the bytes, or the error's text).
pub(crate) type Answers = Vec<(String, Result<Vec<u8>, String>)>;

fn app_state(e: &StateExport) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"evm_chain_id": "852", "exported": e})).unwrap()
}

/// A fresh store whose chain `chain_id` starts from `e` at the height after it.
async fn import(chain_id: &str, e: &StateExport) -> (tempfile::TempDir, App, Result<(), lantau_app::AppError>) {
    let dir = tempfile::tempdir().unwrap();
    let app = App::load(dir.path().to_path_buf(), AppConfig::default(), Arc::new(NoHook)).await.unwrap();
    let init = app
        .init_chain(request::InitChain {
            time: Time::from_unix_timestamp(1_700_000_000, 0).unwrap(),
            chain_id: chain_id.into(),
            consensus_params: crate::determinism::test_params(),
            validators: vec![],
            app_state_bytes: app_state(e).into(),
            initial_height: (e.height + 1).try_into().unwrap(),
        })
        .await
        .map(|_| ());
    (dir, app, init)
}

/// The answers of every module's queries at `height` (0: the latest), for every key and for the
/// whole chain.
pub(crate) async fn answers(app: &App, keys: &[SecretKey], height: u64) -> Answers {
    use cosmos_sdk_proto::cosmos::{auth::v1beta1 as auth, bank::v1beta1 as bank, upgrade::v1beta1 as upgrade};
    use lantau_proto::chain::{compliance::v1 as c, kyc::v1 as kyc, reserve::v1 as reserve, stablecoin::v1 as sc};
    let mut q: Vec<(&str, Vec<u8>)> = vec![
        ("/cosmos.bank.v1beta1.Query/TotalSupply", bank::QueryTotalSupplyRequest::default().encode_to_vec()),
        ("/cosmos.bank.v1beta1.Query/Params", bank::QueryParamsRequest::default().encode_to_vec()),
        ("/cosmos.auth.v1beta1.Query/Params", auth::QueryParamsRequest::default().encode_to_vec()),
        ("/chain.compliance.v1.Query/AuditLog", c::QueryAuditLogRequest::default().encode_to_vec()),
        ("/chain.compliance.v1.Query/Flags", c::QueryFlagsRequest::default().encode_to_vec()),
        ("/chain.compliance.v1.Query/Params", c::QueryParamsRequest::default().encode_to_vec()),
        ("/chain.compliance.v1.Query/SanctionsSet", c::QuerySanctionsSetRequest::default().encode_to_vec()),
        ("/chain.compliance.v1.Query/Report", c::QueryReportRequest { format: "json".into(), ..Default::default() }.encode_to_vec()),
        ("/chain.kyc.v1.Query/Params", kyc::QueryParamsRequest::default().encode_to_vec()),
        ("/chain.reserve.v1.Query/Params", reserve::QueryParamsRequest::default().encode_to_vec()),
        ("/chain.stablecoin.v1.Query/Denoms", sc::QueryDenomsRequest::default().encode_to_vec()),
        ("/cosmos.upgrade.v1beta1.Query/ModuleVersions", upgrade::QueryModuleVersionsRequest::default().encode_to_vec()),
        ("/cosmos.upgrade.v1beta1.Query/CurrentPlan", upgrade::QueryCurrentPlanRequest::default().encode_to_vec()),
    ];
    for k in keys {
        let a = k.address().to_bech32();
        q.push(("/cosmos.bank.v1beta1.Query/AllBalances", bank::QueryAllBalancesRequest { address: a.clone(), ..Default::default() }.encode_to_vec()));
        q.push(("/cosmos.auth.v1beta1.Query/Account", auth::QueryAccountRequest { address: a.clone() }.encode_to_vec()));
        q.push(("/chain.kyc.v1.Query/Identity", kyc::QueryIdentityRequest { address: a.clone() }.encode_to_vec()));
        q.push(("/chain.stablecoin.v1.Query/Frozen", sc::QueryFrozenRequest { address: a.clone() }.encode_to_vec()));
        q.push(("/chain.compliance.v1.Query/SubRoleBindings", c::QuerySubRoleBindingsRequest { parent: a.clone(), ..Default::default() }.encode_to_vec()));
        q.push(("/chain.compliance.v1.Query/AuditLog", c::QueryAuditLogRequest { subject: a.clone(), ..Default::default() }.encode_to_vec()));
        q.push(("/chain.reserve.v1.Query/LatestAttestation", reserve::QueryLatestAttestationRequest { issuer: a.clone() }.encode_to_vec()));
    }
    let mut out = Vec::new();
    for (method, req) in q {
        out.push((method.to_string(), app.queries().grpc_query(height, method, &req).await.map_err(|e| e.to_string())));
    }
    out
}

/// A native-coin send from k1 to k2 with k1's next sequence on `app`.
async fn next_tx(app: &App, keys: &[SecretKey]) -> Vec<u8> {
    let sequence = app.queries().pending_sequence(&keys[1].address()).await.unwrap();
    TxBuilder::new(vec![msg_send(&keys[1].address(), &keys[2].address(), &[Coin::new(NATIVE_DENOM, 5u128)])])
        .gas(1_000_000)
        .sign(&keys[1], &SignerData { chain_id: "prop-1".into(), account_number: 1, sequence })
}

async fn round_trip(ops: Vec<Op>) {
    let h = history(ops).await;
    let first = lantau_app::export::export(&h.app.snapshot()).await.unwrap();
    assert_eq!(first.height, h.height);
    assert_eq!(first.app_hash, const_hex::encode_upper(h.app.queries().app_hash().await.unwrap().as_bytes()));
    let (_dir, imported, init) = import("prop-1", &first).await;
    init.unwrap();
    assert_eq!(imported.queries().last_height().await.unwrap(), h.height);
    let second = lantau_app::export::export(&imported.snapshot()).await.unwrap();
    assert_eq!(serde_json::to_vec(&second).unwrap(), serde_json::to_vec(&first).unwrap(), "the export of the imported chain differs");
    let (before, after) = (answers(&h.app, &h.keys, 0).await, answers(&imported, &h.keys, 0).await);
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b, a, "{} answers differently after the import", b.0);
    }
    assert!(before.iter().filter(|(_, r)| r.is_ok()).count() > 40, "the queries answered: {before:?}");
    // The chain goes on from the height after the export, on both stores alike.
    let tx = next_tx(&h.app, &h.keys).await;
    let next = h.height + 1;
    let r1 = h.app.finalize_block(block_req(next, vec![tx.clone()])).await.unwrap();
    let r2 = imported.finalize_block(block_req(next, vec![tx])).await.unwrap();
    assert!(r1.tx_results[0].code.is_ok(), "{}", r1.tx_results[0].log);
    assert_eq!(r1.tx_results, r2.tx_results);
    assert_eq!(r1.app_hash, r2.app_hash, "the imported chain's next block reaches another app hash");
    h.app.commit().await.unwrap();
    imported.commit().await.unwrap();
    imported.release().await;
    h.app.release().await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]
    #[test]
    fn an_export_imports_to_the_same_state_and_exports_again_byte_equal(ops in proptest::collection::vec(op(), 4..20)) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(round_trip(ops));
    }
}

/// A history with a flag reviewed, a sanctions push, an agent and a mint.
pub(crate) fn fixed_ops() -> Vec<Op> {
    vec![
        Op::Transfer(1, 2, 900_000, 0),
        Op::Transfer(6, 2, 500_000, 0),
        Op::Sanctions(false, true, false),
        Op::Review(1, 2),
        Op::Mint(3, 1_000),
        Op::MultiSend(1, 2, 10, 20),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_history_round_trips() {
    round_trip(fixed_ops()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_export_is_refused_and_writes_nothing() {
    let h = history(fixed_ops()).await;
    let good = lantau_app::export::export(&h.app.snapshot()).await.unwrap();
    h.app.release().await;
    let b64 = base64::engine::general_purpose::STANDARD;
    let section = |e: &mut StateExport, name: &str| -> usize { e.modules.iter().position(|m| m.module == name).unwrap() };

    let mut cases: Vec<(&str, StateExport, &str)> = Vec::new();
    // An audit row's amount changed: the row no longer chains to the verifiable head.
    let mut e = good.clone();
    let i = section(&mut e, "compliance");
    let key_of = |r: &lantau_app::export::Entry| r.key.clone().map(String::into_bytes).unwrap_or_else(|| hex::decode(r.key_hex.as_deref().unwrap()).unwrap());
    let row = e.modules[i].records.iter_mut().find(|r| key_of(r).starts_with(lantau_app::compliance::state_key::AUDIT_ROW_PREFIX)).unwrap();
    let mut v = b64.decode(&row.value).unwrap();
    let last = v.len() - 1;
    v[last] ^= 1;
    row.value = b64.encode(v);
    cases.push(("an edited audit row", e, ""));
    // The same edit with app_hash emptied: the module's restore check still refuses it.
    let mut e = cases[0].1.clone();
    e.app_hash.clear();
    cases.push(("an edited audit row, app_hash emptied", e, ""));
    // A balance changed: the root is not the exported app hash.
    let mut e = good.clone();
    let i = section(&mut e, "bank");
    let bal = e.modules[i].state.iter_mut().find(|r| r.key.as_deref().is_some_and(|k| k.contains("hkd.t"))).unwrap();
    let mut v = b64.decode(&bal.value).unwrap();
    let last = v.len() - 1;
    v[last] ^= 1;
    bal.value = b64.encode(v);
    cases.push(("an edited balance", e, "is not the exported app_hash"));
    // A key in another module's section.
    let mut e = good.clone();
    let (b, k) = (section(&mut e, "bank"), section(&mut e, "kyc"));
    let moved = e.modules[b].state.remove(0);
    e.modules[k].state.push(moved);
    cases.push(("a key in another module's section", e, "is not the kyc module's"));
    // A section for no module of this build.
    let mut e = good.clone();
    e.modules.push(lantau_app::export::ModuleState { module: "staking".into(), state: vec![], records: vec![] });
    cases.push(("a section for no module", e, "not a module of this build"));
    // Another format.
    let mut e = good.clone();
    e.format = 2;
    cases.push(("another format", e, "export format 2"));
    for (what, e, says) in cases {
        let (_dir, app, init) = import("prop-1", &e).await;
        let err = init.expect_err(what).to_string();
        assert!(err.contains(says), "{what}: {err}");
        assert_eq!(app.chain_id(), "", "{what}: the refused import wrote a chain");
        assert_eq!(app.queries().last_height().await.unwrap(), 0, "{what}");
        app.release().await;
    }

    // Another chain id: refused while app_hash binds the file, accepted once it is emptied.
    let (_dir, app, init) = import("prop-2", &good).await;
    assert!(init.unwrap_err().to_string().contains("chain_id differs from the export"));
    app.release().await;
    let mut e = good.clone();
    e.app_hash.clear();
    let (_dir, app, init) = import("prop-2", &e).await;
    init.unwrap();
    assert_eq!(app.chain_id(), "prop-2");
    assert_eq!(lantau_app::export::export(&app.snapshot()).await.unwrap().app_value(lantau_app::state_key::CHAIN_ID).unwrap(), b"prop-2");
    app.release().await;
}

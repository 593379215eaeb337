//! PrepareProposal and ProcessProposal judge a block's transactions as the block will meet
//! them: in order, on the committed state, through the pipeline's ante and gates, within the
//! consensus parameter `block.max_gas`.

use std::sync::Arc;

use lantau_app::tendermint::abci::{request, response};
use lantau_app::tendermint::Time;
use lantau_app::{App, AppConfig, NoHook};
use lantau_client::{msg_send, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::Coin;
use lantau_proto::chain::compliance::v1 as cpb;

use crate::compliance_props::{genesis, key, DENOM};

const CHAIN: &str = "proposals-1";

async fn chain_with_max_gas(keys: &[SecretKey], max_gas: i64) -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    let app = App::load(dir.path().to_path_buf(), AppConfig::default(), Arc::new(NoHook)).await.unwrap();
    let mut params = crate::determinism::test_params();
    params.block.max_gas = max_gas;
    app.init_chain(request::InitChain {
        time: Time::from_unix_timestamp(1_700_000_000, 0).unwrap(),
        chain_id: CHAIN.into(),
        consensus_params: params,
        validators: vec![],
        app_state_bytes: genesis(keys).into(),
        initial_height: 1u32.into(),
    })
    .await
    .unwrap();
    (dir, app)
}

/// k`from` (full tier) pays k`to` 500 with the Travel Rule payload the genesis supports.
fn transfer(keys: &[SecretKey], from: usize, to: usize, sequence: u64) -> bytes::Bytes {
    let (refs, vasps) = (["r0", "r1", "r2", "r3", ""], ["VASP-0", "VASP-1", "VASP-2", "", ""]);
    let payload = cpb::TravelRulePayload {
        tx_hash: String::new(),
        originator_ref: refs[from].into(),
        beneficiary_ref: refs[to].into(),
        originator_vasp: vasps[from].into(),
        beneficiary_vasp: vasps[to].into(),
        tier: "full".into(),
    };
    let b = TxBuilder::new(vec![msg_send(&keys[from].address(), &keys[to].address(), &[Coin::new(DENOM, 500u128)])]).gas(400_000).travel_rule(&payload);
    b.sign(&keys[from], &SignerData { chain_id: CHAIN.into(), account_number: from as u64, sequence }).into()
}

fn prepare(txs: Vec<bytes::Bytes>) -> request::PrepareProposal {
    request::PrepareProposal {
        max_tx_bytes: 1 << 20,
        txs,
        local_last_commit: None,
        misbehavior: vec![],
        height: 1u32.into(),
        time: Time::from_unix_timestamp(1_700_000_001, 0).unwrap(),
        next_validators_hash: Default::default(),
        proposer_address: lantau_app::tendermint::account::Id::new([0; 20]),
    }
}

fn process(txs: Vec<bytes::Bytes>) -> request::ProcessProposal {
    request::ProcessProposal {
        txs,
        proposed_last_commit: None,
        misbehavior: vec![],
        hash: Default::default(),
        height: 1u32.into(),
        time: Time::from_unix_timestamp(1_700_000_001, 0).unwrap(),
        next_validators_hash: Default::default(),
        proposer_address: lantau_app::tendermint::account::Id::new([0; 20]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_is_judged_in_order_through_the_ante_the_gates_and_the_block_gas() {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (_dir, app) = chain_with_max_gas(&keys, 1_000_000).await;
    let accept = response::ProcessProposal::Accept;
    let reject = response::ProcessProposal::Reject;

    // Two transfers of one sender in sequence order, and one of another sender: accepted.
    let good = vec![transfer(&keys, 1, 2, 0), transfer(&keys, 1, 2, 1)];
    assert_eq!(app.process_proposal(process(good.clone())).await, accept);
    // The same sequence twice: the second fails the ante.
    assert_eq!(app.process_proposal(process(vec![transfer(&keys, 1, 2, 0), transfer(&keys, 1, 2, 0)])).await, reject);
    // Bytes that are not a transaction.
    assert_eq!(app.process_proposal(process(vec![bytes::Bytes::from_static(b"not a tx")])).await, reject);
    // A recipient without an identity: the KYC gate refuses it.
    assert_eq!(app.process_proposal(process(vec![transfer(&keys, 1, 4, 0)])).await, reject);
    // Three transfers of 400,000 gas each: over the block's 1,000,000.
    let three = vec![transfer(&keys, 1, 2, 0), transfer(&keys, 1, 2, 1), transfer(&keys, 2, 1, 0)];
    assert_eq!(app.process_proposal(process(three.clone())).await, reject);

    // PrepareProposal keeps what passes, in order, within the block gas.
    assert_eq!(app.prepare_proposal(prepare(three.clone())).await.txs, three[..2].to_vec());
    let mixed = vec![transfer(&keys, 1, 4, 0), transfer(&keys, 2, 1, 0), bytes::Bytes::from_static(b"junk"), transfer(&keys, 2, 1, 0)];
    assert_eq!(app.prepare_proposal(prepare(mixed.clone())).await.txs, vec![mixed[1].clone()]);
    // Nothing was written: the first transfer still passes on the committed state.
    assert_eq!(app.process_proposal(process(good)).await, accept);

    // Admission refuses a transaction no block could carry (sdk 41), and changes nothing.
    let big = TxBuilder::new(vec![msg_send(&keys[1].address(), &keys[2].address(), &[Coin::new(DENOM, 500u128)])]).gas(1_000_001);
    let big = big.sign(&keys[1], &SignerData { chain_id: CHAIN.into(), account_number: 1, sequence: 0 });
    let out = app.check_tx_bytes(&big).await;
    let e = out.result.unwrap_err();
    assert_eq!(e.code, 41, "{}", e.log);
    assert!(e.log.contains("block.max_gas"), "{}", e.log);
    assert_eq!(app.queries().max_block_gas().await.unwrap(), Some(1_000_000));

    // Should a block over the limit be decided anyway, the transactions past it fail (code 11)
    // without executing, and the ones within it execute.
    let resp = app.finalize_block(crate::compliance_props::block_req(1, three.iter().map(|t| t.to_vec()).collect())).await.unwrap();
    let codes: Vec<u32> = resp.tx_results.iter().map(|r| r.code.value()).collect();
    assert_eq!(codes, vec![0, 0, 11], "{:?}", resp.tx_results.last().map(|r| &r.log));
    assert_eq!(resp.tx_results[2].gas_used, 0);
    assert!(resp.tx_results[2].log.contains("not executed"), "{}", resp.tx_results[2].log);
}

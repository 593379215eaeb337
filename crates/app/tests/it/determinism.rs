//! Two replicas fed the same blocks reach the same app hash at every height, and a fresh state
//! machine replaying the committed blocks of a run reaches the same hashes again.

use std::sync::Arc;

use lantau_app::auth::genesis::GenesisState as AuthGenesis;
use lantau_app::bank::genesis::{Balance, GenesisState as BankGenesis};
use lantau_app::tendermint::abci::{request, types::CommitInfo};
use lantau_app::tendermint::{account, Hash, Time};
use lantau_app::{App, AppConfig, AppGenesis, NoHook};
use lantau_client::{msg_multi_send, msg_send, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::{Coin, NATIVE_DENOM};

pub(crate) fn key(i: u8) -> SecretKey {
    SecretKey::from_bytes(&lantau_crypto::sha256(&[i; 4])).unwrap()
}

pub(crate) fn genesis(keys: &[SecretKey]) -> Vec<u8> {
    let g = AppGenesis {
        evm_chain_id: 852,
        auth: AuthGenesis::default(),
        bank: BankGenesis { balances: keys.iter().map(|k| Balance { address: k.address(), coins: vec![Coin::new(NATIVE_DENOM, 10u128.pow(24))] }).collect() },
        authority: lantau_app::authority::genesis::GenesisState { governance: Some(keys[0].address()) },
        ..Default::default()
    };
    serde_json::to_vec(&g).unwrap()
}

async fn new_app(dir: &std::path::Path, genesis: &[u8]) -> App {
    let app = App::load(dir.to_path_buf(), AppConfig::default(), Arc::new(NoHook)).await.unwrap();
    app.init_chain(request::InitChain {
        time: Time::from_unix_timestamp(1_700_000_000, 0).unwrap(),
        chain_id: "det-1".into(),
        consensus_params: test_params(),
        validators: vec![],
        app_state_bytes: genesis.to_vec().into(),
        initial_height: 1u32.into(),
    })
    .await
    .unwrap();
    app
}

pub(crate) fn test_params() -> lantau_app::tendermint::consensus::Params {
    use lantau_app::tendermint::{block, consensus, evidence, public_key};
    consensus::Params {
        block: block::Size { max_bytes: 22_020_096, max_gas: -1, time_iota_ms: 1000 },
        evidence: evidence::Params { max_age_num_blocks: 1, max_age_duration: evidence::Duration(std::time::Duration::from_secs(1)), max_bytes: 0 },
        validator: consensus::params::ValidatorParams { pub_key_types: vec![public_key::Algorithm::Ed25519] },
        version: None,
        abci: Default::default(),
    }
}

pub(crate) fn block_req(height: u64, txs: &[Vec<u8>]) -> request::FinalizeBlock {
    request::FinalizeBlock {
        txs: txs.iter().map(|t| bytes::Bytes::from(t.clone())).collect(),
        decided_last_commit: CommitInfo { round: Default::default(), votes: vec![] },
        misbehavior: vec![],
        hash: Hash::Sha256(lantau_crypto::sha256(&height.to_be_bytes())),
        height: height.try_into().unwrap(),
        time: Time::from_unix_timestamp(1_700_000_000 + i64::try_from(height).unwrap(), 0).unwrap(),
        next_validators_hash: Hash::None,
        proposer_address: account::Id::new([1; 20]),
    }
}

/// Blocks of transfers, multi-sends, failures and garbage, signed for chain `det-1`.
pub(crate) fn blocks(keys: &[SecretKey]) -> Vec<Vec<Vec<u8>>> {
    let mut seqs = vec![0u64; keys.len()];
    let mut out = Vec::new();
    for b in 0..6usize {
        let mut txs = Vec::new();
        for i in 0..keys.len() {
            let from = &keys[i];
            let to = keys[(i + b + 1) % keys.len()].address();
            let msg = if (i + b) % 3 == 0 {
                msg_multi_send(
                    &from.address(),
                    &[Coin::new(NATIVE_DENOM, 30u128)],
                    &[(to, vec![Coin::new(NATIVE_DENOM, 10u128)]), (keys[0].address(), vec![Coin::new(NATIVE_DENOM, 20u128)])],
                )
            } else if (i + b) % 5 == 0 {
                // Fails in the block: more than the balance. Still pays fee and bumps the sequence.
                msg_send(&from.address(), &to, &[Coin::new(NATIVE_DENOM, 10u128.pow(25))])
            } else {
                msg_send(&from.address(), &to, &[Coin::new(NATIVE_DENOM, 1u128 + b as u128)])
            };
            let account_number = u64::try_from(i).unwrap();
            txs.push(TxBuilder::new(vec![msg]).sign(from, &SignerData { chain_id: "det-1".into(), account_number, sequence: seqs[i] }));
            seqs[i] += 1;
        }
        // Garbage and a replay of an earlier transaction: recorded as failures, change nothing.
        txs.push(vec![1, 2, 3]);
        if let Some(prev) = out.last().and_then(|p: &Vec<Vec<u8>>| p.first()).cloned() {
            txs.push(prev);
        }
        out.push(txs);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_fed_the_same_blocks_agree_at_every_height_and_a_replay_agrees_too() {
    let keys: Vec<SecretKey> = (0..8).map(key).collect();
    let g = genesis(&keys);
    let (d1, d2, d3) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = new_app(d1.path(), &g).await;
    let b = new_app(d2.path(), &g).await;
    assert_eq!(a.queries().app_hash().await.unwrap(), b.queries().app_hash().await.unwrap());

    let blocks = blocks(&keys);
    let mut hashes = Vec::new();
    let mut results = Vec::new();
    for (i, txs) in blocks.iter().enumerate() {
        let h = u64::try_from(i).unwrap() + 1;
        let ra = a.finalize_block(block_req(h, txs)).await.unwrap();
        let rb = b.finalize_block(block_req(h, txs)).await.unwrap();
        assert_eq!(ra.app_hash, rb.app_hash, "app hash differs at height {h}");
        assert_eq!(ra.tx_results, rb.tx_results, "results differ at height {h}");
        a.commit().await.unwrap();
        b.commit().await.unwrap();
        hashes.push(ra.app_hash.clone());
        results.push(ra.tx_results);
    }
    // The blocks did real work: successes, in-block failures, and decode failures.
    let codes: Vec<u32> = results.iter().flatten().map(|r| r.code.value()).collect();
    assert!(codes.iter().filter(|c| **c == 0).count() > 30);
    assert!(codes.contains(&5), "an in-block insufficient-funds failure");
    assert!(codes.contains(&2), "a decode failure");
    assert!(codes.contains(&32), "a replayed transaction fails on its stale sequence");

    // A fresh state machine replaying the same blocks reaches the same hashes.
    let c = new_app(d3.path(), &g).await;
    for (i, txs) in blocks.iter().enumerate() {
        let h = u64::try_from(i).unwrap() + 1;
        let r = c.finalize_block(block_req(h, txs)).await.unwrap();
        assert_eq!(r.app_hash, hashes[i], "replay differs at height {h}");
        c.commit().await.unwrap();
    }
    // And a restart of a replica (reopening its store) reports the same height and hash.
    let last = a.queries().app_hash().await.unwrap();
    a.release().await;
    let reopened = App::load(d1.path().to_path_buf(), AppConfig::default(), Arc::new(NoHook)).await.unwrap();
    assert_eq!(reopened.queries().last_height().await.unwrap(), 6);
    assert_eq!(reopened.queries().app_hash().await.unwrap(), last);
}

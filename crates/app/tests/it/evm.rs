//! The EVM path on the state machine, blocks driven by the test: Ethereum transactions in
//! Cosmos EVM's envelope, through the one pipeline; the ERC-20 precompile's gated transfer moves
//! the bank balance with the same gates and audit rows as the Cosmos path; a gate rejection is
//! a mined revert that pays its gas, keeps its nonce and moves nothing.

use lantau_app::compliance::AuditFilter;
use lantau_app::App;
use lantau_client::eth::{sign, transfer_with_travel_rule_calldata, Unsigned};
use lantau_crypto::SecretKey;
use lantau_primitives::{Address, NATIVE_DENOM};
use lantau_proto::chain::compliance::v1 as cpb;
use prost::Message as _;

use crate::compliance_props::{block_req, genesis, key, new_chain, DENOM};

const GWEI: u128 = 1_000_000_000;

fn payload(from: &str, to: &str, from_vasp: &str, to_vasp: &str, tier: &str) -> Vec<u8> {
    cpb::TravelRulePayload {
        tx_hash: String::new(),
        originator_ref: from.into(),
        beneficiary_ref: to.into(),
        originator_vasp: from_vasp.into(),
        beneficiary_vasp: to_vasp.into(),
        tier: tier.into(),
    }
    .encode_to_vec()
}

fn eth(k: &SecretKey, chain_id: Option<u64>, nonce: u64, to: Address, value: u128, input: Vec<u8>) -> (Vec<u8>, [u8; 32]) {
    let raw = sign(
        k,
        &Unsigned {
            chain_id,
            nonce,
            gas_limit: 400_000,
            max_fee_per_gas: 2 * GWEI,
            max_priority_fee_per_gas: Some(0),
            to: Some(to),
            value,
            input,
            ..Default::default()
        },
    );
    let tx = lantau_app::evm::tx::decode(&raw).expect("decodes");
    (lantau_app::evm::msg::envelope(&tx), tx.hash)
}

async fn balance(app: &App, a: &Address, denom: &str) -> u128 {
    lantau_app::bank::query::balance(&app.snapshot(), a, denom).await.unwrap().0
}

async fn sequence(app: &App, a: &Address) -> u64 {
    use lantau_app::auth::AuthRead as _;
    app.snapshot().account(&lantau_app::module_api::GasMeter::infinite(), a).await.unwrap().map_or(0, |x| x.sequence)
}

fn attr<'a>(events: &'a [lantau_app::tendermint::abci::Event], kind: &str, key: &str) -> Option<&'a str> {
    events.iter().filter(|e| e.kind == kind).flat_map(|e| e.attributes.iter()).find(|a| a.key_bytes() == key.as_bytes()).and_then(|a| a.value_str().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_travel_rule_transfer_through_the_precompile_moves_the_bank_balance_and_a_gated_one_reverts() {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (_dir, app, init) = new_chain("evm-1", genesis(&keys)).await;
    init.unwrap();
    let token = lantau_app::erc20::token_address(DENOM);
    let (k1, k2, k4) = (keys[1].address(), keys[2].address(), keys[4].address());
    let start = (balance(&app, &k1, DENOM).await, balance(&app, &k2, DENOM).await);
    let k4_start = balance(&app, &k4, DENOM).await;

    // k1 (full tier, VASP-1) pays k2 (VASP-2) 500 through the precompile: status 1.
    let good = transfer_with_travel_rule_calldata(&k2, 500, &payload("r1", "r2", "VASP-1", "VASP-2", "full"));
    let (tx, eth_hash) = eth(&keys[1], Some(852), 0, token, 0, good);
    let admitted = app.check_tx_bytes(&tx).await;
    assert!(admitted.result.is_ok(), "{:?}", admitted.result);
    let native_before = balance(&app, &k1, NATIVE_DENOM).await;
    let r = app.finalize_block(block_req(1, vec![tx])).await.unwrap();
    app.commit().await.unwrap();
    let res = &r.tx_results[0];
    assert!(res.code.is_ok(), "{}", res.log);
    assert_eq!(attr(&res.events, "ethereum_tx", "ethereumTxFailed"), None, "{:?}", res.events);
    assert_eq!(attr(&res.events, "ethereum_tx", "ethereumTxHash"), Some(format!("0x{}", const_hex::encode(eth_hash)).as_str()));
    assert_eq!(attr(&res.events, "ethereum_tx", "recipient"), Some(token.to_hex().as_str()));
    assert!(attr(&res.events, "ethereum_log", "topics").is_some_and(|t| t.starts_with("0xddf252ad")), "a Transfer log");
    assert_eq!((balance(&app, &k1, DENOM).await, balance(&app, &k2, DENOM).await), (start.0 - 500, start.1 + 500));
    // Gas is paid once, for what was used: the fee minus the refund.
    let gas_used: u128 = attr(&res.events, "ethereum_tx", "txGasUsed").unwrap().parse().unwrap();
    assert!(gas_used > 21_000 && gas_used < 400_000, "{gas_used}");
    assert_eq!(native_before - balance(&app, &k1, NATIVE_DENOM).await, gas_used * GWEI);
    assert_eq!(sequence(&app, &k1).await, 1);
    // The result's data is the typed receipt the Ethereum API reads: what the events say.
    let receipt = lantau_app::evm::receipt::of_result(&res.data).expect("the evm module's receipt in the result data");
    assert_eq!((receipt.hash, u128::from(receipt.gas_used), receipt.succeeded()), (eth_hash, gas_used, true));
    assert_eq!(receipt.logs.len(), 1, "the Transfer log");
    assert_eq!(receipt.logs[0].address, token);
    // The same audit row as the Cosmos path, under the Cosmos hash; the trace by the Ethereum hash.
    let rows = lantau_app::compliance::query::audit_log(&app.snapshot(), &AuditFilter::default()).await.unwrap();
    let row = rows.iter().find(|r| r.tx_type == "transfer").expect("a transfer audit row");
    assert_eq!((row.subject.as_str(), row.counterparty.as_str()), (k1.to_bech32().as_str(), k2.to_bech32().as_str()));
    let trace = app.queries().tx_trace(&eth_hash).await.expect("trace by the Ethereum hash");
    assert!(trace.accepted);
    assert_eq!(trace.results.len(), 7);

    // To k4, who has no identity: the KYC gate rejects inside the call. Mined, reverted: the
    // gas is paid, the nonce advances, nothing else moves, no audit row.
    let gated = transfer_with_travel_rule_calldata(&k4, 7, &payload("r1", "", "VASP-1", "", "full"));
    let (tx, eth_hash) = eth(&keys[1], Some(852), 1, token, 0, gated);
    assert!(app.check_tx_bytes(&tx).await.result.is_ok(), "gates run at execution on the EVM path");
    let r = app.finalize_block(block_req(2, vec![tx])).await.unwrap();
    app.commit().await.unwrap();
    let res = &r.tx_results[0];
    assert!(res.code.is_ok(), "{}", res.log);
    let failed = attr(&res.events, "ethereum_tx", "ethereumTxFailed").expect("reverted");
    assert!(failed.contains(&format!("recipient={}", k4.to_bech32())), "{failed}");
    assert_eq!((balance(&app, &k1, DENOM).await, balance(&app, &k4, DENOM).await), (start.0 - 500, k4_start));
    assert_eq!(sequence(&app, &k1).await, 2);
    let after = lantau_app::compliance::query::audit_log(&app.snapshot(), &AuditFilter::default()).await.unwrap();
    assert_eq!(after.len(), rows.len(), "a reverted transfer leaves no audit row");
    let trace = app.queries().tx_trace(&eth_hash).await.expect("the rejection's trace");
    assert!(!trace.accepted);
    assert_eq!(trace.results[0].name, "kyc_gate");

    // `transfer` is disabled with a reason naming the Travel Rule method.
    let plain = lantau_client::eth::transfer_calldata(&k2, 5);
    let (tx, _) = eth(&keys[1], Some(852), 2, token, 0, plain);
    let r = app.finalize_block(block_req(3, vec![tx])).await.unwrap();
    app.commit().await.unwrap();
    let failed = attr(&r.tx_results[0].events, "ethereum_tx", "ethereumTxFailed").expect("reverted").to_string();
    assert!(failed.contains("transferWithTravelRule"), "{failed}");

    // A plain native-coin payment moves the bank's alantau balance.
    let (tx, _) = eth(&keys[1], Some(852), 3, k4, 12_345, vec![]);
    let k4_native = balance(&app, &k4, NATIVE_DENOM).await;
    let r = app.finalize_block(block_req(4, vec![tx])).await.unwrap();
    app.commit().await.unwrap();
    assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
    assert_eq!(balance(&app, &k4, NATIVE_DENOM).await, k4_native + 12_345);

    // Refused at admission, nonce untouched: another chain's signature, a pre-EIP-155 one.
    let (tx, _) = eth(&keys[1], Some(1), 4, k4, 1, vec![]);
    let e = app.check_tx_bytes(&tx).await.result.expect_err("other chain");
    assert_eq!((e.codespace, e.code), ("evm", 5), "{}", e.log);
    let raw = sign(&keys[1], &Unsigned { chain_id: None, nonce: 4, gas_limit: 21_000, max_fee_per_gas: GWEI, to: Some(k4), value: 1, ..Default::default() });
    let e = lantau_app::evm::tx::decode(&raw).expect_err("pre-EIP-155");
    assert_eq!(e, lantau_app::evm::EvmError::NotReplayProtected);
    assert_eq!(sequence(&app, &k1).await, 4);
    app.release().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_ethereum_input_is_refused_or_reverts_and_moves_nothing() {
    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (_dir, app, init) = new_chain("evm-2", genesis(&keys)).await;
    init.unwrap();
    let token = lantau_app::erc20::token_address(DENOM);
    let (k1, k2) = (keys[1].address(), keys[2].address());
    let good = || payload("r1", "r2", "VASP-1", "VASP-2", "full");
    let supply_before = lantau_app::bank::query::supply(&app.snapshot(), DENOM).await.unwrap();

    // A high-S signature (the same signature with s' = n - s) does not recover.
    let raw =
        sign(&keys[1], &Unsigned { chain_id: Some(852), nonce: 0, gas_limit: 21_000, max_fee_per_gas: GWEI, to: Some(k2), value: 1, ..Default::default() });
    let env = lantau_app::evm::tx::decode(&raw).unwrap();
    let n: [u8; 32] = hex::decode("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141").unwrap().try_into().unwrap();
    let s = env.signature.1;
    let mut high = [0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let d = i16::from(n[i]) - i16::from(s[i]) - borrow;
        borrow = i16::from(d < 0);
        high[i] = (d + if d < 0 { 256 } else { 0 }) as u8;
    }
    let flipped = raw.windows(32).position(|w| w == s).expect("s in the encoding");
    let mut bad = raw.clone();
    bad[flipped..flipped + 32].copy_from_slice(&high);
    let e = lantau_app::evm::tx::decode(&bad).expect_err("high S");
    assert!(matches!(e, lantau_app::evm::EvmError::Signature(_) | lantau_app::evm::EvmError::Decode(_)), "{e:?}");

    // Each of these is mined and reverts: gas paid, nonce advanced, no balance moves.
    let reverts: Vec<(Vec<u8>, &str)> = vec![
        (transfer_with_travel_rule_calldata(&k2, 5, &[0xff, 0xff, 0xff]), "not a chain.compliance.v1.TravelRulePayload"),
        (transfer_with_travel_rule_calldata(&k2, 10_000_001, &good()), "is smaller than"),
        (transfer_with_travel_rule_calldata(&k2, 0, &good()), "amount must be positive"),
        (transfer_with_travel_rule_calldata(&token, 5, &good()), "recipient"),
        (vec![0x23, 0xec, 0x66], "no function selector"),
        (vec![0x23, 0xec, 0x66, 0xfc, 0x00], "invalid calldata"),
    ];
    let mut nonce = 0u64;
    for (input, want) in reverts {
        let (tx, _) = eth(&keys[1], Some(852), nonce, token, 0, input);
        nonce += 1;
        let r = app.finalize_block(block_req(nonce, vec![tx])).await.unwrap();
        app.commit().await.unwrap();
        let res = &r.tx_results[0];
        assert!(res.code.is_ok(), "{want}: {}", res.log);
        let failed = attr(&res.events, "ethereum_tx", "ethereumTxFailed").unwrap_or_else(|| panic!("{want}: not reverted"));
        assert!(failed.contains(want), "{want}: {failed}");
    }
    // The U256 maximum as an amount.
    let mut max = transfer_with_travel_rule_calldata(&k2, 1, &good());
    max[36..68].copy_from_slice(&[0xff; 32]);
    let (tx, _) = eth(&keys[1], Some(852), nonce, token, 0, max);
    nonce += 1;
    let r = app.finalize_block(block_req(nonce, vec![tx])).await.unwrap();
    app.commit().await.unwrap();
    let failed = attr(&r.tx_results[0].events, "ethereum_tx", "ethereumTxFailed").expect("reverted").to_string();
    assert!(failed.contains("128-bit"), "{failed}");

    // A sanctioned VASP on the beneficiary side (code 19 as the reason).
    let push = lantau_client::TxBuilder::new(vec![lantau_client::to_any(&cpb::MsgUpdateSanctionsList {
        authority: keys[0].address().to_bech32(),
        blocked_addresses: vec![],
        blocked_vasps: vec!["VASP-2".into()],
        reason: String::new(),
        evidence_ref: "list-2".into(),
    })])
    .gas(1_000_000)
    .sign(&keys[0], &lantau_client::SignerData { chain_id: "evm-2".into(), account_number: 0, sequence: 0 });
    nonce += 1;
    let r = app.finalize_block(block_req(nonce, vec![push])).await.unwrap();
    assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
    app.commit().await.unwrap();
    let (tx, _) = eth(&keys[1], Some(852), nonce - 1, token, 0, transfer_with_travel_rule_calldata(&k2, 5, &good()));
    let r = app.finalize_block(block_req(nonce + 1, vec![tx])).await.unwrap();
    app.commit().await.unwrap();
    let failed = attr(&r.tx_results[0].events, "ethereum_tx", "ethereumTxFailed").expect("reverted").to_string();
    assert!(failed.contains("VASP-2"), "{failed}");

    // Nothing moved; the sender's nonce counts every mined one; a reused nonce is refused.
    assert_eq!(lantau_app::bank::query::supply(&app.snapshot(), DENOM).await.unwrap(), supply_before);
    assert_eq!(balance(&app, &k2, DENOM).await, 10_000_000);
    assert_eq!(sequence(&app, &k1).await, nonce);
    let (tx, _) = eth(&keys[1], Some(852), 0, k2, 1, vec![]);
    let e = app.check_tx_bytes(&tx).await.result.expect_err("reused nonce");
    assert!(e.log.contains("sequence mismatch"), "{}", e.log);
    app.release().await;
}

/// Attack: a `MsgEthereumTx` inside a signed Cosmos transaction (alone, beside a gated send,
/// twice) ran its Ethereum transaction on that transaction's own gas, paid for by the Cosmos
/// fee of 200,000 gas and uncounted in the block. Every shape but the canonical envelope is
/// refused at decoding, so at admission, in a proposal (rejected) and in a decided block (the
/// transaction fails and no EVM runs: no fee, no nonce, no value moves); a container that
/// decodes its messages through the module list gets the same refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ethereum_transaction_outside_its_canonical_envelope_is_refused_and_never_runs() {
    use lantau_app::tendermint::abci::response;
    use lantau_client::{msg_send, SignerData, TxBuilder};
    use lantau_primitives::Coin;

    let keys: Vec<SecretKey> = (0..7).map(key).collect();
    let (_dir, app, init) = new_chain("evm-3", genesis(&keys)).await;
    init.unwrap();
    let (k1, k2, k4) = (keys[1].address(), keys[2].address(), keys[4].address());
    // The inner Ethereum transaction: k1 gives k4 (no identity) one LANTAU, with 30M gas.
    let inner = sign(
        &keys[1],
        &Unsigned { chain_id: Some(852), nonce: 0, gas_limit: 30_000_000, max_fee_per_gas: GWEI, to: Some(k4), value: 10u128.pow(18), ..Default::default() },
    );
    let any = cosmos_sdk_proto::Any {
        type_url: lantau_app::evm::MSG_ETHEREUM_TX.into(),
        value: lantau_proto::evm_vm::MsgEthereumTx { from: k1.0.to_vec().into(), raw: inner.clone().into() }.encode_to_vec(),
    };
    let send = msg_send(&k1, &k2, &[Coin::new(DENOM, 500u128)]);
    let signer = SignerData { chain_id: "evm-3".into(), account_number: 1, sequence: 0 };
    let p = cpb::TravelRulePayload::decode(payload("r1", "r2", "VASP-1", "VASP-2", "full").as_slice()).unwrap();
    let shapes: Vec<(&str, Vec<u8>)> = vec![
        ("alone", TxBuilder::new(vec![any.clone()]).gas(200_000).sign(&keys[1], &signer)),
        ("after a gated send", TxBuilder::new(vec![send.clone(), any.clone()]).gas(200_000).travel_rule(&p).sign(&keys[1], &signer)),
        ("before a gated send", TxBuilder::new(vec![any.clone(), send]).gas(200_000).travel_rule(&p).sign(&keys[1], &signer)),
        ("twice", TxBuilder::new(vec![any.clone(), any.clone()]).gas(200_000).sign(&keys[1], &signer)),
    ];
    let before = (balance(&app, &k1, NATIVE_DENOM).await, balance(&app, &k4, NATIVE_DENOM).await, balance(&app, &k2, DENOM).await);
    let refused = |e: &lantau_app::module_api::TxError| e.codespace == "evm" && e.code == 10 && e.log.contains("canonical envelope");
    let time = lantau_app::tendermint::Time::from_unix_timestamp(1_700_000_001, 0).unwrap();
    let proposer = lantau_app::tendermint::account::Id::new([0; 20]);
    for (height, (shape, tx)) in (1u64..).zip(&shapes) {
        let admitted = app.check_tx_bytes(tx).await;
        assert!(admitted.result.as_ref().is_err_and(refused), "{shape}: admitted {:?}", admitted.result);
        let prepared = app
            .prepare_proposal(lantau_app::tendermint::abci::request::PrepareProposal {
                max_tx_bytes: 1 << 20,
                txs: vec![tx.clone().into()],
                local_last_commit: None,
                misbehavior: vec![],
                height: height.try_into().unwrap(),
                time,
                next_validators_hash: Default::default(),
                proposer_address: proposer,
            })
            .await;
        assert!(prepared.txs.is_empty(), "{shape}: proposed");
        let processed = app
            .process_proposal(lantau_app::tendermint::abci::request::ProcessProposal {
                txs: vec![tx.clone().into()],
                proposed_last_commit: None,
                misbehavior: vec![],
                hash: Default::default(),
                height: height.try_into().unwrap(),
                time,
                next_validators_hash: Default::default(),
                proposer_address: proposer,
            })
            .await;
        assert_eq!(processed, response::ProcessProposal::Reject, "{shape}");
        // Decided anyway (a faulty majority): the transaction fails and nothing runs.
        let r = app.finalize_block(block_req(height, vec![tx.clone()])).await.unwrap();
        app.commit().await.unwrap();
        let res = &r.tx_results[0];
        assert!(res.code.is_err() && res.codespace == "evm" && res.log.contains("canonical envelope"), "{shape}: {res:?}");
        assert_eq!(res.gas_used, 0, "{shape}");
        assert!(attr(&res.events, "ethereum_tx", "ethereumTxHash").is_none(), "{shape}");
        let after = (balance(&app, &k1, NATIVE_DENOM).await, balance(&app, &k4, NATIVE_DENOM).await, balance(&app, &k2, DENOM).await);
        assert_eq!(after, before, "{shape}: no fee, no value, no send");
        assert_eq!(sequence(&app, &k1).await, 0, "{shape}");
    }
    // A container message (an authz MsgExec, say) decodes what it carries through the module
    // list, which refuses MsgEthereumTx the same way.
    let e = lantau_app::msg::Msg::from_any(&any).expect_err("refused outside the envelope");
    assert!(refused(&e), "{e:?}");

    // The canonical envelope of the same Ethereum transaction is admitted and runs.
    let tx = lantau_app::evm::tx::decode(&inner).unwrap();
    let envelope = lantau_app::evm::msg::envelope(&tx);
    assert!(app.check_tx_bytes(&envelope).await.result.is_ok());
    let r = app.finalize_block(block_req(shapes.len() as u64 + 1, vec![envelope])).await.unwrap();
    app.commit().await.unwrap();
    assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
    assert_eq!(balance(&app, &k4, NATIVE_DENOM).await, before.1 + 10u128.pow(18));
    assert_eq!(sequence(&app, &k1).await, 1);
}

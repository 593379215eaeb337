//! Unit tests of the `MsgEthereumTx` handler on a temporary store (docs/modules/evm.md):
//! transactions are signed with [`lantau_client::eth`] and decoded with [`lantau_evm::tx::decode`];
//! the fee is prepaid as the app's ante does (gas limit × effective price from the sender to the
//! fee collector through the bank's `transfer_plain`, the sequence advanced, in a committed
//! delta of its own), then the handler runs in one delta on a meter of the carrying
//! transaction's gas, committed only on success. Contracts are placed with the module's typed
//! write (`EvmWrite::put_code`).

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Duration;

use cnidarium::{StateDelta, StateWrite, Storage};
use lantau_auth::{AuthRead, AuthWrite};
use lantau_bank::genesis::{Balance, GenesisState};
use lantau_bank::{fee_collector, BankRead, BankWrite};
use lantau_client::eth::{create_address, sign, Unsigned};
use lantau_crypto::SecretKey;
use lantau_evm::{EthTx, EvmMsg, EvmRead, EvmWrite};
use lantau_module_api::{BlockCtx, Event, ExecCtx, GasMeter, MsgHandler, TxError};
use lantau_primitives::{Address, Coin, NATIVE_DENOM};

// === fixtures ===

const CHAIN_ID: u64 = 4242;
const GWEI: u128 = 1_000_000_000;
/// The sender's native balance at genesis: 10 LANTAU.
const FUNDS: u128 = 10 * 1_000_000_000_000_000_000;
const BOB: Address = Address([2; 20]);
/// Where the test contracts live.
const CONTRACT: Address = Address([0xCC; 20]);
/// The Cosmos hash of the carrying transaction.
const COSMOS_HASH: &str = "C0FFEE0123";

fn key() -> SecretKey {
    SecretKey::from_bytes(&[0x11; 32]).unwrap()
}

fn sender() -> Address {
    key().address()
}

fn block() -> BlockCtx {
    BlockCtx { height: 7, time: (std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000)).into(), chain_id: "lantau-test-1".into() }
}

/// A store with the EVM chain id, the sender's account (sequence 0) and its native funds.
async fn setup() -> (tempfile::TempDir, Storage) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
    let mut d = StateDelta::new(storage.latest_snapshot());
    let g = GasMeter::infinite();
    d.put_raw(lantau_evm::state_key::CHAIN_ID.to_string(), CHAIN_ID.to_be_bytes().to_vec());
    d.ensure_account(&g, &sender()).await.unwrap();
    let genesis = GenesisState { balances: vec![Balance { address: sender(), coins: vec![Coin::new(NATIVE_DENOM, FUNDS)] }] };
    let genesis_block = BlockCtx { height: 0, ..block() };
    lantau_bank::genesis::init_genesis(&mut d, &genesis, &genesis_block).await.unwrap();
    storage.commit(d).await.unwrap();
    (dir, storage)
}

/// Places `code` at [`CONTRACT`].
async fn deploy_at(storage: &Storage, code: &[u8]) {
    let mut d = StateDelta::new(storage.latest_snapshot());
    let hash = alloy_primitives::keccak256(code).0;
    d.put_code(&GasMeter::infinite(), &CONTRACT, &hash, code).unwrap();
    storage.commit(d).await.unwrap();
}

/// A legacy EIP-155 transaction at 2 gwei.
fn legacy(nonce: u64, gas_limit: u64, to: Option<Address>, value: u128, input: Vec<u8>) -> Unsigned {
    Unsigned { chain_id: Some(CHAIN_ID), nonce, gas_limit, max_fee_per_gas: 2 * GWEI, to, value, input, ..Default::default() }
}

/// Signs and decodes as the envelope's decoder does.
fn signed(u: &Unsigned) -> EthTx {
    lantau_evm::tx::decode(&sign(&key(), u)).unwrap()
}

/// The app's ante for an Ethereum transaction: the chain id checked, the nonce equal to the
/// sequence, gas limit × effective price moved to the fee collector through the bank's
/// chokepoint, the sequence advanced. Its effects stay whatever the message does.
async fn ante(storage: &Storage, tx: &EthTx) {
    let mut d = StateDelta::new(storage.latest_snapshot());
    let g = GasMeter::infinite();
    tx.check_chain(d.evm_chain_id().await.unwrap()).unwrap();
    let mut acct = d.account(&g, &tx.from).await.unwrap().unwrap();
    assert_eq!(acct.sequence, tx.nonce);
    d.transfer_plain(&g, &tx.from, &fee_collector(), &[Coin::new(NATIVE_DENOM, tx.max_fee())], None).await.unwrap();
    acct.sequence += 1;
    d.put_account(&g, &acct).unwrap();
    storage.commit(d).await.unwrap();
}

/// Runs the message on a meter of `meter_limit` gas (the carrying transaction's); commits only
/// on success. Returns the events and the gas the meter ended at.
async fn execute(storage: &Storage, tx: &EthTx, meter_limit: u64) -> (Result<Vec<Event>, TxError>, u64) {
    let (r, used, _) = execute_with_response(storage, tx, meter_limit).await;
    (r, used)
}

/// [`execute`], with the message response the handler gave.
async fn execute_with_response(storage: &Storage, tx: &EthTx, meter_limit: u64) -> (Result<Vec<Event>, TxError>, u64, Option<cosmos_sdk_proto::Any>) {
    let mut d = StateDelta::new(storage.latest_snapshot());
    let gas = GasMeter::new(meter_limit);
    let block = block();
    let msg = EvmMsg::EthereumTx(Box::new(tx.clone()));
    let mut ctx = ExecCtx::new(&block, &gas, COSMOS_HASH, tx.from);
    let r = match msg.check_stateless() {
        Ok(()) => msg.check_and_execute(&mut d, &mut ctx).await,
        Err(e) => Err(e),
    };
    let r = match r {
        Ok(()) => {
            storage.commit(d).await.unwrap();
            Ok(ctx.events)
        }
        Err(e) => Err(e),
    };
    (r, gas.used(), ctx.response.take())
}

/// The ante, then the message on the meter the envelope gives it (the transaction's gas limit).
async fn run(storage: &Storage, u: &Unsigned) -> (EthTx, Vec<Event>, u64) {
    let tx = signed(u);
    ante(storage, &tx).await;
    let (r, used) = execute(storage, &tx, tx.gas_limit).await;
    (tx, r.unwrap(), used)
}

async fn native(storage: &Storage, a: &Address) -> u128 {
    storage.latest_snapshot().balance(&GasMeter::infinite(), a, NATIVE_DENOM).await.unwrap().0
}

async fn sequence(storage: &Storage, a: &Address) -> u64 {
    storage.latest_snapshot().account(&GasMeter::infinite(), a).await.unwrap().map_or(0, |x| x.sequence)
}

fn attr<'a>(events: &'a [Event], kind: &str, key: &str) -> Option<&'a str> {
    events.iter().filter(|e| e.kind == kind).flat_map(|e| e.attributes.iter()).find(|a| a.key_bytes() == key.as_bytes()).and_then(|a| a.value_str().ok())
}

fn count(events: &[Event], kind: &str) -> usize {
    events.iter().filter(|e| e.kind == kind).count()
}

/// Runtime code that reverts with `Error("nope")`: CODECOPY the 100 bytes of revert data that
/// follow the 12-byte program, then REVERT with them.
fn reverting_code() -> Vec<u8> {
    let mut code = vec![0x60, 0x64, 0x60, 0x0c, 0x60, 0x00, 0x39, 0x60, 0x64, 0x60, 0x00, 0xfd];
    code.extend([0x08, 0xc3, 0x79, 0xa0]);
    code.extend(word(0x20));
    code.extend(word(4));
    let mut reason = [0u8; 32];
    reason[..4].copy_from_slice(b"nope");
    code.extend(reason);
    code
}

/// Runtime code that emits LOG1(topic A, data D) then LOG2(topics B, C, no data), then stops.
fn logging_code() -> Vec<u8> {
    let mut code = vec![0x7f];
    code.extend(DATA);
    code.extend([0x60, 0x00, 0x52, 0x7f]);
    code.extend(TOPIC_A);
    code.extend([0x60, 0x20, 0x60, 0x00, 0xa1, 0x7f]);
    code.extend(TOPIC_C);
    code.push(0x7f);
    code.extend(TOPIC_B);
    code.extend([0x60, 0x00, 0x60, 0x00, 0xa2, 0x00]);
    code
}

const DATA: [u8; 32] = [0xDD; 32];
const TOPIC_A: [u8; 32] = [0xAA; 32];
const TOPIC_B: [u8; 32] = [0xBB; 32];
const TOPIC_C: [u8; 32] = [0xC1; 32];

fn word(n: u8) -> [u8; 32] {
    let mut w = [0u8; 32];
    w[31] = n;
    w
}

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", const_hex::encode(b))
}

// === a value transfer ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_transfer_moves_the_value_and_refunds_the_unused_gas_at_the_price_paid() {
    let (_d, s) = setup().await;
    let price = 2 * GWEI;
    let (tx, events, used) = run(&s, &legacy(0, 100_000, Some(BOB), 1_000_000, vec![])).await;
    assert_eq!(used, 21_000, "the meter ends at the EVM's gas");
    assert_eq!(native(&s, &BOB).await, 1_000_000);
    assert_eq!(native(&s, &sender()).await, FUNDS - 1_000_000 - 21_000 * price, "the fee for 100,000 gas was taken, 79,000 refunded");
    assert_eq!(native(&s, &fee_collector()).await, 21_000 * price);
    assert_eq!(sequence(&s, &sender()).await, 1, "the nonce the ante advanced is the EVM's");

    assert_eq!(attr(&events, "ethereum_tx", "amount"), Some("1000000"));
    assert_eq!(attr(&events, "ethereum_tx", "ethereumTxHash"), Some(tx.hash_hex().as_str()));
    assert_eq!(attr(&events, "ethereum_tx", "txHash"), Some(COSMOS_HASH));
    assert_eq!(attr(&events, "ethereum_tx", "txGasUsed"), Some("21000"));
    assert_eq!(attr(&events, "ethereum_tx", "recipient"), Some(BOB.to_hex().as_str()));
    assert_eq!(attr(&events, "ethereum_tx", "ethereumTxFailed"), None);
    assert_eq!(attr(&events, "ethereum_tx", "sender"), None, "no sender on ethereum_tx");
    assert_eq!(attr(&events, "message", "module"), Some("evm"));
    assert_eq!(attr(&events, "message", "sender"), Some(sender().to_hex().as_str()));
    assert_eq!(attr(&events, "message", "txType"), Some("0"));
    assert_eq!(count(&events, "ethereum_log"), 0);
    // The bank's transfers: the refund (fee collector → sender), then the value (sender → bob).
    let transfers: Vec<(Option<&str>, Option<&str>)> = events
        .iter()
        .filter(|e| e.kind == "transfer")
        .map(|e| {
            let get = |k: &str| e.attributes.iter().find(|a| a.key_bytes() == k.as_bytes()).and_then(|a| a.value_str().ok());
            (get("sender"), get("amount"))
        })
        .collect();
    let refund = format!("{}{NATIVE_DENOM}", 79_000 * price);
    let fc = fee_collector().to_bech32();
    let me = sender().to_bech32();
    assert_eq!(transfers, [(Some(fc.as_str()), Some(refund.as_str())), (Some(me.as_str()), Some("1000000alantau"))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eip1559_transaction_pays_and_is_refunded_at_its_effective_price() {
    let (_d, s) = setup().await;
    // min(maxFeePerGas 5 gwei, base fee 1 gwei + tip 1 gwei) = 2 gwei.
    let u = Unsigned { max_fee_per_gas: 5 * GWEI, max_priority_fee_per_gas: Some(GWEI), ..legacy(0, 50_000, Some(BOB), 7, vec![]) };
    let (tx, events, _) = run(&s, &u).await;
    assert_eq!(tx.effective_gas_price(), 2 * GWEI);
    assert_eq!(native(&s, &sender()).await, FUNDS - 7 - 21_000 * 2 * GWEI);
    assert_eq!(native(&s, &fee_collector()).await, 21_000 * 2 * GWEI);
    assert_eq!(attr(&events, "message", "txType"), Some("2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_that_uses_its_whole_gas_limit_gets_no_refund() {
    let (_d, s) = setup().await;
    let (_, events, used) = run(&s, &legacy(0, 21_000, Some(BOB), 1, vec![])).await;
    assert_eq!(used, 21_000);
    assert_eq!(count(&events, "transfer"), 1, "the value only: no refund leg");
    assert_eq!(native(&s, &fee_collector()).await, 21_000 * 2 * GWEI);
}

// === reverts and halts: a Cosmos success ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revert_is_a_cosmos_success_that_pays_its_gas_keeps_its_nonce_and_reports_ethereum_tx_failed() {
    let (_d, s) = setup().await;
    deploy_at(&s, &reverting_code()).await;
    let limit = 100_000;
    let (_, events, used) = run(&s, &legacy(0, limit, Some(CONTRACT), 5, vec![])).await;
    assert!(used > 21_000 && used < limit, "{used}");
    assert_eq!(attr(&events, "ethereum_tx", "ethereumTxFailed"), Some("execution reverted: nope"));
    assert_eq!(attr(&events, "ethereum_tx", "txGasUsed"), Some(used.to_string().as_str()));
    assert_eq!(attr(&events, "ethereum_tx", "recipient"), Some(CONTRACT.to_hex().as_str()));
    assert_eq!(attr(&events, "ethereum_tx", "amount"), Some("5"));
    assert_eq!(count(&events, "ethereum_log"), 0);
    assert_eq!(native(&s, &CONTRACT).await, 0, "the value went back with the revert");
    assert_eq!(native(&s, &sender()).await, FUNDS - u128::from(used) * 2 * GWEI, "pays for the gas used, the rest refunded");
    assert_eq!(native(&s, &fee_collector()).await, u128::from(used) * 2 * GWEI);
    assert_eq!(sequence(&s, &sender()).await, 1);
    // The next nonce runs.
    run(&s, &legacy(1, 21_000, Some(BOB), 1, vec![])).await;
    assert_eq!(sequence(&s, &sender()).await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_halt_is_a_cosmos_success_that_uses_the_whole_gas_limit_worded_as_geth_words_it() {
    let (_d, s) = setup().await;
    deploy_at(&s, &[0xfe]).await;
    let (_, events, used) = run(&s, &legacy(0, 60_000, Some(CONTRACT), 0, vec![])).await;
    assert_eq!(used, 60_000);
    assert_eq!(attr(&events, "ethereum_tx", "ethereumTxFailed"), Some("invalid opcode"));
    assert_eq!(count(&events, "transfer"), 0, "no refund");
    assert_eq!(native(&s, &fee_collector()).await, 60_000 * 2 * GWEI);
    assert_eq!(sequence(&s, &sender()).await, 1);
}

// === logs and deployments ===

/// The receipt's record: the handler's response reads back, from a tx result's data, as what
/// the EVM did (logs in order, gas, outcome), for a run that logs and for one that reverts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handler_writes_a_typed_receipt_that_reads_back_from_the_result_data() {
    use prost::Message as _;
    let (_d, s) = setup().await;
    deploy_at(&s, &logging_code()).await;
    let tx = signed(&legacy(0, 100_000, Some(CONTRACT), 0, vec![]));
    ante(&s, &tx).await;
    let (r, used, response) = execute_with_response(&s, &tx, tx.gas_limit).await;
    r.unwrap();
    let response = response.expect("the handler gives a response");
    assert_eq!(response.type_url, lantau_evm::receipt::MSG_ETHEREUM_TX_RESPONSE);
    #[allow(deprecated)]
    let data = cosmos_sdk_proto::cosmos::base::abci::v1beta1::TxMsgData { msg_responses: vec![response], ..Default::default() }.encode_to_vec();
    let receipt = lantau_evm::receipt::of_result(&data).expect("a receipt");
    assert_eq!(receipt.hash, tx.hash);
    assert_eq!(receipt.gas_used, used);
    assert!(receipt.succeeded());
    let logs: Vec<(Address, Vec<[u8; 32]>, Vec<u8>)> = receipt.logs.into_iter().map(|l| (l.address, l.topics, l.data)).collect();
    assert_eq!(logs, [(CONTRACT, vec![TOPIC_A], DATA.to_vec()), (CONTRACT, vec![TOPIC_B, TOPIC_C], vec![])]);
    assert_eq!(lantau_evm::receipt::of_result(&[]), None, "a result without data has no receipt");

    deploy_at(&s, &reverting_code()).await;
    let tx = signed(&legacy(1, 100_000, Some(CONTRACT), 0, vec![]));
    ante(&s, &tx).await;
    let (_, _, response) = execute_with_response(&s, &tx, tx.gas_limit).await;
    #[allow(deprecated)]
    let data = cosmos_sdk_proto::cosmos::base::abci::v1beta1::TxMsgData { msg_responses: vec![response.unwrap()], ..Default::default() }.encode_to_vec();
    let receipt = lantau_evm::receipt::of_result(&data).expect("a receipt");
    assert!(!receipt.succeeded());
    assert_eq!(receipt.vm_error, "execution reverted");
    assert!(receipt.logs.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_log_becomes_an_ethereum_log_event_in_order() {
    let (_d, s) = setup().await;
    deploy_at(&s, &logging_code()).await;
    let (_, events, _) = run(&s, &legacy(0, 100_000, Some(CONTRACT), 0, vec![])).await;
    let logs: Vec<Vec<(String, String)>> = events
        .iter()
        .filter(|e| e.kind == "ethereum_log")
        .map(|e| e.attributes.iter().map(|a| (a.key_str().unwrap().to_string(), a.value_str().unwrap().to_string())).collect())
        .collect();
    let c = CONTRACT.to_hex();
    let pairs = |topics: String, data: String, index: &str| {
        vec![("address".to_string(), c.clone()), ("topics".to_string(), topics), ("data".to_string(), data), ("index".to_string(), index.to_string())]
    };
    assert_eq!(logs, [pairs(hex0x(&TOPIC_A), hex0x(&DATA), "0"), pairs(format!("{},{}", hex0x(&TOPIC_B), hex0x(&TOPIC_C)), "0x".into(), "1")], "{events:?}");
    // After the ethereum_tx event.
    let pos = |k: &str| events.iter().position(|e| e.kind == k).unwrap();
    assert!(pos("ethereum_tx") < pos("ethereum_log"));
    assert_eq!(attr(&events, "ethereum_tx", "ethereumTxFailed"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_stores_the_code_and_names_the_created_contract_as_recipient() {
    let (_d, s) = setup().await;
    let runtime = [0x60, 0x00, 0x60, 0x00, 0xfd];
    let mut init = vec![0x60, 0x05, 0x60, 0x0c, 0x60, 0x00, 0x39, 0x60, 0x05, 0x60, 0x00, 0xf3];
    init.extend(runtime);
    let (_, events, _) = run(&s, &legacy(0, 200_000, None, 0, init)).await;
    let created = create_address(&sender(), 0);
    assert_eq!(attr(&events, "ethereum_tx", "recipient"), Some(created.to_hex().as_str()));
    assert_eq!(attr(&events, "ethereum_tx", "ethereumTxFailed"), None);
    let snap = s.latest_snapshot();
    let g = GasMeter::infinite();
    let hash = snap.code_hash(&g, &created).await.unwrap().expect("code stored");
    assert_eq!(hash, alloy_primitives::keccak256(runtime).0);
    assert_eq!(snap.code(&g, &hash).await.unwrap().as_deref(), Some(runtime.as_slice()));
    assert_eq!(sequence(&s, &sender()).await, 1);
}

// === refusals ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gas_limit_over_the_carrying_meter_is_refused_with_code_10_and_runs_nothing() {
    let (_d, s) = setup().await;
    let tx = signed(&legacy(0, 50_000, Some(BOB), 1_000, vec![]));
    ante(&s, &tx).await;
    let before = (native(&s, &sender()).await, native(&s, &fee_collector()).await, sequence(&s, &sender()).await);
    let (r, used) = execute(&s, &tx, tx.gas_limit - 1).await;
    let e = r.unwrap_err();
    assert_eq!((e.codespace, e.code), ("evm", 10), "{}", e.log);
    assert_eq!(used, 0, "nothing metered: the EVM never ran");
    assert_eq!(native(&s, &BOB).await, 0);
    assert_eq!((native(&s, &sender()).await, native(&s, &fee_collector()).await, sequence(&s, &sender()).await), before, "no value, no refund");
    assert_eq!(before.1, tx.max_fee(), "the ante's fee stays paid");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_beyond_the_balance_left_after_the_fee_halts_in_the_evm_and_moves_nothing() {
    // docs/modules/evm.md and `EvmError::Invalid` describe this case as refused by the EVM
    // before running (code 11); with revm's fee charge disabled the balance check for the value
    // is the top-level call's, so the transaction runs, halts and is a Cosmos success.
    let (_d, s) = setup().await;
    let tx = signed(&legacy(0, 50_000, Some(BOB), FUNDS, vec![]));
    ante(&s, &tx).await;
    let (r, used) = execute(&s, &tx, tx.gas_limit).await;
    let events = r.unwrap();
    assert_eq!(used, 21_000, "the intrinsic gas only, not the whole limit: the rest is refunded");
    assert_eq!(attr(&events, "ethereum_tx", "ethereumTxFailed"), Some("insufficient balance for transfer"));
    assert_eq!(attr(&events, "ethereum_tx", "txGasUsed"), Some(used.to_string().as_str()));
    assert_eq!(native(&s, &BOB).await, 0);
    assert_eq!(native(&s, &sender()).await, FUNDS - u128::from(used) * 2 * GWEI);
    assert_eq!(sequence(&s, &sender()).await, 1);
}

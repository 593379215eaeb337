//! What a transaction result carries besides its code and events: a successful result's `data` is
//! the Cosmos SDK's `TxMsgData`, one response per message (as simd fills it); a failed one has
//! none.

use cosmos_sdk_proto::cosmos::base::abci::v1beta1::TxMsgData;
use lantau_client::{msg_send, SignerData, TxBuilder};
use lantau_primitives::Coin;
use prost::Message as _;

use crate::compliance_props::{block_req, genesis, key, new_chain};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_successful_result_lists_one_response_per_message_and_a_failed_one_none() {
    let keys: Vec<_> = (0..7).map(key).collect();
    let (_dir, app, init) = new_chain("results-1", genesis(&keys)).await;
    init.unwrap();
    let send = |seq: u64, n: usize| {
        let msgs = (0..n).map(|_| msg_send(&keys[5].address(), &keys[6].address(), &[Coin::new("alantau", 5u128)])).collect();
        TxBuilder::new(msgs).gas(300_000).sign(&keys[5], &SignerData { chain_id: "results-1".into(), account_number: 5, sequence: seq })
    };
    // Two sends in one transaction, then a transaction whose sequence is already taken.
    let r = app.finalize_block(block_req(1, vec![send(0, 2), send(0, 1)])).await.unwrap();
    assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
    let data = TxMsgData::decode(r.tx_results[0].data.as_ref()).unwrap();
    let types: Vec<&str> = data.msg_responses.iter().map(|a| a.type_url.as_str()).collect();
    assert_eq!(types, ["/cosmos.bank.v1beta1.MsgSendResponse"; 2]);
    assert!(data.msg_responses.iter().all(|a| a.value.is_empty()), "MsgSendResponse has no fields");
    assert!(r.tx_results[1].code.is_err());
    assert!(r.tx_results[1].data.is_empty(), "a failed transaction has no responses");
}

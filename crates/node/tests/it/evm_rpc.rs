//! The Ethereum JSON-RPC over real HTTP and WebSocket: a wallet's calls, the precompile's reads,
//! a gated transfer confirmed by receipt, reverts as JSON-RPC errors, lookups by the Ethereum
//! hash, blocks, logs, batches and bad input.

use std::time::Duration;

use lantau_client::eth::{sign, transfer_calldata, transfer_with_travel_rule_calldata, Unsigned};
use lantau_primitives::Address;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use prost::Message as _;
use serde_json::{json, Value};

const GWEI: u128 = 1_000_000_000;

async fn rpc(n: &TestNode, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    reqwest::Client::new().post(&n.eth_url).json(&body).send().await.unwrap().json().await.unwrap()
}

async fn ok(n: &TestNode, method: &str, params: Value) -> Value {
    let v = rpc(n, method, params).await;
    assert!(v.get("error").is_none(), "{method}: {v}");
    v["result"].clone()
}

fn token() -> Address {
    lantau_app::erc20::token_address("hkd.demo")
}

fn call_data(selector_sig: &str, args: &[[u8; 32]]) -> String {
    let sel = lantau_app::evm::precompile::selector_of(selector_sig);
    let mut d = sel.to_vec();
    for a in args {
        d.extend_from_slice(a);
    }
    format!("0x{}", const_hex::encode(d))
}

fn word_of(a: &Address) -> [u8; 32] {
    let mut w = [0u8; 32];
    w[12..].copy_from_slice(&a.0);
    w
}

/// One wei of the native coin to bob at `nonce`, at twice the fee floor (a plain EIP-1559
/// transfer to point at).
fn to_bob(nonce: u64) -> Unsigned {
    Unsigned {
        chain_id: Some(lantau_node::home::DEV_EVM_CHAIN_ID),
        nonce,
        gas_limit: 21_000,
        max_fee_per_gas: 2 * GWEI,
        max_priority_fee_per_gas: Some(GWEI),
        to: Some(dev_addr("bob")),
        value: 1,
        ..Default::default()
    }
}

async fn receipt(n: &TestNode, hash: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let r = ok(n, "eth_getTransactionReceipt", json!([hash])).await;
        if !r.is_null() {
            return r;
        }
        assert!(tokio::time::Instant::now() < deadline, "no receipt for {hash}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wallet_reads_the_stablecoin_sends_a_travel_rule_transfer_and_confirms_it_by_receipt() {
    let n = TestNode::start().await.unwrap();
    // bob pays nothing and receives nothing here: the Travel Rule at full tier needs the
    // beneficiary's VASP, and the issuer has one.
    let (alice, bob, carol) = (dev_addr("alice"), dev_addr("issuer"), dev_addr("carol"));
    assert_eq!(ok(&n, "eth_chainId", json!([])).await, "0x354");
    assert_eq!(ok(&n, "net_version", json!([])).await, "852");
    assert_eq!(ok(&n, "eth_gasPrice", json!([])).await, "0x3b9aca00");
    assert_eq!(ok(&n, "eth_accounts", json!([])).await, json!([]));
    assert_eq!(ok(&n, "eth_syncing", json!([])).await, json!(false));
    let balance = ok(&n, "eth_getBalance", json!([alice.to_hex(), "latest"])).await;
    assert!(balance.as_str().unwrap().len() > 10, "{balance}");

    // decimals() = 2 and balanceOf = the bank balance.
    let t = token().to_hex();
    let d = ok(&n, "eth_call", json!([{"to": t, "data": call_data("decimals()", &[])}, "latest"])).await;
    assert_eq!(d, format!("0x{:064x}", 2));
    let b = ok(&n, "eth_call", json!([{"to": t, "data": call_data("balanceOf(address)", &[word_of(&alice)])}, "latest"])).await;
    assert_eq!(b, format!("0x{:064x}", 100_000_000u128));

    // transfer() reverts with a reason naming the Travel Rule method: code 3, ABI data.
    let plain = format!("0x{}", const_hex::encode(transfer_calldata(&bob, 5)));
    let e = rpc(&n, "eth_call", json!([{"from": alice.to_hex(), "to": t, "data": plain}])).await;
    assert_eq!(e["error"]["code"], 3, "{e}");
    assert!(e["error"]["message"].as_str().unwrap().starts_with("execution reverted: transfer is disabled"), "{e}");
    assert!(e["error"]["data"].as_str().unwrap().starts_with("0x08c379a0"), "{e}");

    // A gated eth_call (carol has no identity): the gate message as the revert reason.
    let p = n.client.travel_rule_payload(&alice, &bob).await.unwrap();
    let to_carol = format!("0x{}", const_hex::encode(transfer_with_travel_rule_calldata(&carol, 5, &p.encode_to_vec())));
    let e = rpc(&n, "eth_call", json!([{"from": alice.to_hex(), "to": t, "data": to_carol}])).await;
    assert_eq!(e["error"]["code"], 3, "{e}");
    assert!(e["error"]["message"].as_str().unwrap().contains(&format!("recipient={}", carol.to_bech32())), "{e}");

    // transferWithTravelRule from alice to bob, signed like a wallet, confirmed by receipt.
    let nonce = ok(&n, "eth_getTransactionCount", json!([alice.to_hex(), "pending"])).await;
    let nonce = u64::from_str_radix(nonce.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let data = transfer_with_travel_rule_calldata(&bob, 500, &p.encode_to_vec());
    let est = ok(&n, "eth_estimateGas", json!([{"from": alice.to_hex(), "to": t, "data": format!("0x{}", const_hex::encode(&data))}])).await;
    let gas = u64::from_str_radix(est.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    assert!(gas > 21_000, "{est}");
    let raw = sign(
        &dev_key("alice"),
        &Unsigned {
            chain_id: Some(852),
            nonce,
            gas_limit: gas * 2,
            max_fee_per_gas: 2 * GWEI,
            max_priority_fee_per_gas: Some(GWEI),
            to: Some(token()),
            input: data,
            ..Default::default()
        },
    );
    let hash = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(&raw))])).await;
    let hash = hash.as_str().unwrap().to_string();
    // The same bytes give the same hash; a lookup by hash finds it before or after mining.
    let by_hash = ok(&n, "eth_getTransactionByHash", json!([hash])).await;
    assert_eq!(by_hash["hash"], hash);
    assert_eq!(by_hash["from"], alice.to_hex());
    let r = receipt(&n, &hash).await;
    assert_eq!(r["status"], "0x1", "{r}");
    assert_eq!(r["to"], t);
    assert_eq!(r["effectiveGasPrice"], "0x77359400", "base fee 1 gwei + 1 gwei tip");
    let logs = r["logs"].as_array().unwrap();
    assert_eq!(logs.len(), 1, "{r}");
    assert_eq!(logs[0]["topics"][0], "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
    let b = ok(&n, "eth_call", json!([{"to": t, "data": call_data("balanceOf(address)", &[word_of(&bob)])}])).await;
    assert_eq!(b, format!("0x{:064x}", 500u128), "the issuer held none");
    let mined = ok(&n, "eth_getTransactionByHash", json!([hash])).await;
    assert_eq!(mined["blockNumber"], r["blockNumber"]);

    // The block carries it; eth_getLogs finds the Transfer by address and topic.
    let block = ok(&n, "eth_getBlockByNumber", json!([r["blockNumber"], false])).await;
    assert!(block["transactions"].as_array().unwrap().iter().any(|h| h == &json!(hash)), "{block}");
    // Its gas capacity is the consensus parameter block.max_gas.
    assert_eq!(block["gasLimit"], json!(format!("{:#x}", lantau_node::node::DEFAULT_MAX_BLOCK_GAS)));
    let by_block_hash = ok(&n, "eth_getBlockByHash", json!([block["hash"], true])).await;
    assert_eq!(by_block_hash["number"], block["number"]);
    let found = ok(&n, "eth_getLogs", json!([{"fromBlock": "0x1", "toBlock": "latest", "address": t, "topics": [logs[0]["topics"][0]]}])).await;
    assert!(found.as_array().unwrap().iter().any(|l| l["transactionHash"] == json!(hash)), "{found}");

    // A gated transfer mined: status 0x0, gas paid, no reason in the receipt.
    let raw = sign(
        &dev_key("alice"),
        &Unsigned {
            chain_id: Some(852),
            nonce: nonce + 1,
            gas_limit: 300_000,
            max_fee_per_gas: GWEI,
            max_priority_fee_per_gas: Some(0),
            to: Some(token()),
            input: transfer_with_travel_rule_calldata(&carol, 5, &p.encode_to_vec()),
            ..Default::default()
        },
    );
    let hash = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(&raw))])).await;
    let r = receipt(&n, hash.as_str().unwrap()).await;
    assert_eq!(r["status"], "0x0", "{r}");
    assert_ne!(r["gasUsed"], "0x0");

    // The trace by the Ethereum hash, with or without 0x, either case.
    for h in [hash.as_str().unwrap().to_string(), hash.as_str().unwrap().trim_start_matches("0x").to_uppercase()] {
        let v: Value = n.client.query(&format!("/chain/compliance/v1/tx_trace/{h}")).await.unwrap();
        assert_eq!(v["found"], true, "{h}: {v}");
        assert_eq!(v["trace"]["results"].as_array().unwrap().len(), 7);
    }
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_json_rpc_input_gets_the_codes_clients_expect_and_changes_nothing() {
    let n = TestNode::start().await.unwrap();
    let http = reqwest::Client::new();
    let post = |body: String| {
        let http = http.clone();
        let url = n.eth_url.clone();
        async move { http.post(url).header("content-type", "application/json").body(body).send().await.unwrap().json::<Value>().await.unwrap() }
    };
    assert_eq!(post("{not json".into()).await["error"]["code"], -32700);
    assert_eq!(post("[]".into()).await["error"]["code"], -32600);
    assert_eq!(post(r#"{"jsonrpc":"2.0","id":1}"#.into()).await["error"]["code"], -32600);
    assert_eq!(rpc(&n, "eth_mine", json!([])).await["error"]["code"], -32601);
    assert_eq!(rpc(&n, "eth_getBalance", json!(["0x12"])).await["error"]["code"], -32602);
    assert_eq!(rpc(&n, "eth_getBalance", json!([])).await["error"]["code"], -32602);
    // A batch answers each request in order.
    let batch = post(json!([{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"nope"}]).to_string()).await;
    assert_eq!(batch[0]["result"], "0x354");
    assert_eq!(batch[1]["error"]["code"], -32601);

    // Rejected submissions answer an error, not a hash, and do not advance the nonce.
    let alice = dev_key("alice");
    let u = Unsigned { chain_id: Some(852), nonce: 0, gas_limit: 21_000, max_fee_per_gas: GWEI, to: Some(dev_addr("bob")), value: 1, ..Default::default() };
    let cases = [
        (Unsigned { chain_id: Some(1), ..u.clone() }, "invalid chain id"),
        (Unsigned { chain_id: None, ..u.clone() }, "replay-protected"),
        (Unsigned { nonce: 7, ..u.clone() }, "nonce too high: address "),
        // A fee (gas x price) over what alice holds.
        (Unsigned { max_fee_per_gas: 10u128.pow(20), ..u.clone() }, "insufficient funds for gas * price + value: address "),
        (Unsigned { max_fee_per_gas: GWEI - 1, ..u.clone() }, "base fee"),
        (Unsigned { gas_limit: u64::MAX, ..u.clone() }, "gas limit"),
    ];
    for (c, want) in cases {
        let v = rpc(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&alice, &c)))])).await;
        assert_eq!(v["error"]["code"], -32000, "{want}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains(want), "{want}: {v}");
    }
    let v = rpc(&n, "eth_sendRawTransaction", json!(["0xdeadbeef"])).await;
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert_eq!(ok(&n, "eth_getTransactionCount", json!([dev_addr("alice").to_hex(), "pending"])).await, "0x0");
    // geth's words for the refusals wallets act on (ethers reads them as NONCE_EXPIRED and
    // INSUFFICIENT_FUNDS): the same bytes twice are "already known", a spent nonce is "nonce too
    // low", with the figures geth gives.
    let first = format!("0x{}", const_hex::encode(sign(&alice, &u)));
    let hash = rpc(&n, "eth_sendRawTransaction", json!([first])).await["result"].clone();
    assert!(hash.is_string());
    let v = rpc(&n, "eth_sendRawTransaction", json!([first])).await;
    assert_eq!((v["error"]["code"].as_i64(), v["error"]["message"].as_str()), (Some(-32000), Some("already known")), "{v}");
    // Mined, its nonce is spent (while it waited, the same nonce would be a replacement).
    receipt(&n, hash.as_str().unwrap()).await;
    let again = format!("0x{}", const_hex::encode(sign(&alice, &Unsigned { value: 2, ..u.clone() })));
    let v = rpc(&n, "eth_sendRawTransaction", json!([again])).await;
    let want = format!("nonce too low: address {}, tx: 0 state: 1", dev_addr("alice").to_hex());
    assert_eq!(v["error"]["message"].as_str(), Some(want.as_str()), "{v}");

    // Log filters over their bounds are invalid parameters, not empty answers.
    let t = token().to_hex();
    let topic = format!("0x{}", "11".repeat(32));
    let bad_filters = [
        (json!({"fromBlock": "0x5", "toBlock": "0x2"}), "invalid block range params"),
        (json!({"address": t, "topics": [topic, null, null, null, null]}), "exceed max topics"),
        (json!({"topics": [vec![topic.clone(); 10_000]]}), "exceed max sub topics"),
    ];
    for (f, want) in bad_filters {
        let v = rpc(&n, "eth_getLogs", json!([f])).await;
        assert_eq!(v["error"]["code"], -32602, "{want}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains(want), "{want}: {v}");
    }
    // State and block overrides are refused, never ignored; empty ones are fine.
    let call = json!({"to": t, "data": call_data("decimals()", &[])});
    let code = json!({t.clone(): {"code": "0x6001"}});
    for (method, extra) in [
        ("eth_call", json!([call, "latest", code])),
        ("eth_estimateGas", json!([call, "latest", code])),
        ("eth_call", json!([call, "latest", {}, {"time": "0x1"}])),
    ] {
        let v = rpc(&n, method, extra).await;
        assert_eq!(v["error"]["code"], -32602, "{method}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("overrides"), "{v}");
    }
    assert!(rpc(&n, "eth_call", json!([call, "latest", {}])).await.get("error").is_none());
    // A range that starts after the latest block is empty.
    assert_eq!(ok(&n, "eth_getLogs", json!([{"fromBlock": "0xffffff", "toBlock": "0xfffffff"}])).await, json!([]));

    // On the embedded engine: a MsgEthereumTx in a signed Cosmos tx is refused at broadcast,
    // alone or beside a send (the nested shapes; the app's tests cover proposals and blocks).
    let inner = sign(&alice, &Unsigned { gas_limit: 30_000_000, ..u.clone() });
    let any = cosmos_sdk_proto::Any {
        type_url: lantau_app::evm::MSG_ETHEREUM_TX.into(),
        value: lantau_proto::evm_vm::MsgEthereumTx { from: alice.address().0.to_vec().into(), raw: inner.into() }.encode_to_vec(),
    };
    let send = lantau_client::msg_send(&alice.address(), &dev_addr("bob"), &[lantau_primitives::Coin::new("alantau", 1u128)]);
    for msgs in [vec![any.clone()], vec![send, any]] {
        let bytes = n.sign(&alice, &lantau_client::TxBuilder::new(msgs).gas(200_000)).await.unwrap();
        let r = n.client.broadcast(&bytes, "BROADCAST_MODE_SYNC").await.unwrap();
        assert_eq!((r.code, r.codespace.as_str()), (10, "evm"), "{}", r.raw_log);
        assert!(r.raw_log.contains("canonical envelope"), "{}", r.raw_log);
    }
    // Only the one transfer admitted above holds a nonce.
    assert_eq!(ok(&n, "eth_getTransactionCount", json!([dev_addr("alice").to_hex(), "pending"])).await, "0x1");
    n.stop().await;
}

async fn next_json<S>(ws: &mut S) -> Value
where
    S: futures::Stream<Item = Result<tokio_tungstenite::tungstenite::Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    use futures::StreamExt as _;
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(30), ws.next()).await.expect("ws message within 30s").unwrap().unwrap();
        if let tokio_tungstenite::tungstenite::Message::Text(t) = msg {
            return serde_json::from_str(&t).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_subscribers_get_new_heads_and_the_transfer_logs_they_asked_for() {
    use futures::SinkExt as _;
    use tokio_tungstenite::tungstenite::Message;
    let n = TestNode::start().await.unwrap();
    let (mut ws, _) = tokio_tungstenite::connect_async(&n.eth_ws_url).await.unwrap();
    let t = token().to_hex();
    let sub = |id: u64, params: Value| Message::Text(json!({"jsonrpc": "2.0", "id": id, "method": "eth_subscribe", "params": params}).to_string().into());
    ws.send(sub(1, json!(["newHeads"]))).await.unwrap();
    let heads = next_json(&mut ws).await;
    assert_eq!(heads["id"], 1, "{heads}");
    let heads_id = heads["result"].as_str().unwrap().to_string();
    let transfer_topic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
    ws.send(sub(2, json!(["logs", {"address": t, "topics": [transfer_topic]}]))).await.unwrap();
    // Methods work over the socket too.
    ws.send(Message::Text(json!({"jsonrpc": "2.0", "id": 3, "method": "eth_chainId"}).to_string().into())).await.unwrap();
    ws.send(sub(4, json!(["pendingWhatever"]))).await.unwrap();
    let (mut logs_id, mut saw_head, mut chain_ok, mut refused) = (String::new(), false, false, false);
    while logs_id.is_empty() || !saw_head || !chain_ok || !refused {
        let v = next_json(&mut ws).await;
        match (&v["id"], v["method"].as_str()) {
            (Value::Number(id), _) if id.as_u64() == Some(2) => logs_id = v["result"].as_str().unwrap().to_string(),
            (Value::Number(id), _) if id.as_u64() == Some(3) => chain_ok = v["result"] == "0x354",
            (Value::Number(id), _) if id.as_u64() == Some(4) => refused = v["error"]["code"] == -32602,
            (_, Some("eth_subscription")) if v["params"]["subscription"] == json!(heads_id) => {
                assert!(v["params"]["result"]["number"].as_str().unwrap().starts_with("0x"), "{v}");
                saw_head = true;
            }
            _ => {}
        }
    }
    // A precompile transfer: its Transfer log arrives on the logs subscription.
    let (alice, issuer) = (dev_addr("alice"), dev_addr("issuer"));
    let p = n.client.travel_rule_payload(&alice, &issuer).await.unwrap();
    let raw = sign(
        &dev_key("alice"),
        &Unsigned {
            chain_id: Some(852),
            nonce: 0,
            gas_limit: 300_000,
            max_fee_per_gas: GWEI,
            max_priority_fee_per_gas: Some(0),
            to: Some(token()),
            input: transfer_with_travel_rule_calldata(&issuer, 42, &p.encode_to_vec()),
            ..Default::default()
        },
    );
    let hash = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(&raw))])).await;
    loop {
        let v = next_json(&mut ws).await;
        if v["params"]["subscription"] == json!(logs_id) {
            let log = &v["params"]["result"];
            assert_eq!(log["transactionHash"], hash, "{v}");
            assert_eq!(log["address"].as_str().unwrap().to_lowercase(), t.to_lowercase());
            assert_eq!(log["data"], format!("0x{:064x}", 42));
            break;
        }
    }
    // Other read methods a wallet uses.
    assert_eq!(ok(&n, "eth_maxPriorityFeePerGas", json!([])).await, "0x0");
    assert!(ok(&n, "web3_clientVersion", json!([])).await.as_str().unwrap().contains("lantau/v"));
    let fh = ok(&n, "eth_feeHistory", json!(["0x2", "latest", [50]])).await;
    assert_eq!(fh["baseFeePerGas"].as_array().unwrap().len(), 3, "{fh}");
    assert_eq!(ok(&n, "eth_getStorageAt", json!([t, "0x0", "latest"])).await, format!("0x{}", "0".repeat(64)));
    let r = receipt(&n, hash.as_str().unwrap()).await;
    assert_eq!(ok(&n, "eth_getBlockTransactionCountByNumber", json!([r["blockNumber"]])).await, "0x1");
    n.stop().await;
}

/// The filter family over raw JSON-RPC: a log filter delivers each Transfer once, in later
/// polls nothing again; getFilterLogs answers the whole query; block and pending filters; bad
/// and unknown ids; uninstall once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_deliver_each_block_log_and_pending_transaction_once() {
    let n = TestNode::start().await.unwrap();
    let (alice, issuer) = (dev_key("alice"), dev_addr("issuer"));
    let t = token().to_hex();
    let logs = ok(&n, "eth_newFilter", json!([{"address": t}])).await;
    let everything = ok(&n, "eth_newFilter", json!([{"fromBlock": "0x1", "address": t}])).await;
    let blocks = ok(&n, "eth_newBlockFilter", json!([])).await;
    let pending = ok(&n, "eth_newPendingTransactionFilter", json!([])).await;
    let start = u64::from_str_radix(ok(&n, "eth_blockNumber", json!([])).await.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    assert_eq!(ok(&n, "eth_getFilterChanges", json!([logs])).await, json!([]));

    let payload = n.client.travel_rule_payload(&alice.address(), &issuer).await.unwrap().encode_to_vec();
    let mut sent = Vec::new();
    for amount in [5u128, 6] {
        let nonce = ok(&n, "eth_getTransactionCount", json!([alice.address().to_hex(), "pending"])).await;
        let u = Unsigned {
            chain_id: Some(lantau_node::home::DEV_EVM_CHAIN_ID),
            nonce: u64::from_str_radix(nonce.as_str().unwrap().trim_start_matches("0x"), 16).unwrap(),
            gas_limit: 500_000,
            max_fee_per_gas: 2 * GWEI,
            max_priority_fee_per_gas: Some(GWEI),
            to: Some(token()),
            input: transfer_with_travel_rule_calldata(&issuer, amount, &payload),
            ..Default::default()
        };
        let hash = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&alice, &u)))])).await;
        let r = receipt(&n, hash.as_str().unwrap()).await;
        assert_eq!(r["status"], "0x1");
        // The block's logsBloom holds every bit of its receipts' blooms (not zero).
        let b = ok(&n, "eth_getBlockByHash", json!([r["blockHash"], false])).await;
        let bits = |v: &Value| hex::decode(v.as_str().unwrap().trim_start_matches("0x")).unwrap();
        let (block_bloom, rcpt_bloom) = (bits(&b["logsBloom"]), bits(&r["logsBloom"]));
        assert!(rcpt_bloom.iter().any(|x| *x != 0));
        assert!(block_bloom.iter().zip(&rcpt_bloom).all(|(b, r)| b & r == *r), "{b}");
        sent.push(hash);
    }
    // The pending filter saw both, once.
    assert_eq!(ok(&n, "eth_getFilterChanges", json!([pending])).await, json!(sent));
    assert_eq!(ok(&n, "eth_getFilterChanges", json!([pending])).await, json!([]));
    // The log filter: both Transfers, once; the filter from block 1 as well.
    let got = ok(&n, "eth_getFilterChanges", json!([logs])).await;
    let hashes: Vec<&Value> = got.as_array().unwrap().iter().map(|l| &l["transactionHash"]).collect();
    assert_eq!(hashes, sent.iter().collect::<Vec<_>>(), "{got}");
    assert_eq!(ok(&n, "eth_getFilterChanges", json!([logs])).await, json!([]));
    assert_eq!(ok(&n, "eth_getFilterChanges", json!([everything])).await.as_array().unwrap().len(), 2);
    let all = ok(&n, "eth_getFilterLogs", json!([everything])).await;
    assert_eq!(all.as_array().unwrap().len(), 2, "{all}");
    // The block filter: each block since it was made, in order, once.
    let latest = u64::from_str_radix(ok(&n, "eth_blockNumber", json!([])).await.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let got = ok(&n, "eth_getFilterChanges", json!([blocks])).await;
    let got = got.as_array().unwrap();
    assert!(got.len() as u64 >= latest - start, "{got:?}");
    for (i, h) in got.iter().enumerate() {
        let b = ok(&n, "eth_getBlockByHash", json!([h, false])).await;
        assert_eq!(b["number"], format!("{:#x}", start + 1 + i as u64));
    }
    // Errors: a malformed id, an unknown one, getFilterLogs of a block filter, a blockHash filter.
    assert_eq!(rpc(&n, "eth_getFilterChanges", json!(["nope"])).await["error"]["code"], -32602);
    let unknown = rpc(&n, "eth_getFilterChanges", json!(["0x1234"])).await;
    assert_eq!((unknown["error"]["code"].clone(), unknown["error"]["message"].clone()), (json!(-32000), json!("filter not found")));
    assert_eq!(rpc(&n, "eth_getFilterLogs", json!([blocks])).await["error"]["code"], -32602);
    assert_eq!(rpc(&n, "eth_newFilter", json!([{"blockHash": format!("0x{}", "00".repeat(32))}])).await["error"]["code"], -32602);
    assert_eq!(ok(&n, "eth_uninstallFilter", json!([logs])).await, json!(true));
    assert_eq!(ok(&n, "eth_uninstallFilter", json!([logs])).await, json!(false));
    assert_eq!(rpc(&n, "eth_getFilterChanges", json!([logs])).await["error"]["message"], "filter not found");
    n.stop().await;
}

/// A wallet's loop: send, wait for the receipt, ask the pending nonce, send the next. The
/// pending count must never go back behind a mined transaction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pending_nonce_is_never_behind_a_mined_transaction() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    for i in 0..15u64 {
        let count = ok(&n, "eth_getTransactionCount", json!([alice.address().to_hex(), "pending"])).await;
        let nonce = u64::from_str_radix(count.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
        assert_eq!(nonce, i, "after {i} mined transactions");
        let u = to_bob(nonce);
        let hash = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&alice, &u)))])).await;
        assert_eq!(receipt(&n, hash.as_str().unwrap()).await["status"], "0x1");
    }
    n.stop().await;
}

/// The audit rows of an EVM transfer are found by its Ethereum hash (as a wallet or a
/// complaint shows it, any case, with or without 0x) as well as by the Cosmos hash, and carry
/// `eth_tx_hash`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evm_transfers_audit_rows_are_found_by_its_ethereum_hash() {
    let n = TestNode::start().await.unwrap();
    let (alice, issuer) = (dev_key("alice"), dev_addr("issuer"));
    let payload = n.client.travel_rule_payload(&alice.address(), &issuer).await.unwrap().encode_to_vec();
    let u = Unsigned {
        chain_id: Some(lantau_node::home::DEV_EVM_CHAIN_ID),
        nonce: 0,
        gas_limit: 500_000,
        max_fee_per_gas: 2 * GWEI,
        max_priority_fee_per_gas: Some(GWEI),
        to: Some(token()),
        input: transfer_with_travel_rule_calldata(&issuer, 77, &payload),
        ..Default::default()
    };
    // The estimate is the mined cost exactly, rows under the Ethereum hash included.
    let call = json!({"from": alice.address().to_hex(), "to": token().to_hex(), "data": format!("0x{}", const_hex::encode(&u.input))});
    let estimate = ok(&n, "eth_estimateGas", json!([call, "latest"])).await;
    let eth_hash = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&alice, &u)))])).await;
    let eth_hash = eth_hash.as_str().unwrap().to_string();
    let r = receipt(&n, &eth_hash).await;
    assert_eq!(r["status"], "0x1");
    assert_eq!(r["gasUsed"], estimate);
    let rows = |h: String| {
        let c = n.client.clone();
        async move { c.query(&format!("/chain/compliance/v1/audit_log?tx_hash={h}")).await.unwrap()["entries"].as_array().unwrap().clone() }
    };
    let by_eth = rows(eth_hash.clone()).await;
    let transfer: Vec<&Value> = by_eth.iter().filter(|r| r["tx_type"] == "transfer").collect();
    assert_eq!(transfer.len(), 1, "{by_eth:?}");
    assert_eq!(transfer[0]["metadata"]["eth_tx_hash"], eth_hash.as_str());
    assert_eq!(transfer[0]["amount"]["amount"], "77");
    let cosmos = transfer[0]["tx_hash"].as_str().unwrap().to_string();
    assert_ne!(cosmos.to_lowercase(), eth_hash.trim_start_matches("0x"));
    assert_eq!(rows(eth_hash.trim_start_matches("0x").to_uppercase()).await, by_eth);
    assert_eq!(rows(cosmos).await, by_eth);
    // A Cosmos-path transfer's rows have no Ethereum hash.
    let p = n.client.travel_rule_payload(&alice.address(), &issuer).await.unwrap();
    let t =
        crate::support::ok(&n, &alice, &crate::support::send(&alice.address(), &issuer, lantau_primitives::Coin::new("hkd.demo", 5u128)).travel_rule(&p)).await;
    let plain = rows(t.txhash.clone()).await;
    assert!(!plain.is_empty() && plain.iter().all(|r| r["metadata"].get("eth_tx_hash").is_none()), "{plain:?}");
    n.stop().await;
}

/// docs/evm.md's table of methods: every one marked "yes" answers (no error) with the
/// parameters below; every "no" is -32601. A method added to the table without parameters
/// here fails the test, so the table and the server stay in step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_the_table_lists_as_supported_answers() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    // A mined Ethereum transaction to point at.
    let u = to_bob(0);
    let tx = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&alice, &u)))])).await;
    let r = receipt(&n, tx.as_str().unwrap()).await;
    let (block, number) = (r["blockHash"].clone(), r["blockNumber"].clone());
    let a = alice.address().to_hex();
    let filter = ok(&n, "eth_newFilter", json!([{}])).await;
    let call = json!({"from": a, "to": dev_addr("bob").to_hex(), "value": "0x1"});
    let far_future = time::OffsetDateTime::now_utc().unix_timestamp() + 86_400;
    let params = |m: &str| -> Value {
        match m {
            "web3_clientVersion"
            | "net_version"
            | "net_listening"
            | "eth_chainId"
            | "eth_syncing"
            | "eth_mining"
            | "eth_hashrate"
            | "eth_accounts"
            | "eth_blockNumber"
            | "eth_gasPrice"
            | "eth_maxPriorityFeePerGas"
            | "eth_newBlockFilter"
            | "eth_newPendingTransactionFilter"
            | "txpool_status"
            | "txpool_content"
            | "txpool_inspect" => {
                json!([])
            }
            "web3_sha3" => json!(["0x68656c6c6f"]),
            "txpool_contentFrom" => json!([a]),
            "evm_mine" => json!([]),
            "hardhat_mine" | "anvil_mine" => json!(["0x1"]),
            "evm_increaseTime" => json!([0]),
            "evm_setNextBlockTimestamp" => json!([far_future]),
            "evm_setAutomine" => json!([false]),
            "evm_snapshot" => json!([]),
            "anvil_impersonateAccount" | "hardhat_impersonateAccount" | "anvil_stopImpersonatingAccount" | "hardhat_stopImpersonatingAccount" => json!([a]),
            "evm_revert" => json!(["0x99"]),
            "anvil_setBalance" | "hardhat_setBalance" => json!([format!("0x{}", "77".repeat(20)), "0xde0b6b3a7640000"]),
            "eth_feeHistory" => json!(["0x2", "latest", [50]]),
            "eth_getBalance" | "eth_getTransactionCount" | "eth_getCode" => json!([a, "latest"]),
            "eth_getStorageAt" => json!([a, "0x0", "latest"]),
            "eth_call" | "eth_estimateGas" | "eth_createAccessList" => json!([call, "latest"]),
            "eth_simulateV1" => json!([{"blockStateCalls": [{"calls": [call]}]}, "latest"]),
            "debug_traceCall" => json!([call, "latest", {"tracer": "callTracer"}]),
            "debug_traceTransaction" => json!([tx]),
            "debug_traceBlockByNumber" => json!([number, {"tracer": "prestateTracer"}]),
            "debug_traceBlockByHash" => json!([block]),
            "eth_sendRawTransaction" => {
                let next = Unsigned { nonce: 1, ..u.clone() };
                json!([format!("0x{}", const_hex::encode(sign(&alice, &next)))])
            }
            "eth_getTransactionByHash" | "eth_getTransactionReceipt" => json!([tx]),
            "eth_getTransactionByBlockHashAndIndex" => json!([block, "0x0"]),
            "eth_getTransactionByBlockNumberAndIndex" => json!([number, "0x0"]),
            "eth_getBlockByNumber" => json!([number, true]),
            "eth_getBlockByHash" => json!([block, false]),
            "eth_getBlockTransactionCountByNumber" | "eth_getUncleCountByBlockNumber" | "eth_getBlockReceipts" => json!([number]),
            "eth_getBlockTransactionCountByHash" | "eth_getUncleCountByBlockHash" => json!([block]),
            "eth_getUncleByBlockNumberAndIndex" => json!([number, "0x0"]),
            "eth_getUncleByBlockHashAndIndex" => json!([block, "0x0"]),
            "eth_getLogs" => json!([{"fromBlock": "0x1", "toBlock": "latest"}]),
            "eth_newFilter" => json!([{"fromBlock": "latest"}]),
            "eth_getFilterChanges" | "eth_getFilterLogs" => json!([filter]),
            "eth_uninstallFilter" => json!([filter]),
            other => panic!("docs/evm.md lists {other} as supported: give it parameters in this test"),
        }
    };
    let doc = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/evm.md")).unwrap();
    let table = doc.split("## The methods").nth(1).unwrap().split("\n## ").next().unwrap();
    let (mut yes, mut no) = (0, 0);
    for row in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let names: Vec<&str> = cells[1].split(',').map(|c| c.trim().trim_matches('`')).collect();
        for m in names.into_iter().filter(|m| !m.ends_with('*')) {
            match cells[2] {
                "yes" => {
                    let v = rpc(&n, m, params(m)).await;
                    assert!(v.get("error").is_none(), "{m}: {v}");
                    yes += 1;
                }
                "no" => {
                    let v = rpc(&n, m, json!([])).await;
                    assert_eq!(v["error"]["code"], -32601, "{m} is listed as not supported: {v}");
                    no += 1;
                }
                _ => {}
            }
        }
    }
    assert!(yes >= 40 && no >= 10, "{yes} supported, {no} not");
    let v = rpc(&n, "eth_getProof", json!([a, [], "latest"])).await;
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("abci_query"), "{v}");
    n.stop().await;
}

/// A waiting Ethereum transaction is replaced by one with the same nonce and both its fee cap
/// and tip 10% higher (a wallet's speed-up); less is "replacement transaction underpriced".
/// Blocks every 3 s here, so the first waits in the mempool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_transaction_is_replaced_by_one_paying_ten_percent_more() {
    let n = TestNode::start_with(lantau_node::home::InitOptions::default(), 3_000).await.unwrap();
    let (alice, bob) = (dev_key("alice"), dev_addr("bob"));
    let before = n.client.balance(&bob, "alantau").await.unwrap().0;
    let raw = |nonce: u64, fee: u128, tip: u128, value: u128| {
        let u = Unsigned {
            chain_id: Some(lantau_node::home::DEV_EVM_CHAIN_ID),
            nonce,
            gas_limit: 21_000,
            max_fee_per_gas: fee,
            max_priority_fee_per_gas: Some(tip),
            to: Some(bob),
            value,
            ..Default::default()
        };
        sign(&alice, &u)
    };
    let tx = |fee: u128, tip: u128, value: u128| json!([format!("0x{}", const_hex::encode(raw(0, fee, tip, value)))]);
    let first = ok(&n, "eth_sendRawTransaction", tx(2 * GWEI, GWEI, 1)).await;
    // The same fee, or less than 10% more on either: refused in geth's words.
    for (fee, tip) in [(2 * GWEI, GWEI), (2 * GWEI * 11 / 10, GWEI), (3 * GWEI, GWEI * 109 / 100)] {
        let v = rpc(&n, "eth_sendRawTransaction", tx(fee, tip, 2)).await;
        assert_eq!(v["error"]["code"], -32000, "{v}");
        assert!(v["error"]["message"].as_str().unwrap().starts_with("replacement transaction underpriced"), "{v}");
    }
    // 10% more on both: it takes the place of the first.
    let second = ok(&n, "eth_sendRawTransaction", tx(2 * GWEI * 11 / 10, GWEI * 11 / 10, 3)).await;
    let pool = ok(&n, "txpool_content", json!([])).await;
    let mine = &pool["pending"][alice.address().to_hex()];
    assert_eq!(mine["0"]["hash"], second, "{pool}");
    assert_eq!(mine.as_object().unwrap().len(), 1, "{pool}");
    // A peer's forwarded replacement (the app-side mempool under CometBFT) replaces by the
    // same rule: nonce 1 at value 4, then at value 5 paying 10% more.
    let forward = |raw: Vec<u8>| {
        let tx = lantau_app::evm::msg::envelope(&lantau_app::evm::tx::decode(&raw).unwrap());
        let body = lantau_rpc::rest::encode_forwarded(&[&tx]);
        reqwest::Client::new().post(format!("{}{}", n.rest_url, lantau_rpc::rest::FORWARD_PATH)).body(body).send()
    };
    for (fee, tip, value) in [(2 * GWEI, GWEI, 4), (2 * GWEI * 11 / 10, GWEI * 11 / 10, 5)] {
        let r: Value = forward(raw(1, fee, tip, value)).await.unwrap().json().await.unwrap();
        assert_eq!(r["admitted"], 1, "{r}");
    }
    let pool = ok(&n, "txpool_content", json!([])).await;
    let mine = &pool["pending"][alice.address().to_hex()];
    assert_eq!(mine["1"]["value"], "0x5", "{pool}");
    assert_eq!(mine.as_object().unwrap().len(), 2, "{pool}");
    assert_eq!(receipt(&n, second.as_str().unwrap()).await["status"], "0x1");
    assert!(ok(&n, "eth_getTransactionReceipt", json!([first])).await.is_null());
    let replaced = mine["1"]["hash"].as_str().unwrap().to_string();
    assert_eq!(receipt(&n, &replaced).await["status"], "0x1");
    assert_eq!(n.client.balance(&bob, "alantau").await.unwrap().0, before + 3 + 5);

    // ethers: the same, as a wallet's speed-up; no bump is REPLACEMENT_UNDERPRICED.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/evm-client");
    assert!(dir.join("node_modules/ethers").exists(), "ethers is not installed: run scripts/prereqs.sh");
    let out = std::process::Command::new("node")
        .arg(dir.join("replace.mjs"))
        .env("ETH_URL", &n.eth_url)
        .env("ALICE_KEY", format!("0x{}", alice.to_hex().trim_start_matches("0x")))
        .env("BOB", bob.to_hex())
        .output()
        .expect("node runs");
    assert!(out.status.success(), "replace.mjs failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(n.client.balance(&bob, "alantau").await.unwrap().0, before + 3 + 5 + 3);
    n.stop().await;
}

/// The dev loop (Hardhat's and anvil's methods) on a dev chain whose blocks would otherwise
/// come every minute: evm_mine and hardhat_mine make blocks now, evm_increaseTime and
/// evm_setNextBlockTimestamp move the block clock, automine makes a block per transaction. A
/// chain without dev accounts refuses them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dev_chain_mines_on_demand_moves_its_clock_and_automines() {
    let n = TestNode::start_with(lantau_node::home::InitOptions::default(), 60_000).await.unwrap();
    let number = |v: &Value| u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let head = || async { ok(&n, "eth_getBlockByNumber", json!(["latest", false])).await };
    let start = number(&head().await["number"]);
    ok(&n, "evm_mine", json!([])).await;
    assert_eq!(number(&head().await["number"]), start + 1);
    ok(&n, "hardhat_mine", json!(["0x3"])).await;
    assert_eq!(number(&head().await["number"]), start + 4);
    // An hour later.
    let before = number(&head().await["timestamp"]);
    let total = ok(&n, "evm_increaseTime", json!([3600])).await;
    assert!(total.as_i64().unwrap() >= 3600, "{total}");
    ok(&n, "evm_mine", json!([])).await;
    let after = number(&head().await["timestamp"]);
    assert!(after >= before + 3600 && after < before + 3600 + 60, "{before} → {after}");
    // An exact next timestamp; one in the past is refused.
    let at = after + 100_000;
    assert!(ok(&n, "evm_setNextBlockTimestamp", json!([at])).await.is_null());
    ok(&n, "evm_mine", json!([])).await;
    assert_eq!(number(&head().await["timestamp"]), at);
    let v = rpc(&n, "evm_setNextBlockTimestamp", json!([at - 10])).await;
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("not after"), "{v}");
    // The clock goes on from there.
    ok(&n, "evm_mine", json!([])).await;
    assert!(number(&head().await["timestamp"]) >= at);
    // A native balance raised from the dev faucet, at once; never lowered.
    let fresh = format!("0x{}", "42".repeat(20));
    assert!(ok(&n, "anvil_setBalance", json!([fresh, "0x4563918244f40000"])).await.is_null());
    assert_eq!(ok(&n, "eth_getBalance", json!([fresh, "latest"])).await, "0x4563918244f40000");
    let v = rpc(&n, "hardhat_setBalance", json!([fresh, "0x1"])).await;
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("only raises"), "{v}");
    // Automine: a transaction is mined at once, not at the next minute.
    ok(&n, "evm_setAutomine", json!([true])).await;
    let u = to_bob(0);
    let hash = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&dev_key("alice"), &u)))])).await;
    let t = std::time::Instant::now();
    assert_eq!(receipt(&n, hash.as_str().unwrap()).await["status"], "0x1");
    assert!(t.elapsed() < Duration::from_secs(20));
    n.stop().await;

    // Not a dev chain: refused with the reason.
    let gov = lantau_crypto::SecretKey::from_bytes(&[9; 32]).unwrap().address();
    let opts = lantau_node::home::InitOptions { dev: false, governance: Some(gov), ..Default::default() };
    let n = TestNode::start_with(opts, 200).await.unwrap();
    for (m, p) in [("evm_mine", json!([])), ("evm_increaseTime", json!([1])), ("evm_setAutomine", json!([true]))] {
        let v = rpc(&n, m, p).await;
        assert_eq!(v["error"]["code"], -32000, "{m}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("only served by a dev chain"), "{v}");
    }
    n.stop().await;
}

/// evm_snapshot / evm_revert (Hardhat's loadFixture): a revert returns the chain to the
/// snapshot, state, blocks, receipts and clock, and the chain goes on from there (the same
/// nonce is mined again, on top of the snapshot's block); a snapshot is used up by its revert.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dev_chain_reverts_to_a_snapshot_and_goes_on_from_it() {
    let n = TestNode::start_with(lantau_node::home::InitOptions::default(), 60_000).await.unwrap();
    let number = |v: &Value| u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    ok(&n, "evm_mine", json!([])).await;
    let head = ok(&n, "eth_getBlockByNumber", json!(["latest", false])).await;
    let bob = dev_addr("bob").to_hex();
    let balance = ok(&n, "eth_getBalance", json!([bob, "latest"])).await;
    let id = ok(&n, "evm_snapshot", json!([])).await;
    let later = ok(&n, "evm_snapshot", json!([])).await;
    assert_ne!(id, later);

    // A transfer, a day later.
    ok(&n, "evm_increaseTime", json!([86_400])).await;
    let sent = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&dev_key("alice"), &to_bob(0))))])).await;
    ok(&n, "evm_mine", json!([])).await;
    let mined = receipt(&n, sent.as_str().unwrap()).await;
    assert_eq!(number(&mined["blockNumber"]), number(&head["number"]) + 1);
    ok(&n, "evm_mine", json!([])).await;
    assert_ne!(ok(&n, "eth_getBalance", json!([bob, "latest"])).await, balance);

    assert_eq!(ok(&n, "evm_revert", json!([id])).await, json!(true));
    assert_eq!(ok(&n, "eth_getBlockByNumber", json!(["latest", false])).await, head);
    assert_eq!(ok(&n, "eth_getBalance", json!([bob, "latest"])).await, balance);
    assert_eq!(ok(&n, "eth_getTransactionCount", json!([dev_addr("alice").to_hex(), "latest"])).await, "0x0");
    assert!(ok(&n, "eth_getTransactionReceipt", json!([sent])).await.is_null());
    assert!(ok(&n, "eth_getBlockByNumber", json!([mined["blockNumber"], false])).await.is_null());
    // Used up, with every later one; an unknown id is false too.
    assert_eq!(ok(&n, "evm_revert", json!([id])).await, json!(false));
    assert_eq!(ok(&n, "evm_revert", json!([later])).await, json!(false));

    // The chain goes on from the snapshot's block, on the clock as it was then.
    let again = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&dev_key("alice"), &to_bob(0))))])).await;
    ok(&n, "evm_mine", json!([])).await;
    let r = receipt(&n, again.as_str().unwrap()).await;
    assert_eq!(r["blockNumber"], mined["blockNumber"]);
    let block = ok(&n, "eth_getBlockByNumber", json!([r["blockNumber"], false])).await;
    assert_eq!(block["parentHash"], head["hash"]);
    assert!(number(&block["timestamp"]) < number(&head["timestamp"]) + 86_400, "{block}");
    // State at the heights before it answers as before.
    assert_eq!(ok(&n, "eth_getBalance", json!([bob, head["number"]])).await, balance);
    n.stop().await;
}

/// One ledger, one history: a mixed history of stablecoin movements (a Cosmos send, a
/// multi-send, a mint, a burn, an EVM transfer, a seizure, a redemption paid) is replayed from
/// the token's Transfer logs alone, starting from the genesis balances (`balanceOf` at block
/// 0), and gives every holder's `balanceOf` now; a Cosmos transaction's receipt (under its
/// Cosmos hash) carries its logs, and its block's bloom has them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_stablecoin_movement_is_a_transfer_log_and_the_logs_replay_every_balance() {
    use crate::support::{hkd, one};
    use lantau_proto::chain::stablecoin::v1 as spb;
    let n = TestNode::start().await.unwrap();
    let (alice, bob, issuer) = (dev_addr("alice"), dev_addr("bob"), dev_addr("issuer"));
    let token_addr = token();
    let token = token_addr.to_hex();
    let done = |b: (lantau_crypto::SecretKey, lantau_client::TxBuilder)| {
        let n = &n;
        async move { crate::support::ok(n, &b.0, &b.1).await }
    };
    let send = done((dev_key("alice"), hkd(&n, &alice, &issuer, 1_234, &alice, &issuer).await)).await;
    let p = n.client.travel_rule_payload(&alice, &issuer).await.unwrap();
    let multi = lantau_client::msg_multi_send(
        &alice,
        &[lantau_primitives::Coin::new("hkd.demo", 30u128)],
        &[(issuer, vec![lantau_primitives::Coin::new("hkd.demo", 10u128)]), (issuer, vec![lantau_primitives::Coin::new("hkd.demo", 20u128)])],
    );
    done((dev_key("alice"), lantau_client::TxBuilder::new(vec![multi]).gas(600_000).travel_rule(&p))).await;
    let coin = |a: &str| Some(cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: "hkd.demo".into(), amount: a.into() });
    done((dev_key("issuer"), one(&spb::MsgMint { issuer: issuer.to_bech32(), recipient: alice.to_bech32(), amount: coin("500") }))).await;
    done((dev_key("issuer"), one(&spb::MsgBurn { issuer: issuer.to_bech32(), amount: coin("300") }))).await;
    let payload = n.client.travel_rule_payload(&alice, &issuer).await.unwrap().encode_to_vec();
    crate::support::eth_send(&n, &dev_key("alice"), Some(token_addr), transfer_with_travel_rule_calldata(&issuer, 77, &payload)).await;
    let seize = spb::MsgSeize {
        seizer: dev_addr("treasury").to_bech32(),
        denom: "hkd.demo".into(),
        from: bob.to_bech32(),
        to: issuer.to_bech32(),
        amount: "40".into(),
        evidence_ref: "HCMP-9/2026".into(),
        memo: "order".into(),
    };
    done((dev_key("treasury"), one(&seize))).await;
    let request = spb::MsgRequestRedemption { holder: alice.to_bech32(), denom: "hkd.demo".into(), amount: "60".into(), payout_ref: "acct".into() };
    done((dev_key("alice"), one(&request))).await;
    done((dev_key("treasury"), one(&spb::MsgSettleRedemption { redeemer: dev_addr("treasury").to_bech32(), id: 1, payment_ref: "paid".into() }))).await;

    // The replay: genesis balances, then every Transfer log in order.
    let logs = ok(&n, "eth_getLogs", json!([{"fromBlock": "0x1", "toBlock": "latest", "address": token}])).await;
    let logs = logs.as_array().unwrap();
    let word_addr = |t: &Value| format!("0x{}", &t.as_str().unwrap()[26..]);
    let balance_of = |who: String, at: &'static str| {
        let n = &n;
        let t = token.clone();
        async move {
            let data = format!("0x70a08231{}{}", "0".repeat(24), who.trim_start_matches("0x"));
            let v = ok(n, "eth_call", json!([{"to": t, "data": data}, at])).await;
            u128::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
        }
    };
    let zero = format!("0x{}", "0".repeat(40));
    let mut holders: std::collections::BTreeSet<String> = [alice, bob, issuer, dev_addr("carol")].iter().map(|a| a.to_hex().to_lowercase()).collect();
    for l in logs {
        holders.insert(word_addr(&l["topics"][1]));
        holders.insert(word_addr(&l["topics"][2]));
    }
    holders.remove(&zero);
    let mut ledger = std::collections::BTreeMap::new();
    for h in &holders {
        ledger.insert(h.clone(), balance_of(h.clone(), "earliest").await);
    }
    let (mut minted, mut burned) = (0u128, 0u128);
    for l in logs {
        let (from, to) = (word_addr(&l["topics"][1]), word_addr(&l["topics"][2]));
        let v = u128::from_str_radix(l["data"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
        if from == zero {
            minted += v;
        } else {
            *ledger.get_mut(&from).unwrap() -= v;
        }
        if to == zero {
            burned += v;
        } else {
            *ledger.get_mut(&to).unwrap() += v;
        }
    }
    for (h, b) in &ledger {
        assert_eq!(*b, balance_of(h.clone(), "latest").await, "balanceOf({h})");
    }
    assert_eq!((minted, burned), (500, 300 + 60), "the mint; the burn and the paid redemption");
    // Every movement's log is there: send, two multi-send legs, mint, burn, EVM, seizure,
    // redemption into and out of the escrow.
    assert_eq!(logs.len(), 9, "{logs:?}");
    let escrow = lantau_app::bank::redemption_escrow().to_hex().to_lowercase();
    assert!(ledger.contains_key(&escrow) && ledger[&escrow] == 0);

    // The Cosmos send's receipt, under its Cosmos hash, and its block's bloom.
    let hash = format!("0x{}", send.txhash.to_lowercase());
    let r = ok(&n, "eth_getTransactionReceipt", json!([hash])).await;
    assert_eq!((r["status"].as_str(), r["from"].as_str().map(str::to_lowercase)), (Some("0x1"), Some(alice.to_hex().to_lowercase())), "{r}");
    assert_eq!(r["logs"][0]["address"].as_str().map(str::to_lowercase), Some(token.to_lowercase()));
    assert_eq!(r["logs"][0]["transactionHash"], hash.as_str());
    let in_logs = logs.iter().find(|l| l["transactionHash"] == hash.as_str()).unwrap();
    assert_eq!(in_logs["logIndex"], r["logs"][0]["logIndex"]);
    let b = ok(&n, "eth_getBlockByHash", json!([r["blockHash"], false])).await;
    let bits = |v: &Value| hex::decode(v.as_str().unwrap().trim_start_matches("0x")).unwrap();
    assert!(bits(&b["logsBloom"]).iter().zip(bits(&r["logsBloom"])).all(|(b, r)| b & r == r) && bits(&r["logsBloom"]).iter().any(|x| *x != 0));
    n.stop().await;
}

/// Init code that deploys `runtime` as it is.
fn deployer(runtime: &[u8]) -> Vec<u8> {
    let len = u8::try_from(runtime.len()).unwrap();
    let mut code = vec![0x60, len, 0x80, 0x60, 0x09, 0x5f, 0x39, 0x5f, 0xf3];
    code.extend_from_slice(runtime);
    code
}

/// A contract that counts its calls in slot 0 and returns the new count.
const COUNTER: [u8; 14] = [0x5f, 0x54, 0x60, 0x01, 0x01, 0x80, 0x5f, 0x55, 0x5f, 0x52, 0x60, 0x20, 0x5f, 0xf3];

/// A contract that counts its calls in slot 0 and forwards its calldata to `target`, returning
/// what the target returns and reverting with what it reverts with.
fn proxy(target: &Address) -> Vec<u8> {
    let mut c = vec![0x36, 0x5f, 0x5f, 0x37, 0x5f, 0x54, 0x60, 0x01, 0x01, 0x5f, 0x55, 0x5f, 0x5f, 0x36, 0x5f, 0x5f, 0x73];
    c.extend_from_slice(&target.0);
    c.extend_from_slice(&[0x5a, 0xf1, 0x3d, 0x5f, 0x5f, 0x3e, 0x60, 0x31, 0x57, 0x3d, 0x5f, 0xfd, 0x5b, 0x3d, 0x5f, 0xf3]);
    c
}

/// Deploys `runtime` from alice at `nonce`; its address.
async fn deploy(n: &TestNode, nonce: u64, runtime: &[u8]) -> Address {
    let u = Unsigned { nonce, gas_limit: 300_000, to: None, value: 0, input: deployer(runtime), ..to_bob(nonce) };
    let tx = ok(n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&dev_key("alice"), &u)))])).await;
    let r = receipt(n, tx.as_str().unwrap()).await;
    assert_eq!(r["status"], "0x1", "{r}");
    Address::from_hex(r["contractAddress"].as_str().unwrap()).unwrap()
}

/// debug_trace* with the struct logger, callTracer and prestateTracer on mined transactions,
/// blocks and calls; a gated refusal inside a contract shows its reason in the call frame;
/// eth_createAccessList names the slots a call reads; bad tracers are -32602.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traces_show_each_frame_and_the_gate_reason_and_access_lists_name_the_slots() {
    let n = TestNode::start().await.unwrap();
    let alice = dev_key("alice");
    let counter = deploy(&n, 0, &COUNTER).await;
    let to_counter = deploy(&n, 1, &proxy(&counter)).await;
    let to_token = deploy(&n, 2, &proxy(&token())).await;

    // Through the proxy, a transfer whose sender (the proxy: no identity) the gates refuse.
    let transfer = call_data(
        "transfer(address,uint256)",
        &[word_of(&dev_addr("bob")), {
            let mut w = [0u8; 32];
            w[31] = 1;
            w
        }],
    );
    let u = Unsigned { nonce: 3, gas_limit: 400_000, to: Some(to_token), value: 0, input: hex::decode(&transfer[2..]).unwrap(), ..to_bob(3) };
    let hash = ok(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&alice, &u)))])).await;
    let r = receipt(&n, hash.as_str().unwrap()).await;
    assert_eq!(r["status"], "0x0", "{r}");

    let calls = ok(&n, "debug_traceTransaction", json!([hash, {"tracer": "callTracer"}])).await;
    assert_eq!(calls["type"], "CALL", "{calls}");
    assert_eq!(calls["to"].as_str().unwrap(), to_token.to_hex().to_lowercase(), "{calls}");
    assert_eq!(calls["error"], "execution reverted", "{calls}");
    let inner = &calls["calls"][0];
    assert_eq!(inner["to"].as_str().unwrap(), token().to_hex().to_lowercase(), "{calls}");
    let reason = inner["revertReason"].as_str().unwrap_or_default();
    assert!(!reason.is_empty() && reason == calls["revertReason"].as_str().unwrap_or_default(), "the gate's reason in both frames: {calls}");
    assert_eq!(
        u64::from_str_radix(calls["gasUsed"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap(),
        u64::from_str_radix(r["gasUsed"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
    );

    let logs = ok(&n, "debug_traceTransaction", json!([hash])).await;
    assert_eq!(logs["failed"], true, "{logs}");
    let ops: Vec<&str> = logs["structLogs"].as_array().unwrap().iter().map(|s| s["op"].as_str().unwrap()).collect();
    assert!(ops.contains(&"SSTORE") && ops.contains(&"CALL") && ops.last() == Some(&"REVERT"), "{ops:?}");

    let pre = ok(&n, "debug_traceTransaction", json!([hash, {"tracer": "prestateTracer", "tracerConfig": {"diffMode": true}}])).await;
    assert!(pre["pre"].is_object() && pre["post"].is_object(), "{pre}");
    assert!(!pre.to_string().contains("0000000000000000000000000000000000000c05"), "no bookkeeping account: {pre}");

    // The block: every Ethereum transaction in it, traced.
    let block = ok(&n, "debug_traceBlockByNumber", json!([r["blockNumber"], {"tracer": "callTracer"}])).await;
    let entry = block.as_array().unwrap().iter().find(|e| e["txHash"] == hash).unwrap_or_else(|| panic!("{block}"));
    assert_eq!(entry["result"], calls);
    let by_hash = ok(&n, "debug_traceBlockByHash", json!([r["blockHash"], {"tracer": "callTracer"}])).await;
    assert_eq!(by_hash, block);

    // A call through the other proxy: a nested call that succeeds and returns the count.
    let a = alice.address().to_hex();
    let call = json!({"from": a, "to": to_counter.to_hex(), "gas": "0x30000"});
    let traced = ok(&n, "debug_traceCall", json!([call, "latest", {"tracer": "callTracer"}])).await;
    assert!(traced.get("error").is_none(), "{traced}");
    assert_eq!(traced["calls"][0]["to"].as_str().unwrap(), counter.to_hex().to_lowercase(), "{traced}");
    assert_eq!(traced["output"], format!("0x{:064x}", 1), "{traced}");

    // The access list: the slot each contract touched (the callee's too, as geth lists it).
    let list = ok(&n, "eth_createAccessList", json!([call, "latest"])).await;
    let mut want: Vec<Value> =
        [counter, to_counter].iter().map(|c| json!({"address": c.to_hex().to_lowercase(), "storageKeys": [format!("0x{}", "0".repeat(64))]})).collect();
    want.sort_by_key(|v| v["address"].as_str().unwrap().to_string());
    assert_eq!(list["accessList"], json!(want), "{list}");
    let with = u64::from_str_radix(list["gasUsed"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let without = u64::from_str_radix(ok(&n, "eth_estimateGas", json!([call])).await.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    // Listed slots are paid up front (EIP-2930): near the cost without, not equal.
    assert!(with > 21_000 && with.abs_diff(without) < without / 10, "with the list {with}, estimate without {without}");

    // Refusals.
    for (m, p) in [
        ("debug_traceTransaction", json!([hash, {"tracer": "noSuchTracer"}])),
        ("debug_traceTransaction", json!([hash, {"tracer": "{step: function() {}}"}])),
        ("debug_traceCall", json!([call, "latest", {"tracer": "callTracer", "stateOverrides": {a.clone(): {"balance": "0x1"}}}])),
    ] {
        let v = rpc(&n, m, p).await;
        assert_eq!(v["error"]["code"], -32602, "{m}: {v}");
    }
    let v = rpc(&n, "debug_traceTransaction", json!([format!("0x{}", "ab".repeat(32))])).await;
    assert_eq!(v["error"]["message"], "transaction not found", "{v}");
    n.stop().await;
}

/// eth_simulateV1: calls in order across blocks, each on the effects of those before it; a
/// gated refusal is that call's error with the gate's reason; nothing is kept; overrides are
/// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_blocks_carry_state_from_call_to_call_and_keep_nothing() {
    let n = TestNode::start().await.unwrap();
    let counter = deploy(&n, 0, &COUNTER).await;
    let a = dev_addr("alice").to_hex();
    let count = json!({"from": a, "to": counter.to_hex()});
    let one = {
        let mut w = [0u8; 32];
        w[31] = 1;
        w
    };
    let refused =
        json!({"from": dev_addr("carol").to_hex(), "to": token().to_hex(), "input": call_data("transfer(address,uint256)", &[word_of(&dev_addr("bob")), one])});
    let latest = ok(&n, "eth_blockNumber", json!([])).await;
    let out = ok(&n, "eth_simulateV1", json!([{"blockStateCalls": [{"calls": [count, count]}, {"calls": [count, refused]}]}, "latest"])).await;
    let blocks = out.as_array().unwrap();
    assert_eq!(blocks.len(), 2, "{out}");
    let number = |v: &Value| u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    assert_eq!(number(&blocks[0]["number"]), number(&latest) + 1);
    assert_eq!(blocks[1]["parentHash"], blocks[0]["hash"]);
    let word = |k: u64| format!("0x{k:064x}");
    let returned: Vec<Value> = blocks.iter().flat_map(|b| b["calls"].as_array().unwrap().iter().map(|c| c["returnData"].clone())).collect();
    assert_eq!(&returned[..3], &[json!(word(1)), json!(word(2)), json!(word(3))], "{out}");
    let gate = &blocks[1]["calls"][1];
    assert_eq!(gate["status"], "0x0", "{gate}");
    assert_eq!(gate["error"]["code"], 3, "{gate}");
    assert!(gate["error"]["message"].as_str().unwrap().starts_with("execution reverted: "), "{gate}");
    // Nothing kept.
    assert_eq!(ok(&n, "eth_call", json!([count, "latest"])).await, word(1));
    for p in [
        json!([{"blockStateCalls": [{"stateOverrides": {a.clone(): {"balance": "0x1"}}, "calls": [count]}]}]),
        json!([{"blockStateCalls": [{"calls": [count]}], "validation": true}]),
        json!([{"blockStateCalls": "x"}]),
    ] {
        let v = rpc(&n, "eth_simulateV1", p).await;
        assert_eq!(v["error"]["code"], -32602, "{v}");
    }
    n.stop().await;
}

/// anvil_impersonateAccount on a dev chain: eth_sendTransaction sends for the account without
/// its key, and the gates still judge its transfers; stopping ends it; a chain whose genesis
/// does not allow impersonation refuses the form in its ante.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_impersonated_account_sends_without_its_key_and_still_meets_the_gates() {
    let n = TestNode::start().await.unwrap();
    let (carol, bob) = (dev_addr("carol").to_hex(), dev_addr("bob").to_hex());
    let send = json!({"from": carol, "to": bob, "value": "0x7"});
    let v = rpc(&n, "eth_sendTransaction", json!([send])).await;
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("anvil_impersonateAccount"), "{v}");
    assert_eq!(ok(&n, "anvil_impersonateAccount", json!([carol])).await, json!(true));
    let before = ok(&n, "eth_getBalance", json!([bob, "latest"])).await;
    let hash = ok(&n, "eth_sendTransaction", json!([send])).await;
    let r = receipt(&n, hash.as_str().unwrap()).await;
    assert_eq!(r["status"], "0x1", "{r}");
    assert_eq!(r["from"].as_str().unwrap().to_lowercase(), carol.to_lowercase(), "{r}");
    let after = ok(&n, "eth_getBalance", json!([bob, "latest"])).await;
    let wei = |v: &Value| u128::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    assert_eq!(wei(&after), wei(&before) + 7);
    // The gates: carol has no identity, so her stablecoin transfer is refused with the reason
    // (the estimate first; mined with a gas limit of its own, it reverts).
    let one = {
        let mut w = [0u8; 32];
        w[31] = 1;
        w
    };
    let transfer = json!({"from": carol, "to": token().to_hex(), "input": call_data("transfer(address,uint256)", &[word_of(&dev_addr("bob")), one])});
    let v = rpc(&n, "eth_sendTransaction", json!([transfer])).await;
    assert_eq!(v["error"]["code"], 3, "{v}");
    let mut with_gas = transfer.clone();
    with_gas["gas"] = json!("0x30000");
    let hash = ok(&n, "hardhat_impersonateAccount", json!([carol])).await;
    assert_eq!(hash, json!(true));
    let hash = ok(&n, "eth_sendTransaction", json!([with_gas])).await;
    assert_eq!(receipt(&n, hash.as_str().unwrap()).await["status"], "0x0");
    // Stopped: refused again.
    assert_eq!(ok(&n, "anvil_stopImpersonatingAccount", json!([carol])).await, json!(true));
    let v = rpc(&n, "eth_sendTransaction", json!([send])).await;
    assert_eq!(v["error"]["code"], -32000, "{v}");
    n.stop().await;

    // A chain whose genesis does not allow it: the methods are refused, and the form itself
    // is an invalid signature in the ante.
    let gov = lantau_crypto::SecretKey::from_bytes(&[9; 32]).unwrap().address();
    let opts = lantau_node::home::InitOptions { dev: false, governance: Some(gov), extra_accounts: vec![dev_addr("carol")], ..Default::default() };
    let n = TestNode::start_with(opts, 200).await.unwrap();
    let v = rpc(&n, "anvil_impersonateAccount", json!([carol])).await;
    assert!(v["error"]["message"].as_str().unwrap().contains("only served by a dev chain"), "{v}");
    let raw = lantau_app::evm::tx::impersonated_raw(
        lantau_node::home::DEV_EVM_CHAIN_ID,
        &dev_addr("carol"),
        0,
        21_000,
        GWEI,
        0,
        Some(&dev_addr("bob")),
        [0; 32],
        &[],
    );
    let v = rpc(&n, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(raw))])).await;
    assert!(v["error"]["message"].as_str().unwrap().contains("invalid signature"), "{v}");
    n.stop().await;
}

//! The spec's client flows as one suite, run unchanged against any node that serves them: a
//! dev chain (the embedded engine) or a validator of a CometBFT network. A wallet or an
//! exchange uses exactly these: subscribe over the CometBFT WebSocket, broadcast SYNC (REST)
//! and ASYNC (CometBFT RPC), confirm by GET tx on both, search on both, a refusal with its
//! compliance code, the audit trail, and the Ethereum JSON-RPC's view of the same chain.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{ensure, Context as _};
use futures::{SinkExt, StreamExt};
use lantau_client::{msg_send, RestClient, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::{Address, Coin, NATIVE_DENOM};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// Where a node answers.
#[derive(Debug, Clone)]
pub struct Endpoints {
    /// The Cosmos REST gateway, `http://host:port`.
    pub rest: String,
    /// The CometBFT RPC (CometBFT's own, or the embedded node's), `http://host:port`.
    pub rpc: String,
    /// The Ethereum JSON-RPC, `http://host:port`.
    pub json_rpc: String,
}

/// What the flows sent.
#[derive(Debug, Clone)]
pub struct FlowReport {
    /// The native send broadcast SYNC over REST.
    pub sync_hash: String,
    /// The gated stablecoin transfer broadcast ASYNC over the CometBFT RPC.
    pub async_hash: String,
}

const WAIT: Duration = Duration::from_secs(60);

async fn rpc(http: &reqwest::Client, e: &Endpoints, path: &str) -> anyhow::Result<Value> {
    let v: Value = http.get(format!("{}/{path}", e.rpc)).send().await?.json().await.with_context(|| format!("{}/{path}", e.rpc))?;
    v.get("result").cloned().with_context(|| format!("{path}: {v}"))
}

async fn next_json<S>(ws: &mut S) -> anyhow::Result<Value>
where
    S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        let msg = tokio::time::timeout(WAIT, ws.next()).await.context("no WebSocket message within 60 s")?.context("WebSocket closed")??;
        if let Message::Text(t) = msg {
            return Ok(serde_json::from_str(&t)?);
        }
    }
}

/// Runs the flows with `sender` (an account with native coin, an identity and `hkd.demo`),
/// paying `recipient` (an account with an identity). Every check failing is an `Err` saying
/// which.
pub async fn spec_client_flows(e: &Endpoints, sender: &SecretKey, recipient: &Address) -> anyhow::Result<FlowReport> {
    let http = reqwest::Client::new();
    let rest = RestClient::new(&e.rest);
    let from = sender.address();
    let chain_id = rest.chain_id().await?;
    let (account_number, sequence) = rest.account(&from).await?.context("the sender has no account")?;
    let mut signer = SignerData { chain_id, account_number, sequence };
    let mut sign = |b: TxBuilder| {
        let tx = b.sign(sender, &signer);
        signer.sequence += 1;
        tx
    };

    // 1. Subscribe to the sender's transactions over the CometBFT WebSocket.
    let ws_url = format!("{}/websocket", e.rpc.replacen("http://", "ws://", 1));
    let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url).await.with_context(|| ws_url.clone())?;
    let q = format!("tm.event='Tx' AND message.sender='{}'", from.to_bech32());
    ws.send(Message::Text(json!({"jsonrpc": "2.0", "id": 7, "method": "subscribe", "params": {"query": q}}).to_string().into())).await?;
    let ack = next_json(&mut ws).await?;
    ensure!(ack["id"] == 7 && ack.get("error").is_none(), "subscribe: {ack}");

    // 2. A native send, broadcast SYNC over REST.
    let send = sign(TxBuilder::new(vec![msg_send(&from, recipient, &[Coin::new(NATIVE_DENOM, 4321u128)])]).gas(200_000));
    let b = rest.broadcast(&send, "BROADCAST_MODE_SYNC").await?;
    ensure!(b.code == 0, "SYNC broadcast refused: {}", b.raw_log);
    ensure!(b.txhash.len() == 64 && b.txhash == b.txhash.to_uppercase(), "tx hash {:?}", b.txhash);
    let sync_hash = b.txhash;

    // 3. A gated stablecoin transfer with its Travel Rule payload, broadcast ASYNC over the
    //    CometBFT RPC right after (no wait: the node's mempool knows the first).
    let payload = rest.travel_rule_payload(&from, recipient).await?;
    let transfer = sign(TxBuilder::new(vec![msg_send(&from, recipient, &[Coin::new("hkd.demo", 1234u128)])]).gas(400_000).travel_rule(&payload));
    let a = rpc(&http, e, &format!("broadcast_tx_async?tx=0x{}", const_hex::encode(&transfer))).await?;
    ensure!(a["code"] == 0, "ASYNC broadcast: {a}");
    let async_hash = a["hash"].as_str().context("ASYNC broadcast without a hash")?.to_string();

    // 4. Both confirmed by GET tx on REST, with their events.
    let mut heights = Vec::new();
    for h in [&sync_hash, &async_hash] {
        let r = rest.wait_for_tx(h, WAIT, Duration::from_millis(50)).await?;
        ensure!(r.code == 0, "{h}: {}", r.raw_log);
        let kinds: BTreeSet<&str> = r.events.iter().filter_map(|e| e["type"].as_str()).collect();
        for k in ["transfer", "message", "tx"] {
            ensure!(kinds.contains(k), "{h}: no {k} event in {kinds:?}");
        }
        heights.push(r.height.parse::<u64>()?);
    }
    // 5. And on the CometBFT RPC (`tx`; CometBFT indexes a block a moment after its commit,
    //    so a client polls it as it polls REST).
    let deadline = tokio::time::Instant::now() + WAIT;
    let t = loop {
        match rpc(&http, e, &format!("tx?hash=0x{async_hash}")).await {
            Ok(t) => break t,
            Err(err) if tokio::time::Instant::now() > deadline => return Err(err),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    ensure!(t["tx_result"]["code"].as_u64().unwrap_or(0) == 0, "tx: {t}");
    ensure!(t["height"].as_str().and_then(|h| h.parse::<u64>().ok()) == Some(heights[1]), "tx height {} vs REST {}", t["height"], heights[1]);

    // 6. The WebSocket delivered both.
    let mut seen = BTreeSet::new();
    while seen.len() < 2 {
        let ev = next_json(&mut ws).await?;
        ensure!(ev["id"] == 7 && ev["result"]["data"]["type"] == "tendermint/event/Tx", "event: {ev}");
        if let Some(h) = ev["result"]["events"]["tx.hash"][0].as_str() {
            seen.insert(h.to_string());
        }
    }
    ensure!(seen == BTreeSet::from([sync_hash.clone(), async_hash.clone()]), "WebSocket events for {seen:?}");

    // 7. Search finds both, on REST and on the CometBFT RPC.
    let (total, found) = rest.search(&format!("message.sender='{}'", from.to_bech32()), true, 100).await?;
    let found: BTreeSet<String> = found.into_iter().map(|t| t.txhash).collect();
    ensure!(total >= 2 && found.contains(&sync_hash) && found.contains(&async_hash), "REST search: {total} {found:?}");
    let s = rpc(&http, e, &format!("tx_search?query=%22message.sender='{}'%22&per_page=100&order_by=%22desc%22", from.to_bech32())).await?;
    let found: BTreeSet<&str> = s["txs"].as_array().map(|a| a.iter().filter_map(|t| t["hash"].as_str()).collect()).unwrap_or_default();
    // (`tx` found the later transfer, so CometBFT has indexed both.)
    ensure!(found.contains(sync_hash.as_str()) && found.contains(async_hash.as_str()), "tx_search: {s}");

    // 8. A transfer the gates refuse (the recipient has no identity): refused at admission
    //    with the compliance codespace; nothing is spent.
    let nobody = lantau_crypto::secret_key_from_mnemonic(lantau_node::home::DEV_MNEMONIC, 99)?.address();
    let refused = TxBuilder::new(vec![msg_send(&from, &nobody, &[Coin::new("hkd.demo", 100u128)])]).gas(400_000).travel_rule(&payload).sign(sender, &signer);
    let r = rest.broadcast(&refused, "BROADCAST_MODE_SYNC").await?;
    ensure!(r.code != 0 && r.codespace == "compliance", "a transfer to an address without identity: code {} {} {}", r.code, r.codespace, r.raw_log);

    // 9. The audit trail has the transfer.
    let log = rest.query(&format!("/chain/compliance/v1/audit_log?tx_hash={}", async_hash.to_lowercase())).await?;
    ensure!(log["entries"].as_array().is_some_and(|a| !a.is_empty()), "audit log for the transfer: {log}");

    // 10. The Ethereum JSON-RPC sees the same chain and the same balance.
    let eth = |method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let http = http.clone();
        let url = e.json_rpc.clone();
        async move {
            let v: Value = http.post(url).json(&body).send().await?.json().await?;
            v.get("result").cloned().with_context(|| format!("JSON-RPC: {v}"))
        }
    };
    let n = eth("eth_blockNumber", json!([])).await?;
    let n = u64::from_str_radix(n.as_str().unwrap_or_default().trim_start_matches("0x"), 16)?;
    ensure!(n >= heights[1], "eth_blockNumber {n} below the transfer's height {}", heights[1]);
    let wei = eth("eth_getBalance", json!([from.to_hex(), "latest"])).await?;
    let wei = u128::from_str_radix(wei.as_str().unwrap_or_default().trim_start_matches("0x"), 16)?;
    let native = rest.balance(&from, NATIVE_DENOM).await?.0;
    ensure!(wei == native, "eth_getBalance {wei} vs REST {native}");
    Ok(FlowReport { sync_hash, async_hash })
}

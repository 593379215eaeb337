//! `lantaud tx evm ...`: the EVM path from the command line, over the node's Ethereum JSON-RPC
//! (what a wallet uses): a gated stablecoin transfer through the ERC-20 precompile, and the
//! submission of any signed Ethereum transaction. Both wait for the receipt and print it.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use lantau_client::RestClient;
use prost::Message as _;
use serde_json::{json, Value};

use super::{print, resolve_address, KeyringArgs, NodeArgs, Output};

/// Where the Ethereum JSON-RPC is.
#[derive(Debug, Args, Clone)]
pub(super) struct EthArgs {
    /// The node's Ethereum JSON-RPC (HTTP).
    #[arg(long = "json-rpc", env = "LANTAU_JSON_RPC", default_value = "http://127.0.0.1:8545")]
    json_rpc: String,
    /// Do not wait for the receipt.
    #[arg(long)]
    no_wait: bool,
}

#[derive(Debug, Subcommand)]
pub(super) enum EvmTx {
    /// Transfer a stablecoin through its ERC-20 precompile with `transferWithTravelRule`:
    /// `transfer-with-travel-rule <from-key> <to-address> <amount>` (base units).
    TransferWithTravelRule {
        /// Key name of the sender (it signs the Ethereum transaction).
        from: String,
        /// Recipient (bech32 or 0x hex).
        to: String,
        /// Amount in the denom's base units (HKD cents for `hkd.demo`).
        amount: u128,
        /// The stablecoin.
        #[arg(long, default_value = "hkd.demo")]
        denom: String,
        /// The Travel Rule payload as JSON; filled from the identity registry when omitted.
        #[arg(long)]
        travel_rule: Option<String>,
        /// Gas limit (default: the node's estimate plus 30%).
        #[arg(long)]
        gas: Option<u64>,
        #[command(flatten)]
        node: NodeArgs,
        #[command(flatten)]
        kr: KeyringArgs,
        #[command(flatten)]
        eth: EthArgs,
    },
    /// Submit a signed Ethereum transaction (EIP-2718 bytes, 0x hex) with
    /// `eth_sendRawTransaction` and wait for its receipt.
    SendRaw {
        /// The signed transaction, 0x hex.
        raw: String,
        #[command(flatten)]
        eth: EthArgs,
    },
}

async fn rpc(url: &str, method: &str, params: Value) -> anyhow::Result<Value> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let v: Value = reqwest::Client::new().post(url).json(&body).send().await.with_context(|| format!("JSON-RPC {url}"))?.json().await?;
    if let Some(e) = v.get("error") {
        anyhow::bail!("{method}: {} (code {})", e["message"].as_str().unwrap_or(""), e["code"]);
    }
    Ok(v["result"].clone())
}

fn quantity(v: &Value) -> anyhow::Result<u64> {
    let s = v.as_str().context("expected a hex quantity")?;
    Ok(u64::from_str_radix(s.trim_start_matches("0x"), 16)?)
}

async fn submit_and_wait(out: Output, eth: &EthArgs, raw: &[u8]) -> anyhow::Result<()> {
    let hash = rpc(&eth.json_rpc, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(raw))])).await?;
    let hash = hash.as_str().unwrap_or_default().to_string();
    if eth.no_wait {
        print(out, json!({"transactionHash": hash}), || format!("submitted {hash} (not waiting for the receipt)"));
        return Ok(());
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let r = rpc(&eth.json_rpc, "eth_getTransactionReceipt", json!([hash])).await?;
        if !r.is_null() {
            let ok = r["status"] == "0x1";
            print(out, r.clone(), || {
                format!(
                    "{hash}: {} in block {} (gas used {})",
                    if ok { "succeeded" } else { "REVERTED (status 0x0; replay it with eth_call for the reason)" },
                    quantity(&r["blockNumber"]).unwrap_or(0),
                    quantity(&r["gasUsed"]).unwrap_or(0)
                )
            });
            if !ok {
                anyhow::bail!("transaction {hash} reverted");
            }
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("no receipt for {hash} within 60 s: it may still be waiting in a mempool");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub(super) async fn evm_tx(home: &Path, out: Output, t: EvmTx) -> anyhow::Result<()> {
    match t {
        EvmTx::TransferWithTravelRule { from, to, amount, denom, travel_rule, gas, node, kr, eth } => {
            let key = kr.open(home)?.secret(&from)?;
            let to = resolve_address(home, &to)?;
            let payload: lantau_proto::chain::compliance::v1::TravelRulePayload = match travel_rule {
                Some(j) => serde_json::from_str(&j).context("--travel-rule must be a JSON Travel Rule payload")?,
                None => RestClient::new(node.url()).travel_rule_payload(&key.address(), &to).await?,
            };
            let token = lantau_app::erc20::token_address(&denom);
            let data = lantau_client::eth::transfer_with_travel_rule_calldata(&to, amount, &payload.encode_to_vec());
            let chain_id = quantity(&rpc(&eth.json_rpc, "eth_chainId", json!([])).await?)?;
            let nonce = quantity(&rpc(&eth.json_rpc, "eth_getTransactionCount", json!([key.address().to_hex(), "pending"])).await?)?;
            let gas = match gas {
                Some(g) => g,
                None => {
                    let call = json!({"from": key.address().to_hex(), "to": token.to_hex(), "data": format!("0x{}", const_hex::encode(&data))});
                    let est = quantity(&rpc(&eth.json_rpc, "eth_estimateGas", json!([call])).await?)?;
                    est.saturating_mul(13) / 10
                }
            };
            let raw = lantau_client::eth::sign(
                &key,
                &lantau_client::eth::Unsigned {
                    chain_id: Some(chain_id),
                    nonce,
                    gas_limit: gas,
                    max_fee_per_gas: lantau_primitives::MIN_GAS_PRICE,
                    max_priority_fee_per_gas: Some(0),
                    to: Some(token),
                    input: data,
                    ..Default::default()
                },
            );
            submit_and_wait(out, &eth, &raw).await
        }
        EvmTx::SendRaw { raw, eth } => {
            let bytes = hex::decode(raw.trim().trim_start_matches("0x")).context("the transaction must be 0x hex")?;
            submit_and_wait(out, &eth, &bytes).await
        }
    }
}

//! Ethereum JSON shapes of blocks, transactions, receipts and logs, built from the node's
//! CometBFT blocks and the evm module's typed receipts in their results.

use lantau_app::evm::exec::EthLog;
use lantau_app::evm::receipt::{self as evm_receipt, Receipt as EvmReceipt};
use lantau_app::evm::EthTx;
use lantau_app::tendermint::abci::types::ExecTxResult;
use lantau_app::tendermint::Block;
use lantau_primitives::Address;
use serde_json::{json, Value};

/// `0x`-hex of a quantity, no leading zeros.
pub fn hex_u64(n: u64) -> String {
    format!("{n:#x}")
}

/// `0x`-hex of a quantity, no leading zeros.
pub fn hex_u128(n: u128) -> String {
    format!("{n:#x}")
}

/// A 32-byte big-endian word as a quantity.
pub fn word_quantity(w: &[u8; 32]) -> String {
    let h = const_hex::encode(w);
    let t = h.trim_start_matches('0');
    if t.is_empty() {
        "0x0".into()
    } else {
        format!("0x{t}")
    }
}

fn data(b: &[u8]) -> String {
    format!("0x{}", const_hex::encode(b))
}

fn addr(a: &Address) -> String {
    a.to_hex()
}

/// The block's hash as Ethereum clients see it: the CometBFT header hash.
pub fn block_hash(b: &Block) -> [u8; 32] {
    let mut out = [0u8; 32];
    let h = b.header.hash();
    let bytes = h.as_bytes();
    if bytes.len() == 32 {
        out.copy_from_slice(bytes);
    }
    out
}

/// The evm module's receipt of a transaction result (none when it is not an Ethereum
/// transaction that ran).
pub fn evm_receipt_of(result: &ExecTxResult) -> Option<EvmReceipt> {
    evm_receipt::of_result(&result.data)
}

/// The logs a committed transaction shows to Ethereum tooling: an Ethereum transaction's own
/// (its EVM receipt's), and for any other successful transaction one ERC-20 `Transfer` log of
/// the token's precompile address per stablecoin movement its bank events record (`transfer`,
/// `coinbase`: from the zero address, `burn`: to it), in event order. So every `hkd.` movement,
/// whatever path made it, is a Transfer log (docs/evm.md, "One ledger").
pub fn tx_logs(result: &ExecTxResult) -> Vec<EthLog> {
    if let Some(r) = evm_receipt_of(result) {
        return r.logs;
    }
    if !result.code.is_ok() {
        return Vec::new();
    }
    let zero = Address([0; 20]);
    let mut out = Vec::new();
    for e in &result.events {
        let attr = |k: &str| e.attributes.iter().find(|a| a.key_bytes() == k.as_bytes()).and_then(|a| a.value_str().ok()).map(str::to_string);
        let parties = match e.kind.as_str() {
            "transfer" => (attr("sender"), attr("recipient")),
            "coinbase" => (Some(String::new()), attr("minter")),
            "burn" => (attr("burner"), Some(String::new())),
            _ => continue,
        };
        let (Some(from), Some(to), Some(amount)) = (parties.0, parties.1, attr("amount")) else { continue };
        let party = |s: &str| if s.is_empty() { Some(zero) } else { Address::from_bech32(s).ok() };
        let (Some(from), Some(to)) = (party(&from), party(&to)) else { continue };
        for coin in amount.split(',') {
            let digits = coin.bytes().take_while(u8::is_ascii_digit).count();
            let (n, denom) = coin.split_at(digits);
            if !denom.starts_with(lantau_primitives::STABLECOIN_PREFIX) {
                continue;
            }
            let Ok(n) = n.parse::<u128>() else { continue };
            out.push(lantau_app::evm::precompile::transfer_event(&lantau_app::erc20::token_address(denom), &from, &to, n));
        }
    }
    out
}

/// The transaction hash a log cites: an Ethereum transaction's Ethereum hash, any other's
/// Cosmos hash (sha256 of its bytes).
pub fn log_tx_hash(result: Option<&ExecTxResult>, raw: Option<&[u8]>) -> [u8; 32] {
    match result.and_then(evm_receipt_of) {
        Some(r) => r.hash,
        None => raw.map(lantau_app::tx::tx_hash).unwrap_or([0; 32]),
    }
}

/// A transaction object; `at` = (block hash, height, index) once mined.
pub fn transaction(tx: &EthTx, at: Option<([u8; 32], u64, u32)>) -> Value {
    let (r, s, y) = &tx.signature;
    let v: u64 = if tx.tx_type == 0 { u64::from(*y).saturating_add(35).saturating_add(tx.chain_id.saturating_mul(2)) } else { u64::from(*y) };
    let mut o = json!({
        "hash": tx.hash_hex(),
        "nonce": hex_u64(tx.nonce),
        "blockHash": at.map(|a| data(&a.0)),
        "blockNumber": at.map(|a| hex_u64(a.1)),
        "transactionIndex": at.map(|a| hex_u64(u64::from(a.2))),
        "from": addr(&tx.from),
        "to": tx.to.as_ref().map(addr),
        "value": word_quantity(&tx.value),
        "gas": hex_u64(tx.gas_limit),
        "gasPrice": hex_u128(tx.effective_gas_price()),
        "input": data(&tx.input),
        "type": hex_u64(u64::from(tx.tx_type)),
        "chainId": hex_u64(tx.chain_id),
        "v": hex_u64(v),
        "r": format!("0x{}", const_hex::encode(r)),
        "s": format!("0x{}", const_hex::encode(s)),
    });
    if tx.tx_type >= 1 {
        o["yParity"] = json!(hex_u64(u64::from(*y)));
        o["accessList"] = json!(tx
            .access_list
            .iter()
            .map(|(a, keys)| json!({"address": addr(a), "storageKeys": keys.iter().map(|k| data(k)).collect::<Vec<_>>()}))
            .collect::<Vec<_>>());
    }
    if tx.tx_type == 2 {
        o["maxFeePerGas"] = json!(hex_u128(tx.max_fee_per_gas));
        o["maxPriorityFeePerGas"] = json!(hex_u128(tx.max_priority_fee_per_gas.unwrap_or(0)));
    }
    o
}

/// One log object.
pub fn log(l: &EthLog, tx_hash: &[u8; 32], height: u64, index: u32, block_hash: &[u8; 32], log_index: u64) -> Value {
    json!({
        "address": addr(&l.address),
        "topics": l.topics.iter().map(|t| data(t)).collect::<Vec<_>>(),
        "data": data(&l.data),
        "blockNumber": hex_u64(height),
        "blockHash": data(block_hash),
        "transactionHash": data(tx_hash),
        "transactionIndex": hex_u64(u64::from(index)),
        "logIndex": hex_u64(log_index),
        "removed": false,
    })
}

/// The 2048-bit bloom of logs (yellow paper: three 11-bit indexes from keccak256 per item).
pub fn bloom(logs: &[EthLog]) -> [u8; 256] {
    let mut b = [0u8; 256];
    let mut add = |item: &[u8]| {
        let h = lantau_crypto::keccak256(item);
        for i in [0usize, 2, 4] {
            let bit = (usize::from(h[i]) << 8 | usize::from(h[i + 1])) & 2047;
            let byte = 255 - bit / 8;
            b[byte] |= 1 << (bit % 8);
        }
    };
    for l in logs {
        add(&l.address.0);
        for t in &l.topics {
            add(t);
        }
    }
    b
}

/// The bloom of a block: of every log its transactions show ([`tx_logs`]), of both kinds.
pub fn block_bloom(results: Option<&crate::api::BlockResults>) -> [u8; 256] {
    let mut logs = Vec::new();
    for r in results.map(|r| r.tx_results.as_slice()).unwrap_or_default() {
        logs.extend(tx_logs(r));
    }
    bloom(&logs)
}

/// A mined transaction's receipt inputs.
#[derive(Debug, Clone)]
pub struct Receipt {
    /// The transaction.
    pub tx: EthTx,
    /// Block height.
    pub height: u64,
    /// Index in the block.
    pub index: u32,
    /// Block hash.
    pub block_hash: [u8; 32],
    /// The block-wide index of its first log.
    pub first_log: u64,
    /// Gas used by the block's transactions up to and including this one.
    pub cumulative_gas: u64,
    /// The evm module's record of the run; `None` when the carrying Cosmos transaction failed
    /// after its ante (the EVM refused to run it): the fee for its whole gas limit and its
    /// nonce stay spent, nothing else happened.
    pub ran: Option<EvmReceipt>,
}

/// The gas an included Ethereum transaction used, as its fee paid for it: the EVM's count, or
/// its whole gas limit when it did not run (no refund then).
pub fn receipt_gas(ran: Option<&EvmReceipt>, gas_limit: u64) -> u64 {
    ran.map_or(gas_limit, |r| r.gas_used)
}

/// The receipt object.
pub fn receipt(r: &Receipt) -> Value {
    let logs = r.ran.as_ref().map(|x| x.logs.as_slice()).unwrap_or_default();
    let gas_used = receipt_gas(r.ran.as_ref(), r.tx.gas_limit);
    json!({
        "transactionHash": r.tx.hash_hex(),
        "transactionIndex": hex_u64(u64::from(r.index)),
        "blockHash": data(&r.block_hash),
        "blockNumber": hex_u64(r.height),
        "from": addr(&r.tx.from),
        "to": r.tx.to.as_ref().map(addr),
        "cumulativeGasUsed": hex_u64(r.cumulative_gas),
        "gasUsed": hex_u64(gas_used),
        "effectiveGasPrice": hex_u128(r.tx.effective_gas_price()),
        "contractAddress": r.tx.created_address().as_ref().map(addr),
        "logs": logs.iter().enumerate().map(|(i, l)| log(l, &r.tx.hash, r.height, r.index, &r.block_hash, r.first_log + i as u64)).collect::<Vec<_>>(),
        "logsBloom": data(&bloom(logs)),
        "status": if r.ran.as_ref().is_some_and(EvmReceipt::succeeded) { "0x1" } else { "0x0" },
        "type": hex_u64(u64::from(r.tx.tx_type)),
    })
}

/// A Cosmos transaction's receipt (see `cosmos_receipt` in methods.rs): `first_log` and
/// `cumulative` count the block's earlier transactions.
pub fn cosmos_receipt(rec: &crate::api::TxRecord, block_hash: &[u8; 32], first_log: u64, cumulative: u64) -> Value {
    let logs = tx_logs(&rec.result);
    let gas_used = u64::try_from(rec.result.gas_used).unwrap_or(0);
    let from = rec
        .result
        .events
        .iter()
        .filter(|e| e.kind == "message")
        .flat_map(|e| e.attributes.iter())
        .find(|a| a.key_bytes() == b"sender")
        .and_then(|a| a.value_str().ok())
        .and_then(|s| Address::from_bech32(s).ok());
    json!({
        "transactionHash": data(&rec.hash),
        "transactionIndex": hex_u64(u64::from(rec.index)),
        "blockHash": data(block_hash),
        "blockNumber": hex_u64(rec.height),
        "from": from.as_ref().map(addr),
        "to": null,
        "cumulativeGasUsed": hex_u64(cumulative.saturating_add(gas_used)),
        "gasUsed": hex_u64(gas_used),
        "effectiveGasPrice": "0x0",
        "contractAddress": null,
        "logs": logs.iter().enumerate().map(|(i, l)| log(l, &rec.hash, rec.height, rec.index, block_hash, first_log + i as u64)).collect::<Vec<_>>(),
        "logsBloom": data(&bloom(&logs)),
        "status": if rec.result.code.is_ok() { "0x1" } else { "0x0" },
        "type": "0x0",
    })
}

/// A block object (`full`: transaction objects rather than hashes). Only the Ethereum
/// transactions of the block appear in it. `gas_limit`: the block's gas capacity
/// ([`EthServer::block_gas_limit`](super::EthServer::block_gas_limit)).
pub fn block(b: &Block, height: u64, gas_used: u64, gas_limit: u64, logs_bloom: &[u8; 256], full: bool) -> Value {
    let hash = block_hash(b);
    let parent = b.header.last_block_id.map(|id| id.hash.as_bytes().to_vec()).unwrap_or_else(|| vec![0; 32]);
    let mut txs = Vec::new();
    for (i, raw) in b.data.iter().enumerate() {
        let Some(tx) = lantau_app::evm::msg::eth_tx_of(raw) else { continue };
        if full {
            txs.push(transaction(&tx, Some((hash, height, u32::try_from(i).unwrap_or(u32::MAX)))));
        } else {
            txs.push(json!(tx.hash_hex()));
        }
    }
    let mut app_hash = b.header.app_hash.as_bytes().to_vec();
    app_hash.resize(32, 0);
    let proposer = b.header.proposer_address.as_bytes().to_vec();
    json!({
        "number": hex_u64(height),
        "hash": data(&hash),
        "parentHash": data(&parent),
        "nonce": "0x0000000000000000",
        "sha3Uncles": "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347",
        "logsBloom": data(logs_bloom),
        "transactionsRoot": data(&b.header.data_hash.map(|h| h.as_bytes().to_vec()).unwrap_or_else(|| vec![0; 32])),
        "stateRoot": data(&app_hash),
        "receiptsRoot": data(&[0u8; 32]),
        "miner": data(&proposer),
        "difficulty": "0x0",
        "totalDifficulty": "0x0",
        "extraData": "0x",
        "size": hex_u64(b.data.iter().map(|t| t.len() as u64).sum::<u64>()),
        "gasLimit": hex_u64(gas_limit),
        "gasUsed": hex_u64(gas_used),
        "timestamp": hex_u64(u64::try_from(b.header.time.unix_timestamp()).unwrap_or(0)),
        "transactions": txs,
        "uncles": [],
        "baseFeePerGas": hex_u128(lantau_app::evm::tx::BASE_FEE),
        "mixHash": data(&[0u8; 32]),
    })
}

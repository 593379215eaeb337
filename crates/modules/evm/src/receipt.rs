//! The typed record of an executed Ethereum transaction: the handler writes it as the message's
//! response (`MsgEthereumTxResponse` in the Cosmos tx result's `TxMsgData`, as Cosmos EVM
//! does), and the node's Ethereum API reads it back from the stored result with [`of_result`],
//! never from event strings.

use cosmos_sdk_proto::cosmos::base::abci::v1beta1::TxMsgData;
use cosmos_sdk_proto::Any;
use lantau_primitives::Address;
use lantau_proto::evm_vm as pb;
use prost::Message as _;

use crate::exec::{EthLog, Outcome};
use crate::tx::EthTx;

/// The response's type URL.
pub const MSG_ETHEREUM_TX_RESPONSE: &str = "/cosmos.evm.vm.v1.MsgEthereumTxResponse";

/// What an included Ethereum transaction did, as its receipt tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The Ethereum transaction hash.
    pub hash: [u8; 32],
    /// The logs it emitted, in order (none when it reverted).
    pub logs: Vec<EthLog>,
    /// The return data, or the revert data.
    pub ret: Vec<u8>,
    /// Empty on success; "execution reverted" on a revert; the halt reason otherwise.
    pub vm_error: String,
    /// The gas it used, refunds applied.
    pub gas_used: u64,
}

impl Receipt {
    /// Receipt status 1.
    pub fn succeeded(&self) -> bool {
        self.vm_error.is_empty()
    }
}

/// The message response the handler writes for `tx`, which ran with `out`.
pub fn response(tx: &EthTx, out: &Outcome) -> Any {
    let logs = out
        .logs
        .iter()
        .enumerate()
        .map(|(i, l)| pb::Log {
            address: l.address.to_hex(),
            topics: l.topics.iter().map(|t| format!("0x{}", const_hex::encode(t))).collect(),
            data: l.data.clone().into(),
            tx_hash: tx.hash_hex(),
            index: u64::try_from(i).unwrap_or(u64::MAX),
            ..Default::default()
        })
        .collect();
    let r = pb::MsgEthereumTxResponse {
        hash: tx.hash_hex(),
        logs,
        ret: out.output.clone().into(),
        vm_error: out.vm_error.clone(),
        gas_used: out.gas_used,
        ..Default::default()
    };
    Any { type_url: MSG_ETHEREUM_TX_RESPONSE.to_string(), value: r.encode_to_vec() }
}

/// The receipt recorded in a Cosmos tx result's `data`, when the transaction was an Ethereum
/// transaction that ran (a result without one, or one that does not decode, has none).
pub fn of_result(data: &[u8]) -> Option<Receipt> {
    if data.is_empty() {
        return None;
    }
    let msgs = TxMsgData::decode(data).ok()?;
    let any = msgs.msg_responses.iter().find(|a| a.type_url == MSG_ETHEREUM_TX_RESPONSE)?;
    let r = pb::MsgEthereumTxResponse::decode(any.value.as_slice()).ok()?;
    let word = |s: &str| -> Option<[u8; 32]> { <[u8; 32]>::try_from(hex::decode(s.trim_start_matches("0x")).ok()?).ok() };
    let logs = r
        .logs
        .into_iter()
        .map(|l| {
            Some(EthLog {
                address: Address::from_hex(&l.address).ok()?,
                topics: l.topics.iter().map(|t| word(t)).collect::<Option<_>>()?,
                data: l.data.to_vec(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Receipt { hash: word(&r.hash)?, logs, ret: r.ret.to_vec(), vm_error: r.vm_error, gas_used: r.gas_used })
}

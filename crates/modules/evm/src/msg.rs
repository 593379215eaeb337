//! `MsgEthereumTx` (Cosmos EVM's envelope): one signed Ethereum transaction in a Cosmos tx.

use cosmos_sdk_proto::Any;
use lantau_module_api::{ModuleMsg, TxError};
use lantau_primitives::Address;
use lantau_proto::evm_vm as pb;
use prost::Message as _;

use crate::error::EvmError;
use crate::tx::{self, EthTx};

/// The message's type URL.
pub const MSG_ETHEREUM_TX: &str = "/cosmos.evm.vm.v1.MsgEthereumTx";
/// The extension option that marks a Cosmos tx as an Ethereum transaction's envelope.
pub const EXTENSION_OPTIONS_ETHEREUM_TX: &str = "/cosmos.evm.vm.v1.ExtensionOptionsEthereumTx";

/// The evm module's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvmMsg {
    /// A signed Ethereum transaction, decoded and its sender recovered.
    EthereumTx(Box<EthTx>),
}

impl EvmMsg {
    /// What the module list asks of every message `Any` (a transaction body's, or one a
    /// container message carries): `None` when the type URL is not this module's, and for
    /// `MsgEthereumTx` always a refusal. An Ethereum transaction travels only in its canonical
    /// envelope, which [`EvmMsg::from_envelope`] alone decodes: anywhere else its gas would not
    /// be the gas the transaction pays for and counts against the block.
    pub fn from_any(any: &Any) -> Option<Result<Self, TxError>> {
        if any.type_url != MSG_ETHEREUM_TX {
            return None;
        }
        Some(Err(EvmError::Envelope(format!(
            "{MSG_ETHEREUM_TX} is accepted only as the one message of an Ethereum transaction's canonical envelope \
             (extension option {EXTENSION_OPTIONS_ETHEREUM_TX}, as eth_sendRawTransaction builds it), never in a \
             signed Cosmos transaction or beside other messages"
        ))
        .into()))
    }

    /// Decodes the one message of an Ethereum transaction's envelope. Only the envelope's
    /// decoder calls this (the app checks that the whole transaction is the canonical
    /// envelope of the Ethereum transaction it returns).
    pub fn from_envelope(any: &Any) -> Result<Self, TxError> {
        if any.type_url != MSG_ETHEREUM_TX {
            return Err(EvmError::Envelope(format!("an Ethereum transaction's envelope carries one {MSG_ETHEREUM_TX}, not {}", any.type_url)).into());
        }
        Self::decode_envelope(&any.value)
    }

    fn decode_envelope(bytes: &[u8]) -> Result<Self, TxError> {
        let m = pb::MsgEthereumTx::decode(bytes).map_err(|e| EvmError::Envelope(format!("MsgEthereumTx: {e}")))?;
        let tx = tx::decode(&m.raw)?;
        if m.from.as_ref() != tx.from.0.as_slice() {
            return Err(EvmError::Envelope(format!("from 0x{} is not the signer {}", const_hex::encode(&m.from), tx.from.to_hex())).into());
        }
        Ok(EvmMsg::EthereumTx(Box::new(tx)))
    }

    /// The Ethereum transaction.
    pub fn eth_tx(&self) -> &EthTx {
        match self {
            EvmMsg::EthereumTx(t) => t,
        }
    }
}

impl ModuleMsg for EvmMsg {
    fn type_url(&self) -> &'static str {
        MSG_ETHEREUM_TX
    }

    fn signer(&self) -> Address {
        self.eth_tx().from
    }

    /// None: an Ethereum transaction's stablecoin movements are only known as it runs, and
    /// the precompile screens each one inside the call (spec: "Where gates act", 2).
    fn facts(&self, _msg_index: usize) -> Vec<lantau_module_api::Fact> {
        Vec::new()
    }
}

/// The Cosmos tx bytes that carry `raw` (what `eth_sendRawTransaction` submits): one
/// `MsgEthereumTx`, the extension option, no signer infos, no signatures, the fee the
/// transaction offers (gas limit × effective gas price) with its gas limit. Deterministic: the
/// same Ethereum bytes always give the same Cosmos bytes and hash.
pub fn envelope(tx: &EthTx) -> Vec<u8> {
    use cosmos_sdk_proto::cosmos::base::v1beta1::Coin;
    use cosmos_sdk_proto::cosmos::tx::v1beta1::{AuthInfo, Fee, TxBody, TxRaw};
    let msg = pb::MsgEthereumTx { from: tx.from.0.to_vec().into(), raw: tx.raw.clone().into() };
    let body = TxBody {
        messages: vec![Any { type_url: MSG_ETHEREUM_TX.into(), value: msg.encode_to_vec() }],
        extension_options: vec![Any { type_url: EXTENSION_OPTIONS_ETHEREUM_TX.into(), value: Vec::new() }],
        ..Default::default()
    };
    let fee = Fee {
        amount: vec![Coin { denom: lantau_primitives::NATIVE_DENOM.into(), amount: tx.max_fee().to_string() }],
        gas_limit: tx.gas_limit,
        payer: String::new(),
        granter: String::new(),
    };
    #[allow(deprecated)]
    let auth = AuthInfo { signer_infos: Vec::new(), fee: Some(fee), tip: None };
    TxRaw { body_bytes: body.encode_to_vec(), auth_info_bytes: auth.encode_to_vec(), signatures: Vec::new() }.encode_to_vec()
}

/// The Ethereum transaction a Cosmos tx's bytes carry, if they are an Ethereum envelope (for
/// the JSON-RPC's block and transaction views; the pipeline decodes with every check).
pub fn eth_tx_of(cosmos_tx: &[u8]) -> Option<EthTx> {
    use cosmos_sdk_proto::cosmos::tx::v1beta1::{TxBody, TxRaw};
    let raw = TxRaw::decode(cosmos_tx).ok()?;
    let body = TxBody::decode(raw.body_bytes.as_slice()).ok()?;
    if !body.extension_options.iter().any(|o| o.type_url == EXTENSION_OPTIONS_ETHEREUM_TX) {
        return None;
    }
    match EvmMsg::from_envelope(body.messages.first()?) {
        Ok(EvmMsg::EthereumTx(t)) => Some(*t),
        Err(_) => None,
    }
}

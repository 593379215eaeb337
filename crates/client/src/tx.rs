//! Transaction building and signing.
//!
//! SIGN_MODE_DIRECT with one eth_secp256k1 signer: the signature is over keccak256 of the
//! `SignDoc` (body bytes, auth-info bytes, chain id, account number), 65 bytes R‖S‖V, and the
//! signer info carries the 33-byte compressed key as `/cosmos.evm.crypto.v1.ethsecp256k1.PubKey`.

use cosmos_sdk_proto::cosmos::bank::v1beta1::{Input, MsgMultiSend, MsgSend, Output};
use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
use cosmos_sdk_proto::cosmos::tx::signing::v1beta1::SignMode;
use cosmos_sdk_proto::cosmos::tx::v1beta1::{mode_info, AuthInfo, Fee, ModeInfo, SignDoc, SignerInfo, TxBody, TxRaw};
use cosmos_sdk_proto::Any;
use lantau_crypto::SecretKey;
use lantau_primitives::{Address, Coin, NATIVE_DENOM};
use prost::Message;

fn pb_coins(coins: &[Coin]) -> Vec<PbCoin> {
    coins.iter().map(|c| PbCoin { denom: c.denom.clone(), amount: c.amount.to_string() }).collect()
}

/// A bank `MsgSend` as an `Any`.
pub fn msg_send(from: &Address, to: &Address, coins: &[Coin]) -> Any {
    let m = MsgSend { from_address: from.to_bech32(), to_address: to.to_bech32(), amount: pb_coins(coins) };
    Any { type_url: "/cosmos.bank.v1beta1.MsgSend".into(), value: m.encode_to_vec() }
}

/// A bank `MsgMultiSend` (one input) as an `Any`.
pub fn msg_multi_send(from: &Address, input: &[Coin], outputs: &[(Address, Vec<Coin>)]) -> Any {
    let m = MsgMultiSend {
        inputs: vec![Input { address: from.to_bech32(), coins: pb_coins(input) }],
        outputs: outputs.iter().map(|(a, c)| Output { address: a.to_bech32(), coins: pb_coins(c) }).collect(),
    };
    Any { type_url: "/cosmos.bank.v1beta1.MsgMultiSend".into(), value: m.encode_to_vec() }
}

/// Any protobuf message as an `Any`, with its type URL (`/chain.kyc.v1.MsgEnrollIdentity`).
pub fn to_any<M: prost::Name>(m: &M) -> Any {
    Any { type_url: M::type_url(), value: m.encode_to_vec() }
}

/// The Travel Rule payload as the TxBody extension option a stablecoin transfer carries.
pub fn travel_rule_option(payload: &lantau_proto::chain::compliance::v1::TravelRulePayload) -> Any {
    to_any(payload)
}

/// A protobuf coin.
pub fn pb_coin(c: &Coin) -> PbCoin {
    PbCoin { denom: c.denom.clone(), amount: c.amount.to_string() }
}

/// What the signature commits to besides the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignerData {
    /// Cosmos chain id.
    pub chain_id: String,
    /// Account number.
    pub account_number: u64,
    /// Sequence.
    pub sequence: u64,
}

/// A transaction under construction.
#[derive(Debug, Clone)]
pub struct TxBuilder {
    /// Messages.
    pub messages: Vec<Any>,
    /// Memo.
    pub memo: String,
    /// Gas limit.
    pub gas_limit: u64,
    /// Fee in alantau; defaults to the floor (1 gwei x gas) when None.
    pub fee: Option<u128>,
    /// Extension options (e.g. the Travel Rule payload).
    pub extension_options: Vec<Any>,
    /// Timeout height (0 = none).
    pub timeout_height: u64,
    /// Leave the public key out of the signer info (valid once the account has one on chain).
    pub omit_pubkey: bool,
}

impl TxBuilder {
    /// A transaction with these messages, 200,000 gas and the floor fee.
    pub fn new(messages: Vec<Any>) -> Self {
        Self { messages, memo: String::new(), gas_limit: 200_000, fee: None, extension_options: vec![], timeout_height: 0, omit_pubkey: false }
    }

    /// Sets the gas limit.
    pub fn gas(mut self, gas: u64) -> Self {
        self.gas_limit = gas;
        self
    }

    /// Sets the fee (alantau).
    pub fn fee(mut self, fee: u128) -> Self {
        self.fee = Some(fee);
        self
    }

    /// Attaches the Travel Rule payload as an extension option (required on a stablecoin send).
    pub fn travel_rule(mut self, payload: &lantau_proto::chain::compliance::v1::TravelRulePayload) -> Self {
        self.extension_options.push(travel_rule_option(payload));
        self
    }

    /// Sets the memo.
    pub fn memo(mut self, memo: impl Into<String>) -> Self {
        self.memo = memo.into();
        self
    }

    /// The body and auth-info bytes for a signer.
    #[allow(deprecated)] // `AuthInfo::tip` must be named to build the struct
    pub fn unsigned(&self, key: &SecretKey, signer: &SignerData) -> (Vec<u8>, Vec<u8>) {
        let body = TxBody {
            messages: self.messages.clone(),
            memo: self.memo.clone(),
            timeout_height: self.timeout_height,
            extension_options: self.extension_options.clone(),
            non_critical_extension_options: vec![],
        };
        let pk = lantau_proto::ethsecp256k1::PubKey { key: key.public_key().to_compressed().to_vec().into() };
        let fee_amount = self.fee.unwrap_or_else(|| lantau_primitives::min_fee(self.gas_limit).0);
        let auth = AuthInfo {
            signer_infos: vec![SignerInfo {
                public_key: if self.omit_pubkey {
                    None
                } else {
                    Some(Any { type_url: lantau_proto::ETH_SECP256K1_PUBKEY_TYPE_URL.into(), value: pk.encode_to_vec() })
                },
                mode_info: Some(ModeInfo { sum: Some(mode_info::Sum::Single(mode_info::Single { mode: SignMode::Direct as i32 })) }),
                sequence: signer.sequence,
            }],
            fee: Some(Fee {
                amount: vec![PbCoin { denom: NATIVE_DENOM.into(), amount: fee_amount.to_string() }],
                gas_limit: self.gas_limit,
                payer: String::new(),
                granter: String::new(),
            }),
            tip: None,
        };
        (body.encode_to_vec(), auth.encode_to_vec())
    }

    /// Signs and returns the `TxRaw` bytes to broadcast.
    pub fn sign(&self, key: &SecretKey, signer: &SignerData) -> Vec<u8> {
        let (body_bytes, auth_info_bytes) = self.unsigned(key, signer);
        let doc = SignDoc {
            body_bytes: body_bytes.clone(),
            auth_info_bytes: auth_info_bytes.clone(),
            chain_id: signer.chain_id.clone(),
            account_number: signer.account_number,
        };
        let digest = lantau_crypto::keccak256(&doc.encode_to_vec());
        let sig = key.sign_digest(&digest);
        TxRaw { body_bytes, auth_info_bytes, signatures: vec![sig.to_vec()] }.encode_to_vec()
    }
}

/// The hash of transaction bytes, upper-case hex.
pub fn tx_hash_hex(bytes: &[u8]) -> String {
    const_hex::encode_upper(lantau_crypto::sha256(bytes))
}

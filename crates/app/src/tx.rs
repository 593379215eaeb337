//! Transaction decoding and stateless validation.
//!
//! A transaction is a Cosmos `TxRaw` (body bytes, auth-info bytes, signatures) signed in
//! SIGN_MODE_DIRECT by one eth_secp256k1 key: the digest is keccak256 of the `SignDoc`
//! (body bytes, auth-info bytes, chain id, account number), the signature 65 bytes R‖S‖V (64
//! accepted), low-S only. Everything here is pure: no state, no clock.

use cosmos_sdk_proto::cosmos::tx::signing::v1beta1::SignMode;
use cosmos_sdk_proto::cosmos::tx::v1beta1::{mode_info, AuthInfo, SignDoc, TxBody, TxRaw};
use lantau_module_api::{SdkError, TxError};
use lantau_primitives::{Address, Amount, NATIVE_DENOM};
use lantau_proto::ethsecp256k1::PubKey;
use lantau_proto::ETH_SECP256K1_PUBKEY_TYPE_URL;
use prost::Message;

use crate::config::AppConfig;
use crate::msg::Msg;

/// A decoded transaction that passed every stateless check.
#[derive(Debug, Clone)]
pub struct DecodedTx {
    /// sha256 of the raw bytes.
    pub hash: [u8; 32],
    /// Size of the raw bytes.
    pub size: usize,
    /// The raw body bytes, as signed.
    pub body_bytes: Vec<u8>,
    /// The raw auth-info bytes, as signed.
    pub auth_info_bytes: Vec<u8>,
    /// The one signature.
    pub signature: Vec<u8>,
    /// The signer's compressed public key, when the transaction carries it.
    pub pubkey: Option<[u8; 33]>,
    /// The signer (every message's signer).
    pub signer: Address,
    /// The sequence the signature commits to.
    pub sequence: u64,
    /// The messages.
    pub msgs: Vec<Msg>,
    /// Gas limit.
    pub gas_limit: u64,
    /// Fee, in the native denom.
    pub fee: Amount,
    /// Memo.
    pub memo: String,
    /// Timeout height (0 = none).
    pub timeout_height: u64,
    /// The Travel Rule payload (the `/chain.compliance.v1.TravelRulePayload` extension option).
    pub payload: Option<lantau_compliance::TravelRulePayload>,
    /// For the envelope of an Ethereum transaction: its Ethereum hash (keccak256 of the
    /// EIP-2718 bytes). Its signature was checked at decoding (the sender recovered).
    pub eth_hash: Option<[u8; 32]>,
    /// What the signature was last verified against (the ante sets it): a transaction whose
    /// admission verified it is not hashed and looked up again in the proposal, the block
    /// and each recheck while the chain id, account number and key are the same.
    pub verified_for: std::sync::OnceLock<VerifiedFor>,
}

/// The parameters a signature verified under: the SignDoc's chain id and account number (the
/// body and auth-info bytes are the transaction's own) and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedFor {
    /// The chain id.
    pub chain_id: String,
    /// The account number.
    pub account_number: u64,
    /// The compressed public key.
    pub pubkey: [u8; 33],
}

impl DecodedTx {
    /// The hash in upper-case hex, as CometBFT and the Cosmos tx service print it.
    pub fn hash_hex(&self) -> String {
        const_hex::encode_upper(self.hash)
    }

    /// The SignDoc bytes for `chain_id` and `account_number`.
    pub fn sign_doc_bytes(&self, chain_id: &str, account_number: u64) -> Vec<u8> {
        SignDoc { body_bytes: self.body_bytes.clone(), auth_info_bytes: self.auth_info_bytes.clone(), chain_id: chain_id.to_string(), account_number }
            .encode_to_vec()
    }
}

/// The transaction hash of raw bytes.
pub fn tx_hash(bytes: &[u8]) -> [u8; 32] {
    lantau_crypto::sha256(bytes)
}

fn err(e: SdkError) -> TxError {
    e.into()
}

/// How many (compressed key → address) pairs [`key_address`] remembers.
const KEY_ADDRESS_MEMO: usize = 65_536;

/// The address of a 33-byte compressed eth_secp256k1 key, or the key's parse error.
///
/// Parsing a compressed key takes a field square root; senders reuse their key in every
/// transaction, so valid keys' addresses are remembered (a pure function's memo: it changes
/// speed only). Invalid keys are not remembered and fail as they always did.
fn key_address(key: &[u8; 33]) -> Result<Address, TxError> {
    #[allow(clippy::disallowed_types)] // looked up only, never iterated.
    type Memo = std::collections::HashMap<[u8; 33], Address>;
    static MEMO: std::sync::OnceLock<parking_lot::Mutex<Memo>> = std::sync::OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    if let Some(a) = memo.lock().get(key) {
        return Ok(*a);
    }
    let address = lantau_crypto::PublicKey::from_compressed(key).map_err(|e| err(SdkError::InvalidPubKey(e.to_string())))?.address();
    let mut m = memo.lock();
    if m.len() >= KEY_ADDRESS_MEMO {
        m.clear();
    }
    m.insert(*key, address);
    Ok(address)
}

/// Decodes raw bytes and runs every check that needs no state.
pub fn decode(bytes: &[u8], cfg: &AppConfig) -> Result<DecodedTx, TxError> {
    decode_inner(bytes, cfg, true)
}

/// Like [`decode`] without the fee floor, for simulation: a client estimates gas before it
/// knows the fee (the Cosmos SDK's simulate mode skips the minimum-gas-price check too).
pub fn decode_for_simulation(bytes: &[u8], cfg: &AppConfig) -> Result<DecodedTx, TxError> {
    decode_inner(bytes, cfg, false)
}

fn decode_inner(bytes: &[u8], cfg: &AppConfig, fee_floor: bool) -> Result<DecodedTx, TxError> {
    if bytes.len() > cfg.max_tx_bytes {
        return Err(err(SdkError::TxTooLarge(format!("tx is {} bytes, the maximum is {}", bytes.len(), cfg.max_tx_bytes))));
    }
    if bytes.is_empty() {
        return Err(err(SdkError::TxDecode("empty transaction".into())));
    }
    let raw = TxRaw::decode(bytes).map_err(|e| err(SdkError::TxDecode(format!("invalid TxRaw: {e}"))))?;
    // The TxRaw envelope is not signed: refuse re-encodings (unknown or repeated fields) so that
    // one signed transaction has one hash.
    if raw.encoded_len() != bytes.len() {
        return Err(err(SdkError::TxDecode("non-canonical TxRaw encoding".into())));
    }
    let body = TxBody::decode(raw.body_bytes.as_slice()).map_err(|e| err(SdkError::TxDecode(format!("invalid TxBody: {e}"))))?;
    let auth = AuthInfo::decode(raw.auth_info_bytes.as_slice()).map_err(|e| err(SdkError::TxDecode(format!("invalid AuthInfo: {e}"))))?;
    if body.extension_options.iter().any(|o| o.type_url == lantau_evm::EXTENSION_OPTIONS_ETHEREUM_TX) {
        return decode_ethereum(bytes, raw, body, auth, cfg);
    }

    // Messages.
    if body.messages.is_empty() {
        return Err(err(SdkError::InvalidRequest("must contain at least one message".into())));
    }
    let msgs = body.messages.iter().map(Msg::from_any).collect::<Result<Vec<_>, _>>()?;
    for m in &msgs {
        m.check_stateless()?;
    }
    let mut payload = None;
    for opt in &body.extension_options {
        if opt.type_url != TRAVEL_RULE_PAYLOAD_URL {
            return Err(err(SdkError::UnknownExtensionOptions(format!("unknown extension option {}", opt.type_url))));
        }
        if payload.is_some() {
            return Err(err(SdkError::InvalidRequest("at most one Travel Rule payload per transaction".into())));
        }
        let p = lantau_compliance::TravelRulePayload::decode(opt.value.as_slice())
            .map_err(|e| err(SdkError::TxDecode(format!("invalid {TRAVEL_RULE_PAYLOAD_URL}: {e}"))))?;
        payload = Some(p);
    }
    if body.memo.chars().count() > cfg.max_memo_chars {
        return Err(err(SdkError::MemoTooLarge(format!(
            "maximum number of characters is {} but received {} characters",
            cfg.max_memo_chars,
            body.memo.chars().count()
        ))));
    }

    // One signer.
    let signer = msgs.first().map(Msg::signer).ok_or_else(|| err(SdkError::InvalidRequest("must contain at least one message".into())))?;
    if let Some(other) = msgs.iter().map(Msg::signer).find(|s| *s != signer) {
        return Err(err(SdkError::Unauthorized(format!("all messages must have the same signer; got {signer} and {other}"))));
    }
    match (raw.signatures.len(), auth.signer_infos.len()) {
        (0, 1) if !fee_floor => {}
        (0, _) => return Err(err(SdkError::NoSignatures("transaction has no signature".into()))),
        (1, 1) => {}
        (s, i) => return Err(err(SdkError::TooManySignatures(format!("expected 1 signature and 1 signer info, got {s} and {i}")))),
    }
    let si = auth.signer_infos.first().ok_or_else(|| err(SdkError::NoSignatures("transaction has no signer info".into())))?;
    match si.mode_info.as_ref().and_then(|m| m.sum.as_ref()) {
        Some(mode_info::Sum::Single(s)) if s.mode == SignMode::Direct as i32 => {}
        _ => return Err(err(SdkError::Unauthorized("only SIGN_MODE_DIRECT single signatures are supported".into()))),
    }
    let pubkey = match &si.public_key {
        None => None,
        Some(any) if any.type_url == ETH_SECP256K1_PUBKEY_TYPE_URL => {
            let pk = PubKey::decode(any.value.as_slice()).map_err(|e| err(SdkError::InvalidPubKey(format!("invalid eth_secp256k1 key: {e}"))))?;
            let arr: [u8; 33] =
                pk.key.as_ref().try_into().map_err(|_| err(SdkError::InvalidPubKey(format!("eth_secp256k1 key must be 33 bytes, got {}", pk.key.len()))))?;
            let key_address = key_address(&arr)?;
            if key_address != signer {
                return Err(err(SdkError::Unauthorized(format!("pubkey does not match signer address {signer} (key address {key_address})"))));
            }
            Some(arr)
        }
        Some(any) => return Err(err(SdkError::InvalidPubKey(format!("unsupported key type {}, expected {ETH_SECP256K1_PUBKEY_TYPE_URL}", any.type_url)))),
    };
    let signature = raw.signatures.first().cloned().unwrap_or_default();
    // Simulation does not verify signatures; clients (CosmJS, the Go SDK) send an empty one.
    if fee_floor && signature.len() != 64 && signature.len() != 65 {
        return Err(err(SdkError::Unauthorized(format!("signature must be 64 or 65 bytes, got {}", signature.len()))));
    }

    // Fee and gas.
    let fee = auth.fee.as_ref().ok_or_else(|| err(SdkError::InsufficientFee("missing fee".into())))?;
    if !fee.granter.is_empty() {
        return Err(err(SdkError::InvalidRequest("fee grants are not supported: leave fee.granter empty".into())));
    }
    if !fee.payer.is_empty() && fee.payer != signer.to_bech32() {
        return Err(err(SdkError::InvalidRequest(format!("fee payer {} must be the signer {signer}", fee.payer))));
    }
    if fee.gas_limit == 0 {
        return Err(err(SdkError::InvalidGasLimit("gas limit must be positive".into())));
    }
    if fee.gas_limit > cfg.max_gas_per_tx {
        return Err(err(SdkError::InvalidGasLimit(format!("gas limit {} exceeds the maximum {} per transaction", fee.gas_limit, cfg.max_gas_per_tx))));
    }
    let mut fee_amount = Amount::ZERO;
    for c in &fee.amount {
        if c.denom != NATIVE_DENOM {
            return Err(err(SdkError::InsufficientFee(format!("fees are paid in {NATIVE_DENOM} only, got {}", c.denom))));
        }
        let a: Amount = c.amount.parse().map_err(|_| err(SdkError::InsufficientFee(format!("invalid fee amount {:?}", c.amount))))?;
        fee_amount = fee_amount.checked_add(a).map_err(|_| err(SdkError::InsufficientFee("fee overflows".into())))?;
    }
    let required = lantau_primitives::min_fee(fee.gas_limit);
    if fee_floor && fee_amount < required {
        return Err(err(SdkError::InsufficientFee(format!(
            "got: {fee_amount}{NATIVE_DENOM} required: {required}{NATIVE_DENOM} (1 gwei x {} gas)",
            fee.gas_limit
        ))));
    }

    Ok(DecodedTx {
        hash: tx_hash(bytes),
        size: bytes.len(),
        body_bytes: raw.body_bytes,
        auth_info_bytes: raw.auth_info_bytes,
        signature,
        pubkey,
        signer,
        sequence: si.sequence,
        msgs,
        gas_limit: fee.gas_limit,
        fee: fee_amount,
        memo: body.memo,
        timeout_height: body.timeout_height,
        payload,
        eth_hash: None,
        verified_for: Default::default(),
    })
}

/// The envelope of an Ethereum transaction (Cosmos EVM's convention): exactly one
/// `MsgEthereumTx`, the one extension option, no signer infos, no signatures, and the fee and
/// gas limit the Ethereum transaction itself offers. Only the canonical envelope is accepted
/// (the bytes [`lantau_evm::msg::envelope`] builds), so one Ethereum transaction has one
/// Cosmos hash.
fn decode_ethereum(bytes: &[u8], raw: TxRaw, body: TxBody, _auth: AuthInfo, cfg: &AppConfig) -> Result<DecodedTx, TxError> {
    let envelope = |why: &str| -> TxError { lantau_evm::EvmError::Envelope(why.to_string()).into() };
    let [any] = body.messages.as_slice() else {
        return Err(envelope("an Ethereum transaction's envelope carries exactly one MsgEthereumTx"));
    };
    // The only decoder of MsgEthereumTx: `Msg::from_any` refuses it everywhere else.
    let m = lantau_evm::EvmMsg::from_envelope(any)?;
    let tx = m.eth_tx().clone();
    if tx.gas_limit > cfg.max_gas_per_tx {
        return Err(err(SdkError::InvalidGasLimit(format!("gas limit {} exceeds the maximum {} per transaction", tx.gas_limit, cfg.max_gas_per_tx))));
    }
    if lantau_evm::msg::envelope(&tx) != bytes {
        return Err(envelope("not the canonical envelope: one extension option, no signer infos or signatures, fee = gas limit x price"));
    }
    Ok(DecodedTx {
        hash: tx_hash(bytes),
        size: bytes.len(),
        body_bytes: raw.body_bytes,
        auth_info_bytes: raw.auth_info_bytes,
        signature: Vec::new(),
        pubkey: if tx.impersonated() { None } else { Some(tx.pubkey) },
        signer: tx.from,
        sequence: tx.nonce,
        gas_limit: tx.gas_limit,
        fee: Amount(tx.max_fee()),
        memo: String::new(),
        timeout_height: 0,
        payload: None,
        eth_hash: Some(tx.hash),
        msgs: vec![Msg::Evm(m)],
        verified_for: Default::default(),
    })
}

/// The type URL of the Travel Rule payload extension option.
pub const TRAVEL_RULE_PAYLOAD_URL: &str = "/chain.compliance.v1.TravelRulePayload";

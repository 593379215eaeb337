//! Transactions as files, the Cosmos SDK's offline flow: `tx … --generate-only` writes an
//! unsigned transaction as JSON (the same JSON `GET /cosmos/tx/v1beta1/txs/{hash}` shows),
//! `tx sign FILE --from KEY` signs it, `tx encode FILE` gives the base64 `TxRaw` the REST
//! broadcast takes, `tx decode B64` shows one, `tx broadcast FILE` sends it.
//!
//! The JSON of a message the node renders field by field (bank `MsgSend`, `MsgMultiSend`, the
//! eth_secp256k1 key) is read back field by field; any other message (the chain's own, the
//! Travel Rule extension option) is written and read as `{"@type", "value": base64 protobuf}`,
//! so every file this CLI writes round-trips byte for byte.

use anyhow::Context as _;
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
use cosmos_sdk_proto::cosmos::tx::v1beta1::{mode_info, AuthInfo, Fee, ModeInfo, SignDoc, SignerInfo, TxBody, TxRaw};
use cosmos_sdk_proto::Any;
use prost::Message as _;
use serde_json::Value;

fn s<'a>(v: &'a Value, k: &str) -> anyhow::Result<&'a str> {
    v.get(k).and_then(Value::as_str).with_context(|| format!("missing string {k:?} in {v}"))
}

fn u64_field(v: &Value, k: &str) -> anyhow::Result<u64> {
    match v.get(k) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::String(t)) => t.parse().with_context(|| format!("{k}: {t:?} is not a number")),
        Some(Value::Number(n)) => n.as_u64().with_context(|| format!("{k}: {n} is not a number")),
        Some(other) => anyhow::bail!("{k}: {other} is not a number"),
    }
}

fn coins(v: &Value) -> anyhow::Result<Vec<PbCoin>> {
    v.as_array()
        .map(|a| a.iter().map(|c| Ok(PbCoin { denom: s(c, "denom")?.to_string(), amount: s(c, "amount")?.to_string() })).collect())
        .unwrap_or_else(|| Ok(vec![]))
}

/// An `Any` from its JSON (see the module documentation): [`lantau_client::msgs::from_json`].
pub(crate) fn any_from_json(v: &Value) -> anyhow::Result<Any> {
    match lantau_client::msgs::from_json(v).map_err(anyhow::Error::msg)? {
        Some(any) => Ok(any),
        None => anyhow::bail!("{}: give the message as {{\"@type\", \"value\": <base64 protobuf>}}", v["@type"].as_str().unwrap_or("?")),
    }
}

fn sign_mode(name: &str) -> i32 {
    match name {
        "SIGN_MODE_DIRECT" => 1,
        "SIGN_MODE_TEXTUAL" => 2,
        "SIGN_MODE_DIRECT_AUX" => 3,
        "SIGN_MODE_LEGACY_AMINO_JSON" => 127,
        "SIGN_MODE_EIP_191" => 191,
        _ => 0,
    }
}

/// A transaction's parts from its JSON.
pub(crate) fn from_json(v: &Value) -> anyhow::Result<(TxBody, AuthInfo, Vec<Vec<u8>>)> {
    let b = &v["body"];
    let list = |k: &str| -> anyhow::Result<Vec<Any>> { b[k].as_array().map(|a| a.iter().map(any_from_json).collect()).unwrap_or_else(|| Ok(vec![])) };
    let body = TxBody {
        messages: list("messages")?,
        memo: b["memo"].as_str().unwrap_or_default().to_string(),
        timeout_height: u64_field(b, "timeout_height")?,
        extension_options: list("extension_options")?,
        non_critical_extension_options: list("non_critical_extension_options")?,
    };
    anyhow::ensure!(!body.messages.is_empty(), "the transaction has no messages");
    let a = &v["auth_info"];
    let signer_infos = a["signer_infos"]
        .as_array()
        .map(|xs| {
            xs.iter()
                .map(|si| {
                    let public_key = match si.get("public_key") {
                        None | Some(Value::Null) => None,
                        Some(k) => Some(any_from_json(k)?),
                    };
                    let mode = si["mode_info"]["single"]["mode"].as_str().map(sign_mode).unwrap_or(1);
                    Ok(SignerInfo {
                        public_key,
                        mode_info: Some(ModeInfo { sum: Some(mode_info::Sum::Single(mode_info::Single { mode })) }),
                        sequence: u64_field(si, "sequence")?,
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()
        })
        .unwrap_or_else(|| Ok(vec![]))?;
    let f = &a["fee"];
    let fee = Fee {
        amount: coins(&f["amount"])?,
        gas_limit: u64_field(f, "gas_limit")?,
        payer: f["payer"].as_str().unwrap_or_default().to_string(),
        granter: f["granter"].as_str().unwrap_or_default().to_string(),
    };
    #[allow(deprecated)]
    let auth = AuthInfo { signer_infos, fee: Some(fee), tip: None };
    let sigs = v["signatures"]
        .as_array()
        .map(|xs| xs.iter().map(|x| x.as_str().map(|t| B64.decode(t)).context("a signature is not a string")?.context("a signature is not base64")).collect())
        .unwrap_or_else(|| Ok(vec![]))?;
    Ok((body, auth, sigs))
}

/// The `TxRaw` bytes of a transaction's JSON.
pub(crate) fn encode(v: &Value) -> anyhow::Result<Vec<u8>> {
    let (body, auth, signatures) = from_json(v)?;
    Ok(TxRaw { body_bytes: body.encode_to_vec(), auth_info_bytes: auth.encode_to_vec(), signatures }.encode_to_vec())
}

/// A transaction's JSON from `TxRaw` bytes (what the node shows).
pub(crate) fn decode(bytes: &[u8]) -> anyhow::Result<Value> {
    serde_json::to_value(lantau_rpc::json::tx(bytes).context("not a TxRaw")?).context("a transaction as JSON")
}

/// Signs a transaction's JSON as `key` (SIGN_MODE_DIRECT, keccak256 of the sign doc): its one
/// signer info gets the key and `sequence`, its signatures the new one.
pub(crate) fn sign(v: &Value, key: &lantau_crypto::SecretKey, chain_id: &str, account_number: u64, sequence: u64) -> anyhow::Result<Vec<u8>> {
    let (body, mut auth, _) = from_json(v)?;
    let pk = lantau_proto::ethsecp256k1::PubKey { key: key.public_key().to_compressed().to_vec().into() };
    let info = SignerInfo {
        public_key: Some(Any { type_url: lantau_proto::ETH_SECP256K1_PUBKEY_TYPE_URL.into(), value: pk.encode_to_vec() }),
        mode_info: Some(ModeInfo { sum: Some(mode_info::Sum::Single(mode_info::Single { mode: 1 })) }),
        sequence,
    };
    auth.signer_infos = vec![info];
    let (body_bytes, auth_info_bytes) = (body.encode_to_vec(), auth.encode_to_vec());
    let doc = SignDoc { body_bytes: body_bytes.clone(), auth_info_bytes: auth_info_bytes.clone(), chain_id: chain_id.into(), account_number };
    let sig = key.sign_digest(&lantau_crypto::keccak256(&doc.encode_to_vec()));
    Ok(TxRaw { body_bytes, auth_info_bytes, signatures: vec![sig.to_vec()] }.encode_to_vec())
}

/// Reads a transaction file: JSON, or the base64 of its `TxRaw` bytes.
pub(crate) fn read(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    let text = if path.as_os_str() == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)?;
        t
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
    };
    let t = text.trim();
    if t.starts_with('{') {
        encode(&serde_json::from_str(t).context("the file is not JSON")?)
    } else {
        B64.decode(t).context("the file is neither a JSON transaction nor base64 TxRaw bytes")
    }
}

/// Reads a transaction file as JSON.
pub(crate) fn read_json(path: &std::path::Path) -> anyhow::Result<Value> {
    decode(&read(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_round_trips_through_its_json() {
        let key = lantau_crypto::SecretKey::from_bytes(&[7; 32]).unwrap();
        let to = lantau_crypto::SecretKey::from_bytes(&[8; 32]).unwrap().address();
        let payload = lantau_proto::chain::compliance::v1::TravelRulePayload { tier: "full".into(), ..Default::default() };
        let b = lantau_client::TxBuilder::new(vec![lantau_client::msg_send(&key.address(), &to, &[lantau_primitives::Coin::new("hkd.demo", 150u128)])])
            .gas(400_000)
            .memo("m")
            .travel_rule(&payload);
        let signer = lantau_client::SignerData { chain_id: "c".into(), account_number: 3, sequence: 9 };
        let bytes = b.sign(&key, &signer);
        let json = decode(&bytes).unwrap();
        assert_eq!(encode(&json).unwrap(), bytes, "JSON → bytes gives the same bytes");
        // Signing the unsigned JSON gives what the builder signs.
        let mut unsigned = json.clone();
        unsigned["signatures"] = Value::Array(vec![]);
        assert_eq!(sign(&unsigned, &key, "c", 3, 9).unwrap(), bytes);
    }
}

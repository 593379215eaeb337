//! JSON renderings shared by the servers, in the Cosmos gRPC-gateway style: snake_case names,
//! 64-bit integers as strings, enums by name, defaults emitted, bytes as base64.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use cosmos_sdk_proto::cosmos::bank::v1beta1 as bankpb;
use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
use cosmos_sdk_proto::cosmos::tx::v1beta1::{mode_info, AuthInfo, TxBody, TxRaw};
use cosmos_sdk_proto::Any;
use lantau_app::tendermint::abci::Event as Event_;
use prost::Message;
use serde_json::{json, Map, Value};

use crate::api::TxRecord;
use crate::openapi::shapes::{self, AnyJson, Coin, Event, EventAttribute, PageResponse, Tx, TxResponse};

/// Events as `[{type, attributes:[{key, value, index}]}]`.
pub fn events(evs: &[Event_]) -> Vec<Event> {
    evs.iter()
        .map(|e| Event {
            kind: e.kind.clone(),
            attributes: e
                .attributes
                .iter()
                .map(|a| EventAttribute {
                    key: a.key_str().unwrap_or_default().to_string(),
                    value: a.value_str().unwrap_or_default().to_string(),
                    index: a.index(),
                })
                .collect(),
        })
        .collect()
}

/// Protobuf events (a query router's answer), in the shape [`events`] writes.
pub fn pb_events(evs: &[lantau_app::tendermint_proto::abci::Event]) -> Vec<Event> {
    evs.iter()
        .map(|e| Event {
            kind: e.r#type.clone(),
            attributes: e.attributes.iter().map(|a| EventAttribute { key: a.key.clone(), value: a.value.clone(), index: a.index }).collect(),
        })
        .collect()
}

/// Coins as `[{denom, amount}]`.
pub fn coins(cs: &[PbCoin]) -> Vec<Coin> {
    cs.iter().map(coin).collect()
}

/// A coin as `{denom, amount}`.
pub fn coin(c: &PbCoin) -> Coin {
    Coin { denom: c.denom.clone(), amount: c.amount.clone() }
}

/// A complete list's `pagination` as the gateway writes it: no next page, the total as a string.
pub fn page(total: usize) -> PageResponse {
    PageResponse { next_key: None, total: total.to_string() }
}

/// A message `Any` as JSON with `@type`. Known types are expanded; others keep their bytes.
pub fn any_msg(any: &Any) -> AnyJson {
    let expanded = match any.type_url.as_str() {
        "/cosmos.bank.v1beta1.MsgSend" => bankpb::MsgSend::decode(any.value.as_slice())
            .ok()
            .map(|m| json!({"from_address": m.from_address, "to_address": m.to_address, "amount": coins(&m.amount)})),
        "/cosmos.bank.v1beta1.MsgMultiSend" => bankpb::MsgMultiSend::decode(any.value.as_slice()).ok().map(|m| {
            json!({
                "inputs": m.inputs.iter().map(|i| json!({"address": i.address, "coins": coins(&i.coins)})).collect::<Vec<_>>(),
                "outputs": m.outputs.iter().map(|o| json!({"address": o.address, "coins": coins(&o.coins)})).collect::<Vec<_>>(),
            })
        }),
        "/cosmos.evm.crypto.v1.ethsecp256k1.PubKey" => {
            lantau_proto::ethsecp256k1::PubKey::decode(any.value.as_slice()).ok().map(|k| json!({"key": B64.encode(&k.key)}))
        }
        _ => None,
    };
    let fields = match expanded {
        Some(Value::Object(m)) => m,
        _ => Map::from_iter([("value".to_string(), Value::String(B64.encode(&any.value)))]),
    };
    AnyJson { type_url: any.type_url.clone(), fields }
}

/// A transaction as `cosmos.tx.v1beta1.Tx` JSON; `None` when the bytes do not decode.
pub fn tx(bytes: &[u8]) -> Option<Tx> {
    let raw = TxRaw::decode(bytes).ok()?;
    let body = TxBody::decode(raw.body_bytes.as_slice()).ok()?;
    let auth = AuthInfo::decode(raw.auth_info_bytes.as_slice()).ok()?;
    let signer_infos = auth
        .signer_infos
        .iter()
        .map(|si| {
            let mode = match si.mode_info.as_ref().and_then(|m| m.sum.as_ref()) {
                Some(mode_info::Sum::Single(s)) => Some(json!({"single": {"mode": sign_mode_name(s.mode)}})),
                Some(mode_info::Sum::Multi(_)) => Some(json!({"multi": {}})),
                None => None,
            };
            shapes::SignerInfo { public_key: si.public_key.as_ref().map(any_msg), mode_info: mode, sequence: si.sequence.to_string() }
        })
        .collect();
    let fee = auth.fee.as_ref().map(|f| shapes::Fee {
        amount: coins(&f.amount),
        gas_limit: f.gas_limit.to_string(),
        payer: f.payer.clone(),
        granter: f.granter.clone(),
    });
    Some(Tx {
        type_url: None,
        body: shapes::TxBody {
            messages: body.messages.iter().map(any_msg).collect(),
            memo: body.memo,
            timeout_height: body.timeout_height.to_string(),
            extension_options: body.extension_options.iter().map(any_msg).collect(),
            non_critical_extension_options: body.non_critical_extension_options.iter().map(any_msg).collect(),
        },
        auth_info: shapes::AuthInfo { signer_infos, fee, tip: None },
        signatures: raw.signatures.iter().map(|s| B64.encode(s)).collect(),
    })
}

fn sign_mode_name(m: i32) -> &'static str {
    match m {
        1 => "SIGN_MODE_DIRECT",
        2 => "SIGN_MODE_TEXTUAL",
        3 => "SIGN_MODE_DIRECT_AUX",
        127 => "SIGN_MODE_LEGACY_AMINO_JSON",
        191 => "SIGN_MODE_EIP_191",
        _ => "SIGN_MODE_UNSPECIFIED",
    }
}

/// A committed transaction as the Cosmos `TxResponse`.
pub fn tx_response(rec: &TxRecord) -> TxResponse {
    let r = &rec.result;
    TxResponse {
        height: rec.height.to_string(),
        txhash: const_hex::encode_upper(rec.hash),
        codespace: r.codespace.clone(),
        code: r.code.value(),
        data: const_hex::encode_upper(&r.data),
        raw_log: r.log.clone(),
        logs: Vec::new(),
        info: r.info.clone(),
        gas_wanted: r.gas_wanted.to_string(),
        gas_used: r.gas_used.to_string(),
        tx: tx(&rec.tx).map(|t| Tx { type_url: Some("/cosmos.tx.v1beta1.Tx".into()), ..t }),
        timestamp: rec.timestamp.clone(),
        events: events(&r.events),
    }
}

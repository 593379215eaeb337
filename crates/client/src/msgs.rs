//! Messages as JSON, for people: the chain's own messages, the bank's and the eth_secp256k1
//! key written and read field by field, with `"@type"`; any other as `{"@type", "value":
//! <base64 protobuf>}`. What a group proposal carries is shown (the console) and written (the
//! CLI's proposal files), and the CLI's transaction files are read, this way.

use base64::Engine as _;
use cosmos_sdk_proto::cosmos::bank::v1beta1 as bank;
use cosmos_sdk_proto::Any;
use prost::Message as _;
use serde_json::{json, Value};

macro_rules! known {
    ($mac:ident) => {{
        use lantau_proto::chain::{compliance::v1 as c, group::v1 as g, kyc::v1 as k, reserve::v1 as r, stablecoin::v1 as s};
        $mac!(
            s::MsgFreeze,
            s::MsgUnfreeze,
            s::MsgMint,
            s::MsgBurn,
            s::MsgPause,
            s::MsgUnpause,
            s::MsgSeize,
            s::MsgSetRole,
            s::MsgRevokeRole,
            s::MsgSettleRedemption,
            s::MsgRejectRedemption,
            s::MsgCreateDenom,
            s::MsgUpdateParams,
            c::MsgUpdateSanctionsList,
            c::MsgUpdateRule,
            c::MsgUpdateParams,
            c::MsgBindSubRole,
            c::MsgRevokeSubRole,
            c::MsgBindAgentPolicy,
            c::MsgReviewFlag,
            c::MsgEscalateFlag,
            c::MsgCloseFlag,
            k::MsgEnrollIdentity,
            k::MsgUpdateIdentity,
            k::MsgBlacklistAddress,
            k::MsgUpdateParams,
            r::MsgSubmitAttestation,
            r::MsgUpdateParams,
            g::MsgUpdateGroup
        )
    }};
}

fn coins(v: &[cosmos_sdk_proto::cosmos::base::v1beta1::Coin]) -> Value {
    Value::Array(v.iter().map(|c| json!({"denom": c.denom, "amount": c.amount})).collect())
}

/// A message as JSON: `{"@type", <fields>}` for the chain's and the bank's messages,
/// `{"@type", "value": <base64 protobuf>}` for any other (or one that does not decode).
pub fn to_json(any: &Any) -> Value {
    let raw = || json!({"@type": any.type_url, "value": base64::engine::general_purpose::STANDARD.encode(&any.value)});
    let with_type = |v: Value| match v {
        Value::Object(mut o) => {
            o.insert("@type".into(), Value::String(any.type_url.clone()));
            Value::Object(o)
        }
        _ => raw(),
    };
    match any.type_url.as_str() {
        "/cosmos.bank.v1beta1.MsgSend" => {
            return match bank::MsgSend::decode(any.value.as_slice()) {
                Ok(m) => with_type(json!({"from_address": m.from_address, "to_address": m.to_address, "amount": coins(&m.amount)})),
                Err(_) => raw(),
            }
        }
        "/cosmos.bank.v1beta1.MsgMultiSend" => {
            return match bank::MsgMultiSend::decode(any.value.as_slice()) {
                Ok(m) => with_type(json!({
                    "inputs": m.inputs.iter().map(|i| json!({"address": i.address, "coins": coins(&i.coins)})).collect::<Vec<_>>(),
                    "outputs": m.outputs.iter().map(|o| json!({"address": o.address, "coins": coins(&o.coins)})).collect::<Vec<_>>(),
                })),
                Err(_) => raw(),
            }
        }
        _ => {}
    }
    macro_rules! decode_known {
        ($($ty:ty),*) => {{
            $(
                if any.type_url == <$ty as prost::Name>::type_url() {
                    return match <$ty>::decode(any.value.as_slice()) {
                        Ok(m) => serde_json::to_value(&m).map(with_type).unwrap_or_else(|_| raw()),
                        Err(_) => raw(),
                    };
                }
            )*
        }};
    }
    known!(decode_known);
    raw()
}

/// A message from JSON ([`to_json`]'s forms): `None` when its `"@type"` is not one whose
/// fields this reads and no base64 `value` is given.
pub fn from_json(v: &Value) -> Result<Option<Any>, String> {
    let url = v.get("@type").and_then(Value::as_str).ok_or("every message needs \"@type\"")?.to_string();
    if let Some(b) = v.get("value").and_then(Value::as_str) {
        let value = base64::engine::general_purpose::STANDARD.decode(b).map_err(|e| format!("{url}: value is not base64: {e}"))?;
        return Ok(Some(Any { type_url: url, value }));
    }
    let mut fields = v.clone();
    if let Some(o) = fields.as_object_mut() {
        o.remove("@type");
    }
    let s = |k: &str| fields.get(k).and_then(Value::as_str).map(str::to_string).ok_or_else(|| format!("{url}: missing {k:?}"));
    let pb_coins = |c: &Value| -> Result<Vec<cosmos_sdk_proto::cosmos::base::v1beta1::Coin>, String> {
        c.as_array()
            .map(|a| {
                a.iter()
                    .map(|x| {
                        let f = |k: &str| x.get(k).and_then(Value::as_str).map(str::to_string).ok_or_else(|| format!("{url}: a coin needs {k:?}"));
                        Ok(cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: f("denom")?, amount: f("amount")? })
                    })
                    .collect()
            })
            .unwrap_or_else(|| Ok(vec![]))
    };
    match url.as_str() {
        "/cosmos.bank.v1beta1.MsgSend" => {
            let m = bank::MsgSend { from_address: s("from_address")?, to_address: s("to_address")?, amount: pb_coins(&fields["amount"])? };
            return Ok(Some(Any { type_url: url, value: m.encode_to_vec() }));
        }
        "/cosmos.bank.v1beta1.MsgMultiSend" => {
            let io = |k: &str| -> Result<Vec<(String, Vec<cosmos_sdk_proto::cosmos::base::v1beta1::Coin>)>, String> {
                fields[k]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|x| {
                                Ok((
                                    x.get("address").and_then(Value::as_str).ok_or_else(|| format!("{url}: {k} needs \"address\""))?.to_string(),
                                    pb_coins(&x["coins"])?,
                                ))
                            })
                            .collect()
                    })
                    .unwrap_or_else(|| Ok(vec![]))
            };
            let m = bank::MsgMultiSend {
                inputs: io("inputs")?.into_iter().map(|(address, coins)| bank::Input { address, coins }).collect(),
                outputs: io("outputs")?.into_iter().map(|(address, coins)| bank::Output { address, coins }).collect(),
            };
            return Ok(Some(Any { type_url: url, value: m.encode_to_vec() }));
        }
        lantau_proto::ETH_SECP256K1_PUBKEY_TYPE_URL => {
            let key = base64::engine::general_purpose::STANDARD.decode(s("key")?).map_err(|e| format!("{url}: key is not base64: {e}"))?;
            return Ok(Some(Any { type_url: url, value: lantau_proto::ethsecp256k1::PubKey { key: key.into() }.encode_to_vec() }));
        }
        _ => {}
    }
    macro_rules! read_known {
        ($($ty:ty),*) => {{
            $(
                if url == <$ty as prost::Name>::type_url() {
                    let m: $ty = serde_json::from_value(fields).map_err(|e| format!("{url}: {e}"))?;
                    return Ok(Some(crate::to_any(&m)));
                }
            )*
        }};
    }
    known!(read_known);
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_message_round_trips_through_its_fields() {
        let m = lantau_proto::chain::stablecoin::v1::MsgFreeze { authority: "lantau1a".into(), address: "lantau1b".into() };
        let any = crate::to_any(&m);
        let v = to_json(&any);
        assert_eq!(v["@type"], "/chain.stablecoin.v1.MsgFreeze");
        assert_eq!(v["address"], "lantau1b");
        assert_eq!(from_json(&v).unwrap(), Some(any.clone()));
        let send =
            crate::msg_send(&lantau_primitives::Address([1; 20]), &lantau_primitives::Address([2; 20]), &[lantau_primitives::Coin::new("hkd.demo", 5u128)]);
        assert_eq!(from_json(&to_json(&send)).unwrap(), Some(send));
        // Anything else travels as base64.
        let other = Any { type_url: "/x.y.Z".into(), value: vec![1, 2, 3] };
        assert_eq!(from_json(&to_json(&other)).unwrap(), Some(other));
        assert_eq!(from_json(&json!({"@type": "/x.y.Z"})).unwrap(), None);
    }
}

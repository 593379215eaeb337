//! Reserve messages, validated, and [`ReserveMsg`], the module's typed message enum.

use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
use cosmos_sdk_proto::Any;
use lantau_module_api::decode_any as decode;
use lantau_module_api::{parse_address, TxError};
use lantau_primitives::{Address, Amount, Coin};
use lantau_proto::chain::reserve::v1 as pb;

use crate::error::ReserveError;
use crate::Params;

/// `MsgSubmitAttestation`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmitAttestation {
    /// The issuer.
    pub issuer: Address,
    /// Coins in circulation.
    pub circulation: Coin,
    /// Reserve market value.
    pub reserve_market_value: Coin,
    /// When the reserve was measured.
    pub random_day: lantau_proto::Timestamp,
}

/// Every reserve message.
#[derive(Debug, Clone, PartialEq)]
pub enum ReserveMsg {
    /// `MsgSubmitAttestation`.
    Submit(SubmitAttestation),
    /// `MsgCosignAttestation`: (auditor, attestation id).
    Cosign(Address, u64),
    /// `MsgUpdateParams`: (authority, params).
    UpdateParams(Address, Params),
}

/// `/chain.reserve.v1.MsgSubmitAttestation`.
pub const MSG_SUBMIT_ATTESTATION: &str = "/chain.reserve.v1.MsgSubmitAttestation";
/// `/chain.reserve.v1.MsgCosignAttestation`.
pub const MSG_COSIGN_ATTESTATION: &str = "/chain.reserve.v1.MsgCosignAttestation";
/// `/chain.reserve.v1.MsgUpdateParams`.
pub const MSG_UPDATE_PARAMS: &str = "/chain.reserve.v1.MsgUpdateParams";

fn coin(c: Option<&PbCoin>, field: &'static str) -> Result<Coin, ReserveError> {
    let c = c.ok_or_else(|| ReserveError::InvalidAmount(format!("{field} is required")))?;
    lantau_primitives::Denom::new(&c.denom).map_err(|e| ReserveError::InvalidAmount(format!("{field}: {e}")))?;
    let amount: Amount = c.amount.parse().map_err(|_| ReserveError::InvalidAmount(format!("{field}: {:?} is not a non-negative integer", c.amount)))?;
    if amount.is_zero() {
        return Err(ReserveError::InvalidAmount(format!("{field} must be positive")));
    }
    Ok(Coin::new(c.denom.clone(), amount))
}

/// `max_attestation_age` in seconds: `"<seconds>s"` (a protobuf Duration's JSON, whole
/// seconds); empty: no limit.
pub fn max_age_secs(p: &Params) -> Result<Option<u64>, ReserveError> {
    let s = p.max_attestation_age.as_str();
    if s.is_empty() {
        return Ok(None);
    }
    lantau_module_api::duration_secs(s)
        .map(Some)
        .ok_or_else(|| ReserveError::InvalidParams(format!("max_attestation_age {s:?}: whole seconds, e.g. \"31536000s\"")))
}

/// Validates params: auditors are valid addresses, listed once; the age a duration.
pub fn validate_params(p: &Params) -> Result<(), ReserveError> {
    max_age_secs(p)?;
    let mut seen = std::collections::BTreeSet::new();
    for a in &p.auditors {
        let addr = Address::from_bech32(a).map_err(|e| ReserveError::InvalidParams(format!("auditor {a:?}: {e}")))?;
        if !seen.insert(addr) {
            return Err(ReserveError::InvalidParams(format!("auditor {a} is listed twice")));
        }
    }
    Ok(())
}

impl ReserveMsg {
    /// Decodes and validates; `None` when the type URL is not this module's.
    pub fn from_any(any: &Any) -> Option<Result<Self, TxError>> {
        Some(match any.type_url.as_str() {
            MSG_SUBMIT_ATTESTATION => decode::<pb::MsgSubmitAttestation>(any).and_then(|m| {
                let random_day = m.random_day.ok_or_else(|| ReserveError::InvalidRandomDay("random_day is required".into()))?;
                if lantau_proto::from_timestamp(&random_day).is_none() || random_day.nanos < 0 {
                    return Err(ReserveError::InvalidRandomDay("out of range".into()).into());
                }
                Ok(ReserveMsg::Submit(SubmitAttestation {
                    issuer: parse_address(&m.issuer, "issuer")?,
                    circulation: coin(m.circulation.as_ref(), "circulation")?,
                    reserve_market_value: coin(m.reserve_market_value.as_ref(), "reserve_market_value")?,
                    random_day,
                }))
            }),
            MSG_COSIGN_ATTESTATION => {
                decode::<pb::MsgCosignAttestation>(any).and_then(|m| Ok(ReserveMsg::Cosign(parse_address(&m.auditor, "auditor")?, m.attestation_id)))
            }
            MSG_UPDATE_PARAMS => decode::<pb::MsgUpdateParams>(any).and_then(|m| {
                let params = m.params.ok_or_else(|| ReserveError::InvalidParams("params are required".into()))?;
                validate_params(&params)?;
                Ok(ReserveMsg::UpdateParams(parse_address(&m.authority, "authority")?, params))
            }),
            _ => return None,
        })
    }

    /// The type URL.
    pub fn type_url(&self) -> &'static str {
        match self {
            ReserveMsg::Submit(_) => MSG_SUBMIT_ATTESTATION,
            ReserveMsg::Cosign(..) => MSG_COSIGN_ATTESTATION,
            ReserveMsg::UpdateParams(..) => MSG_UPDATE_PARAMS,
        }
    }

    /// The address that must sign.
    pub fn signer(&self) -> Address {
        match self {
            ReserveMsg::Submit(m) => m.issuer,
            ReserveMsg::Cosign(a, _) | ReserveMsg::UpdateParams(a, _) => *a,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Name;

    #[test]
    fn type_urls_match_the_schema() {
        assert_eq!(MSG_SUBMIT_ATTESTATION, pb::MsgSubmitAttestation::type_url());
        assert_eq!(MSG_COSIGN_ATTESTATION, pb::MsgCosignAttestation::type_url());
        assert_eq!(MSG_UPDATE_PARAMS, pb::MsgUpdateParams::type_url());
    }
}

//! KYC messages, validated from their protobuf form, and [`KycMsg`], the module's one typed
//! message enum.

use cosmos_sdk_proto::Any;
use lantau_module_api::decode_any as decode;
use lantau_module_api::{parse_address, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::kyc::v1 as pb;
#[cfg(test)]
use prost::Name;

use crate::error::{check_len, KycError};
use crate::tier::Tier;
use crate::{Level, Params, MAX_REASON_LEN, MAX_REF_LEN, MAX_VASP_LEN};

/// An identity as a registrar sets it (enrol or update).
#[derive(Debug, Clone, PartialEq)]
pub struct IdentityFields {
    /// The signer: a registrar.
    pub registrar: Address,
    /// The identity's address.
    pub address: Address,
    /// Level 1-5.
    pub level: Level,
    /// VASP identifier (may be empty).
    pub vasp_identifier: String,
    /// IVMS 101 reference (may be empty).
    pub ivms101_off_chain_ref: String,
    /// When the identity lapses; `None`: never (absent or zero in the message).
    pub expires_at: Option<lantau_proto::Timestamp>,
}

/// An expiry as a message carries it: absent or zero means never; otherwise a valid time.
fn parse_expiry(t: Option<lantau_proto::Timestamp>) -> Result<Option<lantau_proto::Timestamp>, KycError> {
    match t {
        None => Ok(None),
        Some(t) if t.seconds == 0 && t.nanos == 0 => Ok(None),
        Some(t) if t.seconds < 0 || !(0..1_000_000_000).contains(&t.nanos) || t.to_rfc3339().is_none() => {
            Err(KycError::InvalidExpiry(format!("{}s {}ns is not a time after 1970", t.seconds, t.nanos)))
        }
        Some(t) => Ok(Some(t)),
    }
}

fn parse_level(v: i32) -> Result<Level, KycError> {
    Level::try_from(v).map_err(|_| KycError::InvalidLevel(format!("unknown level {v}")))
}

impl IdentityFields {
    fn new(registrar: &str, address: &str, level: i32, vasp: &str, reference: &str, expires_at: Option<lantau_proto::Timestamp>) -> Result<Self, TxError> {
        let level = parse_level(level)?;
        if level == Level::Blacklisted {
            return Err(KycError::InvalidLevel(
                "registrars cannot assign LEVEL_BLACKLISTED; the compliance authority blacklists with MsgBlacklistAddress".into(),
            )
            .into());
        }
        if !crate::tier::is_assignable(level) {
            return Err(KycError::InvalidLevel(format!("{} cannot be assigned", level.as_str_name())).into());
        }
        check_len("vasp_identifier", vasp, MAX_VASP_LEN)?;
        check_len("ivms101_off_chain_ref", reference, MAX_REF_LEN)?;
        Ok(Self {
            registrar: parse_address(registrar, "registrar")?,
            address: parse_address(address, "address")?,
            level,
            vasp_identifier: vasp.to_string(),
            ivms101_off_chain_ref: reference.to_string(),
            expires_at: parse_expiry(expires_at)?,
        })
    }
}

/// `MsgBlacklistAddress`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct BlacklistAddress {
    /// The signer: the compliance authority.
    pub authority: Address,
    /// Who is blacklisted.
    pub address: Address,
    /// Why (defaults to `compliance_authority` when empty).
    pub reason: String,
    /// The source document.
    pub evidence_ref: String,
}

/// The reason recorded when `MsgBlacklistAddress` carries none.
pub const DEFAULT_BLACKLIST_REASON: &str = "compliance_authority";

/// `MsgUpdateParams`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateParams {
    /// The signer: governance.
    pub authority: Address,
    /// The new params.
    pub params: Params,
}

/// Validates params: every level definition names an assignable level once, with a known tier;
/// registrars are valid addresses, listed once.
pub fn validate_params(p: &Params) -> Result<(), KycError> {
    let mut seen = Vec::new();
    for d in &p.level_definitions {
        let level = parse_level(d.level).map_err(|e| KycError::InvalidParams(e.to_string()))?;
        if !crate::tier::is_assignable(level) {
            return Err(KycError::InvalidParams(format!("{} cannot have a tier", level.as_str_name())));
        }
        if Tier::parse(&d.travel_rule_tier).is_none() {
            return Err(KycError::InvalidParams(format!(
                "travel_rule_tier {:?} of {}: expected none, minimal or full",
                d.travel_rule_tier,
                level.as_str_name()
            )));
        }
        if seen.contains(&d.level) {
            return Err(KycError::InvalidParams(format!("{} is defined twice", level.as_str_name())));
        }
        seen.push(d.level);
    }
    let mut regs = Vec::new();
    for r in &p.registrars {
        let a = Address::from_bech32(r).map_err(|e| KycError::InvalidParams(format!("registrar {r:?}: {e}")))?;
        if regs.contains(&a) {
            return Err(KycError::InvalidParams(format!("registrar {r} is listed twice")));
        }
        regs.push(a);
    }
    Ok(())
}

/// Every KYC message.
#[derive(Debug, Clone, PartialEq)]
pub enum KycMsg {
    /// `MsgEnrollIdentity`.
    Enroll(IdentityFields),
    /// `MsgUpdateIdentity`.
    Update(IdentityFields),
    /// `MsgBlacklistAddress`.
    Blacklist(BlacklistAddress),
    /// `MsgUpdateParams`.
    UpdateParams(UpdateParams),
}

/// `/chain.kyc.v1.MsgEnrollIdentity`.
pub const MSG_ENROLL_IDENTITY: &str = "/chain.kyc.v1.MsgEnrollIdentity";
/// `/chain.kyc.v1.MsgUpdateIdentity`.
pub const MSG_UPDATE_IDENTITY: &str = "/chain.kyc.v1.MsgUpdateIdentity";
/// `/chain.kyc.v1.MsgBlacklistAddress`.
pub const MSG_BLACKLIST_ADDRESS: &str = "/chain.kyc.v1.MsgBlacklistAddress";
/// `/chain.kyc.v1.MsgUpdateParams`.
pub const MSG_UPDATE_PARAMS: &str = "/chain.kyc.v1.MsgUpdateParams";

impl KycMsg {
    /// Decodes and validates; `None` when the type URL is not this module's.
    pub fn from_any(any: &Any) -> Option<Result<Self, TxError>> {
        Some(match any.type_url.as_str() {
            MSG_ENROLL_IDENTITY => decode::<pb::MsgEnrollIdentity>(any).and_then(|m| {
                IdentityFields::new(&m.registrar, &m.address, m.level, &m.vasp_identifier, &m.ivms101_off_chain_ref, m.expires_at).map(KycMsg::Enroll)
            }),
            MSG_UPDATE_IDENTITY => decode::<pb::MsgUpdateIdentity>(any).and_then(|m| {
                IdentityFields::new(&m.registrar, &m.address, m.level, &m.vasp_identifier, &m.ivms101_off_chain_ref, m.expires_at).map(KycMsg::Update)
            }),
            MSG_BLACKLIST_ADDRESS => decode::<pb::MsgBlacklistAddress>(any).and_then(|m| {
                check_len("reason", &m.reason, MAX_REASON_LEN)?;
                check_len("evidence_ref", &m.evidence_ref, MAX_REF_LEN)?;
                Ok(KycMsg::Blacklist(BlacklistAddress {
                    authority: parse_address(&m.authority, "authority")?,
                    address: parse_address(&m.address, "address")?,
                    reason: if m.reason.is_empty() { DEFAULT_BLACKLIST_REASON.to_string() } else { m.reason },
                    evidence_ref: m.evidence_ref,
                }))
            }),
            MSG_UPDATE_PARAMS => decode::<pb::MsgUpdateParams>(any).and_then(|m| {
                let params = m.params.ok_or_else(|| KycError::InvalidParams("params are required".into()))?;
                validate_params(&params)?;
                Ok(KycMsg::UpdateParams(UpdateParams { authority: parse_address(&m.authority, "authority")?, params }))
            }),
            _ => return None,
        })
    }

    /// The message's type URL.
    pub fn type_url(&self) -> &'static str {
        match self {
            KycMsg::Enroll(_) => MSG_ENROLL_IDENTITY,
            KycMsg::Update(_) => MSG_UPDATE_IDENTITY,
            KycMsg::Blacklist(_) => MSG_BLACKLIST_ADDRESS,
            KycMsg::UpdateParams(_) => MSG_UPDATE_PARAMS,
        }
    }

    /// The address that must sign.
    pub fn signer(&self) -> Address {
        match self {
            KycMsg::Enroll(m) | KycMsg::Update(m) => m.registrar,
            KycMsg::Blacklist(m) => m.authority,
            KycMsg::UpdateParams(m) => m.authority,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_urls_match_the_schema() {
        assert_eq!(MSG_ENROLL_IDENTITY, pb::MsgEnrollIdentity::type_url());
        assert_eq!(MSG_UPDATE_IDENTITY, pb::MsgUpdateIdentity::type_url());
        assert_eq!(MSG_BLACKLIST_ADDRESS, pb::MsgBlacklistAddress::type_url());
        assert_eq!(MSG_UPDATE_PARAMS, pb::MsgUpdateParams::type_url());
    }
}

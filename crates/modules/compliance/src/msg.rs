//! Compliance messages, validated, and [`ComplianceMsg`], the module's typed message enum.

use cosmos_sdk_proto::Any;
use lantau_module_api::decode_any as decode;
use lantau_module_api::{parse_address, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1 as pb;

use crate::error::ComplianceError;
use crate::Rules;

/// Validates the rules: every value positive.
pub fn validate_rules(r: &Rules) -> Result<(), ComplianceError> {
    if r.travel_rule_full_threshold == 0 {
        return Err(ComplianceError::InvalidParams("travel_rule_full_threshold must be positive".into()));
    }
    if r.velocity_window_seconds == 0 {
        return Err(ComplianceError::InvalidParams("velocity_window_seconds must be positive".into()));
    }
    if r.velocity_tx_limit == 0 {
        return Err(ComplianceError::InvalidParams("velocity_tx_limit must be positive".into()));
    }
    Ok(())
}

/// `MsgUpdateParams`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateParams {
    /// Governance.
    pub authority: Address,
    /// The new compliance authority.
    pub compliance_authority: Address,
    /// The new rules.
    pub rules: Rules,
}

/// `MsgUpdateSanctionsList`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateSanctions {
    /// The compliance authority.
    pub authority: Address,
    /// Addresses to blacklist (additive), deduplicated, in the order sent.
    pub addresses: Vec<Address>,
    /// The new VASP set (replace semantics), deduplicated and sorted.
    pub vasps: Vec<String>,
    /// Reason (default `sanctions_list_push`).
    pub reason: String,
    /// Source document.
    pub evidence_ref: String,
}

/// The reason recorded when a sanctions push carries none.
pub const DEFAULT_SANCTIONS_REASON: &str = "sanctions_list_push";
/// Most entries (addresses plus VASPs) one sanctions push may carry: each address costs a
/// blacklist write, so the message stays bounded work (gas meters it too).
pub const MAX_SANCTIONS_ENTRIES: usize = 10_000;

/// Every compliance message.
#[derive(Debug, Clone, PartialEq)]
pub enum ComplianceMsg {
    /// `MsgUpdateParams`.
    UpdateParams(UpdateParams),
    /// `MsgUpdateSanctionsList`.
    UpdateSanctions(UpdateSanctions),
    /// `MsgUpdateRule`: (authority, rules).
    UpdateRule(Address, Rules),
}

/// `/chain.compliance.v1.MsgUpdateSanctionsList`.
pub const MSG_UPDATE_SANCTIONS_LIST: &str = "/chain.compliance.v1.MsgUpdateSanctionsList";
/// `/chain.compliance.v1.MsgUpdateRule`.
pub const MSG_UPDATE_RULE: &str = "/chain.compliance.v1.MsgUpdateRule";

/// `/chain.compliance.v1.MsgUpdateParams`.
pub const MSG_UPDATE_PARAMS: &str = "/chain.compliance.v1.MsgUpdateParams";


impl ComplianceMsg {
    /// Decodes and validates; `None` when the type URL is not this module's.
    pub fn from_any(any: &Any) -> Option<Result<Self, TxError>> {
        Some(match any.type_url.as_str() {
            MSG_UPDATE_PARAMS => decode::<pb::MsgUpdateParams>(any).and_then(|m| {
                let params = m.params.ok_or_else(|| ComplianceError::InvalidParams("params are required".into()))?;
                let rules = params.rules.ok_or_else(|| ComplianceError::InvalidParams("params.rules are required".into()))?;
                validate_rules(&rules)?;
                if params.authority.is_empty() {
                    return Err(ComplianceError::InvalidParams("params.authority (the compliance authority) is required".into()).into());
                }
                Ok(ComplianceMsg::UpdateParams(UpdateParams {
                    authority: parse_address(&m.authority, "authority")?,
                    compliance_authority: parse_address(&params.authority, "params.authority")?,
                    rules,
                }))
            }),
            MSG_UPDATE_SANCTIONS_LIST => decode::<pb::MsgUpdateSanctionsList>(any).and_then(|m| {
                if m.blocked_addresses.len().saturating_add(m.blocked_vasps.len()) > MAX_SANCTIONS_ENTRIES {
                    return Err(ComplianceError::InvalidParams(format!("at most {MAX_SANCTIONS_ENTRIES} entries per push")).into());
                }
                if m.reason.len() > 256 || m.evidence_ref.len() > 512 {
                    return Err(ComplianceError::InvalidParams("reason (256) or evidence_ref (512) too long".into()).into());
                }
                let mut addresses = Vec::new();
                for (i, a) in m.blocked_addresses.iter().enumerate() {
                    let addr = parse_address(a, &format!("blocked_addresses[{i}]"))?;
                    if !addresses.contains(&addr) {
                        addresses.push(addr);
                    }
                }
                let mut vasps: Vec<String> = Vec::new();
                for v in m.blocked_vasps {
                    if v.is_empty() || v.len() > 128 {
                        return Err(ComplianceError::InvalidParams(format!("blocked VASP {v:?}: 1 to 128 bytes")).into());
                    }
                    vasps.push(v);
                }
                vasps.sort();
                vasps.dedup();
                Ok(ComplianceMsg::UpdateSanctions(UpdateSanctions {
                    authority: parse_address(&m.authority, "authority")?,
                    addresses,
                    vasps,
                    reason: if m.reason.is_empty() { DEFAULT_SANCTIONS_REASON.into() } else { m.reason },
                    evidence_ref: m.evidence_ref,
                }))
            }),
            MSG_UPDATE_RULE => decode::<pb::MsgUpdateRule>(any).and_then(|m| {
                let rules = m.rules.ok_or_else(|| ComplianceError::InvalidParams("rules are required (all three values)".into()))?;
                validate_rules(&rules)?;
                Ok(ComplianceMsg::UpdateRule(parse_address(&m.authority, "authority")?, rules))
            }),
            _ => return None,
        })
    }

    /// The type URL.
    pub fn type_url(&self) -> &'static str {
        match self {
            ComplianceMsg::UpdateParams(_) => MSG_UPDATE_PARAMS,
            ComplianceMsg::UpdateSanctions(_) => MSG_UPDATE_SANCTIONS_LIST,
            ComplianceMsg::UpdateRule(..) => MSG_UPDATE_RULE,
        }
    }

    /// The address that must sign.
    pub fn signer(&self) -> Address {
        match self {
            ComplianceMsg::UpdateParams(m) => m.authority,
            ComplianceMsg::UpdateSanctions(m) => m.authority,
            ComplianceMsg::UpdateRule(a, _) => *a,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Name;

    #[test]
    fn type_urls_match_the_schema() {
        assert_eq!(MSG_UPDATE_PARAMS, pb::MsgUpdateParams::type_url());
        assert_eq!(MSG_UPDATE_SANCTIONS_LIST, pb::MsgUpdateSanctionsList::type_url());
        assert_eq!(MSG_UPDATE_RULE, pb::MsgUpdateRule::type_url());
    }
}

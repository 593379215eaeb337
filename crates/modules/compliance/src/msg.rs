//! Compliance messages, validated, and [`ComplianceMsg`], the module's typed message enum.

use cosmos_sdk_proto::Any;
use lantau_module_api::{parse_address, SdkError, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1 as pb;
use prost::Message;

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

/// Every compliance message.
#[derive(Debug, Clone, PartialEq)]
pub enum ComplianceMsg {
    /// `MsgUpdateParams`.
    UpdateParams(UpdateParams),
}

/// `/chain.compliance.v1.MsgUpdateParams`.
pub const MSG_UPDATE_PARAMS: &str = "/chain.compliance.v1.MsgUpdateParams";

fn decode<M: Message + Default>(any: &Any) -> Result<M, TxError> {
    M::decode(any.value.as_slice()).map_err(|e| SdkError::TxDecode(format!("invalid {}: {e}", any.type_url)).into())
}

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
            _ => return None,
        })
    }

    /// The type URL.
    pub fn type_url(&self) -> &'static str {
        match self {
            ComplianceMsg::UpdateParams(_) => MSG_UPDATE_PARAMS,
        }
    }

    /// The address that must sign.
    pub fn signer(&self) -> Address {
        match self {
            ComplianceMsg::UpdateParams(m) => m.authority,
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
    }
}

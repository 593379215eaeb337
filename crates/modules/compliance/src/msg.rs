//! Compliance messages, validated, and [`ComplianceMsg`], the module's typed message enum.

use cosmos_sdk_proto::Any;
use lantau_module_api::decode_any as decode;
use lantau_module_api::{parse_address, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1 as pb;

use crate::error::ComplianceError;
use crate::{Rules, SubRole};
use lantau_primitives::{Coin, Denom};

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
    /// Whether a reviewer's BLOCKED needs an officer.
    pub block_requires_officer: bool,
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

/// A decision on a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Cleared.
    Approved,
    /// Blocked: the subject is blacklisted.
    Blocked,
    /// Handed to an officer (reviews only).
    Escalated,
}

impl Decision {
    /// The wire spelling: `APPROVED`, `BLOCKED`, `ESCALATED`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Approved => "APPROVED",
            Decision::Blocked => "BLOCKED",
            Decision::Escalated => "ESCALATED",
        }
    }

    /// Parses a decision, case-insensitively.
    pub fn parse(s: &str) -> Result<Self, ComplianceError> {
        match s.to_ascii_uppercase().as_str() {
            "APPROVED" => Ok(Decision::Approved),
            "BLOCKED" => Ok(Decision::Blocked),
            "ESCALATED" => Ok(Decision::Escalated),
            _ => Err(ComplianceError::InvalidDecision(format!("{s:?}: expected APPROVED, BLOCKED or ESCALATED"))),
        }
    }
}

/// `MsgReviewFlag` (decision any of the three) or `MsgCloseFlag` (APPROVED or BLOCKED),
/// validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Decide {
    /// The reviewer (review) or officer (close).
    pub signer: Address,
    /// The flag.
    pub flag_id: u64,
    /// The decision.
    pub decision: Decision,
    /// `reviewer_evidence_hash` or `officer_evidence_hash`.
    pub evidence_hash: String,
}

/// `MsgEscalateFlag`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct EscalateFlag {
    /// The reviewer.
    pub reviewer: Address,
    /// The flag.
    pub flag_id: u64,
    /// Hash of the note for the officer.
    pub officer_note_hash: String,
}

/// An agent's spending envelope, validated: both caps in one denom, `per_tx_cap <= daily_cap`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// Most the agent may spend in a 24-hour window.
    pub daily_cap: Coin,
    /// Most one transfer may move.
    pub per_tx_cap: Coin,
}

/// `MsgBindSubRole`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct BindSubRole {
    /// The parent (signer).
    pub parent: Address,
    /// The sub-key.
    pub sub: Address,
    /// Reviewer, officer or agent.
    pub role: SubRole,
    /// Free text.
    pub label: String,
    /// An agent's envelope, landing with the binding.
    pub envelope: Option<Envelope>,
}

/// Every compliance message.
#[derive(Debug, Clone, PartialEq)]
pub enum ComplianceMsg {
    /// `MsgUpdateParams`.
    UpdateParams(UpdateParams),
    /// `MsgUpdateSanctionsList`.
    UpdateSanctions(UpdateSanctions),
    /// `MsgUpdateRule`: (authority, rules).
    UpdateRule(Address, Rules),
    /// `MsgReviewFlag`.
    ReviewFlag(Decide),
    /// `MsgEscalateFlag`.
    EscalateFlag(EscalateFlag),
    /// `MsgCloseFlag`.
    CloseFlag(Decide),
    /// `MsgBindSubRole`.
    BindSubRole(BindSubRole),
    /// `MsgRevokeSubRole`: (parent, sub-key).
    RevokeSubRole(Address, Address),
    /// `MsgBindAgentPolicy`: (parent, sub-key, envelope).
    BindAgentPolicy(Address, Address, Envelope),
}

/// Longest `label` of a binding, in bytes.
pub const MAX_LABEL_LEN: usize = 128;
/// Longest evidence or note hash, in bytes (a hex SHA-256 is 64; room for a multihash or a
/// prefixed form such as `sha256:<hex>`).
pub const MAX_HASH_LEN: usize = 128;

fn flag_id(s: &str) -> Result<u64, ComplianceError> {
    s.parse::<u64>()
        .ok()
        .filter(|id| *id > 0 && !s.starts_with('+'))
        .ok_or_else(|| ComplianceError::InvalidFlagMsg(format!("flag_id {s:?} is not a flag id (a positive decimal number)")))
}

fn hash_field(s: String, field: &str) -> Result<String, ComplianceError> {
    if s.len() > MAX_HASH_LEN || s.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(ComplianceError::InvalidFlagMsg(format!("{field}: at most {MAX_HASH_LEN} bytes, no whitespace")));
    }
    Ok(s)
}

fn cap(c: Option<cosmos_sdk_proto::cosmos::base::v1beta1::Coin>, field: &str) -> Result<Coin, ComplianceError> {
    let c = c.ok_or_else(|| ComplianceError::InvalidEnvelope(format!("{field} is required")))?;
    let denom = Denom::new(&c.denom).map_err(|e| ComplianceError::InvalidEnvelope(format!("{field}: {e}")))?;
    let amount = c.amount.parse().map_err(|_| ComplianceError::InvalidEnvelope(format!("{field}: amount {:?} is not a non-negative integer", c.amount)))?;
    Ok(Coin { denom: denom.as_str().to_string(), amount })
}

/// Validates an envelope: both caps present, non-negative, one denom, `per_tx_cap <= daily_cap`.
pub fn envelope(
    daily_cap: Option<cosmos_sdk_proto::cosmos::base::v1beta1::Coin>,
    per_tx_cap: Option<cosmos_sdk_proto::cosmos::base::v1beta1::Coin>,
) -> Result<Envelope, ComplianceError> {
    let daily_cap = cap(daily_cap, "daily_cap")?;
    let per_tx_cap = cap(per_tx_cap, "per_tx_cap")?;
    if daily_cap.denom != per_tx_cap.denom {
        return Err(ComplianceError::InvalidEnvelope(format!(
            "the caps must share a denom: daily_cap is in {}, per_tx_cap in {}",
            daily_cap.denom, per_tx_cap.denom
        )));
    }
    if per_tx_cap.amount > daily_cap.amount {
        return Err(ComplianceError::InvalidEnvelope(format!("per_tx_cap {per_tx_cap} exceeds daily_cap {daily_cap}")));
    }
    Ok(Envelope { daily_cap, per_tx_cap })
}

/// `/chain.compliance.v1.MsgUpdateSanctionsList`.
pub const MSG_UPDATE_SANCTIONS_LIST: &str = "/chain.compliance.v1.MsgUpdateSanctionsList";
/// `/chain.compliance.v1.MsgUpdateRule`.
pub const MSG_UPDATE_RULE: &str = "/chain.compliance.v1.MsgUpdateRule";

/// `/chain.compliance.v1.MsgUpdateParams`.
pub const MSG_UPDATE_PARAMS: &str = "/chain.compliance.v1.MsgUpdateParams";
/// `/chain.compliance.v1.MsgReviewFlag`.
pub const MSG_REVIEW_FLAG: &str = "/chain.compliance.v1.MsgReviewFlag";
/// `/chain.compliance.v1.MsgEscalateFlag`.
pub const MSG_ESCALATE_FLAG: &str = "/chain.compliance.v1.MsgEscalateFlag";
/// `/chain.compliance.v1.MsgCloseFlag`.
pub const MSG_CLOSE_FLAG: &str = "/chain.compliance.v1.MsgCloseFlag";
/// `/chain.compliance.v1.MsgBindSubRole`.
pub const MSG_BIND_SUB_ROLE: &str = "/chain.compliance.v1.MsgBindSubRole";
/// `/chain.compliance.v1.MsgRevokeSubRole`.
pub const MSG_REVOKE_SUB_ROLE: &str = "/chain.compliance.v1.MsgRevokeSubRole";
/// `/chain.compliance.v1.MsgBindAgentPolicy`.
pub const MSG_BIND_AGENT_POLICY: &str = "/chain.compliance.v1.MsgBindAgentPolicy";

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
                    block_requires_officer: params.block_requires_officer,
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
            MSG_REVIEW_FLAG => decode::<pb::MsgReviewFlag>(any).and_then(|m| {
                Ok(ComplianceMsg::ReviewFlag(Decide {
                    signer: parse_address(&m.reviewer, "reviewer")?,
                    flag_id: flag_id(&m.flag_id)?,
                    decision: Decision::parse(&m.decision)?,
                    evidence_hash: hash_field(m.reviewer_evidence_hash, "reviewer_evidence_hash")?,
                }))
            }),
            MSG_ESCALATE_FLAG => decode::<pb::MsgEscalateFlag>(any).and_then(|m| {
                Ok(ComplianceMsg::EscalateFlag(EscalateFlag {
                    reviewer: parse_address(&m.reviewer, "reviewer")?,
                    flag_id: flag_id(&m.flag_id)?,
                    officer_note_hash: hash_field(m.officer_note_hash, "officer_note_hash")?,
                }))
            }),
            MSG_CLOSE_FLAG => decode::<pb::MsgCloseFlag>(any).and_then(|m| {
                let decision = Decision::parse(&m.decision)?;
                if decision == Decision::Escalated {
                    return Err(ComplianceError::InvalidDecision("an officer cannot escalate further: a close decision is APPROVED or BLOCKED".into()).into());
                }
                Ok(ComplianceMsg::CloseFlag(Decide {
                    signer: parse_address(&m.officer, "officer")?,
                    flag_id: flag_id(&m.flag_id)?,
                    decision,
                    evidence_hash: hash_field(m.officer_evidence_hash, "officer_evidence_hash")?,
                }))
            }),
            MSG_BIND_SUB_ROLE => decode::<pb::MsgBindSubRole>(any).and_then(|m| {
                let parent = parse_address(&m.parent, "parent")?;
                let sub = parse_address(&m.sub_addr, "sub_addr")?;
                let role = SubRole::try_from(m.role).unwrap_or(SubRole::Unspecified);
                if role == SubRole::Unspecified {
                    return Err(ComplianceError::InvalidBinding("role must be SUB_ROLE_REVIEWER, SUB_ROLE_OFFICER or SUB_ROLE_AGENT".into()).into());
                }
                if parent == sub {
                    return Err(ComplianceError::InvalidBinding("a key cannot be its own sub-key".into()).into());
                }
                if m.label.len() > MAX_LABEL_LEN || m.label.chars().any(char::is_control) {
                    return Err(ComplianceError::InvalidBinding(format!("label: at most {MAX_LABEL_LEN} bytes, no control characters")).into());
                }
                let envelope = match m.policy_envelope {
                    None => None,
                    Some(_) if role != SubRole::Agent => {
                        return Err(
                            ComplianceError::InvalidEnvelope(format!("policy_envelope is for SUB_ROLE_AGENT bindings, not {}", role.as_str_name())).into()
                        )
                    }
                    Some(e) => Some(envelope(e.daily_cap, e.per_tx_cap)?),
                };
                Ok(ComplianceMsg::BindSubRole(BindSubRole { parent, sub, role, label: m.label, envelope }))
            }),
            MSG_REVOKE_SUB_ROLE => decode::<pb::MsgRevokeSubRole>(any)
                .and_then(|m| Ok(ComplianceMsg::RevokeSubRole(parse_address(&m.parent, "parent")?, parse_address(&m.sub_addr, "sub_addr")?))),
            MSG_BIND_AGENT_POLICY => decode::<pb::MsgBindAgentPolicy>(any).and_then(|m| {
                Ok(ComplianceMsg::BindAgentPolicy(
                    parse_address(&m.parent, "parent")?,
                    parse_address(&m.sub_addr, "sub_addr")?,
                    envelope(m.daily_cap, m.per_tx_cap)?,
                ))
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
            ComplianceMsg::ReviewFlag(_) => MSG_REVIEW_FLAG,
            ComplianceMsg::EscalateFlag(_) => MSG_ESCALATE_FLAG,
            ComplianceMsg::CloseFlag(_) => MSG_CLOSE_FLAG,
            ComplianceMsg::BindSubRole(_) => MSG_BIND_SUB_ROLE,
            ComplianceMsg::RevokeSubRole(..) => MSG_REVOKE_SUB_ROLE,
            ComplianceMsg::BindAgentPolicy(..) => MSG_BIND_AGENT_POLICY,
        }
    }

    /// The address that must sign.
    pub fn signer(&self) -> Address {
        match self {
            ComplianceMsg::UpdateParams(m) => m.authority,
            ComplianceMsg::UpdateSanctions(m) => m.authority,
            ComplianceMsg::UpdateRule(a, _) => *a,
            ComplianceMsg::ReviewFlag(m) | ComplianceMsg::CloseFlag(m) => m.signer,
            ComplianceMsg::EscalateFlag(m) => m.reviewer,
            ComplianceMsg::BindSubRole(m) => m.parent,
            ComplianceMsg::RevokeSubRole(parent, _) | ComplianceMsg::BindAgentPolicy(parent, ..) => *parent,
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
        assert_eq!(MSG_REVIEW_FLAG, pb::MsgReviewFlag::type_url());
        assert_eq!(MSG_ESCALATE_FLAG, pb::MsgEscalateFlag::type_url());
        assert_eq!(MSG_CLOSE_FLAG, pb::MsgCloseFlag::type_url());
        assert_eq!(MSG_BIND_SUB_ROLE, pb::MsgBindSubRole::type_url());
        assert_eq!(MSG_REVOKE_SUB_ROLE, pb::MsgRevokeSubRole::type_url());
        assert_eq!(MSG_BIND_AGENT_POLICY, pb::MsgBindAgentPolicy::type_url());
        // The role gate's table names the same messages.
        for t in crate::gates::allowed_messages(SubRole::Reviewer).iter().chain(crate::gates::allowed_messages(SubRole::Officer)) {
            assert!([MSG_REVIEW_FLAG, MSG_ESCALATE_FLAG, MSG_CLOSE_FLAG].contains(t));
        }
    }

    fn any<M: prost::Name>(m: &M) -> Any {
        Any { type_url: M::type_url(), value: m.encode_to_vec() }
    }

    fn err_code(r: Option<Result<ComplianceMsg, TxError>>) -> u32 {
        r.expect("compliance message").expect_err("should be rejected").code
    }

    #[test]
    fn bad_review_and_binding_messages_have_their_codes() {
        use prost::Message as _;
        let a = lantau_primitives::Address::from_slice(&[1; 20]).unwrap().to_bech32();
        let b = lantau_primitives::Address::from_slice(&[2; 20]).unwrap().to_bech32();
        let review = |id: &str, d: &str| pb::MsgReviewFlag { reviewer: a.clone(), flag_id: id.into(), decision: d.into(), reviewer_evidence_hash: "ab".into() };
        assert!(ComplianceMsg::from_any(&any(&review("1", "approved"))).unwrap().is_ok());
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&review("x", "APPROVED")))), 26);
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&review("0", "APPROVED")))), 26);
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&review("1", "MAYBE")))), 9);
        let close = pb::MsgCloseFlag { officer: a.clone(), flag_id: "1".into(), decision: "ESCALATED".into(), officer_evidence_hash: String::new() };
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&close))), 9);
        let coin = |d: &str, n: &str| Some(cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: d.into(), amount: n.into() });
        let bind = |role: SubRole, env: Option<pb::PolicyEnvelope>| pb::MsgBindSubRole {
            parent: a.clone(),
            sub_addr: b.clone(),
            role: role as i32,
            label: "desk".into(),
            policy_envelope: env,
        };
        assert!(ComplianceMsg::from_any(&any(&bind(SubRole::Agent, None))).unwrap().is_ok());
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&bind(SubRole::Unspecified, None)))), 25);
        let env = |d1: &str, n1: &str, d2: &str, n2: &str| Some(pb::PolicyEnvelope { daily_cap: coin(d1, n1), per_tx_cap: coin(d2, n2) });
        assert!(ComplianceMsg::from_any(&any(&bind(SubRole::Agent, env("hkd.demo", "100", "hkd.demo", "100")))).unwrap().is_ok());
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&bind(SubRole::Reviewer, env("hkd.demo", "100", "hkd.demo", "10"))))), 24);
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&bind(SubRole::Agent, env("hkd.demo", "10", "hkd.demo", "100"))))), 24);
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&bind(SubRole::Agent, env("hkd.demo", "100", "hkd.other", "10"))))), 24);
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&bind(SubRole::Agent, env("hkd.demo", "-1", "hkd.demo", "-2"))))), 24);
        let mut own = bind(SubRole::Agent, None);
        own.sub_addr = a.clone();
        assert_eq!(err_code(ComplianceMsg::from_any(&any(&own))), 25);
        // An encoded AgentPolicy decodes as an envelope (field numbers shared).
        let policy =
            pb::AgentPolicy { parent: a.clone(), sub_addr: b.clone(), daily_cap: coin("hkd.demo", "5"), per_tx_cap: coin("hkd.demo", "5"), revoked: false };
        let as_env = pb::PolicyEnvelope::decode(policy.encode_to_vec().as_slice()).unwrap();
        assert_eq!(as_env.daily_cap, coin("hkd.demo", "5"));
    }
}

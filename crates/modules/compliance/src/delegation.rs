//! Delegated sub-keys: MsgBindSubRole, MsgRevokeSubRole, MsgBindAgentPolicy.
//!
//! A binding lives under the sub-key (`compliance/sub/<sub>`, so a sub-key has at most one
//! parent) with a parent-index entry for SubRoleBindings. Bindings are never deleted: a
//! revoked one keeps its `revoked_at` and keeps the sub-key claimed by its parent, and the
//! same parent binding it again re-activates it (see docs/decisions.md).

use std::collections::BTreeMap;

use cnidarium::StateWrite;
use lantau_kyc::KycRead;
use lantau_module_api::{ExecCtx, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1 as pb;

use crate::audit::{AuditEntry, AuditWrite};
use crate::error::ComplianceError;
use crate::msg::{BindSubRole, Envelope};
use crate::state::{binding_revoked, parent_level_satisfies, ComplianceRead, ComplianceWrite};
use crate::{AgentPolicy, SubRole, SubRoleBinding};

fn role_name(role: i32) -> &'static str {
    SubRole::try_from(role).unwrap_or(SubRole::Unspecified).as_str_name()
}

async fn audit<S: StateWrite + Send + Sync>(
    state: &mut S,
    ctx: &ExecCtx<'_>,
    tx_type: &str,
    parent: &Address,
    sub: &Address,
    metadata: BTreeMap<String, String>,
) -> Result<(), TxError> {
    state
        .append_audit(
            ctx.gas,
            ctx.block,
            AuditEntry {
                tx_type: tx_type.to_string(),
                subject: parent.to_bech32(),
                counterparty: sub.to_bech32(),
                tx_hash: ctx.tx_hash.to_string(),
                metadata,
                ..Default::default()
            },
        )
        .await?;
    Ok(())
}

/// Stores the envelope as the agent's policy (not revoked), emits EventAgentPolicyUpdated and
/// appends `agent_policy_update`.
async fn put_envelope<S: StateWrite + Send + Sync>(state: &mut S, ctx: &mut ExecCtx<'_>, parent: &Address, sub: &Address, e: &Envelope) -> Result<(), TxError> {
    let policy = AgentPolicy {
        parent: parent.to_bech32(),
        sub_addr: sub.to_bech32(),
        daily_cap: Some(lantau_module_api::pb_coin(&e.daily_cap)),
        per_tx_cap: Some(lantau_module_api::pb_coin(&e.per_tx_cap)),
        revoked: false,
    };
    state.put_agent_policy(ctx.gas, sub, &policy)?;
    ctx.emit_typed(&pb::EventAgentPolicyUpdated {
        parent: policy.parent.clone(),
        sub_addr: policy.sub_addr.clone(),
        daily_cap: policy.daily_cap.clone(),
        per_tx_cap: policy.per_tx_cap.clone(),
        revoked: false,
    });
    let mut metadata = BTreeMap::new();
    metadata.insert("sub_addr".to_string(), policy.sub_addr.clone());
    metadata.insert("daily_cap".to_string(), e.daily_cap.to_string());
    metadata.insert("per_tx_cap".to_string(), e.per_tx_cap.to_string());
    metadata.insert("revoked".to_string(), "false".to_string());
    audit(state, ctx, "agent_policy_update", parent, sub, metadata).await
}

/// MsgBindSubRole.
pub async fn bind<S: StateWrite + Send + Sync>(state: &mut S, ctx: &mut ExecCtx<'_>, m: &BindSubRole) -> Result<(), TxError> {
    let parent_id = state.identity(ctx.gas, &m.parent).await?;
    let level = parent_id.as_ref().map(lantau_kyc::state::level_of).unwrap_or(lantau_kyc::Level::Unspecified);
    if !parent_level_satisfies(m.role, level) {
        let needs = match m.role {
            SubRole::Agent => "LEVEL_RETAIL_BASIC or above (never LEVEL_BLACKLISTED)",
            _ => "LEVEL_LICENSED_ISSUER",
        };
        return Err(ComplianceError::ParentLevel(format!(
            "parent {} is {}; {} needs a parent at {needs}",
            m.parent.to_bech32(),
            if parent_id.is_some() { level.as_str_name() } else { "without an identity record" },
            m.role.as_str_name()
        ))
        .into());
    }
    let existing = state.binding(ctx.gas, &m.sub).await?;
    let rebound = match &existing {
        Some(b) if b.parent != m.parent.to_bech32() => {
            return Err(ComplianceError::SubKeyClaimed { sub: m.sub.to_bech32(), parent: b.parent.clone() }.into());
        }
        Some(_) => true,
        None => false,
    };
    // A sub-key acts for its parent from now on, and may sign nothing but its role's messages:
    // binding must not capture an identified account, a new one or one that got an identity
    // record of its own since it was last bound (a registrar's enrolment, a sanctions push).
    if state.identity(ctx.gas, &m.sub).await?.is_some() {
        return Err(ComplianceError::InvalidBinding(format!(
            "{} has an identity record of its own: a sub-key is a key without one, acting for its parent",
            m.sub.to_bech32()
        ))
        .into());
    }
    let binding = SubRoleBinding {
        parent: m.parent.to_bech32(),
        sub_addr: m.sub.to_bech32(),
        role: m.role as i32,
        label: m.label.clone(),
        revoked_at: Some(lantau_proto::Timestamp::default()),
    };
    state.put_binding(ctx.gas, &m.parent, &m.sub, &binding)?;
    ctx.emit_typed(&pb::EventSubRoleBound {
        parent: binding.parent.clone(),
        sub_addr: binding.sub_addr.clone(),
        role: m.role.as_str_name().to_string(),
        label: m.label.clone(),
    });
    let mut metadata = BTreeMap::new();
    metadata.insert("sub_addr".to_string(), binding.sub_addr.clone());
    metadata.insert("role".to_string(), m.role.as_str_name().to_string());
    metadata.insert("label".to_string(), m.label.clone());
    metadata.insert("rebound".to_string(), rebound.to_string());
    if let Some(previous) = existing.as_ref().filter(|b| binding_revoked(b)) {
        metadata.insert("reactivated_from".to_string(), previous.revoked_at.and_then(|t| t.to_rfc3339()).unwrap_or_default());
    }
    audit(state, ctx, "sub_role_bound", &m.parent, &m.sub, metadata).await?;
    match (&m.envelope, m.role) {
        (Some(e), _) => put_envelope(state, ctx, &m.parent, &m.sub, e).await?,
        (None, SubRole::Agent) => {}
        // A key moved off the agent role keeps no spending rights.
        (None, _) => {
            if let Some(mut p) = state.agent_policy(ctx.gas, &m.sub).await?.filter(|p| !p.revoked) {
                p.revoked = true;
                state.put_agent_policy(ctx.gas, &m.sub, &p)?;
            }
        }
    }
    Ok(())
}

/// MsgRevokeSubRole.
pub async fn revoke<S: StateWrite + Send + Sync>(state: &mut S, ctx: &mut ExecCtx<'_>, parent: &Address, sub: &Address) -> Result<(), TxError> {
    let Some(mut b) = state.binding(ctx.gas, sub).await?.filter(|b| b.parent == parent.to_bech32()) else {
        return Err(ComplianceError::BindingNotFound { sub: sub.to_bech32(), parent: parent.to_bech32() }.into());
    };
    if binding_revoked(&b) {
        return Err(ComplianceError::BindingRevoked(sub.to_bech32()).into());
    }
    b.revoked_at = Some(lantau_module_api::block_timestamp(ctx.block));
    state.put_binding(ctx.gas, parent, sub, &b)?;
    let mut policy_revoked = false;
    if let Some(mut p) = state.agent_policy(ctx.gas, sub).await?.filter(|p| !p.revoked) {
        p.revoked = true;
        state.put_agent_policy(ctx.gas, sub, &p)?;
        policy_revoked = true;
    }
    ctx.emit_typed(&pb::EventSubRoleRevoked { parent: b.parent.clone(), sub_addr: b.sub_addr.clone() });
    let mut metadata = BTreeMap::new();
    metadata.insert("sub_addr".to_string(), b.sub_addr.clone());
    metadata.insert("role".to_string(), role_name(b.role).to_string());
    metadata.insert("policy_revoked".to_string(), policy_revoked.to_string());
    audit(state, ctx, "sub_role_revoked", parent, sub, metadata).await
}

/// MsgBindAgentPolicy: replaces the envelope of an existing, active agent binding.
pub async fn bind_policy<S: StateWrite + Send + Sync>(
    state: &mut S,
    ctx: &mut ExecCtx<'_>,
    parent: &Address,
    sub: &Address,
    e: &Envelope,
) -> Result<(), TxError> {
    let Some(b) = state.binding(ctx.gas, sub).await?.filter(|b| b.parent == parent.to_bech32()) else {
        return Err(ComplianceError::BindingNotFound { sub: sub.to_bech32(), parent: parent.to_bech32() }.into());
    };
    if b.role != SubRole::Agent as i32 {
        return Err(ComplianceError::NotAgent { sub: sub.to_bech32(), role: role_name(b.role).to_string() }.into());
    }
    if binding_revoked(&b) {
        return Err(ComplianceError::BindingRevoked(sub.to_bech32()).into());
    }
    put_envelope(state, ctx, parent, sub, e).await
}

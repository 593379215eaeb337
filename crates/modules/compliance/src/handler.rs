//! Compliance message handlers.

use cnidarium::StateWrite;
use lantau_authority::{AuthorityRead, AuthorityWrite};
use lantau_module_api::{ExecCtx, MsgHandler, TxError};
use lantau_proto::chain::compliance::v1 as pb;

use crate::audit::{AuditEntry, AuditWrite};
use crate::error::ComplianceError;
use crate::msg::ComplianceMsg;
use crate::state::{ComplianceRead, ComplianceWrite};
use crate::SanctionsSet;
use lantau_kyc::KycWrite;
use lantau_primitives::Address;

async fn ensure_compliance_authority<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, signer: &Address) -> Result<(), TxError> {
    let expected = state.compliance_authority(ctx.gas).await?;
    if *signer != expected {
        return Err(ComplianceError::NotComplianceAuthority { expected: expected.to_bech32(), signer: signer.to_bech32() }.into());
    }
    Ok(())
}

impl MsgHandler for ComplianceMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        match self {
            ComplianceMsg::UpdateParams(m) => {
                let gov = state.governance_authority(ctx.gas).await?;
                if m.authority != gov {
                    return Err(ComplianceError::NotGovernance { expected: gov.to_bech32(), signer: m.authority.to_bech32() }.into());
                }
                state.set_compliance_authority(ctx.gas, &m.compliance_authority)?;
                state.put_rules(ctx.gas, &m.rules)?;
                state.set_block_requires_officer(ctx.gas, m.block_requires_officer)?;
                ctx.emit_typed(&pb::EventParamsUpdated { authority: m.authority.to_bech32(), compliance_authority: m.compliance_authority.to_bech32() });
                Ok(())
            }
            ComplianceMsg::UpdateSanctions(m) => {
                ensure_compliance_authority(state, ctx, &m.authority).await?;
                let old = state.sanctions(ctx.gas).await?;
                let added_vasps: Vec<String> = m.vasps.iter().filter(|v| !old.blocked_vasps.contains(v)).cloned().collect();
                let removed_vasps: Vec<String> = old.blocked_vasps.iter().filter(|v| !m.vasps.contains(v)).cloned().collect();
                let mut added_addresses = Vec::new();
                let mut events = Vec::new();
                for a in &m.addresses {
                    if state.blacklist(ctx.gas, ctx.block, ctx.tx_hash, a, &m.reason, &m.evidence_ref, &mut events).await? {
                        added_addresses.push(a.to_bech32());
                    }
                }
                // Replace semantics: the set becomes the VASP list alone (blocked_addresses ends empty).
                state.put_sanctions(ctx.gas, &SanctionsSet { blocked_addresses: vec![], blocked_vasps: m.vasps.clone() })?;
                ctx.events.extend(events);
                let mut metadata = std::collections::BTreeMap::new();
                metadata.insert("reason".to_string(), m.reason.clone());
                metadata.insert("evidence_ref".to_string(), m.evidence_ref.clone());
                metadata.insert("added_vasps".to_string(), added_vasps.join(","));
                metadata.insert("removed_vasps".to_string(), removed_vasps.join(","));
                metadata.insert("added_addresses".to_string(), added_addresses.join(","));
                state
                    .append_audit(
                        ctx.gas,
                        ctx.block,
                        AuditEntry {
                            tx_type: "sanctions_update".into(),
                            subject: m.authority.to_bech32(),
                            tx_hash: ctx.tx_hash.to_string(),
                            metadata,
                            ..Default::default()
                        },
                    )
                    .await?;
                ctx.emit_typed(&pb::EventSanctionsUpdated {
                    added_vasps,
                    removed_vasps,
                    added_addresses,
                    reason: m.reason.clone(),
                    evidence_ref: m.evidence_ref.clone(),
                });
                Ok(())
            }
            ComplianceMsg::UpdateRule(authority, rules) => {
                ensure_compliance_authority(state, ctx, authority).await?;
                state.put_rules(ctx.gas, rules)?;
                let mut metadata = std::collections::BTreeMap::new();
                metadata.insert("travel_rule_full_threshold".to_string(), rules.travel_rule_full_threshold.to_string());
                metadata.insert("velocity_window_seconds".to_string(), rules.velocity_window_seconds.to_string());
                metadata.insert("velocity_tx_limit".to_string(), rules.velocity_tx_limit.to_string());
                state
                    .append_audit(
                        ctx.gas,
                        ctx.block,
                        AuditEntry {
                            tx_type: "rule_update".into(),
                            subject: authority.to_bech32(),
                            tx_hash: ctx.tx_hash.to_string(),
                            metadata,
                            ..Default::default()
                        },
                    )
                    .await?;
                ctx.emit_typed(&pb::EventRuleUpdated { rules: Some(*rules), authority: authority.to_bech32() });
                Ok(())
            }
            ComplianceMsg::ReviewFlag(m) => crate::review::review(state, ctx, m).await,
            ComplianceMsg::EscalateFlag(m) => crate::review::escalate(state, ctx, m).await,
            ComplianceMsg::CloseFlag(m) => crate::review::close(state, ctx, m).await,
            ComplianceMsg::BindSubRole(m) => crate::delegation::bind(state, ctx, m).await,
            ComplianceMsg::RevokeSubRole(parent, sub) => crate::delegation::revoke(state, ctx, parent, sub).await,
            ComplianceMsg::BindAgentPolicy(parent, sub, e) => crate::delegation::bind_policy(state, ctx, parent, sub, e).await,
        }
    }
}

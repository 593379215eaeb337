//! KYC message handlers: authority and state checks, then writes.

use cnidarium::StateWrite;
use lantau_authority::AuthorityRead;
use lantau_module_api::{ExecCtx, MsgHandler, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::kyc::v1 as pb;

use crate::error::KycError;
use crate::msg::{IdentityFields, KycMsg};
use crate::state::{audit_identity, level_of, KycRead, KycWrite};
use crate::{Identity, Level};

async fn ensure_registrar<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, who: &Address) -> Result<(), TxError> {
    let params = state.kyc_params(ctx.gas).await?;
    let me = who.to_bech32();
    if params.registrars.contains(&me) {
        Ok(())
    } else {
        Err(KycError::NotRegistrar(me).into())
    }
}

impl MsgHandler for KycMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        // Everything stateless was validated when the message was decoded.
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let now = lantau_module_api::block_timestamp(ctx.block);
        match self {
            KycMsg::Enroll(m) => {
                ensure_registrar(state, ctx, &m.registrar).await?;
                check_expiry(m, &now)?;
                if state.identity(ctx.gas, &m.address).await?.is_some() {
                    return Err(KycError::IdentityExists(m.address.to_bech32()).into());
                }
                let id = record(m, Some(now), Some(now));
                state.put_identity(ctx.gas, &m.address, &id)?;
                let meta = [
                    ("level", m.level.as_str_name().to_string()),
                    ("vasp_identifier", m.vasp_identifier.clone()),
                    ("ivms101_off_chain_ref", m.ivms101_off_chain_ref.clone()),
                    ("registrar", m.registrar.to_bech32()),
                ];
                audit_identity(state, ctx.gas, ctx.block, ctx.tx_hash, "identity_enrolled", &m.address, &meta).await?;
                ctx.emit_typed(&pb::EventIdentityEnrolled { address: m.address.to_bech32(), level: m.level as i32, registrar: m.registrar.to_bech32() });
                Ok(())
            }
            KycMsg::Update(m) => {
                ensure_registrar(state, ctx, &m.registrar).await?;
                check_expiry(m, &now)?;
                let old = state.identity(ctx.gas, &m.address).await?.ok_or_else(|| KycError::IdentityNotFound(m.address.to_bech32()))?;
                let previous = level_of(&old);
                if previous == Level::Blacklisted {
                    return Err(KycError::Blacklisted(m.address.to_bech32()).into());
                }
                let changed = previous != m.level;
                let last_change = if changed { Some(now) } else { old.last_level_change };
                let id = record(m, old.enrolled_at, last_change);
                state.put_identity(ctx.gas, &m.address, &id)?;
                ctx.emit_typed(&pb::EventIdentityUpdated { address: m.address.to_bech32(), level: m.level as i32, registrar: m.registrar.to_bech32() });
                if changed {
                    let meta = [
                        ("previous_level", previous.as_str_name().to_string()),
                        ("level", m.level.as_str_name().to_string()),
                        ("reason", "registrar_update".to_string()),
                        ("registrar", m.registrar.to_bech32()),
                    ];
                    audit_identity(state, ctx.gas, ctx.block, ctx.tx_hash, "level_change", &m.address, &meta).await?;
                    ctx.emit_typed(&pb::EventLevelChanged {
                        address: m.address.to_bech32(),
                        previous_level: previous as i32,
                        level: m.level as i32,
                        reason: "registrar_update".into(),
                        evidence_ref: String::new(),
                    });
                }
                Ok(())
            }
            KycMsg::Blacklist(m) => {
                let expected = state.compliance_authority(ctx.gas).await?;
                if m.authority != expected {
                    return Err(KycError::NotComplianceAuthority { expected: expected.to_bech32(), signer: m.authority.to_bech32() }.into());
                }
                let mut events = Vec::new();
                state.blacklist(ctx.gas, ctx.block, ctx.tx_hash, &m.address, &m.reason, &m.evidence_ref, &mut events).await?;
                ctx.events.extend(events);
                Ok(())
            }
            KycMsg::UpdateParams(m) => {
                let expected = state.governance_authority(ctx.gas).await?;
                if m.authority != expected {
                    return Err(KycError::NotGovernance { expected: expected.to_bech32(), signer: m.authority.to_bech32() }.into());
                }
                state.put_kyc_params(ctx.gas, &m.params)?;
                ctx.emit_typed(&pb::EventParamsUpdated { authority: m.authority.to_bech32() });
                Ok(())
            }
        }
    }
}

fn record(m: &IdentityFields, enrolled_at: Option<lantau_proto::Timestamp>, last_level_change: Option<lantau_proto::Timestamp>) -> Identity {
    Identity {
        address: m.address.to_bech32(),
        level: m.level as i32,
        vasp_identifier: m.vasp_identifier.clone(),
        ivms101_off_chain_ref: m.ivms101_off_chain_ref.clone(),
        enrolled_at,
        last_level_change,
        expires_at: m.expires_at,
    }
}

/// An expiry must lie after the block time (an identity enrolled already lapsed is a mistake).
fn check_expiry(m: &IdentityFields, now: &lantau_proto::Timestamp) -> Result<(), TxError> {
    match &m.expires_at {
        Some(t) if (t.seconds, t.nanos) <= (now.seconds, now.nanos) => {
            Err(KycError::InvalidExpiry(format!("{} is not after the block time {}", t.to_rfc3339().unwrap_or_default(), now.to_rfc3339().unwrap_or_default()))
                .into())
        }
        _ => Ok(()),
    }
}

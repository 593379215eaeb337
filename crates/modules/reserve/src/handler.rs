//! Reserve message handlers.

use cnidarium::StateWrite;
use lantau_authority::AuthorityRead;
use lantau_bank::BankRead;
use lantau_module_api::{pb_coin, ExecCtx, MsgHandler, TxError};
use lantau_proto::chain::reserve::v1 as pb;

use crate::error::ReserveError;
use crate::msg::ReserveMsg;
use crate::state::{ReserveRead, ReserveWrite};
use crate::{Attestation, AttestationState};

impl MsgHandler for ReserveMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let now = lantau_module_api::block_timestamp(ctx.block);
        match self {
            ReserveMsg::Submit(m) => {
                let denom = state.issuer_denom(ctx.gas, &m.issuer).await?.ok_or_else(|| ReserveError::NotAnIssuer(m.issuer.to_bech32()))?;
                for (field, c) in [("circulation", &m.circulation), ("reserve_market_value", &m.reserve_market_value)] {
                    if c.denom != denom {
                        return Err(ReserveError::DenomMismatch { field, expected: denom.clone(), got: c.denom.clone() }.into());
                    }
                }
                let day = lantau_proto::from_timestamp(&m.random_day).ok_or_else(|| ReserveError::InvalidRandomDay("out of range".into()))?;
                if day > ctx.block.time {
                    return Err(ReserveError::InvalidRandomDay(format!(
                        "{} is after the block time {}",
                        day.format(&time::format_description::well_known::Rfc3339).unwrap_or_default(),
                        ctx.block.time.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
                    ))
                    .into());
                }
                let id = state.take_attestation_id(ctx.gas).await?;
                let a = Attestation {
                    id,
                    issuer: m.issuer.to_bech32(),
                    state: AttestationState::Submitted as i32,
                    circulation: Some(pb_coin(&m.circulation)),
                    reserve_market_value: Some(pb_coin(&m.reserve_market_value)),
                    random_day: Some(m.random_day),
                    submitted_at: Some(now),
                    submitted_height: i64::try_from(ctx.block.height).unwrap_or(i64::MAX),
                    auditor: String::new(),
                    attested_at: None,
                };
                state.put_attestation(ctx.gas, &a, Some(&m.issuer))?;
                ctx.emit_typed(&pb::EventAttestationSubmitted { id, issuer: a.issuer });
                Ok(())
            }
            ReserveMsg::Cosign(auditor, id) => {
                let params = state.reserve_params(ctx.gas).await?;
                let who = auditor.to_bech32();
                if !params.auditors.contains(&who) {
                    return Err(ReserveError::NotAuditor(who).into());
                }
                let mut a = state.attestation(ctx.gas, *id).await?.ok_or(ReserveError::AttestationNotFound(*id))?;
                if a.state == AttestationState::Attested as i32 {
                    return Err(ReserveError::AlreadyAttested { id: *id, auditor: a.auditor }.into());
                }
                if a.issuer == who {
                    return Err(ReserveError::SelfAttestation(who).into());
                }
                a.state = AttestationState::Attested as i32;
                a.auditor = who.clone();
                a.attested_at = Some(now);
                state.put_attestation(ctx.gas, &a, None)?;
                let issuer = lantau_primitives::Address::from_bech32(&a.issuer)
                    .map_err(|e| lantau_module_api::error::internal(format!("attestation {id}: issuer: {e}")))?;
                state.record_attested(ctx.gas, &issuer, *id).await?;
                ctx.emit_typed(&pb::EventAttestationCosigned { id: *id, issuer: a.issuer, auditor: who });
                Ok(())
            }
            ReserveMsg::UpdateParams(authority, params) => {
                let gov = state.governance_authority(ctx.gas).await?;
                if *authority != gov {
                    return Err(ReserveError::NotGovernance { expected: gov.to_bech32(), signer: authority.to_bech32() }.into());
                }
                state.put_reserve_params(ctx.gas, params)?;
                ctx.emit_typed(&pb::EventParamsUpdated { authority: authority.to_bech32() });
                Ok(())
            }
        }
    }
}

//! The flag review workflow: MsgReviewFlag, MsgEscalateFlag, MsgCloseFlag.
//!
//! | From | Message | To |
//! |---|---|---|
//! | EMITTED | review APPROVED | RESOLVED_APPROVED |
//! | EMITTED | review BLOCKED | RESOLVED_BLOCKED (subject blacklisted, evidence `flag/<id>`); with `params.block_requires_officer`: PENDING_OFFICER, `proposed_decision` BLOCKED, nothing blacklisted |
//! | EMITTED | review ESCALATED, or escalate | PENDING_OFFICER |
//! | PENDING_OFFICER | close APPROVED / BLOCKED | RESOLVED_APPROVED / RESOLVED_BLOCKED |
//!
//! Anything else fails with its own code (7: not EMITTED, 8: not PENDING_OFFICER, 9: a close
//! that escalates) and changes nothing. Every move writes the flag (EventFlagEmitted), emits
//! EventFlagResolved or EventFlagEscalated and appends an audit row (`flag_review`,
//! `flag_escalate`, `flag_close`) carrying `flag_id` and `reviewer`.

use std::collections::BTreeMap;

use cnidarium::StateWrite;
use lantau_kyc::{KycRead, KycWrite};
use lantau_module_api::{ExecCtx, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1 as pb;

use crate::audit::{AuditEntry, AuditWrite};
use crate::error::ComplianceError;
use crate::flags::{FlagRead, FlagWrite};
use crate::msg::{Decide, Decision, EscalateFlag};
use crate::state::{binding_active, parent_level_satisfies, ComplianceRead};
use crate::{Flag, FlagStatus, SubRole};

/// The reason the identity registry records when a BLOCKED decision blacklists a subject.
pub const BLOCKED_REASON: &str = "flag_blocked";

/// Checks that `signer` holds an active binding of `role` whose parent still satisfies it
/// (a bound key acts for its parent: a parent that lost its licence, or was blacklisted,
/// delegates nothing).
async fn ensure_bound<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, signer: &Address, role: SubRole) -> Result<(), TxError> {
    let deny = |why: String| -> TxError {
        let msg = format!("{} {why}; {} requires an active {} binding", signer.to_bech32(), role_msgs(role), role.as_str_name());
        match role {
            SubRole::Officer => ComplianceError::NotOfficer(msg).into(),
            _ => ComplianceError::NotReviewer(msg).into(),
        }
    };
    let now = lantau_module_api::block_timestamp(ctx.block);
    let Some(b) = state.binding(ctx.gas, signer).await? else { return Err(deny("is not a bound sub-key".into())) };
    let bound_role = SubRole::try_from(b.role).unwrap_or(SubRole::Unspecified);
    if bound_role != role {
        return Err(deny(format!("is bound as {}", bound_role.as_str_name())));
    }
    if !binding_active(&b, &now) {
        return Err(deny(format!("was revoked by {}", b.parent)));
    }
    let parent = Address::from_bech32(&b.parent).map_err(|_| lantau_module_api::error::internal("corrupt binding parent"))?;
    let level = state.identity(ctx.gas, &parent).await?.map(|i| lantau_kyc::state::level_of(&i)).unwrap_or(lantau_kyc::Level::Unspecified);
    if !parent_level_satisfies(role, level) {
        return Err(deny(format!("acts for {} whose level {} no longer satisfies the role", b.parent, level.as_str_name())));
    }
    Ok(())
}

fn role_msgs(role: SubRole) -> &'static str {
    match role {
        SubRole::Officer => "MsgCloseFlag",
        _ => "MsgReviewFlag/MsgEscalateFlag",
    }
}

fn status_name(status: i32) -> String {
    FlagStatus::try_from(status).unwrap_or(FlagStatus::Unspecified).as_str_name().to_string()
}

/// A flag as loaded: decoded, and the stored bytes a write over it replaces.
struct Loaded {
    flag: Flag,
    stored: Vec<u8>,
}

/// The flag, which must be in `expected` (EMITTED for reviews and escalations,
/// PENDING_OFFICER for closes); otherwise its own code (6 unknown, 7, 8).
async fn load<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, id: u64, expected: FlagStatus) -> Result<Loaded, TxError> {
    let stored = state.flag_record(ctx.gas, id).await?.ok_or_else(|| ComplianceError::FlagNotFound(id.to_string()))?;
    let flag: Flag = lantau_module_api::store::decode(&stored, "flag")?;
    if flag.status != expected as i32 {
        let (id, status) = (flag.flag_id, status_name(flag.status));
        return Err(match expected {
            FlagStatus::PendingOfficer => ComplianceError::FlagNotPendingOfficer { id, status },
            _ => ComplianceError::FlagNotEmitted { id, status },
        }
        .into());
    }
    Ok(Loaded { flag, stored })
}

/// Writes the flag over `stored` (EventFlagEmitted), then the audit row of the move.
#[allow(clippy::too_many_arguments)]
async fn persist<S: StateWrite + Send + Sync>(
    state: &mut S,
    ctx: &mut ExecCtx<'_>,
    id: u64,
    stored: &[u8],
    flag: &Flag,
    tx_type: &str,
    signer: &Address,
    extra: &[(&str, String)],
) -> Result<(), TxError> {
    state.put_flag(ctx.gas, id, Some(stored), flag, &mut ctx.events).await?;
    let mut metadata = BTreeMap::new();
    metadata.insert("flag_id".to_string(), flag.flag_id.clone());
    metadata.insert("reviewer".to_string(), signer.to_bech32());
    metadata.insert("decorator".to_string(), flag.decorator.clone());
    metadata.insert("status".to_string(), status_name(flag.status));
    for (k, v) in extra {
        metadata.insert((*k).to_string(), v.clone());
    }
    state
        .append_audit(
            ctx.gas,
            ctx.block,
            AuditEntry {
                tx_type: tx_type.to_string(),
                subject: flag.subject.clone(),
                counterparty: flag.counterparty.clone(),
                amount: flag.amount.clone(),
                tx_hash: ctx.tx_hash.to_string(),
                metadata,
                ..Default::default()
            },
        )
        .await?;
    Ok(())
}

/// A move to PENDING_OFFICER (a review ESCALATED, or MsgEscalateFlag): the note travels to the
/// officer; EventFlagEscalated.
#[allow(clippy::too_many_arguments)]
async fn to_officer<S: StateWrite + Send + Sync>(
    state: &mut S,
    ctx: &mut ExecCtx<'_>,
    id: u64,
    loaded: Loaded,
    reviewer: &Address,
    note: &str,
    proposed: Option<Decision>,
    tx_type: &str,
    extra: &[(&str, String)],
) -> Result<(), TxError> {
    let Loaded { mut flag, stored } = loaded;
    flag.status = FlagStatus::PendingOfficer as i32;
    flag.reviewer = reviewer.to_bech32();
    flag.officer_note_hash = note.to_string();
    flag.proposed_decision = proposed.map(|d| d.as_str().to_string()).unwrap_or_default();
    flag.updated_at = Some(lantau_module_api::block_timestamp(ctx.block));
    persist(state, ctx, id, &stored, &flag, tx_type, reviewer, extra).await?;
    ctx.emit_typed(&pb::EventFlagEscalated {
        flag_id: flag.flag_id.clone(),
        reviewer: flag.reviewer.clone(),
        officer_note_hash: note.to_string(),
        proposed_decision: flag.proposed_decision.clone(),
    });
    Ok(())
}

/// A terminal decision (a review or a close, APPROVED or BLOCKED): BLOCKED blacklists the
/// subject (evidence `flag/<flag_id>`, idempotently); EventFlagResolved.
async fn resolve<S: StateWrite + Send + Sync>(
    state: &mut S,
    ctx: &mut ExecCtx<'_>,
    loaded: Loaded,
    m: &Decide,
    tx_type: &str,
    extra: &[(&str, String)],
) -> Result<(), TxError> {
    let Loaded { mut flag, stored } = loaded;
    let blocked = m.decision == Decision::Blocked;
    flag.status = if blocked { FlagStatus::ResolvedBlocked } else { FlagStatus::ResolvedApproved } as i32;
    flag.resolution = m.decision.as_str().to_string();
    flag.evidence_hash = m.evidence_hash.clone();
    flag.updated_at = Some(lantau_module_api::block_timestamp(ctx.block));
    if blocked {
        let subject = Address::from_bech32(&flag.subject).map_err(|_| lantau_module_api::error::internal("corrupt flag subject"))?;
        let evidence = format!("flag/{}", flag.flag_id);
        state.blacklist(ctx.gas, ctx.block, ctx.tx_hash, &subject, BLOCKED_REASON, &evidence, &mut ctx.events).await?;
    }
    persist(state, ctx, m.flag_id, &stored, &flag, tx_type, &m.signer, extra).await?;
    ctx.emit_typed(&pb::EventFlagResolved {
        flag_id: flag.flag_id.clone(),
        decision: m.decision.as_str().to_string(),
        resolver: m.signer.to_bech32(),
        evidence_hash: m.evidence_hash.clone(),
    });
    Ok(())
}

/// MsgReviewFlag: a reviewer's decision on an EMITTED flag.
pub async fn review<S: StateWrite + Send + Sync>(state: &mut S, ctx: &mut ExecCtx<'_>, m: &Decide) -> Result<(), TxError> {
    ensure_bound(state, ctx, &m.signer, SubRole::Reviewer).await?;
    let mut flag = load(state, ctx, m.flag_id, FlagStatus::Emitted).await?;
    flag.flag.reviewer = m.signer.to_bech32();
    let extra = [("decision", m.decision.as_str().to_string()), ("evidence_hash", m.evidence_hash.clone())];
    match m.decision {
        // The reviewer's evidence travels to the officer as the note.
        Decision::Escalated => to_officer(state, ctx, m.flag_id, flag, &m.signer, &m.evidence_hash, None, "flag_review", &extra).await,
        // Four eyes: a BLOCKED proposal waits for an officer, who alone blacklists.
        Decision::Blocked if state.compliance_params(ctx.gas).await?.block_requires_officer => {
            let extra = [extra[0].clone(), extra[1].clone(), ("escalated", "block_requires_officer".to_string())];
            to_officer(state, ctx, m.flag_id, flag, &m.signer, &m.evidence_hash, Some(Decision::Blocked), "flag_review", &extra).await
        }
        Decision::Approved | Decision::Blocked => resolve(state, ctx, flag, m, "flag_review", &extra).await,
    }
}

/// MsgEscalateFlag: a reviewer hands an EMITTED flag to an officer.
pub async fn escalate<S: StateWrite + Send + Sync>(state: &mut S, ctx: &mut ExecCtx<'_>, m: &EscalateFlag) -> Result<(), TxError> {
    ensure_bound(state, ctx, &m.reviewer, SubRole::Reviewer).await?;
    let flag = load(state, ctx, m.flag_id, FlagStatus::Emitted).await?;
    let extra = [("officer_note_hash", m.officer_note_hash.clone())];
    to_officer(state, ctx, m.flag_id, flag, &m.reviewer, &m.officer_note_hash, None, "flag_escalate", &extra).await
}

/// MsgCloseFlag: an officer's decision (APPROVED or BLOCKED; checked at decoding) on a
/// PENDING_OFFICER flag.
pub async fn close<S: StateWrite + Send + Sync>(state: &mut S, ctx: &mut ExecCtx<'_>, m: &Decide) -> Result<(), TxError> {
    ensure_bound(state, ctx, &m.signer, SubRole::Officer).await?;
    let mut flag = load(state, ctx, m.flag_id, FlagStatus::PendingOfficer).await?;
    if m.decision == Decision::Escalated {
        return Err(ComplianceError::InvalidDecision("an officer cannot escalate further".into()).into());
    }
    flag.flag.officer = m.signer.to_bech32();
    let extra = [("decision", m.decision.as_str().to_string()), ("evidence_hash", m.evidence_hash.clone()), ("role", "officer".to_string())];
    resolve(state, ctx, flag, m, "flag_close", &extra).await
}

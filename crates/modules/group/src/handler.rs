//! Group message handlers, and [`record_exec`], the end of a proposal's run.

use cnidarium::StateWrite;
use cosmos_sdk_proto::Any;
use lantau_audit::{AuditEntry, AuditWrite};
use lantau_module_api::{error::internal, Dispatch, ExecCtx, MsgHandler, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::group::v1 as pb;

use crate::error::GroupError;
use crate::msg::{Config, GroupMsg, MSG_UPDATE_GROUP};
use crate::state::{GroupRead, GroupWrite};
use crate::{group_address, state_key, ExecutorResult, GroupInfo, Proposal, ProposalStatus, Vote, VoteOption, MAX_RESULT_LOG};

fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

fn response<M: prost::Name>(m: &M) -> Any {
    Any { type_url: M::type_url(), value: m.encode_to_vec() }
}

/// The group at `address`, or code 2.
async fn group_at<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, address: &Address) -> Result<GroupInfo, TxError> {
    Ok(state.group(ctx.gas, address).await?.ok_or_else(|| GroupError::GroupNotFound(address.to_bech32()))?)
}

/// A member's weight, or code 3.
fn weight_of(g: &GroupInfo, who: &Address) -> Result<u64, GroupError> {
    let b = who.to_bech32();
    g.members.iter().find(|m| m.address == b).map(|m| m.weight).ok_or_else(|| GroupError::NotMember { address: b, group: g.address.clone() })
}

/// The proposal and its group, checked open: not executed, its group unchanged, not expired.
async fn open_proposal<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, id: u64) -> Result<(Proposal, GroupInfo, Address), TxError> {
    let p = state.proposal(ctx.gas, id).await?.ok_or(GroupError::ProposalNotFound(id))?;
    let addr = Address::from_bech32(&p.group_address).map_err(|e| internal(format!("proposal {id}: group: {e}")))?;
    let g = group_at(state, ctx, &addr).await?;
    if p.executor_result == ExecutorResult::Success as i32 {
        return Err(GroupError::AlreadyExecuted(id).into());
    }
    match crate::effective_status(&p, Some(g.version), ctx.block.time) {
        ProposalStatus::Aborted => return Err(GroupError::Aborted { id, group: g.address, now: g.version, then: p.group_version }.into()),
        ProposalStatus::Expired => {
            let at = p.expires_at.as_ref().and_then(lantau_proto::from_timestamp).map(rfc3339).unwrap_or_default();
            return Err(GroupError::Expired { id, at }.into());
        }
        _ => {}
    }
    Ok((p, g, addr))
}

/// The status a tally gives: ACCEPTED at the threshold, REJECTED when the weight not yet cast
/// can no longer reach it, SUBMITTED otherwise.
fn tally(p: &Proposal, g: &GroupInfo) -> ProposalStatus {
    if p.yes_weight >= g.threshold {
        ProposalStatus::Accepted
    } else if g.total_weight.saturating_sub(p.no_weight).saturating_sub(p.abstain_weight) < g.threshold {
        ProposalStatus::Rejected
    } else {
        ProposalStatus::Submitted
    }
}

async fn audit<S: StateWrite + Send + Sync>(
    state: &mut S,
    ctx: &ExecCtx<'_>,
    tx_type: &str,
    group: &str,
    counterparty: &Address,
    metadata: Vec<(&str, String)>,
) -> Result<(), TxError> {
    state
        .append_audit(
            ctx.gas,
            ctx.block,
            AuditEntry {
                tx_type: tx_type.into(),
                subject: group.to_string(),
                counterparty: counterparty.to_bech32(),
                tx_hash: ctx.tx_hash.to_string(),
                metadata: metadata.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                ..Default::default()
            },
        )
        .await?;
    Ok(())
}

fn config_metadata(g: &GroupInfo) -> Vec<(&'static str, String)> {
    vec![
        ("group_id", g.id.to_string()),
        ("members", g.members.iter().map(|m| format!("{}:{}", m.address, m.weight)).collect::<Vec<_>>().join(",")),
        ("threshold", g.threshold.to_string()),
        ("voting_period", g.voting_period.clone()),
        ("version", g.version.to_string()),
    ]
}

fn info(id: u64, address: &Address, c: &Config, version: u64, creator: String, created_at: Option<lantau_proto::Timestamp>) -> GroupInfo {
    GroupInfo {
        id,
        address: address.to_bech32(),
        members: c.pb_members(),
        threshold: c.threshold,
        voting_period: format!("{}s", c.voting_period_secs),
        metadata: c.metadata.clone(),
        version,
        total_weight: c.total_weight(),
        creator,
        created_at,
    }
}

impl MsgHandler for GroupMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let now = lantau_module_api::block_timestamp(ctx.block);
        match self {
            GroupMsg::Create(creator, c) => {
                let id = state.take_id(ctx.gas, state_key::NEXT_GROUP_ID).await?;
                let addr = group_address(id);
                let g = info(id, &addr, c, 1, creator.to_bech32(), Some(now));
                state.put_group(ctx.gas, &g, &addr, None)?;
                audit(state, ctx, "group_create", &g.address, creator, config_metadata(&g)).await?;
                ctx.emit_typed(&pb::EventCreateGroup { group_id: id, group_address: g.address.clone() });
                ctx.response = Some(response(&pb::MsgCreateGroupResponse { group_id: id, group_address: g.address }));
                Ok(())
            }
            GroupMsg::Update(addr, c) => {
                let old = group_at(state, ctx, addr).await?;
                let version = old.version.checked_add(1).ok_or_else(|| internal("group version overflow"))?;
                let g = info(old.id, addr, c, version, old.creator.clone(), old.created_at);
                state.put_group(ctx.gas, &g, addr, Some(&old))?;
                audit(state, ctx, "group_update", &g.address, addr, config_metadata(&g)).await?;
                ctx.emit_typed(&pb::EventUpdateGroup { group_address: g.address, version });
                Ok(())
            }
            GroupMsg::Submit(m) => {
                let g = group_at(state, ctx, &m.group).await?;
                let weight = weight_of(&g, &m.proposer)?;
                let check = ctx.inner_check.ok_or_else(|| internal("this context cannot read a proposal's messages"))?;
                let mut types = Vec::with_capacity(m.messages.len());
                for (i, any) in m.messages.iter().enumerate() {
                    let (signer, url) = check(any).map_err(|e| GroupError::InvalidMessages(format!("message {i}: {}", e.log)))?;
                    if signer != m.group {
                        return Err(GroupError::InvalidMessages(format!(
                            "message {i} ({url}) is signed by {}, not by the group {}",
                            signer.to_bech32(),
                            g.address
                        ))
                        .into());
                    }
                    if url.starts_with("/chain.group.v1.") && url != MSG_UPDATE_GROUP {
                        return Err(GroupError::InvalidMessages(format!("message {i}: {url} cannot run inside a proposal")).into());
                    }
                    types.push(url);
                }
                let period = lantau_module_api::duration_secs(&g.voting_period)
                    .ok_or_else(|| internal(format!("group {}: voting_period {:?}", g.id, g.voting_period)))?;
                let expires = ctx
                    .block
                    .time
                    .checked_add(time::Duration::seconds(i64::try_from(period).unwrap_or(i64::MAX)))
                    .ok_or_else(|| internal("proposal expiry out of range"))?;
                let id = state.take_id(ctx.gas, state_key::NEXT_PROPOSAL_ID).await?;
                let mut p = Proposal {
                    id,
                    group_address: g.address.clone(),
                    group_version: g.version,
                    proposer: m.proposer.to_bech32(),
                    messages: m.messages.clone(),
                    metadata: m.metadata.clone(),
                    submitted_at: Some(now),
                    submitted_height: i64::try_from(ctx.block.height).unwrap_or(i64::MAX),
                    expires_at: Some(lantau_proto::timestamp(expires)),
                    status: ProposalStatus::Submitted as i32,
                    executor_result: ExecutorResult::NotRun as i32,
                    yes_weight: weight,
                    no_weight: 0,
                    abstain_weight: 0,
                    result_log: String::new(),
                    executed_at: None,
                };
                let status = tally(&p, &g);
                p.status = status as i32;
                state.put_proposal(ctx.gas, &p, Some(&m.group))?;
                state.put_vote(
                    ctx.gas,
                    &Vote { proposal_id: id, voter: p.proposer.clone(), option: VoteOption::Yes as i32, submitted_at: Some(now) },
                    &m.proposer,
                )?;
                let metadata = vec![
                    ("proposal_id", id.to_string()),
                    ("messages", types.join(",")),
                    ("expires_at", rfc3339(expires)),
                    ("yes_weight", weight.to_string()),
                    ("threshold", g.threshold.to_string()),
                    ("status", status.as_str_name().to_string()),
                ];
                audit(state, ctx, "group_proposal", &g.address, &m.proposer, metadata).await?;
                ctx.emit_typed(&pb::EventSubmitProposal { proposal_id: id, group_address: g.address });
                ctx.response = Some(response(&pb::MsgSubmitProposalResponse { proposal_id: id }));
                if m.exec && status == ProposalStatus::Accepted {
                    ctx.dispatch = Some(Dispatch { signer: m.group, msgs: m.messages.clone(), proposal_id: id, executor: m.proposer });
                }
                Ok(())
            }
            GroupMsg::Vote(id, voter, option, exec) => {
                let (mut p, g, addr) = open_proposal(state, ctx, *id).await?;
                if p.status == ProposalStatus::Rejected as i32 {
                    return Err(GroupError::ProposalClosed { id: *id, why: "rejected".into() }.into());
                }
                let weight = weight_of(&g, voter)?;
                if state.vote(ctx.gas, *id, voter).await?.is_some() {
                    return Err(GroupError::AlreadyVoted { id: *id, voter: voter.to_bech32() }.into());
                }
                let add = |w: u64| w.checked_add(weight).ok_or_else(|| internal("tally overflow"));
                match option {
                    VoteOption::Yes => p.yes_weight = add(p.yes_weight)?,
                    VoteOption::No => p.no_weight = add(p.no_weight)?,
                    VoteOption::Abstain => p.abstain_weight = add(p.abstain_weight)?,
                    VoteOption::Unspecified => return Err(GroupError::InvalidVoteOption(*option as i32).into()),
                }
                let status = tally(&p, &g);
                p.status = status as i32;
                state.put_proposal(ctx.gas, &p, None)?;
                state.put_vote(ctx.gas, &Vote { proposal_id: *id, voter: voter.to_bech32(), option: *option as i32, submitted_at: Some(now) }, voter)?;
                let metadata = vec![
                    ("proposal_id", id.to_string()),
                    ("option", option.as_str_name().to_string()),
                    ("weight", weight.to_string()),
                    ("yes_weight", p.yes_weight.to_string()),
                    ("no_weight", p.no_weight.to_string()),
                    ("threshold", g.threshold.to_string()),
                    ("status", status.as_str_name().to_string()),
                ];
                audit(state, ctx, "group_vote", &g.address, voter, metadata).await?;
                ctx.emit_typed(&pb::EventVote { proposal_id: *id, voter: voter.to_bech32(), option: *option as i32, status: status as i32 });
                ctx.response = Some(response(&pb::MsgVoteResponse {}));
                if *exec && status == ProposalStatus::Accepted {
                    ctx.dispatch = Some(Dispatch { signer: addr, msgs: p.messages, proposal_id: *id, executor: *voter });
                }
                Ok(())
            }
            GroupMsg::Exec(id, executor) => {
                let (p, g, addr) = open_proposal(state, ctx, *id).await?;
                if p.status != ProposalStatus::Accepted as i32 {
                    return Err(GroupError::NotAccepted { id: *id, yes: p.yes_weight, threshold: g.threshold }.into());
                }
                ctx.dispatch = Some(Dispatch { signer: addr, msgs: p.messages, proposal_id: *id, executor: *executor });
                Ok(())
            }
        }
    }
}

/// Records the outcome of a proposal's run (the app calls it once the messages of `d` ran, or
/// failed and were dropped): the proposal's executor result, a `group_exec` audit row, an
/// `EventExec`, and `MsgExecResponse` when the message was a `MsgExec`.
pub async fn record_exec<S: StateWrite + Send + Sync>(state: &mut S, ctx: &mut ExecCtx<'_>, d: &Dispatch, outcome: Result<(), String>) -> Result<(), TxError> {
    let mut p = state.proposal(ctx.gas, d.proposal_id).await?.ok_or(GroupError::ProposalNotFound(d.proposal_id))?;
    let (result, log) = match outcome {
        Ok(()) => (ExecutorResult::Success, String::new()),
        Err(mut log) => {
            if log.len() > MAX_RESULT_LOG {
                let mut cut = MAX_RESULT_LOG;
                while !log.is_char_boundary(cut) {
                    cut = cut.saturating_sub(1);
                }
                log.truncate(cut);
            }
            (ExecutorResult::Failure, log)
        }
    };
    p.executor_result = result as i32;
    p.result_log = log.clone();
    p.executed_at = Some(lantau_module_api::block_timestamp(ctx.block));
    state.put_proposal(ctx.gas, &p, None)?;
    let metadata = vec![("proposal_id", d.proposal_id.to_string()), ("result", result.as_str_name().to_string()), ("log", log.clone())];
    audit(state, ctx, "group_exec", &p.group_address, &d.executor, metadata).await?;
    ctx.emit_typed(&pb::EventExec { proposal_id: d.proposal_id, result: result as i32, logs: log });
    if ctx.response.is_none() {
        ctx.response = Some(response(&pb::MsgExecResponse { result: result as i32 }));
    }
    Ok(())
}

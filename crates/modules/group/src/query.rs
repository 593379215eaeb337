//! Group queries, read from committed snapshots.

use cnidarium::StateRead;
use futures::StreamExt as _;
use lantau_module_api::{store, GasMeter, QueryError, TxError};
use lantau_primitives::Address;

use crate::state::GroupRead;
use crate::{state_key, GroupInfo, Proposal, ProposalStatus, Vote};

/// The most proposals one answer lists.
pub const MAX_PROPOSALS: usize = 100;

/// The id at the end of an index key (`…/<20 digits>`).
fn id_at_end(key: &str) -> Option<u64> {
    key.rsplit('/').next().and_then(|s| s.parse().ok())
}

/// A proposal as the state's time sees it: its status is the effective one (ABORTED,
/// EXPIRED derived at the state's block time).
async fn as_of<S: StateRead + Sync>(state: &S, p: Proposal) -> Result<Proposal, TxError> {
    let gas = GasMeter::infinite();
    let version = match Address::from_bech32(&p.group_address) {
        Ok(a) => state.group(&gas, &a).await?.map(|g| g.version),
        Err(_) => None,
    };
    Ok(seen_at(p, version, store::state_time(state).await?))
}

/// `p` with its effective status, given its group's version and the state's time.
fn seen_at(mut p: Proposal, group_version: Option<u64>, now: time::OffsetDateTime) -> Proposal {
    p.status = crate::effective_status(&p, group_version, now) as i32;
    p
}

/// The groups `member` belongs to, in id order.
pub async fn groups_by_member<S: StateRead + Sync>(state: &S, member: &Address) -> Result<Vec<GroupInfo>, TxError> {
    let gas = GasMeter::infinite();
    let mut out = Vec::new();
    for (k, _) in store::scan_prefix(state, &state_key::member_prefix(member)).await? {
        if let Some(g) = match id_at_end(&k) {
            Some(id) => state.group_by_id(&gas, id).await?,
            None => None,
        } {
            out.push(g);
        }
    }
    Ok(out)
}

/// A group's proposals, newest first, at most [`MAX_PROPOSALS`]; `pending_only`: SUBMITTED or
/// ACCEPTED ones not yet executed.
pub async fn proposals_by_group<S: StateRead + Sync>(state: &S, group: &Address, pending_only: bool) -> Result<Vec<Proposal>, TxError> {
    let gas = GasMeter::infinite();
    let prefix = state_key::by_group_prefix(group);
    let mut ids = Vec::new();
    let mut stream = std::pin::pin!(state.prefix_keys(&prefix));
    while let Some(k) = stream.next().await {
        let k = k.map_err(|e| store::read_failed(&prefix, e))?;
        if let Some(id) = id_at_end(&k) {
            ids.push(id);
        }
    }
    // One group, one time: read once for every proposal listed.
    let version = state.group(&gas, group).await?.map(|g| g.version);
    let now = store::state_time(state).await?;
    let mut out = Vec::new();
    for id in ids.into_iter().rev() {
        if out.len() >= MAX_PROPOSALS {
            break;
        }
        let Some(p) = state.proposal(&gas, id).await? else { continue };
        let p = seen_at(p, version, now);
        let open = (p.status == ProposalStatus::Submitted as i32 || p.status == ProposalStatus::Accepted as i32)
            && p.executor_result != crate::ExecutorResult::Success as i32;
        if !pending_only || open {
            out.push(p);
        }
    }
    Ok(out)
}

/// A proposal's votes, in voter order.
pub async fn votes<S: StateRead + Sync>(state: &S, proposal_id: u64) -> Result<Vec<Vote>, TxError> {
    let mut out = Vec::new();
    for (k, v) in store::scan_prefix(state, &state_key::vote_prefix(proposal_id)).await? {
        out.push(store::decode(&v, &k)?);
    }
    Ok(out)
}

/// `/chain.group.v1.Query/Group`.
pub const GROUP: &str = "/chain.group.v1.Query/Group";
/// `/chain.group.v1.Query/GroupsByMember`.
pub const GROUPS_BY_MEMBER: &str = "/chain.group.v1.Query/GroupsByMember";
/// `/chain.group.v1.Query/Proposal`.
pub const PROPOSAL: &str = "/chain.group.v1.Query/Proposal";
/// `/chain.group.v1.Query/ProposalsByGroup`.
pub const PROPOSALS_BY_GROUP: &str = "/chain.group.v1.Query/ProposalsByGroup";
/// `/chain.group.v1.Query/Votes`.
pub const VOTES: &str = "/chain.group.v1.Query/Votes";

/// Answers `chain.group.v1.Query` (protobuf in and out); `None` for another method.
pub async fn grpc<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
    use lantau_module_api::{decode_query, query_address};
    use lantau_proto::chain::group::v1 as pb;
    use prost::Message as _;
    let gas = GasMeter::infinite();
    let r = match method {
        GROUP => {
            async {
                let req: pb::QueryGroupRequest = decode_query(request)?;
                let addr = query_address("address", &req.address)?;
                match state.group(&gas, &addr).await? {
                    Some(g) => Ok(pb::QueryGroupResponse { group: Some(g) }.encode_to_vec()),
                    None => Err(QueryError::NotFound(format!("group {} not found", addr.to_bech32()))),
                }
            }
            .await
        }
        GROUPS_BY_MEMBER => {
            async {
                let req: pb::QueryGroupsByMemberRequest = decode_query(request)?;
                let addr = query_address("address", &req.address)?;
                Ok(pb::QueryGroupsByMemberResponse { groups: groups_by_member(state, &addr).await? }.encode_to_vec())
            }
            .await
        }
        PROPOSAL => {
            async {
                let req: pb::QueryProposalRequest = decode_query(request)?;
                match state.proposal(&gas, req.proposal_id).await? {
                    Some(p) => Ok(pb::QueryProposalResponse { proposal: Some(as_of(state, p).await?) }.encode_to_vec()),
                    None => Err(QueryError::NotFound(format!("proposal {} not found", req.proposal_id))),
                }
            }
            .await
        }
        PROPOSALS_BY_GROUP => {
            async {
                let req: pb::QueryProposalsByGroupRequest = decode_query(request)?;
                let addr = query_address("address", &req.address)?;
                Ok(pb::QueryProposalsByGroupResponse { proposals: proposals_by_group(state, &addr, req.pending_only).await? }.encode_to_vec())
            }
            .await
        }
        VOTES => {
            async {
                let req: pb::QueryVotesRequest = decode_query(request)?;
                if state.proposal(&gas, req.proposal_id).await?.is_none() {
                    return Err(QueryError::NotFound(format!("proposal {} not found", req.proposal_id)));
                }
                Ok(pb::QueryVotesResponse { votes: votes(state, req.proposal_id).await? }.encode_to_vec())
            }
            .await
        }
        _ => return None,
    };
    Some(r)
}

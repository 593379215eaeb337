//! Group messages, validated, and [`GroupMsg`], the module's typed message enum.

use cosmos_sdk_proto::Any;
use lantau_module_api::decode_any as decode;
use lantau_module_api::{parse_address, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::group::v1 as pb;

use crate::error::GroupError;
use crate::{MAX_MEMBERS, MAX_METADATA, MAX_PROPOSAL_MSGS, MAX_VOTING_PERIOD_SECS};

/// A group's configuration, validated (`MsgCreateGroup`, `MsgUpdateGroup`, genesis).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// (member, weight) in address order.
    pub members: Vec<(Address, u64)>,
    /// YES weight that accepts.
    pub threshold: u64,
    /// The voting period in seconds.
    pub voting_period_secs: u64,
    /// Free text.
    pub metadata: String,
}

impl Config {
    /// The sum of the weights.
    pub fn total_weight(&self) -> u64 {
        self.members.iter().fold(0u64, |t, (_, w)| t.saturating_add(*w))
    }

    /// The members as the schema writes them.
    pub fn pb_members(&self) -> Vec<pb::Member> {
        self.members.iter().map(|(a, w)| pb::Member { address: a.to_bech32(), weight: *w }).collect()
    }
}

/// Checks metadata's length.
pub fn check_metadata(m: &str) -> Result<(), GroupError> {
    if m.len() > MAX_METADATA {
        return Err(GroupError::MetadataTooLong { len: m.len(), max: MAX_METADATA });
    }
    Ok(())
}

/// Validates a configuration: 1 to [`MAX_MEMBERS`] members, each once with a weight of at
/// least 1; a threshold from 1 to the total weight; a voting period of whole seconds up to
/// [`MAX_VOTING_PERIOD_SECS`].
pub fn config(members: &[pb::Member], threshold: u64, voting_period: &str, metadata: &str) -> Result<Config, TxError> {
    if members.is_empty() || members.len() > MAX_MEMBERS {
        return Err(GroupError::InvalidMembers(format!("{} members: a group has 1 to {MAX_MEMBERS}", members.len())).into());
    }
    let mut out: Vec<(Address, u64)> = Vec::with_capacity(members.len());
    for m in members {
        let a = parse_address(&m.address, "member")?;
        if m.weight == 0 {
            return Err(GroupError::InvalidMembers(format!("{} has weight 0", m.address)).into());
        }
        out.push((a, m.weight));
    }
    out.sort_by_key(|x| x.0);
    if let Some(w) = out.windows(2).find(|w| matches!(w, [a, b] if a.0 == b.0)) {
        let dup = w.first().map(|(a, _)| a.to_bech32()).unwrap_or_default();
        return Err(GroupError::InvalidMembers(format!("{dup} is listed twice")).into());
    }
    let c = Config { members: out, threshold, voting_period_secs: 0, metadata: metadata.to_string() };
    let total = c.total_weight();
    if threshold == 0 || threshold > total {
        return Err(GroupError::InvalidThreshold(format!("{threshold}: from 1 to the total weight {total}")).into());
    }
    let secs = lantau_module_api::duration_secs(voting_period)
        .filter(|s| *s <= MAX_VOTING_PERIOD_SECS)
        .ok_or_else(|| GroupError::InvalidVotingPeriod(format!("{voting_period:?}: whole seconds from \"1s\" to \"{MAX_VOTING_PERIOD_SECS}s\"")))?;
    check_metadata(metadata)?;
    Ok(Config { voting_period_secs: secs, ..c })
}

/// `MsgSubmitProposal`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmitProposal {
    /// The group account.
    pub group: Address,
    /// The proposer (a member).
    pub proposer: Address,
    /// The messages, as sent.
    pub messages: Vec<Any>,
    /// Free text.
    pub metadata: String,
    /// Run at once if accepted.
    pub exec: bool,
}

/// Every group message.
#[derive(Debug, Clone, PartialEq)]
pub enum GroupMsg {
    /// `MsgCreateGroup`: (creator, config).
    Create(Address, Config),
    /// `MsgUpdateGroup`: (group, config).
    Update(Address, Config),
    /// `MsgSubmitProposal`.
    Submit(SubmitProposal),
    /// `MsgVote`: (proposal, voter, option, exec).
    Vote(u64, Address, pb::VoteOption, bool),
    /// `MsgExec`: (proposal, executor).
    Exec(u64, Address),
}

/// `/chain.group.v1.MsgCreateGroup`.
pub const MSG_CREATE_GROUP: &str = "/chain.group.v1.MsgCreateGroup";
/// `/chain.group.v1.MsgUpdateGroup`.
pub const MSG_UPDATE_GROUP: &str = "/chain.group.v1.MsgUpdateGroup";
/// `/chain.group.v1.MsgSubmitProposal`.
pub const MSG_SUBMIT_PROPOSAL: &str = "/chain.group.v1.MsgSubmitProposal";
/// `/chain.group.v1.MsgVote`.
pub const MSG_VOTE: &str = "/chain.group.v1.MsgVote";
/// `/chain.group.v1.MsgExec`.
pub const MSG_EXEC: &str = "/chain.group.v1.MsgExec";

impl GroupMsg {
    /// Decodes and validates; `None` when the type URL is not this module's.
    pub fn from_any(any: &Any) -> Option<Result<Self, TxError>> {
        Some(match any.type_url.as_str() {
            MSG_CREATE_GROUP => decode::<pb::MsgCreateGroup>(any)
                .and_then(|m| Ok(GroupMsg::Create(parse_address(&m.creator, "creator")?, config(&m.members, m.threshold, &m.voting_period, &m.metadata)?))),
            MSG_UPDATE_GROUP => decode::<pb::MsgUpdateGroup>(any).and_then(|m| {
                Ok(GroupMsg::Update(parse_address(&m.group_address, "group_address")?, config(&m.members, m.threshold, &m.voting_period, &m.metadata)?))
            }),
            MSG_SUBMIT_PROPOSAL => decode::<pb::MsgSubmitProposal>(any).and_then(|m| {
                if m.messages.is_empty() || m.messages.len() > MAX_PROPOSAL_MSGS {
                    return Err(GroupError::InvalidMessages(format!("{} messages: a proposal carries 1 to {MAX_PROPOSAL_MSGS}", m.messages.len())).into());
                }
                check_metadata(&m.metadata)?;
                Ok(GroupMsg::Submit(SubmitProposal {
                    group: parse_address(&m.group_address, "group_address")?,
                    proposer: parse_address(&m.proposer, "proposer")?,
                    messages: m.messages,
                    metadata: m.metadata,
                    exec: m.exec,
                }))
            }),
            MSG_VOTE => decode::<pb::MsgVote>(any).and_then(|m| {
                let option = match pb::VoteOption::try_from(m.option) {
                    Ok(o @ (pb::VoteOption::Yes | pb::VoteOption::No | pb::VoteOption::Abstain)) => o,
                    _ => return Err(GroupError::InvalidVoteOption(m.option).into()),
                };
                Ok(GroupMsg::Vote(m.proposal_id, parse_address(&m.voter, "voter")?, option, m.exec))
            }),
            MSG_EXEC => decode::<pb::MsgExec>(any).and_then(|m| Ok(GroupMsg::Exec(m.proposal_id, parse_address(&m.executor, "executor")?))),
            _ => return None,
        })
    }

    /// The type URL.
    pub fn type_url(&self) -> &'static str {
        match self {
            GroupMsg::Create(..) => MSG_CREATE_GROUP,
            GroupMsg::Update(..) => MSG_UPDATE_GROUP,
            GroupMsg::Submit(_) => MSG_SUBMIT_PROPOSAL,
            GroupMsg::Vote(..) => MSG_VOTE,
            GroupMsg::Exec(..) => MSG_EXEC,
        }
    }

    /// The address that must sign.
    pub fn signer(&self) -> Address {
        match self {
            GroupMsg::Create(a, _) | GroupMsg::Update(a, _) | GroupMsg::Vote(_, a, ..) | GroupMsg::Exec(_, a) => *a,
            GroupMsg::Submit(m) => m.proposer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Name;

    #[test]
    fn type_urls_match_the_schema() {
        assert_eq!(MSG_CREATE_GROUP, pb::MsgCreateGroup::type_url());
        assert_eq!(MSG_UPDATE_GROUP, pb::MsgUpdateGroup::type_url());
        assert_eq!(MSG_SUBMIT_PROPOSAL, pb::MsgSubmitProposal::type_url());
        assert_eq!(MSG_VOTE, pb::MsgVote::type_url());
        assert_eq!(MSG_EXEC, pb::MsgExec::type_url());
    }

    #[test]
    fn a_configuration_is_checked_whole() {
        let m = |b: u8, w: u64| pb::Member { address: Address([b; 20]).to_bech32(), weight: w };
        assert!(config(&[m(1, 1), m(2, 1), m(3, 1)], 2, "86400s", "").is_ok());
        assert_eq!(config(&[], 1, "1s", "").unwrap_err().code, 4);
        assert_eq!(config(&[m(1, 1), m(1, 2)], 1, "1s", "").unwrap_err().code, 4);
        assert_eq!(config(&[m(1, 0)], 1, "1s", "").unwrap_err().code, 4);
        assert_eq!(config(&[m(1, 1), m(2, 1)], 3, "1s", "").unwrap_err().code, 5);
        assert_eq!(config(&[m(1, 1)], 0, "1s", "").unwrap_err().code, 5);
        assert_eq!(config(&[m(1, 1)], 1, "1h", "").unwrap_err().code, 6);
        assert_eq!(config(&[m(1, 1)], 1, "0s", "").unwrap_err().code, 6);
        // Members come out in address order.
        let c = config(&[m(3, 1), m(1, 2)], 1, "1s", "").unwrap();
        assert_eq!(c.members.first().map(|x| x.0), Some(Address([1; 20])));
    }
}

//! Group handler errors (codespace `group`), listed in `docs/modules/group.md`.

use lantau_module_api::{ErrorCode, TxError};

/// A group handler failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    /// 2: no group at this address.
    #[error("group {0} not found")]
    GroupNotFound(String),
    /// 3: the signer is not a member of the group.
    #[error("{address} is not a member of group {group}")]
    NotMember {
        /// Who signed.
        address: String,
        /// The group.
        group: String,
    },
    /// 4: the member list is empty, too long, lists an address twice or gives a zero weight.
    #[error("invalid members: {0}")]
    InvalidMembers(String),
    /// 5: the threshold is zero or above the total weight.
    #[error("invalid threshold: {0}")]
    InvalidThreshold(String),
    /// 6: the voting period is not whole seconds within the bounds.
    #[error("invalid voting_period: {0}")]
    InvalidVotingPeriod(String),
    /// 7: no proposal with this id.
    #[error("proposal {0} not found")]
    ProposalNotFound(u64),
    /// 8: a proposal's messages are missing, too many, undecodable, not signed by the group
    /// or group messages that would nest.
    #[error("invalid proposal messages: {0}")]
    InvalidMessages(String),
    /// 9: the member voted on this proposal already.
    #[error("{voter} already voted on proposal {id}")]
    AlreadyVoted {
        /// The proposal.
        id: u64,
        /// The member.
        voter: String,
    },
    /// 10: the proposal's voting period is over.
    #[error("proposal {id} expired at {at}")]
    Expired {
        /// The proposal.
        id: u64,
        /// When (RFC 3339).
        at: String,
    },
    /// 11: the group changed after the proposal was made.
    #[error("proposal {id} was aborted: group {group} changed (version {now}, the proposal was made at version {then})")]
    Aborted {
        /// The proposal.
        id: u64,
        /// The group.
        group: String,
        /// The group's version now.
        now: u64,
        /// At submission.
        then: u64,
    },
    /// 12: the proposal takes no more votes (rejected or executed).
    #[error("proposal {id} is closed: {why}")]
    ProposalClosed {
        /// The proposal.
        id: u64,
        /// Its status.
        why: String,
    },
    /// 13: the proposal cannot run: its YES weight is below the threshold.
    #[error("proposal {id} is not accepted: YES weight {yes} of threshold {threshold}")]
    NotAccepted {
        /// The proposal.
        id: u64,
        /// YES weight so far.
        yes: u64,
        /// The group's threshold.
        threshold: u64,
    },
    /// 14: the vote option is not YES, NO or ABSTAIN.
    #[error("invalid vote option {0}")]
    InvalidVoteOption(i32),
    /// 15: metadata longer than its bound.
    #[error("metadata is {len} bytes, more than {max}")]
    MetadataTooLong {
        /// Its length.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// 16: the proposal was executed already.
    #[error("proposal {0} was executed already")]
    AlreadyExecuted(u64),
}

impl ErrorCode for GroupError {
    fn codespace(&self) -> &'static str {
        "group"
    }
    fn code(&self) -> u32 {
        match self {
            GroupError::GroupNotFound(_) => 2,
            GroupError::NotMember { .. } => 3,
            GroupError::InvalidMembers(_) => 4,
            GroupError::InvalidThreshold(_) => 5,
            GroupError::InvalidVotingPeriod(_) => 6,
            GroupError::ProposalNotFound(_) => 7,
            GroupError::InvalidMessages(_) => 8,
            GroupError::AlreadyVoted { .. } => 9,
            GroupError::Expired { .. } => 10,
            GroupError::Aborted { .. } => 11,
            GroupError::ProposalClosed { .. } => 12,
            GroupError::NotAccepted { .. } => 13,
            GroupError::InvalidVoteOption(_) => 14,
            GroupError::MetadataTooLong { .. } => 15,
            GroupError::AlreadyExecuted(_) => 16,
        }
    }
}

impl From<GroupError> for TxError {
    fn from(e: GroupError) -> Self {
        TxError::from_code(&e)
    }
}

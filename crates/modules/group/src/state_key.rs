//! Key layout of the group module. Treated as a public API.

use lantau_primitives::Address;

/// `group/next_group_id` → u64 big-endian: the id the next group gets (from 1).
pub const NEXT_GROUP_ID: &str = "group/next_group_id";

/// `group/next_proposal_id` → u64 big-endian: the id the next proposal gets (from 1).
pub const NEXT_PROPOSAL_ID: &str = "group/next_proposal_id";

/// `group/info/<id as 20-digit decimal>` → `GroupInfo` (protobuf).
pub fn group(id: u64) -> String {
    format!("group/info/{id:020}")
}

/// `group/addr/<lower-hex group address>` → u64 big-endian: the group's id.
pub fn address(group: &Address) -> String {
    group.key_under("group/addr/")
}

/// `group/member/<lower-hex member>/<group id, 20 digits>` → empty: the groups an address is
/// a member of.
pub fn member(member: &Address, group_id: u64) -> String {
    format!("{}{group_id:020}", member_prefix(member))
}

/// The prefix of an address's memberships.
pub fn member_prefix(member: &Address) -> String {
    {
        let mut k = member.key_under("group/member/");
        k.push('/');
        k
    }
}

/// `group/proposal/<id, 20 digits>` → `Proposal` (protobuf).
pub fn proposal(id: u64) -> String {
    format!("group/proposal/{id:020}")
}

/// `group/by_group/<lower-hex group>/<proposal id, 20 digits>` → empty: a group's proposals.
pub fn by_group(group: &Address, proposal_id: u64) -> String {
    format!("{}{proposal_id:020}", by_group_prefix(group))
}

/// The prefix of a group's proposals.
pub fn by_group_prefix(group: &Address) -> String {
    {
        let mut k = group.key_under("group/by_group/");
        k.push('/');
        k
    }
}

/// `group/vote/<proposal id, 20 digits>/<lower-hex voter>` → `Vote` (protobuf).
pub fn vote(proposal_id: u64, voter: &Address) -> String {
    format!("{}{}", vote_prefix(proposal_id), voter.to_key_hex())
}

/// The prefix of a proposal's votes.
pub fn vote_prefix(proposal_id: u64) -> String {
    format!("group/vote/{proposal_id:020}/")
}

/// Prefix of every group record.
pub const GROUP_PREFIX: &str = "group/info/";

//! `lantaud tx group …` and `lantaud query group …`: group accounts (M-of-N control).
//!
//! A proposal's messages come from a JSON file: an array of messages, or a transaction file
//! (`--generate-only`'s JSON, whose `body.messages` are taken). Each message is
//! `{"@type": <type URL>, <its fields as the node's JSON writes them>}` for the chain's own
//! messages and the bank's, or `{"@type", "value": <base64 protobuf>}` for any message.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Subcommand;
use cosmos_sdk_proto::Any;
use lantau_client::to_any;
use lantau_proto::chain::group::v1 as gpb;
use serde_json::Value;

use super::{resolve_address, send_tx, NodeArgs, Output, TxArgs};

/// Group transactions.
#[derive(Debug, Subcommand)]
pub(super) enum GroupTx {
    /// Create a group account (the signer pays; it has no power over the group unless a member).
    Create {
        /// Key name of the creator.
        from: String,
        /// A member, `ADDRESS` (weight 1) or `ADDRESS:WEIGHT`; addresses may be key names.
        #[arg(long = "member", required = true)]
        members: Vec<String>,
        /// The YES weight that accepts a proposal.
        #[arg(long)]
        threshold: u64,
        /// How long a proposal stays open, e.g. 86400s.
        #[arg(long, default_value = "86400s")]
        voting_period: String,
        /// Free text.
        #[arg(long, default_value = "")]
        metadata: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Propose messages for the group to run (the proposal is the proposer's YES).
    Propose {
        /// Key name of the proposer (a member).
        from: String,
        /// The group account's address.
        group: String,
        /// JSON file of the messages (see `lantaud tx group --help`).
        file: PathBuf,
        /// Run at once if the proposer's own vote reaches the threshold.
        #[arg(long)]
        exec: bool,
        /// Free text.
        #[arg(long, default_value = "")]
        metadata: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Vote on a proposal: yes, no or abstain.
    Vote {
        /// Key name of the voter (a member).
        from: String,
        /// Proposal id.
        id: u64,
        /// yes, no or abstain.
        option: String,
        /// Run the proposal in the same transaction if this vote accepts it.
        #[arg(long)]
        exec: bool,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Run an accepted proposal (anyone may).
    Exec {
        /// Key name of the executor.
        from: String,
        /// Proposal id.
        id: u64,
        #[command(flatten)]
        tx: TxArgs,
    },
}

/// Group queries.
#[derive(Debug, Subcommand)]
pub(super) enum GroupQuery {
    /// A group account.
    Info {
        /// The group's address.
        address: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The groups an address (or key name) is a member of.
    ByMember {
        /// Address or key name.
        address: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// A proposal.
    Proposal {
        /// Proposal id.
        id: u64,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// A group's proposals, newest first.
    Proposals {
        /// The group's address.
        address: String,
        /// Only the open ones.
        #[arg(long)]
        pending: bool,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The votes on a proposal.
    Votes {
        /// Proposal id.
        id: u64,
        #[command(flatten)]
        node: NodeArgs,
    },
}

/// The REST path a group query reads.
pub(super) fn query_path(home: &std::path::Path, q: GroupQuery) -> anyhow::Result<(NodeArgs, String)> {
    Ok(match q {
        GroupQuery::Info { address, node } => (node, format!("/chain/group/v1/groups/{}", resolve_address(home, &address)?.to_bech32())),
        GroupQuery::ByMember { address, node } => (node, format!("/chain/group/v1/groups_by_member/{}", resolve_address(home, &address)?.to_bech32())),
        GroupQuery::Proposal { id, node } => (node, format!("/chain/group/v1/proposals/{id}")),
        GroupQuery::Proposals { address, pending, node } => {
            let q = if pending { "?pending_only=true" } else { "" };
            (node, format!("/chain/group/v1/proposals_by_group/{}{q}", resolve_address(home, &address)?.to_bech32()))
        }
        GroupQuery::Votes { id, node } => (node, format!("/chain/group/v1/proposals/{id}/votes")),
    })
}

/// A member argument: `ADDRESS` or `ADDRESS:WEIGHT`.
fn member(home: &std::path::Path, s: &str) -> anyhow::Result<gpb::Member> {
    let (who, weight) = match s.rsplit_once(':') {
        Some((a, w)) => (a, w.parse().with_context(|| format!("member {s:?}: the weight must be a whole number"))?),
        None => (s, 1),
    };
    Ok(gpb::Member { address: resolve_address(home, who)?.to_bech32(), weight })
}

/// The messages of a proposal file: an array, `{"messages": […]}`, or a transaction's JSON.
fn messages(file: &std::path::Path) -> anyhow::Result<Vec<Any>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let v: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", file.display()))?;
    let list = match &v {
        Value::Array(a) => a.clone(),
        _ => v
            .pointer("/body/messages")
            .or_else(|| v.get("messages"))
            .and_then(Value::as_array)
            .cloned()
            .context("no messages: an array, {\"messages\": […]} or a transaction file")?,
    };
    list.iter().enumerate().map(|(i, m)| super::txfile::any_from_json(m).with_context(|| format!("message {i}"))).collect()
}

pub(super) async fn group_tx(home: &std::path::Path, out: Output, t: GroupTx) -> anyhow::Result<()> {
    let (key, tx, msg) = match t {
        GroupTx::Create { from, members, threshold, voting_period, metadata, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let members = members.iter().map(|m| member(home, m)).collect::<anyhow::Result<Vec<_>>>()?;
            (key.clone(), tx, to_any(&gpb::MsgCreateGroup { creator: key.address().to_bech32(), members, threshold, voting_period, metadata }))
        }
        GroupTx::Propose { from, group, file, exec, metadata, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = gpb::MsgSubmitProposal {
                group_address: resolve_address(home, &group)?.to_bech32(),
                proposer: key.address().to_bech32(),
                messages: messages(&file)?,
                metadata,
                exec,
            };
            (key, tx, to_any(&m))
        }
        GroupTx::Vote { from, id, option, exec, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let option = gpb::VoteOption::from_str_name(&super::registry::enum_name(&option, "VOTE_OPTION_"))
                .filter(|o| *o != gpb::VoteOption::Unspecified)
                .with_context(|| format!("unknown vote option {option:?}: yes, no or abstain"))?;
            (key.clone(), tx, to_any(&gpb::MsgVote { proposal_id: id, voter: key.address().to_bech32(), option: option as i32, exec }))
        }
        GroupTx::Exec { from, id, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            (key.clone(), tx, to_any(&gpb::MsgExec { proposal_id: id, executor: key.address().to_bech32() }))
        }
    };
    send_tx(out, &tx, &key, vec![msg]).await
}

//! `lantaud tx compliance ...`: the authority's messages (params, sanctions, rules), the flag
//! review workflow (review, escalate, close) and delegation (bind, revoke, agent policy); and
//! the reviewer-facing queries: the flag queue as a worklist, sub-role bindings, a sub-key's
//! parent (the client's fail-closed rule) and an agent's remaining capacity.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use lantau_client::to_any;
use lantau_primitives::Coin;
use lantau_proto::chain::compliance::v1 as cpb;
use sha2::Digest as _;

use super::{resolve_address, send_tx, Output, TxArgs};

/// A hash given directly, or computed (SHA-256, lower-case hex) from a file kept off chain.
#[derive(Debug, Args, Clone)]
pub(super) struct HashArgs {
    /// The hash of the evidence or note, as recorded on chain (e.g. a hex SHA-256).
    #[arg(long = "hash", conflicts_with = "file")]
    hash: Option<String>,
    /// A file (kept off chain) whose SHA-256 is recorded instead.
    #[arg(long)]
    file: Option<PathBuf>,
}

impl HashArgs {
    fn value(&self) -> anyhow::Result<String> {
        match (&self.hash, &self.file) {
            (Some(h), _) => Ok(h.clone()),
            (None, Some(f)) => {
                let bytes = std::fs::read(f).with_context(|| format!("reading {}", f.display()))?;
                Ok(hex::encode(sha2::Sha256::digest(&bytes)))
            }
            (None, None) => Ok(String::new()),
        }
    }
}

/// An agent's envelope on the command line.
#[derive(Debug, Args, Clone)]
pub(super) struct EnvelopeArgs {
    /// Most the agent may spend in a 24-hour window, e.g. `500000hkd.demo`.
    #[arg(long)]
    daily_cap: Option<String>,
    /// Most one transfer may move, same denom, at most the daily cap.
    #[arg(long)]
    per_tx_cap: Option<String>,
}

impl EnvelopeArgs {
    fn envelope(&self) -> anyhow::Result<Option<cpb::PolicyEnvelope>> {
        match (&self.daily_cap, &self.per_tx_cap) {
            (None, None) => Ok(None),
            (Some(d), Some(p)) => Ok(Some(cpb::PolicyEnvelope { daily_cap: Some(coin(d)?), per_tx_cap: Some(coin(p)?) })),
            _ => anyhow::bail!("give both --daily-cap and --per-tx-cap"),
        }
    }
}

fn coin(s: &str) -> anyhow::Result<cosmos_sdk_proto::cosmos::base::v1beta1::Coin> {
    Ok(lantau_client::pb_coin(&Coin::parse(s).with_context(|| format!("{s:?} is not a coin such as 500000hkd.demo"))?))
}

fn parse_role(s: &str) -> anyhow::Result<cpb::SubRole> {
    let upper = s.to_ascii_uppercase();
    let name = if upper.starts_with("SUB_ROLE_") { upper } else { format!("SUB_ROLE_{upper}") };
    cpb::SubRole::from_str_name(&name)
        .filter(|r| *r != cpb::SubRole::Unspecified)
        .with_context(|| format!("unknown role {s:?}: reviewer, officer or agent"))
}

/// Compliance transactions.
#[derive(Debug, Subcommand)]
pub(super) enum ComplianceTx {
    /// Replace the compliance params (authority and rules) from a JSON file (signed by
    /// governance).
    UpdateParams {
        /// Key name of the governance authority.
        from: String,
        /// JSON file.
        file: PathBuf,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Push the sanctions list (compliance authority): addresses are blacklisted (additive),
    /// the VASP list replaces the current one.
    UpdateSanctions {
        /// Key name of the compliance authority.
        from: String,
        /// An address (or key name) to blacklist; repeat for several.
        #[arg(long = "address")]
        addresses: Vec<String>,
        /// A sanctioned VASP identifier; repeat for several. The set becomes exactly these.
        #[arg(long = "vasp")]
        vasps: Vec<String>,
        /// Reason (default `sanctions_list_push`).
        #[arg(long, default_value = "")]
        reason: String,
        /// The source document.
        #[arg(long, default_value = "")]
        evidence_ref: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Replace the decorator rules (compliance authority); all three values.
    UpdateRule {
        /// Key name of the compliance authority.
        from: String,
        /// Full Travel Rule threshold, in stablecoin base units.
        #[arg(long)]
        threshold: u64,
        /// Velocity window, seconds.
        #[arg(long)]
        window: u64,
        /// Transfers inside the window that raise a velocity flag.
        #[arg(long)]
        limit: u64,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Decide on an EMITTED flag (reviewer key): approved, blocked (blacklists the subject) or
    /// escalated (to an officer).
    ReviewFlag {
        /// Key name of the reviewer sub-key.
        from: String,
        /// The flag id.
        flag_id: String,
        /// approved, blocked or escalated.
        decision: String,
        #[command(flatten)]
        evidence: HashArgs,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Hand an EMITTED flag to an officer (reviewer key), with the hash of a note.
    EscalateFlag {
        /// Key name of the reviewer sub-key.
        from: String,
        /// The flag id.
        flag_id: String,
        #[command(flatten)]
        note: HashArgs,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Close a PENDING_OFFICER flag (officer key): approved or blocked.
    CloseFlag {
        /// Key name of the officer sub-key.
        from: String,
        /// The flag id.
        flag_id: String,
        /// approved or blocked.
        decision: String,
        #[command(flatten)]
        evidence: HashArgs,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Delegate a role to a sub-key (signed by the parent). Binding again under the same parent
    /// updates it (and re-activates a revoked binding).
    BindSubRole {
        /// Key name of the parent.
        from: String,
        /// The sub-key's address (or key name).
        sub: String,
        /// reviewer, officer or agent.
        role: String,
        /// A label for the binding.
        #[arg(long, default_value = "")]
        label: String,
        #[command(flatten)]
        envelope: EnvelopeArgs,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Revoke a sub-key (signed by its parent); effective from the next block.
    RevokeSubRole {
        /// Key name of the parent.
        from: String,
        /// The sub-key's address (or key name).
        sub: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Replace an active agent's spending envelope (signed by its parent).
    BindAgentPolicy {
        /// Key name of the parent.
        from: String,
        /// The agent's address (or key name).
        sub: String,
        #[command(flatten)]
        envelope: EnvelopeArgs,
        #[command(flatten)]
        tx: TxArgs,
    },
}

/// Builds, signs, broadcasts and confirms a compliance transaction.
pub(super) async fn compliance_tx(home: &Path, out: Output, t: ComplianceTx) -> anyhow::Result<()> {
    let (from, tx) = match &t {
        ComplianceTx::UpdateParams { from, tx, .. }
        | ComplianceTx::UpdateSanctions { from, tx, .. }
        | ComplianceTx::UpdateRule { from, tx, .. }
        | ComplianceTx::ReviewFlag { from, tx, .. }
        | ComplianceTx::EscalateFlag { from, tx, .. }
        | ComplianceTx::CloseFlag { from, tx, .. }
        | ComplianceTx::BindSubRole { from, tx, .. }
        | ComplianceTx::RevokeSubRole { from, tx, .. }
        | ComplianceTx::BindAgentPolicy { from, tx, .. } => (from.clone(), tx.clone()),
    };
    let key = tx.kr.open(home)?.secret(&from)?;
    let me = key.address().to_bech32();
    let msg = match t {
        ComplianceTx::UpdateParams { file, .. } => {
            let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let params = serde_json::from_slice(&bytes).with_context(|| format!("parsing {}", file.display()))?;
            to_any(&cpb::MsgUpdateParams { authority: me, params: Some(params) })
        }
        ComplianceTx::UpdateSanctions { addresses, vasps, reason, evidence_ref, .. } => {
            let blocked_addresses = addresses.iter().map(|a| resolve_address(home, a).map(|a| a.to_bech32())).collect::<Result<_, _>>()?;
            to_any(&cpb::MsgUpdateSanctionsList { authority: me, blocked_addresses, blocked_vasps: vasps, reason, evidence_ref })
        }
        ComplianceTx::UpdateRule { threshold, window, limit, .. } => to_any(&cpb::MsgUpdateRule {
            authority: me,
            rules: Some(cpb::Rules { travel_rule_full_threshold: threshold, velocity_window_seconds: window, velocity_tx_limit: limit }),
        }),
        ComplianceTx::ReviewFlag { flag_id, decision, evidence, .. } => to_any(&cpb::MsgReviewFlag {
            reviewer: me,
            flag_id,
            decision: decision.to_ascii_uppercase(),
            reviewer_evidence_hash: evidence.value()?,
        }),
        ComplianceTx::EscalateFlag { flag_id, note, .. } => {
            to_any(&cpb::MsgEscalateFlag { reviewer: me, flag_id, officer_note_hash: note.value()? })
        }
        ComplianceTx::CloseFlag { flag_id, decision, evidence, .. } => to_any(&cpb::MsgCloseFlag {
            officer: me,
            flag_id,
            decision: decision.to_ascii_uppercase(),
            officer_evidence_hash: evidence.value()?,
        }),
        ComplianceTx::BindSubRole { sub, role, label, envelope, .. } => to_any(&cpb::MsgBindSubRole {
            parent: me,
            sub_addr: resolve_address(home, &sub)?.to_bech32(),
            role: parse_role(&role)? as i32,
            label,
            policy_envelope: envelope.envelope()?,
        }),
        ComplianceTx::RevokeSubRole { sub, .. } => {
            to_any(&cpb::MsgRevokeSubRole { parent: me, sub_addr: resolve_address(home, &sub)?.to_bech32() })
        }
        ComplianceTx::BindAgentPolicy { sub, envelope, .. } => {
            let e = envelope.envelope()?.context("give --daily-cap and --per-tx-cap")?;
            to_any(&cpb::MsgBindAgentPolicy {
                parent: me,
                sub_addr: resolve_address(home, &sub)?.to_bech32(),
                daily_cap: e.daily_cap,
                per_tx_cap: e.per_tx_cap,
            })
        }
    };
    send_tx(out, &tx, &key, vec![msg]).await
}

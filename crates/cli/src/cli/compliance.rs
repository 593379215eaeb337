//! `lantaud tx compliance ...`: the authority's messages (params, sanctions, rules), the flag
//! review workflow (review, escalate, close) and delegation (bind, revoke, agent policy); and
//! the reviewer-facing queries: the flag queue as a worklist, sub-role bindings, a sub-key's
//! parent (the client's fail-closed rule) and an agent's remaining capacity.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use lantau_client::{remaining_capacity, to_any, ParentAnswer, RestClient};
use lantau_proto::chain::compliance::v1 as cpb;
use serde_json::{json, Value};
use sha2::Digest as _;

use super::registry::{enum_name, ReasonArgs};
use super::{print, resolve_address, send_tx, Output, TxArgs};

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
                Ok(const_hex::encode(sha2::Sha256::digest(&bytes)))
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
    Ok(lantau_client::pb_coin(&super::amount::parse_coin(s).with_context(|| format!("{s:?} is not a coin such as 5000.00hkd.demo"))?))
}

fn parse_role(s: &str) -> anyhow::Result<cpb::SubRole> {
    cpb::SubRole::from_str_name(&enum_name(s, "SUB_ROLE_"))
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
        /// `--reason` (default `sanctions_list_push`) and `--evidence-ref`.
        #[command(flatten)]
        why: ReasonArgs,
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
        ComplianceTx::UpdateSanctions { addresses, vasps, why: ReasonArgs { reason, evidence_ref }, .. } => {
            let blocked_addresses = addresses.iter().map(|a| resolve_address(home, a).map(|a| a.to_bech32())).collect::<Result<_, _>>()?;
            to_any(&cpb::MsgUpdateSanctionsList { authority: me, blocked_addresses, blocked_vasps: vasps, reason, evidence_ref })
        }
        ComplianceTx::UpdateRule { threshold, window, limit, .. } => to_any(&cpb::MsgUpdateRule {
            authority: me,
            rules: Some(cpb::Rules { travel_rule_full_threshold: threshold, velocity_window_seconds: window, velocity_tx_limit: limit }),
        }),
        ComplianceTx::ReviewFlag { flag_id, decision, evidence, .. } => {
            to_any(&cpb::MsgReviewFlag { reviewer: me, flag_id, decision: decision.to_ascii_uppercase(), reviewer_evidence_hash: evidence.value()? })
        }
        ComplianceTx::EscalateFlag { flag_id, note, .. } => to_any(&cpb::MsgEscalateFlag { reviewer: me, flag_id, officer_note_hash: note.value()? }),
        ComplianceTx::CloseFlag { flag_id, decision, evidence, .. } => {
            to_any(&cpb::MsgCloseFlag { officer: me, flag_id, decision: decision.to_ascii_uppercase(), officer_evidence_hash: evidence.value()? })
        }
        ComplianceTx::BindSubRole { sub, role, label, envelope, .. } => to_any(&cpb::MsgBindSubRole {
            parent: me,
            sub_addr: resolve_address(home, &sub)?.to_bech32(),
            role: parse_role(&role)? as i32,
            label,
            policy_envelope: envelope.envelope()?,
        }),
        ComplianceTx::RevokeSubRole { sub, .. } => to_any(&cpb::MsgRevokeSubRole { parent: me, sub_addr: resolve_address(home, &sub)?.to_bech32() }),
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

// === queries a reviewer works from ===

/// `query compliance sub-role-parent`: the client's fail-closed rule. A primary key is proved
/// only by the handler's exact 404; anything else that is not a binding is unknown, and the
/// command fails (non-zero exit) so that a script fails closed too.
pub(super) async fn sub_role_parent(home: &Path, out: Output, address: &str, node: &str) -> anyhow::Result<()> {
    let addr = resolve_address(home, address)?.to_bech32();
    let answer = RestClient::new(node).sub_role_parent(&addr).await;
    let (json, text) = match &answer {
        ParentAnswer::PrimaryKey => (json!({"address": addr, "answer": "primary_key"}), format!("{addr} is a primary key: no sub-role binding")),
        ParentAnswer::SubKey { parent, binding, active } => {
            let state = if *active { "active".to_string() } else { format!("revoked at {}", binding.revoked_at.to_rfc3339().unwrap_or_default()) };
            (
                json!({
                    "address": addr,
                    "answer": "sub_key",
                    "parent": parent.to_bech32(),
                    "role": binding.role.as_str_name(),
                    "label": binding.label,
                    "active": active,
                }),
                format!("{addr} is a sub-key of {parent}: {} {:?}, {state}", binding.role.as_str_name(), binding.label),
            )
        }
        ParentAnswer::Unknown(why) => anyhow::bail!("cannot tell whether {addr} is a primary key ({why}); treat it as unknown"),
    };
    print(out, json, || text);
    Ok(())
}

/// `query compliance agent-policy`: the policy and window as stored, plus the remaining
/// capacity computed as the spec's rule 9 says (now = this machine's clock).
pub(super) async fn agent_policy(home: &Path, out: Output, parent: &str, sub: &str, node: &str) -> anyhow::Result<()> {
    let (parent, sub) = (resolve_address(home, parent)?, resolve_address(home, sub)?);
    let client = RestClient::new(node);
    let Some((policy, window)) = client.agent_policy(&parent, &sub).await? else {
        anyhow::bail!("no agent policy for {sub} under {parent}");
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let c = remaining_capacity(&policy, &window, now);
    let mut v = client.query(&format!("/chain/compliance/v1/agent_policy/{}/{}", parent.to_bech32(), sub.to_bech32())).await?;
    v["remaining"] = json!({
        "denom": c.denom,
        "daily_remaining": c.daily_remaining.to_string(),
        "per_tx_max": c.per_tx_max.to_string(),
        "window_reset": c.window_reset,
        "window_ends_at": c.window_ends_at.and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok()).map(rfc3339),
        "revoked": c.revoked,
    });
    print(out, v, || {
        let mut s = format!(
            "agent {sub} of {parent}\n  daily cap     {}\n  per-tx cap    {}\n  spent         {} since {}{}\n",
            policy.daily_cap,
            policy.per_tx_cap,
            window.spent_last_24h,
            window.window_start.to_rfc3339().unwrap_or_default(),
            if c.window_reset { " (window elapsed: the full daily cap is available)" } else { "" }
        );
        if c.revoked {
            s.push_str("  REVOKED: no capacity\n");
        } else {
            s.push_str(&format!("  remaining     {}{} today, at most {}{} in one transfer", c.daily_remaining, c.denom, c.per_tx_max, c.denom));
            if let Some(t) = c.window_ends_at.and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok()) {
                s.push_str(&format!("\n  full cap back {}", rfc3339(t)));
            }
        }
        s.trim_end().to_string()
    });
    Ok(())
}

/// `query compliance sub-roles`: a parent's bindings, revoked ones included.
pub(super) async fn sub_roles(home: &Path, out: Output, parent: &str, role: Option<String>, node: &str) -> anyhow::Result<()> {
    let parent = resolve_address(home, parent)?.to_bech32();
    let role = role.map(|r| parse_role(&r).map(|r| r.as_str_name().to_string())).transpose()?;
    let q = role.map(|r| format!("?role={r}")).unwrap_or_default();
    let v = RestClient::new(node).query(&format!("/chain/compliance/v1/sub_roles/{parent}{q}")).await?;
    print(out, v.clone(), || {
        let mut s = format!("{:<44} {:<18} {:<28} label\n", "sub-key", "role", "state");
        for b in v["bindings"].as_array().into_iter().flatten() {
            let revoked = b["revoked_at"].as_str().unwrap_or_default();
            let state = if revoked.is_empty() || revoked == ZERO_TIME { "active".to_string() } else { format!("revoked {revoked}") };
            s.push_str(&format!(
                "{:<44} {:<18} {:<28} {}\n",
                b["sub_addr"].as_str().unwrap_or_default(),
                b["role"].as_str().unwrap_or_default(),
                state,
                b["label"].as_str().unwrap_or_default()
            ));
        }
        s.trim_end().to_string()
    });
    Ok(())
}

const ZERO_TIME: &str = "1970-01-01T00:00:00Z";

fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// A flag's age, `now - created_at`, as `3d4h`, `2h05m`, `4m10s`.
fn age(created_at: &str, now: time::OffsetDateTime) -> String {
    let Ok(t) = time::OffsetDateTime::parse(created_at, &time::format_description::well_known::Rfc3339) else { return "-".into() };
    let s = (now - t).whole_seconds().max(0);
    let (d, h, m) = (s / 86_400, s % 86_400 / 3_600, s % 3_600 / 60);
    match (d, h, m) {
        (0, 0, _) => format!("{m}m{:02}s", s % 60),
        (0, _, _) => format!("{h}h{m:02}m"),
        _ => format!("{d}d{h}h"),
    }
}

/// The flag queue as a reviewer's worklist: one line per flag, oldest first.
pub(super) fn flags_table(v: &Value) -> String {
    let now = time::OffsetDateTime::now_utc();
    let flags = v["flags"].as_array().cloned().unwrap_or_default();
    if flags.is_empty() {
        return "no flags".into();
    }
    let mut s = format!("{:>6}  {:<17} {:<10} {:<44} {:>18}  {:>7}  tx\n", "id", "status", "decorator", "subject", "amount", "age");
    for f in &flags {
        let status = f["status"].as_str().unwrap_or_default().trim_start_matches("FLAG_STATUS_");
        let amount = super::amount::format_amount(f["amount"]["amount"].as_str().unwrap_or("0"), f["amount"]["denom"].as_str().unwrap_or(""));
        s.push_str(&format!(
            "{:>6}  {:<17} {:<10} {:<44} {:>18}  {:>7}  {}\n",
            f["flag_id"].as_str().unwrap_or_default(),
            status,
            f["decorator"].as_str().unwrap_or_default(),
            f["subject"].as_str().unwrap_or_default(),
            amount,
            age(f["created_at"].as_str().unwrap_or_default(), now),
            f["tx_hash"].as_str().unwrap_or_default()
        ));
    }
    let open = flags.iter().filter(|f| f["status"] == "FLAG_STATUS_EMITTED").count();
    let pending = flags.iter().filter(|f| f["status"] == "FLAG_STATUS_PENDING_OFFICER").count();
    s.push_str(&format!("{} flags: {open} to review, {pending} with an officer", flags.len()));
    s
}

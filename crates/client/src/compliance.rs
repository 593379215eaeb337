//! The spec's client rules for delegation (sub-keys, agent policies) and for flags.
//!
//! - [`RestClient::sub_role_parent`]: is an address a primary key or a delegated sub-key? Fails
//!   closed (compliance queries, rule 7): only the query handler's exact NotFound answer proves a
//!   primary key, and every other answer is [`ParentAnswer::Unknown`].
//! - [`RestClient::agent_policy`], [`RestClient::sub_roles`]: typed reads of the delegation records.
//! - [`remaining_capacity`]: what an agent may still spend (rule 9). The node serves the stored
//!   window without applying its 24-hour reset, so the client applies it, the same way the
//!   chain's role gate does.
//! - [`FlagTracker`]: a consumer of the typed flag events that counts a flag once, on the first
//!   sighting of its `flag_id` (events, rule 1). Counting `EventFlagEmitted` over-counts: it fires
//!   on every write of a flag, not only on creation.

use std::collections::BTreeMap;

use lantau_primitives::{Address, Coin};
use lantau_proto::chain::compliance::v1::{FlagStatus, SubRole};
use lantau_proto::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rest::{ClientError, RestClient, TxResponse};

// === records ===

/// The length of an agent's spend window: exactly 24 hours, in seconds.
pub const AGENT_WINDOW_SECS: i64 = 86_400;

/// A sub-role binding as the node serves it (SubRoleParent, SubRoleBindings).
///
/// Revoked bindings are served too; [`SubRoleBinding::is_active`] tells them apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubRoleBinding {
    /// The owning (parent) address.
    pub parent: Address,
    /// The delegated address. It belongs to at most one parent.
    pub sub_addr: Address,
    /// The role, carried on the wire by its enum name (`SUB_ROLE_AGENT`). An unknown or
    /// unspecified role does not decode.
    #[serde(with = "sub_role_name")]
    pub role: SubRole,
    /// The label given at bind time.
    pub label: String,
    /// The zero timestamp (`1970-01-01T00:00:00Z`) while active, otherwise the block time of the
    /// revocation (which takes effect from the next block).
    pub revoked_at: Timestamp,
}

impl SubRoleBinding {
    /// True while the binding is active (`revoked_at` is the zero timestamp).
    pub fn is_active(&self) -> bool {
        self.revoked_at == Timestamp::default()
    }
}

/// The spending envelope of an agent sub-key: exactly the two caps and the revocation flag.
///
/// Amounts are parsed when the answer is decoded (base-10 digits below 2^128), so a malformed
/// amount is a [`ClientError::Decode`] from [`RestClient::agent_policy`] and never reaches
/// [`remaining_capacity`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentPolicy {
    /// The parent address.
    pub parent: Address,
    /// The agent's address.
    pub sub_addr: Address,
    /// What the agent may spend per 24-hour window.
    pub daily_cap: Coin,
    /// What the agent may spend in one transaction. Its denom is the envelope's denom.
    pub per_tx_cap: Coin,
    /// True once the agent binding is revoked: no capacity at all.
    pub revoked: bool,
}

/// The stored spend window of an agent, as the node serves it: without the 24-hour reset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentWindow {
    /// The parent address.
    pub parent: Address,
    /// The agent's address.
    pub sub_addr: Address,
    /// What was spent in the window starting at `window_start`. Zero in the cap's denom when
    /// the agent never spent.
    pub spent_last_24h: Coin,
    /// The start of the window (the first spend of the period); the zero timestamp when the
    /// agent never spent.
    pub window_start: Timestamp,
}

/// Serde for [`SubRole`] by its enum name, rejecting names this client does not know.
mod sub_role_name {
    use lantau_proto::chain::compliance::v1::SubRole;
    use serde::{Deserialize as _, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(role: &SubRole, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(role.as_str_name())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SubRole, D::Error> {
        let name = String::deserialize(d)?;
        match SubRole::from_str_name(&name) {
            Some(role) if role != SubRole::Unspecified => Ok(role),
            _ => Err(serde::de::Error::custom(format!("unknown sub-role {name:?}"))),
        }
    }
}

// === SubRoleParent: fail closed ===

/// What SubRoleParent proves about an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParentAnswer {
    /// Proven primary key: the query handler answered HTTP 404 with code 5, the whole message
    /// `no sub-role binding for <addr>` for exactly the queried string, and empty `details`.
    PrimaryKey,
    /// A sub-key bound to `parent`, active or revoked.
    SubKey {
        /// The parent address.
        parent: Address,
        /// The binding as served.
        binding: SubRoleBinding,
        /// False once revoked (`revoked_at` is set).
        active: bool,
    },
    /// Nothing is proven (a proxy's 404, an error status, a transport failure, an unreadable or
    /// inconsistent answer). Fail closed: treat the address as neither primary nor sub-key.
    /// The string says why, for a human.
    Unknown(String),
}

impl ParentAnswer {
    /// True only for a proven primary key.
    pub fn is_primary_key(&self) -> bool {
        matches!(self, Self::PrimaryKey)
    }

    /// True for a bound sub-key, active or revoked.
    pub fn is_sub_key(&self) -> bool {
        matches!(self, Self::SubKey { .. })
    }

    /// True for a sub-key whose binding is active.
    pub fn is_active_sub_key(&self) -> bool {
        matches!(self, Self::SubKey { active: true, .. })
    }

    /// True when nothing is proven.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown(_))
    }

    /// The parent of a sub-key.
    pub fn parent(&self) -> Option<&Address> {
        match self {
            Self::SubKey { parent, .. } => Some(parent),
            _ => None,
        }
    }

    /// The binding of a sub-key.
    pub fn binding(&self) -> Option<&SubRoleBinding> {
        match self {
            Self::SubKey { binding, .. } => Some(binding),
            _ => None,
        }
    }

    /// Why nothing is proven, for an unknown answer.
    pub fn unknown_reason(&self) -> Option<&str> {
        match self {
            Self::Unknown(why) => Some(why),
            _ => None,
        }
    }
}

/// Judges a 404 body: a primary key only for the handler's exact answer about `addr`.
fn parent_from_not_found(addr: &str, body: &str) -> ParentAnswer {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return ParentAnswer::Unknown(format!("HTTP 404 without a JSON body (not the query handler): {body:.200}"));
    };
    let code = v.get("code").and_then(Value::as_i64);
    if code != Some(5) {
        return ParentAnswer::Unknown(format!(
            "HTTP 404 with code {:.50}, not 5 (NotFound)",
            v.get("code").map(Value::to_string).unwrap_or_else(|| "absent".into())
        ));
    }
    let expected = format!("no sub-role binding for {addr}");
    match v.get("message").and_then(Value::as_str) {
        Some(m) if m == expected => {}
        Some(m) => {
            return ParentAnswer::Unknown(format!(
                "HTTP 404 code 5 with message {:?}, not the handler's {expected:?} (a proxy or gateway may have answered)",
                m.chars().take(200).collect::<String>()
            ))
        }
        None => return ParentAnswer::Unknown("HTTP 404 code 5 without a message string".into()),
    }
    match v.get("details") {
        Some(Value::Array(d)) if d.is_empty() => ParentAnswer::PrimaryKey,
        other => ParentAnswer::Unknown(format!(
            "HTTP 404 code 5 with details {:.200}, not an empty array",
            other.map(Value::to_string).unwrap_or_else(|| "absent".into())
        )),
    }
}

/// Judges a 200 body: a sub-key only when the parent and binding are readable and consistent
/// with each other and with the queried address.
fn parent_from_ok(queried: &Address, body: &str) -> ParentAnswer {
    let v = match serde_json::from_str::<Value>(body) {
        Ok(v) => v,
        Err(e) => return ParentAnswer::Unknown(format!("HTTP 200 with malformed JSON: {e}: {body:.200}")),
    };
    let parent = match v.get("parent") {
        Some(Value::String(p)) if p.is_empty() => return ParentAnswer::Unknown("HTTP 200 with an empty parent".into()),
        Some(Value::String(p)) => p,
        _ => return ParentAnswer::Unknown("HTTP 200 without a parent string".into()),
    };
    let parent = match Address::from_bech32(parent) {
        Ok(p) => p,
        Err(e) => return ParentAnswer::Unknown(format!("HTTP 200 with an unreadable parent: {e}")),
    };
    let binding: SubRoleBinding = match v.get("binding").map(SubRoleBinding::deserialize) {
        Some(Ok(b)) => b,
        Some(Err(e)) => return ParentAnswer::Unknown(format!("HTTP 200 with an unreadable binding: {e}")),
        None => return ParentAnswer::Unknown("HTTP 200 without a binding".into()),
    };
    if binding.parent != parent {
        return ParentAnswer::Unknown(format!("HTTP 200 whose binding names parent {}, not {parent}", binding.parent));
    }
    if binding.sub_addr != *queried {
        return ParentAnswer::Unknown(format!("HTTP 200 about {}, not the queried {queried}", binding.sub_addr));
    }
    let active = binding.is_active();
    ParentAnswer::SubKey { parent, binding, active }
}

// === queries ===

impl RestClient {
    /// SubRoleParent for `addr` (bech32, or `0x` hex), judged by rule 7: never an error, it fails
    /// closed.
    ///
    /// [`ParentAnswer::PrimaryKey`] only for HTTP 404 whose JSON body has code 5, the whole
    /// message `no sub-role binding for <addr>` with `addr` exactly as given here (and so exactly
    /// as put in the path), and `details` an empty array, reached without a redirect.
    /// [`ParentAnswer::SubKey`] for HTTP 200 with a non-empty bech32 `parent` and a readable
    /// binding naming that parent and the queried address. Everything else, including a string
    /// that is not an address (no request is made then), is [`ParentAnswer::Unknown`].
    pub async fn sub_role_parent(&self, addr: &str) -> ParentAnswer {
        let queried = match Address::parse_any(addr) {
            Ok(a) => a,
            Err(e) => return ParentAnswer::Unknown(format!("not asked: {e}")),
        };
        // `addr` parsed as bech32 or hex, so it is path-safe as it stands.
        let url = match self.url(&format!("/chain/compliance/v1/sub_role_parent/{addr}")) {
            Ok(u) => u,
            Err(e) => return ParentAnswer::Unknown(e.to_string()),
        };
        let raw = match self.get_raw(url).await {
            Ok(r) => r,
            Err(e) => return ParentAnswer::Unknown(e.to_string()),
        };
        if raw.redirected {
            return ParentAnswer::Unknown(format!("HTTP {} after a redirect: not the query handler's answer", raw.status));
        }
        match raw.status {
            200 => parent_from_ok(&queried, &raw.body),
            404 => parent_from_not_found(addr, &raw.body),
            s => ParentAnswer::Unknown(format!("HTTP {s}: {:.200}", raw.body)),
        }
    }

    /// AgentPolicy: the envelope of agent `sub` under `parent` and its stored window (without
    /// the 24-hour reset; see [`remaining_capacity`]). `None` for a 404 with code 5 (no policy).
    ///
    /// Unlike [`RestClient::sub_role_parent`], `None` is not checked against an exact handler
    /// message: read it as "no capacity known", which is also what a missing policy means.
    /// An answer about another pair of addresses, or with a malformed amount, is
    /// [`ClientError::Decode`].
    pub async fn agent_policy(&self, parent: &Address, sub: &Address) -> Result<Option<(AgentPolicy, AgentWindow)>, ClientError> {
        #[derive(Deserialize)]
        struct Answer {
            policy: AgentPolicy,
            window: AgentWindow,
        }
        let path = format!("/chain/compliance/v1/agent_policy/{}/{}", parent.to_bech32(), sub.to_bech32());
        let Some(v) = self.query_opt(&path).await? else {
            return Ok(None);
        };
        let a = Answer::deserialize(&v).map_err(|e| ClientError::Decode(format!("agent policy: {e}")))?;
        for (what, p, s) in [("policy", &a.policy.parent, &a.policy.sub_addr), ("window", &a.window.parent, &a.window.sub_addr)] {
            if p != parent || s != sub {
                return Err(ClientError::Decode(format!("agent policy: the {what} is about {p}/{s}, not {parent}/{sub}")));
            }
        }
        Ok(Some((a.policy, a.window)))
    }

    /// SubRoleBindings: every binding under `parent`, revoked ones included, optionally only
    /// one role (`role` is an enum name such as `SUB_ROLE_AGENT`, sent as given; `Some("")` is
    /// the same as `None`).
    ///
    /// The node returns the complete set (no pagination); an answer with a `next_key`, or with
    /// a binding under another parent or of another role, is [`ClientError::Decode`].
    pub async fn sub_roles(&self, parent: &Address, role: Option<&str>) -> Result<Vec<SubRoleBinding>, ClientError> {
        #[derive(Deserialize)]
        struct Answer {
            bindings: Vec<SubRoleBinding>,
            #[serde(default)]
            pagination: Option<Pagination>,
        }
        #[derive(Deserialize)]
        struct Pagination {
            #[serde(default)]
            next_key: Option<String>,
        }
        let role = role.filter(|r| !r.is_empty());
        let path = format!("/chain/compliance/v1/sub_roles/{}", parent.to_bech32());
        let url = match role {
            Some(r) => self.url_with_params(&path, &[("role", r)])?,
            None => self.url(&path)?,
        };
        let v = self.get_url(url).await?;
        let a = Answer::deserialize(&v).map_err(|e| ClientError::Decode(format!("sub-role bindings: {e}")))?;
        if let Some(key) = a.pagination.and_then(|p| p.next_key).filter(|k| !k.is_empty()) {
            return Err(ClientError::Decode(format!("sub-role bindings: paginated answer (next_key {key:?}); expected the complete set")));
        }
        for b in &a.bindings {
            if b.parent != *parent {
                return Err(ClientError::Decode(format!("sub-role bindings: {} is bound under {}, not {parent}", b.sub_addr, b.parent)));
            }
            if let Some(r) = role.filter(|r| *r != b.role.as_str_name()) {
                return Err(ClientError::Decode(format!("sub-role bindings: {} has role {}, asked for {r}", b.sub_addr, b.role.as_str_name())));
            }
        }
        Ok(a.bindings)
    }
}

// === agent capacity (rule 9) ===

/// What an agent may still spend, computed by [`remaining_capacity`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capacity {
    /// The envelope's denom (that of `per_tx_cap`); a transfer in another denom is rejected.
    pub denom: String,
    /// What is left of the daily cap in the current window.
    pub daily_remaining: u128,
    /// The largest single transfer the gate accepts now: `min(per_tx_cap, daily_remaining)`.
    pub per_tx_max: u128,
    /// True when the stored window has elapsed (`now - window_start >= 86,400 s`) or was never
    /// started (zero `window_start`): the stored `spent_last_24h` is the previous period's total
    /// and the full daily cap is available.
    pub window_reset: bool,
    /// While the stored window is live: the unix second at which it elapses and the full daily
    /// cap returns (`window_start + 86,400`). `None` when `window_reset`.
    pub window_ends_at: Option<i64>,
    /// True for a revoked policy: no capacity at all.
    pub revoked: bool,
}

/// Rule 9: the capacity an agent has left at `now_unix_secs` (seconds since the Unix epoch, UTC;
/// compare with the chain's block time, not a skewed local clock, where it matters).
///
/// Mirrors the chain's role gate:
/// - the window has elapsed when `now - window_start >= 86,400` in whole seconds (sub-second
///   parts are ignored, as the gate ignores them); a zero `window_start` means never spent. A
///   `window_start` in the future (clock skew) counts as a live window;
/// - in a live window, `spent_last_24h` counts against `daily_cap` when it is in the
///   envelope's denom; a window in another denom (the envelope was re-denominated since)
///   counts as reset, as the gate treats it;
/// - the envelope's denom is `per_tx_cap`'s;
/// - a revoked policy has zero capacity.
///
/// Pure and total: amounts are already parsed (see [`AgentPolicy`]) and all arithmetic
/// saturates, so a spend above the cap (e.g. after the cap was lowered) gives zero, never a
/// panic.
pub fn remaining_capacity(policy: &AgentPolicy, window: &AgentWindow, now_unix_secs: i64) -> Capacity {
    let start = window.window_start;
    // As the role gate does: a window in another denom than the envelope's (the envelope was
    // re-denominated) does not count against it.
    let window_reset = start == Timestamp::default()
        || now_unix_secs.saturating_sub(start.seconds) >= AGENT_WINDOW_SECS
        || window.spent_last_24h.denom != policy.per_tx_cap.denom;
    let window_ends_at = (!window_reset).then(|| start.seconds.saturating_add(AGENT_WINDOW_SECS));
    let spent = if window_reset { 0 } else { window.spent_last_24h.amount.0 };
    let (daily_remaining, per_tx_max) = if policy.revoked {
        (0, 0)
    } else {
        let daily_remaining = policy.daily_cap.amount.0.saturating_sub(spent);
        (daily_remaining, policy.per_tx_cap.amount.0.min(daily_remaining))
    };
    Capacity { denom: policy.per_tx_cap.denom.clone(), daily_remaining, per_tx_max, window_reset, window_ends_at, revoked: policy.revoked }
}

// === flags (events, rule 1) ===

/// Event type of a flag write (creation, review, escalation, close). Not a creation signal.
pub const EVENT_FLAG_EMITTED: &str = "chain.compliance.v1.EventFlagEmitted";
/// Event type of a terminal decision on a flag.
pub const EVENT_FLAG_RESOLVED: &str = "chain.compliance.v1.EventFlagResolved";
/// Event type of an escalation to an officer.
pub const EVENT_FLAG_ESCALATED: &str = "chain.compliance.v1.EventFlagEscalated";

/// What a [`FlagTracker`] knows about one flag, gathered from its events.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrackedFlag {
    /// The flag's identifier.
    pub flag_id: String,
    /// The furthest status seen (EMITTED, then PENDING_OFFICER, then a terminal status).
    /// `FLAG_STATUS_UNSPECIFIED` never stays: every accepted event sets a status.
    pub status: FlagStatus,
    /// `threshold` or `velocity` (from EventFlagEmitted).
    pub decorator: String,
    /// The address the flag concerns (from EventFlagEmitted).
    pub subject: String,
    /// The subject's VASP; empty for velocity flags (from EventFlagEmitted).
    pub vasp: String,
    /// The flagged transaction's hash (from EventFlagEmitted).
    pub tx_hash: String,
    /// `APPROVED` or `BLOCKED` once resolved (from EventFlagResolved).
    pub decision: String,
    /// Who resolved it (from EventFlagResolved).
    pub resolver: String,
    /// The resolution's evidence hash (from EventFlagResolved).
    pub evidence_hash: String,
    /// The reviewer who escalated it (from EventFlagEscalated).
    pub reviewer: String,
    /// The note hash for the officer (from EventFlagEscalated).
    pub officer_note_hash: String,
}

/// What one event did to a [`FlagTracker`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sighting {
    /// Not one of the three flag events: ignored.
    Other,
    /// The first sighting of this `flag_id`: a new flag.
    Created(String),
    /// A known flag whose status or details changed.
    Updated(String),
    /// A known flag, nothing new (e.g. the same transaction fed twice).
    Unchanged(String),
    /// A flag event that could not be read (no `flag_id`, an unknown status or decision); the
    /// tracker is untouched. The string says why.
    Malformed(String),
}

/// A consumer of the typed flag events that counts each flag once.
///
/// A flag is created on the first sighting of its `flag_id` in any of EventFlagEmitted,
/// EventFlagResolved or EventFlagEscalated, and its status is tracked from EventFlagEmitted's
/// `status`, EventFlagResolved's `decision` and EventFlagEscalated.
///
/// Counting EventFlagEmitted events over-counts: it fires on every write of a flag (creation,
/// review, escalation, close), so a flag that is escalated and then closed emits it three times.
/// Use [`FlagTracker::count`].
///
/// Statuses only move forward (EMITTED, then PENDING_OFFICER, then a terminal status; the first
/// terminal status seen stays), so feeding the same transaction twice, or feeding transactions
/// out of order (a search backfill overlapping a WebSocket stream), changes nothing.
///
/// Events are the Cosmos `{type, attributes: [{key, value}]}` objects of `tx_response.events`
/// or of a CometBFT WebSocket `TxResult.result.events`. Attribute values are accepted both
/// JSON-encoded (typed-event style, `"\"7\""`) and plain (`"7"`). The flattened
/// `"type.key": [values]` map of a WebSocket result is not accepted: it loses which attributes
/// belong to one event.
#[derive(Debug, Clone, Default)]
pub struct FlagTracker {
    flags: BTreeMap<String, TrackedFlag>,
}

/// How far along its lifecycle a status is; statuses never move back.
fn rank(s: FlagStatus) -> u8 {
    match s {
        FlagStatus::Unspecified => 0,
        FlagStatus::Emitted => 1,
        FlagStatus::PendingOfficer => 2,
        FlagStatus::ResolvedApproved | FlagStatus::ResolvedBlocked => 3,
    }
}

/// An attribute value, JSON-decoded when it is a JSON string, otherwise as it stands.
fn attr_value(v: &Value) -> String {
    match v {
        Value::String(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(Value::String(s)) => s,
            _ => raw.clone(),
        },
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The attributes of an event, decoded; the first of repeated keys wins.
fn attributes(event: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for a in event.get("attributes").and_then(Value::as_array).into_iter().flatten() {
        if let (Some(k), Some(v)) = (a.get("key").and_then(Value::as_str), a.get("value")) {
            out.entry(k.to_string()).or_insert_with(|| attr_value(v));
        }
    }
    out
}

/// A status by enum name or number; `None` for anything unknown or unspecified.
fn parse_status(s: &str) -> Option<FlagStatus> {
    FlagStatus::from_str_name(s).or_else(|| s.parse::<i32>().ok().and_then(|n| FlagStatus::try_from(n).ok())).filter(|st| *st != FlagStatus::Unspecified)
}

/// One flag event, read and checked before it touches the tracker.
enum FlagEvent {
    Emitted { status: FlagStatus },
    Resolved { status: FlagStatus },
    Escalated,
}

impl FlagTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one event. Events other than the three flag events are [`Sighting::Other`].
    pub fn observe_event(&mut self, event: &Value) -> Sighting {
        let ty = event.get("type").and_then(Value::as_str).unwrap_or_default();
        if ![EVENT_FLAG_EMITTED, EVENT_FLAG_RESOLVED, EVENT_FLAG_ESCALATED].contains(&ty) {
            return Sighting::Other;
        }
        let attrs = attributes(event);
        let get = |k: &str| attrs.get(k).cloned().unwrap_or_default();
        let flag_id = get("flag_id");
        if flag_id.is_empty() {
            return Sighting::Malformed(format!("{ty} without a flag_id"));
        }
        let kind = match ty {
            EVENT_FLAG_EMITTED => match parse_status(&get("status")) {
                Some(status) => FlagEvent::Emitted { status },
                None => return Sighting::Malformed(format!("{ty} for flag {flag_id} with status {:?}", get("status"))),
            },
            EVENT_FLAG_RESOLVED => match get("decision").as_str() {
                "APPROVED" => FlagEvent::Resolved { status: FlagStatus::ResolvedApproved },
                "BLOCKED" => FlagEvent::Resolved { status: FlagStatus::ResolvedBlocked },
                d => return Sighting::Malformed(format!("{ty} for flag {flag_id} with decision {d:?}")),
            },
            _ => FlagEvent::Escalated,
        };

        let created = !self.flags.contains_key(&flag_id);
        let flag = self.flags.entry(flag_id.clone()).or_insert_with(|| TrackedFlag { flag_id: flag_id.clone(), ..TrackedFlag::default() });
        let before = flag.clone();
        let fill = |field: &mut String, key: &str| {
            if field.is_empty() {
                *field = get(key);
            }
        };
        let status = match kind {
            FlagEvent::Emitted { status } => {
                fill(&mut flag.decorator, "decorator");
                fill(&mut flag.subject, "subject");
                fill(&mut flag.vasp, "vasp");
                fill(&mut flag.tx_hash, "tx_hash");
                status
            }
            FlagEvent::Resolved { status } => {
                fill(&mut flag.decision, "decision");
                fill(&mut flag.resolver, "resolver");
                fill(&mut flag.evidence_hash, "evidence_hash");
                status
            }
            FlagEvent::Escalated => {
                fill(&mut flag.reviewer, "reviewer");
                fill(&mut flag.officer_note_hash, "officer_note_hash");
                FlagStatus::PendingOfficer
            }
        };
        if rank(status) > rank(flag.status) {
            flag.status = status;
        }
        if created {
            Sighting::Created(flag_id)
        } else if *flag != before {
            Sighting::Updated(flag_id)
        } else {
            Sighting::Unchanged(flag_id)
        }
    }

    /// Feeds a list of events (e.g. `tx_response.events`), in order. Returns the sightings of
    /// the flag events, leaving out [`Sighting::Other`].
    pub fn observe_events(&mut self, events: &[Value]) -> Vec<Sighting> {
        events.iter().map(|e| self.observe_event(e)).filter(|s| *s != Sighting::Other).collect()
    }

    /// Feeds a committed transaction's events. A failed transaction (`code` non-zero) wrote no
    /// flag and is skipped.
    pub fn observe_tx(&mut self, tx: &TxResponse) -> Vec<Sighting> {
        if tx.code != 0 {
            return Vec::new();
        }
        self.observe_events(&tx.events)
    }

    /// The number of distinct flags seen.
    pub fn count(&self) -> usize {
        self.flags.len()
    }

    /// The furthest status seen for a flag; `None` for a flag never seen.
    pub fn status(&self, flag_id: &str) -> Option<FlagStatus> {
        self.flags.get(flag_id).map(|f| f.status)
    }

    /// Everything known about a flag.
    pub fn get(&self, flag_id: &str) -> Option<&TrackedFlag> {
        self.flags.get(flag_id)
    }

    /// Every flag seen, by `flag_id` (string order).
    pub fn flags(&self) -> impl Iterator<Item = &TrackedFlag> {
        self.flags.values()
    }
}

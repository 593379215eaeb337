//! The gate chain: the one implementation of the compliance rules, called from admission,
//! execution, simulation and (later) the EVM precompile.
//!
//! Input: the signer, the compliance facts projected from the recognised message shapes (only
//! `hkd.` amounts), and the Travel Rule payload. Output: seven rows in the fixed gate order, the
//! first blocking rejection (a [`ComplianceError`] with its gate code) and the advisories
//! (threshold and velocity flags) to record if the transaction goes through. The chain only
//! reads state; recording its effects is the caller's job, after the messages succeeded.
//!
//! Every gate is evaluated even after a blocking failure, so a trace explains the whole
//! transaction; the rejection is the first failing blocking gate in order.

use cnidarium::StateRead;
use lantau_kyc::{Identity, KycRead, Level, Tier};
use lantau_module_api::{BlockCtx, GasMeter, TxError};
use lantau_primitives::Address;

use crate::error::ComplianceError;
use crate::screening::Screened;
use crate::state::{binding_active, ComplianceRead};
use crate::{AgentWindow, DecoratorResult, GateResult, Rules, SubRole, SubRoleBinding, TravelRulePayload};

// === the gates, as data ===

/// The seven gates, in the order they run (the fixed order clients depend on). One enum is the one list: the
/// name, whether a failure blocks, and the evaluation all come from a `match` on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Gate {
    /// Neither party (nor the sub-key a party acts through) is blacklisted. Code 18.
    Kyc,
    /// No party's VASP is on the sanctions list. Code 19.
    Sanctions,
    /// The Travel Rule payload is present and matches the registry. Code 20.
    TravelRule,
    /// The payload's tier equals the sender's, which may originate the amount. Code 21.
    TravelRuleTier,
    /// A bound sub-key signs only what its role allows, an agent within its envelope. Codes
    /// 11, 13, 14.
    Role,
    /// Advisory: a transfer at or above the large-transfer threshold raises a flag.
    Threshold,
    /// Advisory: the sender's transfer density raises a flag.
    Velocity,
}

impl Gate {
    /// Every gate, in order.
    pub const ALL: [Gate; 7] = [Gate::Kyc, Gate::Sanctions, Gate::TravelRule, Gate::TravelRuleTier, Gate::Role, Gate::Threshold, Gate::Velocity];

    /// The name in a trace.
    pub const fn name(self) -> &'static str {
        match self {
            Gate::Kyc => "kyc_gate",
            Gate::Sanctions => "sanctions_gate",
            Gate::TravelRule => "travel_rule_gate",
            Gate::TravelRuleTier => "travel_rule_tier_gate",
            Gate::Role => "role_gate",
            Gate::Threshold => "threshold_gate",
            Gate::Velocity => "velocity_gate",
        }
    }

    /// True when a failure rejects the transaction; the advisory gates only flag.
    pub fn blocking(self) -> bool {
        match self {
            Gate::Kyc | Gate::Sanctions | Gate::TravelRule | Gate::TravelRuleTier | Gate::Role => true,
            Gate::Threshold | Gate::Velocity => false,
        }
    }

    /// The codes (codespace `compliance`) its rejection carries; none for an advisory gate.
    pub fn codes(self) -> &'static [u32] {
        match self {
            Gate::Kyc => &[18],
            Gate::Sanctions => &[19],
            Gate::TravelRule => &[20],
            Gate::TravelRuleTier => &[21],
            Gate::Role => &[11, 13, 14],
            Gate::Threshold | Gate::Velocity => &[],
        }
    }

    /// Evaluates the gate. Every gate has this one signature.
    async fn evaluate<S: StateRead + Sync>(self, cx: &mut Cx<'_, S>) -> Result<Row, TxError> {
        match self {
            Gate::Kyc => kyc_gate(cx).await,
            Gate::Sanctions => sanctions_gate(cx).await,
            Gate::TravelRule => travel_rule_gate(cx).await,
            Gate::TravelRuleTier => travel_rule_tier_gate(cx).await,
            Gate::Role => role_gate(cx).await,
            Gate::Threshold => threshold_gate(cx).await,
            Gate::Velocity => velocity_gate(cx).await,
        }
    }
}

/// The gates' names, in order (derived from [`Gate::ALL`]).
// Evaluated at compile time: an index out of range fails the build, it cannot panic at run time.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub const GATE_NAMES: [&str; 7] = {
    let mut names = [""; 7];
    let mut i = 0;
    while i < Gate::ALL.len() {
        names[i] = Gate::ALL[i].name();
        i += 1;
    }
    names
};

/// The advisory gates' flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decorator {
    /// A large transfer (threshold gate).
    Threshold,
    /// Transfer density (velocity gate).
    Velocity,
}

impl Decorator {
    /// The name in flags, audit rows (`<name>_flag`) and events.
    pub fn as_str(self) -> &'static str {
        match self {
            Decorator::Threshold => "threshold",
            Decorator::Velocity => "velocity",
        }
    }
}

pub use lantau_module_api::Fact;

/// What the chain looks at.
#[derive(Debug, Clone, Copy)]
pub struct GateInput<'a> {
    /// The transaction's signer.
    pub signer: Address,
    /// The facts, in message order.
    pub facts: &'a [Fact],
    /// The Travel Rule payload, when the transaction carries one.
    pub payload: Option<&'a TravelRulePayload>,
    /// The type URL of every message, in order (the role gate inspects every message a
    /// sub-key signs, not only recognised shapes).
    pub msg_types: &'a [&'a str],
    /// Where the caller logs what the chain reads, when it does (`lantau_module_api::reads`):
    /// the advisory gates read unlogged, since nothing they read can change the verdict.
    pub reads: Option<&'a lantau_module_api::reads::ReadLog>,
}

/// What each sub-role may sign (the role gate, stricter than the spec's original). Native-coin sends are
/// `MsgSend` too, so an agent keeps its gas money.
pub fn allowed_messages(role: SubRole) -> &'static [&'static str] {
    match role {
        SubRole::Agent => &[lantau_module_api::type_url::MSG_SEND],
        SubRole::Reviewer => &[crate::msg::MSG_REVIEW_FLAG, crate::msg::MSG_ESCALATE_FLAG],
        SubRole::Officer => &[crate::msg::MSG_CLOSE_FLAG],
        SubRole::Unspecified => &[],
    }
}

/// The agent window length: a fixed 24 hours anchored at the first spend.
pub const AGENT_WINDOW_SECS: i64 = 24 * 60 * 60;

/// An advisory gate fired: a flag to raise if the transaction goes through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advisory {
    /// Which advisory gate.
    pub decorator: Decorator,
    /// The fact it concerns.
    pub fact: usize,
    /// The subject: the signing key that debits (a delegated key itself, not its parent).
    pub subject: Address,
    /// The subject's VASP for a threshold flag (resolved through the parent for a delegated
    /// key); always empty for velocity.
    pub vasp: String,
}

/// The chain's answer. Not `Clone`: an accepted verdict carries the proofs of screening of its
/// movements, each to be used once.
#[derive(Debug)]
pub struct Verdict {
    /// Seven rows, in [`Gate::ALL`] order.
    pub results: Vec<GateResult>,
    /// The first blocking failure.
    pub rejection: Option<TxError>,
    /// Flags to raise when the transaction succeeds.
    pub advisories: Vec<Advisory>,
    /// An agent's spend window after this transaction, to store when it succeeds.
    pub agent_window: Option<(Address, AgentWindow)>,
    /// One proof of screening per fact, when accepted (empty when rejected).
    pub screened: Vec<Screened>,
}

impl Verdict {
    /// The verdict as the trace TxTrace answers, for the transaction `tx_hash` (upper-case hex).
    pub fn trace(&self, tx_hash: &str) -> lantau_proto::chain::compliance::v1::GateTrace {
        lantau_proto::chain::compliance::v1::GateTrace { tx_hash: tx_hash.to_string(), accepted: self.accepted(), results: self.results.clone() }
    }

    /// [`Verdict::trace`], taking the verdict's results instead of copying them.
    pub fn into_trace(self, tx_hash: &str) -> lantau_proto::chain::compliance::v1::GateTrace {
        let accepted = self.accepted();
        lantau_proto::chain::compliance::v1::GateTrace { tx_hash: tx_hash.to_string(), accepted, results: self.results }
    }

    /// True when every blocking gate passed.
    pub fn accepted(&self) -> bool {
        self.rejection.is_none()
    }
}

/// A party as the gates see it: the address whose identity counts (a bound sub-key's parent),
/// and the sub-key it was reached through with that key's own level (a blacklisted key is
/// refused whoever it acts for).
#[derive(Debug, Clone)]
struct Party {
    addr: Address,
    via: Option<(Address, Level)>,
    identity: Option<Identity>,
    tier: Tier,
}

impl Party {
    fn level(&self) -> Level {
        self.identity.as_ref().map(lantau_kyc::state::level_of).unwrap_or(Level::Unspecified)
    }
    fn vasp(&self) -> &str {
        self.identity.as_ref().map(|i| i.vasp_identifier.as_str()).unwrap_or("")
    }
    fn reference(&self) -> &str {
        self.identity.as_ref().map(|i| i.ivms101_off_chain_ref.as_str()).unwrap_or("")
    }

    /// `sender=<address>` as a reason names it, with the sub-key it acts through.
    fn label(&self, role: &str) -> String {
        match self.via {
            Some((sub, _)) => format!("{role}={} (parent of sub-key {})", self.addr.to_bech32(), sub.to_bech32()),
            None => format!("{role}={}", self.addr.to_bech32()),
        }
    }

    /// Why the party's identity does not count at `now`, if it has lapsed (a sub-key's is its
    /// parent's).
    fn expired(&self, role: &str, now: &lantau_proto::Timestamp) -> Option<String> {
        let at = self.identity.as_ref()?.expires_at.as_ref().filter(|t| t.seconds != 0 || t.nanos != 0)?;
        ((at.seconds, at.nanos) <= (now.seconds, now.nanos))
            .then(|| format!("{}: identity expired at {}", self.label(role), at.to_rfc3339().unwrap_or_default()))
    }

    /// Why the party is refused by the KYC gate, if it is: its own key blacklisted (a
    /// delegated key is judged as itself first), or the identity that counts blacklisted.
    fn blacklisted(&self, role: &str) -> Option<String> {
        match self.via {
            Some((sub, Level::Blacklisted)) => Some(format!("{role}={} (sub-key of {}): address is blacklisted", sub.to_bech32(), self.addr.to_bech32())),
            _ if self.level() == Level::Blacklisted => Some(format!("{}: address is blacklisted", self.label(role))),
            _ => None,
        }
    }
}

/// Why the KYC gate would refuse `addr` as a party in `role` (`sender`/`recipient`) at the block
/// time `now` (blacklisted, or its identity lapsed; a sub-key judged through its parent), or
/// that it has no identity at all; `None` when it passes. The same rules as `kyc_gate`, for a
/// movement that does not run the gate chain (a seizure's recipient).
pub async fn kyc_refusal<S: StateRead + Sync>(
    state: &S,
    gas: &GasMeter,
    addr: &Address,
    role: &str,
    now: &lantau_proto::Timestamp,
) -> Result<Option<String>, TxError> {
    let p = party(state, gas, addr, None, now).await?;
    if let Some(why) = p.blacklisted(role).or_else(|| p.expired(role, now)) {
        return Ok(Some(why));
    }
    Ok(p.identity.is_none().then(|| format!("{}: has no identity record", p.label(role))))
}

/// Resolves `addr` through its active sub-role binding, if any (`known`: the binding already
/// read), and reads the identity that counts (and, for a sub-key, its own level).
async fn party<S: StateRead + Sync>(
    state: &S,
    gas: &GasMeter,
    addr: &Address,
    known: Option<Option<SubRoleBinding>>,
    now: &lantau_proto::Timestamp,
) -> Result<Party, TxError> {
    let binding = match known {
        Some(b) => b,
        None => state.binding(gas, addr).await?,
    };
    let parent = match binding.filter(|b| binding_active(b, now)) {
        Some(b) => Some(
            Address::from_bech32(&b.parent)
                .map_err(|e| ComplianceError::CorruptRecord(format!("binding of {}: parent {:?}: {e}", addr.to_bech32(), b.parent)))?,
        ),
        None => None,
    };
    let via = match parent {
        Some(_) => {
            let (own, _) = state.level_and_tier(gas, addr).await?;
            Some((*addr, own.as_ref().map(lantau_kyc::state::level_of).unwrap_or(Level::Unspecified)))
        }
        None => None,
    };
    let who = parent.unwrap_or(*addr);
    let (identity, tier) = state.level_and_tier(gas, &who).await?;
    Ok(Party { addr: who, via, identity, tier })
}

/// One gate's answer, before it becomes a trace row.
struct Row {
    status: DecoratorResult,
    reason: String,
    error: Option<ComplianceError>,
    /// Gas spent for this gate before the chain ran (the role gate's binding read).
    earlier_gas: u64,
}

impl Row {
    fn pass(reason: impl Into<String>) -> Self {
        Row { status: DecoratorResult::Pass, reason: reason.into(), error: None, earlier_gas: 0 }
    }
    fn fail(e: ComplianceError) -> Self {
        Row { status: DecoratorResult::Fail, reason: e.to_string(), error: Some(e), earlier_gas: 0 }
    }
    fn flagged(reason: impl Into<String>) -> Self {
        Row { status: DecoratorResult::Flagged, reason: reason.into(), error: None, earlier_gas: 0 }
    }
}

const NOTHING: &str = "no stablecoin amount in a recognised message: nothing to inspect";

/// What every gate sees: the input, the parties of each fact (resolved once), the rules, the
/// signer's binding; and what the advisory and role gates hand back.
struct Cx<'a, S> {
    state: &'a S,
    gas: &'a GasMeter,
    block: &'a BlockCtx,
    input: GateInput<'a>,
    /// Each fact with its sender and recipient as the gates see them.
    facts: Vec<(&'a Fact, Party, Party)>,
    rules: Rules,
    binding: Option<SubRoleBinding>,
    role_read_gas: u64,
    advisories: Vec<Advisory>,
    agent_window: Option<(Address, AgentWindow)>,
}

/// Runs the seven gates over `input`. Reads only; charges `gas` for every read; fails only on
/// a store error, a corrupt record or out of gas (a rejection is a verdict, not an error).
pub async fn run<S: StateRead + Sync>(state: &S, gas: &GasMeter, block: &BlockCtx, input: GateInput<'_>) -> Result<Verdict, TxError> {
    // The rules matter only to transfers: a transaction without facts does not read them.
    let rules = if input.facts.is_empty() { crate::default_rules() } else { state.rules(gas).await? };

    // The signer's sub-role binding, for the role gate (its gas is the role gate's).
    let role_used = gas.used();
    let binding = state.binding(gas, &input.signer).await?;
    let role_read_gas = gas.used().saturating_sub(role_used);
    let mut cx = Cx { state, gas, block, input, facts: Vec::new(), rules, binding, role_read_gas, advisories: Vec::new(), agent_window: None };

    let mut results = Vec::with_capacity(Gate::ALL.len());
    let mut rejection = None;
    for gate in Gate::ALL {
        let used = gas.used();
        let unlogged = if gate.blocking() { None } else { cx.input.reads.map(|l| l.unlogged()) };
        let row = gate.evaluate(&mut cx).await?;
        drop(unlogged);
        if rejection.is_none() && gate.blocking() {
            rejection = row.error.as_ref().map(|e| TxError::from(e.clone()));
        }
        results.push(GateResult {
            name: gate.name().into(),
            status: row.status as i32,
            blocking: gate.blocking(),
            reason: row.reason,
            gas_used: gas.used().saturating_sub(used).saturating_add(row.earlier_gas),
        });
    }
    let accepted = rejection.is_none();
    Ok(Verdict {
        results,
        rejection,
        advisories: if accepted { cx.advisories } else { Vec::new() },
        agent_window: if accepted { cx.agent_window } else { None },
        screened: if accepted { input.facts.iter().map(Screened::new).collect() } else { Vec::new() },
    })
}

// === the blocking gates ===

/// kyc_gate: its gas includes resolving and reading every party (read once, used by all
/// gates). A party that is an actively bound sub-key is evaluated against its parent's
/// identity, on either side of a transfer, after its own record.
async fn kyc_gate<S: StateRead + Sync>(cx: &mut Cx<'_, S>) -> Result<Row, TxError> {
    let now = lantau_module_api::block_timestamp(cx.block);
    let mut parties: std::collections::BTreeMap<Address, Party> = Default::default();
    for f in cx.input.facts {
        let mut pair = Vec::with_capacity(2);
        for addr in [f.from, f.to] {
            let p = match parties.get(&addr) {
                Some(p) => p.clone(),
                None => {
                    let known = if addr == cx.input.signer { Some(cx.binding.clone()) } else { None };
                    let p = party(cx.state, cx.gas, &addr, known, &now).await?;
                    parties.insert(addr, p.clone());
                    p
                }
            };
            pair.push(p);
        }
        let (Some(r), Some(s)) = (pair.pop(), pair.pop()) else { return Err(lantau_module_api::error::internal("party pair")) };
        cx.facts.push((f, s, r));
    }
    if cx.facts.is_empty() {
        return Ok(Row::pass(NOTHING));
    }
    for (_, s, r) in &cx.facts {
        for (role, p) in [("sender", s), ("recipient", r)] {
            if let Some(why) = p.blacklisted(role) {
                return Ok(Row::fail(ComplianceError::PartyBlacklisted(why)));
            }
        }
    }
    // An identity that lapsed at the block time no longer counts (its registrar renews it).
    for (_, s, r) in &cx.facts {
        for (role, p) in [("sender", s), ("recipient", r)] {
            if let Some(why) = p.expired(role, &now) {
                return Ok(Row::fail(ComplianceError::IdentityExpired(why)));
            }
        }
    }
    Ok(Row::pass("neither party is blacklisted"))
}

async fn sanctions_gate<S: StateRead + Sync>(cx: &mut Cx<'_, S>) -> Result<Row, TxError> {
    if cx.facts.is_empty() {
        return Ok(Row::pass(NOTHING));
    }
    let set = cx.state.sanctions(cx.gas).await?;
    for (_, s, r) in &cx.facts {
        for (role, p) in [("sender", s), ("recipient", r)] {
            let v = p.vasp();
            if !v.is_empty() && set.blocked_vasps.iter().any(|b| b == v) {
                return Ok(Row::fail(ComplianceError::VaspSanctioned(format!("{}: VASP {v} is on the sanctions list", p.label(role)))));
            }
        }
    }
    Ok(Row::pass("no party's VASP is on the sanctions list"))
}

async fn travel_rule_gate<S: StateRead + Sync>(cx: &mut Cx<'_, S>) -> Result<Row, TxError> {
    Ok(if cx.facts.is_empty() { Row::pass(NOTHING) } else { travel_rule_structure(&cx.facts, cx.input.payload) })
}

async fn travel_rule_tier_gate<S: StateRead + Sync>(cx: &mut Cx<'_, S>) -> Result<Row, TxError> {
    Ok(if cx.facts.is_empty() { Row::pass(NOTHING) } else { travel_rule_capability(&cx.facts, cx.input.payload, cx.rules.travel_rule_full_threshold) })
}

async fn role_gate<S: StateRead + Sync>(cx: &mut Cx<'_, S>) -> Result<Row, TxError> {
    let (mut row, window) = role_rules(cx.state, cx.gas, cx.block, &cx.input, cx.binding.as_ref()).await?;
    cx.agent_window = window;
    row.earlier_gas = cx.role_read_gas;
    Ok(row)
}

// === the advisory gates ===

async fn threshold_gate<S: StateRead + Sync>(cx: &mut Cx<'_, S>) -> Result<Row, TxError> {
    if cx.facts.is_empty() {
        return Ok(Row::pass(NOTHING));
    }
    let threshold = cx.rules.travel_rule_full_threshold;
    let mut hits = Vec::new();
    for (i, (f, s, _)) in cx.facts.iter().enumerate() {
        if f.amount.amount.0 >= u128::from(threshold) {
            cx.advisories.push(Advisory { decorator: Decorator::Threshold, fact: i, subject: f.from, vasp: s.vasp().to_string() });
            hits.push(format!("{} {} ≥ {threshold}", f.amount.amount, f.amount.denom));
        }
    }
    Ok(if hits.is_empty() {
        Row::pass(format!("below the large-transfer threshold {threshold}"))
    } else {
        Row::flagged(format!("large transfer flagged for review: {}", hits.join("; ")))
    })
}

/// velocity_gate: counts per signing key (a delegated key's transfers are its own, not its
/// parent's).
async fn velocity_gate<S: StateRead + Sync>(cx: &mut Cx<'_, S>) -> Result<Row, TxError> {
    if cx.facts.is_empty() {
        return Ok(Row::pass(NOTHING));
    }
    let (window, limit) = (cx.rules.velocity_window_seconds, cx.rules.velocity_tx_limit);
    let now = cx.block.time.unix_timestamp();
    let since = now.saturating_sub(i64::try_from(window).unwrap_or(i64::MAX));
    let mut counts: std::collections::BTreeMap<Address, u64> = Default::default();
    let mut hits = Vec::new();
    for (i, (f, _, _)) in cx.facts.iter().enumerate() {
        let count = match counts.get(&f.from) {
            Some(c) => *c,
            None => {
                let n = cx.state.velocity_times(cx.gas, &f.from).await?.into_iter().filter(|t| *t > since).count();
                u64::try_from(n).unwrap_or(u64::MAX)
            }
        }
        .saturating_add(1);
        counts.insert(f.from, count);
        if count >= limit {
            cx.advisories.push(Advisory { decorator: Decorator::Velocity, fact: i, subject: f.from, vasp: String::new() });
            hits.push(format!("{} made {count} transfers within {window}s (limit {limit})", f.from.to_bech32()));
        }
    }
    Ok(if hits.is_empty() {
        Row::pass(format!("fewer than {limit} transfers within {window}s"))
    } else {
        Row::flagged(format!("transfer density flagged for review: {}", hits.join("; ")))
    })
}

/// The role gate: a bound sub-key may sign only its role's messages (every message), a
/// revoked one nothing; an agent's stablecoin transfers stay within its envelope (per-tx cap
/// and daily cap → 13, another denom → 14). Returns the row and, for an agent that spends, its
/// window after this transaction.
async fn role_rules<S: StateRead + Sync>(
    state: &S,
    gas: &GasMeter,
    block: &BlockCtx,
    input: &GateInput<'_>,
    binding: Option<&SubRoleBinding>,
) -> Result<(Row, Option<(Address, AgentWindow)>), TxError> {
    let me = input.signer.to_bech32();
    let Some(b) = binding else {
        return Ok((Row::pass(format!("{me} is not a bound sub-key")), None));
    };
    // A binding revoked in an earlier block no longer delegates anything.
    let revoked = !binding_active(b, &lantau_module_api::block_timestamp(block));
    let role = SubRole::try_from(b.role).unwrap_or(SubRole::Unspecified);
    if revoked {
        return Ok((
            Row::fail(ComplianceError::RoleNotPermitted(format!("sub-key {me} ({}) was revoked by {}: it may no longer sign", role.as_str_name(), b.parent))),
            None,
        ));
    }
    let allowed = allowed_messages(role);
    if let Some(t) = input.msg_types.iter().find(|t| !allowed.contains(t)) {
        return Ok((
            Row::fail(ComplianceError::RoleNotPermitted(format!("sub-key {me} of {} has role {} and may not sign {t}", b.parent, role.as_str_name()))),
            None,
        ));
    }
    let spends: Vec<&Fact> = input.facts.iter().filter(|f| f.from == input.signer).collect();
    if role != SubRole::Agent || spends.is_empty() {
        return Ok((Row::pass(format!("sub-key {me} of {} signs only what {} allows", b.parent, role.as_str_name())), None));
    }
    let Some(policy) = state.agent_policy(gas, &input.signer).await?.filter(|p| !p.revoked) else {
        return Ok((Row::fail(ComplianceError::AgentCapExceeded(format!("agent {me} has no spending envelope"))), None));
    };
    let cap = |c: &Option<cosmos_sdk_proto::cosmos::base::v1beta1::Coin>, what: &str| -> Result<(String, u128), TxError> {
        match c {
            None => Ok((String::new(), 0)),
            Some(c) => {
                let amount =
                    c.amount.parse().map_err(|_| ComplianceError::CorruptRecord(format!("agent {me}: {what} amount {:?} is not an integer", c.amount)))?;
                Ok((c.denom.clone(), amount))
            }
        }
    };
    let (denom, per_tx) = cap(&policy.per_tx_cap, "per_tx_cap")?;
    let (_, daily) = cap(&policy.daily_cap, "daily_cap")?;
    let now = lantau_module_api::block_timestamp(block);
    let stored = state.agent_window(gas, &input.signer).await?;
    let stored_spent = match &stored {
        Some(w) => Some(cap(&w.spent_last_24h, "spent_last_24h")?),
        None => None,
    };
    let (mut start, mut spent) = match (&stored, stored_spent) {
        // A window in another denom (the envelope changed denom) does not count against this one.
        (Some(w), Some((d, s)))
            if w.window_start.is_some_and(|s| s != Default::default() && now.seconds.saturating_sub(s.seconds) < AGENT_WINDOW_SECS) && d == denom =>
        {
            (w.window_start, s)
        }
        _ => (None, 0),
    };
    for f in spends {
        if f.amount.denom != denom {
            return Ok((
                Row::fail(ComplianceError::AgentDenomMismatch(format!("agent {me}: envelope is denominated in {denom}, transfer is in {}", f.amount.denom))),
                None,
            ));
        }
        let amount = f.amount.amount.0;
        if amount > per_tx {
            return Ok((
                Row::fail(ComplianceError::AgentCapExceeded(format!("agent {me}: {amount}{denom} exceeds the per-transaction cap {per_tx}{denom}"))),
                None,
            ));
        }
        spent = spent.saturating_add(amount);
        if spent > daily {
            return Ok((
                Row::fail(ComplianceError::AgentCapExceeded(format!(
                    "agent {me}: {spent}{denom} spent in the 24-hour window would exceed the daily cap {daily}{denom}"
                ))),
                None,
            ));
        }
        start = start.or(Some(now));
    }
    let window = AgentWindow {
        parent: b.parent.clone(),
        sub_addr: me.clone(),
        spent_last_24h: Some(cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: denom.clone(), amount: spent.to_string() }),
        window_start: start,
    };
    Ok((Row::pass(format!("agent {me} of {} within its envelope: {spent}/{daily}{denom} in the window", b.parent)), Some((input.signer, window))))
}

fn travel_rule_structure(facts: &[(&Fact, Party, Party)], payload: Option<&TravelRulePayload>) -> Row {
    let Some(p) = payload else {
        return Row::fail(ComplianceError::TravelRuleIncomplete(
            "Travel Rule payload missing: a stablecoin transfer must carry /chain.compliance.v1.TravelRulePayload as a transaction extension option".into(),
        ));
    };
    let fail = |m: String| Row::fail(ComplianceError::TravelRuleIncomplete(m));
    for (_, s, r) in facts {
        for (role, party, field, claimed) in [("sender", s, "originator_ref", &p.originator_ref), ("recipient", r, "beneficiary_ref", &p.beneficiary_ref)] {
            if party.reference().is_empty() {
                return fail(format!("{}: no registered ivms101_off_chain_ref; both parties need one for the Travel Rule", party.label(role)));
            }
            if claimed != party.reference() {
                return fail(format!("{}: payload {field} does not match the registered reference", party.label(role)));
            }
        }
        let full = s.tier == Tier::Full;
        for (role, party, field, claimed) in [("sender", s, "originator_vasp", &p.originator_vasp), ("recipient", r, "beneficiary_vasp", &p.beneficiary_vasp)] {
            if full && (party.vasp().is_empty() || claimed.is_empty()) {
                return fail(format!(
                    "{}: {field} is required at full tier and {}",
                    party.label(role),
                    if party.vasp().is_empty() { "the party has no registered VASP" } else { "the payload leaves it empty" }
                ));
            }
            if !claimed.is_empty() && claimed != party.vasp() {
                return fail(format!("{}: payload {field} does not match the registered VASP", party.label(role)));
            }
        }
    }
    Row::pass("payload present; references and VASP identifiers match the registry")
}

fn travel_rule_capability(facts: &[(&Fact, Party, Party)], payload: Option<&TravelRulePayload>, threshold: u64) -> Row {
    let fail = |m: String| Row::fail(ComplianceError::TravelRuleTier(m));
    for (f, s, _) in facts {
        let claimed = payload.map(|p| p.tier.as_str()).unwrap_or("");
        let level = s.level().as_str_name();
        if s.tier == Tier::None {
            return fail(format!(
                "Travel Rule requirements are not met: sender={} has registered tier none (level {level}) and cannot originate a stablecoin transfer; payload tier {claimed:?}",
                s.addr.to_bech32()
            ));
        }
        if claimed != s.tier.as_str() {
            return fail(format!(
                "Travel Rule requirements are not met: payload tier {claimed:?} does not equal the sender's registered tier {:?} (sender={}, level {level})",
                s.tier.as_str(),
                s.addr.to_bech32()
            ));
        }
        if s.tier == Tier::Minimal && f.amount.amount.0 >= u128::from(threshold) {
            return fail(format!(
                "Travel Rule requirements are not met: a minimal-tier sender (sender={}, level {level}) cannot move {} {}, at or above the full-tier threshold {threshold}",
                s.addr.to_bech32(),
                f.amount.amount,
                f.amount.denom
            ));
        }
    }
    Row::pass("payload tier equals the sender's registered tier, and the sender may originate this amount")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::state::ComplianceWrite;
    use cnidarium::{StateDelta, Storage};
    use lantau_kyc::KycWrite;
    use lantau_primitives::Coin;

    fn addr(i: u8) -> Address {
        Address([i; 20])
    }

    fn id(a: Address, level: Level, vasp: &str, reference: &str) -> Identity {
        Identity { address: a.to_bech32(), level: level as i32, vasp_identifier: vasp.into(), ivms101_off_chain_ref: reference.into(), ..Default::default() }
    }

    fn block() -> BlockCtx {
        BlockCtx { height: 5, time: time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap(), chain_id: "t".into() }
    }

    fn payload(tier: &str, oref: &str, bref: &str, ov: &str, bv: &str) -> TravelRulePayload {
        TravelRulePayload {
            tx_hash: String::new(),
            originator_ref: oref.into(),
            beneficiary_ref: bref.into(),
            originator_vasp: ov.into(),
            beneficiary_vasp: bv.into(),
            tier: tier.into(),
        }
    }

    fn fact(from: Address, to: Address, amount: u128) -> Fact {
        Fact { from, to, amount: Coin::new("hkd.demo", amount), msg_index: 0 }
    }

    /// alice (1) full tier with VASP, bob (2) minimal tier with reference only, carol (3) none,
    /// dave (4) full with VASP, eve (5) blacklisted.
    async fn setup() -> (tempfile::TempDir, Storage) {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
        let mut d = StateDelta::new(storage.latest_snapshot());
        let g = GasMeter::infinite();
        d.put_kyc_params(&g, &lantau_kyc::tier::default_params()).unwrap();
        d.put_identity(&g, &addr(1), &id(addr(1), Level::RetailPlus, "VASP-A", "ref-a")).unwrap();
        d.put_identity(&g, &addr(2), &id(addr(2), Level::RetailBasic, "", "ref-b")).unwrap();
        d.put_identity(&g, &addr(4), &id(addr(4), Level::Institutional, "VASP-D", "ref-d")).unwrap();
        d.put_identity(&g, &addr(5), &id(addr(5), Level::Blacklisted, "VASP-E", "ref-e")).unwrap();
        d.put_rules(&g, &crate::default_rules()).unwrap();
        storage.commit(d).await.unwrap();
        (dir, storage)
    }

    async fn verdict(storage: &Storage, signer: Address, facts: &[Fact], p: Option<&TravelRulePayload>) -> Verdict {
        let snap = storage.latest_snapshot();
        let types: Vec<&str> = facts.iter().map(|_| lantau_module_api::type_url::MSG_SEND).collect();
        run(&snap, &GasMeter::infinite(), &block(), GateInput { signer, facts, payload: p, msg_types: &types, reads: None }).await.unwrap()
    }

    fn code(v: &Verdict) -> Option<(&'static str, u32, String)> {
        v.rejection.as_ref().map(|e| (e.codespace, e.code, e.log.clone()))
    }

    #[tokio::test]
    async fn a_native_transfer_passes_every_gate_and_the_trace_has_seven_rows() {
        let (_d, s) = setup().await;
        let v = verdict(&s, addr(1), &[], None).await;
        assert!(v.accepted());
        assert_eq!(v.results.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), GATE_NAMES);
        assert!(v.results.iter().all(|r| r.status == DecoratorResult::Pass as i32));
        assert_eq!(v.results.iter().filter(|r| r.blocking).count(), 5);
    }

    #[tokio::test]
    async fn a_full_tier_transfer_with_a_matching_payload_passes() {
        let (_d, s) = setup().await;
        let p = payload("full", "ref-a", "ref-d", "VASP-A", "VASP-D");
        let v = verdict(&s, addr(1), &[fact(addr(1), addr(4), 100)], Some(&p)).await;
        assert!(v.accepted(), "{:?}", v.results);
        assert!(v.advisories.is_empty());
    }

    #[tokio::test]
    async fn a_blacklisted_party_is_rejected_with_code_18_naming_it() {
        let (_d, s) = setup().await;
        let p = payload("full", "ref-a", "ref-e", "VASP-A", "VASP-E");
        let v = verdict(&s, addr(1), &[fact(addr(1), addr(5), 100)], Some(&p)).await;
        let (space, c, log) = code(&v).unwrap();
        assert_eq!((space, c), ("compliance", 18));
        assert_eq!(log, format!("recipient={}: address is blacklisted", addr(5).to_bech32()));
        assert_eq!(v.results[0].status, DecoratorResult::Fail as i32);
        assert_eq!(v.results.len(), 7);
    }

    #[tokio::test]
    async fn a_sanctioned_vasp_is_rejected_with_code_19() {
        let (_d, s) = setup().await;
        let mut d = StateDelta::new(s.latest_snapshot());
        d.put_sanctions(&GasMeter::infinite(), &crate::SanctionsSet { blocked_addresses: vec![], blocked_vasps: vec!["VASP-D".into()] }).unwrap();
        s.commit(d).await.unwrap();
        let p = payload("full", "ref-a", "ref-d", "VASP-A", "VASP-D");
        let v = verdict(&s, addr(1), &[fact(addr(1), addr(4), 100)], Some(&p)).await;
        assert_eq!(code(&v).unwrap().1, 19);
    }

    #[tokio::test]
    async fn travel_rule_structure_failures_are_code_20() {
        let (_d, s) = setup().await;
        // Missing payload.
        let v = verdict(&s, addr(1), &[fact(addr(1), addr(4), 100)], None).await;
        assert_eq!(code(&v).unwrap().1, 20);
        // Full tier: the recipient has no VASP.
        let p = payload("full", "ref-a", "ref-b", "VASP-A", "");
        let v = verdict(&s, addr(1), &[fact(addr(1), addr(2), 100)], Some(&p)).await;
        let (_, c, log) = code(&v).unwrap();
        assert_eq!(c, 20);
        assert!(log.contains("beneficiary_vasp is required at full tier"), "{log}");
        // Minimal tier: VASPs checked only when present.
        let p = payload("minimal", "ref-b", "ref-a", "", "");
        assert!(verdict(&s, addr(2), &[fact(addr(2), addr(1), 100)], Some(&p)).await.accepted());
        let p = payload("minimal", "ref-b", "ref-a", "", "VASP-WRONG");
        assert_eq!(code(&verdict(&s, addr(2), &[fact(addr(2), addr(1), 100)], Some(&p)).await).unwrap().1, 20);
        // A recipient without identity has no reference.
        let p = payload("minimal", "ref-b", "", "", "");
        let (_, c, log) = code(&verdict(&s, addr(2), &[fact(addr(2), addr(3), 100)], Some(&p)).await).unwrap();
        assert_eq!(c, 20);
        assert!(log.starts_with(&format!("recipient={}", addr(3).to_bech32())), "{log}");
    }

    #[tokio::test]
    async fn travel_rule_capability_failures_are_code_21() {
        let (_d, s) = setup().await;
        // Tier claim differs from the registered tier: the message names both tiers and the level.
        let p = payload("full", "ref-b", "ref-a", "", "VASP-A");
        let (_, c, log) = code(&verdict(&s, addr(2), &[fact(addr(2), addr(1), 100)], Some(&p)).await).unwrap();
        assert_eq!(c, 21);
        assert!(log.contains("\"full\"") && log.contains("\"minimal\"") && log.contains("LEVEL_RETAIL_BASIC"), "{log}");
        assert!(log.contains("Travel Rule requirements are not met"), "{log}");
        // Minimal tier at the threshold.
        let p = payload("minimal", "ref-b", "ref-a", "", "");
        let (_, c, _) = code(&verdict(&s, addr(2), &[fact(addr(2), addr(1), 800_000)], Some(&p)).await).unwrap();
        assert_eq!(c, 21);
        assert!(verdict(&s, addr(2), &[fact(addr(2), addr(1), 799_999)], Some(&p)).await.accepted());
    }

    #[tokio::test]
    async fn advisory_gates_flag_without_blocking() {
        let (_d, s) = setup().await;
        let p = payload("full", "ref-a", "ref-d", "VASP-A", "VASP-D");
        let v = verdict(&s, addr(1), &[fact(addr(1), addr(4), 800_000)], Some(&p)).await;
        assert!(v.accepted());
        assert_eq!(v.results[5].status, DecoratorResult::Flagged as i32);
        assert!(!v.results[5].blocking);
        assert_eq!(v.advisories, vec![Advisory { decorator: Decorator::Threshold, fact: 0, subject: addr(1), vasp: "VASP-A".into() }]);
        // Ten facts from one sender in one transaction reach the velocity limit on the tenth.
        let facts: Vec<Fact> = (0..10).map(|_| fact(addr(1), addr(4), 1)).collect();
        let v = verdict(&s, addr(1), &facts, Some(&p)).await;
        assert!(v.accepted());
        let vel: Vec<_> = v.advisories.iter().filter(|a| a.decorator == Decorator::Velocity).collect();
        assert_eq!(vel.len(), 1);
        assert_eq!((vel[0].fact, vel[0].vasp.as_str()), (9, ""));
    }

    fn pcoin(amount: u128) -> Option<cosmos_sdk_proto::cosmos::base::v1beta1::Coin> {
        Some(cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: "hkd.demo".into(), amount: amount.to_string() })
    }

    async fn bind(s: &Storage, parent: Address, sub: Address, role: SubRole, revoked_at: Option<lantau_proto::Timestamp>) {
        let mut d = StateDelta::new(s.latest_snapshot());
        let g = GasMeter::infinite();
        d.put_binding(
            &g,
            &parent,
            &sub,
            &SubRoleBinding { parent: parent.to_bech32(), sub_addr: sub.to_bech32(), role: role as i32, label: "k".into(), revoked_at },
        )
        .unwrap();
        d.put_agent_policy(
            &g,
            &sub,
            &crate::AgentPolicy { parent: parent.to_bech32(), sub_addr: sub.to_bech32(), daily_cap: pcoin(1_500), per_tx_cap: pcoin(1_000), revoked: false },
        )
        .unwrap();
        s.commit(d).await.unwrap();
    }

    async fn run_as(s: &Storage, signer: Address, facts: &[Fact], p: Option<&TravelRulePayload>, types: &[&str]) -> Verdict {
        let snap = s.latest_snapshot();
        run(&snap, &GasMeter::infinite(), &block(), GateInput { signer, facts, payload: p, msg_types: types, reads: None }).await.unwrap()
    }

    const SEND: &str = lantau_module_api::type_url::MSG_SEND;

    #[tokio::test]
    async fn an_agent_spends_within_its_envelope_as_its_parent() {
        let (_d, s) = setup().await;
        let agent = addr(9);
        bind(&s, addr(1), agent, SubRole::Agent, None).await;
        // Evaluated against alice's identity: her references, VASP and tier.
        let p = payload("full", "ref-a", "ref-d", "VASP-A", "VASP-D");
        let v = run_as(&s, agent, &[fact(agent, addr(4), 500)], Some(&p), &[SEND]).await;
        assert!(v.accepted(), "{:?}", v.results);
        let (sub, w) = v.agent_window.unwrap();
        assert_eq!((sub, w.spent_last_24h.unwrap().amount.as_str()), (agent, "500"));
        // Per-transaction cap, other denom.
        let v = run_as(&s, agent, &[fact(agent, addr(4), 1_001)], Some(&p), &[SEND]).await;
        assert_eq!(code(&v).unwrap().1, 13);
        let other = Fact { from: agent, to: addr(4), amount: Coin::new("hkd.other", 5u128), msg_index: 0 };
        assert_eq!(code(&run_as(&s, agent, &[other], Some(&p), &[SEND]).await).unwrap().1, 14);
        // Any other message: 11.
        let v = run_as(&s, agent, &[], None, &["/chain.stablecoin.v1.MsgMint"]).await;
        assert_eq!(code(&v).unwrap().1, 11);
        // A native send (no fact) stays allowed.
        assert!(run_as(&s, agent, &[], None, &[SEND]).await.accepted());
    }

    #[tokio::test]
    async fn the_daily_cap_counts_the_window_and_resets_after_24_hours() {
        let (_d, s) = setup().await;
        let agent = addr(9);
        bind(&s, addr(1), agent, SubRole::Agent, None).await;
        let now = lantau_module_api::block_timestamp(&block());
        let put_window = |start: i64| {
            let s = &s;
            async move {
                let mut d = StateDelta::new(s.latest_snapshot());
                let w = AgentWindow {
                    parent: addr(1).to_bech32(),
                    sub_addr: agent.to_bech32(),
                    spent_last_24h: pcoin(1_200),
                    window_start: Some(lantau_proto::Timestamp { seconds: start, nanos: 0 }),
                };
                d.put_agent_window(&GasMeter::infinite(), &agent, &w).unwrap();
                s.commit(d).await.unwrap();
            }
        };
        let p = payload("full", "ref-a", "ref-d", "VASP-A", "VASP-D");
        put_window(now.seconds - 3_600).await;
        let v = run_as(&s, agent, &[fact(agent, addr(4), 400)], Some(&p), &[SEND]).await;
        assert_eq!(code(&v).unwrap().1, 13);
        put_window(now.seconds - AGENT_WINDOW_SECS).await;
        let v = run_as(&s, agent, &[fact(agent, addr(4), 400)], Some(&p), &[SEND]).await;
        assert!(v.accepted(), "the period elapsed: the window resets");
        let w = v.agent_window.unwrap().1;
        assert_eq!((w.spent_last_24h.unwrap().amount.as_str(), w.window_start.unwrap().seconds), ("400", now.seconds));
    }

    #[tokio::test]
    async fn roles_revocation_and_a_blacklisted_parent() {
        let (_d, s) = setup().await;
        let (reviewer, revoked_agent, bad_agent) = (addr(10), addr(11), addr(12));
        bind(&s, addr(4), reviewer, SubRole::Reviewer, None).await;
        let before = lantau_proto::Timestamp { seconds: 1_700_000_000, nanos: 0 };
        bind(&s, addr(1), revoked_agent, SubRole::Agent, Some(before)).await;
        bind(&s, addr(5), bad_agent, SubRole::Agent, None).await;
        // A reviewer key may not send, even native coin.
        assert_eq!(code(&run_as(&s, reviewer, &[], None, &[SEND]).await).unwrap().1, 11);
        assert!(run_as(&s, reviewer, &[], None, &["/chain.compliance.v1.MsgReviewFlag"]).await.accepted());
        assert_eq!(code(&run_as(&s, reviewer, &[], None, &["/chain.compliance.v1.MsgCloseFlag"]).await).unwrap().1, 11);
        // Revoked in an earlier block: nothing.
        let (_, c, log) = code(&run_as(&s, revoked_agent, &[], None, &[SEND]).await).unwrap();
        assert_eq!(c, 11);
        assert!(log.contains("revoked"), "{log}");
        // Revoked in this very block: still effective until the next.
        let now = lantau_module_api::block_timestamp(&block());
        bind(&s, addr(1), revoked_agent, SubRole::Agent, Some(now)).await;
        assert!(run_as(&s, revoked_agent, &[], None, &[SEND]).await.accepted());
        // The agent of a blacklisted parent: the KYC gate sees the parent.
        let p = payload("full", "ref-e", "ref-d", "VASP-E", "VASP-D");
        let (_, c, log) = code(&run_as(&s, bad_agent, &[fact(bad_agent, addr(4), 5)], Some(&p), &[SEND]).await).unwrap();
        assert_eq!(c, 18);
        assert!(log.starts_with(&format!("sender={}", addr(5).to_bech32())), "{log}");
    }
}

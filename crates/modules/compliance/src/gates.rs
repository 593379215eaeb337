//! The gate chain: the one implementation of the compliance rules, called from admission,
//! execution, simulation and (later) the EVM precompile.
//!
//! Input: the signer, the compliance facts projected from the recognised message shapes (only
//! `hkd.` amounts), and the Travel Rule payload. Output: seven rows in the brief's order, the
//! first blocking rejection (a [`ComplianceError`] with its gate code) and the advisories
//! (threshold and velocity flags) to record if the transaction goes through. The chain only
//! reads state; recording its effects is the caller's job, after the messages succeeded.
//!
//! Every gate is evaluated even after a blocking failure, so a trace explains the whole
//! transaction; the rejection is the first failing blocking gate in order.

use cnidarium::StateRead;
use lantau_kyc::{Identity, KycRead, Level, Tier};
use lantau_module_api::{BlockCtx, GasMeter, TxError};
use lantau_primitives::{Address, Coin};

use crate::error::ComplianceError;
use crate::state::ComplianceRead;
use crate::{DecoratorResult, GateResult, TravelRulePayload};

/// The gates, in the order they run.
pub const GATE_NAMES: [&str; 7] =
    ["kyc_gate", "sanctions_gate", "travel_rule_gate", "travel_rule_tier_gate", "role_gate", "threshold_gate", "velocity_gate"];

/// A compliance fact: one stablecoin amount moving from one party to another inside a
/// recognised message shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// The debited party.
    pub from: Address,
    /// The credited party.
    pub to: Address,
    /// The stablecoin amount (`hkd.` denom).
    pub amount: Coin,
    /// Index of the message it was projected from.
    pub msg_index: usize,
}

/// What the chain looks at.
#[derive(Debug, Clone, Copy)]
pub struct GateInput<'a> {
    /// The transaction's signer.
    pub signer: Address,
    /// The facts, in message order.
    pub facts: &'a [Fact],
    /// The Travel Rule payload, when the transaction carries one.
    pub payload: Option<&'a TravelRulePayload>,
}

/// An advisory gate fired: a flag to raise if the transaction goes through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advisory {
    /// `threshold` or `velocity`.
    pub decorator: &'static str,
    /// The fact it concerns.
    pub fact: usize,
    /// The subject (the sender, or a delegated key's parent).
    pub subject: Address,
    /// The subject's VASP for a threshold flag; always empty for velocity.
    pub vasp: String,
}

/// The chain's answer.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Seven rows, in [`GATE_NAMES`] order.
    pub results: Vec<GateResult>,
    /// The first blocking failure.
    pub rejection: Option<TxError>,
    /// Flags to raise when the transaction succeeds.
    pub advisories: Vec<Advisory>,
}

impl Verdict {
    /// True when every blocking gate passed.
    pub fn accepted(&self) -> bool {
        self.rejection.is_none()
    }
}

/// A party as the gates see it.
#[derive(Debug, Clone)]
struct Party {
    addr: Address,
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
}

async fn party<S: StateRead + Sync>(state: &S, gas: &GasMeter, addr: &Address) -> Result<Party, TxError> {
    let (identity, tier) = state.level_and_tier(gas, addr).await?;
    Ok(Party { addr: *addr, identity, tier })
}

struct Row {
    status: DecoratorResult,
    reason: String,
    error: Option<ComplianceError>,
}

impl Row {
    fn pass(reason: impl Into<String>) -> Self {
        Row { status: DecoratorResult::Pass, reason: reason.into(), error: None }
    }
    fn fail(e: ComplianceError) -> Self {
        Row { status: DecoratorResult::Fail, reason: e.to_string(), error: Some(e) }
    }
    fn flagged(reason: impl Into<String>) -> Self {
        Row { status: DecoratorResult::Flagged, reason: reason.into(), error: None }
    }
}

const NOTHING: &str = "no stablecoin amount in a recognised message: nothing to inspect";

/// Runs the seven gates over `input`. Reads only; charges `gas` for every read; fails only on
/// a store error or out of gas (a rejection is a verdict, not an error).
pub async fn run<S: StateRead + Sync>(state: &S, gas: &GasMeter, block: &BlockCtx, input: GateInput<'_>) -> Result<Verdict, TxError> {
    let mut rows: Vec<(Row, u64)> = Vec::with_capacity(GATE_NAMES.len());
    let mut advisories = Vec::new();
    let rules = state.rules(gas).await?;

    // kyc_gate: its gas includes reading every party's identity (read once, used by all gates).
    let used = gas.used();
    let mut senders = Vec::with_capacity(input.facts.len());
    let mut recipients = Vec::with_capacity(input.facts.len());
    for f in input.facts {
        senders.push(party(state, gas, &f.from).await?);
        recipients.push(party(state, gas, &f.to).await?);
    }
    let facts = input.facts.iter().zip(senders.iter().zip(recipients.iter())).collect::<Vec<_>>();

    let row = if facts.is_empty() {
        Row::pass(NOTHING)
    } else {
        let mut row = Row::pass("neither party is blacklisted");
        'kyc: for (_, (s, r)) in &facts {
            for (role, p) in [("sender", s), ("recipient", r)] {
                if p.level() == Level::Blacklisted {
                    row = Row::fail(ComplianceError::PartyBlacklisted(format!("{role}={}: address is blacklisted", p.addr.to_bech32())));
                    break 'kyc;
                }
            }
        }
        row
    };
    rows.push((row, gas.used().saturating_sub(used)));

    // sanctions_gate
    let used = gas.used();
    let row = if facts.is_empty() {
        Row::pass(NOTHING)
    } else {
        let set = state.sanctions(gas).await?;
        let mut row = Row::pass("no party's VASP is on the sanctions list");
        'sanctions: for (_, (s, r)) in &facts {
            for (role, p) in [("sender", s), ("recipient", r)] {
                let v = p.vasp();
                if !v.is_empty() && set.blocked_vasps.iter().any(|b| b == v) {
                    row = Row::fail(ComplianceError::VaspSanctioned(format!(
                        "{role}={}: VASP {v} is on the sanctions list",
                        p.addr.to_bech32()
                    )));
                    break 'sanctions;
                }
            }
        }
        row
    };
    rows.push((row, gas.used().saturating_sub(used)));

    // travel_rule_gate (structure)
    let used = gas.used();
    let row = if facts.is_empty() { Row::pass(NOTHING) } else { travel_rule_structure(&facts, input.payload) };
    rows.push((row, gas.used().saturating_sub(used)));

    // travel_rule_tier_gate (capability)
    let used = gas.used();
    let row = if facts.is_empty() {
        Row::pass(NOTHING)
    } else {
        travel_rule_capability(&facts, input.payload, rules.travel_rule_full_threshold)
    };
    rows.push((row, gas.used().saturating_sub(used)));

    // role_gate: sub-role bindings arrive with the delegation capability; until then no
    // address is a bound sub-key and every signer is evaluated as itself.
    let used = gas.used();
    rows.push((Row::pass(format!("{} is not a bound sub-key", input.signer.to_bech32())), gas.used().saturating_sub(used)));

    // threshold_gate (advisory)
    let used = gas.used();
    let row = if facts.is_empty() {
        Row::pass(NOTHING)
    } else {
        let mut hits = Vec::new();
        for (i, (f, (s, _))) in facts.iter().enumerate() {
            if f.amount.amount.0 >= u128::from(rules.travel_rule_full_threshold) {
                advisories.push(Advisory { decorator: "threshold", fact: i, subject: s.addr, vasp: s.vasp().to_string() });
                hits.push(format!("{} {} ≥ {}", f.amount.amount, f.amount.denom, rules.travel_rule_full_threshold));
            }
        }
        if hits.is_empty() {
            Row::pass(format!("below the large-transfer threshold {}", rules.travel_rule_full_threshold))
        } else {
            Row::flagged(format!("large transfer flagged for review: {}", hits.join("; ")))
        }
    };
    rows.push((row, gas.used().saturating_sub(used)));

    // velocity_gate (advisory)
    let used = gas.used();
    let row = if facts.is_empty() {
        Row::pass(NOTHING)
    } else {
        velocity(state, gas, block, &facts, rules.velocity_window_seconds, rules.velocity_tx_limit, &mut advisories).await?
    };
    rows.push((row, gas.used().saturating_sub(used)));

    let rejection = rows.iter().find_map(|(r, _)| r.error.as_ref().map(|e| TxError::from(e.clone())));
    if rejection.is_some() {
        advisories.clear();
    }
    let results = rows
        .into_iter()
        .zip(GATE_NAMES)
        .enumerate()
        .map(|(i, ((r, g), name))| GateResult { name: name.into(), status: r.status as i32, blocking: i < 5, reason: r.reason, gas_used: g })
        .collect();
    Ok(Verdict { results, rejection, advisories })
}

fn travel_rule_structure(facts: &[(&Fact, (&Party, &Party))], payload: Option<&TravelRulePayload>) -> Row {
    let Some(p) = payload else {
        return Row::fail(ComplianceError::TravelRuleIncomplete(
            "Travel Rule payload missing: a stablecoin transfer must carry /chain.compliance.v1.TravelRulePayload as a transaction extension option".into(),
        ));
    };
    let fail = |m: String| Row::fail(ComplianceError::TravelRuleIncomplete(m));
    for (_, (s, r)) in facts {
        for (role, party, field, claimed) in
            [("sender", s, "originator_ref", &p.originator_ref), ("recipient", r, "beneficiary_ref", &p.beneficiary_ref)]
        {
            if party.reference().is_empty() {
                return fail(format!(
                    "{role}={}: no registered ivms101_off_chain_ref; both parties need one for the Travel Rule",
                    party.addr.to_bech32()
                ));
            }
            if claimed != party.reference() {
                return fail(format!("{role}={}: payload {field} does not match the registered reference", party.addr.to_bech32()));
            }
        }
        let full = s.tier == Tier::Full;
        for (role, party, field, claimed) in
            [("sender", s, "originator_vasp", &p.originator_vasp), ("recipient", r, "beneficiary_vasp", &p.beneficiary_vasp)]
        {
            if full && (party.vasp().is_empty() || claimed.is_empty()) {
                return fail(format!(
                    "{role}={}: {field} is required at full tier and {}",
                    party.addr.to_bech32(),
                    if party.vasp().is_empty() { "the party has no registered VASP" } else { "the payload leaves it empty" }
                ));
            }
            if !claimed.is_empty() && claimed != party.vasp() {
                return fail(format!("{role}={}: payload {field} does not match the registered VASP", party.addr.to_bech32()));
            }
        }
    }
    Row::pass("payload present; references and VASP identifiers match the registry")
}

fn travel_rule_capability(facts: &[(&Fact, (&Party, &Party))], payload: Option<&TravelRulePayload>, threshold: u64) -> Row {
    let fail = |m: String| Row::fail(ComplianceError::TravelRuleTier(m));
    for (f, (s, _)) in facts {
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

async fn velocity<S: StateRead + Sync>(
    state: &S,
    gas: &GasMeter,
    block: &BlockCtx,
    facts: &[(&Fact, (&Party, &Party))],
    window: u64,
    limit: u64,
    advisories: &mut Vec<Advisory>,
) -> Result<Row, TxError> {
    let now = block.time.unix_timestamp();
    let since = now.saturating_sub(i64::try_from(window).unwrap_or(i64::MAX));
    let mut counts: std::collections::BTreeMap<Address, u64> = Default::default();
    let mut hits = Vec::new();
    for (i, (f, (s, _))) in facts.iter().enumerate() {
        let count = match counts.get(&f.from) {
            Some(c) => *c,
            None => {
                let n = state.velocity_times(gas, &f.from).await?.into_iter().filter(|t| *t > since).count();
                u64::try_from(n).unwrap_or(u64::MAX)
            }
        }
        .saturating_add(1);
        counts.insert(f.from, count);
        if count >= limit {
            advisories.push(Advisory { decorator: "velocity", fact: i, subject: s.addr, vasp: String::new() });
            hits.push(format!("{} made {count} transfers within {window}s (limit {limit})", f.from.to_bech32()));
        }
    }
    Ok(if hits.is_empty() {
        Row::pass(format!("fewer than {limit} transfers within {window}s"))
    } else {
        Row::flagged(format!("transfer density flagged for review: {}", hits.join("; ")))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::state::ComplianceWrite;
    use cnidarium::{StateDelta, Storage};
    use lantau_kyc::KycWrite;

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
        run(&snap, &GasMeter::infinite(), &block(), GateInput { signer, facts, payload: p }).await.unwrap()
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
        assert_eq!(v.advisories, vec![Advisory { decorator: "threshold", fact: 0, subject: addr(1), vasp: "VASP-A".into() }]);
        // Ten facts from one sender in one transaction reach the velocity limit on the tenth.
        let facts: Vec<Fact> = (0..10).map(|_| fact(addr(1), addr(4), 1)).collect();
        let v = verdict(&s, addr(1), &facts, Some(&p)).await;
        assert!(v.accepted());
        let vel: Vec<_> = v.advisories.iter().filter(|a| a.decorator == "velocity").collect();
        assert_eq!(vel.len(), 1);
        assert_eq!((vel[0].fact, vel[0].vasp.as_str()), (9, ""));
    }
}

//! What a screened stablecoin transfer leaves behind once its messages succeeded: each
//! sender's velocity window, and the Travel Rule payload anchored under the transaction hash.

use cnidarium::StateWrite;
use lantau_module_api::{store, BlockCtx, GasMeter, TxError};

use crate::audit::{AuditEntry, AuditWrite};
use crate::flags::{FlagWrite, NewFlag};
use crate::gates::{Advisory, Fact};
use crate::state::ComplianceRead;
use crate::{state_key, TravelRulePayload};
use lantau_module_api::Event;

/// Records what an accepted verdict leaves behind once the movements it screened happened:
/// the agent's spend window, then (when there were facts) [`record_screened`]. The Cosmos
/// path calls it after a transaction's messages, the ERC-20 precompile after its transfer.
#[allow(clippy::too_many_arguments)]
pub async fn record_verdict<S: StateWrite + Send + Sync>(
    state: &mut S,
    gas: &GasMeter,
    block: &BlockCtx,
    facts: &[Fact],
    verdict: &crate::gates::Verdict,
    payload: Option<&TravelRulePayload>,
    tx_hash: &str,
    events: &mut Vec<Event>,
) -> Result<(), TxError> {
    if let Some((sub, window)) = &verdict.agent_window {
        crate::state::ComplianceWrite::put_agent_window(state, gas, sub, window)?;
    }
    if facts.is_empty() {
        return Ok(());
    }
    record_screened(state, gas, block, facts, &verdict.advisories, payload, tx_hash, events).await
}

/// Records a screened transaction: appends the block time to each fact's sender's velocity
/// window (keeping the last `velocity_tx_limit` entries, so the row stays bounded), and
/// anchors the payload under the lower-case hash in the non-verifiable store.
#[allow(clippy::too_many_arguments)]
pub async fn record_screened<S: StateWrite + Send + Sync>(
    state: &mut S,
    gas: &GasMeter,
    block: &BlockCtx,
    facts: &[Fact],
    advisories: &[Advisory],
    payload: Option<&TravelRulePayload>,
    tx_hash: &str,
    events: &mut Vec<Event>,
) -> Result<(), TxError> {
    // One `transfer` audit row per screened transfer, then the advisories' flags (each with its
    // own audit row) under the same transaction hash.
    for f in facts {
        state
            .append_audit(
                gas,
                block,
                AuditEntry {
                    tx_type: "transfer".into(),
                    subject: f.from.to_bech32(),
                    counterparty: f.to.to_bech32(),
                    amount: Some(lantau_module_api::pb_coin(&f.amount)),
                    tx_hash: tx_hash.to_string(),
                    ..Default::default()
                },
            )
            .await?;
    }
    for a in advisories {
        let Some(f) = facts.get(a.fact) else { continue };
        let new = NewFlag { decorator: a.decorator.as_str(), subject: a.subject, counterparty: f.to, amount: f.amount.clone(), vasp: a.vasp.clone(), tx_hash };
        state.raise_flag(gas, block, new, events).await?;
    }
    let rules = state.rules(gas).await?;
    let keep = usize::try_from(rules.velocity_tx_limit).unwrap_or(usize::MAX);
    let now = block.time.unix_timestamp();
    // Each sender's window: what it held (the record subtracted from the commitment) and its
    // times with this transaction's.
    let mut windows: std::collections::BTreeMap<lantau_primitives::Address, (Option<Vec<u8>>, Vec<i64>)> = Default::default();
    for f in facts {
        if let std::collections::btree_map::Entry::Vacant(e) = windows.entry(f.from) {
            let old = state.velocity_record(gas, &f.from).await?;
            let times = old.as_deref().map(crate::state::velocity_decode).unwrap_or_default();
            e.insert((old, times));
        }
        if let Some((_, w)) = windows.get_mut(&f.from) {
            w.push(now);
        }
    }
    for (addr, (old, mut times)) in windows {
        let drop = times.len().saturating_sub(keep);
        times.drain(..drop);
        let bytes: Vec<u8> = times.iter().flat_map(|t| t.to_be_bytes()).collect();
        crate::records::put(state, gas, state_key::velocity(&addr), old.as_deref(), bytes).await?;
    }
    if let Some(p) = payload {
        let mut anchored = p.clone();
        anchored.tx_hash = tx_hash.to_ascii_lowercase();
        let key = state_key::travel_rule(&anchored.tx_hash);
        let value = prost::Message::encode_to_vec(&anchored);
        gas.row(key.len(), value.len())?;
        state.nonverifiable_put_raw(key.into_bytes(), value);
    }
    Ok(())
}

/// The payload anchored under `tx_hash` (lower-case hex, exactly as stored).
pub async fn anchored_payload<S: cnidarium::StateRead + Sync>(state: &S, tx_hash: &str) -> Result<Option<TravelRulePayload>, TxError> {
    let key = state_key::travel_rule(tx_hash);
    match state.nonverifiable_get_raw(key.as_bytes()).await.map_err(|e| store::read_failed(&key, e))? {
        Some(b) => Ok(Some(store::decode(&b, "travel rule payload")?)),
        None => Ok(None),
    }
}

/// After a state-sync restore: every anchored payload decodes and sits under its own hash.
pub async fn check_anchored_payloads<S: cnidarium::StateRead + Sync>(state: &S) -> Result<(), TxError> {
    use futures::StreamExt;
    let mut stream = std::pin::pin!(state.nonverifiable_prefix_raw(state_key::TRAVEL_RULE_PREFIX));
    while let Some(item) = stream.next().await {
        let (key, value) = item.map_err(|e| store::read_failed(state_key::TRAVEL_RULE_PREFIX.escape_ascii(), e))?;
        let p: TravelRulePayload = store::decode(&value, "travel rule payload")?;
        if key != state_key::travel_rule(&p.tx_hash).into_bytes() {
            return Err(lantau_module_api::error::internal(format!("a Travel Rule payload of {} is stored under another key", p.tx_hash)));
        }
    }
    Ok(())
}

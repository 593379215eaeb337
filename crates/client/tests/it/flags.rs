//! Events, rule 1: a flag is counted once, on the first sighting of its flag_id; EventFlagEmitted
//! fires on every write and is not a creation signal.

use lantau_client::compliance::{EVENT_FLAG_EMITTED, EVENT_FLAG_ESCALATED, EVENT_FLAG_RESOLVED};
use lantau_client::{FlagTracker, Sighting, TxResponse};
use lantau_proto::chain::compliance::v1::{EventFlagEmitted, EventFlagEscalated, EventFlagResolved, FlagStatus};
use prost::Name as _;
use serde_json::{json, Value};

/// An event with typed-event (JSON-encoded) attribute values.
fn typed(ty: &str, attrs: &[(&str, &str)]) -> Value {
    let attrs: Vec<Value> = attrs.iter().map(|(k, v)| json!({"key": k, "value": Value::from(*v).to_string(), "index": true})).collect();
    json!({"type": ty, "attributes": attrs})
}

/// The same event with plain attribute values.
fn plain(ty: &str, attrs: &[(&str, &str)]) -> Value {
    let attrs: Vec<Value> = attrs.iter().map(|(k, v)| json!({"key": k, "value": v})).collect();
    json!({"type": ty, "attributes": attrs})
}

fn emitted(id: &str, status: &str) -> Value {
    typed(
        EVENT_FLAG_EMITTED,
        &[("flag_id", id), ("status", status), ("decorator", "threshold"), ("subject", "lantau1subject"), ("vasp", "VASP-HK-1"), ("tx_hash", "ABC123")],
    )
}

fn resolved(id: &str, decision: &str) -> Value {
    typed(EVENT_FLAG_RESOLVED, &[("flag_id", id), ("decision", decision), ("resolver", "lantau1officer"), ("evidence_hash", "e1")])
}

fn escalated(id: &str) -> Value {
    typed(EVENT_FLAG_ESCALATED, &[("flag_id", id), ("reviewer", "lantau1reviewer"), ("officer_note_hash", "n1")])
}

/// A bank event that shares the transaction.
fn transfer() -> Value {
    plain("transfer", &[("recipient", "lantau1x"), ("amount", "900000hkd.demo")])
}

#[test]
fn the_event_types_are_the_protobuf_names() {
    assert_eq!(EVENT_FLAG_EMITTED, EventFlagEmitted::full_name());
    assert_eq!(EVENT_FLAG_RESOLVED, EventFlagResolved::full_name());
    assert_eq!(EVENT_FLAG_ESCALATED, EventFlagEscalated::full_name());
}

#[test]
fn a_resolution_does_not_create_a_second_flag() {
    let mut t = FlagTracker::new();
    assert_eq!(t.observe_events(&[transfer(), emitted("7", "FLAG_STATUS_EMITTED")]), vec![Sighting::Created("7".into())]);
    let resolve_tx = [emitted("7", "FLAG_STATUS_RESOLVED_APPROVED"), resolved("7", "APPROVED")];
    assert_eq!(t.observe_events(&resolve_tx), vec![Sighting::Updated("7".into()), Sighting::Updated("7".into())]);
    assert_eq!(t.count(), 1);
    assert_eq!(t.status("7"), Some(FlagStatus::ResolvedApproved));
    let f = t.get("7").unwrap();
    assert_eq!((f.decorator.as_str(), f.vasp.as_str(), f.tx_hash.as_str()), ("threshold", "VASP-HK-1", "ABC123"));
    assert_eq!((f.decision.as_str(), f.resolver.as_str(), f.evidence_hash.as_str()), ("APPROVED", "lantau1officer", "e1"));
}

#[test]
fn the_same_transaction_fed_twice_changes_nothing() {
    let mut t = FlagTracker::new();
    let create_tx = [emitted("7", "FLAG_STATUS_EMITTED")];
    let resolve_tx = [emitted("7", "FLAG_STATUS_RESOLVED_BLOCKED"), resolved("7", "BLOCKED")];
    t.observe_events(&create_tx);
    t.observe_events(&resolve_tx);
    let snapshot: Vec<_> = t.flags().cloned().collect();
    assert_eq!(t.observe_events(&resolve_tx), vec![Sighting::Unchanged("7".into()), Sighting::Unchanged("7".into())]);
    // Replaying an older transaction (a backfill overlapping a stream) does not move it back.
    assert_eq!(t.observe_events(&create_tx), vec![Sighting::Unchanged("7".into())]);
    assert_eq!(t.flags().cloned().collect::<Vec<_>>(), snapshot);
    assert_eq!((t.count(), t.status("7")), (1, Some(FlagStatus::ResolvedBlocked)));
}

#[test]
fn escalation_then_close_is_one_flag_through_pending_officer() {
    let mut t = FlagTracker::new();
    let txs = [
        vec![emitted("9", "FLAG_STATUS_EMITTED")],
        vec![emitted("9", "FLAG_STATUS_PENDING_OFFICER"), escalated("9")],
        vec![emitted("9", "FLAG_STATUS_RESOLVED_BLOCKED"), resolved("9", "BLOCKED")],
    ];
    t.observe_events(&txs[0]);
    t.observe_events(&txs[1]);
    assert_eq!(t.status("9"), Some(FlagStatus::PendingOfficer));
    assert_eq!(t.get("9").unwrap().officer_note_hash, "n1");
    t.observe_events(&txs[2]);
    assert_eq!((t.count(), t.status("9")), (1, Some(FlagStatus::ResolvedBlocked)));
    // Counting EventFlagEmitted would have said three.
    let emitted_events = txs.iter().flatten().filter(|e| e["type"] == EVENT_FLAG_EMITTED).count();
    assert_eq!(emitted_events, 3);
    // A late replay of the escalation leaves the closed flag closed.
    assert_eq!(t.observe_events(&txs[1]), vec![Sighting::Unchanged("9".into()), Sighting::Unchanged("9".into())]);
    assert_eq!(t.status("9"), Some(FlagStatus::ResolvedBlocked));
}

#[test]
fn a_flag_first_seen_in_a_resolution_or_escalation_is_created_there() {
    let mut t = FlagTracker::new();
    assert_eq!(t.observe_event(&resolved("3", "APPROVED")), Sighting::Created("3".into()));
    assert_eq!(t.observe_event(&escalated("4")), Sighting::Created("4".into()));
    assert_eq!((t.count(), t.status("3"), t.status("4")), (2, Some(FlagStatus::ResolvedApproved), Some(FlagStatus::PendingOfficer)));
    assert_eq!(t.status("5"), None);
}

#[test]
fn plain_and_json_encoded_values_name_the_same_flag() {
    let mut t = FlagTracker::new();
    t.observe_event(&emitted("7", "FLAG_STATUS_EMITTED"));
    let plain_resolve = plain(EVENT_FLAG_RESOLVED, &[("flag_id", "7"), ("decision", "APPROVED"), ("resolver", "lantau1officer")]);
    assert_eq!(t.observe_event(&plain_resolve), Sighting::Updated("7".into()));
    let numeric_status = json!({"type": EVENT_FLAG_EMITTED, "attributes": [{"key": "flag_id", "value": "7"}, {"key": "status", "value": "3"}]});
    assert_eq!(t.observe_event(&numeric_status), Sighting::Unchanged("7".into()));
    assert_eq!((t.count(), t.status("7")), (1, Some(FlagStatus::ResolvedApproved)));
}

#[test]
fn unreadable_flag_events_leave_the_tracker_untouched() {
    let mut t = FlagTracker::new();
    assert!(matches!(t.observe_event(&typed(EVENT_FLAG_EMITTED, &[("status", "FLAG_STATUS_EMITTED")])), Sighting::Malformed(_)));
    assert!(matches!(t.observe_event(&emitted("7", "FLAG_STATUS_SOMETHING")), Sighting::Malformed(_)));
    assert!(matches!(t.observe_event(&resolved("7", "ESCALATED")), Sighting::Malformed(_)));
    assert_eq!(t.observe_event(&transfer()), Sighting::Other);
    assert_eq!(t.observe_event(&json!("not an event")), Sighting::Other);
    assert_eq!(t.count(), 0);
}

#[test]
fn a_failed_transaction_is_skipped_and_a_committed_one_is_read() {
    let tx = |code: u32| -> TxResponse {
        serde_json::from_value(json!({"height": "12", "txhash": "ABC123", "code": code, "events": [transfer(), emitted("7", "FLAG_STATUS_EMITTED")]})).unwrap()
    };
    let mut t = FlagTracker::new();
    assert!(t.observe_tx(&tx(5)).is_empty());
    assert_eq!(t.observe_tx(&tx(0)), vec![Sighting::Created("7".into())]);
    assert_eq!(t.count(), 1);
}

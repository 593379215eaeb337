//! `review.rs`: MsgReviewFlag, MsgEscalateFlag (reviewer sub-key), MsgCloseFlag (officer
//! sub-key) over flag 1 (EMITTED, `threshold`, subject ALICE) raised at setup.

use cnidarium::StateDelta;
use lantau_compliance::msg::{Decide, Decision, EscalateFlag};
use lantau_compliance::{ComplianceMsg, FlagStatus, SubRole};
use lantau_kyc::Level;

use crate::*;

fn review(signer: Address, id: u64, decision: Decision) -> ComplianceMsg {
    ComplianceMsg::ReviewFlag(Decide { signer, flag_id: id, decision, evidence_hash: "ev-1".into() })
}

fn escalate(reviewer: Address, id: u64) -> ComplianceMsg {
    ComplianceMsg::EscalateFlag(EscalateFlag { reviewer, flag_id: id, officer_note_hash: "note-1".into() })
}

fn close(signer: Address, id: u64, decision: Decision) -> ComplianceMsg {
    ComplianceMsg::CloseFlag(Decide { signer, flag_id: id, decision, evidence_hash: "ev-2".into() })
}

fn status(f: &Flag) -> FlagStatus {
    FlagStatus::try_from(f.status).unwrap()
}

/// Asserts a failed message left flag 1 and the audit log as they were.
async fn unchanged(s: &Storage, before: &Flag, rows: u64) {
    assert_eq!(&flag(s, 1).await, before);
    assert_eq!(audit_rows(s).await, rows);
}

// === MsgReviewFlag ===

#[tokio::test]
async fn a_reviewer_approves_an_emitted_flag_which_becomes_resolved_approved() {
    let (_d, s) = setup().await;
    let events = run(&s, review(REVIEWER, 1, Decision::Approved)).await.unwrap();
    let f = flag(&s, 1).await;
    assert_eq!(status(&f), FlagStatus::ResolvedApproved);
    assert_eq!((f.resolution.as_str(), f.evidence_hash.as_str(), f.reviewer.as_str()), ("APPROVED", "ev-1", REVIEWER.to_bech32().as_str()));
    assert_eq!(f.updated_at.unwrap().seconds, T0);
    assert_eq!(f.created_at.unwrap().seconds, T0 - 5, "the creation time stays");
    assert_eq!(level(&s, &ALICE).await, Level::RetailPlus, "an approval blacklists nobody");

    assert_eq!(kinds(&events), ["EventFlagEmitted", "EventFlagResolved"]);
    assert_eq!(attr(&events, "EventFlagEmitted", "status").unwrap(), "FLAG_STATUS_RESOLVED_APPROVED");
    assert_eq!(attr(&events, "EventFlagResolved", "flag_id").unwrap(), "1");
    assert_eq!(attr(&events, "EventFlagResolved", "decision").unwrap(), "APPROVED");
    assert_eq!(attr(&events, "EventFlagResolved", "resolver").unwrap(), REVIEWER.to_bech32());
    assert_eq!(attr(&events, "EventFlagResolved", "evidence_hash").unwrap(), "ev-1");

    let row = audit_of(&s, "flag_review").await.pop().unwrap();
    assert_eq!((row.subject.as_str(), row.counterparty.as_str(), row.tx_hash.as_str()), (ALICE.to_bech32().as_str(), BOB.to_bech32().as_str(), TX_HASH));
    assert_eq!(row.amount.as_ref().map(|c| (c.denom.as_str(), c.amount.as_str())), Some((DENOM, "900000")));
    for (k, v) in [
        ("flag_id", "1"),
        ("reviewer", REVIEWER.to_bech32().as_str()),
        ("decorator", "threshold"),
        ("status", "FLAG_STATUS_RESOLVED_APPROVED"),
        ("decision", "APPROVED"),
        ("evidence_hash", "ev-1"),
    ] {
        assert_eq!(meta(&row, k), v, "{k}");
    }
}

#[tokio::test]
async fn a_reviewer_blocks_an_emitted_flag_and_its_subject_is_blacklisted_citing_the_flag() {
    let (_d, s) = setup().await;
    let rows = audit_rows(&s).await;
    let events = run(&s, review(REVIEWER, 1, Decision::Blocked)).await.unwrap();
    let f = flag(&s, 1).await;
    assert_eq!(status(&f), FlagStatus::ResolvedBlocked);
    assert_eq!(f.resolution, "BLOCKED");
    assert_eq!(level(&s, &ALICE).await, Level::Blacklisted);
    assert_eq!(kinds(&events), ["EventLevelChanged", "EventFlagEmitted", "EventFlagResolved"]);
    assert_eq!(attr(&events, "EventLevelChanged", "address").unwrap(), ALICE.to_bech32());
    assert_eq!(attr(&events, "EventLevelChanged", "reason").unwrap(), lantau_compliance::review::BLOCKED_REASON);
    assert_eq!(attr(&events, "EventLevelChanged", "evidence_ref").unwrap(), "flag/1");
    // The KYC module's `blacklist` row, then the review's.
    assert_eq!(audit_rows(&s).await, rows + 2);
    assert_eq!(audit_of(&s, "blacklist").await.len(), 1);
    let row = audit_of(&s, "flag_review").await.pop().unwrap();
    assert_eq!(meta(&row, "status"), "FLAG_STATUS_RESOLVED_BLOCKED");
    assert_eq!(meta(&row, "decision"), "BLOCKED");
}

#[tokio::test]
async fn a_review_that_escalates_hands_the_flag_to_an_officer_with_the_evidence_as_note() {
    let (_d, s) = setup().await;
    let events = run(&s, review(REVIEWER, 1, Decision::Escalated)).await.unwrap();
    let f = flag(&s, 1).await;
    assert_eq!(status(&f), FlagStatus::PendingOfficer);
    assert_eq!((f.reviewer.as_str(), f.officer_note_hash.as_str(), f.resolution.as_str()), (REVIEWER.to_bech32().as_str(), "ev-1", ""));
    assert_eq!(kinds(&events), ["EventFlagEmitted", "EventFlagEscalated"]);
    assert_eq!(attr(&events, "EventFlagEscalated", "officer_note_hash").unwrap(), "ev-1");
    assert_eq!(attr(&events, "EventFlagEscalated", "reviewer").unwrap(), REVIEWER.to_bech32());
    let row = audit_of(&s, "flag_review").await.pop().unwrap();
    assert_eq!(meta(&row, "status"), "FLAG_STATUS_PENDING_OFFICER");
    assert_eq!(meta(&row, "decision"), "ESCALATED");
    assert_eq!(level(&s, &ALICE).await, Level::RetailPlus);
}

// === MsgEscalateFlag ===

#[tokio::test]
async fn a_reviewer_escalates_an_emitted_flag_to_pending_officer_with_a_flag_escalate_row() {
    let (_d, s) = setup().await;
    let events = run(&s, escalate(REVIEWER, 1)).await.unwrap();
    let f = flag(&s, 1).await;
    assert_eq!(status(&f), FlagStatus::PendingOfficer);
    assert_eq!(f.officer_note_hash, "note-1");
    assert_eq!(f.reviewer, REVIEWER.to_bech32());
    assert_eq!(f.updated_at.unwrap().seconds, T0);
    assert_eq!(kinds(&events), ["EventFlagEmitted", "EventFlagEscalated"]);
    assert_eq!(attr(&events, "EventFlagEscalated", "officer_note_hash").unwrap(), "note-1");
    let row = audit_of(&s, "flag_escalate").await.pop().unwrap();
    assert_eq!(meta(&row, "officer_note_hash"), "note-1");
    assert_eq!(meta(&row, "reviewer"), REVIEWER.to_bech32());
    assert_eq!(meta(&row, "status"), "FLAG_STATUS_PENDING_OFFICER");
    assert!(audit_of(&s, "flag_review").await.is_empty());
}

// === MsgCloseFlag ===

#[tokio::test]
async fn an_officer_closes_a_pending_flag_approved_keeping_the_reviewer_and_recording_the_officer() {
    let (_d, s) = setup().await;
    run(&s, escalate(REVIEWER, 1)).await.unwrap();
    let events = run(&s, close(OFFICER, 1, Decision::Approved)).await.unwrap();
    let f = flag(&s, 1).await;
    assert_eq!(status(&f), FlagStatus::ResolvedApproved);
    assert_eq!((f.officer.as_str(), f.reviewer.as_str()), (OFFICER.to_bech32().as_str(), REVIEWER.to_bech32().as_str()));
    assert_eq!((f.resolution.as_str(), f.evidence_hash.as_str(), f.officer_note_hash.as_str()), ("APPROVED", "ev-2", "note-1"));
    assert_eq!(kinds(&events), ["EventFlagEmitted", "EventFlagResolved"]);
    assert_eq!(attr(&events, "EventFlagResolved", "resolver").unwrap(), OFFICER.to_bech32());
    let row = audit_of(&s, "flag_close").await.pop().unwrap();
    for (k, v) in [
        ("role", "officer"),
        ("reviewer", OFFICER.to_bech32().as_str()),
        ("decision", "APPROVED"),
        ("evidence_hash", "ev-2"),
        ("status", "FLAG_STATUS_RESOLVED_APPROVED"),
    ] {
        assert_eq!(meta(&row, k), v, "{k}");
    }
    assert_eq!(level(&s, &ALICE).await, Level::RetailPlus);
}

#[tokio::test]
async fn an_officer_closes_a_pending_flag_blocked_and_its_subject_is_blacklisted() {
    let (_d, s) = setup().await;
    run(&s, review(REVIEWER, 1, Decision::Escalated)).await.unwrap();
    let events = run(&s, close(OFFICER, 1, Decision::Blocked)).await.unwrap();
    assert_eq!(status(&flag(&s, 1).await), FlagStatus::ResolvedBlocked);
    assert_eq!(level(&s, &ALICE).await, Level::Blacklisted);
    assert_eq!(kinds(&events), ["EventLevelChanged", "EventFlagEmitted", "EventFlagResolved"]);
    assert_eq!(attr(&events, "EventLevelChanged", "evidence_ref").unwrap(), "flag/1");
    assert_eq!(meta(&audit_of(&s, "flag_close").await.pop().unwrap(), "decision"), "BLOCKED");
}

#[tokio::test]
async fn a_close_that_escalates_is_refused_by_the_handler_with_code_9() {
    let (_d, s) = setup().await;
    run(&s, escalate(REVIEWER, 1)).await.unwrap();
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    assert_eq!(code(run(&s, close(OFFICER, 1, Decision::Escalated)).await), ("compliance", 9));
    unchanged(&s, &before, rows).await;
}

// === status transitions refused ===

#[tokio::test]
async fn reviewing_escalating_or_closing_an_unknown_flag_is_refused_with_code_6() {
    let (_d, s) = setup().await;
    assert_eq!(code(run(&s, review(REVIEWER, 2, Decision::Approved)).await), ("compliance", 6));
    assert_eq!(code(run(&s, escalate(REVIEWER, 2)).await), ("compliance", 6));
    assert_eq!(code(run(&s, close(OFFICER, 2, Decision::Approved)).await), ("compliance", 6));
}

#[tokio::test]
async fn a_flag_that_is_not_emitted_cannot_be_reviewed_or_escalated_code_7() {
    let (_d, s) = setup().await;
    run(&s, escalate(REVIEWER, 1)).await.unwrap();
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    // PENDING_OFFICER.
    assert_eq!(code(run(&s, review(REVIEWER, 1, Decision::Approved)).await), ("compliance", 7));
    assert_eq!(code(run(&s, escalate(REVIEWER, 1)).await), ("compliance", 7));
    unchanged(&s, &before, rows).await;
    // Resolved.
    run(&s, close(OFFICER, 1, Decision::Approved)).await.unwrap();
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    assert_eq!(code(run(&s, review(REVIEWER, 1, Decision::Blocked)).await), ("compliance", 7));
    assert_eq!(code(run(&s, escalate(REVIEWER, 1)).await), ("compliance", 7));
    unchanged(&s, &before, rows).await;
    assert_eq!(level(&s, &ALICE).await, Level::RetailPlus);
}

#[tokio::test]
async fn a_flag_that_is_not_pending_officer_cannot_be_closed_code_8() {
    let (_d, s) = setup().await;
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    assert_eq!(code(run(&s, close(OFFICER, 1, Decision::Blocked)).await), ("compliance", 8), "EMITTED");
    unchanged(&s, &before, rows).await;
    assert_eq!(level(&s, &ALICE).await, Level::RetailPlus);
    run(&s, review(REVIEWER, 1, Decision::Approved)).await.unwrap();
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    assert_eq!(code(run(&s, close(OFFICER, 1, Decision::Blocked)).await), ("compliance", 8), "RESOLVED_APPROVED");
    unchanged(&s, &before, rows).await;
}

// === who may review and close ===

#[tokio::test]
async fn an_unbound_key_reviewing_or_escalating_gets_code_10_and_closing_code_12() {
    let (_d, s) = setup().await;
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    for signer in [FRESH, ISSUER, COMPLIANCE] {
        assert_eq!(code(run(&s, review(signer, 1, Decision::Approved)).await), ("compliance", 10));
        assert_eq!(code(run(&s, escalate(signer, 1)).await), ("compliance", 10));
    }
    run(&s, escalate(REVIEWER, 1)).await.unwrap();
    let (before2, rows2) = (flag(&s, 1).await, audit_rows(&s).await);
    for signer in [FRESH, ISSUER, COMPLIANCE] {
        assert_eq!(code(run(&s, close(signer, 1, Decision::Approved)).await), ("compliance", 12));
    }
    unchanged(&s, &before2, rows2).await;
    assert_eq!(before.status, FlagStatus::Emitted as i32);
    assert_eq!(rows2, rows + 1);
}

#[tokio::test]
async fn a_key_bound_to_another_role_is_refused_by_the_handler_too() {
    // The role gate refuses these first (11); the handler does not rely on it.
    let (_d, s) = setup().await;
    let mut d = StateDelta::new(s.latest_snapshot());
    put_binding(&mut d, RETAIL, FRESH, SubRole::Agent, None);
    s.commit(d).await.unwrap();
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    assert_eq!(code(run(&s, review(OFFICER, 1, Decision::Approved)).await), ("compliance", 10));
    assert_eq!(code(run(&s, escalate(OFFICER, 1)).await), ("compliance", 10));
    assert_eq!(code(run(&s, review(FRESH, 1, Decision::Approved)).await), ("compliance", 10), "an agent");
    unchanged(&s, &before, rows).await;
    run(&s, escalate(REVIEWER, 1)).await.unwrap();
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    assert_eq!(code(run(&s, close(REVIEWER, 1, Decision::Approved)).await), ("compliance", 12));
    assert_eq!(code(run(&s, close(FRESH, 1, Decision::Approved)).await), ("compliance", 12));
    unchanged(&s, &before, rows).await;
}

#[tokio::test]
async fn a_reviewer_revoked_in_an_earlier_block_is_refused_but_one_revoked_in_this_block_still_acts() {
    let (_d, s) = setup().await;
    // Revoked at the block's own time: effective from the next block.
    let mut d = StateDelta::new(s.latest_snapshot());
    put_binding(&mut d, ISSUER, REVIEWER, SubRole::Reviewer, Some(T0));
    s.commit(d).await.unwrap();
    run_in(&s, &block_at(7, T0), escalate(REVIEWER, 1)).await.unwrap();
    assert_eq!(status(&flag(&s, 1).await), FlagStatus::PendingOfficer);
    // The next block: refused.
    let f2 = raise_flag(&s).await;
    assert_eq!(code(run_in(&s, &block_at(8, T0 + 1), review(REVIEWER, f2, Decision::Approved)).await), ("compliance", 10));
    assert_eq!(status(&flag(&s, f2).await), FlagStatus::Emitted);
    // An officer revoked earlier cannot close.
    let mut d = StateDelta::new(s.latest_snapshot());
    put_binding(&mut d, ISSUER, OFFICER, SubRole::Officer, Some(T0 - 1));
    s.commit(d).await.unwrap();
    assert_eq!(code(run(&s, close(OFFICER, 1, Decision::Approved)).await), ("compliance", 12));
    assert_eq!(status(&flag(&s, 1).await), FlagStatus::PendingOfficer);
}

#[tokio::test]
async fn a_sub_key_whose_parent_no_longer_qualifies_delegates_nothing() {
    let (_d, s) = setup().await;
    set_level(&s, ISSUER, Level::Institutional).await;
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    assert_eq!(code(run(&s, review(REVIEWER, 1, Decision::Approved)).await), ("compliance", 10));
    assert_eq!(code(run(&s, escalate(REVIEWER, 1)).await), ("compliance", 10));
    unchanged(&s, &before, rows).await;
    // Licensed again: the reviewer acts; then the parent is blacklisted: the officer cannot close.
    set_level(&s, ISSUER, Level::LicensedIssuer).await;
    run(&s, escalate(REVIEWER, 1)).await.unwrap();
    set_level(&s, ISSUER, Level::Blacklisted).await;
    let (before, rows) = (flag(&s, 1).await, audit_rows(&s).await);
    assert_eq!(code(run(&s, close(OFFICER, 1, Decision::Approved)).await), ("compliance", 12));
    unchanged(&s, &before, rows).await;
}

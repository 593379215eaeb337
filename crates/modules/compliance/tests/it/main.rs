//! Unit tests of the compliance message handlers on a temporary store (docs/modules/compliance.md):
//! params, sanctions and rules (`params.rs`), the flag review workflow (`review.rs`) and
//! sub-role bindings and agent policies (`delegation.rs`). Each test sets state up through the
//! modules' typed writes (authorities, identities, bindings, a flag raised with
//! `FlagWrite::raise_flag` as the record step of a flagged transfer does), runs messages through
//! `MsgHandler::check_and_execute` in one committed delta each, and asserts state, events,
//! audit rows and `(codespace, code)`. The gate chain's codes (11, 13, 14, 18-21) are not a
//! handler's and are tested with the gates; the decoding codes (9, 24, 25, 26) with `msg.rs`.

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

mod delegation;
mod params;
mod review;

use std::time::Duration;

use cnidarium::{StateDelta, Storage};
use lantau_authority::AuthorityWrite;
use lantau_compliance::audit::scan;
use lantau_compliance::flags::{FlagRead, FlagWrite, NewFlag};
use lantau_compliance::state::ComplianceWrite;
use lantau_compliance::{AuditEntry, AuditFilter, AuditRead, ComplianceMsg, Flag, SubRole, SubRoleBinding};
use lantau_kyc::{Identity, KycRead, KycWrite, Level};
use lantau_module_api::{BlockCtx, Event, ExecCtx, GasMeter, MsgHandler, TxError};
use lantau_primitives::{Address, Coin};

// === fixtures ===

pub(crate) const GOVERNANCE: Address = Address([0xA0; 20]);
pub(crate) const COMPLIANCE: Address = Address([0xC0; 20]);
/// A LEVEL_LICENSED_ISSUER: the parent of the reviewer and the officer.
pub(crate) const ISSUER: Address = Address([0x15; 20]);
/// A LEVEL_RETAIL_BASIC account: may delegate an agent, nothing else.
pub(crate) const RETAIL: Address = Address([0x22; 20]);
/// Bound (at setup) as ISSUER's SUB_ROLE_REVIEWER.
pub(crate) const REVIEWER: Address = Address([0x0A; 20]);
/// Bound (at setup) as ISSUER's SUB_ROLE_OFFICER.
pub(crate) const OFFICER: Address = Address([0x0F; 20]);
/// A key without identity and without binding.
pub(crate) const FRESH: Address = Address([0x33; 20]);
/// The subject of the flag raised at setup (LEVEL_RETAIL_PLUS).
pub(crate) const ALICE: Address = Address([1; 20]);
pub(crate) const BOB: Address = Address([2; 20]);
pub(crate) const MALLORY: Address = Address([0x66; 20]);
pub(crate) const DENOM: &str = "hkd.demo";
pub(crate) const TX_HASH: &str = "ABCDEF0123";

/// The setup's block time (unix seconds); later blocks add to it.
pub(crate) const T0: i64 = 1_800_000_000;

pub(crate) fn block_at(height: u64, secs: i64) -> BlockCtx {
    let secs = u64::try_from(secs).unwrap();
    BlockCtx { height, time: (std::time::UNIX_EPOCH + Duration::from_secs(secs)).into(), chain_id: "lantau-test-1".into() }
}

pub(crate) fn block() -> BlockCtx {
    block_at(7, T0)
}

/// A store with both authorities, the default KYC params, identities (ISSUER licensed issuer,
/// RETAIL retail basic, ALICE retail plus, BOB institutional), ISSUER's reviewer and officer,
/// and flag 1 (EMITTED, `threshold`, subject ALICE).
pub(crate) async fn setup() -> (tempfile::TempDir, Storage) {
    let (dir, storage) = bare().await;
    let mut d = StateDelta::new(storage.latest_snapshot());
    put_binding(&mut d, ISSUER, REVIEWER, SubRole::Reviewer, None);
    put_binding(&mut d, ISSUER, OFFICER, SubRole::Officer, None);
    storage.commit(d).await.unwrap();
    assert_eq!(raise_flag(&storage).await, 1);
    (dir, storage)
}

/// Authorities, KYC params and identities; no binding, no flag.
pub(crate) async fn bare() -> (tempfile::TempDir, Storage) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
    let mut d = StateDelta::new(storage.latest_snapshot());
    let g = GasMeter::infinite();
    d.set_governance_authority(&g, &GOVERNANCE).unwrap();
    d.set_compliance_authority(&g, &COMPLIANCE).unwrap();
    d.put_kyc_params(&g, &lantau_kyc::tier::default_params()).unwrap();
    for (a, level) in [(ISSUER, Level::LicensedIssuer), (RETAIL, Level::RetailBasic), (ALICE, Level::RetailPlus), (BOB, Level::Institutional)] {
        put_identity(&mut d, a, level);
    }
    storage.commit(d).await.unwrap();
    (dir, storage)
}

pub(crate) fn put_identity(d: &mut StateDelta<cnidarium::Snapshot>, a: Address, level: Level) {
    let now = lantau_proto::Timestamp { seconds: T0 - 100, nanos: 0 };
    let id = Identity {
        address: a.to_bech32(),
        level: level as i32,
        vasp_identifier: "VASP-A".into(),
        ivms101_off_chain_ref: format!("ivms-{}", a.to_hex()),
        enrolled_at: Some(now),
        last_level_change: Some(now),
        expires_at: None,
    };
    d.put_identity(&GasMeter::infinite(), &a, &id).unwrap();
}

/// Writes a binding as the module's typed write stores it (`revoked_at` seconds: `None` active).
pub(crate) fn put_binding(d: &mut StateDelta<cnidarium::Snapshot>, parent: Address, sub: Address, role: SubRole, revoked_at: Option<i64>) {
    let b = SubRoleBinding {
        parent: parent.to_bech32(),
        sub_addr: sub.to_bech32(),
        role: role as i32,
        label: "desk".into(),
        revoked_at: Some(lantau_proto::Timestamp { seconds: revoked_at.unwrap_or(0), nanos: 0 }),
    };
    d.put_binding(&GasMeter::infinite(), &parent, &sub, &b).unwrap();
}

/// Changes `a`'s identity level in a committed delta of its own.
pub(crate) async fn set_level(storage: &Storage, a: Address, level: Level) {
    let mut d = StateDelta::new(storage.latest_snapshot());
    put_identity(&mut d, a, level);
    storage.commit(d).await.unwrap();
}

/// Raises an EMITTED `threshold` flag on ALICE → BOB, 900000 hkd.demo, as the record step of
/// a flagged transfer does. Returns its id.
pub(crate) async fn raise_flag(storage: &Storage) -> u64 {
    let mut d = StateDelta::new(storage.latest_snapshot());
    let new =
        NewFlag { decorator: "threshold", subject: ALICE, counterparty: BOB, amount: Coin::new(DENOM, 900_000u128), vasp: "VASP-A".into(), tx_hash: "FEED01" };
    let id = d.raise_flag(&GasMeter::infinite(), &block_at(6, T0 - 5), new, &mut Vec::new()).await.unwrap();
    storage.commit(d).await.unwrap();
    id
}

/// Runs `msg` in block [`block`]; see [`run_in`].
pub(crate) async fn run(storage: &Storage, msg: ComplianceMsg) -> Result<Vec<Event>, TxError> {
    run_in(storage, &block(), msg).await
}

/// Runs `msg` signed by its signer in a transaction of its own in `block`; commits only on
/// success.
pub(crate) async fn run_in(storage: &Storage, block: &BlockCtx, msg: ComplianceMsg) -> Result<Vec<Event>, TxError> {
    let mut d = StateDelta::new(storage.latest_snapshot());
    let gas = GasMeter::infinite();
    let mut ctx = ExecCtx::new(block, &gas, TX_HASH, msg.signer());
    msg.check_stateless()?;
    msg.check_and_execute(&mut d, &mut ctx).await?;
    let events = ctx.events;
    storage.commit(d).await.unwrap();
    Ok(events)
}

pub(crate) async fn flag(storage: &Storage, id: u64) -> Flag {
    storage.latest_snapshot().flag(&GasMeter::infinite(), id).await.unwrap().unwrap()
}

pub(crate) async fn level(storage: &Storage, a: &Address) -> Level {
    storage.latest_snapshot().identity(&GasMeter::infinite(), a).await.unwrap().map(|i| lantau_kyc::state::level_of(&i)).unwrap_or(Level::Unspecified)
}

pub(crate) async fn audit_rows(storage: &Storage) -> u64 {
    storage.latest_snapshot().audit_sequence(&GasMeter::infinite()).await.unwrap()
}

/// The audit rows of `tx_type`, in sequence order.
pub(crate) async fn audit_of(storage: &Storage, tx_type: &str) -> Vec<AuditEntry> {
    scan(&storage.latest_snapshot(), &AuditFilter { tx_type: Some(tx_type.into()), ..Default::default() }).await.unwrap()
}

pub(crate) fn meta<'a>(row: &'a AuditEntry, key: &str) -> &'a str {
    row.metadata.get(key).map(String::as_str).unwrap_or_else(|| panic!("no metadata {key} in {row:?}"))
}

/// The event kinds, with the typed events' package dropped (`EventFlagResolved`).
pub(crate) fn kinds(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.kind.rsplit('.').next().unwrap()).collect()
}

/// The value of attribute `key` of the first event whose kind ends with `kind`, a JSON
/// string's quotes removed.
pub(crate) fn attr(events: &[Event], kind: &str, key: &str) -> Option<String> {
    let e = events.iter().find(|e| e.kind.ends_with(kind))?;
    let v = e.attributes.iter().find(|a| a.key_bytes() == key.as_bytes())?.value_str().ok()?;
    Some(v.trim_matches('"').to_string())
}

pub(crate) fn code(r: Result<Vec<Event>, TxError>) -> (&'static str, u32) {
    let e = r.unwrap_err();
    (e.codespace, e.code)
}

//! Software upgrades as this binary applies them: the upgrade module (`lantau_upgrade`) keeps
//! the plan governance scheduled; here, at the start of every block, the binary decides what
//! the plan means for it, as the Cosmos SDK's x/upgrade does in its pre-block step:
//!
//! - no plan, or a plan whose height is ahead and whose name this binary does not apply: the
//!   block runs;
//! - the plan's height is reached and this binary applies it: every module whose recorded state
//!   version is below this binary's runs its migrations in order, in this block's writes,
//!   before any transaction; the upgrade is recorded as applied and the plan cleared;
//! - the plan's height is reached and this binary does not apply it: the block is not executed
//!   and the node stops, naming the upgrade ([`AppError::UpgradeNeeded`]);
//! - the plan's height is ahead and this binary applies it: the node stops
//!   ([`AppError::UpgradeTooEarly`]): the new binary started before the old one halted.
//!
//! At start ([`check_store`]) a store whose module versions differ from the binary's is
//! refused unless a pending plan this binary applies is about to migrate it.

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{event, BlockCtx, Event, GasMeter};
use lantau_upgrade::{UpgradeRead, UpgradeWrite};

use crate::error::AppError;
use crate::modules::{migrate, STATE_VERSIONS};

/// The upgrades this release applies (names of plans governance schedules for it), besides
/// any the configuration adds ([`crate::AppConfig::upgrade_handlers`]). Empty: no release
/// before this one changed a module's state version.
#[cfg(not(feature = "upgrade-test"))]
pub const RELEASE_HANDLERS: &[&str] = &[];
/// The test build of the upgrade path applies `lantau-upgrade-test` (the upgrade module's
/// migration to state version 2).
#[cfg(feature = "upgrade-test")]
pub const RELEASE_HANDLERS: &[&str] = &["lantau-upgrade-test"];

fn rec(e: lantau_module_api::TxError) -> AppError {
    AppError::BlockRecord(e)
}

/// Records every module's state version as this binary knows it (genesis).
pub(crate) fn init_versions<S: StateWrite + Send + Sync>(state: &mut S) -> Result<(), lantau_module_api::TxError> {
    let gas = GasMeter::infinite();
    for (name, v) in STATE_VERSIONS {
        state.set_module_version(&gas, name, *v)?;
    }
    Ok(())
}

/// Whether this binary applies upgrade `name`.
fn applies(handlers: &[String], name: &str) -> bool {
    RELEASE_HANDLERS.contains(&name) || handlers.iter().any(|h| h == name)
}

/// Runs the plan's decision at the start of the block at `block.height`; the events of an
/// applied upgrade (FinalizeBlock's block events).
pub(crate) async fn begin_block<S: StateWrite + Send + Sync>(state: &mut S, handlers: &[String], block: &BlockCtx) -> Result<Vec<Event>, AppError> {
    let gas = GasMeter::infinite();
    let Some(plan) = state.plan(&gas).await.map_err(rec)? else { return Ok(Vec::new()) };
    let at = u64::try_from(plan.height).unwrap_or(0);
    let known = applies(handlers, &plan.name);
    if block.height < at {
        if known {
            return Err(AppError::UpgradeTooEarly { name: plan.name, height: at });
        }
        return Ok(Vec::new());
    }
    if !known {
        return Err(AppError::UpgradeNeeded { name: plan.name, height: at, info: plan.info });
    }
    let mut events = Vec::new();
    let metered = GasMeter::infinite();
    for (name, target) in STATE_VERSIONS {
        let mut v = state.module_version(&gas, name).await.map_err(rec)?;
        if v > *target {
            return Err(AppError::StateVersion { module: name, stored: v, binary: *target });
        }
        while v < *target {
            let before = metered.used();
            migrate(state, name, v, &metered, block).await.map_err(|e| AppError::Migration { module: name, from: v, error: e })?;
            let next = v.saturating_add(1);
            state.set_module_version(&gas, name, next).map_err(rec)?;
            events.push(event(
                "module_migrated",
                [
                    ("module", (*name).to_string()),
                    ("from_version", v.to_string()),
                    ("to_version", next.to_string()),
                    ("gas_used", metered.used().saturating_sub(before).to_string()),
                ],
            ));
            v = next;
        }
    }
    state.mark_applied(&gas, &plan.name, block.height).map_err(rec)?;
    state.clear_plan(&gas).map_err(rec)?;
    tracing::info!(name = %plan.name, height = block.height, migrations = events.len(), "upgrade applied");
    events.push(event("upgrade_applied", [("name", plan.name), ("height", block.height.to_string()), ("gas_used", metered.used().to_string())]));
    Ok(events)
}

/// Refuses a store this binary cannot run on: a module recorded at a state version above this
/// binary's (a store of a later release), or below it without a pending plan this binary
/// applies (the upgrade that would migrate it).
pub(crate) async fn check_store<S: StateRead + Sync>(state: &S, handlers: &[String]) -> Result<(), AppError> {
    let gas = GasMeter::infinite();
    let pending = state.plan(&gas).await.map_err(rec)?.filter(|p| applies(handlers, &p.name));
    for (name, target) in STATE_VERSIONS {
        let v = state.module_version(&gas, name).await.map_err(rec)?;
        if v > *target || (v < *target && pending.is_none()) {
            return Err(AppError::StateVersion { module: name, stored: v, binary: *target });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use cnidarium::StateDelta;
    use cosmos_sdk_proto::cosmos::upgrade::v1beta1 as pb;
    use cosmos_sdk_proto::Any;
    use prost::Message as _;

    use super::*;
    use crate::probe::kit::*;
    use crate::{AppConfig, AppError};

    fn key(b: u8) -> lantau_crypto::SecretKey {
        lantau_crypto::SecretKey::from_bytes(&[b; 32]).unwrap()
    }

    fn schedule(authority: &lantau_crypto::SecretKey, name: &str, height: i64) -> Any {
        #[allow(deprecated)]
        let plan = pb::Plan { name: name.into(), height, info: format!("{name}: build of the same tree"), time: None, upgraded_client_state: None };
        Any {
            type_url: lantau_upgrade::MSG_SOFTWARE_UPGRADE.into(),
            value: pb::MsgSoftwareUpgrade { authority: authority.address().to_bech32(), plan: Some(plan) }.encode_to_vec(),
        }
    }

    fn with_handler(name: &str) -> AppConfig {
        AppConfig { upgrade_handlers: vec![name.to_string()], ..AppConfig::default() }
    }

    async fn query<M: prost::Message + Default>(app: &crate::App, method: &str, req: impl prost::Message) -> M {
        let bytes = crate::modules::query(&app.snapshot(), method, &req.encode_to_vec()).await.unwrap();
        M::decode(bytes.as_slice()).unwrap()
    }

    async fn plan(app: &crate::App) -> Option<pb::Plan> {
        query::<pb::QueryCurrentPlanResponse>(app, lantau_upgrade::query::CURRENT_PLAN, pb::QueryCurrentPlanRequest {}).await.plan
    }

    // Governance schedules an upgrade; a binary without its handler runs up to it and refuses
    // the block at its height (nothing of that block is kept); a binary with the handler
    // refuses to run before the height, and at the height applies it and goes on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_scheduled_upgrade_stops_the_old_binary_at_its_height_and_the_new_one_applies_it_there() {
        let (gov, other) = (key(7), key(8));
        let (dir, app) = start(&genesis(&[&gov, &other])).await;
        // Not governance: refused. In the past: refused.
        let r =
            block(&app, 1, vec![sign(&app, &other, 0, vec![schedule(&other, "v2", 10)]).await, sign(&app, &gov, 0, vec![schedule(&gov, "v2", 1)]).await]).await;
        assert_eq!((r.tx_results[0].codespace.as_str(), r.tx_results[0].code.value()), ("upgrade", 3), "{}", r.tx_results[0].log);
        assert_eq!((r.tx_results[1].codespace.as_str(), r.tx_results[1].code.value()), ("upgrade", 2), "{}", r.tx_results[1].log);
        app.commit().await.unwrap();
        assert_eq!(plan(&app).await, None);
        // Scheduled at 4.
        let r = block(&app, 2, vec![sign(&app, &gov, 1, vec![schedule(&gov, "v2", 4)]).await]).await;
        assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
        assert!(r.tx_results[0].events.iter().any(|e| e.kind == "upgrade_scheduled"));
        app.commit().await.unwrap();
        assert_eq!(plan(&app).await.map(|p| (p.name, p.height)), Some(("v2".to_string(), 4)));
        block(&app, 3, vec![bump(&app, &other, 1, false).await]).await;
        app.commit().await.unwrap();
        // The old binary stops at 4, before executing anything.
        let before = app.snapshot().version();
        let e = try_block(&app, 4, vec![bump(&app, &other, 2, false).await]).await.unwrap_err();
        assert!(matches!(&e, AppError::UpgradeNeeded { name, height: 4, .. } if name == "v2"), "{e}");
        assert!(e.to_string().starts_with("UPGRADE \"v2\" NEEDED at height: 4"), "{e}");
        assert!(app.commit().await.is_err(), "nothing of the refused block is staged");
        assert_eq!(app.snapshot().version(), before);
        app.release().await;

        // The new binary, started too early (a node replaying from before the height), refuses.
        let (dir2, early) = start_with(with_handler("v2"), &genesis(&[&gov, &other])).await;
        block(&early, 1, vec![sign(&early, &gov, 0, vec![schedule(&gov, "v2", 3)]).await]).await;
        early.commit().await.unwrap();
        let e = try_block(&early, 2, vec![]).await.unwrap_err();
        assert!(matches!(&e, AppError::UpgradeTooEarly { name, height: 3 } if name == "v2"), "{e}");
        early.release().await;
        drop(dir2);

        // The new binary at the height: the probe's state version 1 -> 2 (a test store of the
        // release before: its recorded version set back to 1) multiplies its counter by ten.
        let app = open(dir.path(), AppConfig::default()).await.unwrap();
        let mut d = StateDelta::new(app.snapshot());
        lantau_upgrade::UpgradeWrite::set_module_version(&mut d, &GasMeter::infinite(), "probe", 1).unwrap();
        app.storage().commit(d).await.unwrap();
        app.release().await;
        // A store at another version without a pending upgrade this binary applies is refused.
        let e = open(dir.path(), AppConfig::default()).await.err().unwrap();
        assert!(matches!(e, AppError::StateVersion { module: "probe", stored: 1, binary: 2 }), "{e}");
        let app = open(dir.path(), with_handler("v2")).await.unwrap();
        assert_eq!(counter_now(&app).await, 1);
        let r = block(&app, 4, vec![bump(&app, &other, 2, false).await]).await;
        assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
        let kinds: Vec<_> = r.events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["module_migrated", "upgrade_applied"]);
        app.commit().await.unwrap();
        // Migrated before the block's transactions: (1 * 10) + 1.
        assert_eq!(counter_now(&app).await, 11);
        assert_eq!(plan(&app).await, None);
        let applied: pb::QueryAppliedPlanResponse = query(&app, lantau_upgrade::query::APPLIED_PLAN, pb::QueryAppliedPlanRequest { name: "v2".into() }).await;
        assert_eq!(applied.height, 4);
        let versions: pb::QueryModuleVersionsResponse =
            query(&app, lantau_upgrade::query::MODULE_VERSIONS, pb::QueryModuleVersionsRequest { module_name: "probe".into() }).await;
        assert_eq!(versions.module_versions, vec![pb::ModuleVersion { name: "probe".into(), version: 2 }]);
        // An applied name cannot be scheduled again; the chain goes on.
        let r = block(&app, 5, vec![sign(&app, &gov, 2, vec![schedule(&gov, "v2", 9)]).await]).await;
        assert_eq!((r.tx_results[0].codespace.as_str(), r.tx_results[0].code.value()), ("upgrade", 4), "{}", r.tx_results[0].log);
        app.commit().await.unwrap();
        // A restart keeps it all.
        app.release().await;
        let app = open(dir.path(), with_handler("v2")).await.unwrap();
        assert_eq!(counter_now(&app).await, 11);
        block(&app, 6, vec![]).await;
        app.commit().await.unwrap();
    }

    // Cancelling clears the plan: the old binary runs past its height.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_upgrade_does_not_stop_the_chain() {
        let gov = key(9);
        let (_dir, app) = start(&genesis(&[&gov])).await;
        let cancel =
            Any { type_url: lantau_upgrade::MSG_CANCEL_UPGRADE.into(), value: pb::MsgCancelUpgrade { authority: gov.address().to_bech32() }.encode_to_vec() };
        block(&app, 1, vec![sign(&app, &gov, 0, vec![schedule(&gov, "v3", 3)]).await]).await;
        app.commit().await.unwrap();
        let r = block(&app, 2, vec![sign(&app, &gov, 1, vec![cancel]).await]).await;
        assert!(r.tx_results[0].events.iter().any(|e| e.kind == "upgrade_cancelled"), "{:?}", r.tx_results[0]);
        app.commit().await.unwrap();
        assert_eq!(plan(&app).await, None);
        block(&app, 3, vec![]).await;
        app.commit().await.unwrap();
    }
}

//! Queries at past heights from the node's history: every height answers as it did when it was
//! the latest (balances, accounts, identities, the audit log, flags, sanctions, sub-roles,
//! reports), beyond the versions cnidarium keeps open and after a restart; pruning keeps the
//! last N heights and refuses older ones clearly; with the history off only the open versions
//! answer.

use std::sync::Arc;

use futures::StreamExt;
use lantau_app::cnidarium::StateRead;
use lantau_app::history::Retention;
use lantau_app::tendermint::abci::request;
use lantau_app::{App, AppConfig, NoHook};

use crate::compliance_props::{block_req, history_with, Op};
use crate::export::{answers, fixed_ops};

/// `n` empty blocks after height `last`; the new last height.
async fn empty_blocks(app: &App, last: u64, n: u64) -> u64 {
    for h in last + 1..=last + n {
        app.finalize_block(block_req(h, vec![])).await.unwrap();
        app.commit().await.unwrap();
    }
    last + n
}

/// A longer history: transfers, a flag raised and reviewed, sanctions, the agent revoked.
fn ops() -> Vec<Op> {
    let mut ops = fixed_ops();
    ops.extend([Op::Transfer(2, 1, 7, 0), Op::Sanctions(true, false, false), Op::Transfer(2, 1, 7, 0), Op::Review(1, 1), Op::RevokeAgent, Op::Burn(50)]);
    ops
}

async fn abci(app: &App, path: &str, data: Vec<u8>, height: u64, prove: bool) -> lantau_app::tendermint::abci::response::Query {
    app.abci_query(request::Query { data: data.into(), path: path.into(), height: height.try_into().unwrap(), prove }).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_past_height_answers_as_it_did_then_also_after_a_restart() {
    let h = history_with(ops(), AppConfig::default(), true).await;
    // Beyond the versions cnidarium keeps open.
    let last = empty_blocks(&h.app, h.height, 12).await;
    assert_eq!(h.app.queries().earliest_height().await.unwrap(), 0, "the history starts at genesis");
    for (height, want) in &h.answers {
        assert_eq!(&answers(&h.app, &h.keys, *height).await, want, "height {height} answers otherwise now");
    }
    // abci_query: a raw key and a gRPC path at a past height; a proof only where cnidarium
    // keeps the version open.
    let r = abci(&h.app, "/store/key", b"app/height".to_vec(), 5, false).await;
    assert_eq!((r.code.value(), r.value.to_vec(), r.height.value()), (0, 5u64.to_be_bytes().to_vec(), 5));
    let r = abci(&h.app, "/store/key", b"app/height".to_vec(), 5, true).await;
    assert_eq!(r.code.value(), 26);
    assert!(r.log.contains("keeps values, not Merkle proofs"), "{}", r.log);
    let r = abci(&h.app, "/store/key", b"app/height".to_vec(), last - 1, true).await;
    assert_eq!(r.code.value(), 0, "{}", r.log);
    assert!(r.proof.is_some());

    // A restart: only the latest version is open; the history still answers every height.
    let dir = h._dir;
    let keys = h.keys.clone();
    h.app.release().await;
    let app = App::load(dir.path().to_path_buf(), AppConfig::default(), Arc::new(NoHook)).await.unwrap();
    for (height, want) in &h.answers {
        assert_eq!(&answers(&app, &keys, *height).await, want, "height {height} answers otherwise after a restart");
    }
    // A future height is refused as before.
    let r = abci(&app, "/store/key", b"app/height".to_vec(), last + 1, false).await;
    assert_eq!(r.code.value(), 26);
    app.release().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruning_keeps_the_last_heights_and_refuses_older_ones_clearly() {
    let keep = 15;
    let cfg = AppConfig { history: Retention::Recent(keep), ..AppConfig::default() };
    let h = history_with(ops(), cfg, true).await;
    let last = empty_blocks(&h.app, h.height, 12).await;
    let earliest = h.app.queries().earliest_height().await.unwrap();
    assert_eq!(earliest, last - keep, "pruning caught up with the horizon");
    let mut answered = 0;
    for (height, want) in h.answers.iter().filter(|(height, _)| **height >= earliest) {
        assert_eq!(&answers(&h.app, &h.keys, *height).await, want, "height {height} answers otherwise after pruning");
        answered += 1;
    }
    assert!(answered >= 3, "{answered} recorded heights above the horizon");
    // Below the horizon: refused, naming what the node keeps.
    let below = earliest - 1;
    let err = h.app.queries().grpc_query(below, "/cosmos.bank.v1beta1.Query/TotalSupply", &[]).await.unwrap_err().to_string();
    assert!(err.contains(&format!("height {below} is no longer kept by this node: it answers heights {earliest} to {last}")), "{err}");
    let r = abci(&h.app, "/store/key", b"app/height".to_vec(), below, false).await;
    assert_eq!(r.code.value(), 26, "{}", r.log);
    // A key written every block keeps about `keep` entries, not one per height.
    let mut group = b"history/v/app/height".to_vec();
    group.extend_from_slice(&[0, 0]);
    let entries = h.app.snapshot().nonverifiable_prefix_raw(&group).count().await;
    assert!(entries <= keep as usize + 2, "{entries} entries of app/height");
    // Records written once (anchored Travel Rule payloads) keep their one entry and are not
    // listed for pruning; keys that change (the height) get both; the audit log's rows and indexes
    // (sequenced: read at past heights from the latest state) get neither, and every past
    // height above still answered its audit log as it did then.
    let snap = h.app.snapshot();
    // What each height changed: a few rows per height listing its keys.
    let lists: Vec<Vec<u8>> = snap.nonverifiable_prefix_raw(b"history/c/").map(|r| r.unwrap().1).collect().await;
    assert!(lists.len() <= keep as usize + 2, "{} change lists for {keep} heights", lists.len());
    assert_eq!(snap.nonverifiable_prefix_raw(b"history/h/").count().await, 0, "no marker rows per key");
    let names = |p: &[u8]| lists.iter().map(|l| l.windows(p.len()).filter(|w| *w == p).count()).sum::<usize>();
    assert_eq!((names(b"compliance/audit/"), names(b"compliance/travel_rule/")), (0, 0), "markers of write-once records");
    assert!(names(b"app/height") >= keep as usize, "the height's changes are marked for pruning");
    let entries = snap.nonverifiable_prefix_raw(b"history/n/compliance/audit/").count().await;
    let appended = snap.nonverifiable_prefix_raw(b"compliance/audit/row/").count().await;
    assert!(appended > 0 && entries == 0, "{entries} history entries of {appended} audit rows");
    let anchors = snap.nonverifiable_prefix_raw(b"history/n/compliance/travel_rule/").count().await;
    assert!(anchors > 0, "the Travel Rule anchors have history entries");
    h.app.release().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_history_only_the_open_versions_answer() {
    let cfg = AppConfig { history: Retention::Off, ..AppConfig::default() };
    let h = history_with(ops(), cfg, true).await;
    let last = empty_blocks(&h.app, h.height, 12).await;
    // cnidarium keeps the last ten versions open.
    assert!(h.app.queries().earliest_height().await.unwrap() >= last - 10);
    assert!(h.app.queries().grpc_query(3, "/cosmos.bank.v1beta1.Query/TotalSupply", &[]).await.is_err());
    let rows = h.app.snapshot().nonverifiable_prefix_raw(b"history/").count().await;
    assert_eq!(rows, 0, "no history written");
    h.app.release().await;
}

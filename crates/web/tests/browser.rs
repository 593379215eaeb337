//! The two web faces in a real browser: Debian's chromium driven by playwright-core
//! (`tests/browser/e2e.mjs`), with an injected EIP-1193 wallet that signs with a key of the test.
//!
//! 1. A newcomer opens the portal, connects the wallet, adds the network, takes gas from the
//!    faucet, applies for an identity by signing the challenge, takes HKD, and sends a transfer.
//! 2. A large transfer raises a threshold flag; a reviewer opens the console, finds it, opens
//!    the case and escalates it with a note; an officer closes it BLOCKED; the subject's next
//!    transfer is refused with code 18.
//!
//! Screenshots of every page (1280x800 and a phone's 390x844) are kept in
//! `$LANTAU_ARTIFACTS/browser` (default `$CARGO_TARGET_DIR/lantau-artifacts/browser`).

#![allow(missing_docs, unused_crate_dependencies, clippy::disallowed_types, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use lantau_crypto::SecretKey;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use lantau_web::console::{Console, ConsoleConfig};
use lantau_web::portal::{Portal, PortalConfig};

mod support;
use support::*;

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/browser")
}

fn artifacts() -> PathBuf {
    let base = std::env::var_os("LANTAU_ARTIFACTS").map(PathBuf::from).unwrap_or_else(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
        target.join("lantau-artifacts")
    });
    base.join("browser")
}

/// A group's payment waiting for one approval.
struct PendingGroup {
    carol_before: u128,
}

/// ann and bob hold a group 2-of-2 with some gas money; bob proposes that it pays carol 5
/// alantau. ann gets gas money too.
async fn pending_group_payment(n: &TestNode, ann: &SecretKey) -> PendingGroup {
    use lantau_client::{msg_send, to_any, TxBuilder};
    use lantau_primitives::Coin;
    use lantau_proto::chain::group::v1 as gpb;
    let ok = |s: lantau_client::sender::Sent| assert!(s.is_success(), "{s:?}");
    ok(send(n, &dev_key("faucet"), TxBuilder::new(vec![msg_send(&dev_addr("faucet"), &ann.address(), &[Coin::new("alantau", 10u128.pow(18))])])).await);
    let bob = dev_key("bob");
    let members = vec![gpb::Member { address: ann.address().to_bech32(), weight: 1 }, gpb::Member { address: bob.address().to_bech32(), weight: 1 }];
    let create = gpb::MsgCreateGroup { creator: bob.address().to_bech32(), members, threshold: 2, voting_period: "3600s".into(), metadata: "treasury".into() };
    ok(send(n, &bob, TxBuilder::new(vec![to_any(&create)])).await);
    let g = n.client.query(&format!("/chain/group/v1/groups_by_member/{}", ann.address().to_bech32())).await.unwrap()["groups"][0]["address"]
        .as_str()
        .unwrap()
        .to_string();
    let group = lantau_primitives::Address::from_bech32(&g).unwrap();
    ok(send(n, &dev_key("alice"), TxBuilder::new(vec![msg_send(&dev_addr("alice"), &group, &[Coin::new("alantau", 1_000u128)])])).await);
    let pay = msg_send(&group, &dev_addr("carol"), &[Coin::new("alantau", 5u128)]);
    let propose = gpb::MsgSubmitProposal { group_address: g, proposer: bob.address().to_bech32(), messages: vec![pay], metadata: String::new(), exec: false };
    ok(send(n, &bob, TxBuilder::new(vec![to_any(&propose)])).await);
    PendingGroup { carol_before: n.client.balance(&dev_addr("carol"), "alantau").await.unwrap().0 }
}

/// Runs `e2e.mjs <phase>` with `env`, off the runtime's threads; fails the test with its output.
async fn e2e(phase: &'static str, env: Vec<(&'static str, String)>) {
    let dir = browser_dir();
    assert!(
        dir.join("node_modules/playwright-core").exists(),
        "playwright-core is not installed: run scripts/prereqs.sh (it installs tests/browser's npm packages and Debian's chromium)"
    );
    let out = tokio::task::spawn_blocking(move || {
        let mut c = Command::new("node");
        c.arg(dir.join("e2e.mjs")).arg(phase).env("ARTIFACTS_DIR", artifacts());
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("node runs")
    })
    .await
    .unwrap();
    eprintln!("e2e.mjs {phase}:\n{}", String::from_utf8_lossy(&out.stdout));
    assert!(out.status.success(), "e2e.mjs {phase} failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// A stop switch for the servers a test starts: flip the sender to true, and every future the
/// maker hands out ends.
fn stop_signal() -> (tokio::sync::watch::Sender<bool>, impl Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> + Clone) {
    let (tx, rx) = tokio::sync::watch::channel(false);
    let stopped = move || -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        let mut rx = rx.clone();
        Box::pin(async move {
            let _ = rx.wait_for(|s| *s).await;
        })
    };
    (tx, stopped)
}

async fn listener() -> (tokio::net::TcpListener, String) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    (l, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomer_onboards_and_a_flag_is_escalated_and_blocked_in_a_real_browser() {
    let n = TestNode::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (stop_tx, stopped) = stop_signal();

    // The portal, as `lantaud start --portal` runs it.
    let (pl, portal_url) = listener().await;
    let mut cfg =
        PortalConfig::dev(n.rest_url.clone(), n.eth_url.clone(), dev_key("faucet"), dev_key("issuer"), dev_key("registrar"), dir.path().join("portal"));
    cfg.listen = pl.local_addr().unwrap();
    let portal = Portal::new(cfg).await.unwrap();
    let portal_task = tokio::spawn(portal.serve(pl, stopped()));

    // Onboarding, all through the page.
    let newcomer = SecretKey::from_hex(&"5a".repeat(32)).unwrap();
    let alice = dev_key("alice");
    e2e(
        "onboarding",
        vec![
            ("PORTAL_URL", portal_url.clone()),
            ("EVM_RPC_URL", n.eth_url.clone()),
            ("NEWCOMER_KEY", format!("0x{}", newcomer.to_hex())),
            ("RECIPIENT", alice.address().to_hex()),
        ],
    )
    .await;
    // What the page did is on chain: an identity, both faucets, a transfer to alice.
    let id = n.client.identity(&newcomer.address()).await.unwrap().expect("the newcomer was enrolled");
    assert!(id.ivms101_off_chain_ref.starts_with("ivms101:sha256:"));
    assert!(n.client.balance(&newcomer.address(), "alantau").await.unwrap().0 > 0);
    let audit = n.client.query(&format!("/chain/compliance/v1/audit_log?subject={}&tx_type=transfer", newcomer.address().to_bech32())).await.unwrap();
    assert!(
        audit["entries"].as_array().unwrap().iter().any(|e| e["counterparty"] == alice.address().to_bech32()),
        "no transfer from the newcomer to alice: {audit}"
    );

    // A treasury group of ann and bob, 2 of 2, with bob's proposal to pay carol waiting for ann.
    let ann = SecretKey::from_hex(&"6b".repeat(32)).unwrap();
    let group = pending_group_payment(&n, &ann).await;

    // The issuer's reviewer and officer (bound at genesis) and ann share one desk: it holds
    // their keys and opens no session; each signs in with the wallet that holds their key.
    let (reviewer, officer) = (dev_key("reviewer"), dev_key("officer"));
    let (l, _) = listener().await;
    let addr = l.local_addr().unwrap();
    let mut cfg = ConsoleConfig::for_key(addr, n.rest_url.clone(), n.rpc_url.clone(), reviewer.clone(), "jane", dir.path().join("desk.db"));
    cfg.keys.push(("omar".into(), officer.clone()));
    cfg.keys.push(("ann".into(), ann.clone()));
    cfg.open_for = None;
    let desk = Console::new(cfg).await.unwrap();
    let desk_url = desk.url(addr);
    let consoles = vec![tokio::spawn(desk.serve(l, stopped()))];

    // A large transfer from alice raises a threshold flag.
    let flagged = raise_threshold_flag(&n).await;

    e2e(
        "review",
        vec![
            ("DESK_URL", desk_url),
            ("REVIEWER_KEY", format!("0x{}", reviewer.to_hex())),
            ("OFFICER_KEY", format!("0x{}", officer.to_hex())),
            ("MEMBER_KEY", format!("0x{}", ann.to_hex())),
            ("EVM_RPC_URL", n.eth_url.clone()),
            ("FLAG_TX_HASH", flagged.clone()),
        ],
    )
    .await;

    // The flag is closed BLOCKED, and alice's next transfer is refused with code 18.
    let flags = n.client.query(&format!("/chain/compliance/v1/flags?tx_hash={flagged}")).await.unwrap();
    let flag = &flags["flags"][0];
    assert_eq!((flag["status"].as_str(), flag["resolution"].as_str()), (Some("FLAG_STATUS_RESOLVED_BLOCKED"), Some("BLOCKED")), "{flags}");
    assert!(!flag["officer_note_hash"].as_str().unwrap_or("").is_empty(), "the escalation's note hash: {flags}");
    alices_next_transfer_is_refused_with_code_18(&n).await;
    // Ann's approval in the desk ran the group's payment.
    let carol = n.client.balance(&dev_addr("carol"), "alantau").await.unwrap().0;
    assert_eq!(carol, group.carol_before + 5, "the group's payment to carol");
    let shots =
        std::fs::read_dir(artifacts()).map(|d| d.filter_map(Result::ok).filter(|e| e.path().extension().is_some_and(|x| x == "png")).count()).unwrap_or(0);
    assert!(shots >= 8, "screenshots kept in {}: {shots}", artifacts().display());

    let _ = stop_tx.send(true);
    let _ = portal_task.await;
    for c in consoles {
        let _ = c.await;
    }
    n.stop().await;
}

/// The worklist over a thousand flags in a real browser: pages of fifty, a search by part of a
/// hash, the decorator and amount filters, the sort, the CSV of every match. The console talks to
/// a front of the test node that answers the Flags query with a thousand flags (raising that many
/// on chain would test the chain, not the page) and passes every other request to the node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worklist_pages_searches_sorts_and_exports_a_thousand_flags() {
    use axum::extract::{Request, State};
    use axum::response::IntoResponse;
    let n = TestNode::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (stop_tx, stopped) = stop_signal();
    let hash = |i: u32| const_hex::encode_upper(lantau_crypto::sha256(&i.to_be_bytes()));
    let flags: Vec<serde_json::Value> = (1..=1000u32)
        .map(|i| {
            let who = |tag: u8| lantau_primitives::Address([tag, (i >> 8) as u8, i as u8, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]).to_bech32();
            let at = time::OffsetDateTime::from_unix_timestamp(1_790_000_000 + i64::from(i) * 60).unwrap();
            let at = at.format(&time::format_description::well_known::Rfc3339).unwrap();
            serde_json::json!({
                "flag_id": i.to_string(), "status": "FLAG_STATUS_EMITTED", "decorator": if i % 2 == 0 { "velocity" } else { "threshold" },
                "resolution": "", "vasp": format!("VASP-{}", i % 7), "subject": who(1), "counterparty": who(2),
                "amount": {"denom": "hkd.demo", "amount": (800_000 + (u64::from(i) - 1) * 100).to_string()},
                "tx_hash": hash(i), "block_height": i.to_string(), "created_at": at, "updated_at": at,
                "reviewer": "", "officer_note_hash": "", "evidence_hash": "", "officer": ""
            })
        })
        .collect();
    let answer = serde_json::json!({"flags": flags, "pagination": {"next_key": null, "total": "1000"}});
    // The front: the Flags query answered, the rest passed to the node.
    let node = n.rest_url.clone();
    let front = axum::Router::new()
        .route("/chain/compliance/v1/flags", axum::routing::get(move || async move { axum::Json(answer) }))
        .fallback(|State(node): State<String>, req: Request| async move {
            let url = format!("{node}{}", req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/"));
            match reqwest::get(&url).await {
                Ok(r) => {
                    let status = axum::http::StatusCode::from_u16(r.status().as_u16()).unwrap();
                    (status, [(axum::http::header::CONTENT_TYPE, "application/json")], r.bytes().await.unwrap_or_default()).into_response()
                }
                Err(e) => (axum::http::StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
            }
        })
        .with_state(node);
    let (fl, front_url) = listener().await;
    let front_stop = stopped();
    let front_task = tokio::spawn(async move { axum::serve(fl, front).with_graceful_shutdown(front_stop).await });

    let (l, _) = listener().await;
    let addr = l.local_addr().unwrap();
    let c = Console::new(ConsoleConfig::for_key(addr, front_url, n.rpc_url.clone(), dev_key("reviewer"), "desk", dir.path().join("desk.db"))).await.unwrap();
    let url = c.url(addr);
    let console_task = tokio::spawn(c.serve(l, stopped()));
    e2e("worklist", vec![("WORKLIST_CONSOLE_URL", url), ("WANT_TX", hash(777)), ("WANT_ID", "777".into())]).await;
    stop_tx.send(true).unwrap();
    let _ = front_task.await;
    let _ = console_task.await;
    n.stop().await;
}

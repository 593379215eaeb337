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
use std::time::Duration;

use lantau_crypto::SecretKey;
use lantau_test_utils::{dev_key, TestNode};
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

async fn listener() -> (tokio::net::TcpListener, String) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    (l, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomer_onboards_and_a_flag_is_escalated_and_blocked_in_a_real_browser() {
    let n = TestNode::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };

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

    // The issuer's reviewer and officer (bound at genesis), each with a console.
    let (reviewer, officer) = (dev_key("reviewer"), dev_key("officer"));
    let mut consoles = vec![];
    let mut urls = vec![];
    for (k, name) in [(&reviewer, "desk"), (&officer, "mlro")] {
        let (l, _) = listener().await;
        let addr = l.local_addr().unwrap();
        let c = Console::new(ConsoleConfig {
            listen: addr,
            node: n.rest_url.clone(),
            rpc: n.rpc_url.clone(),
            key: k.clone(),
            key_name: name.into(),
            notes_path: dir.path().join(format!("{name}.jsonl")),
            token: None,
            confirm_timeout: Duration::from_secs(20),
        })
        .await
        .unwrap();
        urls.push(c.url(addr));
        consoles.push(tokio::spawn(c.serve(l, stopped())));
    }

    // A large transfer from alice raises a threshold flag.
    let flagged = raise_threshold_flag(&n).await;

    e2e("review", vec![("REVIEWER_CONSOLE_URL", urls[0].clone()), ("OFFICER_CONSOLE_URL", urls[1].clone()), ("FLAG_TX_HASH", flagged.clone())]).await;

    // The flag is closed BLOCKED, and alice's next transfer is refused with code 18.
    let flags = n.client.query(&format!("/chain/compliance/v1/flags?tx_hash={flagged}")).await.unwrap();
    let flag = &flags["flags"][0];
    assert_eq!((flag["status"].as_str(), flag["resolution"].as_str()), (Some("FLAG_STATUS_RESOLVED_BLOCKED"), Some("BLOCKED")), "{flags}");
    assert!(!flag["officer_note_hash"].as_str().unwrap_or("").is_empty(), "the escalation's note hash: {flags}");
    alices_next_transfer_is_refused_with_code_18(&n).await;
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

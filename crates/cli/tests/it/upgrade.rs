//! A software upgrade scheduled on chain with the CLI stops the real binary at its height,
//! with the Cosmos SDK's message, and the binary refuses that block again after a restart.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use lantau_client::RestClient;
use lantau_test_utils::poll;
use serde_json::Value;

use crate::crash::free_port;

pub(crate) fn lantaud(home: &std::path::Path, args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lantaud")).arg("--home").arg(home).args(["--output", "json"]).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    (out.status.success(), serde_json::from_str(&stdout).unwrap_or(Value::Null), format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)))
}

/// `lantaud start` on these ports, its log (stderr) appended to `log`.
pub(crate) fn start(home: &std::path::Path, api: u16, log: &std::path::Path) -> Child {
    start_with_eth(home, api, free_port(), log)
}

/// `start`, with the Ethereum JSON-RPC (HTTP) on `eth`.
pub(crate) fn start_with_eth(home: &std::path::Path, api: u16, eth: u16, log: &std::path::Path) -> Child {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
    Command::new(env!("CARGO_BIN_EXE_lantaud"))
        .args(["start", "--home"])
        .arg(home)
        .args(["--api.address", &format!("127.0.0.1:{api}"), "--rpc.laddr", &format!("127.0.0.1:{}", free_port()), "--block-time", "200ms"])
        .args(["--json-rpc.address", &format!("127.0.0.1:{eth}"), "--json-rpc.ws-address", &format!("127.0.0.1:{}", free_port())])
        .args(["--metrics.laddr", &format!("127.0.0.1:{}", free_port()), "--grpc.address", &format!("127.0.0.1:{}", free_port())])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

pub(crate) async fn height(base: &str) -> u64 {
    let v: Value = match reqwest::get(format!("{base}/cosmos/base/tendermint/v1beta1/blocks/latest")).await {
        Ok(r) => r.json().await.unwrap_or_default(),
        Err(_) => return 0,
    };
    v["block"]["header"]["height"].as_str().and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// Waits (bounded) for the child to exit.
pub(crate) async fn exited(child: &mut Child) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        assert!(std::time::Instant::now() < deadline, "the node did not stop at the upgrade height");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_upgrade_stops_the_embedded_node_at_its_height_and_a_restart_refuses_the_block() {
    let home = tempfile::tempdir().unwrap();
    let st = Command::new(env!("CARGO_BIN_EXE_lantaud")).args(["init", "--home"]).arg(home.path()).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let api = free_port();
    let base = format!("http://127.0.0.1:{api}");
    let log = home.path().join("node.log");
    let mut child = start(home.path(), api, &log);
    let client = RestClient::new(&base);
    poll(Duration::from_secs(60), || async { client.chain_id().await.is_ok() }).await.unwrap();

    // Every module's state version is recorded from genesis.
    let v: Value = reqwest::get(format!("{base}/cosmos/upgrade/v1beta1/module_versions")).await.unwrap().json().await.unwrap();
    let names: Vec<&str> = v["module_versions"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"bank") && names.contains(&"upgrade") && names.windows(2).all(|w| w[0] < w[1]), "{v}");
    for m in v["module_versions"].as_array().unwrap() {
        let want = lantau_app::modules::STATE_VERSIONS.iter().find(|(n, _)| m["name"] == *n).map(|(_, v)| v.to_string());
        assert_eq!(m["version"].as_str(), want.as_deref(), "{v}");
    }
    let r = reqwest::get(format!("{base}/cosmos/upgrade/v1beta1/module_versions?module_name=nope")).await.unwrap();
    assert_eq!(r.status(), 404);

    // Governance schedules it a few blocks ahead; anyone else is refused.
    let at = height(&base).await + 12;
    let (h, b) = (home.path().to_path_buf(), base.clone());
    let (ok, _, out) =
        tokio::task::spawn_blocking(move || lantaud(&h, &["tx", "upgrade", "schedule", "alice", "v-next", "--height", &at.to_string(), "--node", &b]))
            .await
            .unwrap();
    assert!(!ok && out.contains("governance authority"), "{out}");
    let (h, b) = (home.path().to_path_buf(), base.clone());
    let (ok, v, out) = tokio::task::spawn_blocking(move || {
        lantaud(&h, &["tx", "upgrade", "schedule", "governance", "v-next", "--height", &at.to_string(), "--info", "release 2", "--node", &b])
    })
    .await
    .unwrap();
    assert!(ok && v["code"] == 0, "{out}");
    let (h, b) = (home.path().to_path_buf(), base.clone());
    let (ok, v, out) = tokio::task::spawn_blocking(move || lantaud(&h, &["query", "upgrade", "plan", "--node", &b])).await.unwrap();
    assert!(ok, "{out}");
    assert_eq!((v["plan"]["name"].as_str(), v["plan"]["height"].as_str()), (Some("v-next"), Some(at.to_string().as_str())), "{v}");

    // This binary does not apply it: it stops before executing the block at `at`.
    let st = exited(&mut child).await;
    assert!(!st.success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains(&format!("UPGRADE \"v-next\" NEEDED at height: {at}: release 2")), "{text}");

    // Started again, it serves the state it has and refuses the same block again.
    std::fs::write(&log, "").unwrap();
    let mut child = start(home.path(), api, &log);
    let st = exited(&mut child).await;
    assert!(!st.success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains(&format!("UPGRADE \"v-next\" NEEDED at height: {at}")), "{text}");
}

//! Crash safety: `kill -9` of the real binary at an arbitrary moment loses nothing committed,
//! and a restart resumes at the next height on the same chain of block and app hashes.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use lantau_client::{msg_send, RestClient, SignerData, TxBuilder};
use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_test_utils::{dev_addr, dev_key, poll};
use serde_json::Value;

/// A loopback port free now, for a child node to bind. Picked in 10000-19999: below the
/// kernel's ephemeral range (32768 and up on Linux), where nodes started in-process on port 0
/// and every outgoing connection take theirs, and below the testnet's port blocks (20000 and
/// up). A port the kernel handed out as ephemeral and took back could be handed to another
/// socket before the child binds it (the child then fails to start, unseen).
pub(crate) fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let seed = std::process::id().wrapping_mul(7_919);
    for _ in 0..10_000 {
        let port = 10_000 + (seed.wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed)) % 10_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn spawn(home: &std::path::Path, api: u16, rpc: u16) -> Child {
    spawn_with(Command::new(env!("CARGO_BIN_EXE_lantaud")), home, api, rpc, "100ms")
}

/// Starts `lantaud start` through `cmd` (the binary, or a wrapper such as `prlimit` whose
/// arguments end with the binary) on these ports and block time.
pub(crate) fn spawn_with(cmd: Command, home: &std::path::Path, api: u16, rpc: u16, block_time: &str) -> Child {
    spawn_with_grpc(cmd, home, api, rpc, free_port(), block_time)
}

/// [`spawn_with`], with gRPC on `grpc`.
pub(crate) fn spawn_with_grpc(mut cmd: Command, home: &std::path::Path, api: u16, rpc: u16, grpc: u16, block_time: &str) -> Child {
    cmd.args(["start", "--home"])
        .arg(home)
        .args(["--api.address", &format!("127.0.0.1:{api}"), "--rpc.laddr", &format!("127.0.0.1:{rpc}"), "--block-time", block_time])
        // Free ports for the Ethereum JSON-RPC and the metrics too: their defaults (8545/8546,
        // 26660) are shared by every node the suite starts at once.
        .args(["--json-rpc.address", &format!("127.0.0.1:{}", free_port()), "--json-rpc.ws-address", &format!("127.0.0.1:{}", free_port())])
        .args(["--metrics.laddr", &format!("127.0.0.1:{}", free_port()), "--grpc.address", &format!("127.0.0.1:{grpc}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

async fn block(base: &str, h: u64) -> Option<Value> {
    let r = reqwest::get(format!("{base}/cosmos/base/tendermint/v1beta1/blocks/{h}")).await.ok()?;
    if r.status() != 200 {
        return None;
    }
    r.json().await.ok()
}

async fn height(client: &RestClient, base: &str) -> u64 {
    let _ = client;
    let v: Value = match reqwest::get(format!("{base}/cosmos/base/tendermint/v1beta1/blocks/latest")).await {
        Ok(r) => r.json().await.unwrap_or_default(),
        Err(_) => return 0,
    };
    v["block"]["header"]["height"].as_str().and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_minus_nine_loses_nothing_committed_and_restart_continues_the_chain() {
    let home = tempfile::tempdir().unwrap();
    let st = Command::new(env!("CARGO_BIN_EXE_lantaud")).args(["init", "--home"]).arg(home.path()).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let dev_accounts: Value = serde_json::from_slice(&std::fs::read(home.path().join("dev-accounts.json")).unwrap()).unwrap();
    assert_eq!(dev_accounts.as_array().unwrap().len(), lantau_node::home::DEV_ACCOUNT_NAMES.len());

    let (api, rpc) = (free_port(), free_port());
    let base = format!("http://127.0.0.1:{api}");
    let client = RestClient::new(&base);
    let mut child = spawn(home.path(), api, rpc);
    poll(Duration::from_secs(60), || async { client.chain_id().await.is_ok() }).await.unwrap();
    let chain_id = client.chain_id().await.unwrap();

    // Commit some transfers and remember them.
    let alice = dev_key("alice");
    let (num, _) = client.account(&alice.address()).await.unwrap().unwrap();
    let mut confirmed = Vec::new();
    for seq in 0..3u64 {
        let tx = TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, 1u128)])])
            .sign(&alice, &SignerData { chain_id: chain_id.clone(), account_number: num, sequence: seq });
        let b = client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap();
        assert_eq!(b.code, 0, "{}", b.raw_log);
        let r = client.wait_for_tx(&b.txhash, Duration::from_secs(30), Duration::from_millis(50)).await.unwrap();
        assert_eq!(r.code, 0);
        confirmed.push(b.txhash);
    }
    // Keep the node busy, then kill it without warning in the middle of it.
    for seq in 3..8u64 {
        let tx = TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, 1u128)])])
            .sign(&alice, &SignerData { chain_id: chain_id.clone(), account_number: num, sequence: seq });
        let _ = client.broadcast(&tx, "BROADCAST_MODE_SYNC").await;
    }
    let before = height(&client, &base).await;
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let mut child = spawn(home.path(), api, rpc);
    poll(Duration::from_secs(60), || async { height(&client, &base).await > before }).await.unwrap();
    for h in &confirmed {
        let r = client.tx(h).await.unwrap().expect("a committed tx survives kill -9");
        assert_eq!(r.code, 0);
    }
    // Every block links to its parent, from genesis to the new tip.
    let tip = height(&client, &base).await;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut prev: Option<(String, String)> = None;
    for h in 1..=tip {
        let b = block(&base, h).await.unwrap_or_else(|| panic!("block {h} missing"));
        let hash = const_hex::encode_upper(b64.decode(b["block_id"]["hash"].as_str().unwrap()).unwrap());
        let parts = const_hex::encode_upper(b64.decode(b["block_id"]["part_set_header"]["hash"].as_str().unwrap()).unwrap());
        if let Some((ph, pp)) = &prev {
            let last = &b["block"]["header"]["last_block_id"];
            assert_eq!(last["hash"].as_str().unwrap(), ph, "block {h} does not link to {}", h - 1);
            assert_eq!(last["parts"]["hash"].as_str().unwrap(), pp, "block {h}'s parent part set differs");
        }
        prev = Some((hash, parts));
    }
    // The sequence is exactly the number of committed transactions of alice.
    let seq = client.account(&alice.address()).await.unwrap().unwrap().1;
    let (total, _) = client.search(&format!("message.sender='{}'", alice.address()), false, 100).await.unwrap();
    assert_eq!(seq, total);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_on_a_fresh_home_creates_the_named_dev_accounts_with_their_roles() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("fresh");
    let (api, rpc) = (free_port(), free_port());
    let base = format!("http://127.0.0.1:{api}");
    let client = RestClient::new(&base);
    let mut child = spawn(&home, api, rpc);
    poll(Duration::from_secs(60), || async { client.chain_id().await.is_ok() }).await.unwrap();

    let accounts: Value = serde_json::from_slice(&std::fs::read(home.join("dev-accounts.json")).unwrap()).unwrap();
    let names: Vec<&str> = accounts.as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["governance", "compliance_authority", "issuer", "registrar", "auditor", "alice", "bob", "carol", "faucet", "reviewer", "officer", "treasury"]
    );
    let issuer = client.identity(&dev_addr("issuer")).await.unwrap().unwrap();
    assert_eq!(issuer.level, lantau_proto::chain::kyc::v1::Level::LicensedIssuer as i32);
    assert_eq!(client.balance(&dev_addr("alice"), "hkd.demo").await.unwrap().0, 100_000_000);

    child.kill().unwrap();
    child.wait().unwrap();
}

//! Cheap exhaustion attacks against the real binary, each while ordinary transfers keep
//! flowing: the chain keeps producing blocks, the transfers keep landing, the APIs keep
//! answering and the node's memory stays bounded (issue 15; bounded, loopback only).

use std::process::Command;
use std::time::{Duration, Instant};

use lantau_client::{msg_send, RestClient, SignerData, TxBuilder};
use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_test_utils::{dev_addr, dev_key, poll};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::crash::{free_port, spawn_with};

/// A process's resident memory (VmRSS), from /proc.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb: u64 = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse().ok()).unwrap_or(0);
    kb * 1024
}

/// Opens `n` sockets to `addr` that each send part of a request and never finish it: half stop
/// inside the headers, half announce a 1 GB body and send ten bytes of it.
async fn hoard(addr: &str, n: usize) -> Vec<TcpStream> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let Ok(mut s) = TcpStream::connect(addr).await else { continue };
        let partial: &[u8] = if i % 2 == 0 {
            b"GET /status HTTP/1.1\r\nHost: x\r\nX-Slow: "
        } else {
            b"POST / HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000000000\r\n\r\n{\"jsonrpc\""
        };
        let _ = s.write_all(partial).await;
        out.push(s);
    }
    out
}

/// Attack 4 of issue 15, as reported: 1,100 sockets on each of REST and the CometBFT RPC that
/// never finish their requests, against a node held to 1,024 descriptors (`prlimit`, hard and
/// soft), while alice sends bob a transfer after another through the same REST API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_that_never_finish_their_requests_do_not_stop_blocks_transfers_or_the_apis() {
    const BLOCK_MS: u64 = 500;
    let home = tempfile::tempdir().unwrap();
    let (api, rpc) = (free_port(), free_port());
    let (base, rpc_url) = (format!("http://127.0.0.1:{api}"), format!("http://127.0.0.1:{rpc}"));
    let mut cmd = Command::new("prlimit");
    cmd.args(["--nofile=1024:1024", "--", env!("CARGO_BIN_EXE_lantaud")]);
    if Command::new("prlimit").arg("--version").output().is_err() {
        cmd = Command::new(env!("CARGO_BIN_EXE_lantaud")); // without util-linux: the default limit
    }
    let mut child = spawn_with(cmd, home.path(), api, rpc, &format!("{BLOCK_MS}ms"));
    let client = RestClient::new(&base);
    poll(Duration::from_secs(60), || async { client.chain_id().await.is_ok() }).await.unwrap();
    let chain_id = client.chain_id().await.unwrap();
    let alice = dev_key("alice");
    let (num, mut seq) = client.account(&alice.address()).await.unwrap().unwrap();
    let pid = child.id();
    let rss_before = rss_bytes(pid);
    let first_height = latest_height(&base).await;

    let mut held = hoard(&format!("127.0.0.1:{api}"), 1_100).await;
    held.extend(hoard(&format!("127.0.0.1:{rpc}"), 1_100).await);
    assert!(held.len() > 2_000, "could not open the attack's sockets: {}", held.len());

    // Transfers through the attacked REST API, each confirmed; both APIs asked within a second.
    let quick = reqwest::Client::builder().timeout(Duration::from_secs(1)).build().unwrap();
    let started = Instant::now();
    let mut landed = 0;
    while started.elapsed() < Duration::from_secs(8) {
        let tx = TxBuilder::new(vec![msg_send(&alice.address(), &dev_addr("bob"), &[Coin::new(NATIVE_DENOM, 1u128)])])
            .sign(&alice, &SignerData { chain_id: chain_id.clone(), account_number: num, sequence: seq });
        let b = client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.expect("REST takes a broadcast under attack");
        assert_eq!(b.code, 0, "{}", b.raw_log);
        let r = client.wait_for_tx(&b.txhash, Duration::from_secs(10), Duration::from_millis(50)).await.expect("the transfer lands");
        assert_eq!(r.code, 0);
        seq += 1;
        landed += 1;
        let st = quick.get(format!("{rpc_url}/status")).send().await.expect("the CometBFT RPC answers within a second");
        assert_eq!(st.status(), 200);
    }
    let rss_attacked = rss_bytes(pid);
    drop(held);
    assert!(landed >= 4, "only {landed} transfers landed in 8 s of attack");

    // Blocks kept coming: no interval over three block times.
    let last_height = latest_height(&base).await;
    let mut times = Vec::new();
    for h in first_height..=last_height {
        let v: Value = reqwest::get(format!("{base}/cosmos/base/tendermint/v1beta1/blocks/{h}")).await.unwrap().json().await.unwrap();
        let t = v["block"]["header"]["time"].as_str().unwrap().to_string();
        times.push(time::OffsetDateTime::parse(&t, &time::format_description::well_known::Rfc3339).unwrap());
    }
    let widest = times.windows(2).map(|w| w[1] - w[0]).max().unwrap_or_default();
    // Memory: what the node holds for the attack's sockets stays small.
    let grown = rss_attacked.saturating_sub(rss_before);
    eprintln!(
        "attack: {landed} transfers landed, blocks {first_height}..={last_height}, widest interval {widest}, node RSS {} -> {} MiB",
        rss_before >> 20,
        rss_attacked >> 20
    );
    assert!(widest < time::Duration::milliseconds(3 * BLOCK_MS as i64), "a block came {widest} after the one before (block time {BLOCK_MS} ms)");
    assert!(grown < 128 << 20, "the node's resident memory grew by {} MiB under the attack", grown >> 20);
    child.kill().unwrap();
    child.wait().unwrap();
}

async fn latest_height(base: &str) -> u64 {
    let v: Value = reqwest::get(format!("{base}/cosmos/base/tendermint/v1beta1/blocks/latest")).await.unwrap().json().await.unwrap();
    v["block"]["header"]["height"].as_str().and_then(|s| s.parse().ok()).unwrap()
}

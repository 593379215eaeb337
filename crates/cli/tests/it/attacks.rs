//! Cheap exhaustion attacks against the real binary, each while ordinary transfers keep
//! flowing: the chain keeps producing blocks, the transfers keep landing, the APIs keep
//! answering and the node's memory stays bounded (bounded, loopback only).

use std::process::Command;
use std::time::{Duration, Instant};

use lantau_client::{msg_multi_send, msg_send, RestClient, SignerData, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::{Address, Coin, NATIVE_DENOM};
use lantau_test_utils::{dev_addr, dev_key, poll};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::crash::{free_port, spawn_with_grpc};

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

/// A dev chain in a child process, with what the attack tests read of it.
struct Chain {
    child: std::process::Child,
    base: String,
    rpc_url: String,
    client: RestClient,
    chain_id: String,
}

impl Drop for Chain {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Signs and submits transactions.
#[derive(Clone)]
struct Sender {
    client: RestClient,
    chain_id: String,
}

impl Sender {
    /// Signs `msgs` for `key` at `seq` and broadcasts SYNC (admission must accept it).
    async fn submit(&self, key: &SecretKey, seq: u64, b: TxBuilder) -> String {
        let (num, _) = self.client.account(&key.address()).await.unwrap().unwrap();
        let tx = b.sign(key, &SignerData { chain_id: self.chain_id.clone(), account_number: num, sequence: seq });
        let r = self.client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.expect("REST takes a broadcast");
        assert_eq!(r.code, 0, "{}", r.raw_log);
        r.txhash
    }

    /// `count` multi-sends of `outputs` fresh outputs each (one transfer event per output)
    /// from `key`, sent without waiting, each with the simulated gas of the first plus a
    /// fifth; the hashes.
    async fn multi_sends(&self, key: &SecretKey, count: u8, outputs: u16, tag: u8) -> Vec<String> {
        let (num, mut seq) = self.client.account(&key.address()).await.unwrap().unwrap();
        let build = |t: u8, gas: u64| {
            let outs: Vec<(Address, Vec<Coin>)> = (0..outputs)
                .map(|i| {
                    let mut a = [tag; 20];
                    a[0] = t;
                    a[1..3].copy_from_slice(&i.to_be_bytes());
                    (Address(a), vec![Coin::new(NATIVE_DENOM, 1u128)])
                })
                .collect();
            let msg = msg_multi_send(&key.address(), &[Coin::new(NATIVE_DENOM, u128::from(outputs))], &outs);
            TxBuilder::new(vec![msg]).gas(gas)
        };
        let probe = build(0, 30_000_000).sign(key, &SignerData { chain_id: self.chain_id.clone(), account_number: num, sequence: seq });
        let gas = self.client.simulate(&probe).await.expect("a multi-send simulates");
        let gas = (gas + gas / 5).min(30_000_000);
        let mut hashes = Vec::new();
        for t in 0..count {
            hashes.push(self.submit(key, seq, build(t, gas)).await);
            seq += 1;
        }
        hashes
    }
}

impl Chain {
    /// Starts the binary through `wrapper` (e.g. `prlimit --nofile=…`; empty: directly).
    async fn start(home: &std::path::Path, wrapper: &[&str], block_ms: u64) -> Chain {
        let cmd = match wrapper.split_first() {
            Some((prog, args)) if Command::new(prog).arg("--version").output().is_ok() => {
                let mut c = Command::new(prog);
                c.args(args).arg(env!("CARGO_BIN_EXE_lantaud"));
                c
            }
            _ => Command::new(env!("CARGO_BIN_EXE_lantaud")),
        };
        Chain::start_with(home, cmd, free_port(), block_ms).await
    }

    /// Starts `cmd` (the binary, or a wrapper ending with it) with gRPC on `grpc`.
    async fn start_with(home: &std::path::Path, cmd: Command, grpc: u16, block_ms: u64) -> Chain {
        let (api, rpc) = (free_port(), free_port());
        let child = spawn_with_grpc(cmd, home, api, rpc, grpc, &format!("{block_ms}ms"));
        let base = format!("http://127.0.0.1:{api}");
        let client = RestClient::new(&base);
        poll(Duration::from_secs(60), || async { client.chain_id().await.is_ok() }).await.unwrap();
        let chain_id = client.chain_id().await.unwrap();
        Chain { child, base, rpc_url: format!("http://127.0.0.1:{rpc}"), client, chain_id }
    }

    async fn latest_height(&self) -> u64 {
        let v: Value = reqwest::get(format!("{}/cosmos/base/tendermint/v1beta1/blocks/latest", self.base)).await.unwrap().json().await.unwrap();
        v["block"]["header"]["height"].as_str().and_then(|s| s.parse().ok()).unwrap()
    }

    /// The widest interval between consecutive blocks of `from..=to`.
    async fn widest_interval(&self, from: u64, to: u64) -> time::Duration {
        let mut times = Vec::new();
        for h in from..=to {
            let v: Value = reqwest::get(format!("{}/cosmos/base/tendermint/v1beta1/blocks/{h}", self.base)).await.unwrap().json().await.unwrap();
            let t = v["block"]["header"]["time"].as_str().unwrap().to_string();
            times.push(time::OffsetDateTime::parse(&t, &time::format_description::well_known::Rfc3339).unwrap());
        }
        times.windows(2).map(|w| w[1] - w[0]).max().unwrap_or_default()
    }

    /// What signs and submits transactions to this chain (usable from another task).
    fn sender(&self) -> Sender {
        Sender { client: self.client.clone(), chain_id: self.chain_id.clone() }
    }

    async fn submit(&self, key: &SecretKey, seq: u64, b: TxBuilder) -> String {
        self.sender().submit(key, seq, b).await
    }

    async fn multi_sends(&self, key: &SecretKey, count: u8, outputs: u16, tag: u8) -> Vec<String> {
        self.sender().multi_sends(key, count, outputs, tag).await
    }

    /// Ordinary transfers from `key`, each confirmed, and `/status` of the CometBFT RPC asked
    /// within a second after each, for `how_long`: how many landed.
    async fn steady_transfers(&self, key: &SecretKey, how_long: Duration) -> u32 {
        let quick = reqwest::Client::builder().timeout(Duration::from_secs(1)).build().unwrap();
        let (_, mut seq) = self.client.account(&key.address()).await.unwrap().unwrap();
        let started = Instant::now();
        let mut landed = 0;
        while started.elapsed() < how_long {
            let b = TxBuilder::new(vec![msg_send(&key.address(), &dev_addr("carol"), &[Coin::new(NATIVE_DENOM, 1u128)])]);
            let hash = self.submit(key, seq, b).await;
            let r = self.client.wait_for_tx(&hash, Duration::from_secs(10), Duration::from_millis(50)).await.expect("the transfer lands");
            assert_eq!(r.code, 0);
            seq += 1;
            landed += 1;
            let st = quick.get(format!("{}/status", self.rpc_url)).send().await.expect("the CometBFT RPC answers within a second");
            assert_eq!(st.status(), 200);
        }
        landed
    }

    /// The consensus parameter `block.max_gas`, from the node's genesis (-1, unlimited: the
    /// largest u64).
    async fn max_block_gas(&self) -> u64 {
        let v: Value = reqwest::get(format!("{}/genesis", self.rpc_url)).await.unwrap().json().await.unwrap();
        let g: i64 = v["result"]["genesis"]["consensus_params"]["block"]["max_gas"].as_str().and_then(|s| s.parse().ok()).expect("block.max_gas");
        u64::try_from(g).unwrap_or(u64::MAX)
    }

    /// The gas limits of block `h`'s transactions, summed.
    async fn block_gas_wanted(&self, h: u64) -> u64 {
        let v: Value = reqwest::get(format!("{}/block_results?height={h}", self.rpc_url)).await.unwrap().json().await.unwrap();
        let results = v["result"]["txs_results"].as_array().cloned().unwrap_or_default();
        results.iter().map(|r| r["gas_wanted"].as_str().and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)).sum()
    }

    /// The issue's bounds over an attack that ran from `first_height` until now: transfers kept
    /// landing, no block interval over three block times, the node's memory grew by less than
    /// `max_growth` (`rss`: before and during).
    async fn check_live(&self, what: &str, landed: u32, first_height: u64, block_ms: u64, rss: (u64, u64), max_growth: u64) {
        let last_height = self.latest_height().await;
        let widest = self.widest_interval(first_height, last_height).await;
        eprintln!(
            "{what}: {landed} transfers landed, blocks {first_height}..={last_height}, widest interval {widest}, node RSS {} -> {} MiB",
            rss.0 >> 20,
            rss.1 >> 20
        );
        assert!(landed >= 4, "{what}: only {landed} transfers landed during the attack");
        let bound = time::Duration::milliseconds(i64::try_from(3 * block_ms).unwrap());
        assert!(widest < bound, "{what}: a block came {widest} after the one before (block time {block_ms} ms)");
        let grown = rss.1.saturating_sub(rss.0);
        assert!(grown < max_growth, "{what}: the node's resident memory grew by {} MiB", grown >> 20);
    }

    /// Stops the node (also done on drop: a failing test leaves no node running).
    fn stop(self) {}
}

/// The multi-send attack: a funded account sends sixty multi-sends of 500 outputs each (~16.7
/// million gas with the charge for creating an account; one transaction's 30,000,000 buys ~900,
/// so the report's 1,000 do not fit), every output to an address that has never held anything (each
/// creates an account, a balance and index rows), as fast as REST takes them, while bob sends
/// ordinary transfers. No block
/// carries more than `block.max_gas`, so no block takes long to execute: blocks keep their
/// pace, the transfers keep landing (they pay the same fee per gas and are older than most of
/// the queue), every multi-send lands in time, and the node's memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_sends_to_fresh_addresses_fill_blocks_only_up_to_the_block_gas() {
    const BLOCK_MS: u64 = 1000;
    let home = tempfile::tempdir().unwrap();
    // The default block.max_gas is sized for a release build (docs/performance.md, "The gas
    // schedule"); this test runs the debug build, whose state machine is about four times as
    // slow (a block of 580,000,000 gas of these multi-sends took ~2.4 s here on a fast day), so
    // its genesis takes a sixth of the limit to keep a block within the bound on a slow day.
    if cfg!(debug_assertions) {
        let st = Command::new(env!("CARGO_BIN_EXE_lantaud")).args(["init", "--home"]).arg(home.path()).output().unwrap();
        assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
        let path = home.path().join("config/genesis.json");
        let mut g: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        g["consensus_params"]["block"]["max_gas"] = Value::String((lantau_node::node::DEFAULT_MAX_BLOCK_GAS / 6).to_string());
        std::fs::write(&path, serde_json::to_vec_pretty(&g).unwrap()).unwrap();
    }
    let chain = Chain::start(home.path(), &[], BLOCK_MS).await;
    let max_gas = chain.max_block_gas().await;
    let pid = chain.child.id();
    let rss_before = rss_bytes(pid);
    let first_height = chain.latest_height().await;

    let alice = dev_key("alice");
    let sender = chain.sender();
    let flood = tokio::spawn(async move { sender.multi_sends(&alice, 60, 500, 11).await });
    let landed = chain.steady_transfers(&dev_key("bob"), Duration::from_secs(15)).await;
    let rss_attacked = rss_bytes(pid);
    let hashes = flood.await.unwrap();
    let mut heights = std::collections::BTreeSet::new();
    for h in &hashes {
        let r = chain.client.wait_for_tx(h, Duration::from_secs(120), Duration::from_millis(200)).await.expect("every multi-send lands");
        assert_eq!(r.code, 0, "{}", r.raw_log);
        heights.insert(r.height.parse::<u64>().unwrap());
    }
    let last_height = chain.latest_height().await;
    let mut widest_gas = 0;
    for h in first_height..=last_height {
        widest_gas = widest_gas.max(chain.block_gas_wanted(h).await);
    }
    eprintln!("multi-sends: 60 landed in {} blocks; the fullest block wanted {widest_gas} gas of {max_gas}", heights.len());
    assert!(widest_gas <= max_gas, "a block wanted {widest_gas} gas, over block.max_gas {max_gas}");
    chain.check_live("multi-sends", landed, first_height, BLOCK_MS, (rss_before, rss_attacked), 512 << 20).await;
    chain.stop();
}

/// The socket attack, as reported: 1,100 sockets on each of REST and the CometBFT RPC that
/// never finish their requests, against a node held to 1,024 descriptors (`prlimit`, hard and
/// soft; without util-linux the default limit), while alice sends transfers one after another
/// through the same REST API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_that_never_finish_their_requests_do_not_stop_blocks_transfers_or_the_apis() {
    const BLOCK_MS: u64 = 500;
    let home = tempfile::tempdir().unwrap();
    let chain = Chain::start(home.path(), &["prlimit", "--nofile=1024:1024", "--"], BLOCK_MS).await;
    let pid = chain.child.id();
    let rss_before = rss_bytes(pid);
    let first_height = chain.latest_height().await;

    let addr = |url: &str| url.trim_start_matches("http://").to_string();
    let mut held = hoard(&addr(&chain.base), 1_100).await;
    held.extend(hoard(&addr(&chain.rpc_url), 1_100).await);
    assert!(held.len() > 2_000, "could not open the attack's sockets: {}", held.len());

    let landed = chain.steady_transfers(&dev_key("alice"), Duration::from_secs(8)).await;
    let rss_attacked = rss_bytes(pid);
    drop(held);
    chain.check_live("sockets", landed, first_height, BLOCK_MS, (rss_before, rss_attacked), 128 << 20).await;
    chain.stop();
}

/// The HTTP/2 connection preface, all that the half-open gRPC sockets ever send.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Opens `n` sockets to `addr` that send the HTTP/2 preface and nothing more.
async fn preface_only(addr: &str, n: usize) -> Vec<TcpStream> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let Ok(mut s) = TcpStream::connect(addr).await else { continue };
        let _ = s.write_all(H2_PREFACE).await;
        out.push(s);
    }
    out
}

/// A well-behaved gRPC client on a fresh HTTP/2 connection: `GetNodeInfo`, the network it
/// answers (`None` on any failure, a status other than OK included).
async fn grpc_network(addr: &str) -> Option<String> {
    use cosmos_sdk_proto::cosmos::base::tendermint::v1beta1::GetNodeInfoResponse;
    use prost::Message as _;
    let tcp = TcpStream::connect(addr).await.ok()?;
    let (client, conn) = h2::client::handshake(tcp).await.ok()?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut client = client.ready().await.ok()?;
    let req = http::Request::post(format!("http://{addr}/cosmos.base.tendermint.v1beta1.Service/GetNodeInfo"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .ok()?;
    let (answer, mut send) = client.send_request(req, false).ok()?;
    // One message: uncompressed, zero bytes long (an empty GetNodeInfoRequest).
    send.send_data(bytes::Bytes::from_static(&[0, 0, 0, 0, 0]), true).ok()?;
    let answer = answer.await.ok()?;
    if answer.status() != 200 {
        return None;
    }
    let mut body = answer.into_body();
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.ok()?;
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
    }
    let trailers = body.trailers().await.ok()??;
    if trailers.get("grpc-status")?.to_str().ok()? != "0" {
        return None;
    }
    Some(GetNodeInfoResponse::decode(data.get(5..)?).ok()?.default_node_info?.network)
}

/// Item 4 of the security issue: 1,100 sockets on gRPC that send the HTTP/2 preface and
/// nothing more, against a node held to 1,024 descriptors (soft and hard limit, set in the
/// child before it runs `lantaud`). gRPC counts its connections within its share of the
/// descriptors and closes the oldest that never began a call for a new one, so REST, the
/// CometBFT RPC and a fresh gRPC client keep being answered and transfers keep landing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_grpc_sockets_do_not_take_the_apis_down() {
    use std::os::unix::process::CommandExt as _;
    const BLOCK_MS: u64 = 500;
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lantaud"));
    // SAFETY: the closure runs in the child between fork and exec and only calls setrlimit,
    // which is async-signal-safe, on a value on its own stack.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: 1_024, rlim_max: 1_024 };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let grpc = free_port();
    let chain = Chain::start_with(home.path(), cmd, grpc, BLOCK_MS).await;
    let grpc_addr = format!("127.0.0.1:{grpc}");
    assert_eq!(grpc_network(&grpc_addr).await.as_deref(), Some(chain.chain_id.as_str()), "gRPC answers before the attack");

    let held = preface_only(&grpc_addr, 1_100).await;
    assert!(held.len() >= 1_000, "could not open the attack's sockets: {}", held.len());

    let quick = reqwest::Client::builder().timeout(Duration::from_secs(2)).build().unwrap();
    let node_info = format!("{}/cosmos/base/tendermint/v1beta1/node_info", chain.base);
    poll(Duration::from_secs(30), || async { quick.get(&node_info).send().await.is_ok_and(|r| r.status() == 200) })
        .await
        .expect("REST answers while the half-open gRPC sockets are held");
    poll(Duration::from_secs(30), || async {
        tokio::time::timeout(Duration::from_secs(5), grpc_network(&grpc_addr)).await.ok().flatten().as_deref() == Some(chain.chain_id.as_str())
    })
    .await
    .expect("a fresh gRPC client is answered while the half-open sockets are held");
    let landed = chain.steady_transfers(&dev_key("alice"), Duration::from_secs(3)).await;
    assert!(landed >= 1, "no transfer landed");
    drop(held);
    chain.stop();
}

/// The large-transaction attack: large transactions (multi-sends of 200 fresh outputs), then eight
/// clients asking at once, again and again, for the broadest searches and the whole audit log,
/// while bob sends ordinary transfers. Every answer is a page within the response cap or a
/// 400 saying how to narrow the query, never a 5xx; blocks, transfers and the RPC keep going.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_broad_queries_does_not_stop_blocks_transfers_or_the_apis() {
    const BLOCK_MS: u64 = 500;
    let home = tempfile::tempdir().unwrap();
    let chain = Chain::start(home.path(), &[], BLOCK_MS).await;
    let alice = dev_key("alice");
    let sent = chain.multi_sends(&alice, 20, 200, 7).await;
    let last = sent.last().unwrap();
    chain.client.wait_for_tx(last, Duration::from_secs(60), Duration::from_millis(100)).await.expect("the multi-sends land");

    let pid = chain.child.id();
    let rss_before = rss_bytes(pid);
    let first_height = chain.latest_height().await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let urls = [
        format!("{}/cosmos/tx/v1beta1/txs?query=message.sender='{}'&limit=100", chain.base, alice.address()),
        format!("{}/cosmos/tx/v1beta1/txs?query=tx.height>0&limit=100&order_by=ORDER_BY_DESC", chain.base),
        format!("{}/chain/compliance/v1/audit_log", chain.base),
        format!("{}/tx_search?query=\"tx.height>0\"&per_page=100", chain.rpc_url),
    ];
    let mut flood = Vec::new();
    for c in 0..8usize {
        let (stop, url) = (stop.clone(), urls[c % urls.len()].clone());
        flood.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut answers = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let r = http.get(&url).send().await.expect("the server answers");
                let status = r.status().as_u16();
                let _ = r.bytes().await;
                assert!(status == 200 || status == 400, "{url}: HTTP {status}");
                answers += 1;
            }
            answers
        }));
    }
    let landed = chain.steady_transfers(&dev_key("bob"), Duration::from_secs(8)).await;
    let rss_attacked = rss_bytes(pid);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answered = 0;
    for f in flood {
        answered += f.await.unwrap();
    }
    eprintln!("queries: {answered} broad queries answered");
    chain.check_live("queries", landed, first_height, BLOCK_MS, (rss_before, rss_attacked), 512 << 20).await;
    chain.stop();
}

/// The subscribers' attack: thirty WebSocket subscribers to every transaction (half of them never
/// read) and thirty large transactions (multi-sends of 200 outputs, 200 transfer events each),
/// while bob sends transfers. Event delivery never waits for a subscriber: once the large
/// transactions have executed, blocks keep their pace while their events are delivered,
/// `/status` answers within a second, every reading subscriber gets every event, and the ones
/// that never read hold nothing up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_that_do_not_read_do_not_stop_blocks_transfers_or_the_apis() {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    const BLOCK_MS: u64 = 500;
    let home = tempfile::tempdir().unwrap();
    let chain = Chain::start(home.path(), &[], BLOCK_MS).await;
    let ws_url = format!("{}/websocket", chain.rpc_url.replace("http://", "ws://"));
    let subscribe = r#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"query":"tm.event='Tx'"}}"#;
    let mut readers = Vec::new();
    let mut idle = Vec::new();
    for i in 0..30 {
        let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url).await.expect("websocket connects");
        ws.send(Message::text(subscribe)).await.unwrap();
        let ack = ws.next().await.expect("an answer").unwrap();
        assert!(ack.to_text().unwrap().contains("\"result\":{}"), "{ack:?}");
        if i % 2 == 0 {
            readers.push(tokio::spawn(async move {
                let mut events = 0u32;
                while let Some(Ok(m)) = ws.next().await {
                    if m.is_text() {
                        events += 1;
                    }
                }
                events
            }));
        } else {
            idle.push(ws); // subscribed, never read
        }
    }
    let pid = chain.child.id();
    let rss_before = rss_bytes(pid);
    let sent = chain.multi_sends(&dev_key("alice"), 30, 200, 9).await;
    // Measured from the block after they executed (what executing them costs is the multi-send attack's):
    // their events reach the subscribers during the window.
    let landed_at = chain
        .client
        .wait_for_tx(sent.last().unwrap(), Duration::from_secs(60), Duration::from_millis(50))
        .await
        .expect("the multi-sends land")
        .height
        .parse::<u64>()
        .unwrap();
    let first_height = landed_at + 1;
    poll(Duration::from_secs(10), || async { chain.latest_height().await >= first_height }).await.unwrap();
    let landed = chain.steady_transfers(&dev_key("bob"), Duration::from_secs(8)).await;
    let rss_attacked = rss_bytes(pid);
    chain.check_live("subscribers", landed, first_height, BLOCK_MS, (rss_before, rss_attacked), 512 << 20).await;
    drop(idle);
    chain.stop(); // ends the readers' streams
    let mut delivered = Vec::new();
    for r in readers {
        delivered.push(r.await.unwrap());
    }
    eprintln!("subscribers: events per reader {delivered:?}");
    assert!(delivered.iter().all(|n| *n >= 30), "a reading subscriber missed events: {delivered:?}");
}

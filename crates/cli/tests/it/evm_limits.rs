//! Attacks on the Ethereum JSON-RPC's calls against the real binary: a call asking for all the
//! gas in the world ends in an error within its limits and with the node's memory bounded; a
//! call past its time is aborted; a call whose client went away stops and frees its slot; a
//! deployment whose init code can never run is refused at submission.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use lantau_test_utils::{dev_key, poll};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use crate::crash::free_port;

/// Init code that writes a new storage slot (keyed by the gas left) on every turn, forever:
/// `JUMPDEST PUSH1 1 GAS SSTORE PUSH1 0 JUMP`.
const STORING_LOOP: &str = "0x5b60015a55600056";
/// Init code that loops forever touching nothing: `JUMPDEST PUSH1 0 JUMP`.
const SPINNING_LOOP: &str = "0x5b600056";

/// A dev chain in a child process; `eth_call` limits set in its config file.
struct Node {
    child: Child,
    eth: String,
    _home: tempfile::TempDir,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Node {
    /// `limits`: (gas cap, timeout in ms, calls at once), or the defaults.
    async fn start(limits: Option<(u64, u64, usize)>) -> Node {
        let home = tempfile::tempdir().unwrap();
        let st = Command::new(env!("CARGO_BIN_EXE_lantaud")).args(["init", "--home"]).arg(home.path()).output().unwrap();
        assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
        if let Some((gas_cap, timeout_ms, max_concurrent)) = limits {
            let path = home.path().join("config/config.toml");
            let text = std::fs::read_to_string(&path).unwrap();
            let at = text.find("[eth_call]").expect("an [eth_call] section");
            let end = text[at + 1..].find("\n[").map_or(text.len(), |i| at + 1 + i);
            let section = format!("[eth_call]\ngas_cap = {gas_cap}\ntimeout_ms = {timeout_ms}\nmax_concurrent = {max_concurrent}\n");
            std::fs::write(&path, format!("{}{section}{}", &text[..at], &text[end..])).unwrap();
        }
        let eth_port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_lantaud"))
            .args(["start", "--home"])
            .arg(home.path())
            .args(["--api.address", &format!("127.0.0.1:{}", free_port()), "--rpc.laddr", &format!("127.0.0.1:{}", free_port())])
            .args(["--json-rpc.address", &format!("127.0.0.1:{eth_port}"), "--json-rpc.ws-address", &format!("127.0.0.1:{}", free_port())])
            .args(["--metrics.laddr", &format!("127.0.0.1:{}", free_port()), "--grpc.address", &format!("127.0.0.1:{}", free_port())])
            .args(["--block-time", "200ms"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let node = Node { child, eth: format!("127.0.0.1:{eth_port}"), _home: home };
        let http = reqwest::Client::new();
        poll(Duration::from_secs(60), || async { node.rpc(&http, "eth_chainId", json!([])).await.is_some() }).await.unwrap();
        node
    }

    /// One request; `None` when the node did not answer.
    async fn rpc(&self, http: &reqwest::Client, method: &str, params: Value) -> Option<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        http.post(format!("http://{}", self.eth)).json(&body).send().await.ok()?.json().await.ok()
    }

    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok()).unwrap_or(0) * 1024
    }
}

fn call(data: &str, gas: &str) -> Value {
    json!([{"from": dev_key("alice").address().to_hex(), "data": data, "gas": gas}, "latest"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eth_call_with_all_the_gas_there_is_ends_in_out_of_gas_within_the_cap_and_bounded_memory() {
    let node = Node::start(None).await;
    let http = reqwest::Client::new();
    let before = node.rss();
    // Attack: two at once, each asking 2^64-1 gas of a loop that writes a new slot per turn
    // (uncapped, they took a node past 22 GB).
    let max = "0xffffffffffffffff";
    let (a, b, e) = tokio::join!(
        node.rpc(&http, "eth_call", call(STORING_LOOP, max)),
        node.rpc(&http, "eth_call", call(STORING_LOOP, max)),
        node.rpc(&http, "eth_estimateGas", call(STORING_LOOP, max)),
    );
    for r in [a, b] {
        let r = r.expect("the node answers");
        // Capped at 50M gas, the loop runs out of it, said as geth says it.
        assert_eq!(r["error"]["code"], -32000, "{r}");
        assert_eq!(r["error"]["message"], "out of gas", "{r}");
    }
    let e = e.expect("the node answers the estimate");
    assert!(e["error"]["message"].as_str().is_some_and(|m| m.contains("out of gas")), "{e}");
    let grown = node.rss().saturating_sub(before);
    assert!(grown < 256 << 20, "the node grew by {} MiB", grown >> 20);
    // And it goes on answering.
    assert!(node.rpc(&http, "eth_blockNumber", json!([])).await.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_time_is_aborted() {
    // A gas cap so high that only the clock stops the loop.
    let node = Node::start(Some((1_000_000_000_000_000, 1_000, 2))).await;
    let http = reqwest::Client::new();
    let r = node.rpc(&http, "eth_call", call(SPINNING_LOOP, "0xffffffffffffffff")).await.expect("the node answers");
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert_eq!(r["error"]["message"], "execution aborted (timeout = 1s)", "{r}");
    let r = node.rpc(&http, "eth_estimateGas", call(SPINNING_LOOP, "0xffffffffffffffff")).await.expect("the node answers");
    assert_eq!(r["error"]["message"], "execution aborted (timeout = 1s)", "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_client_went_away_stops_and_frees_its_slot() {
    // One call at a time, and a time limit far longer than the client below waits.
    let node = Node::start(Some((1_000_000_000_000_000, 120_000, 1))).await;
    let http = reqwest::Client::new();
    // A client starts an endless call and holds its connection.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": call(SPINNING_LOOP, "0xffffffffffffffff")}).to_string();
    let mut sock = tokio::net::TcpStream::connect(&node.eth).await.unwrap();
    let req = format!("POST / HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len());
    sock.write_all(req.as_bytes()).await.unwrap();
    // Until its call holds the one slot, a quick call answers; once it does, quick calls wait.
    let quick = || {
        let http = http.clone();
        let url = format!("http://{}", node.eth);
        async move {
            let body = json!({"jsonrpc": "2.0", "id": 2, "method": "eth_call", "params": call("0x00", "0x100000")});
            http.post(url).json(&body).timeout(Duration::from_millis(500)).send().await
        }
    };
    poll(Duration::from_secs(30), || async { quick().await.is_err() }).await.expect("the endless call never held the slot");
    // The client goes away: its call stops, and the slot serves the next call long before the
    // endless one's own time limit.
    drop(sock);
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "eth_call", "params": call("0x00", "0x100000")});
    let r: Value =
        http.post(format!("http://{}", node.eth)).json(&body).timeout(Duration::from_secs(60)).send().await.expect("the slot was freed").json().await.unwrap();
    assert_eq!(r["result"], "0x", "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_that_can_never_run_is_refused_at_submission() {
    use lantau_client::eth::{sign, Unsigned};
    let node = Node::start(None).await;
    let http = reqwest::Client::new();
    let alice = dev_key("alice");
    let chain: u64 =
        u64::from_str_radix(node.rpc(&http, "eth_chainId", json!([])).await.unwrap()["result"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let nonce = |n: &Value| u64::from_str_radix(n["result"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let start = nonce(&node.rpc(&http, "eth_getTransactionCount", json!([alice.address().to_hex(), "pending"])).await.unwrap());
    let gwei = 1_000_000_000u128;
    let cases: Vec<(Unsigned, &str)> = vec![
        // EIP-3860: init code over 49,152 bytes (it was included, charged and never got a receipt).
        (
            Unsigned {
                chain_id: Some(chain),
                nonce: start,
                gas_limit: 10_000_000,
                max_fee_per_gas: gwei,
                to: None,
                input: vec![0; 49_153],
                ..Default::default()
            },
            "max initcode size exceeded: code size 49153, limit 49152",
        ),
        // Under the intrinsic gas of a plain transfer.
        (
            Unsigned { chain_id: Some(chain), nonce: start, gas_limit: 20_999, max_fee_per_gas: gwei, to: Some(alice.address()), ..Default::default() },
            "intrinsic gas too low: gas 20999, minimum needed 21000",
        ),
        // Under EIP-7623's floor for its calldata.
        (
            Unsigned {
                chain_id: Some(chain),
                nonce: start,
                gas_limit: 21_000 + 4 * 1_000 * 4,
                max_fee_per_gas: gwei,
                to: Some(alice.address()),
                input: vec![1; 1_000],
                ..Default::default()
            },
            "insufficient gas for floor data gas cost",
        ),
    ];
    for (tx, want) in cases {
        let raw = format!("0x{}", const_hex::encode(sign(&alice, &tx)));
        let r = node.rpc(&http, "eth_sendRawTransaction", json!([raw])).await.unwrap();
        assert_eq!(r["error"]["code"], -32000, "{r}");
        assert!(r["error"]["message"].as_str().is_some_and(|m| m.contains(want)), "{want}: {r}");
    }
    // Nothing was taken: the nonce is where it was.
    assert_eq!(nonce(&node.rpc(&http, "eth_getTransactionCount", json!([alice.address().to_hex(), "pending"])).await.unwrap()), start);
    // The largest init code allowed is accepted and, mined, has its receipt.
    let ok =
        Unsigned { chain_id: Some(chain), nonce: start, gas_limit: 15_000_000, max_fee_per_gas: gwei, to: None, input: vec![0; 49_152], ..Default::default() };
    let r = node.rpc(&http, "eth_sendRawTransaction", json!([format!("0x{}", const_hex::encode(sign(&alice, &ok)))])).await.unwrap();
    let hash = r["result"].as_str().unwrap_or_else(|| panic!("{r}")).to_string();
    poll(Duration::from_secs(30), || async { node.rpc(&http, "eth_getTransactionReceipt", json!([hash])).await.is_some_and(|r| r["result"].is_object()) })
        .await
        .expect("a receipt");
}

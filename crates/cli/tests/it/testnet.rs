//! Four validators under the real CometBFT binary (`lantaud testnet init`, the same processes
//! `lantaud testnet start` runs): gated stablecoin transfers sent to different validators land
//! with the same app hash, results and audit log on every validator at every height; a
//! validator killed with `kill -9` (app and CometBFT) while the others go on catches up to the
//! same hashes when restarted, although the tail of its store's write-ahead log was cut off
//! (a torn write: RocksDB recovers to the last whole batch, CometBFT replays the rest); a
//! fifth node joins by state sync from the validators' snapshots and follows with the same
//! hashes and audit log.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use lantau_client::{msg_send, SignerData, TxBuilder};
use lantau_node::testnet::{self, RunningValidator, Testnet, TestnetOptions};
use lantau_primitives::Coin;
use lantau_test_utils::{dev_addr, dev_key, poll};
use prost::Message as _;
use serde_json::Value;

fn lantaud() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lantaud"))
}

/// A base port whose 5 × 10 ports are free now: a block of 50 free loopback ports below the kernel's ephemeral range (32768 and up on
/// Linux), so a port the OS hands another test's connection or listener meanwhile cannot land
/// in it between this check and the network's start.
fn free_base() -> u16 {
    const BLOCKS: u16 = 127; // 20,000 to 32,699
    let start = (std::process::id() % u32::from(BLOCKS)) as u16;
    for k in 0..BLOCKS {
        let base = 20_000 + ((start + k) % BLOCKS) * 100;
        let free = (0..50u16).all(|o| std::net::TcpListener::bind(("127.0.0.1", base + o)).is_ok());
        if free {
            return base;
        }
    }
    panic!("no free block of 50 loopback ports");
}

async fn rpc(http: &reqwest::Client, node: &testnet::TestnetNode, path: &str) -> Option<Value> {
    rpc_at(http, &node.rpc, path).await
}

/// A CometBFT JSON-RPC call by URI at `base`: its `result`, `None` on an error.
async fn rpc_at(http: &reqwest::Client, base: &str, path: &str) -> Option<Value> {
    let r = http.get(format!("{base}/{path}")).send().await.ok()?;
    let v: Value = r.json().await.ok()?;
    v.get("result").filter(|r| !r.is_null()).cloned()
}

/// The height the node's app has committed (CometBFT's `/status` may run one block ahead: it
/// stores a block before the app has executed it).
async fn height(http: &reqwest::Client, node: &testnet::TestnetNode) -> u64 {
    match rpc(http, node, "abci_info").await {
        Some(s) => s["response"]["last_block_height"].as_str().and_then(|h| h.parse().ok()).unwrap_or(0),
        None => 0,
    }
}

async fn abci_query(http: &reqwest::Client, node: &testnet::TestnetNode, path: &str, data: &[u8], height: u64) -> Value {
    let q = format!("abci_query?path=%22{path}%22&data=0x{}&height={height}", const_hex::encode(data));
    rpc(http, node, &q).await.unwrap_or_else(|| panic!("abci_query {path} on {}", node.moniker))["response"].clone()
}

fn b64(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap_or_default()).unwrap()
}

/// Every validator in `which` reports the same block (app hash, results hash) at every
/// height from `from` to `upto`, and the same audit log at the height they have all reached
/// (read first: a node answers queries for its recent heights only). Returns the audit log's
/// row count.
async fn agree(http: &reqwest::Client, net: &Testnet, which: &[usize], from: u64, upto: u64) -> usize {
    // A node keeps the state of its last 10 heights for queries: wait (bounded) until the
    // nodes are within a few heights of each other (one catching up may lag more), then read
    // at the lowest.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let at = loop {
        let mut hs = Vec::new();
        for &i in which {
            hs.push(height(http, &net.nodes[i]).await);
        }
        let (lo, hi) = (hs.iter().copied().min().unwrap_or(0), hs.iter().copied().max().unwrap_or(0));
        if lo >= upto && hi - lo <= 4 {
            break lo;
        }
        assert!(std::time::Instant::now() < deadline, "the nodes did not come within 4 heights of each other above {upto}: {hs:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let req = lantau_proto::chain::compliance::v1::QueryAuditLogRequest::default().encode_to_vec();
    let mut logs = Vec::new();
    for &i in which {
        let r = abci_query(http, &net.nodes[i], "/chain.compliance.v1.Query/AuditLog", &req, at).await;
        assert_eq!(r["code"].as_u64().unwrap_or(0), 0, "{r}");
        assert_eq!(r["height"], at.to_string(), "{r}");
        logs.push(b64(&r["value"]));
    }
    assert!(logs.windows(2).all(|w| w[0] == w[1]), "the audit logs differ at height {at}");
    for h in from..=upto {
        let mut seen: Option<(Value, Value, Value)> = None;
        for &i in which {
            let b = rpc(http, &net.nodes[i], &format!("block?height={h}")).await.unwrap_or_else(|| panic!("block {h} on {i}"));
            let header = &b["block"]["header"];
            let got = (header["app_hash"].clone(), header["last_results_hash"].clone(), b["block_id"]["hash"].clone());
            match &seen {
                None => seen = Some(got),
                Some(s) => assert_eq!(s, &got, "validator-{i} disagrees at height {h}"),
            }
        }
    }
    lantau_proto::chain::compliance::v1::QueryAuditLogResponse::decode(logs[0].as_slice()).unwrap().entries.len()
}

/// The Travel Rule payload from the network's genesis identities.
fn payload(genesis: &Value, from: &str, to: &str) -> lantau_proto::chain::compliance::v1::TravelRulePayload {
    let ids = genesis["app_state"]["kyc"]["identities"].as_array().unwrap();
    let id = |a: &str| ids.iter().find(|x| x["address"] == a).unwrap_or_else(|| panic!("no identity for {a}")).clone();
    let (s, r) = (id(from), id(to));
    lantau_proto::chain::compliance::v1::TravelRulePayload {
        originator_ref: s["ivms101_off_chain_ref"].as_str().unwrap().into(),
        beneficiary_ref: r["ivms101_off_chain_ref"].as_str().unwrap().into(),
        originator_vasp: s["vasp_identifier"].as_str().unwrap().into(),
        beneficiary_vasp: r["vasp_identifier"].as_str().unwrap().into(),
        tier: "full".into(),
        ..Default::default()
    }
}

struct Sender {
    key: lantau_crypto::SecretKey,
    signer: SignerData,
}

impl Sender {
    fn transfer(&mut self, to: &lantau_primitives::Address, cents: u128, p: &lantau_proto::chain::compliance::v1::TravelRulePayload) -> Vec<u8> {
        let b = TxBuilder::new(vec![msg_send(&self.key.address(), to, &[Coin::new("hkd.demo", cents)])]).gas(400_000).travel_rule(p);
        let tx = b.sign(&self.key, &self.signer);
        self.signer.sequence += 1;
        tx
    }
}

async fn broadcast(http: &reqwest::Client, node: &testnet::TestnetNode, tx: &[u8]) -> Value {
    rpc(http, node, &format!("broadcast_tx_sync?tx=0x{}", const_hex::encode(tx))).await.unwrap_or_else(|| panic!("broadcast to {}", node.moniker))
}

/// Waits (bounded) until `node` has committed `hash`, asking its app's CometBFT RPC front (the
/// network's CometBFT instances index nothing).
async fn committed(http: &reqwest::Client, node: &testnet::TestnetNode, hash: &str) {
    poll(Duration::from_secs(120), || async { rpc_at(http, &node.rpc_front, &format!("tx?hash=0x{hash}")).await.is_some() })
        .await
        .unwrap_or_else(|_| panic!("tx {hash} not committed on {}", node.moniker));
}

async fn all_at_least(http: &reqwest::Client, net: &Testnet, which: &[usize], h: u64) {
    for &i in which {
        poll(Duration::from_secs(180), || async { height(http, &net.nodes[i]).await >= h })
            .await
            .unwrap_or_else(|_| panic!("validator-{i} did not reach height {h}"));
    }
}

/// Writes a network of 4 validators (and `full_nodes` full nodes) into a fresh directory with
/// `lantaud testnet init`'s library call; returns the temporary directory, the network
/// directory and its description.
async fn init_net(chain_id: &str, full_nodes: usize, snapshot_interval: u64) -> (tempfile::TempDir, PathBuf, Testnet) {
    init_net_with(chain_id, full_nodes, snapshot_interval, false).await
}

/// [`init_net`], the apps keeping the mempool when `app_mempool`.
async fn init_net_with(chain_id: &str, full_nodes: usize, snapshot_interval: u64, app_mempool: bool) -> (tempfile::TempDir, PathBuf, Testnet) {
    let cometbft = testnet::find_cometbft(None).expect("the cometbft binary (scripts/prereqs.sh installs it)");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("net");
    let opts = TestnetOptions {
        validators: 4,
        full_nodes,
        snapshot_interval,
        base_port: free_base(),
        chain_id: chain_id.into(),
        timeout_commit: "200ms".into(),
        cometbft,
        extra_accounts: Vec::new(),
        app_mempool,
    };
    let net = tokio::task::spawn_blocking({
        let (dir, opts) = (dir.clone(), opts.clone());
        move || testnet::init(&dir, &opts)
    })
    .await
    .unwrap()
    .unwrap();
    (tmp, dir, net)
}

fn start(dir: &Path, net: &Testnet, i: usize) -> RunningValidator {
    testnet::start_validator(dir, net, i, &lantaud()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_validators_under_cometbft_agree_and_a_killed_one_catches_up() {
    let (_tmp, dir, net) = init_net("lantau-testnet-1", 1, 10).await;
    assert_eq!(Testnet::load(&dir).unwrap(), net);
    let genesis: Value = serde_json::from_slice(&std::fs::read(net.nodes[0].cometbft_home.join("config/genesis.json")).unwrap()).unwrap();
    assert_eq!(genesis["validators"].as_array().unwrap().len(), 4);

    assert!(net.nodes[4].full_node);
    let mut vals: Vec<Option<RunningValidator>> = (0..4).map(|i| Some(start(&dir, &net, i))).collect();
    let http = reqwest::Client::new();
    let all = [0, 1, 2, 3];
    all_at_least(&http, &net, &all, 2).await;

    // alice's account, read through abci_query on the store key.
    let alice = dev_key("alice");
    let key = lantau_app::auth::state_key::account(&alice.address());
    let r = abci_query(&http, &net.nodes[0], "/store/key", key.as_bytes(), 0).await;
    let acct = lantau_proto::chain::auth::v1::StoredAccount::decode(b64(&r["value"]).as_slice()).unwrap();
    let mut alice = Sender { key: alice, signer: SignerData { chain_id: net.chain_id.clone(), account_number: acct.account_number, sequence: acct.sequence } };
    let issuer = dev_addr("issuer");
    let p = payload(&genesis, &alice.key.address().to_bech32(), &issuer.to_bech32());

    // Gated transfers to each validator in turn (one above the reporting threshold: a flag).
    // Each waits for the one before: a validator checks a sequence against what its own
    // mempool has seen, and gossip may not have brought it the previous one yet.
    let mut hashes = Vec::new();
    for (n, cents) in [1_000u128, 2_000, 900_000, 3_000, 4_000, 5_000].into_iter().enumerate() {
        let tx = alice.transfer(&issuer, cents, &p);
        let r = broadcast(&http, &net.nodes[n % 4], &tx).await;
        assert_eq!(r["code"], 0, "{r}");
        let h = r["hash"].as_str().unwrap().to_string();
        committed(&http, &net.nodes[n % 4], &h).await;
        hashes.push(h);
    }
    // A transfer the gates refuse is refused at admission, by any validator.
    let carol = dev_addr("carol");
    let mut bad = Sender { key: dev_key("alice"), signer: alice.signer.clone() };
    let refused = broadcast(&http, &net.nodes[1], &bad.transfer(&carol, 100, &p)).await;
    assert_ne!(refused["code"], 0, "{refused}");
    // Under CometBFT too, a MsgEthereumTx travels only in its canonical envelope: in a signed
    // Cosmos transaction (alone, or beside a gated send) CheckTx refuses it.
    let inner = lantau_client::eth::sign(
        &alice.key,
        &lantau_client::eth::Unsigned {
            chain_id: Some(852),
            nonce: alice.signer.sequence,
            gas_limit: 30_000_000,
            max_fee_per_gas: 1_000_000_000,
            to: Some(carol),
            ..Default::default()
        },
    );
    let any = cosmos_sdk_proto::Any {
        type_url: lantau_app::evm::MSG_ETHEREUM_TX.into(),
        value: lantau_proto::evm_vm::MsgEthereumTx { from: alice.key.address().0.to_vec().into(), raw: inner.into() }.encode_to_vec(),
    };
    let send = msg_send(&alice.key.address(), &issuer, &[Coin::new("hkd.demo", 100u128)]);
    for msgs in [vec![any.clone()], vec![send, any]] {
        let tx = TxBuilder::new(msgs).gas(200_000).travel_rule(&p).sign(&alice.key, &alice.signer);
        let r = broadcast(&http, &net.nodes[2], &tx).await;
        assert_eq!((r["code"].as_u64(), r["codespace"].as_str()), (Some(10), Some("evm")), "{r}");
    }
    for h in &hashes {
        committed(&http, &net.nodes[0], h).await;
    }
    let h1 = height(&http, &net.nodes[0]).await;
    all_at_least(&http, &net, &all, h1).await;
    let rows = agree(&http, &net, &all, 1, h1).await;
    // A row per transfer, and the threshold flag's.
    assert!(rows > hashes.len(), "audit rows: {rows}");

    // Each app serves its Prometheus endpoint on its own port in CometBFT mode.
    for n in net.nodes.iter().filter(|n| !n.full_node) {
        let text = http.get(&n.metrics).send().await.unwrap().text().await.unwrap();
        let height = text.lines().find_map(|l| l.strip_prefix("lantau_block_height ")).and_then(|v| v.parse::<u64>().ok());
        assert!(height.is_some_and(|h| h >= h1), "{}: {text}", n.moniker);
        assert!(text.contains("lantau_gate_verdicts_total{phase=\"deliver\""), "{}: {text}", n.moniker);
        assert!(text.contains("lantau_txs_total{result=\"ok\""), "{}: {text}", n.moniker);
    }

    // The spec's REST flows against validators of the network (each app serves REST and the
    // Ethereum JSON-RPC over its CometBFT): GET tx, search, broadcast SYNC, module queries.
    let rest: Vec<lantau_client::RestClient> = net.nodes.iter().map(|n| lantau_client::RestClient::new(&n.rest)).collect();
    let got = rest[2].tx(&hashes[0]).await.unwrap().expect("the first transfer by hash on validator-2's REST");
    assert_eq!(got.code, 0, "{}", got.raw_log);
    assert!(got.height.parse::<u64>().unwrap() >= 1, "{got:?}");
    let raw: Value = http.get(format!("{}/cosmos/tx/v1beta1/txs/{}", net.nodes[2].rest, hashes[0])).send().await.unwrap().json().await.unwrap();
    assert!(raw["tx_response"]["timestamp"].as_str().is_some_and(|t| t.len() >= 20), "{raw}");
    let (total, _) = rest[3].search(&format!("message.sender='{}'", alice.key.address().to_bech32()), false, 100).await.unwrap();
    assert!(total >= hashes.len() as u64, "search found {total}");
    assert_eq!(rest[0].chain_id().await.unwrap(), net.chain_id);
    assert!(rest[1].identity(&alice.key.address()).await.unwrap().is_some());
    let via_rest = rest[1].broadcast(&alice.transfer(&issuer, 7_000, &p), "BROADCAST_MODE_SYNC").await.unwrap();
    assert_eq!(via_rest.code, 0, "{}", via_rest.raw_log);
    let landed = rest[1].wait_for_tx(&via_rest.txhash, Duration::from_secs(60), Duration::from_millis(100)).await.unwrap();
    assert_eq!(landed.code, 0, "{}", landed.raw_log);
    hashes.push(via_rest.txhash);
    let eth: Value = http
        .post(&net.nodes[0].json_rpc)
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let eth_height = u64::from_str_radix(eth["result"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    assert!(eth_height >= h1, "{eth}");
    // The same suite of the spec's client flows the embedded engine passes
    // (`lantau_test_utils::flows`), against validator-2 (its app's CometBFT RPC front and
    // WebSocket, REST and JSON-RPC), with bob's account.
    let e =
        lantau_test_utils::flows::Endpoints { rest: net.nodes[2].rest.clone(), rpc: net.nodes[2].rpc_front.clone(), json_rpc: net.nodes[2].json_rpc.clone() };
    lantau_test_utils::flows::spec_client_flows(&e, &dev_key("bob"), &issuer).await.unwrap();
    let h1 = height(&http, &net.nodes[0]).await;
    all_at_least(&http, &net, &all, h1).await;
    let rows = agree(&http, &net, &all, 1, h1).await;

    // kill -9 of validator-3 (app and CometBFT); the other three keep the chain going.
    let before_kill = height(&http, &net.nodes[3]).await;
    vals[3].take().unwrap().kill();
    let mut more = Vec::new();
    for n in 0..3 {
        let r = broadcast(&http, &net.nodes[n], &alice.transfer(&issuer, 10_000 + n as u128, &p)).await;
        assert_eq!(r["code"], 0, "{r}");
        let h = r["hash"].as_str().unwrap().to_string();
        committed(&http, &net.nodes[n], &h).await;
        more.push(h);
    }
    for h in &more {
        committed(&http, &net.nodes[0], h).await;
    }
    let h2 = height(&http, &net.nodes[0]).await + 2;
    all_at_least(&http, &net, &[0, 1, 2], h2).await;

    // A torn write: the tail of the newest write-ahead log of its store is cut off. RocksDB
    // recovers to the last whole batch; CometBFT's handshake replays the blocks it lost.
    let state = net.nodes[3].app_home.join("data/state");
    let wal = std::fs::read_dir(&state)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .expect("a write-ahead log in the store")
        .path();
    let len = std::fs::metadata(&wal).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&wal).unwrap().set_len(len / 2).unwrap();

    // Restarted, it replays and catches up to the same hashes.
    vals[3] = Some(start(&dir, &net, 3));
    all_at_least(&http, &net, &all, h2).await;
    // The app came back below where it had been (the torn write lost blocks), so CometBFT
    // replayed them to it.
    let log3 = std::fs::read_to_string(dir.join("node3/app.log")).unwrap();
    let loaded: Vec<u64> = log3
        .lines()
        .filter(|l| l.contains("state loaded"))
        .filter_map(|l| l.split("height=").nth(1)?.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect();
    assert_eq!(loaded.len(), 2, "{log3}");
    assert!(loaded[1] < before_kill, "the app reopened at {} of the {before_kill} it had reached: the WAL cut lost nothing", loaded[1]);
    let rows2 = agree(&http, &net, &all, 1, h2).await;
    assert!(rows2 >= rows + more.len(), "audit rows after the crash: {rows2}");

    // A fifth node joins by state sync: the validators took snapshots every 10 heights; it
    // trusts validator-0's latest header, restores the newest snapshot and follows the chain.
    let snapshots = net.nodes[0].app_home.join("data/snapshots");
    poll(Duration::from_secs(60), || async {
        std::fs::read_dir(&snapshots).is_ok_and(|mut d| d.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().parse::<u64>().is_ok())))
    })
    .await
    .expect("a snapshot on validator-0");
    testnet::fill_state_sync_trust(&net, 4).await.unwrap();
    vals.push(Some(start(&dir, &net, 4)));
    let r = broadcast(&http, &net.nodes[1], &alice.transfer(&issuer, 20_000, &p)).await;
    assert_eq!(r["code"], 0, "{r}");
    committed(&http, &net.nodes[1], r["hash"].as_str().unwrap()).await;
    let h3 = height(&http, &net.nodes[0]).await + 2;
    all_at_least(&http, &net, &[0, 1, 2, 3, 4], h3).await;
    // CometBFT stores blocks from the snapshot's height on once it has caught up (its store
    // is empty right after the restore, while the app already answers at that height).
    let synced = |s: &Value| s["sync_info"]["earliest_block_height"] != "0" && s["sync_info"]["catching_up"] == false;
    poll(Duration::from_secs(120), || async { rpc(&http, &net.nodes[4], "status").await.is_some_and(|s| synced(&s)) }).await.expect("the full node caught up");
    let status = rpc(&http, &net.nodes[4], "status").await.unwrap();
    let earliest: u64 = status["sync_info"]["earliest_block_height"].as_str().unwrap().parse().unwrap();
    let h3 = h3.max(height(&http, &net.nodes[4]).await);
    all_at_least(&http, &net, &[0, 1, 2, 3, 4], h3).await;
    assert!(earliest > 1, "the full node began at height {earliest}: it did not state-sync");
    let rows3 = agree(&http, &net, &[0, 1, 2, 3, 4], earliest, h3).await;
    assert!(rows3 > rows2, "audit rows after the state sync: {rows3}");
    let app_log = std::fs::read_to_string(dir.join("node4/app.log")).unwrap();
    assert!(app_log.contains("state restored from a snapshot"), "{app_log}");

    for v in vals.into_iter().flatten() {
        v.stop(Duration::from_secs(10));
    }
}

/// Validators whose state machines disagree (two of four start from an app state that differs
/// in one field, so their app hash differs from the first block on, as a non-deterministic
/// replica's would) make CometBFT halt rather than fork: each side refuses the other's
/// proposal ("wrong Block.Header.AppHash"), no block gets two thirds of the votes, rounds go
/// by at height 1 and no node commits anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validators_whose_state_machines_disagree_halt_rather_than_fork() {
    let (_tmp, dir, net) = init_net("lantau-split-1", 0, 0).await;
    for n in &net.nodes[2..] {
        let path = n.cometbft_home.join("config/genesis.json");
        let mut g: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        g["app_state"]["evm_chain_id"] = Value::String("853".into());
        std::fs::write(&path, serde_json::to_vec_pretty(&g).unwrap()).unwrap();
    }
    let vals: Vec<RunningValidator> = (0..4).map(|i| start(&dir, &net, i)).collect();
    let http = reqwest::Client::new();
    // Wait (bounded) until height 1 has gone through a few rounds on every node. Alone this
    // takes ~10 s; beside the rest of the suite on 2 cores a round's timeouts stretch (one run
    // took 130 s), so the bound is generous.
    for n in &net.nodes {
        poll(Duration::from_secs(300), || async {
            let Some(s) = rpc(&http, n, "consensus_state").await else { return false };
            let hrs = s["round_state"]["height/round/step"].as_str().unwrap_or_default().to_string();
            let mut parts = hrs.split('/');
            let (h, r) = (parts.next().and_then(|x| x.parse::<u64>().ok()), parts.next().and_then(|x| x.parse::<u64>().ok()));
            assert!(h.is_none_or(|h| h <= 1), "{} went past height 1: {hrs}", n.moniker);
            r.is_some_and(|r| r >= 3)
        })
        .await
        .unwrap_or_else(|_| panic!("{} did not go through rounds at height 1", n.moniker));
    }
    for n in &net.nodes {
        assert_eq!(height(&http, n).await, 0, "{} committed a block", n.moniker);
        let s = rpc(&http, n, "status").await.unwrap();
        assert_eq!(s["sync_info"]["latest_block_height"], "0", "{}", n.moniker);
    }
    let logs: String = (0..4).map(|i| std::fs::read_to_string(dir.join(format!("node{i}/cometbft.log"))).unwrap_or_default()).collect();
    assert!(logs.contains("wrong Block.Header.AppHash"), "no node said why it refused the proposals");
    for v in vals {
        v.stop(Duration::from_secs(10));
    }
}

/// Four validators whose apps keep the mempool (`testnet init`'s default: CometBFT's is
/// `nop`): a burst of one sender's gated transfers given to one validator's RPC front, and
/// another sender's to another's REST, are forwarded to every validator, so whoever proposes
/// includes them in sequence order; all land with the same hashes everywhere and every
/// mempool drains. CometBFT's own broadcast is refused (its mempool is off), the gates still
/// refuse at admission, and a peer's forwarded batch that is cut is refused with 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_validators_keeping_the_mempool_in_the_app_forward_and_commit_what_one_is_given() {
    let (_tmp, dir, net) = init_net_with("lantau-appmempool-1", 0, 0, true).await;
    let cfg = lantau_node::config::NodeConfig::load(&net.nodes[1].app_home.join("config/config.toml")).unwrap();
    assert!(cfg.mempool.app_side, "{:?}", cfg.mempool);
    assert_eq!(cfg.mempool.peers, vec![net.nodes[0].rest.clone(), net.nodes[2].rest.clone(), net.nodes[3].rest.clone()]);
    let genesis: Value = serde_json::from_slice(&std::fs::read(net.nodes[0].cometbft_home.join("config/genesis.json")).unwrap()).unwrap();
    let vals: Vec<RunningValidator> = (0..4).map(|i| start(&dir, &net, i)).collect();
    let http = reqwest::Client::new();
    let all = [0, 1, 2, 3];
    all_at_least(&http, &net, &all, 2).await;

    let issuer = dev_addr("issuer");
    let mut alice = Sender { key: dev_key("alice"), signer: signer_of(&http, &net, &dev_key("alice")).await };
    let mut bob = Sender { key: dev_key("bob"), signer: signer_of(&http, &net, &dev_key("bob")).await };
    let pa = payload(&genesis, &alice.key.address().to_bech32(), &issuer.to_bech32());
    // bob is a retail customer of the minimal tier.
    let pb = lantau_proto::chain::compliance::v1::TravelRulePayload {
        tier: "minimal".into(),
        ..payload(&genesis, &bob.key.address().to_bech32(), &issuer.to_bech32())
    };

    // CometBFT's own mempool is off: its broadcast refuses.
    let own = http.get(format!("{}/broadcast_tx_sync?tx=0x{}", net.nodes[0].rpc, const_hex::encode(alice.transfer(&issuer, 1, &pa)))).send().await.unwrap();
    let own: Value = own.json().await.unwrap();
    assert!(own.get("error").is_some(), "CometBFT's broadcast with a nop mempool: {own}");
    alice.signer.sequence -= 1;

    // A burst without waiting: eight of alice's to validator-1's front, four of bob's to
    // validator-3's REST.
    let mut hashes = Vec::new();
    for n in 0..8u128 {
        let r = rpc_at(&http, &net.nodes[1].rpc_front, &format!("broadcast_tx_sync?tx=0x{}", const_hex::encode(alice.transfer(&issuer, 1_000 + n, &pa))))
            .await
            .expect("the front answers broadcast_tx_sync");
        assert_eq!(r["code"], 0, "{r}");
        hashes.push(r["hash"].as_str().unwrap().to_string());
    }
    let rest3 = lantau_client::RestClient::new(&net.nodes[3].rest);
    for n in 0..4u128 {
        let r = rest3.broadcast(&bob.transfer(&issuer, 2_000 + n, &pb), "BROADCAST_MODE_SYNC").await.unwrap();
        assert_eq!(r.code, 0, "{}", r.raw_log);
        hashes.push(r.txhash);
    }
    // The gates refuse at admission (carol has no identity).
    let refused = rpc_at(&http, &net.nodes[2].rpc_front, &format!("broadcast_tx_sync?tx=0x{}", const_hex::encode(alice.transfer(&dev_addr("carol"), 5, &pa))))
        .await
        .expect("the front answers broadcast_tx_sync");
    assert_ne!(refused["code"], 0, "{refused}");
    alice.signer.sequence -= 1;
    // Every validator commits every one of them.
    for n in &net.nodes {
        for h in &hashes {
            committed(&http, n, h).await;
        }
    }
    for n in &net.nodes {
        poll(Duration::from_secs(60), || async {
            rpc_at(&http, &n.rpc_front, "num_unconfirmed_txs").await.is_some_and(|r| r["n_txs"] == "0" || r["n_txs"] == 0)
        })
        .await
        .unwrap_or_else(|_| panic!("{}'s mempool did not drain", n.moniker));
    }
    let h = height(&http, &net.nodes[0]).await;
    all_at_least(&http, &net, &all, h).await;
    let rows = agree(&http, &net, &all, 1, h).await;
    assert!(rows >= hashes.len(), "audit rows: {rows}");

    // A peer's batch: one that is cut is refused, whole, nothing of it admitted.
    let tx = alice.transfer(&issuer, 9_000, &pa);
    let body = lantau_rpc::rest::encode_forwarded(&[&tx]);
    let forwarded = |body: Vec<u8>| http.post(format!("{}{}", net.nodes[2].rest, lantau_rpc::rest::FORWARD_PATH)).body(body).send();
    let cut = forwarded(body[..body.len() - 1].to_vec()).await.unwrap();
    assert_eq!(cut.status(), 400);
    let whole: Value = forwarded(body).await.unwrap().json().await.unwrap();
    assert_eq!((whole["received"].as_u64(), whole["admitted"].as_u64()), (Some(1), Some(1)), "{whole}");
    // Not forwarded again, but the network includes it once validator-2 proposes.
    committed(&http, &net.nodes[0], &const_hex::encode_upper(lantau_crypto::sha256(&tx))).await;
    for v in vals {
        v.stop(Duration::from_secs(10));
    }
}

/// The account `key` has on `node`, for signing.
async fn signer_of(http: &reqwest::Client, net: &Testnet, key: &lantau_crypto::SecretKey) -> SignerData {
    let k = lantau_app::auth::state_key::account(&key.address());
    let r = abci_query(http, &net.nodes[0], "/store/key", k.as_bytes(), 0).await;
    let acct = lantau_proto::chain::auth::v1::StoredAccount::decode(b64(&r["value"]).as_slice()).unwrap();
    SignerData { chain_id: net.chain_id.clone(), account_number: acct.account_number, sequence: acct.sequence }
}

/// The test build of the upgrade path (`scripts/test.sh` builds it beside `lantaud`): this
/// tree with the upgrade `lantau-upgrade-test`, which migrates the upgrade module to state
/// version 2.
fn lantaud_upgrade_test() -> PathBuf {
    let p = lantaud().with_file_name("lantaud-upgrade-test");
    assert!(p.exists(), "{} is missing: scripts/test.sh builds it (cargo build -p lantau-cli --features upgrade-test, copied)", p.display());
    p
}

/// Native-coin sends from `key` to `to`, one every few milliseconds to the validators in turn,
/// until `stop`; each accepted one is followed to its commit. Returns the (hash, height) of every
/// transaction seen committed.
fn load(
    http: reqwest::Client,
    net: Testnet,
    mut sender: Sender,
    to: lantau_primitives::Address,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<Vec<(String, u64)>> {
    tokio::spawn(async move {
        let mut waiters = Vec::new();
        let mut n = 0usize;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let tx = TxBuilder::new(vec![msg_send(&sender.key.address(), &to, &[Coin::new("alantau", 1u128)])]).gas(200_000).sign(&sender.key, &sender.signer);
            let node = net.nodes[n % 4].clone();
            n += 1;
            let r = rpc_at(&http, &node.rpc, &format!("broadcast_tx_sync?tx=0x{}", const_hex::encode(&tx))).await;
            match r {
                Some(r) if r["code"] == 0 => {
                    sender.signer.sequence += 1;
                    let (http, hash) = (http.clone(), r["hash"].as_str().unwrap_or_default().to_string());
                    waiters.push(tokio::spawn(async move {
                        let deadline = std::time::Instant::now() + Duration::from_secs(40);
                        while std::time::Instant::now() < deadline {
                            if let Some(t) = rpc_at(&http, &node.rpc_front, &format!("tx?hash=0x{hash}")).await {
                                return Some((hash, t["height"].as_str().and_then(|h| h.parse().ok()).unwrap_or(0)));
                            }
                            tokio::time::sleep(Duration::from_millis(200)).await;
                        }
                        None
                    }));
                }
                _ => {}
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        let mut seen = Vec::new();
        for w in waiters {
            if let Ok(Some(c)) = w.await {
                seen.push(c);
            }
        }
        seen
    })
}

/// A scheduled upgrade on a network of four validators under load: every app stops at the
/// plan's height with the SDK's message (CometBFT has the block, no app executes it); each
/// restarts with the test build that applies the plan (the upgrade module migrates from state
/// version 1 to 2 inside that block), and the network goes on with agreeing app hashes; no
/// transaction committed before the halt, audit row or flag is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_validators_stop_at_a_scheduled_upgrade_and_resume_with_the_build_that_migrates() {
    let next_build = lantaud_upgrade_test();
    let (_tmp, dir, net) = init_net("lantau-upgrade-1", 0, 0).await;
    let genesis: Value = serde_json::from_slice(&std::fs::read(net.nodes[0].cometbft_home.join("config/genesis.json")).unwrap()).unwrap();
    let mut vals: Vec<Option<RunningValidator>> = (0..4).map(|i| Some(start(&dir, &net, i))).collect();
    let http = reqwest::Client::new();
    let all = [0, 1, 2, 3];
    all_at_least(&http, &net, &all, 2).await;

    let mut alice = Sender { key: dev_key("alice"), signer: signer_of(&http, &net, &dev_key("alice")).await };
    let issuer = dev_addr("issuer");
    let p = payload(&genesis, &alice.key.address().to_bech32(), &issuer.to_bech32());
    // Load from another account until the network halts.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let faucet = Sender { key: dev_key("faucet"), signer: signer_of(&http, &net, &dev_key("faucet")).await };
    let background = load(http.clone(), net.clone(), faucet, issuer, stop.clone());
    // Gated transfers, one over the threshold (a flag).
    let mut hashes = Vec::new();
    for (n, cents) in [1_000u128, 900_000, 2_000].into_iter().enumerate() {
        let r = broadcast(&http, &net.nodes[n], &alice.transfer(&issuer, cents, &p)).await;
        assert_eq!(r["code"], 0, "{r}");
        let h = r["hash"].as_str().unwrap().to_string();
        committed(&http, &net.nodes[n], &h).await;
        hashes.push(h);
    }

    // Governance schedules the test build's upgrade a few blocks ahead.
    let name = "lantau-upgrade-test";
    let gov = dev_key("governance");
    let at = height(&http, &net.nodes[0]).await + 15;
    #[allow(deprecated)]
    let plan = cosmos_sdk_proto::cosmos::upgrade::v1beta1::Plan {
        name: name.into(),
        height: at as i64,
        info: "the upgrade module to state version 2".into(),
        time: None,
        upgraded_client_state: None,
    };
    let msg = cosmos_sdk_proto::cosmos::upgrade::v1beta1::MsgSoftwareUpgrade { authority: gov.address().to_bech32(), plan: Some(plan) };
    let tx = TxBuilder::new(vec![lantau_client::to_any(&msg)]).gas(400_000).sign(&gov, &signer_of(&http, &net, &gov).await);
    let r = broadcast(&http, &net.nodes[1], &tx).await;
    assert_eq!(r["code"], 0, "{r}");
    committed(&http, &net.nodes[1], r["hash"].as_str().unwrap()).await;
    for n in 0..3u128 {
        let r = broadcast(&http, &net.nodes[0], &alice.transfer(&issuer, 2_000 + n, &p)).await;
        assert_eq!(r["code"], 0, "{r}");
        let h = r["hash"].as_str().unwrap().to_string();
        committed(&http, &net.nodes[0], &h).await;
        hashes.push(h);
    }
    let rows_before = agree(&http, &net, &all, 1, height(&http, &net.nodes[0]).await.min(at - 1)).await;
    let flags_req = lantau_proto::chain::compliance::v1::QueryFlagsRequest::default().encode_to_vec();
    let flags_before = abci_query(&http, &net.nodes[0], "/chain.compliance.v1.Query/Flags", &flags_req, 0).await["value"].clone();

    // The apps stop at the height, naming the upgrade; none executes the block. A validator
    // whose peers stopped (with their CometBFT) before it received the decided block never
    // gets it: it stays at the height before (and stops at the height when its peers come
    // back). So: wait until every validator has stopped or sits at the height before, for a
    // few polls in a row, with at least one stopped.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let mut settled = 0;
    let stopped = loop {
        let stopped: Vec<usize> = (0..4).filter(|&i| vals[i].as_mut().unwrap().app.try_wait().unwrap().is_some()).collect();
        let mut waiting = 0;
        for i in (0..4).filter(|i| !stopped.contains(i)) {
            if let Some(info) = rpc_at(&http, &net.nodes[i].rpc_front, "abci_info").await {
                if info["response"]["last_block_height"].as_str() == Some((at - 1).to_string().as_str()) {
                    waiting += 1;
                }
            }
        }
        settled = if !stopped.is_empty() && stopped.len() + waiting == 4 { settled + 1 } else { 0 };
        if stopped.len() == 4 || settled >= 20 {
            break stopped;
        }
        assert!(std::time::Instant::now() < deadline, "validators {stopped:?} stopped at height {at}; {waiting} others at {}", at - 1);
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for i in 0..4 {
        if stopped.contains(&i) {
            let log = std::fs::read_to_string(dir.join(format!("node{i}/app.log"))).unwrap();
            assert!(log.contains(&format!("UPGRADE \"{name}\" NEEDED at height: {at}: the upgrade module to state version 2")), "validator-{i}: {log}");
        } else {
            let info = rpc_at(&http, &net.nodes[i].rpc_front, "abci_info").await.expect("the running app answers abci_info");
            assert_eq!(info["response"]["last_block_height"], (at - 1).to_string(), "validator-{i} ran past the upgrade height: {info}");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let loaded = background.await.unwrap();
    assert!(loaded.len() >= 20, "the load committed {} transactions before the halt", loaded.len());
    assert!(loaded.iter().all(|(_, h)| *h < at), "{loaded:?}");
    for v in vals.iter_mut() {
        v.take().unwrap().kill();
    }

    // The new release: the test build, which applies the plan.
    // The network's ports were free when it was laid out; a test running beside this one may
    // have taken one since the kill: such a start is retried (a few times), any other failure
    // shows the app's log.
    let _vals: Vec<RunningValidator> = (0..4)
        .map(|i| {
            let mut tries = 0;
            loop {
                match testnet::start_validator(&dir, &net, i, &next_build) {
                    Ok(v) => break v,
                    Err(e) => {
                        let log = std::fs::read_to_string(dir.join(format!("node{i}/app.log"))).unwrap_or_default();
                        let tail: Vec<&str> = log.lines().rev().take(15).collect();
                        let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
                        tries += 1;
                        assert!(tail.contains("in use") && tries < 5, "{e:#}\n{tail}");
                        std::thread::sleep(Duration::from_millis(500));
                    }
                }
            }
        })
        .collect();
    all_at_least(&http, &net, &all, at + 3).await;
    let rows_after = agree(&http, &net, &all, 1, at + 3).await;
    assert!(rows_after >= rows_before, "audit rows {rows_before} -> {rows_after}");
    for h in &hashes {
        committed(&http, &net.nodes[3], h).await;
    }
    // Every transaction of the load that was committed before the halt is still there, at its
    // height.
    for (hash, h) in &loaded {
        let t = rpc_at(&http, &net.nodes[2].rpc_front, &format!("tx?hash=0x{hash}")).await.unwrap_or_else(|| panic!("{hash} lost"));
        assert_eq!(t["height"], h.to_string(), "{hash}");
    }
    let flags_after = abci_query(&http, &net.nodes[3], "/chain.compliance.v1.Query/Flags", &flags_req, 0).await["value"].clone();
    assert_eq!(flags_after, flags_before, "the flags changed across the upgrade");
    // The migration ran at the height on every validator (a Merkle key: the app hashes that
    // agree above include it), and the module is at version 2.
    for node in &net.nodes[..4] {
        let r = abci_query(&http, node, "/store/key", lantau_app::upgrade::TEST_V2_MIGRATED.as_bytes(), 0).await;
        assert_eq!(b64(&r["value"]), at.to_be_bytes().to_vec(), "{}: {r}", node.moniker);
        let v: Value =
            http.get(format!("{}/cosmos/upgrade/v1beta1/module_versions?module_name=upgrade", node.rest)).send().await.unwrap().json().await.unwrap();
        assert_eq!(v["module_versions"][0]["version"], "2", "{}: {v}", node.moniker);
    }
    let applied: Value = http.get(format!("{}/cosmos/upgrade/v1beta1/applied_plan/{name}", net.nodes[2].rest)).send().await.unwrap().json().await.unwrap();
    assert_eq!(applied["height"], at.to_string(), "{applied}");
    let plan: Value = http.get(format!("{}/cosmos/upgrade/v1beta1/current_plan", net.nodes[2].rest)).send().await.unwrap().json().await.unwrap();
    assert!(plan["plan"].is_null(), "{plan}");
    // And the chain takes transfers again.
    let r = broadcast(&http, &net.nodes[3], &alice.transfer(&issuer, 3_000, &p)).await;
    assert_eq!(r["code"], 0, "{r}");
    committed(&http, &net.nodes[3], r["hash"].as_str().unwrap()).await;
}

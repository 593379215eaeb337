//! A conformance harness that plays CometBFT's side of the ABCI++ socket (v0.38 framing:
//! varint-length-prefixed protobuf `Request`s, `Flush` after each) against three replicas of
//! the app served by `lantau_node::abci` in this process, each on a runtime with a different
//! number of worker threads. The call grammar of CometBFT's spec: handshake (Info, then
//! InitChain on a clean start, or a replay of the blocks the app has not committed), then per
//! height PrepareProposal (proposer) / ProcessProposal (all) / FinalizeBlock / Commit.
//!
//! Every replica returns byte-identical FinalizeBlock responses (app hash, results, events) at
//! every height. One replica crashes at each boundary (after FinalizeBlock, during Commit with
//! its response lost, after Commit): its server and app are torn down, its store reopened, and
//! the handshake replays it to the same hashes. Another replica's consensus connection drops
//! and reopens between heights and loses nothing. No Go, no CometBFT binary.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lantau_app::{App, AppConfig, NoHook};
use lantau_client::{msg_send, SignerData, TxBuilder};
use lantau_node::abci::{AbciAddr, Answering};
use lantau_node::home::{init_home, InitOptions};
use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_test_utils::{dev_addr, dev_key};
use prost::Message as _;
use serde_json::Value;
use tendermint_proto::v0_38::abci as pb;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CHAIN: &str = "conformance-1";

/// CometBFT's side of one ABCI connection.
struct Conn(TcpStream);

impl Conn {
    async fn open(addr: std::net::SocketAddr) -> Self {
        for _ in 0..200 {
            if let Ok(s) = TcpStream::connect(addr).await {
                return Conn(s);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no ABCI server on {addr}");
    }

    async fn send(&mut self, v: pb::request::Value) {
        let mut buf = Vec::new();
        for r in [pb::Request { value: Some(v) }, pb::Request { value: Some(pb::request::Value::Flush(pb::RequestFlush {})) }] {
            r.encode_length_delimited(&mut buf).unwrap();
        }
        self.0.write_all(&buf).await.unwrap();
    }

    async fn read_one(&mut self) -> pb::Response {
        let mut len = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.0.read_u8().await.unwrap();
            len |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
        }
        let mut body = vec![0; usize::try_from(len).unwrap()];
        self.0.read_exact(&mut body).await.unwrap();
        pb::Response::decode(body.as_slice()).unwrap()
    }

    /// One request, its response (and the flush's).
    async fn call(&mut self, v: pb::request::Value) -> pb::response::Value {
        self.send(v).await;
        let r = self.read_one().await.value.unwrap();
        let flush = self.read_one().await.value.unwrap();
        assert!(matches!(flush, pb::response::Value::Flush(_)), "{flush:?}");
        if let pb::response::Value::Exception(e) = &r {
            panic!("ABCI exception: {}", e.error);
        }
        r
    }
}

/// One replica: an app on its own store, served on its own runtime.
struct Replica {
    dir: PathBuf,
    threads: usize,
    addr: std::net::SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
    app: Option<Arc<App>>,
    consensus: Option<Conn>,
    /// Where it writes state-sync snapshots, when it takes them.
    snapshots: Option<lantau_app::statesync::SnapshotSettings>,
    /// How it answers blocks (`[cometbft] send_events`, `optimistic_execution`).
    answering: Answering,
    /// Its metrics (kept across reboots).
    metrics: Arc<lantau_node::metrics::Metrics>,
    /// Where its committed blocks go, when something listens (the node interface's feed).
    feed: Option<tokio::sync::mpsc::UnboundedSender<lantau_node::comet::Committed>>,
}

fn free_addr() -> std::net::SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

impl Replica {
    async fn start(dir: &Path, threads: usize) -> Self {
        Self::start_with(dir, threads, None).await
    }

    async fn start_with(dir: &Path, threads: usize, snapshots: Option<lantau_app::statesync::SnapshotSettings>) -> Self {
        Self::start_answering(dir, threads, snapshots, Answering::default()).await
    }

    async fn start_answering(dir: &Path, threads: usize, snapshots: Option<lantau_app::statesync::SnapshotSettings>, answering: Answering) -> Self {
        let metrics = lantau_node::metrics::Metrics::new(None);
        let mut r = Replica {
            dir: dir.to_path_buf(),
            threads,
            addr: free_addr(),
            runtime: None,
            app: None,
            consensus: None,
            snapshots,
            answering,
            metrics,
            feed: None,
        };
        r.boot().await;
        r
    }

    /// How many blocks' early executions FinalizeBlock met with `outcome` (`taken`, `dropped`,
    /// `none`), from its metrics.
    fn early(&self, outcome: &str) -> u64 {
        let line = format!("lantau_early_executions_total{{outcome=\"{outcome}\"}} ");
        self.metrics.render().lines().find_map(|l| l.strip_prefix(line.as_str())).map_or(0, |v| v.trim().parse().unwrap())
    }

    async fn boot(&mut self) {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(self.threads).enable_all().build().unwrap();
        let dir = self.dir.clone();
        let app = runtime.spawn(async move { Arc::new(App::load(dir, AppConfig::default(), Arc::new(NoHook)).await.unwrap()) }).await.unwrap();
        if let Some(s) = &self.snapshots {
            app.enable_snapshots(s.clone());
        }
        self.addr = free_addr();
        let (a, addr, answering, metrics) = (app.clone(), AbciAddr::Tcp(self.addr), self.answering, self.metrics.clone());
        let feed = self.feed.clone().map(|tx| lantau_node::comet::CommitFeed { tx, wanted: Box::new(|| true) });
        runtime.spawn(async move {
            let _ = lantau_node::abci::serve(a, metrics, feed, None, answering, &addr).await;
        });
        self.runtime = Some(runtime);
        self.app = Some(app);
        self.consensus = Some(Conn::open(self.addr).await);
    }

    /// A crash: the connection, the server and its runtime go; the store is released and
    /// reopened by [`Replica::boot`].
    async fn crash(&mut self) {
        self.consensus = None;
        if let Some(rt) = self.runtime.take() {
            // Its tasks are dropped where they stand, but work already handed to its blocking
            // threads (a commit's RocksDB write) runs to its end, as a dying process's last write
            // lands or not. Wait (bounded) for those threads: one of them may hold the store
            // open, writing and compacting, while the reboot reads it.
            tokio::task::spawn_blocking(move || rt.shutdown_timeout(Duration::from_secs(30))).await.unwrap();
        }
        let app = self.app.take().unwrap();
        // The server's tasks held the app; wait (bounded) until only this handle is left.
        let mut app = app;
        for _ in 0..500 {
            match Arc::try_unwrap(app) {
                Ok(a) => {
                    a.release().await;
                    return;
                }
                Err(back) => app = back,
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the app is still held after the crash");
    }

    async fn call(&mut self, v: pb::request::Value) -> pb::response::Value {
        self.consensus.as_mut().unwrap().call(v).await
    }

    /// A request on a connection of its own (the snapshot or query connection).
    async fn side_call(&self, v: pb::request::Value) -> pb::response::Value {
        Conn::open(self.addr).await.call(v).await
    }

    async fn info(&mut self) -> pb::ResponseInfo {
        let mut c = Conn::open(self.addr).await;
        match c.call(pb::request::Value::Info(pb::RequestInfo::default())).await {
            pb::response::Value::Info(i) => i,
            other => panic!("{other:?}"),
        }
    }
}

fn init_req(app_state: &[u8]) -> pb::request::Value {
    pb::request::Value::InitChain(pb::RequestInitChain {
        time: Some(tendermint_proto::google::protobuf::Timestamp { seconds: 1_700_000_000, nanos: 0 }),
        chain_id: CHAIN.into(),
        consensus_params: Some(lantau_node::node::default_consensus_params().into()),
        validators: vec![],
        app_state_bytes: app_state.to_vec().into(),
        initial_height: 1,
    })
}

/// ProcessProposal of block `h` carrying `txs`, as CometBFT sends it: what FinalizeBlock of the
/// decided block ([`finalize_req`]) will carry.
fn process_req(h: u64, txs: &[Vec<u8>]) -> pb::request::Value {
    pb::request::Value::ProcessProposal(pb::RequestProcessProposal {
        txs: txs.iter().map(|t| t.clone().into()).collect(),
        proposed_last_commit: Some(pb::CommitInfo { round: 0, votes: vec![] }),
        misbehavior: vec![],
        hash: vec![7; 32].into(),
        height: i64::try_from(h).unwrap(),
        time: block_time(h),
        next_validators_hash: vec![0; 32].into(),
        proposer_address: vec![0; 20].into(),
    })
}

/// The time of block `h`: one second after the last.
fn block_time(h: u64) -> Option<tendermint_proto::google::protobuf::Timestamp> {
    Some(tendermint_proto::google::protobuf::Timestamp { seconds: 1_700_000_000 + i64::try_from(h).unwrap(), nanos: 0 })
}

fn finalize_req(h: i64, txs: &[Vec<u8>]) -> pb::request::Value {
    pb::request::Value::FinalizeBlock(pb::RequestFinalizeBlock {
        txs: txs.iter().map(|t| t.clone().into()).collect(),
        decided_last_commit: Some(pb::CommitInfo { round: 0, votes: vec![] }),
        misbehavior: vec![],
        hash: vec![7; 32].into(),
        height: h,
        time: block_time(u64::try_from(h).unwrap()),
        next_validators_hash: vec![0; 32].into(),
        proposer_address: vec![0; 20].into(),
    })
}

fn finalized(r: pb::response::Value) -> pb::ResponseFinalizeBlock {
    match r {
        pb::response::Value::FinalizeBlock(f) => f,
        other => panic!("{other:?}"),
    }
}

/// The transactions of height `h`: native sends between dev accounts and, from height 2 on,
/// a gated stablecoin transfer alice → issuer with its Travel Rule payload.
fn block_txs(
    h: u64,
    seqs: &mut std::collections::BTreeMap<&'static str, u64>,
    numbers: &std::collections::BTreeMap<&'static str, u64>,
    payload: &lantau_proto::chain::compliance::v1::TravelRulePayload,
) -> Vec<Vec<u8>> {
    let mut txs = Vec::new();
    let mut sign = |name: &'static str, b: TxBuilder| {
        let seq = seqs.entry(name).or_insert(0);
        let tx = b.sign(&dev_key(name), &SignerData { chain_id: CHAIN.into(), account_number: numbers[name], sequence: *seq });
        *seq += 1;
        tx
    };
    txs.push(sign("bob", TxBuilder::new(vec![msg_send(&dev_addr("bob"), &dev_addr("carol"), &[Coin::new(NATIVE_DENOM, 1_000 + u128::from(h))])]).gas(200_000)));
    if h >= 2 {
        let cents = if h.is_multiple_of(3) { 900_000 } else { 100 + u128::from(h) };
        txs.push(sign(
            "alice",
            TxBuilder::new(vec![msg_send(&dev_addr("alice"), &dev_addr("issuer"), &[Coin::new("hkd.demo", cents)])]).gas(400_000).travel_rule(payload),
        ));
    }
    txs
}

/// The dev genesis's `app_state` (as `lantaud init` writes it, with this chain id), the dev
/// accounts' numbers, and a Travel Rule payload alice → issuer.
struct DevChain {
    app_state: Vec<u8>,
    numbers: std::collections::BTreeMap<&'static str, u64>,
    payload: lantau_proto::chain::compliance::v1::TravelRulePayload,
}

fn dev_chain() -> DevChain {
    let home = tempfile::tempdir().unwrap();
    init_home(home.path(), &InitOptions { chain_id: CHAIN.into(), ..InitOptions::default() }).unwrap();
    let genesis: Value = serde_json::from_slice(&std::fs::read(home.path().join("config/genesis.json")).unwrap()).unwrap();
    let app_state = serde_json::to_vec(&genesis["app_state"]).unwrap();
    // Account numbers follow the genesis account list.
    let numbers: std::collections::BTreeMap<&'static str, u64> = genesis["app_state"]["auth"]["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter_map(|(n, a)| {
            let name = ["alice", "bob", "issuer"].into_iter().find(|x| a.as_str() == Some(dev_addr(x).to_bech32().as_str()))?;
            Some((name, u64::try_from(n).ok()?))
        })
        .collect();
    assert_eq!(numbers.len(), 3, "dev accounts in the genesis: {numbers:?}");
    let ids = genesis["app_state"]["kyc"]["identities"].as_array().unwrap();
    let id = |n: &str| ids.iter().find(|x| x["address"] == dev_addr(n).to_bech32()).unwrap().clone();
    let (a, i) = (id("alice"), id("issuer"));
    let payload = lantau_proto::chain::compliance::v1::TravelRulePayload {
        originator_ref: a["ivms101_off_chain_ref"].as_str().unwrap().into(),
        beneficiary_ref: i["ivms101_off_chain_ref"].as_str().unwrap().into(),
        originator_vasp: a["vasp_identifier"].as_str().unwrap().into(),
        beneficiary_vasp: i["vasp_identifier"].as_str().unwrap().into(),
        tier: "full".into(),
        ..Default::default()
    };
    DevChain { app_state, numbers, payload }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_agree_at_every_height_and_replay_to_the_same_hashes_after_a_crash_at_each_boundary() {
    let DevChain { app_state, numbers, payload } = dev_chain();

    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut replicas = Vec::new();
    // Replicas 0 and 2 execute an accepted proposal while it is voted on; replica 1 only
    // once it is decided. Their answers must not differ.
    for (k, d) in dirs.iter().enumerate() {
        let answering = Answering { optimistic_execution: k != 1, ..Answering::default() };
        replicas.push(Replica::start_answering(d.path(), [1, 2, 4][k], None, answering).await);
    }

    // Handshake on a clean start: Info says nothing is there; InitChain gives one app hash.
    let mut genesis_hash = None;
    for r in &mut replicas {
        assert_eq!(r.info().await.last_block_height, 0);
        let pb::response::Value::InitChain(ic) = r.call(init_req(&app_state)).await else { panic!() };
        assert_eq!(*genesis_hash.get_or_insert(ic.app_hash.clone()), ic.app_hash);
    }

    // The decided blocks and the app hash after each, for the replays.
    let mut blocks: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut hashes: Vec<Vec<u8>> = Vec::new();
    let mut seqs = std::collections::BTreeMap::new();
    // Where replica 2 crashes: (height, boundary).
    let crashes = [(2u64, "after FinalizeBlock"), (4, "during Commit"), (6, "after Commit"), (7, "after ProcessProposal")];
    for h in 1..=8u64 {
        let proposed = block_txs(h, &mut seqs, &numbers, &payload);
        // The proposer prepares; every replica accepts the proposal.
        let pb::response::Value::PrepareProposal(pp) = replicas[0]
            .call(pb::request::Value::PrepareProposal(pb::RequestPrepareProposal {
                max_tx_bytes: 1 << 20,
                txs: proposed.iter().map(|t| t.clone().into()).collect(),
                height: i64::try_from(h).unwrap(),
                time: block_time(h),
                next_validators_hash: vec![0; 32].into(),
                proposer_address: vec![0; 20].into(),
                ..Default::default()
            }))
            .await
        else {
            panic!()
        };
        let txs: Vec<Vec<u8>> = pp.txs.iter().map(|t| t.to_vec()).collect();
        assert_eq!(txs, proposed, "the proposer dropped a valid transaction at {h}");
        let crash = crashes.iter().find(|(ch, _)| *ch == h).map(|(_, b)| *b);
        for (k, r) in replicas.iter_mut().enumerate() {
            let pb::response::Value::ProcessProposal(v) = r.call(process_req(h, &txs)).await else { panic!() };
            assert_eq!(v.status, pb::response_process_proposal::ProposalStatus::Accept as i32, "height {h}");
            // The block is executing when the process dies: the reboot has only height h - 1,
            // and FinalizeBlock (without a ProcessProposal) executes the block.
            if k == 2 && crash == Some("after ProcessProposal") {
                r.crash().await;
                r.boot().await;
                assert_eq!(r.info().await.last_block_height, i64::try_from(h - 1).unwrap());
            }
        }
        // FinalizeBlock everywhere: byte-identical responses.
        let mut first: Option<Vec<u8>> = None;
        for r in &mut replicas {
            let f = finalized(r.call(finalize_req(i64::try_from(h).unwrap(), &txs)).await);
            for t in &f.tx_results {
                assert_eq!(t.code, 0, "height {h}: {}", t.log);
            }
            let bytes = f.encode_to_vec();
            assert_eq!(first.get_or_insert(bytes.clone()), &bytes, "replicas disagree at height {h}");
        }
        let app_hash = pb::ResponseFinalizeBlock::decode(first.unwrap().as_slice()).unwrap().app_hash.to_vec();
        blocks.push(txs.clone());
        hashes.push(app_hash.clone());

        for (k, r) in replicas.iter_mut().enumerate() {
            if k == 2 && crash == Some("after FinalizeBlock") {
                r.crash().await;
                continue;
            }
            if k == 2 && crash == Some("during Commit") {
                // Commit sent, the process dies before its response is read.
                r.consensus.as_mut().unwrap().send(pb::request::Value::Commit(pb::RequestCommit {})).await;
                r.crash().await;
                continue;
            }
            let pb::response::Value::Commit(_) = r.call(pb::request::Value::Commit(pb::RequestCommit {})).await else { panic!() };
            if k == 2 && crash == Some("after Commit") {
                r.crash().await;
            }
            // Replica 1's consensus connection drops and reopens between heights: nothing is
            // lost (the app's state is not the connection's).
            if k == 1 && h == 3 {
                r.consensus = Some(Conn::open(r.addr).await);
            }
        }
        // A crashed replica restarts; the handshake replays what its app did not commit.
        if let Some(boundary) = crash.filter(|b| *b != "after ProcessProposal") {
            let r = &mut replicas[2];
            r.boot().await;
            let info = r.info().await;
            let done = u64::try_from(info.last_block_height).unwrap();
            assert!(done == h || done + 1 == h, "{boundary} after a crash at {h}: app at {done}");
            if done > 0 {
                assert_eq!(info.last_block_app_hash.to_vec(), hashes[usize::try_from(done - 1).unwrap()], "stored app hash at {done}");
            }
            for rh in done + 1..=h {
                let f = finalized(r.call(finalize_req(i64::try_from(rh).unwrap(), &blocks[usize::try_from(rh - 1).unwrap()])).await);
                assert_eq!(f.app_hash.to_vec(), hashes[usize::try_from(rh - 1).unwrap()], "replay of {rh}");
                let pb::response::Value::Commit(_) = r.call(pb::request::Value::Commit(pb::RequestCommit {})).await else { panic!() };
            }
        }
        for r in &mut replicas {
            let info = r.info().await;
            assert_eq!(info.last_block_height, i64::try_from(h).unwrap());
            assert_eq!(info.last_block_app_hash.to_vec(), app_hash, "height {h}");
        }
    }
    // FinalizeBlock took the early execution of every block its replica processed, and the
    // replica without it executed every block when decided.
    assert_eq!((replicas[0].early("taken"), replicas[0].early("dropped"), replicas[0].early("none")), (8, 0, 0));
    assert_eq!((replicas[1].early("taken"), replicas[1].early("none")), (0, 0));
    assert_eq!(replicas[2].early("taken"), 7, "all but the block whose ProcessProposal the crash lost");
    assert!(replicas[2].early("none") >= 2, "the replays and the block after the crash");
    // The audit log agrees too (the gated transfers' rows and the threshold flags'), read
    // through abci_query on each replica.
    let req = lantau_proto::chain::compliance::v1::QueryAuditLogRequest::default().encode_to_vec();
    let mut logs = Vec::new();
    for r in &mut replicas {
        let mut c = Conn::open(r.addr).await;
        let pb::response::Value::Query(q) = c
            .call(pb::request::Value::Query(pb::RequestQuery {
                data: req.clone().into(),
                path: "/chain.compliance.v1.Query/AuditLog".into(),
                height: 0,
                prove: false,
            }))
            .await
        else {
            panic!()
        };
        assert_eq!(q.code, 0, "{}", q.log);
        logs.push(q.value.to_vec());
    }
    assert!(logs.windows(2).all(|w| w[0] == w[1]));
    let entries = lantau_proto::chain::compliance::v1::QueryAuditLogResponse::decode(logs[0].as_slice()).unwrap().entries;
    assert!(entries.len() >= 7, "{} audit rows", entries.len());
    for r in &mut replicas {
        r.crash().await;
    }
}

/// Runs block `h` (FinalizeBlock and Commit) on each replica; returns the app hash they agree on.
async fn run_block(replicas: &mut [&mut Replica], h: u64, txs: &[Vec<u8>]) -> Vec<u8> {
    let mut first: Option<Vec<u8>> = None;
    for r in replicas.iter_mut() {
        let f = finalized(r.call(finalize_req(i64::try_from(h).unwrap(), txs)).await);
        for t in &f.tx_results {
            assert_eq!(t.code, 0, "height {h}: {}", t.log);
        }
        let bytes = f.encode_to_vec();
        assert_eq!(first.get_or_insert(bytes.clone()), &bytes, "replicas disagree at height {h}");
        let pb::response::Value::Commit(_) = r.call(pb::request::Value::Commit(pb::RequestCommit {})).await else { panic!() };
    }
    pb::ResponseFinalizeBlock::decode(first.unwrap().as_slice()).unwrap().app_hash.to_vec()
}

async fn list_snapshots(r: &Replica) -> Vec<pb::Snapshot> {
    let pb::response::Value::ListSnapshots(l) = r.side_call(pb::request::Value::ListSnapshots(pb::RequestListSnapshots {})).await else { panic!() };
    l.snapshots
}

/// Polls (bounded) until `r` lists a snapshot of height `h`.
async fn snapshot_at(r: &Replica, h: u64) -> pb::Snapshot {
    for _ in 0..1000 {
        if let Some(s) = list_snapshots(r).await.into_iter().find(|s| s.height == h) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no snapshot of height {h}");
}

async fn offer(r: &Replica, snapshot: &pb::Snapshot, app_hash: &[u8]) -> i32 {
    let pb::response::Value::OfferSnapshot(o) =
        r.side_call(pb::request::Value::OfferSnapshot(pb::RequestOfferSnapshot { snapshot: Some(snapshot.clone()), app_hash: app_hash.to_vec().into() })).await
    else {
        panic!()
    };
    o.result
}

async fn load_chunk(r: &Replica, s: &pb::Snapshot, chunk: u32) -> Vec<u8> {
    let pb::response::Value::LoadSnapshotChunk(c) =
        r.side_call(pb::request::Value::LoadSnapshotChunk(pb::RequestLoadSnapshotChunk { height: s.height, format: s.format, chunk })).await
    else {
        panic!()
    };
    c.chunk.to_vec()
}

async fn apply_chunk(r: &Replica, index: u32, chunk: Vec<u8>, sender: &str) -> pb::ResponseApplySnapshotChunk {
    let pb::response::Value::ApplySnapshotChunk(a) =
        r.side_call(pb::request::Value::ApplySnapshotChunk(pb::RequestApplySnapshotChunk { index, chunk: chunk.into(), sender: sender.into() })).await
    else {
        panic!()
    };
    a
}

async fn audit_log(r: &Replica, height: i64) -> pb::ResponseQuery {
    let req = lantau_proto::chain::compliance::v1::QueryAuditLogRequest::default().encode_to_vec();
    let pb::response::Value::Query(q) = r
        .side_call(pb::request::Value::Query(pb::RequestQuery { data: req.into(), path: "/chain.compliance.v1.Query/AuditLog".into(), height, prove: false }))
        .await
    else {
        panic!()
    };
    q
}

/// State sync, CometBFT's grammar: a replica with no state is offered the newest snapshot
/// another lists, applies its chunks in order (fetched with LoadSnapshotChunk), and answers
/// Info with the snapshot's height and app hash; then it follows the chain block by block.
/// A snapshot of another format, one whose content does not hash to the verified app hash,
/// and a chunk corrupted in transit are all refused with nothing written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_replica_restores_from_a_snapshot_and_follows_the_chain() {
    use pb::response_apply_snapshot_chunk::Result as Apply;
    use pb::response_offer_snapshot::Result as Offer;
    let DevChain { app_state, numbers, payload } = dev_chain();
    let (d0, d1, s0, s1) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Small chunks, so that the snapshot has several.
    let settings = |dir: &Path| lantau_app::statesync::SnapshotSettings { dir: dir.to_path_buf(), interval: 3, keep_recent: 2, chunk_bytes: 2048 };
    let mut a = Replica::start_with(d0.path(), 2, Some(settings(s0.path()))).await;
    let pb::response::Value::InitChain(_) = a.call(init_req(&app_state)).await else { panic!() };
    let mut seqs = std::collections::BTreeMap::new();
    let mut blocks = Vec::new();
    let mut hashes = vec![];
    for h in 1..=7u64 {
        let txs = block_txs(h, &mut seqs, &numbers, &payload);
        hashes.push(run_block(&mut [&mut a], h, &txs).await);
        blocks.push(txs);
    }
    let snap = snapshot_at(&a, 6).await;
    assert_eq!(snap.format, lantau_app::statesync::FORMAT);
    assert!(snap.chunks > 1, "{} chunks", snap.chunks);
    assert_eq!(list_snapshots(&a).await.first().map(|s| s.height), Some(6), "newest first");

    let mut b = Replica::start_with(d1.path(), 1, Some(settings(s1.path()))).await;
    assert_eq!(b.info().await.last_block_height, 0);
    // Another format: refused as a format.
    let other = pb::Snapshot { format: 2, ..snap.clone() };
    assert_eq!(offer(&b, &other, &hashes[5]).await, Offer::RejectFormat as i32);
    // Inconsistent metadata: refused.
    let forged = pb::Snapshot { metadata: vec![1, 2, 3].into(), ..snap.clone() };
    assert_eq!(offer(&b, &forged, &hashes[5]).await, Offer::Reject as i32);

    // The right snapshot under an app hash it does not have (what a lying peer would offer):
    // every chunk checks out, the last one fails the root check, nothing is written.
    assert_eq!(offer(&b, &snap, &hashes[4]).await, Offer::Accept as i32);
    for i in 0..snap.chunks {
        let r = apply_chunk(&b, i, load_chunk(&a, &snap, i).await, "peer-a").await;
        let want = if i + 1 == snap.chunks { Apply::RejectSnapshot } else { Apply::Accept };
        assert_eq!(r.result, want as i32, "chunk {i}");
    }
    assert_eq!(b.info().await.last_block_height, 0, "a rejected snapshot writes nothing");

    // The real thing, with one chunk corrupted in transit: refetched, its sender rejected.
    assert_eq!(offer(&b, &snap, &hashes[5]).await, Offer::Accept as i32);
    for i in 0..snap.chunks {
        let chunk = load_chunk(&a, &snap, i).await;
        assert!(!chunk.is_empty());
        if i == 1 {
            let mut bad = chunk.clone();
            bad[0] ^= 0xff;
            let r = apply_chunk(&b, i, bad, "peer-x").await;
            assert_eq!(r.result, Apply::Retry as i32);
            assert_eq!(r.refetch_chunks, vec![1]);
            assert_eq!(r.reject_senders, vec!["peer-x".to_string()]);
        }
        assert_eq!(apply_chunk(&b, i, chunk, "peer-a").await.result, Apply::Accept as i32, "chunk {i}");
    }
    assert!(load_chunk(&a, &snap, snap.chunks).await.is_empty(), "a chunk past the end is empty");
    let info = b.info().await;
    assert_eq!(info.last_block_height, 6);
    assert_eq!(info.last_block_app_hash.to_vec(), hashes[5]);

    // The restored replica replays block 7 and then follows the chain with the original.
    b.consensus = Some(Conn::open(b.addr).await);
    assert_eq!(run_block(&mut [&mut b], 7, &blocks[6]).await, hashes[6]);
    for h in 8..=9u64 {
        let txs = block_txs(h, &mut seqs, &numbers, &payload);
        run_block(&mut [&mut a, &mut b], h, &txs).await;
    }
    // The audit log came across whole (its rows chain to the head the app hash proves, and
    // their indexes were rebuilt): both answer the same log.
    let (la, lb) = (audit_log(&a, 0).await, audit_log(&b, 0).await);
    assert_eq!((la.code, lb.code), (0, 0), "{} {}", la.log, lb.log);
    assert_eq!(la.value, lb.value);
    assert!(lantau_proto::chain::compliance::v1::QueryAuditLogResponse::decode(la.value.as_ref()).unwrap().entries.len() >= 8);
    // Heights since the snapshot are queryable on the restored replica; older ones are not.
    assert_eq!(audit_log(&b, 7).await.code, 0);
    assert_eq!(audit_log(&b, 5).await.code, 26);
    // Snapshots of the same height are the same bytes on the original and the restored replica.
    let (sa, sb) = (snapshot_at(&a, 9).await, snapshot_at(&b, 9).await);
    assert_eq!(sa, sb);
    // A node with state refuses an offer.
    assert_eq!(offer(&a, &snap, &hashes[5]).await, Offer::Reject as i32);
    a.crash().await;
    b.crash().await;
}

/// A replica fed another block at the same height (what a faulty or forked CometBFT would
/// do) reports another app hash for it at once, in FinalizeBlock and in Info: the divergence
/// is detectable at the height it happens (CometBFT then refuses the next header, whose app
/// hash is the majority's; the 4-validator test shows it halting).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_fed_another_block_reports_another_app_hash_at_that_height() {
    let DevChain { app_state, numbers, payload } = dev_chain();
    let (d0, d1) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = Replica::start(d0.path(), 2).await;
    let mut b = Replica::start(d1.path(), 1).await;
    for r in [&mut a, &mut b] {
        let pb::response::Value::InitChain(_) = r.call(init_req(&app_state)).await else { panic!() };
    }
    let mut seqs = std::collections::BTreeMap::new();
    for h in 1..=3u64 {
        let txs = block_txs(h, &mut seqs, &numbers, &payload);
        run_block(&mut [&mut a, &mut b], h, &txs).await;
    }
    // Height 4: a gets the block with both transfers, b the same block without the last one.
    let txs = block_txs(4, &mut seqs, &numbers, &payload);
    let ha = run_block(&mut [&mut a], 4, &txs).await;
    let hb = run_block(&mut [&mut b], 4, &txs[..1]).await;
    assert_ne!(ha, hb, "different blocks, same app hash");
    let (ia, ib) = (a.info().await, b.info().await);
    assert_eq!((ia.last_block_height, ib.last_block_height), (4, 4));
    assert_eq!(ia.last_block_app_hash.to_vec(), ha);
    assert_eq!(ib.last_block_app_hash.to_vec(), hb);
    a.crash().await;
    b.crash().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_events_cometbft_gets_the_same_results_and_hashes_less_the_events() {
    let DevChain { app_state, numbers, payload } = dev_chain();
    let (d0, d1) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut full = Replica::start(d0.path(), 2).await;
    let mut lean = Replica::start(d1.path(), 1).await;
    // Served again without events (`[cometbft] send_events = false`), with a subscriber.
    lean.crash().await;
    lean.answering.send_events = false;
    let (feed, mut fed) = tokio::sync::mpsc::unbounded_channel();
    lean.feed = Some(feed);
    lean.boot().await;
    for r in [&mut full, &mut lean] {
        let pb::response::Value::InitChain(_) = r.call(init_req(&app_state)).await else { panic!() };
    }
    let mut seqs = std::collections::BTreeMap::new();
    let mut events = 0;
    for h in 1..=3u64 {
        let txs = block_txs(h, &mut seqs, &numbers, &payload);
        let mut got = Vec::new();
        for r in [&mut full, &mut lean] {
            got.push(finalized(r.call(finalize_req(i64::try_from(h).unwrap(), &txs)).await));
            // The subscribers get a block once it is committed.
            assert!(fed.try_recv().is_err(), "height {h}: a block went to the subscribers before its Commit");
            let pb::response::Value::Commit(_) = r.call(pb::request::Value::Commit(pb::RequestCommit {})).await else { panic!() };
        }
        // They get the whole answer, events included, as the replica that sends them.
        let whole = fed.try_recv().unwrap_or_else(|e| panic!("height {h}: no block for the subscribers after Commit: {e}"));
        assert_eq!(whole.req.height.value(), h);
        assert_eq!(pb::ResponseFinalizeBlock::from(whole.resp), got[0], "height {h}: the subscribers' answer differs from the one with events");
        let (mut expected, lean_resp) = (got[0].clone(), got[1].clone());
        events += expected.tx_results.iter().map(|t| t.events.len()).sum::<usize>();
        assert!(lean_resp.events.is_empty() && lean_resp.tx_results.iter().all(|t| t.events.is_empty()), "height {h}: events sent");
        expected.events.clear();
        for t in &mut expected.tx_results {
            t.events.clear();
        }
        assert_eq!(lean_resp, expected, "height {h}: the results differ beyond the events");
        assert_eq!(lean_resp.tx_results.len(), txs.len());
    }
    assert!(events > 0, "the full replica sent no events to compare");
    full.crash().await;
    lean.crash().await;
}

/// A block executed while it was voted on answers as one executed when decided: with
/// optimistic execution on, a later round's proposal replaces the early run of an earlier one,
/// and a decided block other than the one this node processed (another hash) drops the early
/// run and executes as decided. Every answer equals a replica's without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_executed_while_voted_on_answers_as_one_executed_when_decided() {
    let DevChain { app_state, numbers, payload } = dev_chain();
    let (d0, d1) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut eager = Replica::start_answering(d0.path(), 2, None, Answering::default()).await;
    let mut plain = Replica::start_answering(d1.path(), 1, None, Answering { optimistic_execution: false, ..Answering::default() }).await;
    for r in [&mut eager, &mut plain] {
        let pb::response::Value::InitChain(_) = r.call(init_req(&app_state)).await else { panic!() };
    }
    // Another proposal of the same transactions: another hash and a later time.
    let reproposed = |v: pb::request::Value| match v {
        pb::request::Value::ProcessProposal(mut p) => {
            p.hash = vec![9; 32].into();
            p.time.as_mut().unwrap().seconds += 1;
            pb::request::Value::ProcessProposal(p)
        }
        pb::request::Value::FinalizeBlock(mut f) => {
            f.hash = vec![9; 32].into();
            f.time.as_mut().unwrap().seconds += 1;
            pb::request::Value::FinalizeBlock(f)
        }
        other => other,
    };
    let mut seqs = std::collections::BTreeMap::new();
    for h in 1..=4u64 {
        let txs = block_txs(h, &mut seqs, &numbers, &payload);
        let mut answers = Vec::new();
        for r in [&mut eager, &mut plain] {
            let proposals = match h {
                // Round 0's proposal, then round 1's, which is decided.
                2 => vec![process_req(h, &txs), reproposed(process_req(h, &txs))],
                _ => vec![process_req(h, &txs)],
            };
            for p in proposals {
                let pb::response::Value::ProcessProposal(v) = r.call(p).await else { panic!() };
                assert_eq!(v.status, pb::response_process_proposal::ProposalStatus::Accept as i32, "height {h}");
            }
            // At heights 2 and 3 the decided block has the other hash (and time); at 3 no
            // proposal of it reached this node.
            let decided = match h {
                2 | 3 => reproposed(finalize_req(i64::try_from(h).unwrap(), &txs)),
                _ => finalize_req(i64::try_from(h).unwrap(), &txs),
            };
            let f = finalized(r.call(decided).await);
            for t in &f.tx_results {
                assert_eq!(t.code, 0, "height {h}: {}", t.log);
            }
            answers.push(f.encode_to_vec());
            let pb::response::Value::Commit(_) = r.call(pb::request::Value::Commit(pb::RequestCommit {})).await else { panic!() };
        }
        assert_eq!(answers[0], answers[1], "height {h}: the early execution answered otherwise");
    }
    assert_eq!((eager.early("taken"), eager.early("dropped"), eager.early("none")), (3, 1, 0));
    assert_eq!(plain.early("taken") + plain.early("dropped") + plain.early("none"), 0);
    eager.crash().await;
    plain.crash().await;
}

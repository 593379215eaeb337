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
use lantau_node::abci::AbciAddr;
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
}

fn free_addr() -> std::net::SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

impl Replica {
    async fn start(dir: &Path, threads: usize) -> Self {
        let mut r = Replica { dir: dir.to_path_buf(), threads, addr: free_addr(), runtime: None, app: None, consensus: None };
        r.boot().await;
        r
    }

    async fn boot(&mut self) {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(self.threads).enable_all().build().unwrap();
        let dir = self.dir.clone();
        let app = runtime
            .spawn(async move { Arc::new(App::load(dir, AppConfig::default(), Arc::new(NoHook)).await.unwrap()) })
            .await
            .unwrap();
        self.addr = free_addr();
        let (a, addr) = (app.clone(), AbciAddr::Tcp(self.addr));
        runtime.spawn(async move {
            let _ = lantau_node::abci::serve(a, lantau_node::metrics::Metrics::new(None), None, &addr).await;
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
            rt.shutdown_background();
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
fn block_txs(h: u64, seqs: &mut std::collections::BTreeMap<&'static str, u64>, numbers: &std::collections::BTreeMap<&'static str, u64>, payload: &lantau_proto::chain::compliance::v1::TravelRulePayload) -> Vec<Vec<u8>> {
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
        txs.push(sign("alice", TxBuilder::new(vec![msg_send(&dev_addr("alice"), &dev_addr("issuer"), &[Coin::new("hkd.demo", cents)])]).gas(400_000).travel_rule(payload)));
    }
    txs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_agree_at_every_height_and_replay_to_the_same_hashes_after_a_crash_at_each_boundary() {
    // The dev genesis, as `lantaud init` writes it, with this chain id.
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

    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut replicas = Vec::new();
    for (k, d) in dirs.iter().enumerate() {
        replicas.push(Replica::start(d.path(), [1, 2, 4][k]).await);
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
    let crashes = [(2u64, "after FinalizeBlock"), (4, "during Commit"), (6, "after Commit")];
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
        for r in &mut replicas {
            let pb::response::Value::ProcessProposal(v) = r
                .call(pb::request::Value::ProcessProposal(pb::RequestProcessProposal {
                    txs: txs.iter().map(|t| t.clone().into()).collect(),
                    height: i64::try_from(h).unwrap(),
                    time: block_time(h),
                    hash: vec![7; 32].into(),
                    next_validators_hash: vec![0; 32].into(),
                    proposer_address: vec![0; 20].into(),
                    ..Default::default()
                }))
                .await
            else {
                panic!()
            };
            assert_eq!(v.status, pb::response_process_proposal::ProposalStatus::Accept as i32, "height {h}");
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

        let crash = crashes.iter().find(|(ch, _)| *ch == h).map(|(_, b)| *b);
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
        if let Some(boundary) = crash {
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
    // The audit log agrees too (the gated transfers' rows and the threshold flags'), read
    // through abci_query on each replica.
    let req = lantau_proto::chain::compliance::v1::QueryAuditLogRequest::default().encode_to_vec();
    let mut logs = Vec::new();
    for r in &mut replicas {
        let mut c = Conn::open(r.addr).await;
        let pb::response::Value::Query(q) = c
            .call(pb::request::Value::Query(pb::RequestQuery { data: req.clone().into(), path: "/chain.compliance.v1.Query/AuditLog".into(), height: 0, prove: false }))
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

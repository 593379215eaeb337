//! A damaged app store: garbage in a stopped node's SST files, a truncated or deleted SST, a
//! missing MANIFEST or CURRENT. The real binary either refuses to start with one clear message
//! (non-zero exit, no panic) or stops at the first damaged read; it never answers a value
//! different from what the intact store answered (docs/decisions.md, "The corruption policy").

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use lantau_client::{msg_send, RestClient, SignerData, TxBuilder};
use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_test_utils::{dev_addr, dev_key, poll};

use crate::crash::free_port;

/// The binary under test: cargo's, or `LANTAU_TEST_LANTAUD` (to run these tests against
/// another build of it).
fn lantaud() -> PathBuf {
    std::env::var_os("LANTAU_TEST_LANTAUD").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_lantaud")), PathBuf::from)
}

/// How long a start may take to either serve or exit.
const START_BOUND: Duration = Duration::from_secs(60);

/// A `lantaud start` child with its stderr in a file.
struct Node {
    child: Child,
    base: String,
    stderr: PathBuf,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Node {
    fn start(home: &Path, extra: &[&str]) -> Node {
        let api = free_port();
        let stderr = home.with_extension("stderr.log");
        let mut cmd = Command::new(lantaud());
        cmd.args(["start", "--home"])
            .arg(home)
            .args(["--api.address", &format!("127.0.0.1:{api}"), "--rpc.laddr", &format!("127.0.0.1:{}", free_port()), "--block-time", "100ms"])
            .args(["--json-rpc.address", &format!("127.0.0.1:{}", free_port()), "--json-rpc.ws-address", &format!("127.0.0.1:{}", free_port())])
            .args(["--metrics.laddr", &format!("127.0.0.1:{}", free_port()), "--grpc.address", &format!("127.0.0.1:{}", free_port())])
            .args(extra)
            .env("RUST_BACKTRACE", "1")
            .env_remove("LANTAU_LOG")
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap());
        Node { child: cmd.spawn().unwrap(), base: format!("http://127.0.0.1:{api}"), stderr }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().unwrap()
    }

    /// Serving REST, or exited: `Ok(())` when serving, `Err(status)` when it exited.
    async fn serving_or_exited(&mut self) -> Result<(), ExitStatus> {
        let client = RestClient::new(&self.base);
        let mut status = None;
        poll(START_BOUND, || {
            let done = self.child.try_wait().unwrap();
            let client = &client;
            status = done;
            async move { done.is_some() || client.chain_id().await.is_ok() }
        })
        .await
        .unwrap_or_else(|_| panic!("the node neither served nor exited; stderr:\n{}", self.stderr()));
        match status {
            Some(st) => Err(st),
            None => Ok(()),
        }
    }

    /// Stops the node the way an operator does (SIGINT) and waits for it (bounded).
    async fn interrupt(mut self) {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(pid, libc::SIGINT) };
        poll(Duration::from_secs(30), || {
            let done = self.child.try_wait().unwrap().is_some();
            async move { done }
        })
        .await
        .unwrap_or_else(|_| panic!("the node did not stop on SIGINT; stderr:\n{}", self.stderr()));
    }
}

/// What an intact store answers: (path, body) of every query compared.
type Answers = Vec<(String, serde_json::Value)>;

async fn get(base: &str, path: &str) -> reqwest::Result<(u16, serde_json::Value)> {
    let r = reqwest::get(format!("{base}{path}")).await?;
    let status = r.status().as_u16();
    Ok((status, r.json().await.unwrap_or(serde_json::Value::Null)))
}

/// The queries whose answers must not change: the audit log, the flag queue, every dev
/// account's balances, the blocks and transactions written.
fn queries(height: u64, hashes: &[String]) -> Vec<String> {
    let mut q = vec!["/chain/compliance/v1/audit_log".to_string(), "/chain/compliance/v1/flags".to_string()];
    for name in lantau_node::home::DEV_ACCOUNT_NAMES {
        q.push(format!("/cosmos/bank/v1beta1/balances/{}", dev_addr(name)));
    }
    for h in 1..=height {
        q.push(format!("/cosmos/base/tendermint/v1beta1/blocks/{h}"));
    }
    for hash in hashes {
        q.push(format!("/cosmos/tx/v1beta1/txs/{hash}"));
    }
    q
}

/// A dev home with committed transfers (stablecoin ones write audit rows) whose store has SST
/// files, stopped; and what it answers.
async fn pristine(dir: &Path) -> (PathBuf, Answers) {
    let home = dir.join("pristine");
    let st = Command::new(lantaud()).args(["init", "--home"]).arg(&home).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let mut node = Node::start(&home, &[]);
    node.serving_or_exited().await.unwrap_or_else(|st| panic!("{st}: {}", node.stderr()));
    let client = RestClient::new(&node.base);
    let chain_id = client.chain_id().await.unwrap();
    let mut hashes = Vec::new();
    for (name, to) in [("bob", "alice")] {
        let key = dev_key(name);
        let (num, seq) = client.account(&key.address()).await.unwrap().unwrap();
        let payload = client.travel_rule_payload(&key.address(), &dev_addr(to)).await.unwrap();
        for i in 0..120u64 {
            let coins = [Coin::new(NATIVE_DENOM, 1u128), Coin::new("hkd.demo", 100u128 + u128::from(i))];
            let tx = TxBuilder::new(vec![msg_send(&key.address(), &dev_addr(to), &coins)])
                .travel_rule(&payload)
                .gas(1_000_000)
                .sign(&key, &SignerData { chain_id: chain_id.clone(), account_number: num, sequence: seq + i });
            let b = client.broadcast(&tx, "BROADCAST_MODE_SYNC").await.unwrap();
            assert_eq!(b.code, 0, "{}", b.raw_log);
            hashes.push(b.txhash);
        }
    }
    for h in &hashes {
        let r = client.wait_for_tx(h, Duration::from_secs(60), Duration::from_millis(50)).await.unwrap();
        assert_eq!(r.code, 0, "{}", r.raw_log);
    }
    node.interrupt().await;
    // RocksDB keeps the last writes in its log until a flush; opening the store again flushes
    // them into an SST file, so a second start leaves every record in SST files.
    let mut node = Node::start(&home, &[]);
    node.serving_or_exited().await.unwrap_or_else(|st| panic!("{st}: {}", node.stderr()));
    let height = {
        let (_, v) = get(&node.base, "/cosmos/base/tendermint/v1beta1/blocks/latest").await.unwrap();
        v["block"]["header"]["height"].as_str().unwrap().parse::<u64>().unwrap()
    };
    let mut answers = Vec::new();
    for q in queries(height, &hashes) {
        let (status, body) = get(&node.base, &q).await.unwrap();
        assert_eq!(status, 200, "{q}: {body}");
        answers.push((q, body));
    }
    let audit = answers[0].1["entries"].as_array().unwrap().len();
    assert!(audit >= 120, "{audit} audit rows");
    node.interrupt().await;
    assert!(!ssts(&home).is_empty(), "the store has no SST file");
    (home, answers)
}

fn store(home: &Path) -> PathBuf {
    home.join("data/state")
}

/// The store's SST files, largest first.
fn ssts(home: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(store(home))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .map(|p| (std::fs::metadata(&p).unwrap().len(), p))
        .collect();
    v.sort();
    v.reverse();
    v.into_iter().map(|(_, p)| p).collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Deterministic garbage (xorshift).
fn garbage(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

/// Writes up to 64 KiB of garbage at `at` (a fraction of the file) without changing its size.
fn scribble(file: &Path, at: f64, seed: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let size = std::fs::metadata(file).unwrap().len();
    let len = size.min(64 * 1024);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let offset = (((size - len) as f64) * at) as u64;
    let mut f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(&garbage(usize::try_from(len).unwrap(), seed)).unwrap();
}

/// The one clear message of a refused start: it names the store and what to do, and carries
/// no panic.
fn assert_clear_refusal(what: &str, status: ExitStatus, stderr: &str, home: &Path) {
    assert!(!status.success(), "{what}: exit {status}");
    assert!(!stderr.contains("panicked") && !stderr.contains("stack backtrace"), "{what}: a panic:\n{stderr}");
    assert!(stderr.contains("is damaged"), "{what}: no damage message:\n{stderr}");
    assert!(stderr.contains(&store(home).display().to_string()), "{what}: the message does not name the store:\n{stderr}");
    assert!(stderr.contains("state sync") && stderr.contains("snapshot"), "{what}: the message does not say what to do:\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_in_sst_files_never_yields_an_answer_different_from_the_intact_store() {
    let dir = tempfile::tempdir().unwrap();
    let (pristine, answers) = pristine(dir.path()).await;
    let files = ssts(&pristine);
    let mut refused = 0;
    let mut placements = 0;
    for (i, file) in files.iter().enumerate().take(3) {
        for (j, at) in [0.0, 0.35, 0.7, 1.0].into_iter().enumerate() {
            placements += 1;
            let what = format!("{} at {at}", file.file_name().unwrap().to_string_lossy());
            let home = dir.path().join(format!("damaged-{i}-{j}"));
            copy_dir(&pristine, &home);
            scribble(&store(&home).join(file.file_name().unwrap()), at, u64::try_from(i * 10 + j).unwrap() + 7);
            let mut node = Node::start(&home, &[]);
            match node.serving_or_exited().await {
                Err(st) => {
                    assert_clear_refusal(&what, st, &node.stderr(), &home);
                    refused += 1;
                }
                Ok(()) => {
                    // It serves: every answer it gives is the intact store's; a query it
                    // cannot answer stops it (non-zero exit).
                    let mut failed = None;
                    for (q, want) in &answers {
                        match get(&node.base, q).await {
                            Ok((200, body)) => assert_eq!(&body, want, "{what}: {q} answered differently from the intact store"),
                            Ok((status, body)) => {
                                failed = Some(format!("{q}: {status} {body}"));
                                break;
                            }
                            Err(e) => {
                                failed = Some(format!("{q}: {e}"));
                                break;
                            }
                        }
                    }
                    if let Some(f) = failed {
                        poll(Duration::from_secs(30), || {
                            let done = node.exited().is_some();
                            async move { done }
                        })
                        .await
                        .unwrap_or_else(|_| panic!("{what}: {f}, and the node kept running"));
                        let st = node.exited().unwrap();
                        assert!(!st.success(), "{what}: {f}; exit {st}");
                    }
                }
            }
        }
    }
    eprintln!("{refused} of {placements} damaged stores refused at start");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_damaged_at_open_is_one_clear_message_and_a_non_zero_exit_in_both_drivers() {
    let dir = tempfile::tempdir().unwrap();
    let (pristine, _) = pristine(dir.path()).await;
    type Damage = fn(&Path);
    let cases: [(&str, Damage); 4] = [
        ("a truncated SST", |home| {
            let f = &ssts(home)[0];
            let len = std::fs::metadata(f).unwrap().len();
            std::fs::OpenOptions::new().write(true).open(f).unwrap().set_len(len / 2).unwrap();
        }),
        ("a deleted SST", |home| std::fs::remove_file(&ssts(home)[0]).unwrap()),
        ("a missing MANIFEST", |home| {
            for e in std::fs::read_dir(store(home)).unwrap() {
                let p = e.unwrap().path();
                if p.file_name().unwrap().to_string_lossy().starts_with("MANIFEST-") {
                    std::fs::remove_file(p).unwrap();
                }
            }
        }),
        ("a missing CURRENT", |home| std::fs::remove_file(store(home).join("CURRENT")).unwrap()),
    ];
    for (i, (what, damage)) in cases.into_iter().enumerate() {
        for (driver, extra) in [("embedded", vec![]), ("abci", vec!["--abci".to_string(), format!("127.0.0.1:{}", free_port())])] {
            let home = dir.path().join(format!("open-{i}-{driver}"));
            copy_dir(&pristine, &home);
            damage(&home);
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            let mut node = Node::start(&home, &extra);
            let mut status = None;
            poll(START_BOUND, || {
                status = node.exited();
                let done = status.is_some();
                async move { done }
            })
            .await
            .unwrap_or_else(|_| panic!("{what} ({driver}): the node did not exit; stderr:\n{}", node.stderr()));
            let stderr = node.stderr();
            assert_clear_refusal(&format!("{what} ({driver})"), status.unwrap(), &stderr, &home);
            eprintln!("{what} ({driver}): {}", stderr.lines().filter(|l| l.contains("damaged")).collect::<Vec<_>>().join(" | "));
        }
    }
}

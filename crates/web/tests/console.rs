//! The reviewers' console over HTTP against a dev chain: token and CSRF protection (refusals
//! write nothing), the worklist and the case from the node's queries, and the review chain:
//! a reviewer escalates with a note, an officer closes BLOCKED, the subject's next transfer is
//! refused with code 18.

#![allow(missing_docs, unused_crate_dependencies, clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Duration;

use lantau_client::{msg_send, TxBuilder};
use lantau_crypto::SecretKey;
use lantau_primitives::Coin;
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use lantau_web::console::{Console, ConsoleConfig};

mod support;
use serde_json::{json, Value};
use support::*;

struct Served {
    url: String,
    token: String,
    stop: Option<(tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<()>)>,
}

async fn serve(n: &TestNode, key: &SecretKey, name: &str, dir: &std::path::Path) -> Served {
    let cfg = ConsoleConfig::for_key("127.0.0.1:0".parse().unwrap(), n.rest_url.clone(), n.rpc_url.clone(), key.clone(), name, dir.join(format!("{name}.db")));
    let s = serve_with(cfg).await;
    assert!(s.token.len() == 32, "a session opened at start");
    s
}

async fn serve_with(cfg: ConsoleConfig) -> Served {
    let c = Console::new(cfg).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let token = c.token().to_string();
    if token.is_empty() {
        assert_eq!(c.url(addr), format!("http://{addr}/"));
    } else {
        assert!(c.url(addr).starts_with(&format!("http://{addr}/#token=")));
    }
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(c.serve(listener, async move {
        let _ = rx.await;
    }));
    Served { url: format!("http://{addr}"), token, stop: Some((stop, task)) }
}

impl Served {
    /// Signs in as `key` (a challenge, `personal_sign`, the signed challenge): that person's
    /// session on the same service.
    async fn signin(&self, key: &SecretKey) -> Served {
        let http = reqwest::Client::new();
        let ch: Value = http
            .post(format!("{}/api/signin/challenge", self.url))
            .json(&json!({"address": key.address().to_hex()}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let message = ch["message"].as_str().unwrap_or_else(|| panic!("{ch}")).to_string();
        let r =
            http.post(format!("{}/api/signin", self.url)).json(&json!({"message": message, "signature": personal_sign(key, &message)})).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["address"], key.address().to_bech32().as_str(), "{v}");
        Served { url: self.url.clone(), token: v["token"].as_str().unwrap().to_string(), stop: None }
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let r = reqwest::Client::new().get(format!("{}{path}", self.url)).bearer_auth(&self.token).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    async fn csrf(&self) -> String {
        self.get("/api/session").await.1["csrf_token"].as_str().unwrap().to_string()
    }

    async fn act(&self, path: &str, body: &Value) -> (u16, Value) {
        let csrf = self.csrf().await;
        let r = reqwest::Client::new()
            .post(format!("{}{path}", self.url))
            .bearer_auth(&self.token)
            .header("x-csrf-token", csrf)
            .header("origin", &self.url)
            .json(body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    async fn stop(self) {
        if let Some((stop, task)) = self.stop {
            let _ = stop.send(());
            let _ = task.await;
        }
    }
}

fn code(v: &Value) -> &str {
    v["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_escalates_and_an_officer_blocks_through_their_consoles() {
    let n = TestNode::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The dev chain's issuer has a reviewer and an officer bound from genesis.
    let (reviewer, officer, issuer, alice) = (dev_key("reviewer"), dev_key("officer"), dev_key("issuer"), dev_key("alice"));
    let payload = n.client.travel_rule_payload(&alice.address(), &issuer.address()).await.unwrap();
    let hash = raise_threshold_flag(&n).await;
    let first_id = 1;
    // A note a per-key console kept in its file for a flag of the same number (a dev chain
    // reset since): the desk moves it into its database at start, and it never shows on this
    // flag, whose note hash on chain is another.
    std::fs::write(
        dir.path().join("desk-notes.jsonl"),
        format!(
            "{}\n",
            json!({"flag_id": first_id.to_string(), "at": "2026-01-01T00:00:00Z", "text": "a note of another chain's flag", "hash": "ab".repeat(32)})
        ),
    )
    .unwrap();

    let desk = serve(&n, &reviewer, "desk", dir.path()).await;
    assert!(dir.path().join("desk-notes.jsonl.imported").exists(), "the notes file was not moved into the database");
    let mlro = serve(&n, &officer, "mlro", dir.path()).await;

    // No token, a wrong token: 401. The page itself needs none.
    let r = reqwest::get(format!("{}/api/flags", desk.url)).await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert_eq!(code(&r.json::<Value>().await.unwrap()), "unauthorized");
    let r = reqwest::Client::new().get(format!("{}/api/session", desk.url)).bearer_auth("0".repeat(32)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert_eq!(reqwest::get(format!("{}/", desk.url)).await.unwrap().status().as_u16(), 200);

    let (s, session) = desk.get("/api/session").await;
    assert_eq!(s, 200, "{session}");
    assert_eq!((session["role"].as_str(), session["parent"].as_str()), (Some("reviewer"), Some(issuer.address().to_bech32().as_str())));
    assert_eq!(session["hkd"]["decimals"], 2);
    assert_eq!(mlro.get("/api/session").await.1["role"], "officer");

    // The worklist: the flag, EMITTED.
    let (s, flags) = desk.get("/api/flags?status=FLAG_STATUS_EMITTED").await;
    assert_eq!(s, 200, "{flags}");
    let flag = flags["flags"].as_array().unwrap().iter().find(|f| f["tx_hash"].as_str().unwrap().eq_ignore_ascii_case(&hash)).cloned().expect("the flag");
    let id = flag["flag_id"].as_str().unwrap().to_string();
    assert_eq!(id, first_id.to_string(), "the dev chain's first flag");
    assert_eq!(flag["subject"], alice.address().to_bech32());
    let (s, v) = desk.get("/api/flags?status=NOT_A_STATUS").await;
    assert_eq!((s, code(&v)), (400, "node_refused"), "{v}");

    // The case: the live trace (seven rows), the payload, the identity, the subject's audit
    // history.
    let (s, case) = desk.get(&format!("/api/case/{id}")).await;
    assert_eq!(s, 200, "{case}");
    assert_eq!(case["trace"]["source"], "tx_trace", "{case}");
    assert_eq!(case["trace"]["trace"]["results"].as_array().unwrap().len(), 7);
    assert_eq!(case["travel_rule_payload"]["originator_ref"], payload.originator_ref);
    assert_eq!(case["identity"]["level"], "LEVEL_RETAIL_PLUS");
    assert!(case["subject_audit"].as_array().unwrap().iter().any(|e| e["tx_type"] == "threshold_flag"), "{case}");
    assert_eq!(case["tx"]["txhash"].as_str().map(str::to_uppercase), Some(hash.to_uppercase()));
    let (s, v) = desk.get("/api/case/no-such-flag").await;
    assert_eq!((s, code(&v)), (404, "not_found"));

    // Actions without the CSRF token, with a forged one, from another origin: refused, and
    // the flag is unchanged.
    let post = |headers: Vec<(&'static str, String)>| {
        let mut r = reqwest::Client::new().post(format!("{}/api/flags/{id}/escalate", desk.url)).bearer_auth(&desk.token).json(&json!({"note": "x"}));
        for (k, v) in headers {
            r = r.header(k, v);
        }
        async move {
            let r = r.send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let csrf = desk.csrf().await;
    for (what, headers) in [
        ("no CSRF token", vec![]),
        ("a forged CSRF token", vec![("x-csrf-token", "f".repeat(32))]),
        ("another origin", vec![("x-csrf-token", csrf.clone()), ("origin", "http://evil.example".to_string())]),
    ] {
        let (s, v) = post(headers).await;
        assert_eq!((s, code(&v)), (403, "csrf"), "{what}: {v}");
    }
    let status = |c: &Served| {
        let (url, token, id) = (c.url.clone(), c.token.clone(), id.clone());
        async move {
            let v: Value = reqwest::Client::new().get(format!("{url}/api/flags")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
            v["flags"].as_array().unwrap().iter().find(|f| f["flag_id"] == id.as_str()).unwrap()["status"].as_str().unwrap().to_string()
        }
    };
    assert_eq!(status(&desk).await, "FLAG_STATUS_EMITTED");
    // An escalation needs a note; an officer's key cannot review (the chain refuses, code shown).
    let (s, v) = desk.act(&format!("/api/flags/{id}/escalate"), &json!({"note": "  "})).await;
    assert_eq!((s, code(&v)), (400, "invalid_request"), "{v}");
    let (s, v) = mlro.act(&format!("/api/flags/{id}/review"), &json!({"decision": "APPROVED"})).await;
    assert_eq!((s, code(&v)), (422, "tx_refused"), "{v}");
    assert_eq!((v["codespace"].as_str(), v["tx_code"].as_u64()), (Some("compliance"), Some(11)), "{v}");
    assert!(!v["raw_log"].as_str().unwrap().is_empty());
    assert_eq!(status(&desk).await, "FLAG_STATUS_EMITTED");

    // The reviewer escalates with a note (its hash on chain, the note kept by the console).
    let note = "Amount is 10x this customer's usual; source of funds unclear.";
    let (s, v) = desk.act(&format!("/api/flags/{id}/escalate"), &json!({"note": note})).await;
    assert_eq!((s, v["code"].as_u64()), (200, Some(0)), "{v}");
    assert_eq!(status(&desk).await, "FLAG_STATUS_PENDING_OFFICER");
    let (_, case) = desk.get(&format!("/api/case/{id}")).await;
    let note_hash = const_hex::encode(lantau_crypto::sha256(note.as_bytes()));
    assert_eq!(case["flag"]["officer_note_hash"], note_hash.as_str());
    assert_eq!(case["notes"].as_array().map(Vec::len), Some(1), "{case}");
    assert_eq!(case["notes"][0]["text"], note);

    // The officer closes it BLOCKED; alice's next transfer is refused with code 18.
    let (s, v) = mlro.act(&format!("/api/flags/{id}/close"), &json!({"decision": "BLOCKED", "evidence": "case file 42"})).await;
    assert_eq!((s, v["code"].as_u64()), (200, Some(0)), "{v}");
    assert_eq!(status(&mlro).await, "FLAG_STATUS_RESOLVED_BLOCKED");
    alices_next_transfer_is_refused_with_code_18(&n).await;
    // The audit explorer's queries and the report come through.
    let (s, v) = mlro.get("/api/audit_log?tx_type=flag_close").await;
    assert_eq!((s, v["entries"].as_array().map(Vec::len)), (200, Some(1)), "{v}");
    let (s, v) = mlro.get("/api/report").await;
    assert_eq!((s, v["sections"].as_array().map(Vec::len)), (200, Some(4)), "{v}");
    assert_eq!(mlro.get("/api/params").await.0, 200);

    desk.stop().await;
    mlro.stop().await;
    n.stop().await;
}

/// A flag id that is not one (`1 OR 1=1`) is refused by the console itself: nothing is signed
/// or broadcast, so the reviewer pays no fee and the key's sequence does not move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_flag_id_is_refused_before_anything_is_signed() {
    let n = TestNode::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let reviewer = dev_key("reviewer");
    let desk = serve(&n, &reviewer, "desk", dir.path()).await;
    let before = n.client.account(&reviewer.address()).await.unwrap();
    for (action, body) in [("review", json!({"decision": "APPROVED"})), ("escalate", json!({"note": "x"})), ("close", json!({"decision": "BLOCKED"}))] {
        let (s, v) = desk.act(&format!("/api/flags/1%20OR%201=1/{action}"), &body).await;
        assert_eq!((s, code(&v)), (400, "invalid_request"), "{action}: {v}");
        assert!(v["message"].as_str().unwrap_or("").contains("nothing was signed"), "{action}: {v}");
    }
    assert_eq!(n.client.account(&reviewer.address()).await.unwrap(), before, "the reviewer's key signed something");
    desk.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_refuses_to_listen_beyond_loopback() {
    let n = TestNode::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = ConsoleConfig::for_key("0.0.0.0:0".parse().unwrap(), n.rest_url.clone(), n.rpc_url.clone(), dev_key("alice"), "alice", dir.path().join("n.db"));
    let e = Console::new(cfg).await.unwrap_err().to_string();
    assert!(e.contains("loopback"), "{e}");
    n.stop().await;
}

/// A node that no longer holds a transaction's live trace (its buffer keeps the latest 256):
/// the case rebuilds it with SimulateTrace from the transaction's bytes, labelled so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_case_whose_live_trace_is_gone_is_rebuilt_by_simulate_trace_and_says_so() {
    let n = TestNode::start().await.unwrap();
    let flagged = raise_threshold_flag(&n).await;
    // 300 more transactions push its trace out of the node's buffer.
    let gov = dev_key("governance");
    let (account_number, first) = n.client.next_sequence(&gov.address()).await.unwrap().unwrap();
    let mut last = String::new();
    for i in 0..300u64 {
        let b = TxBuilder::new(vec![msg_send(&gov.address(), &dev_addr("carol"), &[Coin::new("alantau", 1)])]).gas(100_000);
        let bytes = b.sign(&gov, &lantau_client::SignerData { chain_id: n.chain_id.clone(), account_number, sequence: first + i });
        let r = n.client.broadcast(&bytes, "BROADCAST_MODE_SYNC").await.unwrap();
        assert_eq!(r.code, 0, "{r:?}");
        last = r.txhash;
    }
    n.client.wait_for_tx(&last, Duration::from_secs(60), Duration::from_millis(100)).await.unwrap();
    let live = n.client.query(&format!("/chain/compliance/v1/tx_trace/{flagged}")).await.unwrap();
    assert_eq!(live["found"], false, "the live trace is still held: {live}");

    let dir = tempfile::tempdir().unwrap();
    let desk = serve(&n, &dev_key("reviewer"), "reviewer", dir.path()).await;
    assert_eq!(desk.get("/api/session").await.1["role"], "reviewer", "the dev chain's genesis reviewer");
    let (_, flags) = desk.get("/api/flags").await;
    let id = flags["flags"][0]["flag_id"].as_str().unwrap().to_string();
    let (s, case) = desk.get(&format!("/api/case/{id}")).await;
    assert_eq!(s, 200, "{case}");
    assert_eq!(case["trace"]["source"], "simulate_trace", "{case}");
    assert!(case["trace"]["label"].as_str().unwrap().contains("SimulateTrace"), "{case}");
    assert_eq!(case["trace"]["trace"]["results"].as_array().unwrap().len(), 7, "{case}");
    desk.stop().await;
    n.stop().await;
}

/// A group member's console: it lists the open proposals of the key's groups with their
/// messages (as JSON), tallies and the key's own vote; a malformed vote signs nothing; the
/// member's approval, the second of two, runs the proposal, which then leaves the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_console_shows_the_open_proposal_and_its_approval_runs_it() {
    use lantau_proto::chain::group::v1 as gpb;
    let n = TestNode::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ann = SecretKey::from_bytes(&[81; 32]).unwrap();
    let (bob, carol) = (dev_key("bob"), dev_addr("carol"));
    let gas_money = TxBuilder::new(vec![msg_send(&dev_addr("faucet"), &ann.address(), &[Coin::new("alantau", 10u128.pow(18))])]);
    assert!(send(&n, &dev_key("faucet"), gas_money).await.is_success());
    let create = gpb::MsgCreateGroup {
        creator: dev_addr("governance").to_bech32(),
        members: vec![gpb::Member { address: ann.address().to_bech32(), weight: 1 }, gpb::Member { address: bob.address().to_bech32(), weight: 1 }],
        threshold: 2,
        voting_period: "3600s".into(),
        metadata: "treasury".into(),
    };
    assert!(send(&n, &dev_key("governance"), TxBuilder::new(vec![lantau_client::to_any(&create)])).await.is_success());
    let group = n.client.query(&format!("/chain/group/v1/groups_by_member/{}", ann.address().to_bech32())).await.unwrap()["groups"][0]["address"]
        .as_str()
        .unwrap()
        .to_string();
    let group_addr = lantau_primitives::Address::from_bech32(&group).unwrap();
    let fund = TxBuilder::new(vec![msg_send(&dev_addr("alice"), &group_addr, &[Coin::new("alantau", 1_000u128)])]);
    assert!(send(&n, &dev_key("alice"), fund).await.is_success());
    let pay = msg_send(&group_addr, &carol, &[Coin::new("alantau", 5u128)]);
    let propose =
        gpb::MsgSubmitProposal { group_address: group.clone(), proposer: bob.address().to_bech32(), messages: vec![pay], metadata: String::new(), exec: false };
    assert!(send(&n, &bob, TxBuilder::new(vec![lantau_client::to_any(&propose)])).await.is_success());

    let desk = serve(&n, &ann, "ann", dir.path()).await;
    let (s, v) = desk.get("/api/proposals").await;
    assert_eq!(s, 200, "{v}");
    let g = &v["groups"][0];
    assert_eq!((g["group"]["address"].as_str(), g["proposals"].as_array().map(Vec::len)), (Some(group.as_str()), Some(1)), "{v}");
    let p = &g["proposals"][0];
    assert_eq!((p["my_vote"].clone(), p["yes_weight"].as_str()), (Value::Null, Some("1")), "{p}");
    assert_eq!(p["messages"][0]["@type"], "/cosmos.bank.v1beta1.MsgSend", "{p}");
    assert_eq!(p["messages"][0]["to_address"], carol.to_bech32().as_str(), "{p}");
    let id = p["id"].as_str().unwrap().to_string();

    // Malformed: nothing is signed.
    let (s, v) = desk.act(&format!("/api/proposals/{id}/vote"), &json!({"option": "MAYBE"})).await;
    assert_eq!(s, 400, "{v}");
    let (s, v) = desk.act("/api/proposals/1%20OR%201/vote", &json!({"option": "YES"})).await;
    assert_eq!(s, 400, "{v}");

    let before = n.client.balance(&carol, "alantau").await.unwrap().0;
    let (s, v) = desk.act(&format!("/api/proposals/{id}/vote"), &json!({"option": "YES"})).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(n.client.balance(&carol, "alantau").await.unwrap().0, before + 5);
    let (_, v) = desk.get("/api/proposals").await;
    assert_eq!(v["groups"][0]["proposals"].as_array().map(Vec::len), Some(0), "{v}");
    desk.stop().await;
    n.stop().await;
}

/// The desk as one service for the team: it holds the reviewer's and the officer's keys and
/// opens no session at start. Each person signs in with their own key (Sign-In with
/// Ethereum); a signature by another key and a used challenge are refused; sessions expire.
/// The reviewer escalates with a note and an attachment, which the service keeps; the
/// officer, signed in on the same service, reads both in the case and closes BLOCKED. A person
/// whose key the service does not hold reads and cannot act.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_is_one_service_people_sign_in_to_and_the_officer_reads_the_reviewers_note() {
    let n = TestNode::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (reviewer, officer) = (dev_key("reviewer"), dev_key("officer"));
    raise_threshold_flag(&n).await;
    let mut cfg =
        ConsoleConfig::for_key("127.0.0.1:0".parse().unwrap(), n.rest_url.clone(), n.rpc_url.clone(), reviewer.clone(), "jane", dir.path().join("desk.db"));
    cfg.keys.push(("omar".into(), officer.clone()));
    cfg.open_for = None;
    let desk = serve_with(cfg.clone()).await;
    assert_eq!(desk.get("/api/session").await.0, 401);

    // Signing in: a challenge for one address signed by another key is refused; a challenge
    // is good once.
    let http = reqwest::Client::new();
    let ch: Value = http
        .post(format!("{}/api/signin/challenge", desk.url))
        .json(&json!({"address": reviewer.address().to_bech32()}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let message = ch["message"].as_str().unwrap().to_string();
    assert!(message.contains("Sign in to the Lantau compliance desk") && message.contains(&reviewer.address().to_hex()), "{message}");
    let r =
        http.post(format!("{}/api/signin", desk.url)).json(&json!({"message": message, "signature": personal_sign(&officer, &message)})).send().await.unwrap();
    let (s, v): (u16, Value) = (r.status().as_u16(), r.json().await.unwrap());
    assert_eq!((s, code(&v)), (401, "bad_signature"), "{v}");
    let r =
        http.post(format!("{}/api/signin", desk.url)).json(&json!({"message": message, "signature": personal_sign(&reviewer, &message)})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r =
        http.post(format!("{}/api/signin", desk.url)).json(&json!({"message": message, "signature": personal_sign(&reviewer, &message)})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 409);

    let jane = desk.signin(&reviewer).await;
    let omar = desk.signin(&officer).await;
    let (_, s) = jane.get("/api/session").await;
    assert_eq!((s["role"].as_str(), s["key_name"].as_str(), s["can_act"].as_bool()), (Some("reviewer"), Some("jane"), Some(true)), "{s}");
    assert!(s["expires_at"].as_str().is_some(), "{s}");
    assert_eq!(omar.get("/api/session").await.1["role"], "officer");

    // Jane escalates with a note and a file; the service keeps both, the chain the note's hash.
    let (_, flags) = jane.get("/api/flags").await;
    let id = flags["flags"][0]["flag_id"].as_str().unwrap().to_string();
    let note = "Source of funds unclear; the customer's statement is attached.";
    let file = b"statement: HKD 8,000.00 from a new counterparty".to_vec();
    let body = json!({"note": note, "attachments": [{"name": "statement.txt", "content_base64": base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &file)}]});
    let (s, v) = jane.act(&format!("/api/flags/{id}/escalate"), &body).await;
    assert_eq!((s, v["code"].as_u64()), (200, Some(0)), "{v}");

    // Omar, on the same service, reads Jane's note and file in the case.
    let (_, case) = omar.get(&format!("/api/case/{id}")).await;
    assert_eq!(case["flag"]["officer_note_hash"], const_hex::encode(lantau_crypto::sha256(note.as_bytes())).as_str(), "{case}");
    assert_eq!(case["notes"].as_array().map(Vec::len), Some(1), "{case}");
    let kept = &case["notes"][0];
    assert_eq!((kept["text"].as_str(), kept["author"].as_str()), (Some(note), Some(reviewer.address().to_bech32().as_str())), "{kept}");
    let sha = kept["attachments"][0]["sha256"].as_str().unwrap();
    assert_eq!(sha, const_hex::encode(lantau_crypto::sha256(&file)));
    let r = reqwest::Client::new().get(format!("{}/api/attachments/{sha}", desk.url)).bearer_auth(&omar.token).send().await.unwrap();
    assert_eq!(r.bytes().await.unwrap().to_vec(), file);
    let (s, v) = omar.act(&format!("/api/flags/{id}/close"), &json!({"decision": "BLOCKED", "evidence": "read the statement"})).await;
    assert_eq!((s, v["code"].as_u64()), (200, Some(0)), "{v}");

    // Someone whose key the service does not hold reads and cannot act.
    let visitor = SecretKey::from_bytes(&[91; 32]).unwrap();
    let guest = desk.signin(&visitor).await;
    let (_, s) = guest.get("/api/session").await;
    assert_eq!((s["can_act"].as_bool(), s["role"].clone()), (Some(false), Value::Null), "{s}");
    assert_eq!(guest.get(&format!("/api/case/{id}")).await.0, 200);
    let (s, v) = guest.act(&format!("/api/flags/{id}/review"), &json!({"decision": "APPROVED"})).await;
    assert_eq!((s, code(&v)), (403, "no_key"), "{v}");
    // Signing out ends the session.
    let (s, _) = guest.act("/api/signout", &json!({})).await;
    assert_eq!(s, 200);
    assert_eq!(guest.get("/api/session").await.0, 401);
    desk.stop().await;

    // Sessions expire: the same database, a one-second session.
    cfg.session_ttl = Duration::from_secs(1);
    let short = serve_with(cfg).await;
    let jane = short.signin(&reviewer).await;
    assert_eq!(jane.get("/api/session").await.0, 200);
    lantau_test_utils::poll(Duration::from_secs(10), || async { jane.get("/api/session").await.0 == 401 }).await.unwrap();
    let (_, v) = jane.get("/api/session").await;
    assert!(["session_expired", "unauthorized"].contains(&code(&v)), "{v}");
    short.stop().await;
    n.stop().await;
}

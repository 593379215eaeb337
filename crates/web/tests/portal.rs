//! The onboarding portal over HTTP against a dev chain: faucets with their limits, the
//! Sign-In with Ethereum application and every bad input (each answered clearly, none writing
//! anything), the operator routes, and a transfer prepared for a wallet.

#![allow(missing_docs, unused_crate_dependencies, clippy::disallowed_types, clippy::disallowed_methods)]

mod support;
use std::time::Duration;
use support::personal_sign;

use lantau_crypto::SecretKey;
use lantau_test_utils::{dev_key, TestNode};
use lantau_web::portal::{Portal, PortalConfig};
use serde_json::{json, Value};

struct Running {
    n: TestNode,
    url: String,
    token: String,
    http: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    _db: tempfile::TempDir,
}

impl Running {
    async fn start(tune: impl FnOnce(&mut PortalConfig)) -> Self {
        let n = TestNode::start().await.unwrap();
        let db = tempfile::tempdir().unwrap();
        let mut cfg =
            PortalConfig::dev(n.rest_url.clone(), n.eth_url.clone(), dev_key("faucet"), dev_key("issuer"), dev_key("registrar"), db.path().join("portal"));
        cfg.listen = "127.0.0.1:0".parse().unwrap();
        cfg.confirm_timeout = Duration::from_secs(20);
        tune(&mut cfg);
        let listener = tokio::net::TcpListener::bind(cfg.listen).await.unwrap();
        let addr = listener.local_addr().unwrap();
        cfg.public_url = Some(format!("http://{addr}"));
        let portal = Portal::new(cfg).await.unwrap();
        let token = portal.operator_token().to_string();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(portal.serve(listener, async move {
            let _ = rx.await;
        }));
        Self { n, url: format!("http://{addr}"), token, http: reqwest::Client::new(), stop: Some(tx), task, _db: db }
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(format!("{}{path}", self.url)).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let r = self.http.post(format!("{}{path}", self.url)).json(body).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = self.task.await;
        self.n.stop().await;
    }
}

fn fresh_key(seed: u8) -> SecretKey {
    SecretKey::from_hex(&format!("{seed:02x}").repeat(32)).unwrap()
}

fn person() -> Value {
    json!({"given_name": "Mei", "family_name": "Chan", "date_of_birth": "1990-04-01", "country_of_residence": "HK",
           "national_identifier": "A1234563", "national_identifier_type": "NATIONAL_IDENTITY_NUMBER"})
}

fn code(v: &Value) -> &str {
    v["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomer_gets_gas_an_identity_and_hkd_and_every_bad_input_is_refused_without_writing() {
    let p = Running::start(|_| {}).await;
    let newcomer = fresh_key(0x31);
    let (addr, hex_addr) = (newcomer.address().to_bech32(), newcomer.address().to_hex());

    // The page's settings.
    let (s, cfg) = p.get("/api/config").await;
    assert_eq!(s, 200, "{cfg}");
    assert_eq!((cfg["evm_chain_id"].as_u64(), cfg["evm_chain_id_hex"].as_str()), (Some(852), Some("0x354")));
    assert_eq!(cfg["hkd"]["decimals"], 2);
    assert!(cfg["hkd"]["token_address"].as_str().unwrap().starts_with("0x"), "{cfg}");
    let (s, doc) = p.get("/openapi.json").await;
    assert_eq!(s, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["paths"]["/kyc/apply"]["post"]["responses"]["410"].is_object());

    // Bad addresses and bodies.
    let (s, v) = p.post("/faucet/native", &json!({"address": "lantau1nope"})).await;
    assert_eq!((s, code(&v)), (400, "invalid_address"), "{v}");
    let (s, v) = p.post("/faucet/native", &json!({"addr": hex_addr})).await;
    assert_eq!((s, code(&v)), (400, "malformed_body"), "{v}");
    let r = p.http.post(format!("{}/kyc/apply", p.url)).header("content-type", "application/json").body("{not json").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert_eq!(code(&r.json::<Value>().await.unwrap()), "malformed_body");

    // HKD needs an identity.
    let (s, v) = p.post("/faucet/hkd", &json!({"address": hex_addr})).await;
    assert_eq!((s, code(&v)), (403, "no_identity"), "{v}");

    // Gas to the hex form; the same address again inside the window: 429 with Retry-After.
    let (s, v) = p.post("/faucet/native", &json!({"address": hex_addr})).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["address"], addr.as_str());
    assert_eq!(v["balance"], "10000000000000000000");
    assert!(!v["tx_hash"].as_str().unwrap().is_empty());
    let r = p.http.post(format!("{}/faucet/native", p.url)).json(&json!({"address": addr})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 429);
    let retry: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    let v: Value = r.json().await.unwrap();
    assert_eq!((code(&v), v["retry_after_secs"].as_u64()), ("rate_limited", Some(retry)));
    assert_eq!(p.n.client.balance(&newcomer.address(), "alantau").await.unwrap().0, 10_000_000_000_000_000_000, "the refused request sent nothing");

    // The challenge: EIP-4361 for this address, chain 852.
    let (s, c) = p.post("/kyc/challenge", &json!({"address": addr})).await;
    assert_eq!(s, 200, "{c}");
    let message = c["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with(&format!("{} wants you to sign in with your Ethereum account:\n{hex_addr}\n", p.url.trim_start_matches("http://"))),
        "{message}"
    );
    assert!(message.contains("\nChain ID: 852\n") && message.contains(&format!("\nNonce: {}\n", c["nonce"].as_str().unwrap())), "{message}");

    let apps_before = operator_list(&p).await.len();
    let apply = |message: &str, signature: &str| json!({"message": message, "signature": signature, "person": person()});
    // A wrong signature (another key), a garbled one, a changed message, bad personal data,
    // an unknown nonce: each refused, nothing written.
    let (s, v) = p.post("/kyc/apply", &apply(&message, &personal_sign(&fresh_key(0x32), &message))).await;
    assert_eq!((s, code(&v)), (401, "bad_signature"), "{v}");
    assert!(v["message"].as_str().unwrap().contains(&newcomer.address().to_hex()), "{v}");
    let (s, v) = p.post("/kyc/apply", &apply(&message, "0x1234")).await;
    assert_eq!((s, code(&v)), (401, "bad_signature"), "{v}");
    let changed = message.replace("Apply for", "Apply  for");
    let (s, v) = p.post("/kyc/apply", &apply(&changed, &personal_sign(&newcomer, &changed))).await;
    assert_eq!((s, code(&v)), (400, "invalid_request"), "{v}");
    let mut bad_person = apply(&message, &personal_sign(&newcomer, &message));
    bad_person["person"]["date_of_birth"] = json!("2999-01-01");
    let (s, v) = p.post("/kyc/apply", &bad_person).await;
    assert_eq!((s, code(&v)), (400, "invalid_request"), "{v}");
    let unknown = message.replace(c["nonce"].as_str().unwrap(), "0000000000000000");
    let (s, v) = p.post("/kyc/apply", &apply(&unknown, &personal_sign(&newcomer, &unknown))).await;
    assert_eq!((s, code(&v)), (404, "not_found"), "{v}");
    assert_eq!(operator_list(&p).await.len(), apps_before, "a refused application was recorded");
    assert!(p.n.client.identity(&newcomer.address()).await.unwrap().is_none());

    // The right signature: enrolled (dev auto-approval) at LEVEL_RETAIL_BASIC, the chain
    // holding only the salted hash of the record.
    let (s, v) = p.post("/kyc/apply", &apply(&message, &personal_sign(&newcomer, &message))).await;
    assert_eq!(s, 201, "{v}");
    let app = &v["application"];
    assert_eq!(app["status"], "enrolled", "{v}");
    assert!(app.get("person").is_none(), "personal data in a public answer: {v}");
    let reference = app["ivms101_off_chain_ref"].as_str().unwrap();
    assert!(reference.starts_with("ivms101:sha256:") && reference.len() == "ivms101:sha256:".len() + 64, "{reference}");
    let id = p.n.client.identity(&newcomer.address()).await.unwrap().expect("enrolled");
    assert_eq!(id.ivms101_off_chain_ref, reference);
    assert_eq!(id.level, lantau_proto::chain::kyc::v1::Level::RetailBasic as i32);
    assert!(!serde_json::to_string(&id).unwrap().contains("Chan"));

    // Replay: the same signed challenge again.
    let (s, v) = p.post("/kyc/apply", &apply(&message, &personal_sign(&newcomer, &message))).await;
    assert_eq!((s, code(&v)), (409, "challenge_used"), "{v}");
    // A new challenge for an address that has an identity.
    let (_, c2) = p.post("/kyc/challenge", &json!({"address": addr})).await;
    let m2 = c2["message"].as_str().unwrap();
    let (s, v) = p.post("/kyc/apply", &apply(m2, &personal_sign(&newcomer, m2))).await;
    assert_eq!((s, code(&v)), (409, "already_applied"), "{v}");

    // The application, publicly without personal data; the operator sees the record.
    let (s, v) = p.get(&format!("/kyc/applications/{hex_addr}")).await;
    assert_eq!((s, v["application"]["status"].as_str()), (200, Some("enrolled")), "{v}");
    assert!(v["application"].get("person").is_none());
    let (s, v) = p.get("/admin/applications").await;
    assert_eq!((s, code(&v)), (401, "unauthorized"), "{v}");
    let apps = operator_list(&p).await;
    let mine = apps.iter().find(|a| a["address"] == addr.as_str()).unwrap();
    assert_eq!(mine["person"]["ivms101"]["naturalPerson"]["name"]["nameIdentifier"][0]["primaryIdentifier"], "Chan");

    // Now HKD; the account shows both balances and the identity.
    let (s, v) = p.post("/faucet/hkd", &json!({"address": addr})).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!((v["denom"].as_str(), v["balance"].as_str()), (Some("hkd.demo"), Some("100000")));
    let (s, v) = p.get(&format!("/api/account/{hex_addr}")).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!((v["hkd_balance"].as_str(), v["identity"]["level"].as_str()), (Some("100000"), Some("LEVEL_RETAIL_BASIC")), "{v}");

    // A transfer for the wallet: transferWithTravelRule on the token precompile.
    let (s, v) = p.post("/api/transfer/prepare", &json!({"from": hex_addr, "to": dev_key("alice").address().to_hex(), "amount": "100"})).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["to"], cfg["hkd"]["token_address"]);
    assert!(v["data"].as_str().unwrap().starts_with("0x23ec66fc"), "{v}");
    assert_eq!(v["payload"]["originator_ref"], reference);
    let (s, v) = p.post("/api/transfer/prepare", &json!({"from": hex_addr, "to": "0x12", "amount": "100"})).await;
    assert_eq!((s, code(&v)), (400, "invalid_address"), "{v}");
    p.stop().await;
}

async fn operator_list(p: &Running) -> Vec<Value> {
    let r = p.http.get(format!("{}/admin/applications", p.url)).bearer_auth(&p.token).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.json::<Value>().await.unwrap()["applications"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_challenge_is_refused_and_an_operator_approves_or_rejects_by_hand() {
    let p = Running::start(|c| {
        c.challenge_ttl = Duration::ZERO;
        c.auto_approve = false;
    })
    .await;
    let k = fresh_key(0x41);
    let (_, c) = p.post("/kyc/challenge", &json!({"address": k.address().to_hex()})).await;
    let m = c["message"].as_str().unwrap();
    let (s, v) = p.post("/kyc/apply", &json!({"message": m, "signature": personal_sign(&k, m), "person": person()})).await;
    assert_eq!((s, code(&v)), (410, "challenge_expired"), "{v}");
    assert!(operator_list(&p).await.is_empty());
    p.stop().await;

    let p = Running::start(|c| c.auto_approve = false).await;
    let (a, b) = (fresh_key(0x42), fresh_key(0x43));
    let mut ids = vec![];
    for k in [&a, &b] {
        let (_, c) = p.post("/kyc/challenge", &json!({"address": k.address().to_bech32()})).await;
        let m = c["message"].as_str().unwrap();
        let (s, v) = p.post("/kyc/apply", &json!({"message": m, "signature": personal_sign(k, m), "person": person()})).await;
        assert_eq!((s, v["application"]["status"].as_str()), (201, Some("pending")), "{v}");
        ids.push(v["application"]["id"].as_str().unwrap().to_string());
    }
    assert!(p.n.client.identity(&a.address()).await.unwrap().is_none(), "pending is not enrolled");
    let post = |path: String, body: Value| {
        let (http, url, token) = (p.http.clone(), p.url.clone(), p.token.clone());
        async move {
            let r = http.post(format!("{url}{path}")).bearer_auth(token).json(&body).send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (s, v) = post(format!("/admin/applications/{}/approve", ids[0]), json!({})).await;
    assert_eq!((s, v["application"]["status"].as_str()), (200, Some("enrolled")), "{v}");
    assert!(p.n.client.identity(&a.address()).await.unwrap().is_some());
    let (s, v) = post(format!("/admin/applications/{}/reject", ids[1]), json!({"reason": "document unreadable"})).await;
    assert_eq!((s, v["application"]["status"].as_str()), (200, Some("rejected")), "{v}");
    let (s, v) = post(format!("/admin/applications/{}/approve", ids[1]), json!({})).await;
    assert_eq!((s, code(&v)), (409, "already_decided"), "{v}");
    assert!(p.n.client.identity(&b.address()).await.unwrap().is_none());
    let (s, v) = post("/admin/applications/999/approve".into(), json!({})).await;
    assert_eq!((s, code(&v)), (404, "not_found"), "{v}");
    // Every challenge is stored until it expires: one client gets 30 per lifetime (2 asked above).
    let mut last = (0, Value::Null);
    for _ in 0..28 {
        last = p.post("/kyc/challenge", &json!({"address": a.address().to_hex()})).await;
    }
    assert_eq!(last.0, 200, "{}", last.1);
    let r = p.http.post(format!("{}/kyc/challenge", p.url)).json(&json!({"address": a.address().to_hex()})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 429);
    assert!(r.headers().contains_key("retry-after"));
    assert_eq!(code(&r.json::<Value>().await.unwrap()), "rate_limited");
    p.stop().await;
}

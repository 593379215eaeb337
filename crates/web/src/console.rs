//! The compliance desk: one console service an institution's reviewers and officers share
//! (`lantaud console`).
//!
//! - People sign in with their own key: a Sign-In with Ethereum challenge (EIP-4361,
//!   `personal_sign`, as the portal's) proves the address; a session (a bearer token with its
//!   own CSRF token) lasts `session_ttl`, then the person signs in again. `lantaud console
//!   --key NAME` also opens a session for that key at start and prints its URL (the token in the
//!   fragment), for one person on their own machine.
//! - A person's role comes from the chain, read on each request: their sub-role binding
//!   (reviewer, officer) and the groups they are members of.
//! - Actions are signed with the key the service holds for the signed-in address (its
//!   keyring): the compliance messages are Cosmos messages, which browser wallets do not sign.
//!   A person whose key the service does not hold reads and cannot act.
//! - Notes and their attachments are kept in the service's database (RocksDB in its home),
//!   by chain id and flag id, for everyone who works the flag; the chain records the note's
//!   sha256 as before. A case shows the notes whose hash its flag carries.
//! - Loopback only: the service holds signing keys. Institutions put it behind their TLS
//!   reverse proxy and give its public URL (`public_url`, the sign-in message's domain).
//! - Every figure comes from the node's queries, fetched when the page asks.
//! - Actions are confirmed by inclusion before the answer.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use base64::Engine as _;
use lantau_client::compliance::ParentAnswer;
use lantau_client::sender::Sender;
use lantau_client::{to_any, ClientError, RestClient};
use lantau_crypto::SecretKey;
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1 as cpb;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::Body;
use crate::store::{AttachmentRef, Store, StoreError, StoredNote};
use crate::{asset, random_hex, rfc3339, ApiError};

/// How the console runs.
#[derive(Debug, Clone)]
pub struct ConsoleConfig {
    /// Where it listens: a loopback address.
    pub listen: SocketAddr,
    /// The node's REST base URL.
    pub node: String,
    /// The node's CometBFT RPC base URL (a transaction's bytes, for SimulateTrace).
    pub rpc: String,
    /// The node's Ethereum JSON-RPC (the sign-in message's chain id); None: 852.
    pub evm_rpc: Option<String>,
    /// The keys the service signs with, by keyring name: a person signed in as one of these
    /// addresses acts with it.
    pub keys: Vec<(String, SecretKey)>,
    /// A session opened at start for this key (by name, one of `keys`): [`Console::url`] carries
    /// its token. None: everyone signs in.
    pub open_for: Option<String>,
    /// The service's database (notes, attachments, sign-in challenges): a directory.
    pub data_dir: PathBuf,
    /// The URL people open (scheme and `host:port`), the sign-in message's domain; default
    /// `http://<listen>`.
    pub public_url: Option<String>,
    /// The token of the session opened at start (generated when None).
    pub token: Option<String>,
    /// How long a session lasts.
    pub session_ttl: Duration,
    /// How long a sign-in challenge may be used.
    pub challenge_ttl: Duration,
    /// How long to wait for a transaction's inclusion.
    pub confirm_timeout: Duration,
}

impl ConsoleConfig {
    /// One person's desk: the service holds `key` and opens its session at start.
    pub fn for_key(listen: SocketAddr, node: String, rpc: String, key: SecretKey, name: &str, data_dir: PathBuf) -> Self {
        Self {
            listen,
            node,
            rpc,
            evm_rpc: None,
            keys: vec![(name.to_string(), key)],
            open_for: Some(name.to_string()),
            data_dir,
            public_url: None,
            token: None,
            session_ttl: Duration::from_secs(8 * 3600),
            challenge_ttl: Duration::from_secs(300),
            confirm_timeout: Duration::from_secs(20),
        }
    }
}

/// A signed-in person.
#[derive(Debug, Clone)]
struct Session {
    address: Address,
    csrf: String,
    /// Unix seconds (wall clock: the service is off chain).
    expires_unix: i64,
}

/// The most sessions kept at once (the expired ones go first).
const MAX_SESSIONS: usize = 10_000;

/// The console.
pub struct Console {
    cfg: ConsoleConfig,
    client: RestClient,
    /// The keys the service holds: (keyring name, sender) by address.
    signers: BTreeMap<Address, (String, Sender)>,
    sessions: Mutex<BTreeMap<String, Session>>,
    store: Store,
    chain_id: String,
    evm_chain_id: u64,
    scheme: String,
    domain: String,
    /// The session opened at start, if any.
    start_token: Option<String>,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console").field("listen", &self.cfg.listen).field("keys", &self.signers.len()).finish()
    }
}

fn now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl Console {
    /// Checks the address is loopback, opens the database, asks the node for its chain id.
    pub async fn new(cfg: ConsoleConfig) -> anyhow::Result<Arc<Self>> {
        anyhow::ensure!(cfg.listen.ip().is_loopback(), "the console serves loopback only ({} is not): it holds signing keys", cfg.listen);
        let client = RestClient::new(cfg.node.clone());
        let chain_id = client.chain_id().await.map_err(|e| anyhow::anyhow!("the node at {} did not answer: {e}", cfg.node))?;
        let evm_chain_id = match &cfg.evm_rpc {
            Some(u) => crate::evm_chain_id(u).await.unwrap_or(crate::DEFAULT_EVM_CHAIN_ID),
            None => crate::DEFAULT_EVM_CHAIN_ID,
        };
        std::fs::create_dir_all(&cfg.data_dir)?;
        let store = Store::open(&cfg.data_dir).map_err(|e| anyhow::anyhow!("console database {}: {e:?}", cfg.data_dir.display()))?;
        if let Some(dir) = cfg.data_dir.parent() {
            import_note_files(&store, dir, &chain_id)?;
        }
        let signers: BTreeMap<Address, (String, Sender)> =
            cfg.keys.iter().map(|(name, k)| (k.address(), (name.clone(), Sender::new(client.clone(), k.clone(), cfg.confirm_timeout)))).collect();
        let (scheme, domain) = crate::scheme_and_domain(cfg.public_url.as_deref(), cfg.listen);
        let mut sessions = BTreeMap::new();
        let start_token = match &cfg.open_for {
            Some(name) => {
                let (_, k) = cfg.keys.iter().find(|(n, _)| n == name).ok_or_else(|| anyhow::anyhow!("no key {name:?} among the console's keys"))?;
                let token = cfg.token.clone().unwrap_or_else(|| random_hex(16));
                // The operator's own session lasts as long as the process.
                sessions.insert(token.clone(), Session { address: k.address(), csrf: random_hex(16), expires_unix: i64::MAX });
                Some(token)
            }
            None => None,
        };
        Ok(Arc::new(Self { client, signers, sessions: Mutex::new(sessions), store, chain_id, evm_chain_id, scheme, domain, start_token, cfg }))
    }

    /// The bech32 address of the key whose session opened at start (empty when none).
    pub fn address(&self) -> String {
        let sessions = self.sessions.lock();
        self.start_token.as_ref().and_then(|t| sessions.get(t)).map(|s| s.address.to_bech32()).unwrap_or_default()
    }

    /// The token of the session opened at start (empty when none).
    pub fn token(&self) -> &str {
        self.start_token.as_deref().unwrap_or("")
    }

    /// The URL to open: with the start session's token in the fragment (which a browser never
    /// sends), or the sign-in page.
    pub fn url(&self, local: SocketAddr) -> String {
        match &self.start_token {
            Some(t) => format!("http://{local}/#token={t}"),
            None => format!("http://{local}/"),
        }
    }

    /// The routes.
    pub fn router(self: &Arc<Self>) -> Router {
        let api = Router::new()
            .route("/session", get(session))
            .route("/signout", post(signout))
            .route("/flags", get(|s, q| proxy(s, "/chain/compliance/v1/flags", q)))
            .route("/audit_log", get(|s, q| proxy(s, "/chain/compliance/v1/audit_log", q)))
            .route("/audit_export", get(|s, q| proxy(s, "/chain/compliance/v1/audit_export", q)))
            .route("/report", get(|s, q| proxy(s, "/chain/compliance/v1/report", q)))
            .route("/params", get(|s, q| proxy(s, "/chain/compliance/v1/params", q)))
            .route("/case/{flag_id}", get(case))
            .route("/attachments/{sha256}", get(attachment))
            .route("/flags/{flag_id}/review", post(review))
            .route("/flags/{flag_id}/escalate", post(escalate))
            .route("/flags/{flag_id}/close", post(close))
            .route("/proposals", get(proposals))
            .route("/proposals/{id}/vote", post(vote))
            .fallback(|| async { ApiError::not_found("no such route (docs/web-api.md lists the console's)") })
            .layer(axum::middleware::from_fn_with_state(self.clone(), guard));
        // Signing in needs no session (it makes one); its POSTs still come from this page only.
        let signin = Router::new().route("/challenge", post(signin_challenge)).route("/", post(signin)).layer(axum::middleware::from_fn(same_origin));
        Router::new()
            .route("/", get(|| async { asset("console/index.html") }))
            .route("/assets/{*path}", get(|Path(p): Path<String>| async move { asset(&p) }))
            .nest("/api/signin", signin)
            .nest("/api", api)
            .with_state(self.clone())
    }

    /// Serves on `listener` until `stop`.
    pub async fn serve(self: Arc<Self>, listener: tokio::net::TcpListener, stop: impl std::future::Future<Output = ()> + Send + 'static) {
        lantau_rpc::http::serve(listener, self.router(), crate::http_limits(), stop).await;
    }

    /// The signer for a session: the key the service holds for its address.
    fn signer(&self, s: &Session) -> Result<&Sender, ApiError> {
        self.signers.get(&s.address).map(|(_, sender)| sender).ok_or_else(|| {
            ApiError::new(
                StatusCode::FORBIDDEN,
                "no_key",
                format!("this service holds no key for {}: you can read, not act (the operator adds your key to the service's keyring)", s.address.to_bech32()),
            )
        })
    }

    /// The notes kept for a flag: only those whose hash the flag carries on chain (its
    /// `officer_note_hash`, as just read), so a note never shows on another flag that has the
    /// same number (after a dev chain's reset, on another chain).
    fn notes_of(&self, flag_id: &str, note_hash: &str) -> Result<Vec<StoredNote>, ApiError> {
        let Ok(id) = flag_id.parse::<u64>() else { return Ok(Vec::new()) };
        if note_hash.is_empty() {
            return Ok(Vec::new());
        }
        let notes = self.store.notes(&self.chain_id, id).map_err(db_error)?;
        Ok(notes.into_iter().filter(|n| n.hash.eq_ignore_ascii_case(note_hash)).collect())
    }
}

/// Moves the notes a per-key console kept in files (`<key>-notes.jsonl` beside the database,
/// one JSON object a line: chain_id, flag_id, at, text, hash) into the database, once: each
/// file is renamed `….imported` after.
fn import_note_files(store: &Store, dir: &std::path::Path, chain_id: &str) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    let mut files: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.to_string_lossy().ends_with("-notes.jsonl")).collect();
    files.sort();
    for f in files {
        let author = f.file_name().map(|n| n.to_string_lossy().trim_end_matches("-notes.jsonl").to_string()).unwrap_or_default();
        for line in std::fs::read_to_string(&f)?.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            let (Some(flag), Some(text), Some(hash)) = (v["flag_id"].as_str().and_then(|s| s.parse::<u64>().ok()), v["text"].as_str(), v["hash"].as_str())
            else {
                continue;
            };
            let chain = v["chain_id"].as_str().unwrap_or(chain_id);
            let note = StoredNote {
                author: format!("key {author}"),
                at: v["at"].as_str().unwrap_or_default().to_string(),
                text: text.to_string(),
                hash: hash.to_lowercase(),
                attachments: vec![],
            };
            store.put_note(chain, flag, &note, &[]).map_err(|e| anyhow::anyhow!("importing {}: {e:?}", f.display()))?;
        }
        let mut done = f.clone().into_os_string();
        done.push(".imported");
        std::fs::rename(&f, done)?;
        tracing::info!(file = %f.display(), "console notes moved into the desk's database");
    }
    Ok(())
}

fn db_error(e: StoreError) -> ApiError {
    match e {
        StoreError::NoChallenge => ApiError::not_found("no sign-in challenge with this nonce: ask for one (POST /api/signin/challenge)"),
        StoreError::Used => ApiError::new(StatusCode::CONFLICT, "challenge_used", "this sign-in challenge was already used: ask for a new one"),
        StoreError::Expired => {
            ApiError::new(StatusCode::GONE, "challenge_expired", "this sign-in challenge has expired: ask for a new one and sign it within its time")
        }
        StoreError::AlreadyApplied(_) | StoreError::NotFound => ApiError::not_found("not found"),
        StoreError::Db(e) => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("the console's database failed: {e}")),
    }
}

/// A POST from another origin than the console's own page is refused (when the browser names
/// one).
fn check_origin(req: &Request) -> Result<(), ApiError> {
    let h = req.headers();
    if let Some(origin) = h.get("origin").and_then(|v| v.to_str().ok()) {
        let host = h.get("host").and_then(|v| v.to_str().ok()).unwrap_or("");
        if origin != format!("http://{host}") && origin != format!("https://{host}") {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "csrf",
                format!("an action from origin {origin} is refused: only the console's own page may act"),
            ));
        }
    }
    Ok(())
}

async fn same_origin(req: Request, next: Next) -> Result<Response, ApiError> {
    check_origin(&req)?;
    Ok(next.run(req).await)
}

/// A live session on every `/api` request (its token as `Authorization: Bearer`); its CSRF
/// token and the console's own origin on every other method.
async fn guard(State(c): State<Arc<Console>>, mut req: Request, next: Next) -> Result<Response, ApiError> {
    let h = req.headers();
    let bearer = h.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).unwrap_or("").to_string();
    let found = {
        let sessions = c.sessions.lock();
        sessions.iter().find(|(t, _)| crate::same_secret(&bearer, t)).map(|(_, s)| s.clone())
    };
    let Some(session) = found else {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "sign in to the console (with your wallet), or open the URL `lantaud console` printed (…/#token=…)",
        ));
    };
    if now_unix() >= session.expires_unix {
        c.sessions.lock().remove(&bearer);
        return Err(ApiError::new(StatusCode::UNAUTHORIZED, "session_expired", "your session has expired: sign in again"));
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let csrf = h.get("x-csrf-token").and_then(|v| v.to_str().ok()).unwrap_or("");
        if !crate::same_secret(csrf, &session.csrf) {
            return Err(ApiError::new(StatusCode::FORBIDDEN, "csrf", "an action needs the session's X-CSRF-Token (from GET /api/session): nothing was done"));
        }
        check_origin(&req)?;
    }
    req.extensions_mut().insert(session);
    req.extensions_mut().insert(SessionToken(bearer));
    Ok(next.run(req).await)
}

/// The bearer token of the request's session.
#[derive(Debug, Clone)]
struct SessionToken(String);

#[derive(Debug, Deserialize)]
struct AddressBody {
    address: String,
}

/// A sign-in challenge for an address (bech32 or 0x hex).
async fn signin_challenge(State(c): State<Arc<Console>>, Body(b): Body<AddressBody>) -> Result<Json<Value>, ApiError> {
    let addr = Address::parse_any(b.address.trim()).map_err(|e| ApiError::invalid_address(&b.address, e))?;
    let v =
        crate::siwe::issue(&c.store, &c.domain, &c.scheme, crate::siwe::DESK_STATEMENT, "/", c.evm_chain_id, &addr, c.cfg.challenge_ttl).map_err(db_error)?;
    Ok(Json(v))
}

#[derive(Debug, Deserialize)]
struct SignInBody {
    message: String,
    signature: String,
}

/// A signed challenge opens a session: `{token, csrf_token, address, expires_at}`.
async fn signin(State(c): State<Arc<Console>>, Body(b): Body<SignInBody>) -> Result<Json<Value>, ApiError> {
    let now = now_unix();
    let (nonce, address) = crate::siwe::check_signed(&c.store, &b.message, &b.signature, now, db_error)?;
    c.store.use_challenge(&nonce, now).map_err(db_error)?;
    let ttl = i64::try_from(c.cfg.session_ttl.as_secs()).unwrap_or(i64::MAX);
    let session = Session { address, csrf: random_hex(16), expires_unix: now.saturating_add(ttl) };
    let token = random_hex(32);
    {
        let mut sessions = c.sessions.lock();
        sessions.retain(|_, s| s.expires_unix > now);
        if sessions.len() >= MAX_SESSIONS {
            return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "busy", "too many open sessions: try again later"));
        }
        sessions.insert(token.clone(), session.clone());
    }
    let expires_at = time::OffsetDateTime::from_unix_timestamp(session.expires_unix).map(rfc3339).unwrap_or_default();
    Ok(Json(json!({"token": token, "csrf_token": session.csrf, "address": address.to_bech32(), "expires_at": expires_at})))
}

async fn signout(State(c): State<Arc<Console>>, Extension(t): Extension<SessionToken>) -> Json<Value> {
    c.sessions.lock().remove(&t.0);
    Json(json!({"signed_out": true}))
}

fn node_error(e: ClientError) -> ApiError {
    match e {
        ClientError::Api { status, code, message } => {
            ApiError::new(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY), "node_refused", format!("the node refused the query: {message}"))
                .with("node_code", code)
        }
        other => ApiError::node(other),
    }
}

/// A person's role, from their sub-role binding as the chain has it now.
async fn role(c: &Console, who: &Address) -> (Option<&'static str>, Option<String>, String) {
    match c.client.sub_role_parent(&who.to_bech32()).await {
        ParentAnswer::SubKey { parent, binding, active: true } => {
            let role = match binding.role {
                lantau_proto::chain::compliance::v1::SubRole::Reviewer => Some("reviewer"),
                lantau_proto::chain::compliance::v1::SubRole::Officer => Some("officer"),
                _ => None,
            };
            (role, Some(parent.to_bech32()), binding.label)
        }
        _ => (None, None, String::new()),
    }
}

async fn session(State(c): State<Arc<Console>>, Extension(s): Extension<Session>) -> Result<Json<Value>, ApiError> {
    let (role, parent, label) = role(&c, &s.address).await;
    let denoms = c.client.query("/chain/stablecoin/v1/denoms").await.map_err(node_error)?;
    let hkd = denoms["denoms"].get(0).cloned().unwrap_or(Value::Null);
    let groups = c.client.query(&format!("/chain/group/v1/groups_by_member/{}", s.address.to_bech32())).await.map_err(node_error)?;
    let groups: Vec<Value> = groups["groups"].as_array().map(|a| a.iter().map(|g| g["address"].clone()).collect()).unwrap_or_default();
    let expires_at = if s.expires_unix == i64::MAX {
        Value::Null
    } else {
        json!(time::OffsetDateTime::from_unix_timestamp(s.expires_unix).map(rfc3339).unwrap_or_default())
    };
    Ok(Json(json!({
        "address": s.address.to_bech32(),
        "key_name": c.signers.get(&s.address).map(|(n, _)| n.clone()),
        "can_act": c.signers.contains_key(&s.address),
        "role": role,
        "parent": parent,
        "label": label,
        "groups": groups,
        "expires_at": expires_at,
        "chain_id": c.chain_id,
        "csrf_token": s.csrf,
        "hkd": {"denom": hkd["denom"], "display": hkd["display"], "decimals": hkd["decimals"]},
    })))
}

async fn proxy(State(c): State<Arc<Console>>, path: &'static str, RawQuery(q): RawQuery) -> Result<Json<Value>, ApiError> {
    let url = match q.filter(|q| !q.is_empty()) {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    };
    c.client.query(&url).await.map(Json).map_err(node_error)
}

/// Every flag, to find one by id (the Flags query has no id filter).
async fn find_flag(c: &Console, flag_id: &str) -> Result<(Value, Vec<Value>), ApiError> {
    let all = c.client.query("/chain/compliance/v1/flags").await.map_err(node_error)?;
    let flags = all["flags"].as_array().cloned().unwrap_or_default();
    let flag = flags.iter().find(|f| f["flag_id"] == flag_id).cloned().ok_or_else(|| ApiError::not_found(format!("no flag {flag_id}")))?;
    Ok((flag, flags))
}

async fn case(State(c): State<Arc<Console>>, Path(flag_id): Path<String>) -> Result<Json<Value>, ApiError> {
    let (flag, flags) = find_flag(&c, &flag_id).await?;
    let subject = flag["subject"].as_str().unwrap_or_default().to_string();
    let hash = flag["tx_hash"].as_str().unwrap_or_default().to_string();
    let tx = if hash.is_empty() { None } else { c.client.query_opt(&format!("/cosmos/tx/v1beta1/txs/{hash}")).await.map_err(node_error)? };
    let trace = trace_of(&c, &hash).await;
    let payload = if hash.is_empty() {
        None
    } else {
        match c.client.query_opt(&format!("/chain/compliance/v1/travel_rule/{}", hash.to_lowercase())).await {
            Ok(v) => v.map(|v| v["payload"].clone()),
            Err(ClientError::Api { status: 404, .. }) => None,
            Err(e) => return Err(node_error(e)),
        }
    };
    let identity = match lantau_primitives::Address::from_bech32(&subject) {
        Ok(a) => c.client.query_opt(&format!("/chain/kyc/v1/identity/{}", a.to_bech32())).await.map_err(node_error)?.map(|v| v["identity"].clone()),
        Err(_) => None,
    };
    let audit = c.client.query(&format!("/chain/compliance/v1/audit_log?subject={subject}")).await.map_err(node_error)?;
    let earlier: Vec<Value> = flags.iter().filter(|f| f["subject"] == subject.as_str() && f["flag_id"] != flag_id.as_str()).cloned().collect();
    Ok(Json(json!({
        "flag": flag,
        "tx": tx.map(|t| t["tx_response"].clone()),
        "trace": trace,
        "travel_rule_payload": payload,
        "identity": identity,
        "subject_audit": audit["entries"],
        "earlier_flags": earlier,
        "notes": c.notes_of(&flag_id, flag["officer_note_hash"].as_str().unwrap_or_default())?,
    })))
}

/// The transaction's gate trace: the node's live one (TxTrace) while it keeps it, else the
/// gates run again now on the transaction's bytes (SimulateTrace), labelled as such.
async fn trace_of(c: &Console, hash: &str) -> Value {
    if hash.is_empty() {
        return json!({"source": "unavailable", "label": "the flag names no transaction", "trace": null});
    }
    if let Ok(v) = c.client.query(&format!("/chain/compliance/v1/tx_trace/{hash}")).await {
        if v["found"] == true {
            return json!({"source": "tx_trace", "label": "The live trace this node recorded when it executed the transaction.", "trace": v["trace"]});
        }
    }
    let bytes = async {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().ok()?;
        let v: Value = http.get(format!("{}/tx?hash=0x{hash}", c.cfg.rpc.trim_end_matches('/'))).send().await.ok()?.json().await.ok()?;
        base64::engine::general_purpose::STANDARD.decode(v["result"]["tx"].as_str()?).ok()
    }
    .await;
    let Some(bytes) = bytes else {
        return json!({"source": "unavailable", "label": "This node no longer holds the live trace, and the transaction's bytes could not be read to rebuild it.", "trace": null});
    };
    match c.client.simulate_trace(&bytes).await {
        Ok(v) => json!({
            "source": "simulate_trace",
            "label": "Rebuilt by SimulateTrace: the gates run again now, on the latest state, not the block's. Identity, sanctions or rule changes since the block can change rows.",
            "trace": v["trace"],
        }),
        Err(e) => json!({"source": "unavailable", "label": format!("This node no longer holds the live trace, and SimulateTrace failed: {e}"), "trace": null}),
    }
}

#[derive(Debug, Deserialize)]
struct DecisionBody {
    decision: String,
    #[serde(default)]
    evidence: String,
}

#[derive(Debug, Deserialize)]
struct NoteBody {
    note: String,
    #[serde(default)]
    attachments: Vec<AttachmentBody>,
}

/// A file sent with a note: its name and its bytes in base64.
#[derive(Debug, Deserialize)]
struct AttachmentBody {
    name: String,
    content_base64: String,
}

/// The most attachments a note carries, and the largest.
const MAX_ATTACHMENTS: usize = 4;
const MAX_ATTACHMENT_BYTES: usize = 256 * 1024;

fn sha256_hex(text: &str) -> String {
    const_hex::encode(lantau_crypto::sha256(text.as_bytes()))
}

/// A flag id as the compliance module takes it (a positive decimal number that fits 64 bits),
/// checked before anything is signed: a malformed id would otherwise cost a fee to be refused
/// on chain.
fn flag_id(given: &str) -> Result<String, ApiError> {
    let ok = !given.is_empty() && given.bytes().all(|b| b.is_ascii_digit()) && given.parse::<u64>().is_ok_and(|id| id > 0);
    if ok {
        Ok(given.to_string())
    } else {
        let shown: String = given.chars().take(32).collect();
        Err(ApiError::invalid(format!("flag id {shown:?} is not a flag id (a positive decimal number); nothing was signed")))
    }
}

fn decision(d: &str, allowed: &[&str]) -> Result<String, ApiError> {
    let up = d.trim().to_ascii_uppercase();
    if allowed.contains(&up.as_str()) {
        Ok(up)
    } else {
        Err(ApiError::invalid(format!("decision {d:?} is not one of {}", allowed.join(", "))))
    }
}

/// Sends one message signed with the person's key and answers the confirmation, or the
/// refusal with its code.
async fn act(c: &Console, s: &Session, what: &str, msg: cosmos_sdk_proto::Any) -> Result<Json<Value>, ApiError> {
    let sent = c.signer(s)?.send(vec![msg], &format!("lantau console: {what}")).await.map_err(ApiError::node)?;
    if let Some((code, space, log)) = sent.failure() {
        return Err(ApiError::tx_refused(what, sent.txhash(), code, space, log));
    }
    let height = match &sent {
        lantau_client::sender::Sent::Included(r) => r.height.clone(),
        lantau_client::sender::Sent::Refused(_) => String::new(),
    };
    Ok(Json(json!({"tx_hash": sent.txhash(), "height": height, "code": 0})))
}

async fn review(
    State(c): State<Arc<Console>>,
    Extension(s): Extension<Session>,
    Path(flag_id): Path<String>,
    Body(b): Body<DecisionBody>,
) -> Result<Json<Value>, ApiError> {
    let flag_id = self::flag_id(&flag_id)?;
    let decision = decision(&b.decision, &["APPROVED", "BLOCKED"])?;
    let msg = cpb::MsgReviewFlag {
        reviewer: s.address.to_bech32(),
        flag_id: flag_id.clone(),
        decision,
        reviewer_evidence_hash: if b.evidence.is_empty() { String::new() } else { sha256_hex(&b.evidence) },
    };
    act(&c, &s, "review", to_any(&msg)).await
}

async fn escalate(
    State(c): State<Arc<Console>>,
    Extension(s): Extension<Session>,
    Path(flag_id): Path<String>,
    Body(b): Body<NoteBody>,
) -> Result<Json<Value>, ApiError> {
    let flag_id = self::flag_id(&flag_id)?;
    let note = b.note.trim();
    if note.is_empty() {
        return Err(ApiError::invalid("an escalation needs a note for the officer"));
    }
    if b.attachments.len() > MAX_ATTACHMENTS {
        return Err(ApiError::invalid(format!("a note carries at most {MAX_ATTACHMENTS} attachments; nothing was signed")));
    }
    let mut files = Vec::with_capacity(b.attachments.len());
    let mut refs = Vec::with_capacity(b.attachments.len());
    for a in &b.attachments {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(a.content_base64.as_bytes())
            .map_err(|e| ApiError::invalid(format!("attachment {:?} is not base64 ({e}); nothing was signed", a.name)))?;
        if bytes.len() > MAX_ATTACHMENT_BYTES || a.name.trim().is_empty() || a.name.len() > 200 {
            return Err(ApiError::invalid(format!(
                "attachment {:?}: a name of 1 to 200 bytes and at most {MAX_ATTACHMENT_BYTES} bytes; nothing was signed",
                a.name
            )));
        }
        refs.push(AttachmentRef { name: a.name.trim().to_string(), sha256: const_hex::encode(lantau_crypto::sha256(&bytes)), bytes: bytes.len() });
        files.push(bytes);
    }
    let hash = sha256_hex(note);
    let msg = cpb::MsgEscalateFlag { reviewer: s.address.to_bech32(), flag_id: flag_id.clone(), officer_note_hash: hash.clone() };
    let answer = act(&c, &s, "escalate", to_any(&msg)).await?;
    let id: u64 = flag_id.parse().map_err(|_| ApiError::invalid("flag id"))?;
    let stored = StoredNote { author: s.address.to_bech32(), at: rfc3339(time::OffsetDateTime::now_utc()), text: note.to_string(), hash, attachments: refs };
    c.store.put_note(&c.chain_id, id, &stored, &files).map_err(db_error)?;
    Ok(answer)
}

/// An attachment of a note, by its sha256.
async fn attachment(State(c): State<Arc<Console>>, Path(sha): Path<String>) -> Result<Response, ApiError> {
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::invalid("an attachment is named by its sha256 (64 hex digits)"));
    }
    let bytes = c.store.attachment(&sha).map_err(db_error)?.ok_or_else(|| ApiError::not_found(format!("no attachment {sha}")))?;
    Ok(axum::response::IntoResponse::into_response(([(axum::http::header::CONTENT_TYPE, "application/octet-stream")], bytes)))
}

async fn close(
    State(c): State<Arc<Console>>,
    Extension(s): Extension<Session>,
    Path(flag_id): Path<String>,
    Body(b): Body<DecisionBody>,
) -> Result<Json<Value>, ApiError> {
    let flag_id = self::flag_id(&flag_id)?;
    let decision = decision(&b.decision, &["APPROVED", "BLOCKED"])?;
    let msg = cpb::MsgCloseFlag {
        officer: s.address.to_bech32(),
        flag_id,
        decision,
        officer_evidence_hash: if b.evidence.is_empty() { String::new() } else { sha256_hex(&b.evidence) },
    };
    act(&c, &s, "close", to_any(&msg)).await
}

// === group proposals ===

/// The open proposals of every group the console's key is a member of, newest first, each
/// with its messages as JSON, its votes and the key's own vote (null before it voted).
async fn proposals(State(c): State<Arc<Console>>, Extension(s): Extension<Session>) -> Result<Json<Value>, ApiError> {
    let me = s.address.to_bech32();
    let groups = c.client.query(&format!("/chain/group/v1/groups_by_member/{me}")).await.map_err(node_error)?;
    let mut out = Vec::new();
    for g in groups["groups"].as_array().cloned().unwrap_or_default() {
        let addr = g["address"].as_str().unwrap_or_default().to_string();
        let open = c.client.query(&format!("/chain/group/v1/proposals_by_group/{addr}?pending_only=true")).await.map_err(node_error)?;
        let mut list = Vec::new();
        for mut p in open["proposals"].as_array().cloned().unwrap_or_default() {
            let id = p["id"].as_str().unwrap_or_default().to_string();
            let votes = c.client.query(&format!("/chain/group/v1/proposals/{id}/votes")).await.map_err(node_error)?["votes"].clone();
            let mine = votes.as_array().and_then(|v| v.iter().find(|v| v["voter"] == me.as_str())).map(|v| v["option"].clone()).unwrap_or(Value::Null);
            let messages: Vec<Value> = p["messages"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|m| {
                            let value = base64::engine::general_purpose::STANDARD.decode(m["value"].as_str().unwrap_or_default()).unwrap_or_default();
                            lantau_client::msgs::to_json(&cosmos_sdk_proto::Any { type_url: m["typeUrl"].as_str().unwrap_or_default().to_string(), value })
                        })
                        .collect()
                })
                .unwrap_or_default();
            if let Some(o) = p.as_object_mut() {
                o.insert("messages".into(), Value::Array(messages));
                o.insert("votes".into(), votes);
                o.insert("my_vote".into(), mine);
            }
            list.push(p);
        }
        out.push(json!({"group": g, "proposals": list}));
    }
    Ok(Json(json!({"address": me, "groups": out})))
}

#[derive(Debug, Deserialize)]
struct VoteBody {
    option: String,
}

/// The key's vote on a group proposal, which runs the proposal when it is the accepting one.
async fn vote(
    State(c): State<Arc<Console>>,
    Extension(s): Extension<Session>,
    Path(id): Path<String>,
    Body(b): Body<VoteBody>,
) -> Result<Json<Value>, ApiError> {
    let proposal_id = id.parse::<u64>().ok().filter(|n| *n > 0 && id.bytes().all(|b| b.is_ascii_digit())).ok_or_else(|| {
        ApiError::invalid(format!(
            "proposal id {:?} is not a proposal id (a positive decimal number); nothing was signed",
            id.chars().take(32).collect::<String>()
        ))
    })?;
    let option = match b.option.trim().to_ascii_uppercase().trim_start_matches("VOTE_OPTION_") {
        "YES" => lantau_proto::chain::group::v1::VoteOption::Yes,
        "NO" => lantau_proto::chain::group::v1::VoteOption::No,
        "ABSTAIN" => lantau_proto::chain::group::v1::VoteOption::Abstain,
        _ => return Err(ApiError::invalid(format!("option {:?} is not one of YES, NO, ABSTAIN", b.option))),
    };
    let msg = lantau_proto::chain::group::v1::MsgVote { proposal_id, voter: s.address.to_bech32(), option: option as i32, exec: true };
    act(&c, &s, "vote", to_any(&msg)).await
}

#[cfg(test)]
mod tests {
    use super::flag_id;

    #[test]
    fn only_positive_decimal_flag_ids_are_signed_for() {
        assert_eq!(flag_id("1").ok().as_deref(), Some("1"));
        assert_eq!(flag_id("18446744073709551615").ok().as_deref(), Some("18446744073709551615"));
        for bad in ["1 OR 1=1", "", "0", "+1", "-1", "1.0", "0x1", "18446744073709551616", " 1", "١"] {
            assert!(flag_id(bad).is_err(), "{bad:?} accepted");
        }
    }
}

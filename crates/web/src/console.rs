//! The reviewers' console: a local web application for a reviewer's or an officer's key
//! (`lantaud console --key NAME`).
//!
//! - Loopback only; an access token printed at start is required on every `/api` request
//!   (`Authorization: Bearer`), and every action also needs the session's CSRF token
//!   (`X-CSRF-Token`) and, when the browser sends one, the console's own `Origin`.
//! - Every figure comes from the node's queries (flags, audit log, report, trace), fetched
//!   when the page asks; the console keeps only the escalation notes whose hashes it signs.
//! - Actions are the compliance messages the key's binding allows, signed here, broadcast, and
//!   confirmed by inclusion before the answer.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use lantau_client::compliance::ParentAnswer;
use lantau_client::sender::Sender;
use lantau_client::{to_any, ClientError, RestClient};
use lantau_crypto::SecretKey;
use lantau_proto::chain::compliance::v1 as cpb;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::Body;
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
    /// The reviewer's or officer's key.
    pub key: SecretKey,
    /// Its name in the keyring (shown on the page).
    pub key_name: String,
    /// Where the escalation notes are kept (JSON lines).
    pub notes_path: PathBuf,
    /// The access token (generated when None).
    pub token: Option<String>,
    /// How long to wait for a transaction's inclusion.
    pub confirm_timeout: Duration,
}

/// The console.
#[derive(Debug)]
pub struct Console {
    cfg: ConsoleConfig,
    client: RestClient,
    sender: Sender,
    token: String,
    csrf: String,
    chain_id: String,
    notes: Mutex<()>,
}

impl Console {
    /// Checks the address is loopback and asks the node for its chain id.
    pub async fn new(cfg: ConsoleConfig) -> anyhow::Result<Arc<Self>> {
        anyhow::ensure!(cfg.listen.ip().is_loopback(), "the console serves loopback only ({} is not): it holds a signing key", cfg.listen);
        let client = RestClient::new(cfg.node.clone());
        let chain_id = client.chain_id().await.map_err(|e| anyhow::anyhow!("the node at {} did not answer: {e}", cfg.node))?;
        if let Some(dir) = cfg.notes_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Arc::new(Self {
            sender: Sender::new(client.clone(), cfg.key.clone(), cfg.confirm_timeout),
            token: cfg.token.clone().unwrap_or_else(|| random_hex(16)),
            csrf: random_hex(16),
            client,
            chain_id,
            notes: Mutex::new(()),
            cfg,
        }))
    }

    /// The key's bech32 address.
    pub fn address(&self) -> String {
        self.sender.address().to_bech32()
    }

    /// The access token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The URL to open (the token in the fragment, which a browser never sends).
    pub fn url(&self, local: SocketAddr) -> String {
        format!("http://{local}/#token={}", self.token)
    }

    /// The routes.
    pub fn router(self: &Arc<Self>) -> Router {
        let api = Router::new()
            .route("/session", get(session))
            .route("/flags", get(|s, q| proxy(s, "/chain/compliance/v1/flags", q)))
            .route("/audit_log", get(|s, q| proxy(s, "/chain/compliance/v1/audit_log", q)))
            .route("/audit_export", get(|s, q| proxy(s, "/chain/compliance/v1/audit_export", q)))
            .route("/report", get(|s, q| proxy(s, "/chain/compliance/v1/report", q)))
            .route("/params", get(|s, q| proxy(s, "/chain/compliance/v1/params", q)))
            .route("/case/{flag_id}", get(case))
            .route("/flags/{flag_id}/review", post(review))
            .route("/flags/{flag_id}/escalate", post(escalate))
            .route("/flags/{flag_id}/close", post(close))
            .route("/proposals", get(proposals))
            .route("/proposals/{id}/vote", post(vote))
            .fallback(|| async { ApiError::not_found("no such route (docs/web-api.md lists the console's)") })
            .layer(axum::middleware::from_fn_with_state(self.clone(), guard));
        Router::new()
            .route("/", get(|| async { asset("console/index.html") }))
            .route("/assets/{*path}", get(|Path(p): Path<String>| async move { asset(&p) }))
            .nest("/api", api)
            .with_state(self.clone())
    }

    /// Serves on `listener` until `stop`.
    pub async fn serve(self: Arc<Self>, listener: tokio::net::TcpListener, stop: impl std::future::Future<Output = ()> + Send + 'static) {
        lantau_rpc::http::serve(listener, self.router(), crate::http_limits(), stop).await;
    }

    fn keep_note(&self, flag_id: &str, text: &str, hash: &str) -> Result<(), ApiError> {
        let _one = self.notes.lock();
        let line = json!({"chain_id": self.chain_id, "flag_id": flag_id, "at": rfc3339(time::OffsetDateTime::now_utc()), "text": text, "hash": hash});
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&self.cfg.notes_path).map_err(|e| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("cannot keep the note in {}: {e}", self.cfg.notes_path.display()))
        })?;
        writeln!(f, "{line}").map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("cannot keep the note: {e}")))
    }

    /// The notes kept for a flag: only those whose hash the flag carries on chain (its
    /// `officer_note_hash`, as just read), so a note never shows on another flag that has the
    /// same number (after a dev chain's reset, on another chain from the same home).
    fn notes_of(&self, flag_id: &str, note_hash: &str) -> Vec<Value> {
        if note_hash.is_empty() {
            return Vec::new();
        }
        let _one = self.notes.lock();
        std::fs::read_to_string(&self.cfg.notes_path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["flag_id"] == flag_id && v["hash"].as_str().is_some_and(|h| h.eq_ignore_ascii_case(note_hash)))
            .filter(|v| v["chain_id"].as_str().is_none_or(|c| c == self.chain_id))
            .map(|mut v| {
                if let Some(o) = v.as_object_mut() {
                    o.remove("flag_id");
                    o.remove("chain_id");
                }
                v
            })
            .collect()
    }
}

/// The token on every `/api` request; the CSRF token and the origin on every other method.
async fn guard(State(c): State<Arc<Console>>, req: Request, next: Next) -> Result<Response, ApiError> {
    let h = req.headers();
    let bearer = h.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).unwrap_or("");
    if !crate::same_secret(bearer, &c.token) {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this console needs its access token: open the URL `lantaud console` printed (…/#token=…)",
        ));
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let csrf = h.get("x-csrf-token").and_then(|v| v.to_str().ok()).unwrap_or("");
        if !crate::same_secret(csrf, &c.csrf) {
            return Err(ApiError::new(StatusCode::FORBIDDEN, "csrf", "an action needs the session's X-CSRF-Token (from GET /api/session): nothing was done"));
        }
        if let Some(origin) = h.get("origin").and_then(|v| v.to_str().ok()) {
            let host = h.get("host").and_then(|v| v.to_str().ok()).unwrap_or("");
            if origin != format!("http://{host}") {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "csrf",
                    format!("an action from origin {origin} is refused: only the console's own page may act"),
                ));
            }
        }
    }
    Ok(next.run(req).await)
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

/// The key's role, from its sub-role binding.
async fn role(c: &Console) -> (Option<&'static str>, Option<String>, String) {
    match c.client.sub_role_parent(&c.sender.address().to_bech32()).await {
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

async fn session(State(c): State<Arc<Console>>) -> Result<Json<Value>, ApiError> {
    let (role, parent, label) = role(&c).await;
    let denoms = c.client.query("/chain/stablecoin/v1/denoms").await.map_err(node_error)?;
    let hkd = denoms["denoms"].get(0).cloned().unwrap_or(Value::Null);
    Ok(Json(json!({
        "address": c.sender.address().to_bech32(),
        "key_name": c.cfg.key_name,
        "role": role,
        "parent": parent,
        "label": label,
        "chain_id": c.chain_id,
        "csrf_token": c.csrf,
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
        "notes": c.notes_of(&flag_id, flag["officer_note_hash"].as_str().unwrap_or_default()),
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
}

fn sha256_hex(text: &str) -> String {
    hex::encode(lantau_crypto::sha256(text.as_bytes()))
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

/// Sends one compliance message and answers the confirmation, or the refusal with its code.
async fn act(c: &Console, what: &str, msg: cosmos_sdk_proto::Any) -> Result<Json<Value>, ApiError> {
    let sent = c.sender.send(vec![msg], &format!("lantau console: {what}")).await.map_err(ApiError::node)?;
    if let Some((code, space, log)) = sent.failure() {
        return Err(ApiError::tx_refused(what, sent.txhash(), code, space, log));
    }
    let height = match &sent {
        lantau_client::sender::Sent::Included(r) => r.height.clone(),
        lantau_client::sender::Sent::Refused(_) => String::new(),
    };
    Ok(Json(json!({"tx_hash": sent.txhash(), "height": height, "code": 0})))
}

async fn review(State(c): State<Arc<Console>>, Path(flag_id): Path<String>, Body(b): Body<DecisionBody>) -> Result<Json<Value>, ApiError> {
    let flag_id = self::flag_id(&flag_id)?;
    let decision = decision(&b.decision, &["APPROVED", "BLOCKED"])?;
    let msg = cpb::MsgReviewFlag {
        reviewer: c.sender.address().to_bech32(),
        flag_id: flag_id.clone(),
        decision,
        reviewer_evidence_hash: if b.evidence.is_empty() { String::new() } else { sha256_hex(&b.evidence) },
    };
    act(&c, "review", to_any(&msg)).await
}

async fn escalate(State(c): State<Arc<Console>>, Path(flag_id): Path<String>, Body(b): Body<NoteBody>) -> Result<Json<Value>, ApiError> {
    let flag_id = self::flag_id(&flag_id)?;
    let note = b.note.trim();
    if note.is_empty() {
        return Err(ApiError::invalid("an escalation needs a note for the officer"));
    }
    let hash = sha256_hex(note);
    let msg = cpb::MsgEscalateFlag { reviewer: c.sender.address().to_bech32(), flag_id: flag_id.clone(), officer_note_hash: hash.clone() };
    let answer = act(&c, "escalate", to_any(&msg)).await?;
    c.keep_note(&flag_id, note, &hash)?;
    Ok(answer)
}

async fn close(State(c): State<Arc<Console>>, Path(flag_id): Path<String>, Body(b): Body<DecisionBody>) -> Result<Json<Value>, ApiError> {
    let flag_id = self::flag_id(&flag_id)?;
    let decision = decision(&b.decision, &["APPROVED", "BLOCKED"])?;
    let msg = cpb::MsgCloseFlag {
        officer: c.sender.address().to_bech32(),
        flag_id,
        decision,
        officer_evidence_hash: if b.evidence.is_empty() { String::new() } else { sha256_hex(&b.evidence) },
    };
    act(&c, "close", to_any(&msg)).await
}

// === group proposals ===

/// The open proposals of every group the console's key is a member of, newest first, each
/// with its messages as JSON, its votes and the key's own vote (null before it voted).
async fn proposals(State(c): State<Arc<Console>>) -> Result<Json<Value>, ApiError> {
    let me = c.address();
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
async fn vote(State(c): State<Arc<Console>>, Path(id): Path<String>, Body(b): Body<VoteBody>) -> Result<Json<Value>, ApiError> {
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
    let msg = lantau_proto::chain::group::v1::MsgVote { proposal_id, voter: c.address(), option: option as i32, exec: true };
    act(&c, "vote", to_any(&msg)).await
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

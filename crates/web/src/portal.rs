//! The onboarding portal of a test network: a page and a JSON API (`docs/web-api.md`,
//! `docs/portal.md`).
//!
//! - Faucets: native coin for gas to any address (a bank send from the faucet key), HKD to an
//!   address with an identity record (a mint by the issuer key). Each request is signed,
//!   broadcast and confirmed before the answer; per-address and per-client limits per window.
//! - Identity applications: a Sign-In with Ethereum challenge ([`crate::siwe`]) proves control
//!   of the address; the IVMS101 natural person stays in the portal's database
//!   ([`crate::store`]); the chain gets only an enrolment by the registrar key whose
//!   `ivms101_off_chain_ref` is a salted content hash of that record.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use lantau_client::sender::{Sender, Sent};
use lantau_client::{to_any, RestClient};
use lantau_crypto::SecretKey;
use lantau_primitives::Address;
use lantau_proto::chain::kyc::v1 as kpb;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::Body;
use crate::store::{Application, Status, Store, StoreError};
use crate::{asset, random_hex, rfc3339, ApiError};

/// The native denom (gas).
const NATIVE_DENOM: &str = "alantau";

/// How the portal runs.
#[derive(Debug, Clone)]
pub struct PortalConfig {
    /// Where it listens (loopback by default).
    pub listen: SocketAddr,
    /// The node's REST base URL.
    pub node: String,
    /// The Ethereum JSON-RPC URL the page gives wallets (`wallet_addEthereumChain`).
    pub evm_rpc_url: String,
    /// The portal's own URL as a browser reaches it (scheme and `host:port`); its authority is
    /// the challenge's domain. Default `http://<listen>`.
    pub public_url: Option<String>,
    /// Signs the native faucet's bank sends.
    pub faucet_key: SecretKey,
    /// Mints the HKD faucet's coins (the denom's issuer).
    pub hkd_key: SecretKey,
    /// Enrols identities (a registrar in the KYC params).
    pub registrar_key: SecretKey,
    /// The stablecoin denom.
    pub hkd_denom: String,
    /// alantau per native faucet request.
    pub native_amount: u128,
    /// Base units (cents) per HKD faucet request.
    pub hkd_amount: u128,
    /// The rate-limit window.
    pub window: Duration,
    /// Requests per address per faucet per window.
    pub per_address: u32,
    /// Requests per client (IP) per faucet per window.
    pub per_client: u32,
    /// The level applications enrol at.
    pub kyc_level: kpb::Level,
    /// Enrol on application, without an operator (dev).
    pub auto_approve: bool,
    /// How long a challenge may be used.
    pub challenge_ttl: Duration,
    /// The portal's database directory.
    pub db_path: PathBuf,
    /// The operator routes' bearer token (generated when None).
    pub operator_token: Option<String>,
    /// How long to wait for a transaction's inclusion.
    pub confirm_timeout: Duration,
}

impl PortalConfig {
    /// The defaults of a dev chain for these keys and this database.
    pub fn dev(node: String, evm_rpc_url: String, faucet_key: SecretKey, hkd_key: SecretKey, registrar_key: SecretKey, db_path: PathBuf) -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            node,
            evm_rpc_url,
            public_url: None,
            faucet_key,
            hkd_key,
            registrar_key,
            hkd_denom: "hkd.demo".into(),
            native_amount: 10_000_000_000_000_000_000, // 10 LANTAU
            hkd_amount: 100_000,                       // HKD 1,000.00
            window: Duration::from_secs(60),
            per_address: 1,
            per_client: 20,
            kyc_level: kpb::Level::RetailBasic,
            auto_approve: true,
            challenge_ttl: Duration::from_secs(600),
            db_path,
            operator_token: None,
            confirm_timeout: Duration::from_secs(30),
        }
    }
}

/// What a limit counts: a faucet's requests (native, HKD), or challenges issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Limited {
    Native,
    Hkd,
    /// `POST /kyc/challenge` per client (each one is stored until it expires).
    Challenge,
}

/// Challenges one client may ask for per challenge lifetime.
const CHALLENGES_PER_CLIENT: u32 = 30;

/// Requests per key within a sliding window.
#[derive(Debug, Default)]
struct RateLimiter {
    hits: HashMap<(Limited, String), VecDeque<Instant>>,
}

impl RateLimiter {
    /// Most keys remembered; past it, keys whose hits all left the window are forgotten.
    const MAX_KEYS: usize = 100_000;

    /// How long until `key` may ask again, if it is at `limit`.
    fn wait(&mut self, f: Limited, key: &str, limit: u32, window: Duration, now: Instant) -> Option<Duration> {
        let q = self.hits.get_mut(&(f, key.to_string()))?;
        while q.front().is_some_and(|t| now.duration_since(*t) >= window) {
            q.pop_front();
        }
        if q.len() < limit as usize {
            return None;
        }
        q.front().map(|t| window.saturating_sub(now.duration_since(*t)))
    }

    fn take(&mut self, f: Limited, key: &str, now: Instant, window: Duration) {
        if self.hits.len() >= Self::MAX_KEYS {
            self.hits.retain(|_, q| q.back().is_some_and(|t| now.duration_since(*t) < window));
        }
        self.hits.entry((f, key.to_string())).or_default().push_back(now);
    }

    fn give_back(&mut self, f: Limited, key: &str, at: Instant) {
        if let Some(q) = self.hits.get_mut(&(f, key.to_string())) {
            if let Some(i) = q.iter().rposition(|t| *t == at) {
                q.remove(i);
            }
        }
    }
}

/// The portal.
#[derive(Debug)]
pub struct Portal {
    cfg: PortalConfig,
    client: RestClient,
    faucet: Sender,
    hkd: Sender,
    registrar: Sender,
    store: Store,
    limits: Mutex<RateLimiter>,
    operator_token: String,
    chain_id: String,
    evm_chain_id: u64,
    /// `host:port` of the portal as browsers reach it, and its scheme.
    domain: String,
    scheme: String,
}

impl Portal {
    /// Opens the database and asks the node for its chain id.
    pub async fn new(cfg: PortalConfig) -> anyhow::Result<Arc<Self>> {
        let client = RestClient::new(cfg.node.clone());
        let chain_id = client.chain_id().await.map_err(|e| anyhow::anyhow!("the node at {} did not answer: {e}", cfg.node))?;
        let evm_chain_id = crate::evm_chain_id(&cfg.evm_rpc_url).await.unwrap_or(crate::DEFAULT_EVM_CHAIN_ID);
        std::fs::create_dir_all(&cfg.db_path)?;
        let store = Store::open(&cfg.db_path).map_err(|e| anyhow::anyhow!("portal database {}: {e:?}", cfg.db_path.display()))?;
        let (scheme, domain) = crate::scheme_and_domain(cfg.public_url.as_deref(), cfg.listen);
        let sender = |k: &SecretKey| Sender::new(client.clone(), k.clone(), cfg.confirm_timeout);
        Ok(Arc::new(Self {
            faucet: sender(&cfg.faucet_key),
            hkd: sender(&cfg.hkd_key),
            registrar: sender(&cfg.registrar_key),
            operator_token: cfg.operator_token.clone().unwrap_or_else(|| random_hex(16)),
            client,
            store,
            limits: Mutex::new(RateLimiter::default()),
            chain_id,
            evm_chain_id,
            domain,
            scheme,
            cfg,
        }))
    }

    /// The operator routes' bearer token.
    pub fn operator_token(&self) -> &str {
        &self.operator_token
    }

    /// The routes.
    pub fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .route("/", get(|| async { asset("portal/index.html") }))
            .route("/assets/{*path}", get(|Path(p): Path<String>| async move { asset(&p) }))
            .route("/openapi.json", get(|| async { Json(crate::portal_openapi::document()) }))
            .route("/api/config", get(config))
            .route("/api/account/{address}", get(account))
            .route("/api/transfer/prepare", post(prepare_transfer))
            .route("/faucet/native", post(faucet_native))
            .route("/faucet/hkd", post(faucet_hkd))
            .route("/kyc/challenge", post(challenge))
            .route("/kyc/apply", post(apply))
            .route("/kyc/applications/{address}", get(application_of))
            .route("/admin/applications", get(admin_list))
            .route("/admin/applications/{id}/approve", post(admin_approve))
            .route("/admin/applications/{id}/reject", post(admin_reject))
            .fallback(|| async { ApiError::not_found("no such route (docs/web-api.md lists the portal's)") })
            .with_state(self.clone())
    }

    /// Serves on `listener` until `stop`.
    pub async fn serve(self: Arc<Self>, listener: tokio::net::TcpListener, stop: impl std::future::Future<Output = ()> + Send + 'static) {
        lantau_rpc::http::serve(listener, self.router(), crate::http_limits(), stop).await;
    }

    /// Enrols an application's address through the registrar, recording the outcome.
    async fn enrol(&self, mut app: Application) -> Application {
        let msg = kpb::MsgEnrollIdentity {
            registrar: self.registrar.address().to_bech32(),
            address: app.address.clone(),
            level: self.cfg.kyc_level as i32,
            vasp_identifier: String::new(),
            ivms101_off_chain_ref: app.ivms101_off_chain_ref.clone(),
            expires_at: None,
        };
        let now = rfc3339(time::OffsetDateTime::now_utc());
        match self.registrar.send(vec![to_any(&msg)], "lantau portal: identity application").await {
            Ok(sent) => {
                app.tx_hash = Some(sent.txhash().to_string());
                match sent.failure() {
                    None => {
                        app.status = Status::Enrolled;
                        app.reason = None;
                    }
                    Some((code, space, log)) => {
                        app.status = Status::Failed;
                        app.reason = Some(format!("the enrolment was refused (codespace {space}, code {code}): {log}"));
                    }
                }
            }
            Err(e) => {
                app.status = Status::Failed;
                app.reason = Some(format!("the enrolment was not confirmed: {e}; an operator can approve it again"));
            }
        }
        app.decided_at = Some(now);
        if let Err(e) = self.store.update(&app) {
            tracing::warn!(id = %app.id, error = ?e, "portal: could not record an application's outcome");
        }
        app
    }

    fn check_operator(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let given = headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).unwrap_or("");
        if crate::same_secret(given, &self.operator_token) {
            Ok(())
        } else {
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "the operator routes need `Authorization: Bearer <token>` (printed when the portal starts)",
            ))
        }
    }
}

fn parse_address(s: &str) -> Result<Address, ApiError> {
    Address::parse_any(s.trim()).map_err(|e| ApiError::invalid_address(s, e))
}

fn store_error(e: StoreError) -> ApiError {
    match e {
        StoreError::NoChallenge => ApiError::not_found("no challenge with this nonce: ask for one at POST /kyc/challenge"),
        StoreError::Used => {
            ApiError::new(StatusCode::CONFLICT, "challenge_used", "this challenge was already used: ask for a new one (a signed challenge is good once)")
        }
        StoreError::Expired => {
            ApiError::new(StatusCode::GONE, "challenge_expired", "this challenge has expired: ask for a new one and sign it within its time")
        }
        StoreError::AlreadyApplied(a) => ApiError::new(
            StatusCode::CONFLICT,
            "already_applied",
            format!(
                "{} already has an application ({}, status {})",
                a.address,
                a.id,
                serde_json::to_value(a.status).unwrap_or_default().as_str().unwrap_or("")
            ),
        )
        .with("application", serde_json::to_value(a.public()).unwrap_or_default()),
        StoreError::NotFound => ApiError::not_found("no such application"),
        StoreError::Db(e) => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("the portal's database failed: {e}")),
    }
}

// === routes ===

async fn config(State(p): State<Arc<Portal>>) -> Result<Json<Value>, ApiError> {
    let denom = p.client.query_opt(&format!("/chain/stablecoin/v1/denoms/{}", p.cfg.hkd_denom)).await.map_err(ApiError::node)?;
    let record = denom.as_ref().map(|d| d.get("denom").cloned().unwrap_or(Value::Null)).unwrap_or(Value::Null);
    let token = token_address(&p).await.ok();
    Ok(Json(json!({
        "chain_id": p.chain_id,
        "evm_chain_id": p.evm_chain_id,
        "evm_chain_id_hex": format!("0x{:x}", p.evm_chain_id),
        "chain_name": format!("Lantau {}", p.chain_id),
        "evm_rpc_url": p.cfg.evm_rpc_url,
        "domain": p.domain,
        "native": {"symbol": "LANTAU", "denom": NATIVE_DENOM, "decimals": 18, "faucet_amount": p.cfg.native_amount.to_string()},
        "hkd": {
            "denom": p.cfg.hkd_denom,
            "display": record.get("display").and_then(Value::as_str).unwrap_or("HKD"),
            "decimals": record.get("decimals").and_then(Value::as_u64).unwrap_or(2),
            "faucet_amount": p.cfg.hkd_amount.to_string(),
            "token_address": token,
        },
        "kyc_level": p.cfg.kyc_level.as_str_name(),
        "auto_approve": p.cfg.auto_approve,
        "faucet_window_secs": p.cfg.window.as_secs(),
    })))
}

async fn token_address(p: &Portal) -> Result<String, ApiError> {
    let v = p.client.query(&format!("/cosmos/evm/erc20/v1/token_pairs/{}", p.cfg.hkd_denom)).await.map_err(ApiError::node)?;
    v["token_pair"]["erc20_address"].as_str().map(str::to_string).ok_or_else(|| ApiError::node(format!("no ERC-20 address for {}", p.cfg.hkd_denom)))
}

fn identity_json(id: &kpb::Identity) -> Value {
    json!({
        "level": kpb::Level::try_from(id.level).map(|l| l.as_str_name()).unwrap_or("LEVEL_UNSPECIFIED"),
        "vasp_identifier": id.vasp_identifier,
        "ivms101_off_chain_ref": id.ivms101_off_chain_ref,
    })
}

async fn account(State(p): State<Arc<Portal>>, Path(address): Path<String>) -> Result<Json<Value>, ApiError> {
    let addr = parse_address(&address)?;
    let balances = p.client.balances(&addr).await.map_err(ApiError::node)?;
    let bal = |d: &str| balances.iter().find(|c| c.denom.as_str() == d).map(|c| c.amount.0.to_string()).unwrap_or_else(|| "0".into());
    let identity = p.client.identity(&addr).await.map_err(ApiError::node)?;
    let application = p.store.by_address(&addr.to_hex()).map_err(store_error)?;
    Ok(Json(json!({
        "address": addr.to_bech32(),
        "hex_address": addr.to_hex(),
        "native_balance": bal(NATIVE_DENOM),
        "hkd_balance": bal(&p.cfg.hkd_denom),
        "identity": identity.as_ref().map(identity_json),
        "application": application.map(|a| a.public()),
    })))
}

#[derive(Debug, Deserialize)]
struct AddressBody {
    address: String,
}

async fn faucet_native(State(p): State<Arc<Portal>>, ConnectInfo(peer): ConnectInfo<SocketAddr>, Body(b): Body<AddressBody>) -> Result<Json<Value>, ApiError> {
    let addr = parse_address(&b.address)?;
    let msg = lantau_client::msg_send(&p.faucet.address(), &addr, &[lantau_primitives::Coin::new(NATIVE_DENOM, p.cfg.native_amount)]);
    drip(&p, Limited::Native, peer.ip(), addr, NATIVE_DENOM, p.cfg.native_amount, msg).await
}

async fn faucet_hkd(State(p): State<Arc<Portal>>, ConnectInfo(peer): ConnectInfo<SocketAddr>, Body(b): Body<AddressBody>) -> Result<Json<Value>, ApiError> {
    let addr = parse_address(&b.address)?;
    if p.client.identity(&addr).await.map_err(ApiError::node)?.is_none() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "no_identity",
            format!("{} has no identity record: HKD goes only to identified addresses; apply for an identity first", addr.to_bech32()),
        ));
    }
    let denom = p.cfg.hkd_denom.clone();
    let msg = to_any(&lantau_proto::chain::stablecoin::v1::MsgMint {
        issuer: p.hkd.address().to_bech32(),
        recipient: addr.to_bech32(),
        amount: Some(cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: denom.clone(), amount: p.cfg.hkd_amount.to_string() }),
    });
    drip(&p, Limited::Hkd, peer.ip(), addr, &denom, p.cfg.hkd_amount, msg).await
}

/// Rate limits, then sends, confirms and reports the new balance. A request that does not
/// give coins does not count against the limits.
async fn drip(p: &Portal, f: Limited, ip: IpAddr, addr: Address, denom: &str, amount: u128, msg: cosmos_sdk_proto::Any) -> Result<Json<Value>, ApiError> {
    let (addr_key, ip_key) = (addr.to_key_hex(), ip.to_string());
    let now = Instant::now();
    {
        let mut l = p.limits.lock();
        let wait = l
            .wait(f, &addr_key, p.cfg.per_address, p.cfg.window, now)
            .map(|w| (w, "this address"))
            .or_else(|| l.wait(f, &ip_key, p.cfg.per_client, p.cfg.window, now).map(|w| (w, "this client")));
        if let Some((w, who)) = wait {
            let secs = w.as_secs().max(1);
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("{who} already had what this faucet gives per {} s: try again in {secs} s", p.cfg.window.as_secs()),
            )
            .with("retry_after_secs", secs));
        }
        l.take(f, &addr_key, now, p.cfg.window);
        l.take(f, &ip_key, now, p.cfg.window);
    }
    let give_back = || {
        let mut l = p.limits.lock();
        l.give_back(f, &addr_key, now);
        l.give_back(f, &ip_key, now);
    };
    let sender = if f == Limited::Native { &p.faucet } else { &p.hkd };
    let sent = match sender.send(vec![msg], "lantau portal faucet").await {
        Ok(s) => s,
        Err(e) => {
            give_back();
            return Err(ApiError::node(e));
        }
    };
    let Sent::Included(r) = &sent else {
        give_back();
        let (code, space, log) = sent.failure().unwrap_or((0, "", ""));
        return Err(ApiError::tx_refused("faucet", sent.txhash(), code, space, log));
    };
    if let Some((code, space, log)) = sent.failure() {
        give_back();
        return Err(ApiError::tx_refused("faucet", &r.txhash, code, space, log));
    }
    let balance = p.client.balance(&addr, denom).await.map_err(ApiError::node)?;
    Ok(Json(json!({
        "tx_hash": r.txhash,
        "height": r.height,
        "address": addr.to_bech32(),
        "hex_address": addr.to_hex(),
        "denom": denom,
        "amount": amount.to_string(),
        "balance": balance.0.to_string(),
    })))
}

async fn challenge(State(p): State<Arc<Portal>>, ConnectInfo(peer): ConnectInfo<SocketAddr>, Body(b): Body<AddressBody>) -> Result<Json<Value>, ApiError> {
    let addr = parse_address(&b.address)?;
    // Each challenge is stored until it expires: a client gets a bounded number per lifetime.
    let (ip, at, ttl) = (peer.ip().to_string(), Instant::now(), p.cfg.challenge_ttl.max(Duration::from_secs(1)));
    {
        let mut l = p.limits.lock();
        if let Some(w) = l.wait(Limited::Challenge, &ip, CHALLENGES_PER_CLIENT, ttl, at) {
            let secs = w.as_secs().max(1);
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("this client asked for {CHALLENGES_PER_CLIENT} challenges already: sign one of them, or try again in {secs} s"),
            )
            .with("retry_after_secs", secs));
        }
        l.take(Limited::Challenge, &ip, at, ttl);
    }
    let v = crate::siwe::issue(&p.store, &p.domain, &p.scheme, crate::siwe::STATEMENT, "/kyc/apply", p.evm_chain_id, &addr, p.cfg.challenge_ttl)
        .map_err(store_error)?;
    Ok(Json(v))
}

#[derive(Debug, Deserialize)]
struct ApplyBody {
    message: String,
    signature: String,
    person: Person,
}

#[derive(Debug, Clone, Deserialize)]
struct Person {
    given_name: String,
    family_name: String,
    date_of_birth: String,
    country_of_residence: String,
    national_identifier: String,
    #[serde(default)]
    national_identifier_type: Option<String>,
}

impl Person {
    /// Checks the fields and gives the IVMS101 natural person.
    fn to_ivms101(&self, today: time::Date) -> Result<Value, ApiError> {
        let name = |what: &str, s: &str| -> Result<String, ApiError> {
            let t = s.trim();
            if t.is_empty() || t.chars().count() > 100 || t.chars().any(char::is_control) {
                return Err(ApiError::invalid(format!("{what} must be 1 to 100 characters")));
            }
            Ok(t.to_string())
        };
        let (given, family) = (name("given_name", &self.given_name)?, name("family_name", &self.family_name)?);
        let fmt = time::macros::format_description!("[year]-[month]-[day]");
        let dob = time::Date::parse(self.date_of_birth.trim(), &fmt).map_err(|_| ApiError::invalid("date_of_birth must be a date YYYY-MM-DD"))?;
        if dob >= today || dob.year() < 1900 {
            return Err(ApiError::invalid("date_of_birth must be a past date after 1900"));
        }
        let country = self.country_of_residence.trim().to_ascii_uppercase();
        if country.len() != 2 || !country.bytes().all(|c| c.is_ascii_uppercase()) {
            return Err(ApiError::invalid("country_of_residence must be an ISO 3166-1 alpha-2 code, such as HK"));
        }
        let id = self.national_identifier.trim();
        if id.is_empty() || id.len() > 35 || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '(' || c == ')') {
            return Err(ApiError::invalid("national_identifier must be 1 to 35 letters, digits, '-', '(' or ')'"));
        }
        // IVMS101's NationalIdentifierTypeCode, or a readable alias.
        let kind = match self.national_identifier_type.as_deref().unwrap_or("IDCD").trim() {
            "IDCD" | "NATIONAL_IDENTITY_NUMBER" => "IDCD",
            "CCPT" | "PASSPORT_NUMBER" => "CCPT",
            "DRLC" | "DRIVERS_LICENSE" => "DRLC",
            "TXID" | "TAX_ID" => "TXID",
            "SOCS" | "SOCIAL_SECURITY_NUMBER" => "SOCS",
            "ARNU" | "ALIEN_REGISTRATION_NUMBER" => "ARNU",
            "MISC" => "MISC",
            other => return Err(ApiError::invalid(format!("national_identifier_type {other:?} is not one of IDCD, CCPT, DRLC, TXID, SOCS, ARNU, MISC"))),
        };
        Ok(json!({"naturalPerson": {
            "name": {"nameIdentifier": [{"primaryIdentifier": family, "secondaryIdentifier": given, "nameIdentifierType": "LEGL"}]},
            "nationalIdentification": {"nationalIdentifier": id, "nationalIdentifierType": kind},
            "dateAndPlaceOfBirth": {"dateOfBirth": dob.format(&fmt).unwrap_or_default()},
            "countryOfResidence": country,
        }}))
    }
}

async fn apply(State(p): State<Arc<Portal>>, Body(b): Body<ApplyBody>) -> Result<Response, ApiError> {
    let now = time::OffsetDateTime::now_utc();
    let (nonce, addr) = crate::siwe::check_signed(&p.store, &b.message, &b.signature, now.unix_timestamp(), store_error)?;
    let nonce = nonce.as_str();
    let record = b.person.to_ivms101(now.date())?;
    if p.client.identity(&addr).await.map_err(ApiError::node)?.is_some() {
        return Err(ApiError::new(StatusCode::CONFLICT, "already_applied", format!("{} already has an identity record", addr.to_bech32())));
    }
    // The on-chain reference: a salted hash of the record (the salt stays here with it, so
    // the reference does not let anyone test guesses of a person's data).
    let salt = random_hex(16);
    let stored = json!({"salt": salt, "ivms101": record});
    let canonical = serde_json::to_vec(&stored["ivms101"]).unwrap_or_default();
    let mut salted = salt.clone().into_bytes();
    salted.extend_from_slice(&canonical);
    let reference = format!("ivms101:sha256:{}", const_hex::encode(lantau_crypto::sha256(&salted)));
    let app = Application {
        id: String::new(),
        address: addr.to_bech32(),
        hex_address: addr.to_hex(),
        status: Status::Pending,
        level: p.cfg.kyc_level.as_str_name().to_string(),
        ivms101_off_chain_ref: reference,
        tx_hash: None,
        created_at: rfc3339(now),
        decided_at: None,
        reason: None,
        person: Some(stored),
    };
    let app = p.store.use_challenge_and_apply(nonce, now.unix_timestamp(), app).map_err(store_error)?;
    let app = if p.cfg.auto_approve { p.enrol(app).await } else { app };
    Ok((StatusCode::CREATED, Json(json!({"application": app.public()}))).into_response())
}

async fn application_of(State(p): State<Arc<Portal>>, Path(address): Path<String>) -> Result<Json<Value>, ApiError> {
    let addr = parse_address(&address)?;
    match p.store.by_address(&addr.to_hex()).map_err(store_error)? {
        Some(a) => Ok(Json(json!({"application": a.public()}))),
        None => Err(ApiError::not_found(format!("{} has no application", addr.to_bech32()))),
    }
}

#[derive(Debug, Deserialize)]
struct PrepareBody {
    from: String,
    to: String,
    amount: String,
}

/// The gas a page gives its wallet for a `transferWithTravelRule` (a gated transfer uses about
/// 150,000; the flags it may raise add to that).
const TRANSFER_GAS: u64 = 400_000;

async fn prepare_transfer(State(p): State<Arc<Portal>>, Body(b): Body<PrepareBody>) -> Result<Json<Value>, ApiError> {
    let (from, to) = (parse_address(&b.from)?, parse_address(&b.to)?);
    let amount: u128 = b.amount.trim().parse().map_err(|_| ApiError::invalid("amount must be a whole number of base units (HKD cents)"))?;
    if amount == 0 {
        return Err(ApiError::invalid("amount must be positive"));
    }
    let payload = p.client.travel_rule_payload(&from, &to).await.map_err(ApiError::node)?;
    let data = lantau_client::eth::transfer_with_travel_rule_calldata(&to, amount, &prost::Message::encode_to_vec(&payload));
    Ok(Json(json!({
        "to": token_address(&p).await?,
        "data": format!("0x{}", const_hex::encode(data)),
        "gas": format!("0x{TRANSFER_GAS:x}"),
        "payload": {
            "originator_ref": payload.originator_ref, "beneficiary_ref": payload.beneficiary_ref,
            "originator_vasp": payload.originator_vasp, "beneficiary_vasp": payload.beneficiary_vasp, "tier": payload.tier,
        },
    })))
}

#[derive(Debug, Deserialize)]
struct ListQuery {
    status: Option<String>,
}

async fn admin_list(State(p): State<Arc<Portal>>, headers: HeaderMap, Query(q): Query<ListQuery>) -> Result<Json<Value>, ApiError> {
    p.check_operator(&headers)?;
    let status = match q.status.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(Status::parse(s).ok_or_else(|| ApiError::invalid(format!("status {s:?} is not pending, enrolled, rejected or failed")))?),
    };
    let apps = p.store.list(status, 1_000).map_err(store_error)?;
    Ok(Json(json!({"applications": apps})))
}

async fn admin_approve(State(p): State<Arc<Portal>>, headers: HeaderMap, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    p.check_operator(&headers)?;
    let app = p.store.get(&id).map_err(store_error)?;
    if !matches!(app.status, Status::Pending | Status::Failed) {
        return Err(ApiError::new(StatusCode::CONFLICT, "already_decided", format!("application {id} is {:?}, not pending", app.status)));
    }
    let app = p.enrol(app).await;
    Ok(Json(json!({"application": app})))
}

#[derive(Debug, Deserialize)]
struct RejectBody {
    reason: String,
}

async fn admin_reject(State(p): State<Arc<Portal>>, headers: HeaderMap, Path(id): Path<String>, Body(b): Body<RejectBody>) -> Result<Json<Value>, ApiError> {
    p.check_operator(&headers)?;
    let mut app = p.store.get(&id).map_err(store_error)?;
    if !matches!(app.status, Status::Pending | Status::Failed) {
        return Err(ApiError::new(StatusCode::CONFLICT, "already_decided", format!("application {id} is {:?}, not pending", app.status)));
    }
    app.status = Status::Rejected;
    app.reason = Some(b.reason.chars().take(500).collect());
    app.decided_at = Some(rfc3339(time::OffsetDateTime::now_utc()));
    p.store.update(&app).map_err(store_error)?;
    Ok(Json(json!({"application": app})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_limiter_counts_per_key_within_the_window_and_gives_back() {
        let mut l = RateLimiter::default();
        let w = Duration::from_secs(60);
        let t0 = Instant::now();
        assert_eq!(l.wait(Limited::Native, "a", 1, w, t0), None);
        l.take(Limited::Native, "a", t0, w);
        let left = l.wait(Limited::Native, "a", 1, w, t0 + Duration::from_secs(10)).unwrap();
        assert_eq!(left, Duration::from_secs(50));
        // Another faucet, another key: free.
        assert_eq!(l.wait(Limited::Hkd, "a", 1, w, t0), None);
        assert_eq!(l.wait(Limited::Native, "b", 1, w, t0), None);
        // The window passes.
        assert_eq!(l.wait(Limited::Native, "a", 1, w, t0 + w), None);
        // A failed request is given back.
        let t1 = t0 + Duration::from_secs(100);
        l.take(Limited::Native, "c", t1, w);
        l.give_back(Limited::Native, "c", t1);
        assert_eq!(l.wait(Limited::Native, "c", 1, w, t1), None);
    }

    #[test]
    fn an_applicant_becomes_an_ivms101_natural_person_and_bad_fields_are_named() {
        let today = time::macros::date!(2026 - 11 - 24);
        let p = Person {
            given_name: " Mei ".into(),
            family_name: "Chan".into(),
            date_of_birth: "1990-04-01".into(),
            country_of_residence: "hk".into(),
            national_identifier: "A123456(3)".into(),
            national_identifier_type: Some("NATIONAL_IDENTITY_NUMBER".into()),
        };
        let v = p.to_ivms101(today).unwrap();
        assert_eq!(v["naturalPerson"]["name"]["nameIdentifier"][0]["secondaryIdentifier"], "Mei");
        assert_eq!(v["naturalPerson"]["countryOfResidence"], "HK");
        assert_eq!(v["naturalPerson"]["nationalIdentification"]["nationalIdentifierType"], "IDCD");
        let bad = |f: &dyn Fn(&mut Person)| {
            let mut q = p.clone();
            f(&mut q);
            q.to_ivms101(today).unwrap_err().message
        };
        assert!(bad(&|q| q.given_name = " ".into()).contains("given_name"));
        assert!(bad(&|q| q.date_of_birth = "2030-01-01".into()).contains("date_of_birth"));
        assert!(bad(&|q| q.date_of_birth = "01/04/1990".into()).contains("date_of_birth"));
        assert!(bad(&|q| q.country_of_residence = "HKG".into()).contains("country_of_residence"));
        assert!(bad(&|q| q.national_identifier = "x".repeat(36)).contains("national_identifier"));
        assert!(bad(&|q| q.national_identifier_type = Some("X".into())).contains("national_identifier_type"));
    }
}

//! A typed client of the Cosmos REST surface.

use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use lantau_primitives::{Address, Amount, Coin};
use serde::Deserialize;
use serde_json::{json, Value};

/// A client failure.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The node could not be reached, or the connection broke.
    #[error("transport: {0}")]
    Transport(String),
    /// The node answered with an error body `{code, message}`.
    #[error("node answered HTTP {status}: code {code}: {message}")]
    Api {
        /// HTTP status.
        status: u16,
        /// gRPC code from the body.
        code: i64,
        /// Message from the body.
        message: String,
    },
    /// The answer did not have the expected shape.
    #[error("unexpected response: {0}")]
    Decode(String),
    /// A poll ran out of time: the transaction may still land, or may have been dropped.
    #[error("not confirmed within {0:?}: the transaction may be waiting in a mempool or dropped")]
    Timeout(Duration),
}

/// The verdict of a broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broadcast {
    /// Upper-case hex hash (also for rejected transactions; never indexed then).
    pub txhash: String,
    /// 0 = admitted to the mempool (not executed, not guaranteed included).
    pub code: u32,
    /// Codespace of a rejection.
    pub codespace: String,
    /// Reason of a rejection.
    pub raw_log: String,
}

/// A committed transaction as `GET /cosmos/tx/v1beta1/txs/{hash}` returns it.
#[derive(Debug, Clone, Deserialize)]
pub struct TxResponse {
    /// Height.
    pub height: String,
    /// Hash.
    pub txhash: String,
    /// Codespace.
    #[serde(default)]
    pub codespace: String,
    /// 0 = executed successfully.
    pub code: u32,
    /// Failure reason.
    #[serde(default)]
    pub raw_log: String,
    /// Gas wanted.
    #[serde(default)]
    pub gas_wanted: String,
    /// Gas used.
    #[serde(default)]
    pub gas_used: String,
    /// Events.
    #[serde(default)]
    pub events: Vec<Value>,
}

/// The outcome of confirming a broadcast.
#[derive(Debug, Clone)]
pub enum Confirmation {
    /// Rejected at admission: never included.
    Rejected(Broadcast),
    /// Included; `code` 0 means it executed successfully.
    Included(TxResponse),
}

/// An undecoded HTTP answer (see `RestClient::get_raw`).
#[derive(Debug, Clone)]
pub(crate) struct RawAnswer {
    /// HTTP status.
    pub(crate) status: u16,
    /// True when a redirect was followed: someone other than the addressed handler answered.
    pub(crate) redirected: bool,
    /// The body as text.
    pub(crate) body: String,
}

/// The REST client.
#[derive(Debug, Clone)]
pub struct RestClient {
    base: String,
    http: reqwest::Client,
}

impl RestClient {
    /// A client of `base` (e.g. `http://127.0.0.1:1317`).
    pub fn new(base: impl Into<String>) -> Self {
        Self { base: base.into().trim_end_matches('/').to_string(), http: reqwest::Client::new() }
    }

    async fn get(&self, path: &str) -> Result<Value, ClientError> {
        let resp = self.http.get(format!("{}{}", self.base, path)).send().await.map_err(|e| ClientError::Transport(e.to_string()))?;
        Self::decode(resp).await
    }

    async fn post(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        let resp = self.http.post(format!("{}{}", self.base, path)).json(body).send().await.map_err(|e| ClientError::Transport(e.to_string()))?;
        Self::decode(resp).await
    }

    async fn decode(resp: reqwest::Response) -> Result<Value, ClientError> {
        let status = resp.status().as_u16();
        let text = resp.text().await.map_err(|e| ClientError::Transport(e.to_string()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| ClientError::Decode(format!("HTTP {status}: {e}: {text:.200}")))?;
        if status >= 400 {
            return Err(ClientError::Api {
                status,
                code: v.get("code").and_then(Value::as_i64).unwrap_or(-1),
                message: v.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
            });
        }
        Ok(v)
    }

    /// The full URL of a REST path on this node.
    pub(crate) fn url(&self, path: &str) -> Result<reqwest::Url, ClientError> {
        reqwest::Url::parse(&format!("{}{}", self.base, path)).map_err(|e| ClientError::Decode(format!("bad URL for {path:?}: {e}")))
    }

    /// The full URL of a REST path with query parameters (encoded).
    pub(crate) fn url_with_params(&self, path: &str, params: &[(&str, &str)]) -> Result<reqwest::Url, ClientError> {
        reqwest::Url::parse_with_params(&format!("{}{}", self.base, path), params).map_err(|e| ClientError::Decode(format!("bad URL for {path:?}: {e}")))
    }

    /// GETs a URL and decodes it like every other query (JSON; HTTP >= 400 as [`ClientError::Api`]).
    pub(crate) async fn get_url(&self, url: reqwest::Url) -> Result<Value, ClientError> {
        let resp = self.http.get(url).send().await.map_err(|e| ClientError::Transport(e.to_string()))?;
        Self::decode(resp).await
    }

    /// GETs a URL and returns the answer undecoded: status, body text, and whether a redirect
    /// was followed (the final URL differs from the requested one). For callers that must judge
    /// exactly who answered, such as the SubRoleParent rule.
    pub(crate) async fn get_raw(&self, url: reqwest::Url) -> Result<RawAnswer, ClientError> {
        let resp = self.http.get(url.clone()).send().await.map_err(|e| ClientError::Transport(e.to_string()))?;
        let status = resp.status().as_u16();
        let redirected = resp.url() != &url;
        let body = resp.text().await.map_err(|e| ClientError::Transport(e.to_string()))?;
        Ok(RawAnswer { status, redirected, body })
    }

    /// GETs any REST path (e.g. `/chain/kyc/v1/params`) and returns its JSON.
    pub async fn query(&self, path: &str) -> Result<Value, ClientError> {
        self.get(path).await
    }

    /// Like [`RestClient::query`], with a 404 whose body code is 5 (NotFound) as `None`.
    pub async fn query_opt(&self, path: &str) -> Result<Option<Value>, ClientError> {
        match self.get(path).await {
            Ok(v) => Ok(Some(v)),
            Err(ClientError::Api { status: 404, code: 5, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The identity record of an address. Both spellings of "no record" the spec allows (404,
    /// or an empty `identity`) give `None`.
    pub async fn identity(&self, addr: &Address) -> Result<Option<lantau_proto::chain::kyc::v1::Identity>, ClientError> {
        let Some(v) = self.query_opt(&format!("/chain/kyc/v1/identity/{}", addr.to_bech32())).await? else {
            return Ok(None);
        };
        match v.get("identity") {
            None | Some(Value::Null) => Ok(None),
            Some(id) if id.get("address").and_then(Value::as_str).unwrap_or_default().is_empty() => Ok(None),
            Some(id) => serde_json::from_value(id.clone()).map(Some).map_err(|e| ClientError::Decode(format!("identity: {e}"))),
        }
    }

    /// The Travel Rule payload for a stablecoin transfer from `from` to `to`, filled from the
    /// identity registry: both references, both VASPs, and the sender's registered tier. A
    /// party that is an active sub-key is evaluated against its parent's identity, as the gates
    /// do. A party without a record contributes empty fields (the gate chain then explains
    /// what is missing).
    pub async fn travel_rule_payload(&self, from: &Address, to: &Address) -> Result<lantau_proto::chain::compliance::v1::TravelRulePayload, ClientError> {
        let (from, to) = (self.acting_identity(from).await, self.acting_identity(to).await);
        let (s, r) = (self.identity(&from).await?, self.identity(&to).await?);
        let params = self.query("/chain/kyc/v1/params").await?;
        let tier = match &s {
            Some(id) => {
                let level = lantau_proto::chain::kyc::v1::Level::try_from(id.level).map(|l| l.as_str_name()).unwrap_or("");
                params["params"]["level_definitions"]
                    .as_array()
                    .and_then(|defs| defs.iter().find(|d| d["level"] == level))
                    .and_then(|d| d["travel_rule_tier"].as_str())
                    .unwrap_or("none")
                    .to_string()
            }
            None => "none".to_string(),
        };
        let field = |id: &Option<lantau_proto::chain::kyc::v1::Identity>, f: fn(&lantau_proto::chain::kyc::v1::Identity) -> &String| {
            id.as_ref().map(|i| f(i).clone()).unwrap_or_default()
        };
        Ok(lantau_proto::chain::compliance::v1::TravelRulePayload {
            tx_hash: String::new(),
            originator_ref: field(&s, |i| &i.ivms101_off_chain_ref),
            beneficiary_ref: field(&r, |i| &i.ivms101_off_chain_ref),
            originator_vasp: field(&s, |i| &i.vasp_identifier),
            beneficiary_vasp: field(&r, |i| &i.vasp_identifier),
            tier,
        })
    }

    /// Whose identity counts for `addr`: its parent when it is an active sub-key, itself
    /// otherwise (a primary key, a revoked sub-key, or an answer that proves nothing: the gates
    /// then judge the address itself).
    async fn acting_identity(&self, addr: &Address) -> Address {
        match self.sub_role_parent(&addr.to_bech32()).await {
            crate::compliance::ParentAnswer::SubKey { parent, active: true, .. } => parent,
            _ => *addr,
        }
    }

    /// SimulateTrace: the gate-by-gate trace the node computes for signed bytes, without
    /// broadcasting them (`{trace}`).
    pub async fn simulate_trace(&self, tx: &[u8]) -> Result<Value, ClientError> {
        self.post("/chain/compliance/v1/simulate_trace", &json!({"tx_bytes": B64.encode(tx)})).await
    }

    /// The chain id (`default_node_info.network`).
    pub async fn chain_id(&self) -> Result<String, ClientError> {
        let v = self.get("/cosmos/base/tendermint/v1beta1/node_info").await?;
        v["default_node_info"]["network"].as_str().map(str::to_string).ok_or_else(|| ClientError::Decode("no network".into()))
    }

    /// (account_number, sequence) of an account; None when it does not exist.
    pub async fn account(&self, addr: &Address) -> Result<Option<(u64, u64)>, ClientError> {
        match self.get(&format!("/cosmos/auth/v1beta1/accounts/{}", addr.to_bech32())).await {
            Ok(v) => {
                let num = |k: &str| v["account"][k].as_str().and_then(|s| s.parse::<u64>().ok());
                match (num("account_number"), num("sequence")) {
                    (Some(n), Some(s)) => Ok(Some((n, s))),
                    _ => Err(ClientError::Decode(format!("bad account: {v}"))),
                }
            }
            Err(ClientError::Api { status: 404, code: 5, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The account number and the sequence its next transaction must carry on this node
    /// (counting what the node admitted and has not committed: consecutive sends without
    /// waiting), from Lantau's `/chain/auth/v1/next_sequence`; the committed sequence from a
    /// node without that route. `None` when the account does not exist.
    pub async fn next_sequence(&self, addr: &Address) -> Result<Option<(u64, u64)>, ClientError> {
        match self.get(&format!("/chain/auth/v1/next_sequence/{}", addr.to_bech32())).await {
            Ok(v) => {
                let num = |k: &str| v[k].as_str().and_then(|s| s.parse::<u64>().ok());
                match (num("account_number"), num("sequence")) {
                    (Some(n), Some(s)) => Ok(Some((n, s))),
                    _ => Err(ClientError::Decode(format!("bad next_sequence: {v}"))),
                }
            }
            Err(ClientError::Api { status: 404, message, .. }) if message.contains("not found") && message.contains("account") => Ok(None),
            Err(ClientError::Api { status: 404, .. }) => self.account(addr).await,
            Err(e) => Err(e),
        }
    }

    /// Every balance of an address.
    pub async fn balances(&self, addr: &Address) -> Result<Vec<Coin>, ClientError> {
        let v = self.get(&format!("/cosmos/bank/v1beta1/balances/{}", addr.to_bech32())).await?;
        let arr = v["balances"].as_array().ok_or_else(|| ClientError::Decode("no balances".into()))?;
        arr.iter()
            .map(|c| {
                let denom = c["denom"].as_str().unwrap_or_default().to_string();
                let amount: Amount = c["amount"].as_str().unwrap_or_default().parse().map_err(|e| ClientError::Decode(format!("{e}")))?;
                Ok(Coin { denom, amount })
            })
            .collect()
    }

    /// One balance (zero when absent).
    pub async fn balance(&self, addr: &Address, denom: &str) -> Result<Amount, ClientError> {
        Ok(self.balances(addr).await?.into_iter().find(|c| c.denom == denom).map(|c| c.amount).unwrap_or_default())
    }

    /// Broadcasts signed bytes (`BROADCAST_MODE_SYNC` or `BROADCAST_MODE_ASYNC`).
    pub async fn broadcast(&self, tx: &[u8], mode: &str) -> Result<Broadcast, ClientError> {
        let v = self.post("/cosmos/tx/v1beta1/txs", &json!({"tx_bytes": B64.encode(tx), "mode": mode})).await?;
        let r = &v["tx_response"];
        Ok(Broadcast {
            txhash: r["txhash"].as_str().unwrap_or_default().to_string(),
            code: r["code"].as_u64().and_then(|c| u32::try_from(c).ok()).unwrap_or(u32::MAX),
            codespace: r["codespace"].as_str().unwrap_or_default().to_string(),
            raw_log: r["raw_log"].as_str().unwrap_or_default().to_string(),
        })
    }

    /// A committed transaction; None while it is not indexed (not included yet, or never).
    pub async fn tx(&self, hash: &str) -> Result<Option<TxResponse>, ClientError> {
        match self.get(&format!("/cosmos/tx/v1beta1/txs/{hash}")).await {
            Ok(v) => serde_json::from_value(v["tx_response"].clone()).map(Some).map_err(|e| ClientError::Decode(e.to_string())),
            Err(ClientError::Api { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Polls the transaction query until the hash is indexed, within `timeout` (polling every
    /// `interval`). A timeout is [`ClientError::Timeout`]: neither failure nor success.
    pub async fn wait_for_tx(&self, hash: &str, timeout: Duration, interval: Duration) -> Result<TxResponse, ClientError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(r) = self.tx(hash).await? {
                return Ok(r);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ClientError::Timeout(timeout));
            }
            tokio::time::sleep(interval).await;
        }
    }

    /// Broadcasts with SYNC and, when admitted, confirms by polling the transaction query.
    pub async fn broadcast_and_confirm(&self, tx: &[u8], timeout: Duration) -> Result<Confirmation, ClientError> {
        let b = self.broadcast(tx, "BROADCAST_MODE_SYNC").await?;
        if b.code != 0 {
            return Ok(Confirmation::Rejected(b));
        }
        Ok(Confirmation::Included(self.wait_for_tx(&b.txhash, timeout, Duration::from_millis(100)).await?))
    }

    /// Gas the transaction would use (`POST /cosmos/tx/v1beta1/simulate`).
    pub async fn simulate(&self, tx: &[u8]) -> Result<u64, ClientError> {
        let v = self.post("/cosmos/tx/v1beta1/simulate", &json!({"tx_bytes": B64.encode(tx)})).await?;
        v["gas_info"]["gas_used"].as_str().and_then(|s| s.parse().ok()).ok_or_else(|| ClientError::Decode(format!("bad simulate answer: {v}")))
    }

    /// Searches transactions (`query` with single-quoted values; `order_by` explicit).
    pub async fn search(&self, query: &str, descending: bool, limit: u64) -> Result<(u64, Vec<TxResponse>), ClientError> {
        let order = if descending { "ORDER_BY_DESC" } else { "ORDER_BY_ASC" };
        let url = reqwest::Url::parse_with_params(
            &format!("{}/cosmos/tx/v1beta1/txs", self.base),
            &[("query", query), ("order_by", order), ("limit", &limit.to_string())],
        )
        .map_err(|e| ClientError::Decode(e.to_string()))?;
        let resp = self.http.get(url).send().await.map_err(|e| ClientError::Transport(e.to_string()))?;
        let v = Self::decode(resp).await?;
        let total = v["total"].as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
        let txs = serde_json::from_value(v["tx_responses"].clone()).map_err(|e| ClientError::Decode(e.to_string()))?;
        Ok((total, txs))
    }
}

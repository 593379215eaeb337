//! The one query router behind `abci_query`, the gRPC server and (through them) the REST
//! gateway: a gRPC method path (`/cosmos.bank.v1beta1.Query/Balance`) and a protobuf request
//! in, a protobuf response out.
//!
//! In order: the methods the app itself answers (those that need its limits, its node-local
//! parts or more than one module: auth `Params`, bank denom metadata, tx `Simulate`, and
//! compliance `TxTrace` (the trace ring buffer) and `SimulateTrace` (the gates on the
//! admission state)), then each module in list order
//! ([`crate::modules::query`]), then the node's extension (the tx index and the blocks: tx
//! `GetTx`/`GetTxsEvent`, the tendermint service), which the app does not hold.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use cnidarium::Snapshot;
use cosmos_sdk_proto::cosmos::auth::v1beta1 as auth_pb;
use cosmos_sdk_proto::cosmos::bank::v1beta1 as bank_pb;
use cosmos_sdk_proto::cosmos::tx::v1beta1 as tx_pb;
use lantau_module_api::{decode_query, QueryError};
use lantau_proto::chain::compliance::v1 as compliance_pb;
use prost::Message as _;

use crate::App;

/// `/cosmos.bank.v1beta1.Query/DenomsMetadata`.
pub const DENOMS_METADATA: &str = "/cosmos.bank.v1beta1.Query/DenomsMetadata";
/// `/cosmos.bank.v1beta1.Query/DenomMetadata`.
pub const DENOM_METADATA: &str = "/cosmos.bank.v1beta1.Query/DenomMetadata";
/// `/cosmos.tx.v1beta1.Service/Simulate`.
pub const SIMULATE: &str = "/cosmos.tx.v1beta1.Service/Simulate";

/// A query answer in the making.
pub type QueryFuture<'a> = Pin<Box<dyn Future<Output = Option<Result<Vec<u8>, QueryError>>> + Send + 'a>>;

/// Queries the node answers (installed with [`App::set_query_extension`]): `None` for a
/// method it does not serve. `height` is the height the request asked for (0: latest).
pub trait QueryExtension: Send + Sync {
    /// Answers `method`.
    fn query<'a>(&'a self, height: u64, method: &'a str, request: &'a [u8]) -> QueryFuture<'a>;
}

/// The bank metadata of the native coin and of every registered stablecoin, sorted by base
/// denom.
pub async fn denoms_metadata(snap: &Snapshot) -> Result<Vec<bank_pb::Metadata>, QueryError> {
    let unit = |denom: &str, exponent: u32| bank_pb::DenomUnit { denom: denom.into(), exponent, aliases: vec![] };
    // Display units are lower case, as the Cosmos SDK's are (`atom` for `uatom`).
    let native_display = lantau_primitives::NATIVE_DISPLAY.to_ascii_lowercase();
    let mut out = vec![bank_pb::Metadata {
        description: "The native coin: gas and fees".into(),
        denom_units: vec![unit(lantau_primitives::NATIVE_DENOM, 0), unit(&native_display, 18)],
        base: lantau_primitives::NATIVE_DENOM.into(),
        display: native_display.clone(),
        name: "Lantau".into(),
        symbol: "LANTAU".into(),
        uri: String::new(),
        uri_hash: String::new(),
    }];
    for d in lantau_stablecoin::query::denoms(snap).await? {
        let display = d.display.to_ascii_lowercase();
        out.push(bank_pb::Metadata {
            description: format!("{} stablecoin issued by {}", d.display, d.issuer),
            denom_units: vec![unit(&d.denom, 0), unit(&display, d.decimals)],
            base: d.denom.clone(),
            display,
            name: d.display.clone(),
            symbol: d.display.clone(),
            uri: String::new(),
            uri_hash: String::new(),
        });
    }
    out.sort_by(|a, b| a.base.cmp(&b.base));
    Ok(out)
}

impl App {
    /// Installs the node's queries (once).
    pub fn set_query_extension(&self, ext: Arc<dyn QueryExtension>) {
        let _ = self.query_extension().set(ext);
    }

    /// Answers a gRPC method on the state after block `height` (0: the latest), through the
    /// one router: the app's own methods, the module list, the node's extension.
    pub async fn grpc_query(&self, height: u64, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError> {
        let latest = self.last_height().await.map_err(|e| QueryError::Internal(e.to_string()))?;
        let h = if height == 0 { latest } else { height };
        if h > latest {
            return Err(QueryError::InvalidArgument(format!("cannot query with height in the future; please provide a valid height (latest {latest})")));
        }
        let snap = self
            .snapshot_at_height(Some(h))
            .await
            .map_err(|e| QueryError::Internal(e.to_string()))?
            .ok_or_else(|| QueryError::InvalidArgument(format!("height {h} is no longer kept by this node (latest {latest})")))?;
        self.route_query(&snap, height, method, request).await
    }

    /// The router on a snapshot already chosen (`height` as asked, for the extension).
    pub(crate) async fn route_query(&self, snap: &Snapshot, height: u64, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError> {
        match method {
            lantau_auth::query::PARAMS => {
                let _: auth_pb::QueryParamsRequest = decode_query(request)?;
                let cfg = self.config();
                let params = auth_pb::Params {
                    max_memo_characters: u64::try_from(cfg.max_memo_chars).unwrap_or(u64::MAX),
                    tx_sig_limit: 1,
                    tx_size_cost_per_byte: lantau_module_api::gas::TX_SIZE_PER_BYTE,
                    sig_verify_cost_ed25519: lantau_module_api::gas::SIG_VERIFY,
                    sig_verify_cost_secp256k1: lantau_module_api::gas::SIG_VERIFY,
                };
                return Ok(auth_pb::QueryParamsResponse { params: Some(params) }.encode_to_vec());
            }
            DENOMS_METADATA => {
                let _: bank_pb::QueryDenomsMetadataRequest = decode_query(request)?;
                let metadatas = denoms_metadata(snap).await?;
                let total = u64::try_from(metadatas.len()).unwrap_or(u64::MAX);
                let pagination = Some(cosmos_sdk_proto::cosmos::base::query::v1beta1::PageResponse { next_key: vec![], total });
                return Ok(bank_pb::QueryDenomsMetadataResponse { metadatas, pagination }.encode_to_vec());
            }
            DENOM_METADATA => {
                let req: bank_pb::QueryDenomMetadataRequest = decode_query(request)?;
                let m = denoms_metadata(snap).await?.into_iter().find(|m| m.base == req.denom);
                return match m {
                    Some(m) => Ok(bank_pb::QueryDenomMetadataResponse { metadata: Some(m) }.encode_to_vec()),
                    None => Err(QueryError::NotFound(format!("client metadata for denom {}", req.denom))),
                };
            }
            SIMULATE => {
                let req: tx_pb::SimulateRequest = decode_query(request)?;
                if req.tx_bytes.is_empty() {
                    return Err(QueryError::InvalidArgument("empty txBytes is not allowed".into()));
                }
                let out = self.simulate(&req.tx_bytes).await;
                return match out.result {
                    Ok(()) => Ok(tx_pb::SimulateResponse {
                        gas_info: Some(cosmos_sdk_proto::cosmos::base::abci::v1beta1::GasInfo { gas_wanted: 0, gas_used: out.gas_used }),
                        result: Some(cosmos_sdk_proto::cosmos::base::abci::v1beta1::Result {
                            events: out.events.iter().map(crate::grpc::event).collect(),
                            ..Default::default()
                        }),
                    }
                    .encode_to_vec()),
                    Err(e) => Err(QueryError::InvalidArgument(format!("{}: codespace {} code {}", e.log, e.codespace, e.code))),
                };
            }
            lantau_compliance::QUERY_TX_TRACE => {
                let req: compliance_pb::QueryTxTraceRequest = decode_query(request)?;
                let hash = tx_hash(&req.tx_hash)?;
                let trace = self.tx_trace(&hash).await;
                return Ok(compliance_pb::QueryTxTraceResponse { found: trace.is_some(), trace }.encode_to_vec());
            }
            lantau_compliance::QUERY_SIMULATE_TRACE => {
                let req: compliance_pb::QuerySimulateTraceRequest = decode_query(request)?;
                if req.tx_bytes.is_empty() {
                    return Err(QueryError::InvalidArgument("tx_bytes is required".into()));
                }
                return match self.simulate_trace(&req.tx_bytes).await {
                    Ok(Some(trace)) => Ok(compliance_pb::QuerySimulateTraceResponse { trace: Some(trace) }.encode_to_vec()),
                    Ok(None) => Err(QueryError::FailedPrecondition("this node runs without the simulation hook".into())),
                    Err(e) => Err(QueryError::InvalidArgument(format!("{}: codespace {} code {}", e.log, e.codespace, e.code))),
                };
            }
            _ => {}
        }
        if let Some(r) = crate::modules::answer(snap, method, request).await {
            return r;
        }
        if let Some(ext) = self.query_extension().get() {
            if let Some(r) = ext.query(height, method, request).await {
                return r;
            }
        }
        Err(QueryError::InvalidArgument(format!("unknown query path {method}")))
    }
}

/// A transaction hash as TxTrace takes it: 64 hex digits, with or without `0x`, any case
/// (Cosmos and Ethereum hashes alike).
pub fn tx_hash(s: &str) -> Result<[u8; 32], QueryError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(QueryError::InvalidArgument("tx hash cannot be empty".into()));
    }
    let b =
        hex::decode(s.strip_prefix("0x").unwrap_or(s)).map_err(|_| QueryError::InvalidArgument(format!("invalid tx hash {s:?}: expected 64 hex digits")))?;
    b.try_into().map_err(|_| QueryError::InvalidArgument(format!("invalid tx hash {s:?}: expected 32 bytes")))
}

/// An event in the ABCI protobuf form the SDK's `Result` carries.
pub(crate) fn event(e: &lantau_module_api::Event) -> tendermint_proto::abci::Event {
    tendermint_proto::abci::Event::from(e.clone())
}

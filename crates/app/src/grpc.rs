//! What the query router ([`crate::query`]) shares with the servers around it: the method
//! names the app answers itself, the node's extension of the router, the bank metadata the
//! app derives, and the hash syntax TxTrace takes.

use std::future::Future;
use std::pin::Pin;

use cosmos_sdk_proto::cosmos::bank::v1beta1 as bank_pb;
use lantau_module_api::QueryError;

/// `/cosmos.bank.v1beta1.Query/DenomsMetadata`.
pub const DENOMS_METADATA: &str = "/cosmos.bank.v1beta1.Query/DenomsMetadata";
/// `/cosmos.bank.v1beta1.Query/DenomMetadata`.
pub const DENOM_METADATA: &str = "/cosmos.bank.v1beta1.Query/DenomMetadata";
/// `/cosmos.tx.v1beta1.Service/Simulate`.
pub const SIMULATE: &str = "/cosmos.tx.v1beta1.Service/Simulate";

/// A query answer in the making.
pub type QueryFuture<'a> = Pin<Box<dyn Future<Output = Option<Result<Vec<u8>, QueryError>>> + Send + 'a>>;

/// Queries the node answers (installed with [`crate::App::set_query_extension`]): `None` for a
/// method it does not serve. `height` is the height the request asked for (0: latest).
pub trait QueryExtension: Send + Sync {
    /// Answers `method`.
    fn query<'a>(&'a self, height: u64, method: &'a str, request: &'a [u8]) -> QueryFuture<'a>;
}

/// The bank metadata of the native coin and of every registered stablecoin, sorted by base
/// denom.
pub async fn denoms_metadata<S: cnidarium::StateRead + Sync>(snap: &S) -> Result<Vec<bank_pb::Metadata>, QueryError> {
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

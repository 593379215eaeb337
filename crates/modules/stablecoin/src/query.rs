//! Stablecoin queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_bank::{BankRead, DenomRecord};
use lantau_module_api::{GasMeter, TxError};
use lantau_primitives::Address;

/// Every denom record, in denom order.
pub async fn denoms<S: StateRead + Sync>(state: &S) -> Result<Vec<DenomRecord>, TxError> {
    lantau_bank::query::denom_records(state).await
}

/// A denom record with its paused features.
pub async fn denom<S: StateRead + Sync>(state: &S, denom: &str) -> Result<Option<(DenomRecord, lantau_bank::Features)>, TxError> {
    let gas = GasMeter::infinite();
    match state.denom_record(&gas, denom).await? {
        Some(r) => Ok(Some((r, state.paused_features(&gas, denom).await?))),
        None => Ok(None),
    }
}

/// Whether `addr` is frozen.
pub async fn frozen<S: StateRead + Sync>(state: &S, addr: &Address) -> Result<bool, TxError> {
    state.is_frozen(&GasMeter::infinite(), addr).await
}

/// `/chain.stablecoin.v1.Query/Denoms`.
pub const DENOMS: &str = "/chain.stablecoin.v1.Query/Denoms";
/// `/chain.stablecoin.v1.Query/Denom`.
pub const DENOM: &str = "/chain.stablecoin.v1.Query/Denom";
/// `/chain.stablecoin.v1.Query/Roles`.
pub const ROLES: &str = "/chain.stablecoin.v1.Query/Roles";
/// `/chain.stablecoin.v1.Query/Frozen`.
pub const FROZEN: &str = "/chain.stablecoin.v1.Query/Frozen";

/// Answers `chain.stablecoin.v1.Query` (protobuf in and out); `None` for another method.
pub async fn grpc<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
    use lantau_module_api::{decode_query, pb_coin, query_address, QueryError};
    use lantau_proto::chain::stablecoin::v1 as pb;
    use prost::Message as _;
    let r = match method {
        DENOMS => {
            async {
                let _: pb::QueryDenomsRequest = decode_query(request)?;
                Ok(pb::QueryDenomsResponse { denoms: denoms(state).await? }.encode_to_vec())
            }
            .await
        }
        DENOM => {
            async {
                let req: pb::QueryDenomRequest = decode_query(request)?;
                let Some((rec, paused)) = denom(state, &req.denom).await? else {
                    return Err(QueryError::NotFound(format!("unknown stablecoin denom {}", req.denom)));
                };
                let supply = lantau_bank::query::supply(state, &req.denom).await?;
                let supply = Some(pb_coin(&lantau_primitives::Coin::new(req.denom.as_str(), supply)));
                Ok(pb::QueryDenomResponse {
                    denom: Some(rec),
                    paused: paused.contains(lantau_bank::Feature::Transfer),
                    supply,
                    paused_features: paused.names(),
                }
                .encode_to_vec())
            }
            .await
        }
        ROLES => {
            async {
                let req: pb::QueryRolesRequest = decode_query(request)?;
                if denom(state, &req.denom).await?.is_none() {
                    return Err(QueryError::NotFound(format!("unknown stablecoin denom {}", req.denom)));
                }
                Ok(pb::QueryRolesResponse { roles: crate::roles::grants(state, &req.denom).await? }.encode_to_vec())
            }
            .await
        }
        FROZEN => {
            async {
                let req: pb::QueryFrozenRequest = decode_query(request)?;
                let addr = query_address("address", &req.address)?;
                Ok(pb::QueryFrozenResponse { address: addr.to_bech32(), frozen: frozen(state, &addr).await? }.encode_to_vec())
            }
            .await
        }
        _ => return None,
    };
    Some(r)
}

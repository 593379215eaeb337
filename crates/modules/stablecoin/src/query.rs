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
/// `/chain.stablecoin.v1.Query/Params`.
pub const PARAMS: &str = "/chain.stablecoin.v1.Query/Params";
/// `/chain.stablecoin.v1.Query/Redemptions`.
pub const REDEMPTIONS: &str = "/chain.stablecoin.v1.Query/Redemptions";
/// `/chain.stablecoin.v1.Query/Redemption`.
pub const REDEMPTION: &str = "/chain.stablecoin.v1.Query/Redemption";
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
        PARAMS => {
            async {
                let _: pb::QueryParamsRequest = decode_query(request)?;
                use crate::redemption::RedemptionRead;
                Ok(pb::QueryParamsResponse { params: Some(state.stablecoin_params(&GasMeter::infinite()).await?) }.encode_to_vec())
            }
            .await
        }
        REDEMPTIONS => {
            async {
                let req: pb::QueryRedemptionsRequest = decode_query(request)?;
                let status = match pb::RedemptionStatus::try_from(req.status) {
                    Ok(pb::RedemptionStatus::Unspecified) => None,
                    Ok(s) => Some(s),
                    Err(_) => return Err(QueryError::InvalidArgument(format!("unknown redemption status {}", req.status))),
                };
                let denom = (!req.denom.is_empty()).then(|| req.denom.clone());
                let holder = match req.holder.as_str() {
                    "" => None,
                    h => Some(query_address("holder", h)?.to_bech32()),
                };
                let page = req.pagination.unwrap_or_default();
                let from = match page.key.len() {
                    0 => 0,
                    8 => u64::from_be_bytes(page.key.as_slice().try_into().unwrap_or_default()),
                    n => return Err(QueryError::InvalidArgument(format!("pagination.key: {n} bytes; pass the next_key of the previous page"))),
                };
                let limit = match page.limit {
                    0 => crate::redemption::DEFAULT_PAGE,
                    n => usize::try_from(n).unwrap_or(usize::MAX).min(crate::redemption::MAX_PAGE),
                };
                let now = lantau_proto::timestamp(lantau_module_api::store::state_time(state).await?);
                let filter = crate::redemption::Filter { denom, status, holder };
                let (redemptions, next) = crate::redemption::page(state, &filter, from, limit, &now).await?;
                let pagination = cosmos_sdk_proto::cosmos::base::query::v1beta1::PageResponse {
                    next_key: next.map(|id| id.to_be_bytes().to_vec()).unwrap_or_default(),
                    total: 0,
                };
                Ok(pb::QueryRedemptionsResponse { redemptions, pagination: Some(pagination) }.encode_to_vec())
            }
            .await
        }
        REDEMPTION => {
            async {
                let req: pb::QueryRedemptionRequest = decode_query(request)?;
                use crate::redemption::RedemptionRead;
                let Some(mut r) = state.redemption(&GasMeter::infinite(), req.id).await? else {
                    return Err(QueryError::NotFound(format!("no redemption with id {}", req.id)));
                };
                let now = lantau_proto::timestamp(lantau_module_api::store::state_time(state).await?);
                r.status = crate::redemption::shown_status(&r, &now) as i32;
                Ok(pb::QueryRedemptionResponse { redemption: Some(r) }.encode_to_vec())
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

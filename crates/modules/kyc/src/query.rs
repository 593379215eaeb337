//! KYC queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_module_api::{GasMeter, TxError};
use lantau_primitives::Address;

use crate::state::KycRead;
use crate::{Identity, Params};

/// The identity record of `addr`.
pub async fn identity<S: StateRead + Sync>(state: &S, addr: &Address) -> Result<Option<Identity>, TxError> {
    state.identity(&GasMeter::infinite(), addr).await
}

/// The params.
pub async fn params<S: StateRead + Sync>(state: &S) -> Result<Params, TxError> {
    state.kyc_params(&GasMeter::infinite()).await
}

/// `/chain.kyc.v1.Query/Identity`.
pub const IDENTITY: &str = "/chain.kyc.v1.Query/Identity";
/// `/chain.kyc.v1.Query/Params`.
pub const PARAMS: &str = "/chain.kyc.v1.Query/Params";

/// Answers `chain.kyc.v1.Query` (protobuf in and out); `None` for another method.
pub async fn grpc<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
    use lantau_module_api::{decode_query, query_address, QueryError};
    use lantau_proto::chain::kyc::v1 as pb;
    use prost::Message as _;
    let r = match method {
        IDENTITY => {
            async {
                let req: pb::QueryIdentityRequest = decode_query(request)?;
                let addr = query_address("address", &req.address)?;
                match identity(state, &addr).await? {
                    Some(id) => Ok(pb::QueryIdentityResponse { identity: Some(id) }.encode_to_vec()),
                    None => Err(QueryError::NotFound(format!("no identity record for {}", addr.to_bech32()))),
                }
            }
            .await
        }
        PARAMS => {
            async {
                let _: pb::QueryParamsRequest = decode_query(request)?;
                Ok(pb::QueryParamsResponse { params: Some(params(state).await?) }.encode_to_vec())
            }
            .await
        }
        _ => return None,
    };
    Some(r)
}

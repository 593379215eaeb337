//! erc20 queries.

use cnidarium::StateRead;
use lantau_module_api::{store, TxError};

use crate::{state_key, TokenPair};

/// Every token pair, in denom order.
pub async fn token_pairs<S: StateRead + Sync>(state: &S) -> Result<Vec<TokenPair>, TxError> {
    store::scan_prefix(state, state_key::PAIR_PREFIX).await?.into_iter().map(|(k, v)| store::decode(&v, &k)).collect()
}

/// The pair of a denom, or of an ERC-20 contract by its hex address (as Cosmos EVM's
/// `TokenPair` query takes it).
pub async fn token_pair<S: StateRead + Sync>(state: &S, token: &str) -> Result<Option<TokenPair>, TxError> {
    let by_addr = lantau_primitives::Address::from_hex(token).ok();
    Ok(token_pairs(state).await?.into_iter().find(|p| match by_addr {
        Some(a) => lantau_primitives::Address::from_hex(&p.erc20_address).ok() == Some(a),
        None => p.denom == token,
    }))
}

/// `/cosmos.evm.erc20.v1.Query/TokenPairs`.
pub const TOKEN_PAIRS: &str = "/cosmos.evm.erc20.v1.Query/TokenPairs";
/// `/cosmos.evm.erc20.v1.Query/TokenPair`.
pub const TOKEN_PAIR: &str = "/cosmos.evm.erc20.v1.Query/TokenPair";

/// Answers `cosmos.evm.erc20.v1.Query` (protobuf in and out); `None` for another method.
pub async fn grpc<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
    use lantau_module_api::{decode_query, QueryError};
    use lantau_proto::erc20 as pb;
    use prost::Message as _;
    let r = match method {
        TOKEN_PAIRS => {
            async {
                let _: pb::QueryTokenPairsRequest = decode_query(request)?;
                let pairs = token_pairs(state).await?;
                let total = u64::try_from(pairs.len()).unwrap_or(u64::MAX);
                let pagination = Some(cosmos_sdk_proto::cosmos::base::query::v1beta1::PageResponse { next_key: vec![], total });
                Ok(pb::QueryTokenPairsResponse { token_pairs: pairs, pagination }.encode_to_vec())
            }
            .await
        }
        TOKEN_PAIR => {
            async {
                let req: pb::QueryTokenPairRequest = decode_query(request)?;
                match token_pair(state, &req.token).await? {
                    Some(p) => Ok(pb::QueryTokenPairResponse { token_pair: Some(p) }.encode_to_vec()),
                    None => Err(QueryError::NotFound(format!("token pair for {} not found", req.token))),
                }
            }
            .await
        }
        _ => return None,
    };
    Some(r)
}

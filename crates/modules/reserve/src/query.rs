//! Reserve queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_bank::BankRead;
use lantau_module_api::{GasMeter, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::reserve::v1::ReserveBinding;

use crate::state::ReserveRead;
use crate::{Attestation, Params};

/// The latest attestation of an issuer.
pub async fn latest<S: StateRead + Sync>(state: &S, issuer: &Address) -> Result<Option<Attestation>, TxError> {
    state.latest_attestation(&GasMeter::infinite(), issuer).await
}

/// The params.
pub async fn params<S: StateRead + Sync>(state: &S) -> Result<Params, TxError> {
    state.reserve_params(&GasMeter::infinite()).await
}

/// One binding per stablecoin `addr` holds: the balance, the denom's issuer and that issuer's
/// latest attestation (absent when it has none).
pub async fn reserve_for_address<S: StateRead + Sync>(state: &S, addr: &Address) -> Result<Vec<ReserveBinding>, TxError> {
    let gas = GasMeter::infinite();
    let mut out = Vec::new();
    for c in state.all_balances(addr).await? {
        let Some(rec) = state.denom_record(&gas, &c.denom).await? else { continue };
        let attestation = match Address::from_bech32(&rec.issuer) {
            Ok(issuer) => state.latest_attestation(&gas, &issuer).await?,
            Err(_) => None,
        };
        out.push(ReserveBinding { denom: c.denom.clone(), balance: Some(lantau_module_api::pb_coin(&c)), issuer: rec.issuer, attestation });
    }
    Ok(out)
}

/// `/chain.reserve.v1.Query/LatestAttestation`.
pub const LATEST_ATTESTATION: &str = "/chain.reserve.v1.Query/LatestAttestation";
/// `/chain.reserve.v1.Query/ReserveForAddress`.
pub const RESERVE_FOR_ADDRESS: &str = "/chain.reserve.v1.Query/ReserveForAddress";
/// `/chain.reserve.v1.Query/Params`.
pub const PARAMS: &str = "/chain.reserve.v1.Query/Params";

/// Answers `chain.reserve.v1.Query` (protobuf in and out); `None` for another method.
pub async fn grpc<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
    use lantau_module_api::{decode_query, query_address, QueryError};
    use lantau_proto::chain::reserve::v1 as pb;
    use prost::Message as _;
    let r = match method {
        LATEST_ATTESTATION => {
            async {
                let req: pb::QueryLatestAttestationRequest = decode_query(request)?;
                let issuer = query_address("issuer", &req.issuer)?;
                match latest(state, &issuer).await? {
                    Some(a) => Ok(pb::QueryLatestAttestationResponse { attestation: Some(a) }.encode_to_vec()),
                    None => Err(QueryError::NotFound(format!("no attestation for issuer {}", issuer.to_bech32()))),
                }
            }
            .await
        }
        RESERVE_FOR_ADDRESS => {
            async {
                let req: pb::QueryReserveForAddressRequest = decode_query(request)?;
                let addr = query_address("address", &req.address)?;
                Ok(pb::QueryReserveForAddressResponse { bindings: reserve_for_address(state, &addr).await? }.encode_to_vec())
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

//! Reserve queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_bank::BankRead;
use lantau_module_api::{GasMeter, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::reserve::v1::ReserveBinding;
use lantau_stablecoin::StablecoinRead;

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
        out.push(ReserveBinding {
            denom: c.denom.clone(),
            balance: Some(lantau_module_api::pb_coin(&c)),
            issuer: rec.issuer,
            attestation,
        });
    }
    Ok(out)
}

//! Stablecoin queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_bank::BankRead;
use lantau_module_api::{store, GasMeter, TxError};
use lantau_primitives::Address;

use crate::state::StablecoinRead;
use crate::{state_key, DenomRecord};

/// Every denom record, in denom order.
pub async fn denoms<S: StateRead + Sync>(state: &S) -> Result<Vec<DenomRecord>, TxError> {
    store::scan_prefix(state, state_key::DENOM_PREFIX)
        .await?
        .into_iter()
        .map(|(k, v)| store::decode(&v, &k))
        .collect()
}

/// A denom record with whether it is paused.
pub async fn denom<S: StateRead + Sync>(state: &S, denom: &str) -> Result<Option<(DenomRecord, bool)>, TxError> {
    let gas = GasMeter::infinite();
    match state.denom_record(&gas, denom).await? {
        Some(r) => Ok(Some((r, state.is_send_paused(&gas, denom).await?))),
        None => Ok(None),
    }
}

/// Whether `addr` is frozen.
pub async fn frozen<S: StateRead + Sync>(state: &S, addr: &Address) -> Result<bool, TxError> {
    state.is_frozen(&GasMeter::infinite(), addr).await
}

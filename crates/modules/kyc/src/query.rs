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

//! Reserve genesis: the params (registered auditors).

use cnidarium::StateWrite;
use lantau_module_api::{GasMeter, SdkError, TxError};

use crate::msg::validate_params;
use crate::state::ReserveWrite;

pub use lantau_proto::chain::reserve::v1::GenesisState;

/// Validates and writes the genesis state.
pub fn init_genesis<S: StateWrite + ?Sized>(state: &mut S, genesis: &GenesisState) -> Result<(), TxError> {
    let params = genesis.params.clone().unwrap_or_default();
    validate_params(&params).map_err(|e| TxError::from(SdkError::InvalidRequest(format!("genesis reserve: {e}"))))?;
    state.put_reserve_params(&GasMeter::infinite(), &params)
}

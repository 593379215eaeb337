//! Genesis of the authorities: the governance address. (The compliance authority is the
//! compliance module's `params.authority`, written by that module's genesis.)

use cnidarium::StateWrite;
use lantau_module_api::{GasMeter, SdkError, TxError};
use lantau_primitives::Address;
use serde::{Deserialize, Serialize};

use crate::state::AuthorityWrite;

/// The `authority` section of the genesis file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct GenesisState {
    /// The governance authority (bech32). Required.
    #[serde(default)]
    pub governance: Option<Address>,
}

/// Writes the governance authority.
pub fn init_genesis<S: StateWrite + ?Sized>(state: &mut S, genesis: &GenesisState) -> Result<Address, TxError> {
    let gov = genesis.governance.ok_or_else(|| SdkError::InvalidRequest("genesis: authority.governance is required".into()))?;
    state.set_governance_authority(&GasMeter::infinite(), &gov)?;
    Ok(gov)
}

//! Auth genesis: the accounts that exist at height 1.

use cnidarium::StateWrite;
use lantau_module_api::{GasMeter, TxError};
use lantau_primitives::Address;
use serde::{Deserialize, Serialize};

use crate::state::AuthWrite;

/// The auth section of the genesis file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct GenesisState {
    /// Addresses that get accounts, numbered in this order.
    #[serde(default)]
    pub accounts: Vec<Address>,
}

/// Creates the genesis accounts.
pub async fn init_genesis<S: StateWrite + Send + Sync>(state: &mut S, genesis: &GenesisState) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    for a in &genesis.accounts {
        state.ensure_account(&gas, a).await?;
    }
    Ok(())
}

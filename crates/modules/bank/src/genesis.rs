//! Bank genesis: initial balances; the supply is their sum.

use cnidarium::StateWrite;
use lantau_module_api::{GasMeter, TxError};
use lantau_primitives::{Address, Coin};
use serde::{Deserialize, Serialize};

use crate::state::BankWrite;

/// One genesis balance row.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Balance {
    /// The holder.
    pub address: Address,
    /// Its coins.
    pub coins: Vec<Coin>,
}

/// The bank section of the genesis file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct GenesisState {
    /// Initial balances.
    #[serde(default)]
    pub balances: Vec<Balance>,
}

/// Mints the genesis balances.
pub async fn init_genesis<S: StateWrite + Send + Sync>(state: &mut S, genesis: &GenesisState) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    let mut events = Vec::new();
    for b in &genesis.balances {
        state.mint(&gas, &b.address, &b.coins, &mut events).await?;
    }
    Ok(())
}

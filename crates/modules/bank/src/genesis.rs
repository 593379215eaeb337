//! Bank genesis: initial balances; the supply is their sum.

use cnidarium::StateWrite;
use lantau_module_api::{BlockCtx, GasMeter, TxError};
use lantau_primitives::{Address, Coin};
use serde::{Deserialize, Serialize};

use crate::state::{BankWrite, GenesisLeg, Leg};

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

/// Mints the genesis balances (genesis legs, which only this function makes), row by row, so
/// accounts are numbered in row order; then creates the fee collector's account.
pub async fn init_genesis<S: StateWrite + Send + Sync>(state: &mut S, genesis: &GenesisState, _block: &BlockCtx) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    let mut events = Vec::new();
    for b in &genesis.balances {
        let legs = b.coins.iter().map(|c| Leg::Genesis(GenesisLeg::new(&b.address, c))).collect();
        state.transfer(&gas, legs, &mut events).await?;
    }
    // The fee collector exists from genesis (numbered after the balance rows), as the SDK's
    // module accounts do: otherwise the chain's first fee payment would create it and that one
    // transaction would pay for an account creation (and simulate to twice a transfer's gas).
    crate::deps::AccountKeeper::ensure_account_exists(state, &gas, &crate::fee_collector()).await?;
    Ok(())
}

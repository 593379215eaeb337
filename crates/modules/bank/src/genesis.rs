//! Bank genesis: initial balances; the supply is their sum.

use cnidarium::StateWrite;
use lantau_compliance::screening::exempt_genesis;
use lantau_module_api::{BlockCtx, GasMeter, TxError};
use lantau_primitives::{Address, Coin};
use serde::{Deserialize, Serialize};

use crate::state::{BankWrite, Leg};

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

/// Mints the genesis balances (stablecoins under the genesis exemption), row by row, so
/// accounts are numbered in row order; then creates the fee collector's account.
pub async fn init_genesis<S: StateWrite + Send + Sync>(state: &mut S, genesis: &GenesisState, block: &BlockCtx) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    let mut events = Vec::new();
    for b in &genesis.balances {
        let legs = b.coins.iter().map(|c| exempt_genesis(block, &b.address, c).map(Leg::Exempt)).collect::<Result<Vec<_>, _>>()?;
        state.transfer(&gas, legs, &mut events).await?;
    }
    // The fee collector exists from genesis (numbered after the balance rows), as the SDK's
    // module accounts do: otherwise the chain's first fee payment would create it and that one
    // transaction would pay for an account creation (and simulate to twice a transfer's gas).
    crate::deps::AccountKeeper::ensure_account_exists(state, &gas, &crate::fee_collector()).await?;
    Ok(())
}

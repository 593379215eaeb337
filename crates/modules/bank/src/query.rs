//! Bank queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_module_api::{GasMeter, TxError};
use lantau_primitives::{Address, Amount, Coin};

use crate::state::BankRead;

/// Every balance of `addr`, sorted by denom.
pub async fn balances<S: StateRead + Sync>(state: &S, addr: &Address) -> Result<Vec<Coin>, TxError> {
    state.all_balances(addr).await
}

/// One balance.
pub async fn balance<S: StateRead + Sync>(state: &S, addr: &Address, denom: &str) -> Result<Amount, TxError> {
    state.balance(&GasMeter::infinite(), addr, denom).await
}

/// The supply of a denom.
pub async fn supply<S: StateRead + Sync>(state: &S, denom: &str) -> Result<Amount, TxError> {
    state.supply(&GasMeter::infinite(), denom).await
}

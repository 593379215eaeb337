//! What the bank needs from other modules (the Cosmos SDK's "expected keepers"): only that an
//! address receiving coins gets an account, so that it can later sign. Implemented over the auth
//! module's state; the bank never touches auth's records itself.

use std::future::Future;

use cnidarium::StateWrite;
use lantau_auth::AuthWrite;
use lantau_module_api::{GasMeter, TxError};
use lantau_primitives::Address;

/// Accounts, as the bank needs them.
pub trait AccountKeeper: StateWrite {
    /// Creates the account of `addr` (next account number) when it does not exist.
    fn ensure_account_exists(&mut self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move { self.ensure_account(gas, addr).await.map(|_| ()) }
    }
}

impl<T: StateWrite + ?Sized> AccountKeeper for T {}

//! Typed access to auth state: the module's keeper.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, store, GasMeter, TxError};
use lantau_primitives::Address;
use prost::Message;

use crate::state_key;
use crate::StoredAccount;

/// Reads of auth state.
pub trait AuthRead: StateRead {
    /// The account at `addr`, if it exists.
    fn account(&self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<Option<StoredAccount>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::account(addr)).await? {
                Some(bytes) => Ok(Some(store::decode(&bytes, "account")?)),
                None => Ok(None),
            }
        }
    }

    /// The number the next new account gets.
    fn next_account_number(&self, gas: &GasMeter) -> impl Future<Output = Result<u64, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, state_key::NEXT_ACCOUNT_NUMBER).await? {
                Some(b) => {
                    let arr: [u8; 8] = b.as_slice().try_into().map_err(|_| internal("corrupt next account number"))?;
                    Ok(u64::from_be_bytes(arr))
                }
                None => Ok(0),
            }
        }
    }
}

impl<T: StateRead + ?Sized> AuthRead for T {}

/// Writes of auth state.
pub trait AuthWrite: StateWrite + AuthRead {
    /// Stores an account record.
    fn put_account(&mut self, gas: &GasMeter, acct: &StoredAccount) -> Result<(), TxError> {
        let addr = Address::from_slice(&acct.address).map_err(internal)?;
        store::put(self, gas, state_key::account(&addr), acct.encode_to_vec())
    }

    /// Returns the account at `addr`, creating it with the next account number when it does
    /// not exist yet (as the Cosmos SDK does when an address first receives coins).
    fn ensure_account(&mut self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<StoredAccount, TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            if let Some(a) = self.account(gas, addr).await? {
                return Ok(a);
            }
            gas.consume(lantau_module_api::gas::ACCOUNT_CREATION, "account creation")?;
            let number = self.next_account_number(gas).await?;
            let next = number.checked_add(1).ok_or_else(|| internal("account numbers exhausted"))?;
            store::put_singleton(self, gas, state_key::NEXT_ACCOUNT_NUMBER.to_string(), next.to_be_bytes().to_vec())?;
            let acct = StoredAccount { address: addr.0.to_vec().into(), pub_key: Default::default(), account_number: number, sequence: 0 };
            self.put_account(gas, &acct)?;
            Ok(acct)
        }
    }
}

impl<T: StateWrite + ?Sized> AuthWrite for T {}

//! Typed access to erc20 state.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, store, GasMeter, TxError};
use lantau_primitives::Address;

use crate::{state_key, token_address, Erc20Error, Owner, TokenPair};

/// Reads of erc20 state.
pub trait Erc20Read: StateRead {
    /// The pair of a denom.
    fn token_pair(&self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<Option<TokenPair>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::pair(denom)).await }
    }

    /// The denom whose precompile lives at `addr`.
    fn denom_at(&self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<Option<String>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::by_address(addr)).await? {
                Some(b) => Ok(Some(String::from_utf8(b).map_err(|_| internal("corrupt erc20 address index"))?)),
                None => Ok(None),
            }
        }
    }
}

impl<T: StateRead + ?Sized> Erc20Read for T {}

/// Writes of erc20 state.
pub trait Erc20Write: StateWrite + Erc20Read {
    /// Registers the pair of a native denom at its deterministic address; fails when the denom
    /// or the address already has a pair. Returns the address.
    fn register_native_pair(&mut self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<Address, TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let addr = token_address(denom);
            if self.token_pair(gas, denom).await?.is_some() || self.denom_at(gas, &addr).await?.is_some() {
                return Err(Erc20Error::TokenPairExists(denom.to_string()).into());
            }
            let pair = TokenPair { erc20_address: addr.to_hex(), denom: denom.to_string(), enabled: true, contract_owner: Owner::Module as i32 };
            store::put_proto(self, gas, state_key::pair(denom), &pair)?;
            store::put(self, gas, state_key::by_address(&addr), denom.as_bytes().to_vec())?;
            Ok(addr)
        }
    }
}

impl<T: StateWrite + ?Sized> Erc20Write for T {}

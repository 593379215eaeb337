//! Typed access to evm state: the module's keeper.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, store, GasMeter, TxError};
use lantau_primitives::Address;

use crate::state_key;

fn word(b: &[u8], what: &str) -> Result<[u8; 32], TxError> {
    b.try_into().map_err(|_| internal(format!("corrupt {what} record")))
}

/// Reads of evm state.
pub trait EvmRead: StateRead {
    /// The EVM chain id (0 before genesis).
    fn evm_chain_id(&self) -> impl Future<Output = Result<u64, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, &GasMeter::infinite(), state_key::CHAIN_ID).await? {
                Some(b) => Ok(u64::from_be_bytes(b.as_slice().try_into().map_err(|_| internal("corrupt evm chain id"))?)),
                None => Ok(0),
            }
        }
    }

    /// Whether the chain's genesis allows impersonated senders (a dev chain).
    fn impersonation_allowed(&self) -> impl Future<Output = Result<bool, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get(self, &GasMeter::infinite(), state_key::DEV_IMPERSONATION).await?.is_some()) }
    }

    /// The hash of the code at `addr`, if it has code.
    fn code_hash(&self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<Option<[u8; 32]>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get(self, gas, &state_key::code_hash(addr)).await?.map(|b| word(&b, "code hash")).transpose() }
    }

    /// Code by its hash.
    fn code(&self, gas: &GasMeter, hash: &[u8; 32]) -> impl Future<Output = Result<Option<Vec<u8>>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get(self, gas, &state_key::code(hash)).await }
    }

    /// A storage slot (zero when unset).
    fn storage(&self, gas: &GasMeter, addr: &Address, slot: &[u8; 32]) -> impl Future<Output = Result<[u8; 32], TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::storage(addr, slot)).await? {
                Some(b) => word(&b, "storage"),
                None => Ok([0; 32]),
            }
        }
    }
}

impl<T: StateRead + ?Sized> EvmRead for T {}

/// Writes of evm state.
pub trait EvmWrite: StateWrite + EvmRead {
    /// Stores code under its hash and points `addr` at it.
    fn put_code(&mut self, gas: &GasMeter, addr: &Address, hash: &[u8; 32], code: &[u8]) -> Result<(), TxError> {
        store::put(self, gas, state_key::code(hash), code.to_vec())?;
        store::put(self, gas, state_key::code_hash(addr), hash.to_vec())
    }

    /// Removes the code of `addr` (self-destruct).
    fn delete_code(&mut self, gas: &GasMeter, addr: &Address) -> Result<(), TxError> {
        store::delete(self, gas, state_key::code_hash(addr))
    }

    /// Sets a storage slot; zero deletes it.
    fn put_storage(&mut self, gas: &GasMeter, addr: &Address, slot: &[u8; 32], value: &[u8; 32]) -> Result<(), TxError> {
        if value.iter().all(|b| *b == 0) {
            store::delete(self, gas, state_key::storage(addr, slot))
        } else {
            store::put(self, gas, state_key::storage(addr, slot), value.to_vec())
        }
    }
}

impl<T: StateWrite + ?Sized> EvmWrite for T {}

//! Typed access to the authorities.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, store, GasMeter, TxError};
use lantau_primitives::Address;

use crate::state_key;

async fn read<S: StateRead + ?Sized>(s: &S, gas: &GasMeter, key: &'static str) -> Result<Address, TxError> {
    let bytes = store::get(s, gas, key).await?.ok_or_else(|| internal(format!("{key} is not set")))?;
    Address::from_slice(&bytes).map_err(|e| internal(format!("corrupt {key}: {e}")))
}

/// Reads of the authorities.
pub trait AuthorityRead: StateRead {
    /// The governance authority.
    fn governance_authority(&self, gas: &GasMeter) -> impl Future<Output = Result<Address, TxError>> + Send
    where
        Self: Sync,
    {
        read(self, gas, state_key::GOVERNANCE)
    }

    /// The compliance authority.
    fn compliance_authority(&self, gas: &GasMeter) -> impl Future<Output = Result<Address, TxError>> + Send
    where
        Self: Sync,
    {
        read(self, gas, state_key::COMPLIANCE)
    }
}

impl<T: StateRead + ?Sized> AuthorityRead for T {}

/// Writes of the authorities.
pub trait AuthorityWrite: StateWrite {
    /// Sets the governance authority (genesis only).
    fn set_governance_authority(&mut self, gas: &GasMeter, addr: &Address) -> Result<(), TxError> {
        store::put(self, gas, state_key::GOVERNANCE.to_string(), addr.0.to_vec())
    }

    /// Sets the compliance authority (genesis, and governance's compliance `MsgUpdateParams`).
    fn set_compliance_authority(&mut self, gas: &GasMeter, addr: &Address) -> Result<(), TxError> {
        store::put(self, gas, state_key::COMPLIANCE.to_string(), addr.0.to_vec())
    }
}

impl<T: StateWrite + ?Sized> AuthorityWrite for T {}

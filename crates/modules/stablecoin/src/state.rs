//! Typed access to stablecoin state.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, store, GasMeter, TxError};
use lantau_primitives::Address;

use crate::{state_key, DenomRecord};

/// Reads of stablecoin state.
pub trait StablecoinRead: StateRead {
    /// A denom record.
    fn denom_record(&self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<Option<DenomRecord>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::denom(denom)).await }
    }

    /// The denom an issuer issues.
    fn issuer_denom(&self, gas: &GasMeter, issuer: &Address) -> impl Future<Output = Result<Option<String>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::issuer(issuer)).await? {
                Some(b) => Ok(Some(String::from_utf8(b).map_err(|_| internal("corrupt issuer index"))?)),
                None => Ok(None),
            }
        }
    }
}

impl<T: StateRead + ?Sized> StablecoinRead for T {}

/// Writes of stablecoin state.
pub trait StablecoinWrite: StateWrite + StablecoinRead {
    /// Stores a new denom record and its issuer index entry.
    fn put_denom_record(&mut self, gas: &GasMeter, issuer: &Address, rec: &DenomRecord) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::denom(&rec.denom), rec)?;
        store::put(self, gas, state_key::issuer(issuer), rec.denom.as_bytes().to_vec())
    }
}

impl<T: StateWrite + ?Sized> StablecoinWrite for T {}

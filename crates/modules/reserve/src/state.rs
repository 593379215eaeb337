//! Typed access to reserve state.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, store, GasMeter, TxError};
use lantau_primitives::Address;

use crate::{state_key, Attestation, Params};

fn u64_of(b: &[u8]) -> Result<u64, TxError> {
    let arr: [u8; 8] = b.try_into().map_err(|_| internal("corrupt u64 record"))?;
    Ok(u64::from_be_bytes(arr))
}

/// Reads of reserve state.
pub trait ReserveRead: StateRead {
    /// The params (no auditors until set).
    fn reserve_params(&self, gas: &GasMeter) -> impl Future<Output = Result<Params, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get_proto(self, gas, state_key::PARAMS).await?.unwrap_or_default()) }
    }

    /// An attestation by id.
    fn attestation(&self, gas: &GasMeter, id: u64) -> impl Future<Output = Result<Option<Attestation>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::attestation(id)).await }
    }

    /// The latest attestation an issuer submitted.
    fn latest_attestation(&self, gas: &GasMeter, issuer: &Address) -> impl Future<Output = Result<Option<Attestation>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::latest(issuer)).await? {
                Some(b) => self.attestation(gas, u64_of(&b)?).await,
                None => Ok(None),
            }
        }
    }
}

impl<T: StateRead + ?Sized> ReserveRead for T {}

/// The issuer's latest ATTESTED attestation.
pub async fn latest_attested<S: StateRead + Sync + ?Sized>(state: &S, gas: &GasMeter, issuer: &Address) -> Result<Option<Attestation>, TxError> {
    match store::get(state, gas, &state_key::latest_attested(issuer)).await? {
        Some(b) => state.attestation(gas, u64_of(&b)?).await,
        None => Ok(None),
    }
}

/// Writes of reserve state.
pub trait ReserveWrite: StateWrite + ReserveRead {
    /// Stores the params.
    fn put_reserve_params(&mut self, gas: &GasMeter, p: &Params) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::PARAMS.to_string(), p)
    }

    /// Takes the next attestation id.
    fn take_attestation_id(&mut self, gas: &GasMeter) -> impl Future<Output = Result<u64, TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let id = match store::get(self, gas, state_key::NEXT_ID).await? {
                Some(b) => u64_of(&b)?,
                None => 1,
            };
            let next = id.checked_add(1).ok_or_else(|| internal("attestation ids exhausted"))?;
            store::put_singleton(self, gas, state_key::NEXT_ID.to_string(), next.to_be_bytes().to_vec())?;
            Ok(id)
        }
    }

    /// Sets the id the next submitted attestation takes (genesis).
    fn set_next_attestation_id(&mut self, gas: &GasMeter, next: u64) -> Result<(), TxError> {
        store::put_singleton(self, gas, state_key::NEXT_ID.to_string(), next.to_be_bytes().to_vec())
    }

    /// Stores an attestation; `latest_of` also makes it its issuer's latest.
    fn put_attestation(&mut self, gas: &GasMeter, a: &Attestation, latest_of: Option<&Address>) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::attestation(a.id), a)?;
        if let Some(issuer) = latest_of {
            store::put(self, gas, state_key::latest(issuer), a.id.to_be_bytes().to_vec())?;
        }
        Ok(())
    }

    /// Makes attestation `id` its issuer's latest ATTESTED one when it is later than the one
    /// recorded (an older attestation co-signed late does not replace a newer one).
    fn record_attested(&mut self, gas: &GasMeter, issuer: &Address, id: u64) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let key = state_key::latest_attested(issuer);
            let newer = match store::get(self, gas, &key).await? {
                Some(b) => u64_of(&b)? < id,
                None => true,
            };
            if newer {
                store::put(self, gas, key, id.to_be_bytes().to_vec())?;
            }
            Ok(())
        }
    }
}

impl<T: StateWrite + ?Sized> ReserveWrite for T {}

//! What the stablecoin module needs from other modules, as narrow traits: the identity
//! registry (issuer records, the recipient's blacklisting) and the token pairs. Balances go
//! through the bank's own keeper traits, the one transfer chokepoint.

use std::future::Future;

use cnidarium::StateWrite;
use lantau_kyc::{KycRead, KycWrite, Level};
use lantau_module_api::{BlockCtx, Event, GasMeter, TxError};
use lantau_primitives::Address;

/// The identity registry, as the stablecoin module uses it.
pub trait IdentityKeeper: StateWrite {
    /// True when `addr` is LEVEL_BLACKLISTED.
    fn is_blacklisted(&self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<bool, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(self.identity(gas, addr).await?.is_some_and(|id| lantau_kyc::state::level_of(&id) == Level::Blacklisted)) }
    }

    /// Gives a whitelisted issuer its LEVEL_LICENSED_ISSUER record.
    fn make_licensed_issuer(
        &mut self,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        issuer: &Address,
        authority: &Address,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move { self.ensure_licensed_issuer(gas, block, tx_hash, issuer, authority, events).await }
    }
}

impl<T: StateWrite + ?Sized> IdentityKeeper for T {}

/// Token pairs, as the stablecoin module uses them.
pub trait TokenPairKeeper: StateWrite {
    /// Registers the ERC-20 pair of a new denom; returns its address.
    fn register_pair(&mut self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<Address, TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move { lantau_erc20::Erc20Write::register_native_pair(self, gas, denom).await }
    }
}

impl<T: StateWrite + ?Sized> TokenPairKeeper for T {}

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

/// The issuer's reserve, as a mint is measured against it: circulation after the mint (the
/// denom's supply, frozen and escrowed coins included) may not exceed the
/// `reserve_market_value` of the issuer's latest ATTESTED attestation, and that attestation may
/// not be older than `reserve.params.max_attestation_age`.
pub async fn check_reserve<S: StateWrite + Sync + Send>(
    state: &S,
    gas: &GasMeter,
    block: &BlockCtx,
    issuer: &Address,
    denom: &str,
    amount: lantau_primitives::Amount,
) -> Result<(), TxError> {
    use crate::error::StablecoinError;
    use lantau_bank::BankRead;
    let Some(att) = lantau_reserve::state::latest_attested(state, gas, issuer).await? else {
        return Err(StablecoinError::NoAttestation { denom: denom.to_string(), issuer: issuer.to_bech32() }.into());
    };
    let attested_at = att.attested_at.unwrap_or_default();
    let now = lantau_module_api::block_timestamp(block);
    let params = lantau_reserve::ReserveRead::reserve_params(state, gas).await?;
    if let Some(max) = lantau_reserve::msg::max_age_secs(&params).map_err(TxError::from)? {
        let age = now.seconds.saturating_sub(attested_at.seconds);
        if u64::try_from(age).unwrap_or(0) > max {
            return Err(StablecoinError::StaleAttestation(format!(
                "mint of {denom} refused: attestation {} was attested {}, more than max_attestation_age {} before the block time {}",
                att.id,
                attested_at.to_rfc3339().unwrap_or_default(),
                params.max_attestation_age,
                now.to_rfc3339().unwrap_or_default()
            ))
            .into());
        }
    }
    let reserve: lantau_primitives::Amount = att
        .reserve_market_value
        .as_ref()
        .filter(|c| c.denom == denom)
        .and_then(|c| c.amount.parse().ok())
        .ok_or_else(|| lantau_module_api::error::internal(format!("attestation {}: reserve_market_value is not an amount of {denom}", att.id)))?;
    let after = state.supply(gas, denom).await?.checked_add(amount).map_err(|_| lantau_module_api::error::internal("supply overflow"))?;
    if after > reserve {
        return Err(StablecoinError::OverReserve(format!(
            "mint of {amount}{denom} refused: circulation would be {after}{denom}, over the reserve_market_value {reserve}{denom} of attestation {} (attested {})",
            att.id,
            attested_at.to_rfc3339().unwrap_or_default()
        ))
        .into());
    }
    Ok(())
}

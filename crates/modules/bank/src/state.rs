//! Typed access to bank state: the module's keeper, and the one transfer chokepoint.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use futures::StreamExt;
use lantau_module_api::{error::internal, store, Event, GasMeter, SdkError, TxError};
use lantau_primitives::{Address, Amount, Coin};

use crate::{event, msg::coins_to_string, state_key, BankError};

fn decode_amount(bytes: &[u8]) -> Result<Amount, TxError> {
    Amount::from_be_slice(bytes).ok_or_else(|| internal("corrupt balance record"))
}

/// Reads of bank state.
pub trait BankRead: StateRead {
    /// The balance of `addr` in `denom` (zero when absent).
    fn balance(
        &self,
        gas: &GasMeter,
        addr: &Address,
        denom: &str,
    ) -> impl Future<Output = Result<Amount, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::balance(addr, denom)).await? {
                Some(b) => decode_amount(&b),
                None => Ok(Amount::ZERO),
            }
        }
    }

    /// Every non-zero balance of `addr`, sorted by denom. Unmetered: queries only.
    fn all_balances(&self, addr: &Address) -> impl Future<Output = Result<Vec<Coin>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            let prefix = state_key::balance_prefix(addr);
            let mut stream = std::pin::pin!(self.prefix_raw(&prefix));
            let mut out = Vec::new();
            while let Some(item) = stream.next().await {
                let (key, value) = item.map_err(internal)?;
                let denom = key.strip_prefix(&prefix).unwrap_or(&key).to_string();
                out.push(Coin::new(denom, decode_amount(&value)?));
            }
            out.sort();
            Ok(out)
        }
    }

    /// The supply of `denom`.
    fn supply(&self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<Amount, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::supply(denom)).await? {
                Some(b) => decode_amount(&b),
                None => Ok(Amount::ZERO),
            }
        }
    }

    /// True when movements of `denom` are paused.
    fn is_send_paused(&self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<bool, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get(self, gas, &state_key::paused(denom)).await?.is_some()) }
    }

    /// True when `addr` is frozen.
    fn is_frozen(&self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<bool, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get(self, gas, &state_key::frozen(addr)).await?.is_some()) }
    }

    /// The send restrictions every movement of a stablecoin obeys: the denom is not paused
    /// and neither party is frozen. Other denoms (the native gas coin) are never restricted,
    /// so fees can always be paid.
    fn check_send_restrictions(
        &self,
        gas: &GasMeter,
        from: Option<&Address>,
        to: Option<&Address>,
        coins: &[Coin],
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            let mut checked_parties = false;
            for c in coins.iter().filter(|c| c.denom.starts_with(lantau_primitives::STABLECOIN_PREFIX)) {
                if self.is_send_paused(gas, &c.denom).await? {
                    return Err(BankError::SendDisabled(c.denom.clone()).into());
                }
                if !checked_parties {
                    checked_parties = true;
                    for a in from.into_iter().chain(to) {
                        if self.is_frozen(gas, a).await? {
                            return Err(BankError::AddressFrozen(a.to_bech32()).into());
                        }
                    }
                }
            }
            Ok(())
        }
    }
}

impl<T: StateRead + ?Sized> BankRead for T {}

/// Writes of bank state.
pub trait BankWrite: StateWrite + BankRead {
    /// Sets a balance; a zero balance deletes the key so state holds no empty rows.
    fn set_balance(&mut self, gas: &GasMeter, addr: &Address, denom: &str, amount: Amount) -> Result<(), TxError> {
        let key = state_key::balance(addr, denom);
        if amount.is_zero() {
            store::delete(self, gas, key)
        } else {
            store::put(self, gas, key, amount.to_be_bytes().to_vec())
        }
    }

    /// The transfer chokepoint: moves `coins` from `from` to `to`, checking every balance with
    /// checked arithmetic, and appends `coin_spent`, `coin_received` and `transfer` events.
    /// On error nothing is written by this call (all balances are checked before any write).
    fn transfer(
        &mut self,
        gas: &GasMeter,
        from: &Address,
        to: &Address,
        coins: &[Coin],
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            // Check everything first.
            self.check_send_restrictions(gas, Some(from), Some(to), coins).await?;
            let mut debits = Vec::with_capacity(coins.len());
            for c in coins {
                let have = self.balance(gas, from, &c.denom).await?;
                let left = have.checked_sub(c.amount).map_err(|_| {
                    SdkError::InsufficientFunds(format!("spendable balance {have}{} is smaller than {c}", c.denom))
                })?;
                debits.push(left);
            }
            let amount = coins_to_string(coins);
            // A recipient that has never held anything gets an account now, so it can sign.
            crate::deps::AccountKeeper::ensure_account_exists(self, gas, to).await?;
            for (c, left) in coins.iter().zip(debits) {
                self.set_balance(gas, from, &c.denom, left)?;
                let have = self.balance(gas, to, &c.denom).await?;
                let new = have.checked_add(c.amount).map_err(|_| internal("balance overflow"))?;
                self.set_balance(gas, to, &c.denom, new)?;
            }
            events.push(event::coin_spent(from, &amount));
            events.push(event::coin_received(to, &amount));
            events.push(event::transfer(from, to, &amount));
            Ok(())
        }
    }

    /// Creates coins in `to`'s balance and raises the supply.
    fn mint(
        &mut self,
        gas: &GasMeter,
        to: &Address,
        coins: &[Coin],
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            self.check_send_restrictions(gas, None, Some(to), coins).await?;
            crate::deps::AccountKeeper::ensure_account_exists(self, gas, to).await?;
            for c in coins {
                let supply = self.supply(gas, &c.denom).await?;
                let supply = supply.checked_add(c.amount).map_err(|_| internal("supply overflow"))?;
                store::put(self, gas, state_key::supply(&c.denom), supply.to_be_bytes().to_vec())?;
                let have = self.balance(gas, to, &c.denom).await?;
                let new = have.checked_add(c.amount).map_err(|_| internal("balance overflow"))?;
                self.set_balance(gas, to, &c.denom, new)?;
            }
            let amount = coins_to_string(coins);
            events.push(event::coinbase(to, &amount));
            events.push(event::coin_received(to, &amount));
            Ok(())
        }
    }

    /// Destroys `coins` from `from`'s balance and lowers the supply; fails with insufficient
    /// funds (nothing written) when the balance is short.
    fn burn(
        &mut self,
        gas: &GasMeter,
        from: &Address,
        coins: &[Coin],
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            self.check_send_restrictions(gas, Some(from), None, coins).await?;
            let mut rows = Vec::with_capacity(coins.len());
            for c in coins {
                let have = self.balance(gas, from, &c.denom).await?;
                let left = have.checked_sub(c.amount).map_err(|_| {
                    SdkError::InsufficientFunds(format!("spendable balance {have}{} is smaller than {c}", c.denom))
                })?;
                let supply = self.supply(gas, &c.denom).await?;
                let supply = supply.checked_sub(c.amount).map_err(|_| internal("supply underflow"))?;
                rows.push((left, supply));
            }
            for (c, (left, supply)) in coins.iter().zip(rows) {
                self.set_balance(gas, from, &c.denom, left)?;
                store::put(self, gas, state_key::supply(&c.denom), supply.to_be_bytes().to_vec())?;
            }
            let amount = coins_to_string(coins);
            events.push(event::coin_spent(from, &amount));
            events.push(event::burn(from, &amount));
            Ok(())
        }
    }

    /// Pauses or resumes every movement of `denom`.
    fn set_send_paused(&mut self, gas: &GasMeter, denom: &str, paused: bool) -> Result<(), TxError> {
        if paused {
            store::put(self, gas, state_key::paused(denom), vec![1])
        } else {
            store::delete(self, gas, state_key::paused(denom))
        }
    }

    /// Freezes or unfreezes `addr` for stablecoins.
    fn set_frozen(&mut self, gas: &GasMeter, addr: &Address, frozen: bool) -> Result<(), TxError> {
        if frozen {
            store::put(self, gas, state_key::frozen(addr), vec![1])
        } else {
            store::delete(self, gas, state_key::frozen(addr))
        }
    }
}

impl<T: StateWrite + ?Sized> BankWrite for T {}

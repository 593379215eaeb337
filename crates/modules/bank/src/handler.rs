//! Bank message handlers: each message becomes one call of the transfer chokepoint, its
//! stablecoin legs carrying the proofs of screening the gate chain issued for them.

use cnidarium::StateWrite;
use lantau_compliance::screening;
use lantau_module_api::{ExecCtx, MsgHandler, TxError};
use lantau_primitives::{Address, Coin};

use crate::msg::{MultiSendMsg, SendMsg};
use crate::state::{BankWrite, Leg, PlainLeg};

/// The legs of `coins` moving `from` → `to`, in coin order: a stablecoin takes the token the
/// gate chain issued for exactly this movement, anything else is a plain leg.
fn legs<S: StateWrite>(state: &S, from: &Address, to: &Address, coins: &[Coin], out: &mut Vec<Leg>) -> Result<(), TxError> {
    for c in coins {
        if c.is_stablecoin() {
            out.push(Leg::Screened(screening::take(state, from, to, c)?));
        } else {
            out.push(Leg::Plain(PlainLeg::new(from, to, c)?));
        }
    }
    Ok(())
}

impl MsgHandler for SendMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        // Validation happened in `Send::from_proto`; nothing further needs no state.
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let mut l = Vec::with_capacity(self.amount.len());
        legs(state, &self.from, &self.to, &self.amount, &mut l)?;
        let mut events = Vec::new();
        state.transfer(ctx.gas, l, &mut events).await?;
        ctx.events.extend(events);
        Ok(())
    }
}

impl MsgHandler for MultiSendMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let mut l = Vec::new();
        for (to, coins) in &self.outputs {
            legs(state, &self.from, to, coins, &mut l)?;
        }
        let mut events = Vec::new();
        state.transfer(ctx.gas, l, &mut events).await?;
        ctx.events.extend(events);
        Ok(())
    }
}

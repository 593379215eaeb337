//! Bank message handlers.

use cnidarium::StateWrite;
use lantau_module_api::{ExecCtx, MsgHandler, TxError};

use crate::msg::{MultiSendMsg, SendMsg};
use crate::state::BankWrite;

impl MsgHandler for SendMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        // Validation happened in `Send::from_proto`; nothing further needs no state.
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let mut events = Vec::new();
        state.transfer(ctx.gas, &self.from, &self.to, &self.amount, &mut events).await?;
        ctx.events.extend(events);
        Ok(())
    }
}

impl MsgHandler for MultiSendMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let mut events = Vec::new();
        for (to, coins) in &self.outputs {
            state.transfer(ctx.gas, &self.from, to, coins, &mut events).await?;
        }
        ctx.events.extend(events);
        Ok(())
    }
}

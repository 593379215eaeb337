//! The `MsgEthereumTx` handler: the transaction runs in revm on the block's overlay.
//!
//! The ante has already checked the chain id, the nonce (the account sequence) and taken the
//! fee for the whole gas limit at the effective price; here the EVM runs, the gas it used is
//! charged to the transaction's meter, and the unused part is refunded. A revert is not a
//! failure of the Cosmos transaction: it is included, pays for its gas, keeps its nonce, and
//! reports the revert (`ethereumTxFailed`, receipt status 0), as Cosmos EVM does.

use cnidarium::StateWrite;
use lantau_bank::BankWrite;
use lantau_module_api::{event, ExecCtx, MsgHandler, TxError};
use lantau_primitives::{Coin, NATIVE_DENOM};

use crate::exec::{self, EvmCall};
use crate::msg::EvmMsg;

impl MsgHandler for EvmMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let tx = self.eth_tx();
        // The EVM never runs on more gas than the transaction carrying it pays for and counts
        // against the block: the envelope's gas limit is the Ethereum transaction's own (the
        // decoder accepts MsgEthereumTx in no other shape; this holds whatever the path).
        if tx.gas_limit > ctx.gas.limit() {
            return Err(crate::EvmError::Envelope(format!(
                "the Ethereum transaction's gas limit {} is over the {} gas its carrying transaction pays for",
                tx.gas_limit,
                ctx.gas.limit()
            ))
            .into());
        }
        // The chain id was checked by the ante, which runs before every execution. Every audit
        // row written while it runs carries its Ethereum hash (`eth_tx_hash`), for the length
        // of this transaction only.
        use lantau_compliance::audit::{EthTxHash, ETH_TX_HASH_OBJECT};
        let eth_hash = tx.hash_hex();
        state.object_put(ETH_TX_HASH_OBJECT, EthTxHash(eth_hash.clone()));
        let out = exec::run(state, ctx.block, &EvmCall::from_tx(tx), ctx.tx_hash).await;
        state.object_delete(ETH_TX_HASH_OBJECT);
        let out = out?;
        // The transaction's gas is the EVM's: what the pipeline metered before (the gates' reads
        // over no facts) is inside the intrinsic gas, so the meter ends at exactly `gas_used`.
        ctx.gas.consume(out.gas_used.saturating_sub(ctx.gas.used()), "evm execution")?;
        // Refund the gas not used, at the price paid (bookkeeping of the fee itself: unmetered).
        let unused = tx.gas_limit.saturating_sub(out.gas_used);
        let refund = u128::from(unused).saturating_mul(tx.effective_gas_price());
        if refund > 0 {
            let mut evs = Vec::new();
            let fee_gas = lantau_module_api::GasMeter::infinite();
            state.transfer_plain(&fee_gas, &lantau_bank::fee_collector(), &tx.from, &[Coin::new(NATIVE_DENOM, refund)], Some(&mut evs)).await?;
            ctx.events.extend(evs);
        }
        // The receipt's record, read back typed by the Ethereum API.
        ctx.response = Some(crate::receipt::response(tx, &out));
        ctx.events.extend(out.events);
        ctx.emit(event("message", [("module", "evm".to_string()), ("sender", tx.from.to_hex()), ("txType", tx.tx_type.to_string())]));
        let mut attrs = vec![
            ("amount", tx.value_u128().unwrap_or(0).to_string()),
            ("ethereumTxHash", eth_hash),
            ("txHash", ctx.tx_hash.to_string()),
            ("txGasUsed", out.gas_used.to_string()),
        ];
        if let Some(to) = tx.to.or(out.contract_address) {
            attrs.push(("recipient", to.to_hex()));
        }
        if !out.success {
            let reason = crate::precompile::revert_reason(&out.output).map(|r| format!(": {r}")).unwrap_or_default();
            attrs.push(("ethereumTxFailed", format!("{}{reason}", out.vm_error)));
        }
        ctx.emit(event("ethereum_tx", attrs));
        for (i, l) in out.logs.iter().enumerate() {
            ctx.emit(event(
                "ethereum_log",
                [
                    ("address", l.address.to_hex()),
                    ("topics", l.topics.iter().map(|t| format!("0x{}", const_hex::encode(t))).collect::<Vec<_>>().join(",")),
                    ("data", format!("0x{}", const_hex::encode(&l.data))),
                    ("index", i.to_string()),
                ],
            ));
        }
        // Each screening the precompile ran, as a trace (the pipeline keeps the last).
        ctx.traces.extend(out.verdicts.into_iter().map(|v| v.into_trace(ctx.tx_hash)));
        Ok(())
    }
}

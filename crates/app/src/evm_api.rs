//! What the Ethereum JSON-RPC asks of the state machine: committed state at a height, and
//! calls (`eth_call`, `eth_estimateGas`) run through the EVM on a throwaway overlay.

use cnidarium::{Snapshot, StateDelta};
use lantau_evm::exec::{EvmCall, Interrupt, Outcome};
use lantau_module_api::{BlockCtx, TxError};

use crate::app::App;
use crate::error::AppError;

impl App {
    /// The committed state after block `height` (`None`: the latest). `Ok(None)` when the
    /// height is in the future or its state is no longer held (cnidarium keeps the recent
    /// versions; version `h` is the state after block `h`, version 0 the genesis state).
    pub async fn snapshot_at_height(&self, height: Option<u64>) -> Result<Option<Snapshot>, AppError> {
        let latest = self.snapshot();
        let Some(h) = height else { return Ok(Some(latest)) };
        let last = Self::height_at(&latest).await?;
        if h > last {
            return Ok(None);
        }
        if h == last {
            return Ok(Some(latest));
        }
        let base = crate::statesync::version_base(&latest).await.map_err(|e| AppError::Corrupt { key: crate::state_key::VERSION_BASE, why: e.to_string() })?;
        Ok(h.checked_sub(base).and_then(|v| self.storage().snapshot(v)))
    }

    /// The sequence the account's next transaction must carry on the admission state
    /// (committed sequence plus the transactions admitted since).
    pub async fn pending_sequence(&self, addr: &lantau_primitives::Address) -> Result<u64, AppError> {
        use lantau_auth::AuthRead as _;
        let check = self.check_state().await;
        let acct = (*check).account(&lantau_module_api::GasMeter::infinite(), addr).await.map_err(|e| AppError::Corrupt { key: "auth/account", why: e.log })?;
        Ok(acct.map_or(0, |a| a.sequence))
    }

    /// Runs `call` against the state after block `height` (the latest when `None`), as the
    /// next block would: nothing is written. The precompile's gates run as they would in a
    /// mined transaction (spec: EVM rules 1 and 5). The caller bounds it: `call.gas_limit`
    /// (the JSON-RPC's gas cap) and `interrupt` (its time limit, its client going away).
    pub async fn eth_call(&self, height: Option<u64>, call: &EvmCall, interrupt: &Interrupt) -> Result<Outcome, TxError> {
        let snap = self
            .snapshot_at_height(height)
            .await
            .map_err(|e| TxError::from(lantau_module_api::SdkError::Internal(e.to_string())))?
            .ok_or_else(|| TxError::from(lantau_evm::EvmError::Invalid(format!("no state for block {}", height.unwrap_or(0)))))?;
        let last = Self::height_at(&snap).await.map_err(|e| TxError::from(lantau_module_api::SdkError::Internal(e.to_string())))?;
        let time = self.block_time_of(&snap).await.map_err(|e| TxError::from(lantau_module_api::SdkError::Internal(e.to_string())))?;
        let block = BlockCtx { height: last.saturating_add(1), time, chain_id: self.chain_id() };
        let mut state = StateDelta::new(snap);
        // A placeholder hash of a real one's length: the records a transfer writes cite the
        // hash, and their gas depends on its length, so the estimate matches the mined cost.
        let placeholder = "0".repeat(64);
        lantau_evm::exec::call(&mut state, &block, call, &placeholder, interrupt).await
    }
}

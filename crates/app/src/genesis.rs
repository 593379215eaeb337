//! The app's genesis state: the `app_state` of the genesis file.

use cnidarium::StateWrite;
use lantau_module_api::{store, BlockCtx, GasMeter, SdkError, TxError};

use crate::state_key;

pub use crate::modules::AppGenesis;

impl AppGenesis {
    /// Parses `app_state` bytes.
    pub fn from_json(bytes: &[u8]) -> Result<Self, TxError> {
        serde_json::from_slice(bytes).map_err(|e| SdkError::InvalidRequest(format!("invalid app_state: {e}")).into())
    }

    /// Whether this is an exported state alone: `exported` with every module section at its
    /// default (`evm_chain_id` may repeat the exported one).
    pub fn is_export_only(&self) -> bool {
        let bare = Self { evm_chain_id: self.evm_chain_id, exported: self.exported.clone(), ..Self::default() };
        self.exported.is_some() && &bare == self
    }

    /// Writes the genesis state of every module, in module order.
    pub async fn apply<S: StateWrite + Send + Sync>(&self, state: &mut S, chain_id: &str, genesis_time: time::OffsetDateTime) -> Result<(), TxError> {
        if self.exported.is_some() {
            return Err(SdkError::InvalidRequest("an exported state is imported, not applied".into()).into());
        }
        let gas = GasMeter::infinite();
        store::put(state, &gas, state_key::CHAIN_ID.to_string(), chain_id.as_bytes().to_vec())?;
        store::put(state, &gas, state_key::EVM_CHAIN_ID.to_string(), self.evm_chain_id.to_be_bytes().to_vec())?;
        // Every module's section, in the module list's order. Accounts are numbered in that
        // order too: auth's explicit accounts, then each genesis balance's holder as the bank
        // credits it.
        let block = BlockCtx { height: 0, time: genesis_time, chain_id: chain_id.to_string() };
        self.apply_modules(state, &block).await?;
        // The state versions the modules were written at.
        crate::upgrades::init_versions(state)?;
        Ok(())
    }
}

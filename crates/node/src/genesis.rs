//! The genesis file, in CometBFT's layout (`genesis_time`, `chain_id`, `initial_height`,
//! `app_state`), so the same file starts the embedded engine and a CometBFT network.

use lantau_app::AppGenesis;
use serde::{Deserialize, Serialize};

/// `<home>/config/genesis.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GenesisFile {
    /// RFC 3339 genesis time.
    pub genesis_time: String,
    /// Cosmos chain id.
    pub chain_id: String,
    /// First block height, as a string.
    #[serde(default = "one")]
    pub initial_height: String,
    /// Empty: the app computes its own.
    #[serde(default)]
    pub app_hash: String,
    /// CometBFT's consensus parameters (its JSON layout: integers as strings); `block.max_gas`
    /// bounds the gas of a block. Absent in homes written before it existed: the defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consensus_params: Option<lantau_app::tendermint::consensus::Params>,
    /// The app's genesis state.
    pub app_state: AppGenesis,
}

fn one() -> String {
    "1".into()
}

impl GenesisFile {
    /// Reads a genesis file.
    pub fn load(path: &std::path::Path) -> anyhow::Result<Self> {
        let bytes = std::fs::read(path)?;
        serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// The consensus parameters: the file's, or the defaults.
    pub fn consensus_params(&self) -> lantau_app::tendermint::consensus::Params {
        self.consensus_params.clone().unwrap_or_else(crate::node::default_consensus_params)
    }

    /// The first block's height.
    pub fn initial_height(&self) -> anyhow::Result<lantau_app::tendermint::block::Height> {
        let h: u64 = self.initial_height.parse().map_err(|e| anyhow::anyhow!("initial_height {}: {e}", self.initial_height))?;
        Ok(h.try_into()?)
    }

    /// The genesis time.
    pub fn time(&self) -> anyhow::Result<lantau_app::tendermint::Time> {
        Ok(self.genesis_time.parse()?)
    }
}

//! `lantaud export` (a stopped node's state as a genesis file) and `lantaud init --genesis`
//! (a home that starts a chain from a genesis file, an exported one included). The state's
//! side is [`lantau_app::export`].

use std::path::Path;

use lantau_app::export::StateExport;
use lantau_app::state_key;
use serde_json::json;

use crate::config::NodeConfig;
use crate::genesis::GenesisFile;
use crate::home::{lock, write_validator_key, Home};

/// The state of a stopped node's home as a genesis file: the home's genesis time, the chain
/// id, `initial_height` the next height, `app_hash` the exported height's, the consensus
/// parameters (`block.max_gas` as the state holds it), and `app_state` the EVM chain id and
/// the exported state. `height`: refused unless it is the latest height the store holds.
pub async fn export_home(home: &Path, height: Option<u64>) -> anyhow::Result<serde_json::Value> {
    let h = Home(home.to_path_buf());
    anyhow::ensure!(h.is_initialized(), "{} is not a node home (no config/genesis.json)", home.display());
    let _lock = lock(home)?;
    let genesis = GenesisFile::load(&h.genesis())?;
    let export = lantau_app::export::export_store(h.state()).await?;
    if let Some(want) = height {
        anyhow::ensure!(
            want == export.height,
            "this store holds the state of height {} only (earlier states are not kept for export); export without --height, or at {}",
            export.height,
            export.height
        );
    }
    genesis_of(&genesis, export)
}

fn genesis_of(genesis: &GenesisFile, export: StateExport) -> anyhow::Result<serde_json::Value> {
    let text = |key: &str| -> anyhow::Result<Vec<u8>> { export.app_value(key).ok_or_else(|| anyhow::anyhow!("the exported state has no {key}")) };
    let chain_id = String::from_utf8(text(state_key::CHAIN_ID)?)?;
    let evm_chain_id = u64::from_be_bytes(text(state_key::EVM_CHAIN_ID)?.as_slice().try_into()?);
    let mut params = genesis.consensus_params();
    if let Some(g) = export.app_value(state_key::MAX_BLOCK_GAS) {
        params.block.max_gas = i64::from_be_bytes(g.as_slice().try_into()?);
    }
    let next = export.height.checked_add(1).ok_or_else(|| anyhow::anyhow!("height overflows"))?;
    Ok(json!({
        "genesis_time": genesis.genesis_time,
        "chain_id": chain_id,
        "initial_height": next.to_string(),
        "app_hash": export.app_hash,
        "consensus_params": serde_json::to_value(&params)?,
        "app_state": {"evm_chain_id": evm_chain_id.to_string(), "exported": export},
    }))
}

/// Creates a home whose chain starts from `genesis` (a genesis file, for instance one
/// `lantaud export` wrote): the config, a new validator key and a copy of the file. Checked
/// first: it must parse, and an exported state must be alone in `app_state` and start at the
/// height after it. The state is written when the node first starts (InitChain).
pub fn init_home_from_genesis(home: &Path, genesis: &Path, moniker: &str) -> anyhow::Result<GenesisFile> {
    let h = Home(home.to_path_buf());
    anyhow::ensure!(!h.is_initialized(), "{} is already initialized", home.display());
    let bytes = std::fs::read(genesis).map_err(|e| anyhow::anyhow!("{}: {e}", genesis.display()))?;
    let file: GenesisFile = serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", genesis.display()))?;
    file.time()?;
    let initial: u64 = file.initial_height.parse().map_err(|e| anyhow::anyhow!("initial_height {}: {e}", file.initial_height))?;
    if let Some(export) = &file.app_state.exported {
        anyhow::ensure!(file.app_state.is_export_only(), "{}: an exported state is alone in app_state (every module's section empty)", genesis.display());
        anyhow::ensure!(
            export.height.checked_add(1) == Some(initial),
            "{}: the state of height {} starts a chain at initial_height {}, not {initial}",
            genesis.display(),
            export.height,
            export.height.saturating_add(1)
        );
    }
    std::fs::create_dir_all(home.join("config"))?;
    std::fs::create_dir_all(home.join("data"))?;
    NodeConfig { moniker: moniker.to_string(), ..NodeConfig::default() }.save(&h.config())?;
    write_validator_key(&h.validator_key())?;
    std::fs::write(h.genesis(), &bytes)?;
    Ok(file)
}

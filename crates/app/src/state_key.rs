//! Keys the app itself keeps (not owned by any module). Treated as a public API.

/// `app/chain_id` → UTF-8 Cosmos chain id, fixed at genesis.
pub const CHAIN_ID: &str = "app/chain_id";
/// `app/evm_chain_id` → u64 big-endian, fixed at genesis.
pub const EVM_CHAIN_ID: &str = "app/evm_chain_id";
/// `app/height` → u64 big-endian: the height of the last executed block.
pub const HEIGHT: &str = "app/height";
/// `app/block_time` → i128 big-endian unix nanoseconds of the last executed block.
pub const BLOCK_TIME: &str = lantau_module_api::store::BLOCK_TIME_KEY;
/// `app/genesis_time` → i128 big-endian unix nanoseconds of genesis.
pub const GENESIS_TIME: &str = lantau_module_api::store::GENESIS_TIME_KEY;
/// `app/max_block_gas` → i64 big-endian: the consensus parameter `block.max_gas` InitChain
/// gave (-1: no limit).
pub const MAX_BLOCK_GAS: &str = "app/max_block_gas";
/// Non-verifiable `app/version_base` → u64 big-endian: the height whose state is version 0 of
/// the store (absent: 0). Set when the state was restored from a state-sync snapshot of
/// height `h`: version `v` then holds the state after block `h + v`. Node-local.
pub const VERSION_BASE: &str = "app/version_base";

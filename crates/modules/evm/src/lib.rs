//! The evm module: Ethereum transactions executed with revm on the chain's own store, and the
//! stablecoins' extended ERC-20 precompile.
//!
//! What it owns: contract code and storage (`state_key.rs`). What it reads from other modules:
//! an address's nonce is its auth sequence, its native balance its bank `alantau` balance (wei
//! = base unit), the token pairs (erc20) locate the precompiles.
//!
//! Invariants:
//! - an Ethereum transaction moves a stablecoin only through the precompile, which runs the one
//!   gate chain and the bank's one chokepoint with the proof of screening it produced;
//! - a revert or out-of-gas undoes every Cosmos-side write of the reverted frame (balances,
//!   audit rows, flags, anchors, windows), including when a caller catches the revert;
//! - revm and alloy types never leave this crate.
//!
//! Layout: `msg.rs` (`MsgEthereumTx` and its envelope), `handler.rs`, `tx.rs` (decoding, sender
//! recovery), `exec.rs` (revm on the store, the frame-aligned Cosmos overlay), `precompile.rs`
//! (the typed call enum, generated from `abi/IStablecoin.sol`), `receipt.rs` (the typed record
//! of an executed transaction, its message response), `state_key.rs`,
//! `state.rs`, `error.rs` (codespace `evm`). No `genesis.rs`: the module has no genesis section
//! (the EVM chain id is the genesis file's top-level `evm_chain_id`). No `query.rs`: its reads
//! (`eth_call`, estimation, code and storage) are served by the app's Ethereum API over
//! [`exec::call`] and [`EvmRead`]. No `event.rs`: the handler builds the Cosmos EVM events
//! (`ethereum_tx`, `ethereum_log`, `message`) where the execution's outcome is. No `deps.rs`: it
//! uses the auth, bank, erc20, stablecoin and compliance traits directly inside `exec.rs` and
//! `precompile.rs`. `tests/` (handler unit tests on a temporary store, the fee prepaid as the
//! app's ante does); the precompile and the whole path are exercised through the app
//! (`crates/app/tests/it/evm.rs`) and the node's EVM tests.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod error;
pub mod exec;
pub mod handler;
pub mod msg;
pub mod precompile;
pub mod receipt;
pub mod state;
pub mod state_key;
pub mod trace;
pub mod tx;

pub use error::EvmError;
pub use msg::{EvmMsg, EXTENSION_OPTIONS_ETHEREUM_TX, MSG_ETHEREUM_TX};
pub use state::{EvmRead, EvmWrite};
pub use tx::EthTx;

/// The module name.
pub const MODULE_NAME: &str = "evm";

/// The evm module in the app's module list: `MsgEthereumTx`. The EVM chain id is the genesis
/// file's top-level `evm_chain_id`; the module's own section says whether the chain runs
/// impersonated senders (dev chains only).
#[derive(Debug, Clone, Copy)]
pub struct Evm;

/// The evm module's genesis section.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct EvmGenesis {
    /// A dev chain's `anvil_impersonateAccount`: transactions that name their sender instead
    /// of carrying a signature (s = 0, r the sender) are run. Never on a network: anyone could
    /// spend anyone's funds.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dev_impersonation: bool,
}

impl lantau_module_api::Module for Evm {
    const NAME: &'static str = MODULE_NAME;
    type Genesis = EvmGenesis;
    type Msg = EvmMsg;

    fn default_genesis() -> Self::Genesis {
        EvmGenesis::default()
    }

    async fn init_genesis<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        genesis: &Self::Genesis,
        _block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        if genesis.dev_impersonation {
            lantau_module_api::store::put(state, &lantau_module_api::GasMeter::infinite(), state_key::DEV_IMPERSONATION.to_string(), b"1".to_vec())?;
        }
        Ok(())
    }

    fn decode(any: &cosmos_sdk_proto::Any) -> Option<Result<Self::Msg, lantau_module_api::TxError>> {
        EvmMsg::from_any(any)
    }
}

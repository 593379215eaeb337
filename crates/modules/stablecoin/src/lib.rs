//! The stablecoin module: HKD stablecoin denoms and their issuers.
//!
//! Its messages govern the stablecoin denoms (`denom` starting `hkd.`, `display`, `issuer`,
//! `decimals` = 2, one denom per issuer), whose records the bank keeps beside their balances
//! and supply, so that only the bank can attest who issues a denom ([`lantau_bank::Issuer`]).
//! Governance whitelists an issuer and creates its denom in one message (the issuer gets a
//! LEVEL_LICENSED_ISSUER identity when it had none, and the denom gets its ERC-20 token pair);
//! the issuer alone mints, burns, pauses and unpauses; the compliance authority freezes and
//! unfreezes addresses.
//!
//! Pause and freeze are enforced where every balance moves, the bank's transfer chokepoint
//! (`bank/paused/<denom>`, `bank/frozen/<addr>`), so they hold for bank sends, multi-sends,
//! mint, burn and the EVM precompile alike, and they act at execution: a transfer admitted
//! before a pause fails in the block.
//!
//! Invariants: a denom is created once and never removed; its issuer never changes; supply
//! changes only through mint and burn.
//!
//! Layout: `msg.rs` ([`StablecoinMsg`]), `handler.rs`, `query.rs`, `genesis.rs`, `error.rs`
//! (codespace `stablecoin`), `deps.rs` (identities, token pairs, the reserve check), `roles.rs`
//! (the role grants per denom: `stablecoin/role/`), `redemption.rs` (the params and the
//! redemption records: `stablecoin/params`, `stablecoin/redemption/`), `tests/` (handler unit tests on a
//! temporary store). Denom records, paused features and frozen addresses are the bank's
//! (`bank/denom/`, `bank/issuer/`, `bank/paused/`, `bank/frozen/`). No `event.rs`: the module's events are
//! the typed protobuf events of `chain.stablecoin.v1` (`EventDenomCreated`, `EventMinted`,
//! `EventBurned`, `EventPaused`, `EventUnpaused`, `EventFrozen`, `EventUnfrozen`), emitted with
//! `emit_typed` in `handler.rs`; the balance events of mint and burn are the bank's.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod deps;
pub mod error;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod redemption;
pub mod roles;

pub use error::StablecoinError;
pub use lantau_bank::DenomRecord;
pub use msg::StablecoinMsg;

/// The module name.
pub const MODULE_NAME: &str = "stablecoin";

/// The only decimals a stablecoin has.
pub const DECIMALS: u32 = 2;

/// Longest `display`.
pub const MAX_DISPLAY_LEN: usize = 32;

/// The stablecoin module in the app's module list.
#[derive(Debug, Clone, Copy)]
pub struct Stablecoin;

impl lantau_module_api::ModuleMsg for StablecoinMsg {
    fn type_url(&self) -> &'static str {
        StablecoinMsg::type_url(self)
    }
    fn signer(&self) -> lantau_primitives::Address {
        StablecoinMsg::signer(self)
    }
    /// Mint and burn are the issuer's audited exemptions, not transfers between accounts.
    fn facts(&self, _msg_index: usize) -> Vec<lantau_module_api::Fact> {
        Vec::new()
    }
}

impl lantau_module_api::Module for Stablecoin {
    const NAME: &'static str = MODULE_NAME;
    type Genesis = genesis::GenesisState;
    type Msg = StablecoinMsg;

    fn default_genesis() -> Self::Genesis {
        Default::default()
    }

    async fn init_genesis<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        g: &Self::Genesis,
        block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        use lantau_authority::AuthorityRead;
        let governance = state.governance_authority(&lantau_module_api::GasMeter::infinite()).await?;
        genesis::init_genesis(state, g, block, &governance).await
    }

    fn decode(any: &cosmos_sdk_proto::Any) -> Option<Result<Self::Msg, lantau_module_api::TxError>> {
        StablecoinMsg::from_any(any)
    }

    async fn query<S: cnidarium::StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
        query::grpc(state, method, request).await
    }

    /// Version 2 keeps params (`stablecoin/params`: the redemption deadline) and redemptions.
    const STATE_VERSION: u64 = 2;

    async fn migrate<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        from: u64,
        gas: &lantau_module_api::GasMeter,
        _block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        match from {
            // A chain from before redemptions gets the default params (no redemption exists).
            1 => redemption::RedemptionWrite::put_stablecoin_params(state, gas, &redemption::default_params()),
            _ => Err(lantau_module_api::error::internal(format!("the stablecoin module has no migration from state version {from}"))),
        }
    }
}

//! The bank module: balances, supply, stablecoin denoms and their issuers, `MsgSend` and
//! `MsgMultiSend`.
//!
//! It owns the balances of every address (one record per address holding each denom's
//! balance, [`Balances`]), the total supply per denom, the stablecoin denom
//! records (display, decimals, issuer; one denom per issuer) with their pause flag, and the
//! frozen addresses, as the Cosmos SDK's x/bank owns denom metadata and send-enabled flags. The
//! stablecoin module's messages create, mint, burn, pause and freeze through it. Every balance
//! movement in the chain goes through one function, [`state::BankWrite::transfer`] (the transfer
//! chokepoint): bank messages, fee payment, mint, burn, genesis, and later the ERC-20
//! precompile. A rule that must hold for every movement belongs there, not in a message
//! handler. The balance setter is private to this crate.
//!
//! A stablecoin leg ([`state::Leg`]) carries its proof: a `Screened` token that only the
//! compliance gate chain makes, for exactly that (sender, recipient, denom, amount), or an
//! issuance leg that only [`BankWrite::mint`] and [`BankWrite::burn`] make (for the holder of
//! an [`Issuer`] proof, which only the bank makes from its denom record, and after writing the
//! `mint`/`burn` audit row), or a genesis allocation. A module whose handler
//! moves a balance goes through [`BankWrite::transfer`]; for the native coin this compiles:
//!
//! ```no_run
//! use lantau_bank::{BankWrite, Leg, PlainLeg};
//! use lantau_module_api::{GasMeter, TxError};
//! use lantau_primitives::{Address, Coin};
//!
//! async fn pay<S: BankWrite + Send + Sync>(s: &mut S, from: Address, to: Address) -> Result<(), TxError> {
//!     let gas = GasMeter::infinite();
//!     let leg = Leg::Plain(PlainLeg::new(&from, &to, &Coin::new("alantau", 5u128))?);
//!     s.transfer(&gas, vec![leg], &mut Vec::new()).await
//! }
//! ```
//!
//! and the same module moving a stablecoin without the gate chain's proof does not compile,
//! whether it forges the proof:
//!
//! ```compile_fail,E0451
//! use lantau_bank::{BankWrite, Leg};
//! use lantau_compliance::screening::Screened;
//! use lantau_module_api::{GasMeter, TxError};
//! use lantau_primitives::{Address, Coin};
//!
//! async fn pay<S: BankWrite + Send + Sync>(s: &mut S, from: Address, to: Address) -> Result<(), TxError> {
//!     let gas = GasMeter::infinite();
//!     let leg = Leg::Screened(Screened { from, to, coin: Coin::new("hkd.demo", 5u128) });
//!     s.transfer(&gas, vec![leg], &mut Vec::new()).await
//! }
//! ```
//!
//! or makes coins as if the genesis file allocated them (only the bank's genesis can):
//!
//! ```compile_fail,E0624
//! use lantau_bank::{BankWrite, GenesisLeg, Leg};
//! use lantau_module_api::{GasMeter, TxError};
//! use lantau_primitives::{Address, Coin};
//!
//! async fn mint<S: BankWrite + Send + Sync>(s: &mut S, to: Address) -> Result<(), TxError> {
//!     let gas = GasMeter::infinite();
//!     let leg = Leg::Genesis(GenesisLeg::new(&to, &Coin::new("hkd.demo", 5u128)));
//!     s.transfer(&gas, vec![leg], &mut Vec::new()).await
//! }
//! ```
//!
//! or creates coins as an issuer without the bank's proof that it is one:
//!
//! ```compile_fail,E0451
//! use lantau_bank::{BankWrite, Issuer};
//! use lantau_module_api::{BlockCtx, GasMeter, TxError};
//! use lantau_primitives::{Address, Amount};
//!
//! async fn mint<S: BankWrite + Send + Sync>(s: &mut S, block: &BlockCtx, me: Address) -> Result<(), TxError> {
//!     let gas = GasMeter::infinite();
//!     let forged = Issuer { address: me, denom: "hkd.demo".into() };
//!     s.mint(&gas, block, "", &forged, &me, Amount(5), &mut Vec::new()).await
//! }
//! ```
//!
//! or writes the balance itself:
//!
//! ```compile_fail,E0599
//! use lantau_bank::BankWrite;
//! use lantau_module_api::{GasMeter, TxError};
//! use lantau_primitives::{Address, Amount};
//!
//! async fn pay<S: BankWrite + Send + Sync>(s: &mut S, to: Address) -> Result<(), TxError> {
//!     let gas = GasMeter::infinite();
//!     s.set_balance(&gas, &to, "hkd.demo", Amount(5))
//! }
//! ```
//!
//! Invariants: a balance is never negative (checked arithmetic, zero balances are removed, an
//! address that holds nothing has no record); the
//! sum of all balances of a denom equals its supply; a transfer conserves supply; a stablecoin's
//! supply changes only by its issuer's mint and burn (and genesis); a denom record is written
//! once and its issuer never changes.
//!
//! Layout: `msg.rs` (validated messages), `handler.rs`, `state.rs`, `state_key.rs`,
//! `balances.rs` (the balance record), `query.rs`,
//! `genesis.rs`, `event.rs`, `error.rs`, `deps.rs` (what it needs from auth), `tests/` (handler
//! unit tests on a temporary store).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod balances;
pub mod deps;
pub mod error;
pub mod event;
pub mod genesis;
pub mod handler;
pub mod msg;
pub mod query;
pub mod state;
pub mod state_key;

mod features;
pub use features::{Feature, Features};

pub use balances::Balances;
pub use error::BankError;
pub use lantau_proto::chain::stablecoin::v1::Denom as DenomRecord;
pub use msg::{coins_from_proto, coins_to_string, MultiSendMsg, SendMsg};
pub use state::{BankRead, BankWrite, DenomClash, GenesisLeg, IssueLeg, Issuer, IssuerOf, Leg, NewDenom, PlainLeg, RedeemLeg, RedemptionOutcome};

/// The fee collector module account: the first 20 bytes of sha256("fee_collector"), as the
/// Cosmos SDK derives module addresses. Fees are paid to it (and an Ethereum transaction's
/// unused gas refunded from it).
pub fn fee_collector() -> lantau_primitives::Address {
    module_account("fee_collector")
}

/// A module account's address: the first 20 bytes of sha256(name), as the Cosmos SDK derives
/// them (`authtypes.NewModuleAddress`).
pub fn module_account(name: &str) -> lantau_primitives::Address {
    let h = lantau_crypto::sha256(name.as_bytes());
    let mut a = [0u8; 20];
    a.copy_from_slice(h.get(..20).unwrap_or(&[0u8; 20]));
    lantau_primitives::Address(a)
}

/// The escrow of open redemption requests: the stablecoin module's account. Its balance of a
/// denom is the sum of that denom's open requests (it counts in circulation, as the
/// Ordinance's backing covers it); only [`BankWrite::redemption_request`] and
/// [`BankWrite::redemption_closed`] move it (it holds no
/// identity, so the gate chain refuses any transfer to it).
pub fn redemption_escrow() -> lantau_primitives::Address {
    module_account("stablecoin")
}

/// The module name, used in `message.module` events and module-account derivation.
pub const MODULE_NAME: &str = "bank";

/// The bank module in the app's module list.
#[derive(Debug, Clone, Copy)]
pub struct Bank;

pub use lantau_module_api::type_url::{MSG_MULTI_SEND, MSG_SEND};

/// The bank's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BankMsg {
    /// `MsgSend`.
    Send(SendMsg),
    /// `MsgMultiSend` (one input).
    MultiSend(MultiSendMsg),
}

impl lantau_module_api::MsgHandler for BankMsg {
    fn check_stateless(&self) -> Result<(), lantau_module_api::TxError> {
        match self {
            BankMsg::Send(m) => m.check_stateless(),
            BankMsg::MultiSend(m) => m.check_stateless(),
        }
    }

    async fn check_and_execute<S: cnidarium::StateWrite + Send + Sync>(
        &self,
        state: &mut S,
        ctx: &mut lantau_module_api::ExecCtx<'_>,
    ) -> Result<(), lantau_module_api::TxError> {
        match self {
            BankMsg::Send(m) => m.check_and_execute(state, ctx).await,
            BankMsg::MultiSend(m) => m.check_and_execute(state, ctx).await,
        }
    }
}

impl lantau_module_api::ModuleMsg for BankMsg {
    fn type_url(&self) -> &'static str {
        match self {
            BankMsg::Send(_) => MSG_SEND,
            BankMsg::MultiSend(_) => MSG_MULTI_SEND,
        }
    }
    fn signer(&self) -> lantau_primitives::Address {
        match self {
            BankMsg::Send(m) => m.from,
            BankMsg::MultiSend(m) => m.from,
        }
    }
    fn facts(&self, msg_index: usize) -> Vec<lantau_module_api::Fact> {
        match self {
            BankMsg::Send(m) => m.facts(msg_index),
            BankMsg::MultiSend(m) => m.facts(msg_index),
        }
    }
}

impl lantau_module_api::Module for Bank {
    const NAME: &'static str = MODULE_NAME;
    const SPARSE_PREFIXES: &'static [&'static str] = &[state_key::FROZEN_PREFIX];
    type Genesis = genesis::GenesisState;
    type Msg = BankMsg;

    fn default_genesis() -> Self::Genesis {
        Default::default()
    }

    async fn init_genesis<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        g: &Self::Genesis,
        block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        genesis::init_genesis(state, g, block).await
    }

    fn decode(any: &cosmos_sdk_proto::Any) -> Option<Result<Self::Msg, lantau_module_api::TxError>> {
        use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
        use lantau_module_api::decode_any;
        match any.type_url.as_str() {
            MSG_SEND => Some(decode_any::<pb::MsgSend>(any).and_then(|m| SendMsg::from_proto(&m)).map(BankMsg::Send)),
            MSG_MULTI_SEND => Some(decode_any::<pb::MsgMultiSend>(any).and_then(|m| MultiSendMsg::from_proto(&m)).map(BankMsg::MultiSend)),
            _ => None,
        }
    }

    async fn query<S: cnidarium::StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, lantau_module_api::QueryError>> {
        query::grpc(state, method, request).await
    }

    /// Version 2 keeps one record of every balance per address (`bank/balances/<address>`),
    /// where version 1 kept a key per address and denom (`bank/bal/<address>/<denom>`).
    const STATE_VERSION: u64 = 2;

    async fn migrate<S: cnidarium::StateWrite + Send + Sync>(
        state: &mut S,
        from: u64,
        gas: &lantau_module_api::GasMeter,
        _block: &lantau_module_api::BlockCtx,
    ) -> Result<(), lantau_module_api::TxError> {
        match from {
            1 => state::migrate_balances_to_records(state, gas).await,
            _ => Err(lantau_module_api::error::internal(format!("the bank module has no migration from state version {from}"))),
        }
    }
}

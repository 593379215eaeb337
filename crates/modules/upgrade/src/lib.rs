//! The upgrade module: software upgrades scheduled on chain, as the Cosmos SDK's x/upgrade does
//! them, with its messages, queries and semantics.
//!
//! Governance schedules a plan (`MsgSoftwareUpgrade`: a name, a height, free-form info) or
//! cancels it (`MsgCancelUpgrade`). One plan is pending at most; scheduling another replaces
//! it. At the start of the plan's block every node checks the binary it runs
//! (`lantau_app::upgrades`): a binary without a handler of that name stops before executing the
//! block, naming the upgrade; the binary that carries it runs the module migrations inside that
//! block's writes, records the upgrade as applied and goes on; a binary carrying the handler of
//! a plan whose height is still ahead refuses to run. The module also records each module's
//! state version (`ModuleVersions`).
//!
//! Layout: this file ([`Upgrade`], the messages and their handler), `state.rs` (plan, applied
//! upgrades, module versions), `query.rs` (`cosmos.upgrade.v1beta1.Query`), `error.rs`
//! (codespace `upgrade`). The module's errors and events are listed in `docs/modules/upgrade.md`.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::arithmetic_side_effects, clippy::indexing_slicing))]

pub mod error;
pub mod query;
pub mod state;

use cnidarium::StateWrite;
use cosmos_sdk_proto::cosmos::upgrade::v1beta1 as pb;
use cosmos_sdk_proto::Any;
use lantau_authority::AuthorityRead;
use lantau_module_api::{decode_any, event, parse_address, BlockCtx, ExecCtx, Fact, Module, ModuleMsg, MsgHandler, QueryError, TxError};
use lantau_primitives::Address;

pub use error::UpgradeError;
pub use pb::Plan;
pub use state::{UpgradeRead, UpgradeWrite};

/// The module name.
pub const MODULE_NAME: &str = "upgrade";

/// `/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade`.
pub const MSG_SOFTWARE_UPGRADE: &str = "/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade";
/// `/cosmos.upgrade.v1beta1.MsgCancelUpgrade`.
pub const MSG_CANCEL_UPGRADE: &str = "/cosmos.upgrade.v1beta1.MsgCancelUpgrade";

/// The longest plan name (bytes).
pub const MAX_NAME_LEN: usize = 128;
/// The longest plan info (bytes).
pub const MAX_INFO_LEN: usize = 4_096;

/// Every upgrade message.
#[derive(Debug, Clone, PartialEq)]
pub enum UpgradeMsg {
    /// `MsgSoftwareUpgrade`: (authority, plan).
    Schedule(Address, Plan),
    /// `MsgCancelUpgrade`: authority.
    Cancel(Address),
}

/// Checks a plan as the Cosmos SDK's `Plan.ValidateBasic` does: a name, a positive height, no
/// time and no client state (both deprecated).
#[allow(deprecated)]
pub fn validate_plan(p: &Plan) -> Result<(), UpgradeError> {
    if p.name.trim().is_empty() {
        return Err(UpgradeError::InvalidPlan("name cannot be empty".into()));
    }
    if p.name.len() > MAX_NAME_LEN || p.name.chars().any(char::is_control) || p.name.contains('/') {
        return Err(UpgradeError::InvalidPlan(format!("name must be at most {MAX_NAME_LEN} bytes, without control characters or '/'")));
    }
    if p.info.len() > MAX_INFO_LEN {
        return Err(UpgradeError::InvalidPlan(format!("info must be at most {MAX_INFO_LEN} bytes")));
    }
    if p.height <= 0 {
        return Err(UpgradeError::InvalidPlan("height must be greater than 0".into()));
    }
    if p.time.is_some() {
        return Err(UpgradeError::InvalidPlan("time-based upgrades have been deprecated in the SDK".into()));
    }
    if p.upgraded_client_state.is_some() {
        return Err(UpgradeError::InvalidPlan("upgraded_client_state is deprecated: IBC upgrades are not handled here".into()));
    }
    Ok(())
}

impl UpgradeMsg {
    /// Decodes and validates; `None` when the type URL is not this module's.
    pub fn from_any(any: &Any) -> Option<Result<Self, TxError>> {
        Some(match any.type_url.as_str() {
            MSG_SOFTWARE_UPGRADE => decode_any::<pb::MsgSoftwareUpgrade>(any).and_then(|m| {
                let authority = parse_address(&m.authority, "authority")?;
                let plan = m.plan.ok_or_else(|| UpgradeError::InvalidPlan("plan is required".into()))?;
                validate_plan(&plan)?;
                Ok(UpgradeMsg::Schedule(authority, plan))
            }),
            MSG_CANCEL_UPGRADE => decode_any::<pb::MsgCancelUpgrade>(any).and_then(|m| Ok(UpgradeMsg::Cancel(parse_address(&m.authority, "authority")?))),
            _ => return None,
        })
    }

    /// The type URL.
    pub fn type_url(&self) -> &'static str {
        match self {
            UpgradeMsg::Schedule(..) => MSG_SOFTWARE_UPGRADE,
            UpgradeMsg::Cancel(_) => MSG_CANCEL_UPGRADE,
        }
    }

    /// The signer: the governance authority.
    pub fn signer(&self) -> Address {
        match self {
            UpgradeMsg::Schedule(a, _) | UpgradeMsg::Cancel(a) => *a,
        }
    }
}

impl MsgHandler for UpgradeMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let gov = state.governance_authority(ctx.gas).await?;
        if self.signer() != gov {
            return Err(UpgradeError::NotGovernance { expected: gov.to_bech32(), signer: self.signer().to_bech32() }.into());
        }
        match self {
            UpgradeMsg::Schedule(_, plan) => {
                let height = u64::try_from(plan.height).unwrap_or(0);
                if height <= ctx.block.height {
                    return Err(UpgradeError::InvalidPlan(format!(
                        "upgrade cannot be scheduled in the past: height {height}, the current block is {}",
                        ctx.block.height
                    ))
                    .into());
                }
                if let Some(done) = state.applied_height(ctx.gas, &plan.name).await? {
                    return Err(UpgradeError::AlreadyApplied { name: plan.name.clone(), height: done }.into());
                }
                state.put_plan(ctx.gas, plan)?;
                ctx.events.push(event("upgrade_scheduled", [("name", plan.name.clone()), ("height", height.to_string())]));
            }
            UpgradeMsg::Cancel(_) => {
                if let Some(plan) = state.plan(ctx.gas).await? {
                    state.clear_plan(ctx.gas)?;
                    ctx.events.push(event("upgrade_cancelled", [("name", plan.name), ("height", plan.height.to_string())]));
                }
            }
        }
        Ok(())
    }
}

impl ModuleMsg for UpgradeMsg {
    fn type_url(&self) -> &'static str {
        UpgradeMsg::type_url(self)
    }
    fn signer(&self) -> Address {
        UpgradeMsg::signer(self)
    }
    fn facts(&self, _msg_index: usize) -> Vec<Fact> {
        Vec::new()
    }
}

/// The upgrade module in the app's module list.
#[derive(Debug, Clone, Copy)]
pub struct Upgrade;

impl Module for Upgrade {
    const NAME: &'static str = MODULE_NAME;
    type Genesis = lantau_module_api::EmptyGenesis;
    type Msg = UpgradeMsg;

    fn default_genesis() -> Self::Genesis {
        Default::default()
    }

    async fn init_genesis<S: StateWrite + Send + Sync>(_state: &mut S, _g: &Self::Genesis, _block: &BlockCtx) -> Result<(), TxError> {
        Ok(())
    }

    fn decode(any: &Any) -> Option<Result<Self::Msg, TxError>> {
        UpgradeMsg::from_any(any)
    }

    async fn query<S: cnidarium::StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
        query::grpc(state, method, request).await
    }

    /// Version 2 exists only in the test build of the upgrade path (feature `test-v2`).
    #[cfg(feature = "test-v2")]
    const STATE_VERSION: u64 = 2;

    #[cfg(feature = "test-v2")]
    async fn migrate<S: StateWrite + Send + Sync>(state: &mut S, from: u64, gas: &lantau_module_api::GasMeter, block: &BlockCtx) -> Result<(), TxError> {
        match from {
            // Version 2 records the height its migration ran at (a Merkle key: every
            // validator must write the same for the app hashes to agree).
            1 => lantau_module_api::store::put(state, gas, TEST_V2_MIGRATED.to_string(), block.height.to_be_bytes().to_vec()),
            _ => Err(lantau_module_api::error::internal(format!("the upgrade module has no migration from state version {from}"))),
        }
    }
}

/// Written by the test build's migration to version 2 (feature `test-v2`): the height it ran at.
pub const TEST_V2_MIGRATED: &str = "upgrade/test_v2_migrated";

//! Group genesis: groups carried into the chain (e.g. a network whose compliance authority is
//! a 2-of-3 group from its first block).

use cnidarium::StateWrite;
use lantau_module_api::{BlockCtx, GasMeter, SdkError, TxError};

use crate::state::GroupWrite;
use crate::{group_address, state_key};

pub use lantau_proto::chain::group::v1::GenesisState;

fn invalid(msg: String) -> TxError {
    TxError::from(SdkError::InvalidRequest(format!("genesis group: {msg}")))
}

/// Validates and writes the genesis groups: ids strictly ascending from 1, each configuration
/// valid, an address (when given) the one its id derives.
pub async fn init_genesis<S: StateWrite + Send + Sync + ?Sized>(state: &mut S, genesis: &GenesisState, block: &BlockCtx) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    let mut last = 0u64;
    for g in &genesis.groups {
        if g.id <= last {
            return Err(invalid(format!("group {}: ids must be non-zero and strictly ascending", g.id)));
        }
        last = g.id;
        let c = crate::msg::config(&g.members, g.threshold, &g.voting_period, &g.metadata).map_err(|e| invalid(format!("group {}: {}", g.id, e.log)))?;
        let addr = group_address(g.id);
        if !g.address.is_empty() && g.address != addr.to_bech32() {
            return Err(invalid(format!("group {}: address {} is not the one its id derives, {}", g.id, g.address, addr.to_bech32())));
        }
        let info = crate::GroupInfo {
            id: g.id,
            address: addr.to_bech32(),
            members: c.pb_members(),
            threshold: c.threshold,
            voting_period: format!("{}s", c.voting_period_secs),
            metadata: c.metadata.clone(),
            version: g.version.max(1),
            total_weight: c.total_weight(),
            creator: g.creator.clone(),
            created_at: g.created_at.or(Some(lantau_module_api::block_timestamp(block))),
        };
        state.put_group(&gas, &info, &addr, None)?;
    }
    if last > 0 {
        state.set_next_id(&gas, state_key::NEXT_GROUP_ID, last.checked_add(1).ok_or_else(|| invalid("group ids exhausted".into()))?)?;
    }
    Ok(())
}

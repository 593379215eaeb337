//! Stablecoin genesis: denoms (with their token pairs and issuer identities), paused issuers,
//! frozen addresses, role grants. Runs after the KYC and bank genesis.

use cnidarium::StateWrite;
use lantau_bank::{BankRead, BankWrite, DenomClash};
use lantau_module_api::{parse_address, BlockCtx, GasMeter, SdkError, TxError};

use crate::deps::{IdentityKeeper, TokenPairKeeper};
use crate::msg::validate_denom;
use crate::DECIMALS;

pub use lantau_proto::chain::stablecoin::v1::GenesisState;

/// Validates and writes the genesis state. `block` carries the genesis time; `governance`
/// is recorded as the whitelisting authority of issuer identities it creates.
pub async fn init_genesis<S: StateWrite + Send + Sync>(
    state: &mut S,
    genesis: &GenesisState,
    block: &BlockCtx,
    governance: &lantau_primitives::Address,
) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    let bad = |m: String| -> TxError { SdkError::InvalidRequest(format!("genesis stablecoin: {m}")).into() };
    let mut events = Vec::new();
    for d in &genesis.denoms {
        validate_denom(&d.denom).map_err(|e| bad(e.to_string()))?;
        if d.decimals != DECIMALS {
            return Err(bad(format!("{}: decimals must be 2", d.denom)));
        }
        let issuer = parse_address(&d.issuer, "issuer").map_err(|e| bad(e.log))?;
        let new = match state.new_denom(&gas, &d.denom, &issuer).await? {
            Ok(new) => new,
            Err(DenomClash::DenomExists) => return Err(bad(format!("{} listed twice", d.denom))),
            Err(DenomClash::IssuerHasDenom(_)) => return Err(bad(format!("issuer {} has two denoms", d.issuer))),
        };
        state.make_licensed_issuer(&gas, block, "", &issuer, governance, &mut events).await?;
        state.register_pair(&gas, &d.denom).await?;
        state.create_denom(&gas, new, &d.display, d.decimals)?;
    }
    for p in &genesis.paused_issuers {
        let issuer = parse_address(p, "paused_issuers").map_err(|e| bad(e.log))?;
        let denom = state.issuer_denom(&gas, &issuer).await?.ok_or_else(|| bad(format!("paused issuer {p} has no denom")))?;
        state.set_send_paused(&gas, &denom, true)?;
    }
    for g in &genesis.roles {
        let role = crate::roles::Role::from_name(&g.role).ok_or_else(|| bad(format!("unknown role {:?}", g.role)))?;
        let addr = parse_address(&g.address, "roles.address").map_err(|e| bad(e.log))?;
        if state.denom_record(&gas, &g.denom).await?.is_none() {
            return Err(bad(format!("a {} role of {}, which is not a denom", g.role, g.denom)));
        }
        let allowance_ok = match (&g.allowance, role) {
            (Some(c), crate::roles::Role::Minter) => c.denom == g.denom && c.amount.parse::<u128>().is_ok(),
            (None, crate::roles::Role::Minter) => false,
            (a, _) => a.is_none(),
        };
        if !allowance_ok {
            return Err(bad(format!("{} of {}: a minter has an allowance in its denom, other roles none", g.role, g.address)));
        }
        let grant = lantau_proto::chain::stablecoin::v1::RoleGrant {
            denom: g.denom.clone(),
            role: role.name().to_string(),
            address: addr.to_bech32(),
            allowance: g.allowance.clone(),
            granted_at: Some(lantau_module_api::block_timestamp(block)),
        };
        crate::roles::RoleWrite::put_role(state, &gas, role, &addr, &grant)?;
    }
    let params = genesis.params.clone().unwrap_or_else(crate::redemption::default_params);
    crate::redemption::deadline_secs(&params).map_err(|e| bad(e.to_string()))?;
    crate::redemption::RedemptionWrite::put_stablecoin_params(state, &gas, &params)?;
    for f in &genesis.frozen_addresses {
        let a = parse_address(f, "frozen_addresses").map_err(|e| bad(e.log))?;
        state.set_frozen(&gas, &a, true)?;
    }
    Ok(())
}

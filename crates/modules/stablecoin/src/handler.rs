//! Stablecoin message handlers: authority and state checks, then writes.

use cnidarium::StateWrite;
use lantau_authority::AuthorityRead;
use lantau_bank::{BankRead, BankWrite, DenomClash, Issuer, IssuerOf};
use lantau_compliance::audit::{action_entry, AuditWrite};
use lantau_module_api::{pb_coin, ExecCtx, MsgHandler, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::stablecoin::v1 as pb;

use crate::deps::{IdentityKeeper, TokenPairKeeper};
use crate::error::StablecoinError;
use crate::msg::{Pause, StablecoinMsg};
use crate::DECIMALS;
use lantau_bank::Feature;

/// The bank's proof that `signer` issues `denom`.
async fn issued_by<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, denom: &str, signer: &Address) -> Result<Issuer, TxError> {
    match state.issuer_of(ctx.gas, denom, signer).await? {
        IssuerOf::Issuer(issuer) => Ok(issuer),
        IssuerOf::UnknownDenom => Err(StablecoinError::UnknownDenom(denom.to_string()).into()),
        IssuerOf::Other(issuer) => Err(StablecoinError::NotIssuer { signer: signer.to_bech32(), denom: denom.to_string(), issuer }.into()),
    }
}

/// The denom the signer issues.
async fn own_denom<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, issuer: &Address) -> Result<String, TxError> {
    state.issuer_denom(ctx.gas, issuer).await?.ok_or_else(|| StablecoinError::NotAnIssuer(issuer.to_bech32()).into())
}

/// The denom a pause names (the signer's own when it names none) and its issuer, when the
/// signer may pause it: the denom's issuer.
async fn pause_target<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, p: &Pause) -> Result<(String, Address), TxError> {
    let denom = match &p.denom {
        Some(d) => d.clone(),
        None => own_denom(state, ctx, &p.authority).await?,
    };
    let issuer = issued_by(state, ctx, &denom, &p.authority).await?;
    Ok((denom, *issuer.address()))
}

async fn ensure_compliance<S: StateWrite + Send + Sync>(state: &S, ctx: &ExecCtx<'_>, signer: &Address) -> Result<(), TxError> {
    let expected = state.compliance_authority(ctx.gas).await?;
    if *signer != expected {
        return Err(StablecoinError::NotComplianceAuthority { expected: expected.to_bech32(), signer: signer.to_bech32() }.into());
    }
    Ok(())
}

impl MsgHandler for StablecoinMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        match self {
            StablecoinMsg::CreateDenom(m) => {
                let gov = state.governance_authority(ctx.gas).await?;
                if m.authority != gov {
                    return Err(StablecoinError::NotGovernance { expected: gov.to_bech32(), signer: m.authority.to_bech32() }.into());
                }
                let denom = m.denom.as_str();
                let new = match state.new_denom(ctx.gas, denom, &m.issuer).await? {
                    Ok(new) => new,
                    Err(DenomClash::DenomExists) => return Err(StablecoinError::DenomExists(denom.to_string()).into()),
                    Err(DenomClash::IssuerHasDenom(existing)) => {
                        return Err(StablecoinError::IssuerHasDenom { issuer: m.issuer.to_bech32(), denom: existing }.into())
                    }
                };
                if state.is_blacklisted(ctx.gas, &m.issuer).await? {
                    return Err(StablecoinError::IssuerBlacklisted(m.issuer.to_bech32()).into());
                }
                let mut events = Vec::new();
                state.make_licensed_issuer(ctx.gas, ctx.block, ctx.tx_hash, &m.issuer, &m.authority, &mut events).await?;
                let erc20 = state.register_pair(ctx.gas, denom).await?;
                state.create_denom(ctx.gas, new, &m.display, DECIMALS)?;
                ctx.events.extend(events);
                ctx.emit_typed(&pb::EventDenomCreated { denom: denom.to_string(), issuer: m.issuer.to_bech32(), erc20_address: erc20.to_hex() });
                Ok(())
            }
            StablecoinMsg::Mint(m) => {
                let issuer = issued_by(state, ctx, &m.amount.denom, &m.issuer).await?;
                if state.paused_features(ctx.gas, &m.amount.denom).await?.contains(Feature::Mint) {
                    return Err(StablecoinError::Paused(format!("MINT of {}", m.amount.denom)).into());
                }
                if state.is_blacklisted(ctx.gas, &m.recipient).await? {
                    return Err(StablecoinError::RecipientBlacklisted(m.recipient.to_bech32()).into());
                }
                // The issuer's own mint: outside the gate chain, audited by the bank.
                let mut events = Vec::new();
                state.mint(ctx.gas, ctx.block, ctx.tx_hash, &issuer, &m.recipient, m.amount.amount, &mut events).await?;
                ctx.events.extend(events);
                ctx.emit_typed(&pb::EventMinted { issuer: m.issuer.to_bech32(), recipient: m.recipient.to_bech32(), amount: Some(pb_coin(&m.amount)) });
                Ok(())
            }
            StablecoinMsg::Burn(m) => {
                let issuer = issued_by(state, ctx, &m.amount.denom, &m.issuer).await?;
                if state.paused_features(ctx.gas, &m.amount.denom).await?.contains(Feature::Burn) {
                    return Err(StablecoinError::Paused(format!("BURN of {}", m.amount.denom)).into());
                }
                let mut events = Vec::new();
                state.burn(ctx.gas, ctx.block, ctx.tx_hash, &issuer, m.amount.amount, &mut events).await?;
                ctx.events.extend(events);
                ctx.emit_typed(&pb::EventBurned { issuer: m.issuer.to_bech32(), amount: Some(pb_coin(&m.amount)) });
                Ok(())
            }
            StablecoinMsg::Pause(p) | StablecoinMsg::Unpause(p) => {
                let pause = matches!(self, StablecoinMsg::Pause(_));
                let (denom, issuer) = pause_target(state, ctx, p).await?;
                let before = state.paused_features(ctx.gas, &denom).await?;
                let after = if pause { before.with(p.features) } else { before.without(p.features) };
                if after == before {
                    return Err(if pause { StablecoinError::AlreadyPaused(denom) } else { StablecoinError::NotPaused(denom) }.into());
                }
                state.set_paused_features(ctx.gas, &denom, after)?;
                let asked = p.features.names().join(",");
                let meta = [("denom", denom.clone()), ("features", asked), ("paused_features", after.names().join(","))];
                state.append_audit(ctx.gas, ctx.block, action_entry(if pause { "pause" } else { "unpause" }, &p.authority, ctx.tx_hash, &meta)).await?;
                let (issuer, authority, features, paused_features) = (issuer.to_bech32(), p.authority.to_bech32(), p.features.names(), after.names());
                if pause {
                    ctx.emit_typed(&pb::EventPaused { issuer, denom, authority, features, paused_features });
                } else {
                    ctx.emit_typed(&pb::EventUnpaused { issuer, denom, authority, features, paused_features });
                }
                Ok(())
            }
            StablecoinMsg::Freeze(authority, addr) => {
                ensure_compliance(state, ctx, authority).await?;
                if state.is_frozen(ctx.gas, addr).await? {
                    return Err(StablecoinError::AlreadyFrozen(addr.to_bech32()).into());
                }
                state.set_frozen(ctx.gas, addr, true)?;
                state.append_audit(ctx.gas, ctx.block, action_entry("freeze", addr, ctx.tx_hash, &[("authority", authority.to_bech32())])).await?;
                ctx.emit_typed(&pb::EventFrozen { address: addr.to_bech32(), authority: authority.to_bech32() });
                Ok(())
            }
            StablecoinMsg::Unfreeze(authority, addr) => {
                ensure_compliance(state, ctx, authority).await?;
                if !state.is_frozen(ctx.gas, addr).await? {
                    return Err(StablecoinError::NotFrozen(addr.to_bech32()).into());
                }
                state.set_frozen(ctx.gas, addr, false)?;
                state.append_audit(ctx.gas, ctx.block, action_entry("unfreeze", addr, ctx.tx_hash, &[("authority", authority.to_bech32())])).await?;
                ctx.emit_typed(&pb::EventUnfrozen { address: addr.to_bech32(), authority: authority.to_bech32() });
                Ok(())
            }
        }
    }
}

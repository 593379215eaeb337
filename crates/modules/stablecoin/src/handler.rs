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
use crate::msg::StablecoinMsg;
use crate::DECIMALS;

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
                if state.is_send_paused(ctx.gas, &m.amount.denom).await? {
                    return Err(StablecoinError::Paused(m.amount.denom.clone()).into());
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
                if state.is_send_paused(ctx.gas, &m.amount.denom).await? {
                    return Err(StablecoinError::Paused(m.amount.denom.clone()).into());
                }
                let mut events = Vec::new();
                state.burn(ctx.gas, ctx.block, ctx.tx_hash, &issuer, m.amount.amount, &mut events).await?;
                ctx.events.extend(events);
                ctx.emit_typed(&pb::EventBurned { issuer: m.issuer.to_bech32(), amount: Some(pb_coin(&m.amount)) });
                Ok(())
            }
            StablecoinMsg::Pause(issuer) => {
                let denom = own_denom(state, ctx, issuer).await?;
                if state.is_send_paused(ctx.gas, &denom).await? {
                    return Err(StablecoinError::AlreadyPaused(denom).into());
                }
                state.set_send_paused(ctx.gas, &denom, true)?;
                state.append_audit(ctx.gas, ctx.block, action_entry("pause", issuer, ctx.tx_hash, &[("denom", denom.clone())])).await?;
                ctx.emit_typed(&pb::EventPaused { issuer: issuer.to_bech32(), denom });
                Ok(())
            }
            StablecoinMsg::Unpause(issuer) => {
                let denom = own_denom(state, ctx, issuer).await?;
                if !state.is_send_paused(ctx.gas, &denom).await? {
                    return Err(StablecoinError::NotPaused(denom).into());
                }
                state.set_send_paused(ctx.gas, &denom, false)?;
                state.append_audit(ctx.gas, ctx.block, action_entry("unpause", issuer, ctx.tx_hash, &[("denom", denom.clone())])).await?;
                ctx.emit_typed(&pb::EventUnpaused { issuer: issuer.to_bech32(), denom });
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

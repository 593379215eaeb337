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
use crate::msg::{CloseRedemption, Pause, RequestRedemption, StablecoinMsg};
use crate::redemption::{RedemptionRead, RedemptionWrite};
use crate::roles::{Role, RoleRead, RoleWrite};
use crate::DECIMALS;
use lantau_bank::{Feature, RedemptionOutcome};
use lantau_primitives::Amount;

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
    match state.issuer_of(ctx.gas, &denom, &p.authority).await? {
        IssuerOf::Issuer(issuer) => Ok((denom, *issuer.address())),
        IssuerOf::UnknownDenom => Err(StablecoinError::UnknownDenom(denom).into()),
        // A pauser of the denom pauses it as its issuer would.
        IssuerOf::Other(issuer) if state.role_grant(ctx.gas, &denom, Role::Pauser, &p.authority).await?.is_some() => {
            Ok((denom, Address::from_bech32(&issuer).map_err(|e| lantau_module_api::error::internal(format!("the issuer of a denom: {e}")))?))
        }
        IssuerOf::Other(issuer) => Err(StablecoinError::NotIssuer { signer: p.authority.to_bech32(), denom, issuer }.into()),
    }
}

/// The denom's issuer proof when `signer` holds `role` of `denom` (the issuer holds every
/// role itself): the one check of who may act for the issuer.
async fn acting_for_issuer<S: StateWrite + Send + Sync>(
    state: &S,
    gas: &lantau_module_api::GasMeter,
    denom: &str,
    signer: &Address,
    role: Role,
) -> Result<Issuer, TxError> {
    match state.issuer_of(gas, denom, signer).await? {
        IssuerOf::Issuer(issuer) => Ok(issuer),
        IssuerOf::UnknownDenom => Err(StablecoinError::UnknownDenom(denom.to_string()).into()),
        IssuerOf::Other(issuer) => {
            if state.role_grant(gas, denom, role, signer).await?.is_none() {
                return Err(StablecoinError::NotIssuer { signer: signer.to_bech32(), denom: denom.to_string(), issuer }.into());
            }
            let issuer = Address::from_bech32(&issuer).map_err(|e| lantau_module_api::error::internal(format!("the issuer of {denom}: {e}")))?;
            match state.issuer_of(gas, denom, &issuer).await? {
                IssuerOf::Issuer(proof) => Ok(proof),
                _ => Err(lantau_module_api::error::internal(format!("the denom record of {denom} does not name its issuer"))),
            }
        }
    }
}

/// Opens a redemption: the holder passes the KYC gate's rules, REDEEM is not paused, the
/// amount moves into the escrow through the chokepoint (with its audit row), and the record
/// is written with its deadline. The one implementation for `MsgRequestRedemption` and the
/// precompile's `redeem(uint256,bytes)`; events (the bank's and `EventRedemptionRequested`)
/// go to `events`.
pub async fn request_redemption<S: StateWrite + Send + Sync>(
    state: &mut S,
    gas: &lantau_module_api::GasMeter,
    block: &lantau_module_api::BlockCtx,
    tx_hash: &str,
    m: &RequestRedemption,
    events: &mut Vec<lantau_module_api::Event>,
) -> Result<u64, TxError> {
    let denom = m.amount.denom.as_str();
    if state.denom_record(gas, denom).await?.is_none() {
        return Err(StablecoinError::UnknownDenom(denom.to_string()).into());
    }
    let now = lantau_module_api::block_timestamp(block);
    if let Some(why) = lantau_compliance::gates::kyc_refusal(state, gas, &m.holder, "holder", &now).await? {
        return Err(StablecoinError::RedemptionHolder(why).into());
    }
    if state.paused_features(gas, denom).await?.contains(Feature::Redeem) {
        return Err(StablecoinError::Paused(format!("REDEEM of {denom}")).into());
    }
    let params = state.stablecoin_params(gas).await?;
    let secs = crate::redemption::deadline_secs(&params)?;
    let deadline = block.time.checked_add(time::Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX))).unwrap_or(block.time);
    let deadline = lantau_proto::timestamp(deadline);
    let id = state.next_redemption_id(gas).await?;
    let deadline_text = deadline.to_rfc3339().unwrap_or_default();
    state.redemption_request(gas, block, tx_hash, &m.holder, &m.amount, id, &m.payout_ref, &deadline_text, events).await?;
    let amount = pb_coin(&m.amount);
    let record = pb::Redemption {
        id,
        holder: m.holder.to_bech32(),
        amount: Some(amount.clone()),
        payout_ref: m.payout_ref.clone(),
        requested_at: Some(now),
        deadline: Some(deadline),
        status: pb::RedemptionStatus::Requested as i32,
        request_tx_hash: tx_hash.to_string(),
        ..Default::default()
    };
    state.put_redemption(gas, &record)?;
    events.push(lantau_module_api::event::typed(&pb::EventRedemptionRequested {
        id,
        holder: record.holder.clone(),
        amount: Some(amount),
        payout_ref: m.payout_ref.clone(),
        deadline: Some(deadline),
    }));
    Ok(id)
}

/// Settles (`paid`) or rejects an open redemption, signed by the issuer or a redeemer of its
/// denom.
async fn close_redemption<S: StateWrite + Send + Sync>(state: &mut S, ctx: &mut ExecCtx<'_>, m: &CloseRedemption, paid: bool) -> Result<(), TxError> {
    let Some(mut r) = state.redemption(ctx.gas, m.id).await? else {
        return Err(StablecoinError::RedemptionNotFound(m.id).into());
    };
    let stored = pb::RedemptionStatus::try_from(r.status).unwrap_or(pb::RedemptionStatus::Unspecified);
    if stored != pb::RedemptionStatus::Requested {
        return Err(StablecoinError::RedemptionClosed { id: m.id, status: stored.as_str_name() }.into());
    }
    let coin = r.amount.clone().unwrap_or_default();
    let amount: Amount = coin.amount.parse().map_err(|_| lantau_module_api::error::internal(format!("redemption {}: amount {:?}", m.id, coin.amount)))?;
    let holder = Address::from_bech32(&r.holder).map_err(|e| lantau_module_api::error::internal(format!("redemption {}: holder: {e}", m.id)))?;
    let issuer = acting_for_issuer(state, ctx.gas, &coin.denom, &m.redeemer, Role::Redeemer).await?;
    let mut events = Vec::new();
    let outcome = if paid { RedemptionOutcome::Paid { payment_ref: &m.text } } else { RedemptionOutcome::Rejected { reason: &m.text } };
    state.redemption_closed(ctx.gas, ctx.block, ctx.tx_hash, &issuer, &m.redeemer, &holder, amount, m.id, outcome, &mut events).await?;
    if paid {
        r.status = pb::RedemptionStatus::Paid as i32;
        r.payment_ref = m.text.clone();
    } else {
        r.status = pb::RedemptionStatus::Rejected as i32;
        r.reason = m.text.clone();
    }
    r.redeemer = m.redeemer.to_bech32();
    r.closed_at = Some(lantau_module_api::block_timestamp(ctx.block));
    state.put_redemption(ctx.gas, &r)?;
    ctx.events.extend(events);
    if paid {
        ctx.emit_typed(&pb::EventRedemptionPaid { id: m.id, holder: r.holder, amount: Some(coin), redeemer: r.redeemer, payment_ref: m.text.clone() });
    } else {
        ctx.emit_typed(&pb::EventRedemptionRejected { id: m.id, holder: r.holder, amount: Some(coin), redeemer: r.redeemer, reason: m.text.clone() });
    }
    Ok(())
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
                let denom = m.amount.denom.as_str();
                // The issuer mints; so does a minter of the denom, within its allowance.
                let (issuer, minter) = match state.issuer_of(ctx.gas, denom, &m.issuer).await? {
                    IssuerOf::Issuer(issuer) => (issuer, None),
                    IssuerOf::UnknownDenom => return Err(StablecoinError::UnknownDenom(denom.to_string()).into()),
                    IssuerOf::Other(issuer) => {
                        let Some(grant) = state.role_grant(ctx.gas, denom, Role::Minter, &m.issuer).await? else {
                            return Err(StablecoinError::NotIssuer { signer: m.issuer.to_bech32(), denom: denom.to_string(), issuer }.into());
                        };
                        let left: Amount = grant.allowance.as_ref().and_then(|c| c.amount.parse().ok()).unwrap_or(Amount::ZERO);
                        let Ok(rest) = left.checked_sub(m.amount.amount) else {
                            return Err(StablecoinError::OverAllowance {
                                minter: m.issuer.to_bech32(),
                                denom: denom.to_string(),
                                amount: m.amount.amount.to_string(),
                                allowance: left.to_string(),
                            }
                            .into());
                        };
                        let issuer = Address::from_bech32(&issuer).map_err(|e| lantau_module_api::error::internal(format!("the issuer of {denom}: {e}")))?;
                        (issued_by(state, ctx, denom, &issuer).await?, Some((grant, rest)))
                    }
                };
                if state.paused_features(ctx.gas, denom).await?.contains(Feature::Mint) {
                    return Err(StablecoinError::Paused(format!("MINT of {denom}")).into());
                }
                if state.is_blacklisted(ctx.gas, &m.recipient).await? {
                    return Err(StablecoinError::RecipientBlacklisted(m.recipient.to_bech32()).into());
                }
                // Within the reserve the latest attestation shows, whoever mints.
                crate::deps::check_reserve(state, ctx.gas, ctx.block, issuer.address(), denom, m.amount.amount).await?;
                // The issuer's own mint (or its minter's): outside the gate chain, audited by
                // the bank.
                let mut events = Vec::new();
                match minter {
                    None => state.mint(ctx.gas, ctx.block, ctx.tx_hash, &issuer, &m.recipient, m.amount.amount, &mut events).await?,
                    Some((mut grant, rest)) => {
                        state.mint_by(ctx.gas, ctx.block, ctx.tx_hash, &issuer, &m.issuer, &m.recipient, m.amount.amount, &mut events).await?;
                        grant.allowance = Some(pb_coin(&lantau_primitives::Coin::new(denom, rest)));
                        state.put_role(ctx.gas, Role::Minter, &m.issuer, &grant)?;
                    }
                }
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
            StablecoinMsg::SetRole(r) | StablecoinMsg::RevokeRole(r) => {
                let set = matches!(self, StablecoinMsg::SetRole(_));
                issued_by(state, ctx, &r.denom, &r.issuer).await?;
                let existing = state.role_grant(ctx.gas, &r.denom, r.role, &r.address).await?;
                let role = r.role.name().to_string();
                let mut meta = vec![("denom", r.denom.clone()), ("role", role.clone()), ("issuer", r.issuer.to_bech32())];
                if set {
                    let allowance = (r.role == Role::Minter).then(|| pb_coin(&lantau_primitives::Coin::new(r.denom.as_str(), r.allowance)));
                    let grant = pb::RoleGrant {
                        denom: r.denom.clone(),
                        role: role.clone(),
                        address: r.address.to_bech32(),
                        allowance: allowance.clone(),
                        granted_at: Some(lantau_module_api::block_timestamp(ctx.block)),
                    };
                    state.put_role(ctx.gas, r.role, &r.address, &grant)?;
                    meta.push(("action", if existing.is_some() { "updated" } else { "granted" }.to_string()));
                    if let Some(a) = &allowance {
                        meta.push(("allowance", format!("{}{}", a.amount, a.denom)));
                    }
                    ctx.emit_typed(&pb::EventRoleSet { denom: r.denom.clone(), role, address: r.address.to_bech32(), allowance, issuer: r.issuer.to_bech32() });
                } else {
                    if existing.is_none() {
                        return Err(StablecoinError::RoleNotFound { denom: r.denom.clone(), role: r.role.name(), address: r.address.to_bech32() }.into());
                    }
                    state.delete_role(ctx.gas, &r.denom, r.role, &r.address)?;
                    meta.push(("action", "revoked".to_string()));
                    ctx.emit_typed(&pb::EventRoleRevoked { denom: r.denom.clone(), role, address: r.address.to_bech32(), issuer: r.issuer.to_bech32() });
                }
                state.append_audit(ctx.gas, ctx.block, action_entry("role_update", &r.address, ctx.tx_hash, &meta)).await?;
                Ok(())
            }
            StablecoinMsg::Seize(m) => {
                // The seizer: the denom's issuer, or a seizer of it.
                let issuer = acting_for_issuer(state, ctx.gas, &m.denom, &m.seizer, Role::Seizer).await?;
                // The recipient passes the KYC gate's rules (an identity, not blacklisted, not
                // lapsed), judged by the compliance module.
                let to = m.to.to_bech32();
                let now = lantau_module_api::block_timestamp(ctx.block);
                let why = lantau_compliance::gates::kyc_refusal(state, ctx.gas, &m.to, "recipient", &now).await?;
                if let Some(why) = why {
                    return Err(StablecoinError::SeizeRecipient(why).into());
                }
                let mut events = Vec::new();
                state.seize(ctx.gas, ctx.block, ctx.tx_hash, &issuer, &m.seizer, &m.from, &m.to, m.amount, &m.evidence_ref, &m.memo, &mut events).await?;
                ctx.events.extend(events);
                ctx.emit_typed(&pb::EventSeized {
                    seizer: m.seizer.to_bech32(),
                    denom: m.denom.clone(),
                    from: m.from.to_bech32(),
                    to,
                    amount: Some(pb_coin(&lantau_primitives::Coin::new(m.denom.as_str(), m.amount))),
                    evidence_ref: m.evidence_ref.clone(),
                    memo: m.memo.clone(),
                });
                Ok(())
            }
            StablecoinMsg::RequestRedemption(m) => {
                let mut events = Vec::new();
                request_redemption(state, ctx.gas, ctx.block, ctx.tx_hash, m, &mut events).await?;
                ctx.events.extend(events);
                Ok(())
            }
            StablecoinMsg::SettleRedemption(m) => close_redemption(state, ctx, m, true).await,
            StablecoinMsg::RejectRedemption(m) => close_redemption(state, ctx, m, false).await,
            StablecoinMsg::UpdateParams(authority, params) => {
                let gov = state.governance_authority(ctx.gas).await?;
                if *authority != gov {
                    return Err(StablecoinError::NotGovernance { expected: gov.to_bech32(), signer: authority.to_bech32() }.into());
                }
                state.put_stablecoin_params(ctx.gas, params)?;
                let meta = [("redemption_deadline", params.redemption_deadline.clone())];
                state.append_audit(ctx.gas, ctx.block, action_entry("params_update", authority, ctx.tx_hash, &meta)).await?;
                ctx.emit_typed(&pb::EventParamsUpdated { params: Some(params.clone()), authority: authority.to_bech32() });
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

//! Stablecoin messages, validated, and [`StablecoinMsg`], the module's typed message enum.

use cosmos_sdk_proto::cosmos::base::v1beta1::Coin as PbCoin;
use cosmos_sdk_proto::Any;
use lantau_module_api::decode_any as decode;
use lantau_module_api::{parse_address, TxError};
use lantau_primitives::{Address, Amount, Coin, Denom};
use lantau_proto::chain::stablecoin::v1 as pb;

use crate::error::StablecoinError;
use crate::{DECIMALS, MAX_DISPLAY_LEN};

/// Validates a stablecoin denom: Cosmos denom rules and the `hkd.` prefix.
pub fn validate_denom(d: &str) -> Result<Denom, StablecoinError> {
    match Denom::new(d) {
        Ok(denom) if denom.is_stablecoin() && d.len() > lantau_primitives::STABLECOIN_PREFIX.len() => Ok(denom),
        _ => Err(StablecoinError::InvalidDenom(d.to_string())),
    }
}

/// Validates a stablecoin amount: a known-shaped denom and a positive integer.
pub fn validate_coin(c: Option<&PbCoin>) -> Result<Coin, StablecoinError> {
    let c = c.ok_or_else(|| StablecoinError::InvalidAmount("amount is required".into()))?;
    let denom = validate_denom(&c.denom)?;
    let amount: Amount = c.amount.parse().map_err(|_| StablecoinError::InvalidAmount(format!("{:?} is not a non-negative integer", c.amount)))?;
    if amount.is_zero() {
        return Err(StablecoinError::InvalidAmount("amount must be positive".into()));
    }
    Ok(Coin::new(denom.as_str(), amount))
}

/// `MsgCreateDenom`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateDenom {
    /// Governance.
    pub authority: Address,
    /// The whitelisted issuer.
    pub issuer: Address,
    /// The new denom.
    pub denom: Denom,
    /// Display name.
    pub display: String,
}

/// `MsgMint`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Mint {
    /// The issuer.
    pub issuer: Address,
    /// Who receives.
    pub recipient: Address,
    /// What.
    pub amount: Coin,
}

/// `MsgBurn`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Burn {
    /// The issuer (burns its own coins).
    pub issuer: Address,
    /// What.
    pub amount: Coin,
}

/// `MsgPause` / `MsgUnpause`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Pause {
    /// The signer: the denom's issuer (or a pauser of it).
    pub authority: Address,
    /// The denom; `None`: the signer's own.
    pub denom: Option<String>,
    /// The features (an empty list in the message: all).
    pub features: lantau_bank::Features,
}

impl Pause {
    fn new(authority: &str, denom: &str, features: &[String]) -> Result<Self, TxError> {
        let denom = if denom.is_empty() { None } else { Some(validate_denom(denom)?.as_str().to_string()) };
        let features = lantau_bank::Features::parse(features).map_err(StablecoinError::InvalidFeatures)?;
        Ok(Self { authority: parse_address(authority, "authority")?, denom, features })
    }
}

/// `MsgSetRole` / `MsgRevokeRole`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SetRole {
    /// The signer: the denom's issuer.
    pub issuer: Address,
    /// The denom.
    pub denom: String,
    /// The role.
    pub role: crate::roles::Role,
    /// Who gets it.
    pub address: Address,
    /// A minter's allowance (zero for the other roles, and in a revocation).
    pub allowance: lantau_primitives::Amount,
}

impl SetRole {
    fn new(issuer: &str, denom: &str, role: &str, address: &str, allowance: Option<&PbCoin>, revoke: bool) -> Result<Self, TxError> {
        let denom = validate_denom(denom)?.as_str().to_string();
        let role = crate::roles::Role::from_name(role)
            .ok_or_else(|| StablecoinError::InvalidRole(format!("unknown role {role:?}: one of minter, pauser, seizer, redeemer")))?;
        let allowance = match (role, allowance, revoke) {
            (_, None, true) => lantau_primitives::Amount::ZERO,
            (_, Some(_), true) => return Err(StablecoinError::InvalidRole("a revocation carries no allowance".into()).into()),
            (crate::roles::Role::Minter, Some(c), false) => {
                if c.denom != denom {
                    return Err(StablecoinError::InvalidRole(format!("a minter's allowance is in {denom}, not {:?}", c.denom)).into());
                }
                c.amount.parse().map_err(|_| StablecoinError::InvalidAmount(format!("allowance {:?}", c.amount)))?
            }
            (crate::roles::Role::Minter, None, false) => return Err(StablecoinError::InvalidRole("a minter needs an allowance".into()).into()),
            (_, Some(c), false) if c.amount != "0" && !c.amount.is_empty() => {
                return Err(StablecoinError::InvalidRole(format!("only a minter has an allowance, not a {}", role.name())).into())
            }
            (_, _, false) => lantau_primitives::Amount::ZERO,
        };
        Ok(Self { issuer: parse_address(issuer, "issuer")?, denom, role, address: parse_address(address, "address")?, allowance })
    }
}

/// `MsgSeize`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Seize {
    /// The signer: a seizer of the denom, or its issuer.
    pub seizer: Address,
    /// The denom.
    pub denom: String,
    /// The holder seized from.
    pub from: Address,
    /// The recipient.
    pub to: Address,
    /// How much.
    pub amount: lantau_primitives::Amount,
    /// The court order (required).
    pub evidence_ref: String,
    /// Why (required).
    pub memo: String,
}

/// Longest `evidence_ref` and `memo` of a seizure.
pub const MAX_SEIZE_TEXT: usize = 512;

impl Seize {
    fn new(m: &pb::MsgSeize) -> Result<Self, TxError> {
        let denom = validate_denom(&m.denom)?.as_str().to_string();
        let amount: lantau_primitives::Amount =
            m.amount.parse().map_err(|_| StablecoinError::InvalidAmount(format!("{:?} is not a whole number of base units", m.amount)))?;
        if amount.is_zero() {
            return Err(StablecoinError::InvalidAmount("a seizure moves a positive amount".into()).into());
        }
        for (field, v) in [("evidence_ref", &m.evidence_ref), ("memo", &m.memo)] {
            if v.trim().is_empty() || v.len() > MAX_SEIZE_TEXT {
                return Err(StablecoinError::InvalidSeizure(format!("{field} is required (1 to {MAX_SEIZE_TEXT} bytes)")).into());
            }
        }
        let (from, to) = (parse_address(&m.from, "from")?, parse_address(&m.to, "to")?);
        if from == to {
            return Err(StablecoinError::InvalidSeizure("from and to are the same address".into()).into());
        }
        Ok(Self { seizer: parse_address(&m.seizer, "seizer")?, denom, from, to, amount, evidence_ref: m.evidence_ref.clone(), memo: m.memo.clone() })
    }
}

/// `MsgRequestRedemption`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRedemption {
    /// The signer, whose coins are redeemed.
    pub holder: Address,
    /// What: a positive amount of a stablecoin denom.
    pub amount: Coin,
    /// Where the fiat goes (required).
    pub payout_ref: String,
}

/// A required reference or reason of a redemption message: 1 to 256 bytes, not blank.
fn redemption_text(field: &str, v: &str) -> Result<String, StablecoinError> {
    if v.trim().is_empty() || v.len() > crate::redemption::MAX_REF_LEN {
        return Err(StablecoinError::InvalidRedemption(format!("{field} is required (1 to {} bytes)", crate::redemption::MAX_REF_LEN)));
    }
    Ok(v.to_string())
}

impl RequestRedemption {
    /// Validates the fields of a request (the EVM precompile's `redeem` too).
    pub fn new(holder: Address, denom: &str, amount: &str, payout_ref: &str) -> Result<Self, TxError> {
        let denom = validate_denom(denom)?;
        let amount: Amount = amount.parse().map_err(|_| StablecoinError::InvalidAmount(format!("{amount:?} is not a whole number of base units")))?;
        if amount.is_zero() {
            return Err(StablecoinError::InvalidAmount("a redemption needs a positive amount".into()).into());
        }
        Ok(Self { holder, amount: Coin::new(denom.as_str(), amount), payout_ref: redemption_text("payout_ref", payout_ref)? })
    }
}

/// `MsgSettleRedemption` / `MsgRejectRedemption`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct CloseRedemption {
    /// The signer: the denom's issuer or a redeemer of it.
    pub redeemer: Address,
    /// The redemption.
    pub id: u64,
    /// The payment reference (settle) or the reason (reject).
    pub text: String,
}

/// Every stablecoin message.
#[derive(Debug, Clone, PartialEq)]
pub enum StablecoinMsg {
    /// `MsgCreateDenom`.
    CreateDenom(CreateDenom),
    /// `MsgMint`.
    Mint(Mint),
    /// `MsgBurn`.
    Burn(Burn),
    /// `MsgPause`.
    Pause(Pause),
    /// `MsgUnpause`.
    Unpause(Pause),
    /// `MsgSetRole`.
    SetRole(SetRole),
    /// `MsgRevokeRole`.
    RevokeRole(SetRole),
    /// `MsgSeize`.
    Seize(Seize),
    /// `MsgRequestRedemption`.
    RequestRedemption(RequestRedemption),
    /// `MsgSettleRedemption`.
    SettleRedemption(CloseRedemption),
    /// `MsgRejectRedemption`.
    RejectRedemption(CloseRedemption),
    /// `MsgUpdateParams`: (authority, params).
    UpdateParams(Address, pb::Params),
    /// `MsgFreeze`: (authority, address).
    Freeze(Address, Address),
    /// `MsgUnfreeze`: (authority, address).
    Unfreeze(Address, Address),
}

/// `/chain.stablecoin.v1.MsgCreateDenom`.
pub const MSG_CREATE_DENOM: &str = "/chain.stablecoin.v1.MsgCreateDenom";
/// `/chain.stablecoin.v1.MsgMint`.
pub const MSG_MINT: &str = "/chain.stablecoin.v1.MsgMint";
/// `/chain.stablecoin.v1.MsgBurn`.
pub const MSG_BURN: &str = "/chain.stablecoin.v1.MsgBurn";
/// `/chain.stablecoin.v1.MsgPause`.
pub const MSG_PAUSE: &str = "/chain.stablecoin.v1.MsgPause";
/// `/chain.stablecoin.v1.MsgUnpause`.
pub const MSG_UNPAUSE: &str = "/chain.stablecoin.v1.MsgUnpause";
/// `/chain.stablecoin.v1.MsgSetRole`.
pub const MSG_SET_ROLE: &str = "/chain.stablecoin.v1.MsgSetRole";
/// `/chain.stablecoin.v1.MsgRevokeRole`.
pub const MSG_REVOKE_ROLE: &str = "/chain.stablecoin.v1.MsgRevokeRole";
/// `/chain.stablecoin.v1.MsgSeize`.
pub const MSG_SEIZE: &str = "/chain.stablecoin.v1.MsgSeize";
/// `/chain.stablecoin.v1.MsgRequestRedemption`.
pub const MSG_REQUEST_REDEMPTION: &str = "/chain.stablecoin.v1.MsgRequestRedemption";
/// `/chain.stablecoin.v1.MsgSettleRedemption`.
pub const MSG_SETTLE_REDEMPTION: &str = "/chain.stablecoin.v1.MsgSettleRedemption";
/// `/chain.stablecoin.v1.MsgRejectRedemption`.
pub const MSG_REJECT_REDEMPTION: &str = "/chain.stablecoin.v1.MsgRejectRedemption";
/// `/chain.stablecoin.v1.MsgUpdateParams`.
pub const MSG_UPDATE_PARAMS: &str = "/chain.stablecoin.v1.MsgUpdateParams";
/// `/chain.stablecoin.v1.MsgFreeze`.
pub const MSG_FREEZE: &str = "/chain.stablecoin.v1.MsgFreeze";
/// `/chain.stablecoin.v1.MsgUnfreeze`.
pub const MSG_UNFREEZE: &str = "/chain.stablecoin.v1.MsgUnfreeze";

impl StablecoinMsg {
    /// Decodes and validates; `None` when the type URL is not this module's.
    pub fn from_any(any: &Any) -> Option<Result<Self, TxError>> {
        Some(match any.type_url.as_str() {
            MSG_CREATE_DENOM => decode::<pb::MsgCreateDenom>(any).and_then(|m| {
                let denom = validate_denom(&m.denom)?;
                if m.decimals != DECIMALS {
                    return Err(StablecoinError::InvalidDecimals(m.decimals).into());
                }
                if m.display.is_empty() || m.display.len() > MAX_DISPLAY_LEN {
                    return Err(StablecoinError::InvalidDisplay(m.display).into());
                }
                Ok(StablecoinMsg::CreateDenom(CreateDenom {
                    authority: parse_address(&m.authority, "authority")?,
                    issuer: parse_address(&m.issuer, "issuer")?,
                    denom,
                    display: m.display,
                }))
            }),
            MSG_MINT => decode::<pb::MsgMint>(any).and_then(|m| {
                Ok(StablecoinMsg::Mint(Mint {
                    issuer: parse_address(&m.issuer, "issuer")?,
                    recipient: parse_address(&m.recipient, "recipient")?,
                    amount: validate_coin(m.amount.as_ref())?,
                }))
            }),
            MSG_BURN => decode::<pb::MsgBurn>(any)
                .and_then(|m| Ok(StablecoinMsg::Burn(Burn { issuer: parse_address(&m.issuer, "issuer")?, amount: validate_coin(m.amount.as_ref())? }))),
            MSG_PAUSE => decode::<pb::MsgPause>(any).and_then(|m| Pause::new(&m.authority, &m.denom, &m.features).map(StablecoinMsg::Pause)),
            MSG_UNPAUSE => decode::<pb::MsgUnpause>(any).and_then(|m| Pause::new(&m.authority, &m.denom, &m.features).map(StablecoinMsg::Unpause)),
            MSG_SET_ROLE => decode::<pb::MsgSetRole>(any)
                .and_then(|m| SetRole::new(&m.issuer, &m.denom, &m.role, &m.address, m.allowance.as_ref(), false).map(StablecoinMsg::SetRole)),
            MSG_REVOKE_ROLE => {
                decode::<pb::MsgRevokeRole>(any).and_then(|m| SetRole::new(&m.issuer, &m.denom, &m.role, &m.address, None, true).map(StablecoinMsg::RevokeRole))
            }
            MSG_SEIZE => decode::<pb::MsgSeize>(any).and_then(|m| Seize::new(&m).map(StablecoinMsg::Seize)),
            MSG_REQUEST_REDEMPTION => decode::<pb::MsgRequestRedemption>(any).and_then(|m| {
                RequestRedemption::new(parse_address(&m.holder, "holder")?, &m.denom, &m.amount, &m.payout_ref).map(StablecoinMsg::RequestRedemption)
            }),
            MSG_SETTLE_REDEMPTION => decode::<pb::MsgSettleRedemption>(any).and_then(|m| {
                Ok(StablecoinMsg::SettleRedemption(CloseRedemption {
                    redeemer: parse_address(&m.redeemer, "redeemer")?,
                    id: m.id,
                    text: redemption_text("payment_ref", &m.payment_ref)?,
                }))
            }),
            MSG_REJECT_REDEMPTION => decode::<pb::MsgRejectRedemption>(any).and_then(|m| {
                Ok(StablecoinMsg::RejectRedemption(CloseRedemption {
                    redeemer: parse_address(&m.redeemer, "redeemer")?,
                    id: m.id,
                    text: redemption_text("reason", &m.reason)?,
                }))
            }),
            MSG_UPDATE_PARAMS => decode::<pb::MsgUpdateParams>(any).and_then(|m| {
                let params = m.params.ok_or_else(|| StablecoinError::InvalidParams("params are required".into()))?;
                crate::redemption::deadline_secs(&params)?;
                Ok(StablecoinMsg::UpdateParams(parse_address(&m.authority, "authority")?, params))
            }),
            MSG_FREEZE => decode::<pb::MsgFreeze>(any)
                .and_then(|m| Ok(StablecoinMsg::Freeze(parse_address(&m.authority, "authority")?, parse_address(&m.address, "address")?))),
            MSG_UNFREEZE => decode::<pb::MsgUnfreeze>(any)
                .and_then(|m| Ok(StablecoinMsg::Unfreeze(parse_address(&m.authority, "authority")?, parse_address(&m.address, "address")?))),
            _ => return None,
        })
    }

    /// The type URL.
    pub fn type_url(&self) -> &'static str {
        match self {
            StablecoinMsg::CreateDenom(_) => MSG_CREATE_DENOM,
            StablecoinMsg::Mint(_) => MSG_MINT,
            StablecoinMsg::Burn(_) => MSG_BURN,
            StablecoinMsg::Pause(_) => MSG_PAUSE,
            StablecoinMsg::Unpause(_) => MSG_UNPAUSE,
            StablecoinMsg::SetRole(_) => MSG_SET_ROLE,
            StablecoinMsg::RevokeRole(_) => MSG_REVOKE_ROLE,
            StablecoinMsg::Seize(_) => MSG_SEIZE,
            StablecoinMsg::RequestRedemption(_) => MSG_REQUEST_REDEMPTION,
            StablecoinMsg::SettleRedemption(_) => MSG_SETTLE_REDEMPTION,
            StablecoinMsg::RejectRedemption(_) => MSG_REJECT_REDEMPTION,
            StablecoinMsg::UpdateParams(..) => MSG_UPDATE_PARAMS,
            StablecoinMsg::Freeze(..) => MSG_FREEZE,
            StablecoinMsg::Unfreeze(..) => MSG_UNFREEZE,
        }
    }

    /// The address that must sign.
    pub fn signer(&self) -> Address {
        match self {
            StablecoinMsg::CreateDenom(m) => m.authority,
            StablecoinMsg::Mint(m) => m.issuer,
            StablecoinMsg::Burn(m) => m.issuer,
            StablecoinMsg::Pause(p) | StablecoinMsg::Unpause(p) => p.authority,
            StablecoinMsg::SetRole(r) | StablecoinMsg::RevokeRole(r) => r.issuer,
            StablecoinMsg::Seize(m) => m.seizer,
            StablecoinMsg::RequestRedemption(m) => m.holder,
            StablecoinMsg::SettleRedemption(m) | StablecoinMsg::RejectRedemption(m) => m.redeemer,
            StablecoinMsg::UpdateParams(a, _) => *a,
            StablecoinMsg::Freeze(a, _) | StablecoinMsg::Unfreeze(a, _) => *a,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Name;

    #[test]
    fn type_urls_match_the_schema() {
        assert_eq!(MSG_CREATE_DENOM, pb::MsgCreateDenom::type_url());
        assert_eq!(MSG_MINT, pb::MsgMint::type_url());
        assert_eq!(MSG_BURN, pb::MsgBurn::type_url());
        assert_eq!(MSG_PAUSE, pb::MsgPause::type_url());
        assert_eq!(MSG_UNPAUSE, pb::MsgUnpause::type_url());
        assert_eq!(MSG_FREEZE, pb::MsgFreeze::type_url());
        assert_eq!(MSG_UNFREEZE, pb::MsgUnfreeze::type_url());
        assert_eq!(MSG_REQUEST_REDEMPTION, pb::MsgRequestRedemption::type_url());
        assert_eq!(MSG_SETTLE_REDEMPTION, pb::MsgSettleRedemption::type_url());
        assert_eq!(MSG_REJECT_REDEMPTION, pb::MsgRejectRedemption::type_url());
        assert_eq!(MSG_UPDATE_PARAMS, pb::MsgUpdateParams::type_url());
    }

    #[test]
    fn denoms_and_amounts() {
        assert!(validate_denom("hkd.demo").is_ok());
        assert!(validate_denom("hkd.").is_err());
        assert!(validate_denom("usd.demo").is_err());
        assert!(validate_denom("hkd demo").is_err());
        let coin = |a: &str| PbCoin { denom: "hkd.demo".into(), amount: a.into() };
        assert!(validate_coin(Some(&coin("1"))).is_ok());
        assert!(validate_coin(Some(&coin("0"))).is_err());
        assert!(validate_coin(Some(&coin("-5"))).is_err());
        assert!(validate_coin(Some(&coin("1.5"))).is_err());
        assert!(validate_coin(None).is_err());
    }
}

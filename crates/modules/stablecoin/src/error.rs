//! Stablecoin handler errors (codespace `stablecoin`), listed in `docs/modules/stablecoin.md`.

use lantau_module_api::{ErrorCode, TxError};

/// A stablecoin handler failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StablecoinError {
    /// 2: the denom is malformed or does not start with `hkd.`.
    #[error("invalid stablecoin denom {0:?}: expected hkd.<name> following the Cosmos denom rules")]
    InvalidDenom(String),
    /// 3: decimals other than 2.
    #[error("invalid decimals {0}: stablecoins have exactly 2 decimals")]
    InvalidDecimals(u32),
    /// 4: the denom exists already.
    #[error("denom {0} already exists")]
    DenomExists(String),
    /// 5: the issuer already has a denom.
    #[error("issuer {issuer} already issues {denom}")]
    IssuerHasDenom {
        /// The issuer.
        issuer: String,
        /// Its denom.
        denom: String,
    },
    /// 6: no such stablecoin denom.
    #[error("unknown stablecoin denom {0}")]
    UnknownDenom(String),
    /// 7: the signer is not the denom's issuer.
    #[error("unauthorized: {signer} is not the issuer of {denom} ({issuer} is)")]
    NotIssuer {
        /// Who signed.
        signer: String,
        /// The denom.
        denom: String,
        /// Its issuer.
        issuer: String,
    },
    /// 8: the signer is not the governance authority.
    #[error("unauthorized: expected the governance authority {expected}, got {signer}")]
    NotGovernance {
        /// Governance.
        expected: String,
        /// Who signed.
        signer: String,
    },
    /// 9: the signer is not the compliance authority.
    #[error("unauthorized: expected the compliance authority {expected}, got {signer}")]
    NotComplianceAuthority {
        /// The compliance authority.
        expected: String,
        /// Who signed.
        signer: String,
    },
    /// 10: the amount is missing, zero, negative or malformed.
    #[error("invalid amount: {0}")]
    InvalidAmount(String),
    /// 11: every feature asked is paused already.
    #[error("{0} is already paused")]
    AlreadyPaused(String),
    /// 12: none of the features asked is paused.
    #[error("{0} is not paused")]
    NotPaused(String),
    /// 13: the address is frozen already.
    #[error("{0} is already frozen")]
    AlreadyFrozen(String),
    /// 14: the address is not frozen.
    #[error("{0} is not frozen")]
    NotFrozen(String),
    /// 15: coins cannot be minted to a blacklisted address.
    #[error("recipient={0}: address is blacklisted")]
    RecipientBlacklisted(String),
    /// 16: a blacklisted address cannot become an issuer.
    #[error("issuer={0}: address is blacklisted")]
    IssuerBlacklisted(String),
    /// 17: the feature (mint, burn) is paused for the denom; it waits for unpause.
    #[error("{0} is paused by its issuer")]
    Paused(String),
    /// 20: a feature name that is not TRANSFER, MINT, BURN, SEIZE or REDEEM.
    #[error("{0}")]
    InvalidFeatures(String),
    /// 21: an unknown role, or an allowance where none belongs (or missing for a minter).
    #[error("invalid role grant: {0}")]
    InvalidRole(String),
    /// 22: revoking a grant that does not exist.
    #[error("{address} holds no {role} role of {denom}")]
    RoleNotFound {
        /// The denom.
        denom: String,
        /// The role.
        role: &'static str,
        /// The address (bech32).
        address: String,
    },
    /// 24: the mint would take circulation over the reserve the latest attestation shows (the
    /// log names the figures and the attestation).
    #[error("{0}")]
    OverReserve(String),
    /// 25: the issuer has no ATTESTED attestation to mint against.
    #[error("mint of {denom} refused: its issuer {issuer} has no ATTESTED reserve attestation")]
    NoAttestation {
        /// The denom.
        denom: String,
        /// The issuer (bech32).
        issuer: String,
    },
    /// 26: the latest attestation is older than `reserve.params.max_attestation_age` (the log
    /// names its date, the limit and the block time).
    #[error("{0}")]
    StaleAttestation(String),
    /// 27: a malformed seizure (no evidence or memo, the same address on both sides).
    #[error("invalid seizure: {0}")]
    InvalidSeizure(String),
    /// 28: the recipient of a seizure does not pass the KYC gate (the log names it and why).
    #[error("{0}")]
    SeizeRecipient(String),
    /// 29: params that do not validate (the log says which field and why).
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// 30: a malformed redemption message (an empty or too long reference or reason).
    #[error("invalid redemption: {0}")]
    InvalidRedemption(String),
    /// 31: no redemption has this id.
    #[error("no redemption with id {0}")]
    RedemptionNotFound(u64),
    /// 32: the redemption was already settled or rejected.
    #[error("redemption {id} is already {status}")]
    RedemptionClosed {
        /// The id.
        id: u64,
        /// Its status (`REDEMPTION_STATUS_PAID` or `REDEMPTION_STATUS_REJECTED`).
        status: &'static str,
    },
    /// 33: the holder does not pass the KYC gate (the log names it and why).
    #[error("{0}")]
    RedemptionHolder(String),
    /// 23: a minter's mint over its allowance.
    #[error("mint of {amount}{denom} by minter {minter} is over its allowance of {allowance}{denom}")]
    OverAllowance {
        /// The minter (bech32).
        minter: String,
        /// The denom.
        denom: String,
        /// The amount asked.
        amount: String,
        /// What is left of its allowance.
        allowance: String,
    },
    /// 18: the display name is empty or too long.
    #[error("invalid display {0:?}: 1 to 32 characters")]
    InvalidDisplay(String),
    /// 19: the signer issues no denom.
    #[error("{0} is not a stablecoin issuer")]
    NotAnIssuer(String),
}

impl ErrorCode for StablecoinError {
    fn codespace(&self) -> &'static str {
        "stablecoin"
    }
    fn code(&self) -> u32 {
        match self {
            StablecoinError::InvalidDenom(_) => 2,
            StablecoinError::InvalidDecimals(_) => 3,
            StablecoinError::DenomExists(_) => 4,
            StablecoinError::IssuerHasDenom { .. } => 5,
            StablecoinError::UnknownDenom(_) => 6,
            StablecoinError::NotIssuer { .. } => 7,
            StablecoinError::NotGovernance { .. } => 8,
            StablecoinError::NotComplianceAuthority { .. } => 9,
            StablecoinError::InvalidAmount(_) => 10,
            StablecoinError::AlreadyPaused(_) => 11,
            StablecoinError::NotPaused(_) => 12,
            StablecoinError::AlreadyFrozen(_) => 13,
            StablecoinError::NotFrozen(_) => 14,
            StablecoinError::RecipientBlacklisted(_) => 15,
            StablecoinError::IssuerBlacklisted(_) => 16,
            StablecoinError::Paused(_) => 17,
            StablecoinError::InvalidDisplay(_) => 18,
            StablecoinError::NotAnIssuer(_) => 19,
            StablecoinError::InvalidFeatures(_) => 20,
            StablecoinError::InvalidRole(_) => 21,
            StablecoinError::RoleNotFound { .. } => 22,
            StablecoinError::OverAllowance { .. } => 23,
            StablecoinError::OverReserve(_) => 24,
            StablecoinError::NoAttestation { .. } => 25,
            StablecoinError::StaleAttestation(_) => 26,
            StablecoinError::InvalidSeizure(_) => 27,
            StablecoinError::SeizeRecipient(_) => 28,
            StablecoinError::InvalidParams(_) => 29,
            StablecoinError::InvalidRedemption(_) => 30,
            StablecoinError::RedemptionNotFound(_) => 31,
            StablecoinError::RedemptionClosed { .. } => 32,
            StablecoinError::RedemptionHolder(_) => 33,
        }
    }
}

impl From<StablecoinError> for TxError {
    fn from(e: StablecoinError) -> Self {
        TxError::from_code(&e)
    }
}

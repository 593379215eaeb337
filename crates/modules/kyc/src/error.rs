//! KYC handler errors (codespace `kyc`). Codes are stable; they are listed in
//! `docs/modules/kyc.md`.

use lantau_module_api::{ErrorCode, TxError};

/// A KYC handler failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KycError {
    /// 2: the level is unknown, unspecified, or not one a registrar may assign.
    #[error("invalid level: {0}")]
    InvalidLevel(String),
    /// 3: the address already has an identity record (use MsgUpdateIdentity).
    #[error("identity for {0} already exists")]
    IdentityExists(String),
    /// 4: the address has no identity record.
    #[error("no identity record for {0}")]
    IdentityNotFound(String),
    /// 5: the signer is not a registrar.
    #[error("{0} is not a registrar: only registrars listed in the kyc params enrol and update identities")]
    NotRegistrar(String),
    /// 6: the signer is not the compliance authority.
    #[error("unauthorized: expected the compliance authority {expected}, got {signer}")]
    NotComplianceAuthority {
        /// The compliance authority.
        expected: String,
        /// Who signed.
        signer: String,
    },
    /// 7: the signer is not the governance authority.
    #[error("unauthorized: expected the governance authority {expected}, got {signer}")]
    NotGovernance {
        /// The governance authority.
        expected: String,
        /// Who signed.
        signer: String,
    },
    /// 8: the identity is blacklisted; a registrar cannot change it.
    #[error("identity {0} is blacklisted and cannot be changed by a registrar")]
    Blacklisted(String),
    /// 9: the params are invalid.
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// 11: `expires_at` is not a valid time, or not after the block time.
    #[error("invalid expires_at: {0}")]
    InvalidExpiry(String),
    /// 10: a text field is too long.
    #[error("{field} is too long: {len} bytes, at most {max}")]
    FieldTooLong {
        /// The field.
        field: &'static str,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
}

impl ErrorCode for KycError {
    fn codespace(&self) -> &'static str {
        "kyc"
    }
    fn code(&self) -> u32 {
        match self {
            KycError::InvalidLevel(_) => 2,
            KycError::IdentityExists(_) => 3,
            KycError::IdentityNotFound(_) => 4,
            KycError::NotRegistrar(_) => 5,
            KycError::NotComplianceAuthority { .. } => 6,
            KycError::NotGovernance { .. } => 7,
            KycError::Blacklisted(_) => 8,
            KycError::InvalidParams(_) => 9,
            KycError::FieldTooLong { .. } => 10,
            KycError::InvalidExpiry(_) => 11,
        }
    }
}

impl From<KycError> for TxError {
    fn from(e: KycError) -> Self {
        TxError::from_code(&e)
    }
}

/// Checks a text field's length.
pub fn check_len(field: &'static str, value: &str, max: usize) -> Result<(), KycError> {
    if value.len() > max {
        return Err(KycError::FieldTooLong { field, len: value.len(), max });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_nonzero() {
        let all = [
            KycError::InvalidLevel(String::new()),
            KycError::IdentityExists(String::new()),
            KycError::IdentityNotFound(String::new()),
            KycError::NotRegistrar(String::new()),
            KycError::NotComplianceAuthority { expected: String::new(), signer: String::new() },
            KycError::NotGovernance { expected: String::new(), signer: String::new() },
            KycError::Blacklisted(String::new()),
            KycError::InvalidParams(String::new()),
            KycError::FieldTooLong { field: "x", len: 0, max: 0 },
        ];
        let mut codes: Vec<u32> = all.iter().map(|e| e.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
        assert!(!codes.contains(&0));
    }
}

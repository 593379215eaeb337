use std::fmt;
use std::str::FromStr;

use crate::Amount;

/// The native coin's base denom (18 decimals). Gas is paid in it, and only in it.
pub const NATIVE_DENOM: &str = "alantau";
/// The native coin's display denom.
pub const NATIVE_DISPLAY: &str = "LANTAU";
/// Every stablecoin denom starts with this prefix; only such amounts produce compliance facts.
pub const STABLECOIN_PREFIX: &str = "hkd.";

/// The one rule of what a stablecoin is: a denom under [`STABLECOIN_PREFIX`]. Every check that
/// treats stablecoins apart (the bank's restrictions and screening, the CLI's display units)
/// asks this, never the prefix itself.
pub fn is_stablecoin(denom: &str) -> bool {
    denom.starts_with(STABLECOIN_PREFIX)
}

/// Why a denom string is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DenomError {
    /// The denom does not follow the Cosmos SDK rule `[a-zA-Z][a-zA-Z0-9/:._-]{2,127}`.
    #[error("invalid denom {0:?}: must match [a-zA-Z][a-zA-Z0-9/:._-]{{2,127}}")]
    Invalid(String),
    /// A coin string like `100alantau` did not parse.
    #[error("invalid coin {0:?}: expected <amount><denom>, e.g. 100alantau")]
    Coin(String),
}

/// A validated denomination (Cosmos SDK rules).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Denom(String);

impl Denom {
    /// Validates a denom.
    pub fn new(s: &str) -> Result<Self, DenomError> {
        let bytes = s.as_bytes();
        let ok = (3..=128).contains(&bytes.len())
            && bytes[0].is_ascii_alphabetic()
            && bytes[1..].iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b':' | b'.' | b'_' | b'-'));
        if ok {
            Ok(Self(s.to_string()))
        } else {
            Err(DenomError::Invalid(s.to_string()))
        }
    }

    /// The native coin denom.
    pub fn native() -> Self {
        Self(NATIVE_DENOM.to_string())
    }

    /// The denom string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for stablecoin denoms (`hkd.` prefix).
    pub fn is_stablecoin(&self) -> bool {
        is_stablecoin(&self.0)
    }

    /// True for the native gas coin.
    pub fn is_native(&self) -> bool {
        self.0 == NATIVE_DENOM
    }
}

impl fmt::Display for Denom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Denom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Denom {
    type Err = DenomError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

/// An amount of one denom.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, serde::Serialize, serde::Deserialize)]
pub struct Coin {
    /// The denomination.
    pub denom: String,
    /// The amount in the denom's base unit.
    pub amount: Amount,
}

impl Coin {
    /// A coin from a denom and an amount.
    pub fn new(denom: impl Into<String>, amount: impl Into<Amount>) -> Self {
        Self { denom: denom.into(), amount: amount.into() }
    }

    /// True when the coin is a stablecoin (its denom is one: [`is_stablecoin`]).
    pub fn is_stablecoin(&self) -> bool {
        is_stablecoin(&self.denom)
    }

    /// Parses `<amount><denom>`, e.g. `1500hkd.demo` or `1000000alantau`.
    pub fn parse(s: &str) -> Result<Self, DenomError> {
        let split = s.find(|c: char| !c.is_ascii_digit()).ok_or_else(|| DenomError::Coin(s.into()))?;
        let (amt, denom) = s.split_at(split);
        let amount: Amount = amt.parse().map_err(|_| DenomError::Coin(s.into()))?;
        let denom = Denom::new(denom)?;
        Ok(Self { denom: denom.0, amount })
    }
}

impl fmt::Display for Coin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.amount, self.denom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denoms() {
        assert!(Denom::new("alantau").unwrap().is_native());
        assert!(Denom::new("hkd.demo").unwrap().is_stablecoin());
        assert!(Denom::new("1abc").is_err());
        assert!(Denom::new("ab").is_err());
        assert!(Denom::new("a b c").is_err());
        assert_eq!(Coin::parse("1500hkd.demo").unwrap(), Coin::new("hkd.demo", 1500u128));
        assert!(Coin::parse("hkd.demo").is_err());
        assert!(Coin::parse("15").is_err());
    }
}

use std::fmt;
use std::str::FromStr;

/// Why an amount is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// The string is not a base-10 unsigned integer that fits in 128 bits.
    #[error("invalid amount {0:?}: expected a non-negative integer below 2^128")]
    Parse(String),
    /// An addition overflowed.
    #[error("amount overflow")]
    Overflow,
    /// A subtraction went below zero.
    #[error("amount underflow")]
    Underflow,
}

/// A non-negative amount in a denom's base unit. Only checked arithmetic is offered.
///
/// 128 bits hold 3.4e38 base units: 3.4e20 whole units of an 18-decimal coin.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Amount(pub u128);

impl Amount {
    /// Zero.
    pub const ZERO: Amount = Amount(0);

    /// Checked addition.
    pub fn checked_add(self, other: Amount) -> Result<Amount, AmountError> {
        self.0.checked_add(other.0).map(Amount).ok_or(AmountError::Overflow)
    }

    /// Checked subtraction.
    pub fn checked_sub(self, other: Amount) -> Result<Amount, AmountError> {
        self.0.checked_sub(other.0).map(Amount).ok_or(AmountError::Underflow)
    }

    /// Checked multiplication by an integer.
    pub fn checked_mul(self, k: u128) -> Result<Amount, AmountError> {
        self.0.checked_mul(k).map(Amount).ok_or(AmountError::Overflow)
    }

    /// True when zero.
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }

    /// Big-endian bytes, the storage encoding.
    pub fn to_be_bytes(self) -> [u8; 16] {
        self.0.to_be_bytes()
    }

    /// From big-endian bytes; any length other than 16 is rejected.
    pub fn from_be_slice(b: &[u8]) -> Option<Amount> {
        let arr: [u8; 16] = b.try_into().ok()?;
        Some(Amount(u128::from_be_bytes(arr)))
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Debug for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for Amount {
    type Err = AmountError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(AmountError::Parse(s.to_string()));
        }
        s.parse::<u128>().map(Amount).map_err(|_| AmountError::Parse(s.to_string()))
    }
}

impl From<u128> for Amount {
    fn from(v: u128) -> Self {
        Amount(v)
    }
}

impl serde::Serialize for Amount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for Amount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_arith() {
        assert_eq!("123".parse::<Amount>().unwrap(), Amount(123));
        assert!("-1".parse::<Amount>().is_err());
        assert!("1.5".parse::<Amount>().is_err());
        assert!("".parse::<Amount>().is_err());
        assert!("340282366920938463463374607431768211456".parse::<Amount>().is_err());
        assert_eq!(Amount(1).checked_sub(Amount(2)), Err(AmountError::Underflow));
        assert_eq!(Amount(u128::MAX).checked_add(Amount(1)), Err(AmountError::Overflow));
    }
}

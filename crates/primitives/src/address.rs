use std::fmt;
use std::str::FromStr;

use bech32::{Bech32, Hrp};
use sha3::{Digest, Keccak256};

/// The bech32 human-readable prefix of account addresses.
pub const BECH32_PREFIX: &str = "lantau";

/// Why a string is not an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// The bech32 string did not decode.
    #[error("invalid bech32 address {0:?}: {1}")]
    Bech32(String, String),
    /// The bech32 prefix is not `lantau`.
    #[error("address {0:?} has prefix {1:?}, expected \"lantau\"")]
    WrongPrefix(String, String),
    /// The hex string did not decode.
    #[error("invalid hex address {0:?}")]
    Hex(String),
    /// The decoded address is not 20 bytes long.
    #[error("address {0:?} is {1} bytes long, expected 20")]
    Length(String, usize),
    /// An empty string was given.
    #[error("empty address")]
    Empty,
}

/// How many bech32 renderings each thread keeps (see [`Address::to_bech32`]).
const RECENT_BECH32_LEN: usize = 8;

#[derive(Default)]
struct RecentBech32 {
    entries: Vec<(Address, String)>,
    next: usize,
}

thread_local! {
    static RECENT_BECH32: std::cell::RefCell<RecentBech32> = std::cell::RefCell::new(RecentBech32::default());
}

/// A 20-byte account address: the last 20 bytes of keccak256 of the uncompressed public key.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Address(pub [u8; 20]);

impl Address {
    /// The address from raw bytes; fails unless there are exactly 20.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, AddressError> {
        let arr: [u8; 20] = bytes.try_into().map_err(|_| AddressError::Length(hex::encode(bytes), bytes.len()))?;
        Ok(Self(arr))
    }

    /// The raw 20 bytes.
    pub fn as_bytes(&self) -> &[u8; 20] {
        &self.0
    }

    /// The bech32 form, `lantau1...`.
    pub fn to_bech32(&self) -> String {
        // A transaction renders its parties' addresses a dozen times (events, the audit row,
        // replies), and the checksum is most of the cost: the thread's last few are kept.
        RECENT_BECH32.with(|recent| {
            let Ok(mut recent) = recent.try_borrow_mut() else { return self.encode_bech32() };
            if let Some((_, s)) = recent.entries.iter().find(|(a, _)| a == self) {
                return s.clone();
            }
            let s = self.encode_bech32();
            let next = recent.next;
            match recent.entries.get_mut(next) {
                Some(slot) => *slot = (*self, s.clone()),
                None => recent.entries.push((*self, s.clone())),
            }
            recent.next = (next + 1) % RECENT_BECH32_LEN;
            s
        })
    }

    fn encode_bech32(&self) -> String {
        // The prefix is a valid constant and 20 bytes always fit in a bech32 string.
        let hrp = Hrp::parse_unchecked(BECH32_PREFIX);
        bech32::encode::<Bech32>(hrp, &self.0).unwrap_or_default()
    }

    /// `prefix` followed by [`Address::to_key_hex`]: a store key under `prefix`, built in one
    /// allocation (every transaction builds a dozen of these).
    pub fn key_under(&self, prefix: &str) -> String {
        let mut buf = [0u8; 40];
        let mut key = String::with_capacity(prefix.len() + 41);
        key.push_str(prefix);
        match hex::encode_to_slice(self.0, &mut buf).ok().and_then(|()| std::str::from_utf8(&buf).ok()) {
            Some(h) => key.push_str(h),
            None => key.push_str(&hex::encode(self.0)),
        }
        key
    }

    /// Lower-case hex without `0x`: the form addresses take inside store keys.
    pub fn to_key_hex(&self) -> String {
        // Through a buffer: `hex::encode` builds its string a char at a time.
        let mut buf = [0u8; 40];
        match hex::encode_to_slice(self.0, &mut buf) {
            Ok(()) => String::from_utf8(buf.to_vec()).unwrap_or_else(|_| hex::encode(self.0)),
            Err(_) => hex::encode(self.0),
        }
    }

    /// The EIP-55 mixed-case hex form, `0x...`.
    pub fn to_hex(&self) -> String {
        let lower = hex::encode(self.0);
        let hash = Keccak256::digest(lower.as_bytes());
        let mut out = String::with_capacity(42);
        out.push_str("0x");
        for (i, c) in lower.chars().enumerate() {
            let nibble = (hash[i / 2] >> (if i % 2 == 0 { 4 } else { 0 })) & 0x0f;
            if c.is_ascii_alphabetic() && nibble >= 8 {
                out.push(c.to_ascii_uppercase());
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Parses the bech32 form only (the Cosmos side of every API).
    pub fn from_bech32(s: &str) -> Result<Self, AddressError> {
        if s.is_empty() {
            return Err(AddressError::Empty);
        }
        let (hrp, data) = bech32::decode(s).map_err(|e| AddressError::Bech32(s.to_string(), e.to_string()))?;
        if hrp.as_str() != BECH32_PREFIX {
            return Err(AddressError::WrongPrefix(s.to_string(), hrp.to_string()));
        }
        Self::from_slice(&data).map_err(|_| AddressError::Length(s.to_string(), data.len()))
    }

    /// Parses the hex form, with or without `0x`, in any case.
    pub fn from_hex(s: &str) -> Result<Self, AddressError> {
        if s.is_empty() {
            return Err(AddressError::Empty);
        }
        let body = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
        let bytes = hex::decode(body).map_err(|_| AddressError::Hex(s.to_string()))?;
        Self::from_slice(&bytes).map_err(|_| AddressError::Length(s.to_string(), bytes.len()))
    }

    /// Parses either form: `0x`-prefixed hex, or bech32.
    pub fn parse_any(s: &str) -> Result<Self, AddressError> {
        if s.starts_with("0x") || s.starts_with("0X") {
            Self::from_hex(s)
        } else {
            Self::from_bech32(s)
        }
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_bech32())
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Address({})", self.to_bech32())
    }
}

impl FromStr for Address {
    type Err = AddressError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse_any(s)
    }
}

impl serde::Serialize for Address {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_bech32())
    }
}

impl<'de> serde::Deserialize<'de> for Address {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse_any(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_under_a_prefix_is_the_prefix_and_the_key_hex() {
        let a = Address([0xab; 20]);
        assert_eq!(a.key_under("bank/balances/"), format!("bank/balances/{}", a.to_key_hex()));
        assert_eq!(a.key_under(""), "ab".repeat(20));
    }

    /// The kept renderings never answer for another address: more addresses than are kept,
    /// each rendered several times in interleaved order, always give their own encoding.
    #[test]
    fn kept_bech32_renderings_match_the_encoding() {
        let addrs: Vec<Address> = (0u8..20).map(|i| Address([i; 20])).collect();
        for round in 0..3 {
            for (i, a) in addrs.iter().enumerate() {
                for b in [a, &addrs[(i + round) % addrs.len()]] {
                    assert_eq!(b.to_bech32(), b.encode_bech32());
                    assert_eq!(Address::from_bech32(&b.to_bech32()).unwrap(), *b);
                    assert_eq!(b.to_key_hex(), hex::encode(b.0));
                }
            }
        }
        assert_eq!(Address::default().to_bech32(), Address::default().encode_bech32());
    }

    #[test]
    fn hex_and_bech32_round_trip() {
        let a = Address::from_hex("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266").unwrap();
        assert_eq!(a.to_hex(), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
        let b = a.to_bech32();
        assert!(b.starts_with("lantau1"));
        assert_eq!(Address::from_bech32(&b).unwrap(), a);
        assert_eq!(Address::parse_any(&b).unwrap(), a);
        assert_eq!(Address::parse_any("0xF39FD6E51AAD88F6F4CE6AB8827279CFFFB92266").unwrap(), a);
    }

    #[test]
    fn bad_addresses_are_rejected() {
        assert!(Address::from_bech32("").is_err());
        assert!(Address::from_bech32("cosmos1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqnrql8a").is_err());
        assert!(Address::from_bech32("lantau1xyz").is_err());
        assert!(Address::from_hex("0x1234").is_err());
        assert!(Address::from_hex("0xzz").is_err());
    }
}

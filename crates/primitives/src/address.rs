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

/// How many renderings of each form each thread keeps (see [`Address::to_bech32`]).
const RECENT_LEN: usize = 8;

/// The last [`RECENT_LEN`] items put, oldest overwritten first.
struct Ring<T> {
    entries: Vec<T>,
    next: usize,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Self { entries: Vec::new(), next: 0 }
    }
}

impl<T> Ring<T> {
    fn find(&self, f: impl Fn(&T) -> bool) -> Option<&T> {
        self.entries.iter().find(|e| f(e))
    }

    fn keep(&mut self, item: T) {
        match self.entries.get_mut(self.next) {
            Some(slot) => *slot = item,
            None => self.entries.push(item),
        }
        self.next = (self.next + 1) % RECENT_LEN;
    }
}

/// Each thread's recent renderings of addresses (a transaction renders its parties a dozen
/// times), by form.
#[derive(Default)]
struct Recent {
    bech32: Ring<(Address, String)>,
    eip55: Ring<(Address, String)>,
}

thread_local! {
    static RECENT: std::cell::RefCell<Recent> = std::cell::RefCell::new(Recent::default());
}

/// A 20-byte account address: the last 20 bytes of keccak256 of the uncompressed public key.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Address(pub [u8; 20]);

impl Address {
    /// The address from raw bytes; fails unless there are exactly 20.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, AddressError> {
        let arr: [u8; 20] = bytes.try_into().map_err(|_| AddressError::Length(const_hex::encode(bytes), bytes.len()))?;
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
        self.kept(|r| &mut r.bech32, Self::encode_bech32)
    }

    /// This address's rendering from the thread's ring `ring` of recent ones, or `encode`d
    /// (and kept).
    fn kept(&self, ring: fn(&mut Recent) -> &mut Ring<(Address, String)>, encode: fn(&Self) -> String) -> String {
        RECENT.with(|recent| {
            let Ok(mut recent) = recent.try_borrow_mut() else { return encode(self) };
            let ring = ring(&mut recent);
            if let Some(s) = ring.find(|(a, _)| a == self).map(|(_, s)| s.clone()) {
                return s;
            }
            let s = encode(self);
            ring.keep((*self, s.clone()));
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
        let mut key = String::with_capacity(prefix.len() + 40);
        key.push_str(prefix);
        key.push_str(const_hex::Buffer::<20>::new().format(&self.0));
        key
    }

    /// Lower-case hex without `0x`: the form addresses take inside store keys.
    pub fn to_key_hex(&self) -> String {
        const_hex::encode(self.0)
    }

    /// The EIP-55 mixed-case hex form, `0x...`.
    pub fn to_hex(&self) -> String {
        // A transaction renders its parties in this form several times (events, receipts,
        // logs), and the checksum is a keccak: the thread's last few are kept, as for bech32.
        self.kept(|r| &mut r.eip55, Self::encode_eip55)
    }

    fn encode_eip55(&self) -> String {
        let mut lower = const_hex::Buffer::<20>::new();
        let lower = lower.format(&self.0);
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
        // The string of an address this thread rendered lately (the audit row checks the
        // parties it was just given in this form): exactly the canonical encoding, so it decodes
        // to that address. Only renderings are kept: a string parsed here may be a valid
        // non-canonical form (upper case, a bech32m checksum) that must never be rendered.
        let known = RECENT.with(|recent| recent.try_borrow().ok().and_then(|r| r.bech32.find(|(_, k)| k == s).map(|(a, _)| *a)));
        match known {
            Some(a) => Ok(a),
            None => Self::decode_bech32(s),
        }
    }

    fn decode_bech32(s: &str) -> Result<Self, AddressError> {
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
                    assert_eq!(b.to_key_hex(), const_hex::encode(b.0));
                }
            }
        }
        assert_eq!(Address::default().to_bech32(), Address::default().encode_bech32());
    }

    #[test]
    fn kept_renderings_never_come_from_a_parsed_string() {
        let a = Address([7; 20]);
        let canonical = a.encode_bech32();
        let upper = canonical.to_ascii_uppercase();
        // Another form of the address is judged on its own, before and after a rendering.
        let before = Address::from_bech32(&upper);
        assert_eq!(a.to_bech32(), canonical);
        assert_eq!(Address::from_bech32(&upper), before);
        assert_eq!(a.to_bech32(), canonical);
        assert_eq!(Address::from_bech32(&canonical).unwrap(), a);
        // A bech32m checksum is a valid form of the same address, parsed but never rendered.
        let m = bech32::encode::<bech32::Bech32m>(Hrp::parse_unchecked(BECH32_PREFIX), &a.0).unwrap();
        assert_ne!(m, canonical);
        assert_eq!(Address::from_bech32(&m).unwrap(), a);
        assert_eq!(a.to_bech32(), canonical);
        assert_eq!(Address::from_bech32(&m).unwrap(), a);
        // A kept rendering does not hide a wrong checksum or prefix.
        let mut bad = canonical.clone();
        let last = if bad.ends_with('q') { 'p' } else { 'q' };
        bad.pop();
        bad.push(last);
        assert!(Address::from_bech32(&bad).is_err());
        // The kept EIP-55 forms are the encoding, whatever the order they are asked in.
        let addrs: Vec<Address> = (0u8..20).map(|i| Address([i.wrapping_mul(37); 20])).collect();
        for round in 0..3 {
            for (i, x) in addrs.iter().enumerate() {
                for y in [x, &addrs[(i + round) % addrs.len()]] {
                    assert_eq!(y.to_hex(), y.encode_eip55());
                    assert_eq!(Address::from_hex(&y.to_hex()).unwrap(), *y);
                }
            }
        }
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

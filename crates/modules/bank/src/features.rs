//! The features of a stablecoin denom its issuer (or a pauser) can pause one by one.

/// One feature of a denom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Feature {
    /// Transfers between accounts (bank sends, multi-sends, the precompile).
    Transfer,
    /// The issuer's (or a minter's) mint.
    Mint,
    /// The issuer's burn.
    Burn,
    /// A seizure under a court order.
    Seize,
    /// New redemption requests (an open request is still settled or rejected: that
    /// discharges it).
    Redeem,
}

impl Feature {
    /// Every feature, in their order.
    pub const ALL: [Feature; 5] = [Feature::Transfer, Feature::Mint, Feature::Burn, Feature::Seize, Feature::Redeem];

    fn bit(self) -> u8 {
        match self {
            Feature::Transfer => 1,
            Feature::Mint => 2,
            Feature::Burn => 4,
            Feature::Seize => 8,
            Feature::Redeem => 16,
        }
    }

    /// Its name in messages and queries (`TRANSFER`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Feature::Transfer => "TRANSFER",
            Feature::Mint => "MINT",
            Feature::Burn => "BURN",
            Feature::Seize => "SEIZE",
            Feature::Redeem => "REDEEM",
        }
    }

    /// The feature with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// A set of features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Features(u8);

const ALL_BITS: u8 = 31;
/// The stored form of a partial set: this bit, then the set's bits.
const PARTIAL: u8 = 0x80;

impl Features {
    /// None.
    pub const NONE: Features = Features(0);
    /// All.
    pub const ALL: Features = Features(ALL_BITS);

    /// Whether `f` is in the set.
    pub fn contains(self, f: Feature) -> bool {
        self.0 & f.bit() != 0
    }

    /// The set with `other`'s features added.
    pub fn with(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }

    /// The set without `other`'s features.
    pub fn without(self, other: Features) -> Features {
        Features(self.0 & !other.0)
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The features, in their order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |f| self.contains(*f))
    }

    /// Their names, in order.
    pub fn names(self) -> Vec<String> {
        self.iter().map(|f| f.name().to_string()).collect()
    }

    /// The set of `names`; an empty list is every feature. `Err` names an unknown one.
    pub fn parse(names: &[String]) -> Result<Features, String> {
        if names.is_empty() {
            return Ok(Features::ALL);
        }
        let mut set = Features::NONE;
        for n in names {
            let f = Feature::from_name(n).ok_or_else(|| format!("unknown feature {n:?}: one of TRANSFER, MINT, BURN, SEIZE, REDEEM"))?;
            set = set.with(Features(f.bit()));
        }
        Ok(set)
    }

    /// The stored value: `[1]` for every feature (as a pause was stored before features), a
    /// partial set `[0x80 | bits]`; `None` for no feature (nothing stored).
    pub(crate) fn encode(self) -> Option<Vec<u8>> {
        match self.0 {
            0 => None,
            ALL_BITS => Some(vec![1]),
            bits => Some(vec![PARTIAL | bits]),
        }
    }

    /// Reads a stored value.
    pub(crate) fn decode(v: &[u8]) -> Option<Features> {
        match v {
            [1] => Some(Features::ALL),
            [b] if b & PARTIAL != 0 && b & !PARTIAL & !ALL_BITS == 0 => Some(Features(b & ALL_BITS)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_of_everything_is_stored_as_before_features_and_partial_sets_round_trip() {
        assert_eq!(Features::ALL.encode(), Some(vec![1]));
        assert_eq!(Features::decode(&[1]), Some(Features::ALL));
        assert_eq!(Features::NONE.encode(), None);
        let some = Features::parse(&["MINT".into(), "REDEEM".into()]).unwrap();
        assert_eq!(Features::decode(&some.encode().unwrap()), Some(some));
        assert_eq!(some.names(), ["MINT", "REDEEM"]);
        assert!(some.contains(Feature::Mint) && !some.contains(Feature::Transfer));
        assert_eq!(Features::parse(&[]).unwrap(), Features::ALL);
        assert!(Features::parse(&["mint".into()]).is_err());
        assert_eq!(Features::decode(&[0x80 | 64]), None);
        assert_eq!(Features::ALL.without(some).with(some), Features::ALL);
    }
}

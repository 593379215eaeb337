//! The record of one address's balances: every denom it holds, in one verifiable key
//! ([`crate::state_key::balances`]), so a transfer that moves a stablecoin and pays its fee
//! from the same address writes one Merkle leaf for it, not one per denom.
//!
//! Encoding (sorted by denom, each denom once, no zero amount):
//! `(denom length u8 ‖ denom ‖ amount u128 BE)*`. An address that holds nothing has no record.
//! Denoms are created by governance only (the native coin and the stablecoins), so a record
//! holds a handful of entries.

use lantau_module_api::{error::internal, TxError};
use lantau_primitives::{Amount, Coin};

/// One address's non-zero balances, sorted by denom.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Balances(Vec<(String, Amount)>);

impl Balances {
    /// Decodes a record; a malformed one is `None`.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let mut out: Vec<(String, Amount)> = Vec::new();
        let mut rest = bytes;
        while let Some((len, tail)) = rest.split_first() {
            let (denom, tail) = tail.split_at_checked(usize::from(*len))?;
            let (amount, tail) = tail.split_first_chunk::<16>()?;
            let denom = std::str::from_utf8(denom).ok()?;
            let amount = Amount(u128::from_be_bytes(*amount));
            // Strictly increasing denoms and no zero amount: one encoding per set of balances.
            if amount.is_zero() || out.last().is_some_and(|(d, _)| d.as_str() >= denom) {
                return None;
            }
            out.push((denom.to_string(), amount));
            rest = tail;
        }
        Some(Self(out))
    }

    /// Decodes the record stored under `key` (an error names it when it is malformed).
    pub(crate) fn decode_at(key: &str, bytes: &[u8]) -> Result<Self, TxError> {
        Self::decode(bytes).ok_or_else(|| internal(format!("corrupt balance record {key}")))
    }

    /// The record's bytes.
    pub fn encode(&self) -> Result<Vec<u8>, TxError> {
        let mut out = Vec::with_capacity(self.0.iter().map(|(d, _)| d.len().saturating_add(17)).sum());
        for (denom, amount) in &self.0 {
            let len = u8::try_from(denom.len()).map_err(|_| internal(format!("denom {denom:?} is too long for a balance record")))?;
            out.push(len);
            out.extend_from_slice(denom.as_bytes());
            out.extend_from_slice(&amount.to_be_bytes());
        }
        Ok(out)
    }

    /// The balance of `denom` (zero when absent).
    pub fn get(&self, denom: &str) -> Amount {
        match self.0.binary_search_by(|(d, _)| d.as_str().cmp(denom)) {
            Ok(i) => self.0.get(i).map(|(_, a)| *a).unwrap_or(Amount::ZERO),
            Err(_) => Amount::ZERO,
        }
    }

    /// Sets the balance of `denom`; zero removes it.
    pub fn set(&mut self, denom: &str, amount: Amount) {
        match self.0.binary_search_by(|(d, _)| d.as_str().cmp(denom)) {
            Ok(i) if amount.is_zero() => {
                self.0.remove(i);
            }
            Ok(i) => {
                if let Some(e) = self.0.get_mut(i) {
                    e.1 = amount;
                }
            }
            Err(_) if amount.is_zero() => {}
            Err(i) => self.0.insert(i, (denom.to_string(), amount)),
        }
    }

    /// True when the address holds nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The denoms held and their amounts, sorted by denom.
    pub fn entries(&self) -> impl Iterator<Item = (&str, Amount)> {
        self.0.iter().map(|(d, a)| (d.as_str(), *a))
    }

    /// The balances as coins, sorted by denom.
    pub fn coins(&self) -> Vec<Coin> {
        self.0.iter().map(|(d, a)| Coin::new(d.clone(), *a)).collect()
    }
}

/// What a run that takes the balance of one denom from a record depends on: the amount and
/// the length of the record (the gas of reading it). `len` is `None` when there is no record.
pub fn part_value(len: Option<usize>, amount: Amount) -> Vec<u8> {
    match len {
        None => Vec::new(),
        Some(len) => [&u64::try_from(len).unwrap_or(u64::MAX).to_be_bytes()[..], &amount.to_be_bytes()].concat(),
    }
}

/// Takes the part of denom `denom` (UTF-8) from a record's value, as a run logs it
/// ([`lantau_module_api::reads::Extract`]); `None` when the value is not a record.
pub fn part(record: Option<&[u8]>, denom: &[u8]) -> Option<Vec<u8>> {
    let Some(bytes) = record else { return Some(part_value(None, Amount::ZERO)) };
    let denom = std::str::from_utf8(denom).ok()?;
    Some(part_value(Some(bytes.len()), Balances::decode(bytes)?.get(denom)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written_and_has_one_encoding() {
        let mut b = Balances::default();
        b.set("hkd.demo", Amount(5));
        b.set("alantau", Amount(7));
        b.set("hkd.other", Amount(0));
        let bytes = b.encode().unwrap();
        assert_eq!(Balances::decode(&bytes), Some(b.clone()));
        assert_eq!((b.get("alantau"), b.get("hkd.demo"), b.get("hkd.other")), (Amount(7), Amount(5), Amount::ZERO));
        assert_eq!(b.coins(), vec![Coin::new("alantau", Amount(7)), Coin::new("hkd.demo", Amount(5))]);
        b.set("alantau", Amount::ZERO);
        b.set("hkd.demo", Amount::ZERO);
        assert!(b.is_empty() && b.encode().unwrap().is_empty());
        // Out of order, repeated, zero or truncated: refused.
        let entry = |d: &str, a: u128| [&[d.len() as u8][..], d.as_bytes(), &a.to_be_bytes()].concat();
        assert_eq!(Balances::decode(&[entry("hkd.demo", 1), entry("alantau", 1)].concat()), None);
        assert_eq!(Balances::decode(&[entry("alantau", 1), entry("alantau", 2)].concat()), None);
        assert_eq!(Balances::decode(&entry("alantau", 0)), None);
        assert_eq!(Balances::decode(&entry("alantau", 1)[..10]), None);
    }

    #[test]
    fn a_part_is_the_amount_of_one_denom_and_the_records_length() {
        let mut b = Balances::default();
        b.set("alantau", Amount(7));
        b.set("hkd.demo", Amount(5));
        let bytes = b.encode().unwrap();
        let native = part(Some(&bytes), b"alantau").unwrap();
        assert_eq!(native, part_value(Some(bytes.len()), Amount(7)));
        // Another denom's amount changes: the part holds. Its own amount, or the record's
        // length, changes: it does not. No record and an empty part are the same.
        b.set("hkd.demo", Amount(9));
        assert_eq!(part(Some(&b.encode().unwrap()), b"alantau").unwrap(), native);
        b.set("hkd.other", Amount(1));
        assert_ne!(part(Some(&b.encode().unwrap()), b"alantau").unwrap(), native);
        assert_ne!(part(Some(&bytes), b"hkd.demo").unwrap(), native);
        assert_eq!(part(None, b"alantau"), Some(Vec::new()));
        assert_eq!(part(Some(&[1, 2]), b"alantau"), None);
    }
}

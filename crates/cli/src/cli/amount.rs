//! Amounts as people write and read them. By default a stablecoin amount is in its display
//! unit with the denom's two decimals (`1.50hkd.demo` is HKD 1.50, 150 base units), the
//! native coin is written either in base units (`777alantau`) or in its display unit with 18
//! decimals (`2.5lantau`); balances print the same way. `--base-units` makes every amount a
//! whole number of base units, in and out, as the chain stores them.

use std::sync::atomic::{AtomicBool, Ordering};

use lantau_primitives::{Amount, Coin, Denom, NATIVE_DENOM, NATIVE_DISPLAY};

static BASE_UNITS: AtomicBool = AtomicBool::new(false);

/// Sets `--base-units` (once, at start).
pub(crate) fn set_base_units(on: bool) {
    BASE_UNITS.store(on, Ordering::Relaxed);
}

fn base_units() -> bool {
    BASE_UNITS.load(Ordering::Relaxed)
}

/// The native coin's display unit as written on the command line (`lantau`).
fn native_display() -> String {
    NATIVE_DISPLAY.to_ascii_lowercase()
}

/// `(base denom, decimals)` of a denom as written: `lantau` is 18 decimals of `alantau`, a
/// stablecoin 2 of itself, anything else (and everything under `--base-units`) none.
fn unit(denom: &str) -> (String, u32) {
    if base_units() {
        return (denom.to_string(), 0);
    }
    if denom == native_display() {
        return (NATIVE_DENOM.to_string(), 18);
    }
    if lantau_primitives::is_stablecoin(denom) {
        return (denom.to_string(), 2);
    }
    (denom.to_string(), 0)
}

/// Parses `<amount><denom>` (see the module documentation).
pub(crate) fn parse_coin(s: &str) -> anyhow::Result<Coin> {
    let s = s.trim();
    let split =
        s.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(|| anyhow::anyhow!("{s:?} has no denom: write e.g. 1.50hkd.demo or 777alantau"))?;
    let (num, denom) = s.split_at(split);
    let (base, decimals) = unit(denom);
    Denom::new(&base).map_err(|e| anyhow::anyhow!("{s:?}: {e}"))?;
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    anyhow::ensure!(!whole.is_empty() || !frac.is_empty(), "{s:?} has no amount");
    anyhow::ensure!(!frac.contains('.'), "{s:?} is not a number");
    if frac.len() > decimals as usize {
        anyhow::bail!("{s:?}: {denom} takes at most {decimals} decimals{}", if decimals == 0 { " (a whole number of base units)" } else { "" });
    }
    let digits = format!("{whole}{frac:0<width$}", width = decimals as usize);
    anyhow::ensure!(digits.bytes().all(|b| b.is_ascii_digit()), "{s:?} is not a number");
    let amount: u128 = digits.parse().map_err(|_| anyhow::anyhow!("{s:?}: amount out of range"))?;
    Ok(Coin { denom: base, amount: Amount(amount) })
}

/// A coin as the CLI prints it (see the module documentation).
pub(crate) fn format_coin(c: &Coin) -> String {
    if base_units() {
        return format!("{}{}", c.amount, c.denom);
    }
    let (shown, decimals) = if c.denom == NATIVE_DENOM {
        (native_display(), 18u32)
    } else if c.is_stablecoin() {
        (c.denom.clone(), 2)
    } else {
        return format!("{}{}", c.amount, c.denom);
    };
    let scale = 10u128.pow(decimals);
    let (whole, frac) = (c.amount.0 / scale, c.amount.0 % scale);
    let mut frac = format!("{frac:0width$}", width = decimals as usize);
    if c.denom == NATIVE_DENOM {
        // The native coin's 18 decimals are trimmed; a stablecoin always shows its cents.
        frac = frac.trim_end_matches('0').to_string();
    }
    if frac.is_empty() {
        format!("{whole}{shown}")
    } else {
        format!("{whole}.{frac}{shown}")
    }
}

/// Prints a base-unit amount of `denom` (as a JSON record holds it) the CLI's way.
pub(crate) fn format_amount(amount: &str, denom: &str) -> String {
    match amount.parse::<u128>() {
        Ok(a) => format_coin(&Coin { denom: denom.to_string(), amount: Amount(a) }),
        Err(_) => format!("{amount}{denom}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_units_both_ways() {
        assert_eq!(parse_coin("1.50hkd.demo").unwrap(), Coin::new("hkd.demo", 150u128));
        assert_eq!(parse_coin("300hkd.demo").unwrap(), Coin::new("hkd.demo", 30_000u128));
        assert_eq!(parse_coin("2.5lantau").unwrap(), Coin::new("alantau", 2_500_000_000_000_000_000u128));
        assert_eq!(parse_coin("777alantau").unwrap(), Coin::new("alantau", 777u128));
        assert!(parse_coin("1.505hkd.demo").unwrap_err().to_string().contains("at most 2 decimals"));
        assert!(parse_coin("1.5alantau").is_err());
        assert!(parse_coin("hkd.demo").is_err());
        assert_eq!(format_coin(&Coin::new("hkd.demo", 100_000_000u128)), "1000000.00hkd.demo");
        assert_eq!(format_coin(&Coin::new("hkd.demo", 5u128)), "0.05hkd.demo");
        assert_eq!(format_coin(&Coin::new("alantau", 1_500_000_000_000_000_000u128)), "1.5lantau");
        assert_eq!(format_coin(&Coin::new("alantau", 2_000_000_000_000_000_000_000u128)), "2000lantau");
        assert_eq!(format_coin(&Coin::new("alantau", 777u128)), "0.000000000000000777lantau");
    }
}

//! The CometBFT (v0.38) event query language, as used by CometBFT's `tx_search` and WebSocket
//! `subscribe`, and by the Cosmos SDK's `GET /cosmos/tx/v1beta1/txs?query=...`: a parser, a
//! canonical printer and a matcher over flattened `(composite_key, value)` event attributes.
//!
//! # Grammar
//!
//! ```text
//! query     = condition { "AND" condition }          (no OR, no parentheses)
//! condition = tag "EXISTS"
//!           | tag "=" (string | number | date | time)
//!           | tag ("<" | "<=" | ">" | ">=") (number | date | time)
//!           | tag "CONTAINS" string
//! tag       = [A-Za-z0-9_./-]+                        e.g. tm.event, tx.height, message.sender
//! string    = "'" { any character except "'" } "'"  (no escape sequences)
//! number    = ["-"] digit+ ["." digit+]
//! date      = "DATE" ws yyyy-mm-dd
//! time      = "TIME" ws yyyy-mm-ddThh:mm:ss ("Z" | ("+" | "-") hh:mm)
//! ```
//!
//! Keywords are case-sensitive. Whitespace is optional around the symbolic operators.
//! Dates and timestamps must have years 1900..=2999, as in CometBFT.
//!
//! # Matching
//!
//! A condition holds when ANY value stored under its tag satisfies it (an event type can repeat,
//! e.g. several `transfer.amount`), and a query holds when all its conditions hold. Number
//! conditions compare numerically on the value's leading number (`100alantau` counts as 100);
//! values with no leading number never match them.
//!
//! Differences from CometBFT, all deliberate: tags are ASCII and may contain `/`; numbers may be
//! negative (CometBFT accepts no `-`, and never matches negative values); TIME operands and values
//! compare only when both are UTC (`Z`, `+00:00` or `-00:00`), lexicographically on their
//! fixed-width text plus fractional seconds; any other TIME value never matches.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Most conditions in one query (search, `tx_search`, `subscribe`): a bound on what matching
/// one event against one query costs.
pub const MAX_CONDITIONS: usize = 20;

/// A parsed query: the conjunction (AND) of its conditions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Query {
    /// The conditions, in source order; all must match.
    pub conditions: Vec<Condition>,
}

/// One condition: a composite-key tag and the test applied to its values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Condition {
    /// The composite key, `<event type>.<attribute key>`, e.g. `message.sender`.
    pub tag: String,
    /// The operator and its operand.
    pub op: Op,
}

/// A comparison operator with its operand.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// `=`: exact for strings, numeric for numbers, chronological for dates and times.
    Eq(Operand),
    /// `<` (the parser only accepts number, date and time operands for ordering).
    Lt(Operand),
    /// `<=`.
    Le(Operand),
    /// `>`.
    Gt(Operand),
    /// `>=`.
    Ge(Operand),
    /// `CONTAINS 'substring'`.
    Contains(String),
    /// `EXISTS`: the tag has any value.
    Exists,
}

/// The right-hand side of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A single-quoted string, without its quotes.
    Str(String),
    /// A number, compared numerically.
    Number(Number),
    /// `DATE yyyy-mm-dd`, without the keyword.
    Date(String),
    /// `TIME <RFC 3339>`, without the keyword; a zero offset is normalised to `Z`.
    Time(String),
}

/// An exact decimal number of any size, kept in canonical text form (no leading zeros in the
/// integer part, no trailing zeros in the fraction, no `-0`), so `Eq`/`Hash` agree with its
/// value and `Ord` is numeric.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Number(String);

impl Number {
    /// Parses exactly `-?digits(.digits)?`; returns `None` for anything else.
    pub fn parse(s: &str) -> Option<Number> {
        Self::parse_prefix(s).filter(|&(_, len)| len == s.len()).map(|(n, _)| n)
    }

    /// Parses the leading number of an event value as CometBFT does (`100alantau` gives 100,
    /// `6.5stake` gives 6.5); `None` when the value does not start with a number.
    pub fn from_value(value: &str) -> Option<Number> {
        Self::parse_prefix(value).map(|(n, _)| n)
    }

    fn parse_prefix(s: &str) -> Option<(Number, usize)> {
        let b = s.as_bytes();
        let digits = |from: usize| b[from.min(b.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
        let start = usize::from(b.first() == Some(&b'-'));
        let mut end = start + digits(start);
        if end == start {
            return None;
        }
        let int = s[start..end].trim_start_matches('0');
        let mut frac = "";
        if b.get(end) == Some(&b'.') && digits(end + 1) > 0 {
            frac = &s[end + 1..end + 1 + digits(end + 1)];
            end += 1 + frac.len();
        }
        let (int, frac) = (if int.is_empty() { "0" } else { int }, frac.trim_end_matches('0'));
        let minus = if start == 1 && (int != "0" || !frac.is_empty()) { "-" } else { "" };
        let dot = if frac.is_empty() { "" } else { "." };
        Some((Number(format!("{minus}{int}{dot}{frac}")), end))
    }

    /// The canonical text, e.g. `-12.5` or `100`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value as an `i128`, if it is an integer in range.
    pub fn to_i128(&self) -> Option<i128> {
        self.0.parse().ok()
    }

    fn parts(&self) -> (bool, &str, &str) {
        let (neg, mag) = self.0.strip_prefix('-').map_or((false, self.0.as_str()), |m| (true, m));
        let (int, frac) = mag.split_once('.').unwrap_or((mag, ""));
        (neg, int, frac)
    }

    /// Rounds down (`up == false`) or up to an integer, saturating at the `i128` range.
    fn round(&self, up: bool) -> i128 {
        let (neg, int, frac) = self.parts();
        let Ok(i) = int.parse::<i128>() else {
            return if neg { i128::MIN } else { i128::MAX };
        };
        let bump = i128::from(!frac.is_empty() && up != neg);
        if neg {
            (-i).saturating_sub(bump)
        } else {
            i.saturating_add(bump)
        }
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Self) -> Ordering {
        let ((an, ai, af), (bn, bi, bf)) = (self.parts(), other.parts());
        let magnitude = || ai.len().cmp(&bi.len()).then(ai.cmp(bi)).then(af.cmp(bf));
        match (an, bn) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => magnitude(),
            (true, true) => magnitude().reverse(),
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a query failed to parse. Every position is a byte offset into the query text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The query is empty or all whitespace.
    #[error("empty query")]
    Empty,
    /// More conditions than [`MAX_CONDITIONS`]: every event of every block is matched against
    /// every subscription's conditions, so their number is bounded.
    #[error("a query has at most {MAX_CONDITIONS} conditions; split it, or narrow it with fewer")]
    TooManyConditions,
    /// The query uses OR, which the language does not have.
    #[error("OR is not supported; run several queries and merge the results (OR at position {pos})")]
    OrNotSupported {
        /// Where the OR starts.
        pos: usize,
    },
    /// A `'` with no closing `'`.
    #[error("unterminated string starting at position {pos}")]
    UnterminatedString {
        /// Where the opening quote is.
        pos: usize,
    },
    /// Something other than what the grammar allows here.
    #[error("expected {expected} at position {pos}, found {found}")]
    Expected {
        /// What the grammar allows here.
        expected: String,
        /// What the query has here.
        found: String,
        /// Where.
        pos: usize,
    },
    /// A number, DATE or TIME literal that is malformed or out of range.
    #[error("invalid {kind} `{text}` at position {pos}: {reason}")]
    InvalidLiteral {
        /// `number`, `DATE` or `TIME`.
        kind: &'static str,
        /// The offending text.
        text: String,
        /// What is wrong with it.
        reason: &'static str,
        /// Where it starts.
        pos: usize,
    },
    /// A valid operand of a kind the operator does not accept.
    #[error("`{op}` needs {wants}, at position {pos}")]
    OperandMismatch {
        /// The operator.
        op: String,
        /// The operand kinds it accepts.
        wants: &'static str,
        /// Where the operand starts.
        pos: usize,
    },
}

const VALUE_FORMS: &str = "a 'quoted string', a number, DATE yyyy-mm-dd or TIME yyyy-mm-ddThh:mm:ssZ";

fn is_tag_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'/')
}

/// `pattern` uses `d` for an ASCII digit; every other byte must match literally.
fn shape_ok(s: &str, pattern: &str) -> bool {
    s.len() == pattern.len() && s.bytes().zip(pattern.bytes()).all(|(c, p)| if p == b'd' { c.is_ascii_digit() } else { c == p })
}

fn field(s: &str, from: usize, len: usize) -> u32 {
    s.get(from..from + len).and_then(|t| t.parse().ok()).unwrap_or(0)
}

fn check_date(s: &str) -> Result<(), &'static str> {
    if !shape_ok(s, "dddd-dd-dd") {
        return Err("expected yyyy-mm-dd");
    }
    let (y, m, d) = (field(s, 0, 4), field(s, 5, 2), field(s, 8, 2));
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        _ => return Err("month must be 01 to 12"),
    };
    if !(1900..=2999).contains(&y) {
        Err("year must be between 1900 and 2999")
    } else if d == 0 || d > days {
        Err("day is out of range for the month")
    } else {
        Ok(())
    }
}

/// Validates an RFC 3339 timestamp without fractional seconds; returns it with a zero offset as `Z`.
fn check_time(s: &str) -> Result<String, &'static str> {
    const FORMAT: &str = "expected yyyy-mm-ddThh:mm:ss followed by Z or +hh:mm / -hh:mm";
    check_date(s.get(..10).ok_or(FORMAT)?)?;
    let (clock, zone) = (s.get(10..19).ok_or(FORMAT)?, &s[19..]);
    let zone_ok = zone == "Z" || shape_ok(zone, "+dd:dd") || shape_ok(zone, "-dd:dd");
    if !shape_ok(clock, "Tdd:dd:dd") || !zone_ok {
        return Err(FORMAT);
    }
    if field(s, 11, 2) > 23 || field(s, 14, 2) > 59 || field(s, 17, 2) > 59 {
        return Err("hour, minute or second out of range");
    }
    if zone.len() == 6 && (field(zone, 1, 2) > 23 || field(zone, 4, 2) > 59) {
        return Err("offset out of range");
    }
    Ok(if zone.len() == 6 && &zone[1..] == "00:00" { format!("{}Z", &s[..19]) } else { s.to_string() })
}

/// Splits a UTC RFC 3339 timestamp into its fixed-width part and its fractional-second digits.
fn utc_key(s: &str) -> Option<(&str, &str)> {
    let base = s.get(..19).filter(|b| shape_ok(b, "dddd-dd-ddTdd:dd:dd"))?;
    let rest = &s[19..];
    let (frac, zone) = match rest.strip_prefix('.') {
        Some(r) => r.split_at(r.bytes().take_while(u8::is_ascii_digit).count()),
        None => ("", rest),
    };
    let ok = matches!(zone, "Z" | "+00:00" | "-00:00") && !(rest.starts_with('.') && frac.is_empty());
    ok.then(|| (base, frac.trim_end_matches('0')))
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) -> bool {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
        self.pos > start
    }

    fn scan(&mut self, ok: impl Fn(u8) -> bool) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(&ok) {
            self.pos += 1;
        }
        &self.src[start..self.pos]
    }

    fn expected(&self, expected: impl Into<String>) -> ParseError {
        let rest = &self.src[self.pos..];
        let found = match rest.chars().next() {
            None => "end of query".to_string(),
            Some(c) if c.is_ascii() && is_tag_byte(c as u8) => {
                format!("`{}`", &rest[..rest.bytes().take_while(|&b| is_tag_byte(b)).count()])
            }
            Some(c) => format!("`{c}`"),
        };
        ParseError::Expected { expected: expected.into(), found, pos: self.pos }
    }

    fn query(mut self) -> Result<Query, ParseError> {
        self.skip_ws();
        if self.peek().is_none() {
            return Err(ParseError::Empty);
        }
        let mut conditions = Vec::new();
        loop {
            if conditions.len() == MAX_CONDITIONS {
                return Err(ParseError::TooManyConditions);
            }
            conditions.push(self.condition()?);
            self.skip_ws();
            if self.peek().is_none() {
                return Ok(Query { conditions });
            }
            let at = self.pos;
            match self.scan(is_tag_byte) {
                "AND" => {}
                w if w.eq_ignore_ascii_case("or") => return Err(ParseError::OrNotSupported { pos: at }),
                w => {
                    self.pos = at;
                    let hint = if w.eq_ignore_ascii_case("and") { " (keywords are upper-case)" } else { "" };
                    return Err(self.expected(format!("`AND` or the end of the query{hint}")));
                }
            }
            self.skip_ws();
            if self.peek().is_none() {
                return Err(self.expected("a condition after `AND`"));
            }
        }
    }

    fn condition(&mut self) -> Result<Condition, ParseError> {
        let at = self.pos;
        let tag = self.scan(is_tag_byte);
        if tag.is_empty() || matches!(tag, "AND" | "OR" | "EXISTS" | "CONTAINS") {
            self.pos = at;
            return Err(self.expected("a tag such as `tx.height` or `message.sender`"));
        }
        self.skip_ws();
        let op_at = self.pos;
        let op = match self.peek() {
            Some(b'=') => {
                self.pos += 1;
                "="
            }
            Some(b'<' | b'>') => {
                self.pos += if self.src.as_bytes().get(op_at + 1) == Some(&b'=') { 2 } else { 1 };
                &self.src[op_at..self.pos]
            }
            _ => match self.scan(is_tag_byte) {
                "EXISTS" => return Ok(Condition { tag: tag.to_string(), op: Op::Exists }),
                "CONTAINS" => "CONTAINS",
                _ => {
                    self.pos = op_at;
                    let what = format!("an operator (=, <, <=, >, >=, CONTAINS or EXISTS) after \"{tag}\"");
                    return Err(self.expected(what));
                }
            },
        };
        self.skip_ws();
        let operand_at = self.pos;
        let mismatch = |wants| ParseError::OperandMismatch { op: op.to_string(), wants, pos: operand_at };
        let op = match (op, self.operand(op)?) {
            ("=", v) => Op::Eq(v),
            ("CONTAINS", Operand::Str(s)) => Op::Contains(s),
            ("CONTAINS", _) => return Err(mismatch("a 'quoted string'")),
            (_, Operand::Str(_)) => return Err(mismatch("a number, DATE or TIME (strings only support = and CONTAINS)")),
            ("<", v) => Op::Lt(v),
            ("<=", v) => Op::Le(v),
            (">", v) => Op::Gt(v),
            (_, v) => Op::Ge(v),
        };
        Ok(Condition { tag: tag.to_string(), op })
    }

    fn operand(&mut self, op: &str) -> Result<Operand, ParseError> {
        let at = self.pos;
        if self.peek() == Some(b'\'') {
            let body = &self.src[at + 1..];
            let len = body.find('\'').ok_or(ParseError::UnterminatedString { pos: at })?;
            self.pos = at + len + 2;
            return Ok(Operand::Str(body[..len].to_string()));
        }
        let word = self.scan(is_tag_byte);
        let invalid = |kind, text: &str, reason, pos| ParseError::InvalidLiteral { kind, text: text.into(), reason, pos };
        match word {
            "" => Err(self.expected(format!("a value after `{op}` ({VALUE_FORMS})"))),
            "DATE" | "TIME" => {
                if !self.skip_ws() {
                    return Err(self.expected(format!("whitespace and a value after {word}")));
                }
                let v_at = self.pos;
                if word == "DATE" {
                    let d = self.scan(|b| b.is_ascii_digit() || b == b'-');
                    check_date(d).map_err(|r| invalid("DATE", d, r, v_at))?;
                    Ok(Operand::Date(d.to_string()))
                } else {
                    let t = self.scan(|b| b.is_ascii_digit() || b"-+:TZ".contains(&b));
                    Ok(Operand::Time(check_time(t).map_err(|r| invalid("TIME", t, r, v_at))?))
                }
            }
            w if w.starts_with(|c: char| c.is_ascii_digit() || c == '-') => Number::parse(w)
                .map(Operand::Number)
                .ok_or_else(|| invalid("number", w, "expected digits with an optional - and fraction, like 42 or -3.5", at)),
            w => Err(ParseError::Expected {
                expected: format!("a value after `{op}` ({VALUE_FORMS})"),
                found: format!("bare word `{w}` (quote strings, like '{w}')"),
                pos: at,
            }),
        }
    }
}

impl Query {
    /// Parses query text; see the crate docs for the grammar. Never panics.
    pub fn parse(s: &str) -> Result<Query, ParseError> {
        Parser { src: s, pos: 0 }.query()
    }

    /// Whether every condition matches the events.
    pub fn matches<S: EventSource + ?Sized>(&self, events: &S) -> bool {
        self.conditions.iter().all(|c| c.matches(events))
    }

    /// `(tag, value)` for every `=` condition with a string or number operand (numbers in
    /// canonical form), for index lookups. Number pairs are only a hint (a stored `5alantau`
    /// equals 5 numerically), so candidates must still be checked with [`Query::matches`].
    pub fn equality_conditions(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.conditions.iter().filter_map(|c| match &c.op {
            Op::Eq(Operand::Str(s)) => Some((c.tag.as_str(), s.as_str())),
            Op::Eq(Operand::Number(n)) => Some((c.tag.as_str(), n.as_str())),
            _ => None,
        })
    }

    /// The inclusive `[min, max]` of `tx.height` implied by numeric `=`, `<`, `<=`, `>`, `>=`
    /// conditions on it (`None`: unbounded). If `min > max`, no height can match.
    pub fn height_range(&self) -> (Option<u64>, Option<u64>) {
        let (mut lo, mut hi): (Option<i128>, Option<i128>) = (None, None);
        for c in self.conditions.iter().filter(|c| c.tag == "tx.height") {
            let (l, h) = match &c.op {
                Op::Eq(Operand::Number(n)) => (Some(n.round(true)), Some(n.round(false))),
                Op::Gt(Operand::Number(n)) => (Some(n.round(false).saturating_add(1)), None),
                Op::Ge(Operand::Number(n)) => (Some(n.round(true)), None),
                Op::Lt(Operand::Number(n)) => (None, Some(n.round(true).saturating_sub(1))),
                Op::Le(Operand::Number(n)) => (None, Some(n.round(false))),
                _ => continue,
            };
            lo = lo.max(l);
            hi = match (hi, h) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        if hi.is_some_and(|h| h < 0) || lo.is_some_and(|l| l > i128::from(u64::MAX)) {
            return (Some(1), Some(0));
        }
        (lo.and_then(|l| u64::try_from(l.max(0)).ok()), hi.and_then(|h| u64::try_from(h).ok()))
    }
}

impl Condition {
    /// Whether any value under the tag satisfies the operator. A tag naming an event type
    /// itself (e.g. `transfer`) is tested against the empty string when that type is present,
    /// as in CometBFT, so `transfer EXISTS` works.
    pub fn matches<S: EventSource + ?Sized>(&self, events: &S) -> bool {
        let mut values = events.values(&self.tag).peekable();
        if values.peek().is_none() {
            return events.has_event_type(&self.tag) && self.op.matches_value("");
        }
        values.any(|v| self.op.matches_value(v))
    }
}

impl Op {
    /// Whether one stored value satisfies the operator. Ordering operators with a string
    /// operand (which the parser never produces) never match.
    pub fn matches_value(&self, value: &str) -> bool {
        let ord = |o: &Operand| -> Option<Ordering> {
            match o {
                Operand::Str(_) => None,
                Operand::Number(n) => Some(Number::from_value(value)?.cmp(n)),
                Operand::Date(d) => check_date(value).is_ok().then(|| value.cmp(d.as_str())),
                Operand::Time(t) => Some(utc_key(value)?.cmp(&utc_key(t)?)),
            }
        };
        match self {
            Op::Exists => true,
            Op::Contains(s) => value.contains(s.as_str()),
            Op::Eq(Operand::Str(s)) => value == s,
            Op::Eq(o) => ord(o) == Some(Ordering::Equal),
            Op::Lt(o) => ord(o) == Some(Ordering::Less),
            Op::Le(o) => matches!(ord(o), Some(Ordering::Less | Ordering::Equal)),
            Op::Gt(o) => ord(o) == Some(Ordering::Greater),
            Op::Ge(o) => matches!(ord(o), Some(Ordering::Greater | Ordering::Equal)),
        }
    }
}

impl FromStr for Query {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Query::parse(s)
    }
}

/// Canonical form: strings in single quotes, numbers bare, `DATE`/`TIME` prefixes.
impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Str(s) => write!(f, "'{s}'"),
            Operand::Number(n) => write!(f, "{n}"),
            Operand::Date(d) => write!(f, "DATE {d}"),
            Operand::Time(t) => write!(f, "TIME {t}"),
        }
    }
}

/// Canonical form, as CometBFT prints it: `tag op operand` with single spaces.
impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.tag;
        match &self.op {
            Op::Eq(o) => write!(f, "{t} = {o}"),
            Op::Lt(o) => write!(f, "{t} < {o}"),
            Op::Le(o) => write!(f, "{t} <= {o}"),
            Op::Gt(o) => write!(f, "{t} > {o}"),
            Op::Ge(o) => write!(f, "{t} >= {o}"),
            Op::Contains(s) => write!(f, "{t} CONTAINS '{s}'"),
            Op::Exists => write!(f, "{t} EXISTS"),
        }
    }
}

/// Canonical form: conditions joined by ` AND `; parses back to an equal [`Query`].
impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.conditions.iter().enumerate() {
            write!(f, "{}{c}", if i == 0 { "" } else { " AND " })?;
        }
        Ok(())
    }
}

/// Flattened event attributes: values keyed by composite key (`<event type>.<attribute key>`).
pub trait EventSource {
    /// Every value stored under `key`, in any order (repeats allowed).
    fn values<'a>(&'a self, key: &'a str) -> Box<dyn Iterator<Item = &'a str> + 'a>;

    /// Whether an event of this type is present (some key is `<event_type>.<attribute>`).
    /// The default says no, which only disables conditions whose tag is a bare event type.
    fn has_event_type(&self, event_type: &str) -> bool {
        let _ = event_type;
        false
    }
}

fn key_has_type(key: &str, event_type: &str) -> bool {
    key.rsplit_once('.').is_some_and(|(t, _)| t == event_type)
}

impl<K: AsRef<str>, V: AsRef<str>> EventSource for [(K, V)] {
    fn values<'a>(&'a self, key: &'a str) -> Box<dyn Iterator<Item = &'a str> + 'a> {
        Box::new(self.iter().filter(move |(k, _)| k.as_ref() == key).map(|(_, v)| v.as_ref()))
    }
    fn has_event_type(&self, event_type: &str) -> bool {
        self.iter().any(|(k, _)| key_has_type(k.as_ref(), event_type))
    }
}

impl<K: AsRef<str>, V: AsRef<str>> EventSource for Vec<(K, V)> {
    fn values<'a>(&'a self, key: &'a str) -> Box<dyn Iterator<Item = &'a str> + 'a> {
        self.as_slice().values(key)
    }
    fn has_event_type(&self, event_type: &str) -> bool {
        self.as_slice().has_event_type(event_type)
    }
}

impl EventSource for BTreeMap<String, Vec<String>> {
    fn values<'a>(&'a self, key: &'a str) -> Box<dyn Iterator<Item = &'a str> + 'a> {
        Box::new(self.get(key).into_iter().flatten().map(String::as_str))
    }
    fn has_event_type(&self, event_type: &str) -> bool {
        self.keys().any(|k| key_has_type(k, event_type))
    }
}

#[cfg(test)]
mod tests;

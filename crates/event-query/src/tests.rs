use super::*;
use proptest::prelude::*;

fn q(s: &str) -> Query {
    Query::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn err(s: &str) -> String {
    Query::parse(s).expect_err(s).to_string()
}

fn num(s: &str) -> Operand {
    Operand::Number(Number::parse(s).unwrap())
}

fn ev(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

const EXAMPLES: &[&str] = &[
    "tx.height=5",
    "tx.height = 5",
    "message.sender='lantau1abc'",
    "tm.event='Tx' AND message.sender='lantau1abc'",
    "transfer.recipient='x' AND tx.height>=3 AND tx.height<10",
    "message.action EXISTS",
    "transfer.amount CONTAINS 'hkd.demo'",
    "block.time >= TIME 2024-01-02T03:04:05Z AND block.date < DATE 2024-02-29",
    "a.b = -0012.500 AND c/d <= 7",
];

#[test]
fn parses_spec_examples() {
    let cond = |tag: &str, op| Condition { tag: tag.into(), op };
    assert_eq!(q("tx.height=5"), q("tx.height = 5"));
    assert_eq!(q("tx.height=5").conditions, vec![cond("tx.height", Op::Eq(num("5")))]);
    assert_eq!(
        q("tm.event='Tx' AND message.sender='lantau1abc'").conditions,
        vec![cond("tm.event", Op::Eq(Operand::Str("Tx".into()))), cond("message.sender", Op::Eq(Operand::Str("lantau1abc".into())))]
    );
    let range = q("transfer.recipient='x' AND tx.height>=3 AND tx.height<10");
    assert_eq!(range.conditions[1].op, Op::Ge(num("3")));
    assert_eq!(range.conditions[2].op, Op::Lt(num("10")));
    assert_eq!(q("message.action EXISTS").conditions, vec![cond("message.action", Op::Exists)]);
    assert_eq!(q("transfer.amount CONTAINS 'hkd.demo'").conditions[0].op, Op::Contains("hkd.demo".into()));
    assert_eq!(q("a = -0012.500").conditions[0].op, Op::Eq(num("-12.5")));
    assert_eq!(q("t = TIME 2024-01-02T03:04:05+00:00").conditions[0].op, Op::Eq(Operand::Time("2024-01-02T03:04:05Z".into())));
    assert_eq!("x.y EXISTS".parse::<Query>(), Ok(q("x.y EXISTS")));
}

#[test]
fn rejects_with_clear_errors() {
    assert_eq!(err(""), "empty query");
    assert_eq!(err("  "), "empty query");
    assert!(err("tx.height").starts_with("expected an operator (=, <, <=, >, >=, CONTAINS or EXISTS) after \"tx.height\" at position 9, found end of query"));
    assert!(err("tx.height=").contains("expected a value after `=`"), "{}", err("tx.height="));
    assert_eq!(Query::parse("a='x' OR b='y'"), Err(ParseError::OrNotSupported { pos: 6 }));
    assert!(err("a='x' OR b='y'").starts_with("OR is not supported; run several queries and merge"));
    assert_eq!(err("message.sender='unterminated"), "unterminated string starting at position 15");
    assert!(err("='x'").starts_with("expected a tag such as `tx.height`"), "{}", err("='x'"));
    assert!(err("a=='x'").ends_with("at position 2, found `=`"), "{}", err("a=='x'"));
    assert!(err("a='x' AND").contains("expected a condition after `AND` at position 9"));
    assert!(err("a = x").contains("found bare word `x` (quote strings, like 'x')"));
    assert!(err("a='x' and b='y'").contains("keywords are upper-case"));
    assert!(err("a < 'x'").starts_with("`<` needs a number, DATE or TIME"));
    assert!(err("a CONTAINS 5").starts_with("`CONTAINS` needs a 'quoted string'"));
    assert!(err("a = 1.2.3").starts_with("invalid number `1.2.3` at position 4"));
    assert!(err("a = DATE 2023-02-29").contains("day is out of range"));
    assert!(err("a = TIME 2023-02-01T25:00:00Z").contains("out of range"));
    assert!(err("a = TIME 2023-02-01").starts_with("invalid TIME"));
    assert!(err("a = DATE 1800-01-01").contains("year must be between 1900 and 2999"));
    assert!(err("tëst='x'").contains("found `ë`"));
}

#[test]
fn display_round_trips() {
    assert_eq!(q("tm.event='Tx'AND tx.height>=3").to_string(), "tm.event = 'Tx' AND tx.height >= 3");
    assert_eq!(q("a=-0.0 AND b EXISTS").to_string(), "a = 0 AND b EXISTS");
    for s in EXAMPLES {
        let parsed = q(s);
        assert_eq!(q(&parsed.to_string()), parsed, "{s}");
    }
}

#[test]
fn matching_semantics() {
    let events = ev(&[
        ("tm.event", "Tx"),
        ("tx.height", "10"),
        ("message.sender", "lantau1abc"),
        ("transfer.amount", "5alantau"),
        ("transfer.amount", "100hkd.demo"),
        ("block.time", "2024-01-02T03:04:05.5Z"),
        ("block.date", "2024-01-02"),
    ]);
    let yes = |s: &str| assert!(q(s).matches(&events), "{s} should match");
    let no = |s: &str| assert!(!q(s).matches(&events), "{s} should not match");
    yes("tx.height>9"); // a string comparison would say "10" < "9"
    no("tx.height<9");
    yes("tx.height = 10.0");
    yes("tx.height>=10 AND tx.height<=10");
    yes("tm.event='Tx' AND message.sender='lantau1abc'");
    no("tm.event='Tx' AND message.sender='lantau1xyz'"); // AND: one failing condition fails all
    no("message.sender='lantau1ab'"); // = on strings is exact
    yes("transfer.amount CONTAINS 'hkd.demo'"); // any value may match
    yes("transfer.amount > 99"); // numeric prefix of 100hkd.demo
    yes("transfer.amount < 6");
    no("message.sender > 0"); // non-numeric values never match numbers
    yes("tm.event EXISTS");
    no("message.action EXISTS");
    yes("transfer EXISTS"); // bare event type, as in CometBFT
    yes("block.time > TIME 2024-01-02T03:04:05Z AND block.time < TIME 2024-01-02T03:04:06Z");
    no("block.time > TIME 2024-01-02T04:04:05+01:00"); // non-UTC times are not compared
    yes("block.date >= DATE 2024-01-02 AND block.date < DATE 2024-01-10");
    let map: BTreeMap<String, Vec<String>> = [("tx.height".to_string(), vec!["3".to_string(), "7".to_string()])].into();
    assert!(q("tx.height = 7").matches(&map));
    assert!(!q("tx.height > 7").matches(&map));
    assert!(!q("tx.height < 4").matches(&events[..1]));
    assert!(q("tx.height EXISTS").matches(&[("tx.height", "1")][..]));
}

#[test]
fn numbers_compare_exactly() {
    let n = |s: &str| Number::parse(s).unwrap();
    assert!(n("-2") < n("-1.5") && n("-1.5") < n("0") && n("0") < n("0.05") && n("0.05") < n("0.5"));
    assert!(n("9") < n("10") && n("99999999999999999999999999999999999999999") > n("1"));
    assert_eq!(n("-0"), n("0"));
    assert_eq!(Number::from_value("6.5stake"), Some(n("6.5")));
    assert_eq!(Number::from_value("7."), Some(n("7")));
    assert_eq!(Number::from_value("stake"), None);
    assert_eq!(n("42").to_i128(), Some(42));
    assert_eq!(n("4.2").to_i128(), None);
}

#[test]
fn indexer_helpers() {
    let query = q("tm.event='Tx' AND tx.height>=3 AND tx.height<10 AND tx.height > 4.5 AND a.b = 05");
    assert_eq!(query.equality_conditions().collect::<Vec<_>>(), vec![("tm.event", "Tx"), ("a.b", "5")]);
    assert_eq!(query.height_range(), (Some(5), Some(9)));
    assert_eq!(q("tx.height = 5").height_range(), (Some(5), Some(5)));
    assert_eq!(q("tx.height <= 5.5").height_range(), (None, Some(5)));
    assert_eq!(q("tx.height > -3").height_range(), (Some(0), None));
    assert_eq!(q("tx.height < 0").height_range(), (Some(1), Some(0)));
    assert_eq!(q("tx.height = 5.5").height_range(), (Some(6), Some(5)));
    assert_eq!(q("tx.height < 99999999999999999999999999999999999999999999").height_range(), (None, None));
    assert_eq!(q("tx.height > 99999999999999999999999999").height_range(), (Some(1), Some(0)));
    assert_eq!(q("message.sender = 'x'").height_range(), (None, None));
}

#[test]
fn truncated_inputs_never_panic() {
    for s in EXAMPLES.iter().chain(&["message.sender='unterminated", "a = TIME 2024-01-02T03:04:05+01:00", "é'ü'"]) {
        for end in (0..=s.len()).filter(|&i| s.is_char_boundary(i)) {
            let (head, tail) = s.split_at(end);
            let _ = Query::parse(head);
            let _ = Query::parse(tail);
        }
    }
}

fn condition_strategy() -> impl Strategy<Value = Condition> {
    let operand = prop_oneof![
        "[a-zA-Z0-9 .:/_-]{0,10}".prop_map(Operand::Str),
        (any::<i64>(), 0u32..1000).prop_map(|(i, f)| num(&format!("{i}.{f}"))),
        (1900u32..3000, 1u32..13, 1u32..29).prop_map(|(y, m, d)| Operand::Date(format!("{y}-{m:02}-{d:02}"))),
        (1900u32..3000, 0u32..24).prop_map(|(y, h)| Operand::Time(format!("{y}-01-31T{h:02}:59:00Z"))),
    ];
    let op = prop_oneof![
        operand.clone().prop_map(Op::Eq),
        operand.prop_filter_map("ordered", |o| (!matches!(o, Operand::Str(_))).then_some(Op::Ge(o))),
        "[a-z ]{0,6}".prop_map(Op::Contains),
        Just(Op::Exists),
    ];
    ("[a-z_][a-z0-9_./-]{0,12}", op).prop_map(|(tag, op)| Condition { tag, op })
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(s in "[a-zA-Z0-9_.'= <>/:+ORANDEXISTCONTAINSDTé-]{0,48}", t in any::<String>()) {
        for input in [&s, &t] {
            if let Ok(parsed) = Query::parse(input) {
                prop_assert_eq!(Query::parse(&parsed.to_string()), Ok(parsed.clone()));
                let _ = parsed.matches(&ev(&[("a.b", "1"), ("tx.height", input.as_str())]));
                let _ = parsed.height_range();
            }
        }
    }

    #[test]
    fn generated_queries_round_trip(conditions in prop::collection::vec(condition_strategy(), 1..5)) {
        let query = Query { conditions };
        prop_assert_eq!(Query::parse(&query.to_string()), Ok(query.clone()));
    }
}

#[test]
fn a_query_has_at_most_max_conditions() {
    let q = |n: usize| (0..n).map(|i| format!("tx.height>{i}")).collect::<Vec<_>>().join(" AND ");
    assert_eq!(Query::parse(&q(MAX_CONDITIONS)).unwrap().conditions.len(), MAX_CONDITIONS);
    assert_eq!(Query::parse(&q(MAX_CONDITIONS + 1)), Err(ParseError::TooManyConditions));
}

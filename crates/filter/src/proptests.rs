//! Property tests: the parser never panics, and the printed form of any expression tree parses
//! back to a filter that evaluates identically.

use std::borrow::Cow;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use crate::ast::{Expr, Lit};
use crate::glob::Glob;
use crate::lexer::CmpOp;
use crate::{FieldValue, Filter};

type Rec = Vec<(&'static str, FieldValue<'static>)>;

const FIELDS: [&str; 4] = ["a", "b", "path", "x.y"];

fn bytes_strategy() -> impl Strategy<Value = Vec<u8>> {
    vec(select(vec![b'a', b'b', b'/', b'"', b'\\', b'\'', 0, b'\n', 0xff, 0xc3, 0xa9, b' ']), 0..5)
}

fn lit_strategy() -> impl Strategy<Value = Lit> {
    prop_oneof![
        Just(Lit::Null),
        any::<bool>().prop_map(Lit::Bool),
        (-3i128..4).prop_map(Lit::Int),
        select(vec![i128::from(i64::MIN), i128::from(u64::MAX), i128::from(i64::MAX), 1 << 53])
            .prop_map(Lit::Int),
        select(vec![0.5, -1.5, 2.0, -0.0, 0.0, 1e300, 1e-7, 3.0, 9.2e18, 1.8446744073709552e19])
            .prop_map(Lit::Float),
        bytes_strategy().prop_map(Lit::Bytes),
    ]
}

fn op_strategy() -> impl Strategy<Value = CmpOp> {
    select(vec![CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge])
}

fn field_strategy() -> impl Strategy<Value = Box<str>> {
    select(FIELDS.to_vec()).prop_map(Box::from)
}

fn glob_strategy() -> impl Strategy<Value = Vec<u8>> {
    vec(select(vec!["a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "\\*", "\"", "\u{e9}"]), 0..6)
        .prop_map(|parts| parts.concat().into_bytes())
}

fn leaf_strategy() -> impl Strategy<Value = Expr> {
    prop_oneof![
        any::<bool>().prop_map(Expr::Const),
        field_strategy().prop_map(Expr::Truthy),
        (field_strategy(), op_strategy(), lit_strategy()).prop_map(|(field, op, lit)| {
            // `null` only goes with == and !=.
            let op = if lit == Lit::Null && !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                CmpOp::Eq
            } else {
                op
            };
            Expr::Compare { field, op, lit }
        }),
        (field_strategy(), any::<bool>(), glob_strategy()).prop_map(|(field, negated, pattern)| {
            let glob = Glob::compile(&pattern).expect("generated patterns are valid");
            Expr::Glob { field, negated, pattern, glob }
        }),
        (field_strategy(), any::<bool>(), vec(lit_strategy(), 0..4))
            .prop_map(|(field, negated, set)| Expr::In { field, negated, set }),
    ]
}

fn expr_strategy() -> impl Strategy<Value = Expr> {
    leaf_strategy().prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| Expr::Not(Box::new(e))),
            vec(inner.clone(), 2..4).prop_map(Expr::And),
            vec(inner, 2..4).prop_map(Expr::Or),
        ]
    })
}

fn value_strategy() -> impl Strategy<Value = Option<FieldValue<'static>>> {
    prop_oneof![
        Just(None),
        Just(Some(FieldValue::Null)),
        any::<bool>().prop_map(|b| Some(FieldValue::Bool(b))),
        (-3i64..4).prop_map(|i| Some(FieldValue::Int(i))),
        select(vec![i64::MIN, i64::MAX]).prop_map(|i| Some(FieldValue::Int(i))),
        select(vec![0u64, 1, 3, u64::MAX, 1 << 53]).prop_map(|u| Some(FieldValue::UInt(u))),
        select(vec![0.5, -1.5, 2.0, -0.0, f64::NAN, f64::INFINITY, 1e300, 1e-7])
            .prop_map(|f| Some(FieldValue::Float(f))),
        bytes_strategy().prop_map(|b| Some(FieldValue::Bytes(Cow::Owned(b)))),
        vec(select(vec![b'a', b'b', b'/', b'*', 0xc3, 0xa9, b'"']), 0..8)
            .prop_map(|b| Some(FieldValue::Bytes(Cow::Owned(b)))),
    ]
}

fn record_strategy() -> impl Strategy<Value = Rec> {
    vec(value_strategy(), FIELDS.len()).prop_map(|values| {
        FIELDS.iter().zip(values).filter_map(|(&name, v)| v.map(|v| (name, v))).collect()
    })
}

/// Token soup: fragments that are each meaningful, in random order, so the parser gets past
/// the lexer far more often than with random bytes.
fn soup_strategy() -> impl Strategy<Value = String> {
    vec(
        select(vec![
            "uid",
            "path",
            "op",
            "==",
            "!=",
            "<",
            "<=",
            ">",
            ">=",
            "~",
            "!~",
            "=",
            "<>",
            "in",
            "not",
            "and",
            "or",
            "&&",
            "||",
            "!",
            "(",
            ")",
            "{",
            "}",
            ",",
            "0",
            "-1",
            "1K",
            "0x1f",
            "1.5",
            "1e3",
            "true",
            "false",
            "null",
            "\"a*\"",
            "'b'",
            "\"\\x00\"",
            "\"[\"",
            "\"",
            "99999999999999999999",
            "-",
            "&",
            "|",
            "é",
            "\\",
            ".",
        ]),
        0..24,
    )
    .prop_flat_map(|parts| {
        let n = parts.len();
        (Just(parts), vec(select(vec!["", " "]), n))
    })
    .prop_map(|(parts, seps)| parts.iter().zip(seps).flat_map(|(p, s)| [*p, s]).collect::<String>())
}

/// Parses `src`; when it parses, checks the printed form round-trips on `records`.
fn check_source(src: &str, records: &[Rec]) -> Result<(), TestCaseError> {
    let Ok(f) = Filter::parse(src) else { return Ok(()) };
    let printed = f.to_string();
    let g = Filter::parse(&printed)
        .map_err(|e| TestCaseError::fail(format!("{src:?} printed as {printed:?}: {e}")))?;
    prop_assert_eq!(g.to_string(), printed.clone());
    for r in records {
        prop_assert_eq!(f.matches(r), g.matches(r), "{:?} vs {:?} on {:?}", src, printed, r);
    }
    Ok(())
}

proptest! {
    #[test]
    fn random_bytes_never_panic(input in vec(any::<u8>(), 0..200), records in vec(record_strategy(), 3)) {
        let src = String::from_utf8_lossy(&input);
        check_source(&src, &records)?;
        if let Err(e) = Filter::parse(&src) {
            prop_assert!(e.column >= 1);
            prop_assert!(e.offset <= src.len());
            let _ = e.render(&src);
        }
    }

    #[test]
    fn token_soup_never_panics(src in soup_strategy(), records in vec(record_strategy(), 3)) {
        check_source(&src, &records)?;
        if let Err(e) = Filter::parse(&src) {
            prop_assert!(e.offset <= src.len());
            prop_assert!(src.is_char_boundary(e.offset));
            prop_assert_eq!(e.column, crate::ParseError::column_of(&src, e.offset));
        }
    }

    #[test]
    fn printed_ast_round_trips(expr in expr_strategy(), records in vec(record_strategy(), 8)) {
        let f = Filter { expr, source: String::new() };
        let printed = f.to_string();
        let g = Filter::parse(&printed)
            .map_err(|e| TestCaseError::fail(format!("{printed:?} does not parse: {e}")))?;
        prop_assert_eq!(g.to_string(), printed.clone(), "printing is a fixed point");
        let mut want = f.fields();
        want.sort_unstable();
        let mut got = g.fields();
        got.sort_unstable();
        prop_assert_eq!(got, want);
        for r in &records {
            prop_assert_eq!(f.matches(r), g.matches(r), "{} on {:?}", printed, r);
        }
    }
}

//! Unit tests of the whole pipeline: parse, evaluate, print, errors.

use std::borrow::Cow;

use crate::{FieldValue, Filter, ParseError, Record};

/// A record from (name, value) pairs.
struct Rec(Vec<(&'static str, FieldValue<'static>)>);

impl Record for Rec {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        Record::get(&self.0, field)
    }
}

fn b(s: &'static str) -> FieldValue<'static> {
    FieldValue::Bytes(Cow::Borrowed(s.as_bytes()))
}

/// An `open` record.
fn open_rec() -> Rec {
    Rec(vec![
        ("op", b("open")),
        ("uid", FieldValue::UInt(0)),
        ("gid", FieldValue::Int(100)),
        ("pid", FieldValue::Int(4242)),
        ("path", b("/var/log/app.log")),
        ("fd", FieldValue::Int(3)),
        ("ret", FieldValue::Int(3)),
        ("errno", FieldValue::Int(0)),
        ("ratio", FieldValue::Float(0.5)),
        ("cached", FieldValue::Bool(true)),
        ("sync", FieldValue::Bool(false)),
        ("name", FieldValue::Bytes(Cow::Borrowed(b"foo\0"))),
        ("comm", b("")),
        ("parent", FieldValue::Null),
        ("record_id", FieldValue::UInt(38_549_988_049)),
        ("bytes_requested", FieldValue::UInt(2 << 20)),
    ])
}

/// A `close` record: no path.
fn close_rec() -> Rec {
    Rec(vec![
        ("op", b("close")),
        ("uid", FieldValue::UInt(1000)),
        ("fd", FieldValue::Int(3)),
        ("ret", FieldValue::Int(-1)),
        ("errno", FieldValue::Int(9)),
    ])
}

fn eval(src: &str, r: &Rec) -> bool {
    let f = Filter::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    let got = f.matches(r);
    // Every test doubles as a round-trip test of the printed form.
    let printed = f.to_string();
    let again = Filter::parse(&printed).unwrap_or_else(|e| panic!("{src} -> {printed}: {e}"));
    assert_eq!(again.matches(r), got, "{src} -> {printed}");
    assert_eq!(again.to_string(), printed, "printing is idempotent");
    got
}

#[track_caller]
fn yes(src: &str) {
    assert!(eval(src, &open_rec()), "expected `{src}` to match the open record");
}

#[track_caller]
fn no(src: &str) {
    assert!(!eval(src, &open_rec()), "expected `{src}` not to match the open record");
}

#[test]
fn brief_examples_parse() {
    for src in [
        r#"uid == 0 && path ~ "*.log" || op in {open, unlink}"#,
        "record_id < 38549988050",
        "errno != 0",
        "ret >= 4096 and fd == 3",
        "!(op == close)",
        r#"path ~ "/tmp/**""#,
        "bytes_requested > 1M",
        r#"name == "foo\x00""#,
        "type in {read, pread}",
    ] {
        Filter::parse(src).unwrap_or_else(|e| panic!("{e}"));
    }
    yes(r#"uid == 0 && path ~ "**.log" || op in {open, unlink}"#);
    yes("record_id < 38549988050");
    no("errno != 0");
    no("ret >= 4096 and fd == 3");
    yes("!(op == close)");
    no(r#"path ~ "/tmp/**""#);
    yes("bytes_requested > 1M");
    yes(r#"name == "foo\x00""#);
    no("type in {read, pread}");
}

#[test]
fn equality() {
    yes("uid == 0");
    no("uid == 1");
    yes("uid != 1");
    no("uid != 0");
    yes("uid = 0");
    yes("uid <> 1");
    yes("gid == 100");
    yes("gid == 100.0");
    no("gid == 100.5");
    yes("ratio == 0.5");
    yes("ratio == 5e-1");
    yes("op == open");
    yes(r#"op == "open""#);
    yes("op == 'open'");
    no("op == opens");
    no("op == Open");
    yes("cached == true");
    yes("sync == false");
    no("cached == false");
    yes("parent == null");
    no("parent != null");
    yes("op != null");
}

#[test]
fn ordering() {
    yes("fd < 4");
    no("fd < 3");
    yes("fd <= 3");
    no("fd <= 2");
    yes("fd > 2");
    no("fd > 3");
    yes("fd >= 3");
    no("fd >= 4");
    yes("fd > -1");
    yes("fd > 2.5");
    no("fd > 3.5");
    yes("ratio < 1");
    yes("ratio > 0");
    yes("ratio >= 0.5");
    yes("uid >= -5");
    yes("record_id > 0xffffffff");
    yes("record_id < 18446744073709551615");
    // Bytes order lexicographically.
    yes(r#"op < "opf""#);
    yes(r#"op > "ope""#);
    yes(r#"op < "ope\xff""#);
    yes(r#"op >= "open""#);
    no(r#"op > "open""#);
    yes(r#"op < "open\x00""#);
    yes(r#"comm < "a""#);
    // Booleans: false < true.
    yes("sync < true");
    yes("cached > false");
    no("cached > true");
}

#[test]
fn unsigned_and_signed_extremes() {
    let r = Rec(vec![
        ("u", FieldValue::UInt(u64::MAX)),
        ("i", FieldValue::Int(i64::MIN)),
        ("f", FieldValue::Float(f64::NAN)),
        ("inf", FieldValue::Float(f64::INFINITY)),
    ]);
    assert!(eval("u == 18446744073709551615", &r));
    assert!(eval("u == 0xffff_ffff_ffff_ffff", &r));
    assert!(eval("u > 9223372036854775807", &r));
    assert!(eval("u > -1", &r));
    assert!(eval("u < 18446744073709551616.0", &r));
    assert!(eval("i == -9223372036854775808", &r));
    assert!(eval("i < -9223372036854775807", &r));
    assert!(!eval("i < u", &r), "`u` is the string \"u\": a mismatch");
    // NaN compares with nothing, but != is the negation of ==.
    for op in ["==", "<", "<=", ">", ">="] {
        assert!(!eval(&format!("f {op} 0"), &r), "{op}");
        assert!(!eval(&format!("f {op} 1.5"), &r), "{op}");
    }
    assert!(eval("f != 0", &r));
    assert!(eval("inf > 18446744073709551615", &r));
    assert!(eval("inf > 1e308", &r));
}

#[test]
fn type_mismatches_are_false_not_errors() {
    no(r#"uid == "0""#);
    yes(r#"uid != "0""#);
    no(r#"uid < "a""#);
    no(r#"uid >= "a""#);
    no("op == 0");
    no("op > 0");
    no("op < 0");
    no("cached == 1");
    no("uid == true");
    no("uid ~ \"0\"");
    yes("uid !~ \"0\"");
    no("op in {1, 2, true}");
    yes("op not in {1, 2, true}");
}

#[test]
fn missing_and_null() {
    let close = close_rec();
    // `path` is missing on a close; `parent` is null on the open record.
    for (field, r) in [("path", &close), ("parent", &open_rec())] {
        for (op, value) in [
            ("==", "\"x\""),
            ("==", "0"),
            ("==", "true"),
            ("<", "0"),
            ("<=", "0"),
            (">", "0"),
            (">=", "0"),
            ("<", "\"x\""),
            ("~", "\"**\""),
            ("~", "\"\""),
            ("in", "{\"x\", 0}"),
        ] {
            let src = format!("{field} {op} {value}");
            assert!(!eval(&src, r), "{src}");
        }
        for src in [
            format!("{field} != \"x\""),
            format!("{field} != 0"),
            format!("{field} == null"),
            format!("{field} !~ \"**\""),
            format!("{field} not in {{\"x\", 0}}"),
            format!("{field} in {{1, null}}"),
            format!("!{field}"),
        ] {
            assert!(eval(&src, r), "{src}");
        }
        assert!(!eval(&format!("{field} != null"), r));
        assert!(!eval(&format!("{field} not in {{null}}"), r));
    }
    // Present, non-null fields are not null.
    no("op == null");
    yes("op != null");
    no("uid in {null}");
}

#[test]
fn bare_field_truthiness() {
    yes("op");
    yes("gid");
    no("uid"); // 0
    no("errno");
    yes("ratio");
    yes("cached");
    no("sync");
    yes("name");
    no("comm"); // empty
    no("parent"); // null
    no("nonexistent");
    yes("!uid");
    yes("!nonexistent");
    yes("op && gid");
    yes("uid || gid");
    no("uid || errno");
    assert!(eval("ratio", &Rec(vec![("ratio", FieldValue::Float(f64::NAN))])));
    assert!(!eval("ratio", &Rec(vec![("ratio", FieldValue::Float(-0.0))])));
}

#[test]
fn constants() {
    yes("true");
    no("false");
    yes("!false");
    yes("true && (false || true)");
    no("true and false");
}

#[test]
fn globs() {
    yes(r#"path ~ "/var/log/*.log""#);
    yes(r#"path ~ "**.log""#);
    yes(r#"path ~ "/var/**""#);
    yes(r#"path ~ "/*/*/*""#);
    no(r#"path ~ "*.log""#);
    no(r#"path ~ "/var/*""#);
    no(r#"path ~ "/var/log""#);
    yes(r#"path ~ "/var/log/app.lo?""#);
    yes(r#"path ~ "/var/lo[a-z]/[abc]pp.log""#);
    no(r#"path ~ "/var/lo[!g]/app.log""#);
    yes(r#"path ~ "/var/lo[!x]/app.log""#);
    yes(r#"path !~ "/tmp/**""#);
    no(r#"path !~ "/var/**""#);
    yes(r#"path =~ "**app**""#);
    yes(r#"op ~ "op*""#);
    yes("op ~ open");
    no("op ~ ope");
    yes(r#"name ~ "foo\x00""#);
    yes(r#"name ~ "f?o?""#);
    yes(r#"name ~ "fo*""#);
    yes(r#"path ~ '**\.log'"#.replace('\\', "\\\\").as_str());
    let star = Rec(vec![("p", b("a*b")), ("q", b("axb"))]);
    assert!(eval(r#"p ~ "a\\*b""#, &star));
    assert!(!eval(r#"q ~ "a\\*b""#, &star));
    assert!(eval(r#"q ~ "a*b""#, &star));
}

#[test]
fn glob_with_non_utf8_bytes() {
    let r = Rec(vec![("p", FieldValue::Bytes(Cow::Borrowed(b"/tmp/\xff\xfe.bin")))]);
    assert!(eval(r#"p ~ "/tmp/*.bin""#, &r));
    assert!(eval(r#"p ~ "/tmp/\xff?.bin""#, &r));
    assert!(!eval(r#"p ~ "/tmp/\xfe?.bin""#, &r));
    assert!(eval(r#"p == "/tmp/\xff\xfe.bin""#, &r));
}

#[test]
fn pathological_glob_through_filter_is_fast() {
    let long = "a".repeat(50_000);
    let r = Rec(vec![("p", FieldValue::Bytes(Cow::Owned(long.into_bytes())))]);
    let f = Filter::parse(&format!("p ~ \"{}b\"", "*a".repeat(40))).unwrap();
    let g = Filter::parse(&format!("p ~ \"{}b\"", "**a".repeat(40))).unwrap();
    let start = std::time::Instant::now();
    assert!(!f.matches(&r));
    assert!(!g.matches(&r));
    assert!(start.elapsed() < std::time::Duration::from_secs(10), "{:?}", start.elapsed());
}

#[test]
fn sets() {
    yes("op in {open, unlink}");
    yes("op in {unlink, open,}");
    yes(r#"op in {"open"}"#);
    no("op in {read, pread}");
    no("op in {}");
    yes("op not in {}");
    yes("op not in {read, pread}");
    no("op not in {open}");
    yes("fd in {1, 2, 3}");
    yes("fd in {3.0}");
    yes("fd in {0x3}");
    no("fd in {-3, 4}");
    yes("cached in {true}");
    yes("parent in {null}");
    yes("!(op in {close})");
}

#[test]
fn logic() {
    yes("uid == 0 && fd == 3");
    no("uid == 0 && fd == 4");
    yes("uid == 1 || fd == 3");
    no("uid == 1 || fd == 4");
    yes("uid == 0 and fd == 3");
    yes("uid == 1 or fd == 3");
    yes("!(uid == 1)");
    yes("not (uid == 1)");
    yes("not uid == 1");
    yes("!!(uid == 0)");
    yes("not not uid == 0");
    no("!(uid == 0)");
    yes("uid == 0 && fd == 3 && op == open && errno == 0");
    yes("uid == 1 || fd == 4 || op == open");
}

#[test]
fn precedence() {
    // `||` binds loosest: a || (b && c).
    yes("uid == 0 || fd == 4 && op == close");
    no("(uid == 0 || fd == 4) && op == close");
    // `&&` binds looser than `!`: (!a) && b.
    no("!uid == 0 && fd == 3");
    yes("!(uid == 0 && fd == 4)");
    no("!uid == 0 || fd == 4");
    // `!` binds looser than the comparison: `!uid == 1` is `!(uid == 1)`.
    yes("!uid == 1");
    assert_eq!(Filter::parse("!uid == 1").unwrap().to_string(), "!(uid == 1)");
    assert_eq!(
        Filter::parse("a || b && c").unwrap().to_string(),
        "a || (b && c)",
        "and binds tighter than or"
    );
    assert_eq!(Filter::parse("a && b || c").unwrap().to_string(), "(a && b) || c");
    assert_eq!(Filter::parse("not a and b or c").unwrap().to_string(), "((!a) && b) || c");
    assert_eq!(Filter::parse("!a && !b").unwrap().to_string(), "(!a) && (!b)");
    assert_eq!(Filter::parse("a or b or c").unwrap().to_string(), "a || b || c");
    assert_eq!(Filter::parse("(a or b) or c").unwrap().to_string(), "(a || b) || c");
    assert_eq!(Filter::parse("((((a))))").unwrap().to_string(), "a");
}

#[test]
fn literals() {
    yes("bytes_requested == 2M");
    yes("bytes_requested == 2Mi");
    yes("bytes_requested == 2MiB");
    yes("bytes_requested == 2048K");
    yes("bytes_requested == 2048k");
    yes("bytes_requested == 2097152");
    yes("bytes_requested == 0x200000");
    yes("bytes_requested == 0o10000000");
    yes("bytes_requested == 0b1000000000000000000000");
    yes("bytes_requested == 2_097_152");
    yes("bytes_requested == 2097152.0");
    yes("bytes_requested == 0.001953125G");
    yes("bytes_requested < 1G");
    yes("bytes_requested < 1Gi");
    yes("bytes_requested < 1T");
    yes("ret > -4K");
    yes("gid == 1e2");
    yes("gid == 100B");
    yes(r#"name == "foo\0""#);
    yes(r#"name == "\x66\x6F\x6f\x00""#);
    yes(r#"name != "foo""#);
    let r = Rec(vec![("s", FieldValue::Bytes(Cow::Borrowed(b"a\"b'c\\d\ne\tf\rg")))]);
    assert!(eval(r#"s == "a\"b'c\\d\ne\tf\rg""#, &r));
    assert!(eval(r#"s == 'a"b\'c\\d\ne\tf\rg'"#, &r));
    let r = Rec(vec![("s", b("héllo ☃"))]);
    assert!(eval(r#"s == "héllo ☃""#, &r));
    assert!(eval(r#"s == "h\xc3\xa9llo \xe2\x98\x83""#, &r));
    assert!(!eval("s ~ \"h?\"", &r), "`?` is one byte, not one character");
    assert!(eval("s ~ \"h??llo*\"", &r));
}

#[test]
fn display_normal_form() {
    let cases = [
        (
            r#"uid == 0 && path ~ "*.log" || op in {open, unlink}"#,
            r#"((uid == 0) && (path ~ "*.log")) || (op in {"open", "unlink"})"#,
        ),
        ("record_id < 38549988050", "record_id < 38549988050"),
        ("ret >= 4096 and fd == 3", "(ret >= 4096) && (fd == 3)"),
        ("!(op == close)", r#"!(op == "close")"#),
        ("not op", "!op"),
        ("bytes_requested > 1M", "bytes_requested > 1048576"),
        ("x > 1.5K", "x > 1536"),
        ("x > 0.1K", "x > 102.4"),
        ("x > -0.0", "x > -0.0"),
        ("x > 1e300", "x > 1e300"),
        ("x == 1.0", "x == 1.0"),
        (r#"name == "foo\x00""#, r#"name == "foo\x00""#),
        (r#"name == 'a"b'"#, r#"name == "a\"b""#),
        ("type not in {read, pread,}", r#"type not in {"read", "pread"}"#),
        ("x in {}", "x in {}"),
        ("x in {1, -2, 2.5, true, null, a}", r#"x in {1, -2, 2.5, true, null, "a"}"#),
        ("x = null", "x == null"),
        ("x <> 1", "x != 1"),
        ("p =~ 'a*'", r#"p ~ "a*""#),
        ("p ~ abc", r#"p ~ "abc""#),
        ("p !~ 'a\\\\*'", r#"p !~ "a\\*""#),
        ("true || false", "true || false"),
        ("!!a", "!(!a)"),
        ("a and (b or c) and d", "a && (b || c) && d"),
        ("x == \"\u{1}\u{7f}\"", r#"x == "\x01\x7f""#),
    ];
    for (src, want) in cases {
        let f = Filter::parse(src).unwrap();
        assert_eq!(f.to_string(), want, "{src}");
        assert_eq!(f.source(), src);
        let again = Filter::parse(want).unwrap();
        assert_eq!(again.to_string(), want, "{src}: printing is a fixed point");
    }
}

#[test]
fn display_round_trip_evaluates_identically() {
    let srcs = [
        r#"uid == 0 && path ~ "*.log" || op in {open, unlink}"#,
        r#"!(path !~ "/var/**") && !sync"#,
        "uid == 1 || fd == 4 && op == close || !(ratio < 0.25)",
        "record_id in {38549988049, 1} and not (errno or parent)",
        r#"name == "foo\x00" || comm ~ "" || path == null"#,
        "gid >= 1e2 && gid <= 100 && gid > 99.999",
        "cached == true && sync != true",
    ];
    for src in srcs {
        let f = Filter::parse(src).unwrap();
        let g = Filter::parse(&f.to_string()).unwrap();
        for r in [open_rec(), close_rec(), Rec(vec![])] {
            assert_eq!(f.matches(&r), g.matches(&r), "{src} vs {g}");
        }
    }
}

#[test]
fn fields_and_source() {
    let f: Filter =
        r#"uid == 0 && path ~ "*.log" || op in {open, unlink} || !uid || path"#.parse().unwrap();
    assert_eq!(f.fields(), ["uid", "path", "op"]);
    assert_eq!(Filter::parse("true").unwrap().fields(), Vec::<&str>::new());
    assert_eq!(Filter::parse("args.fd == 3 && x.y").unwrap().fields(), ["args.fd", "x.y"]);
    assert_eq!(Filter::parse("  a  ").unwrap().source(), "  a  ");
    // A right-hand-side word is a value, not a field.
    assert_eq!(Filter::parse("uid == gid").unwrap().fields(), ["uid"]);
}

#[test]
fn filter_is_send_sync_and_shareable() {
    fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}
    assert_send_sync::<Filter>();
    assert_send_sync::<ParseError>();
    let f = std::sync::Arc::new(Filter::parse("fd == 3").unwrap());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let f = f.clone();
            std::thread::spawn(move || f.matches(&open_rec()))
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap());
    }
}

#[test]
fn provided_record_impls() {
    use std::collections::{BTreeMap, HashMap};
    let f = Filter::parse("a == 1 && b ~ \"x*\"").unwrap();
    let hm: HashMap<String, FieldValue> =
        HashMap::from([("a".to_string(), FieldValue::Int(1)), ("b".into(), "xyz".into())]);
    assert!(f.matches(&hm));
    let bt: BTreeMap<&str, FieldValue> =
        BTreeMap::from([("a", FieldValue::UInt(1)), ("b", "y".into())]);
    assert!(!f.matches(&bt));
    let arr = [("a", FieldValue::from(1.0)), ("b", FieldValue::from(b"x".as_slice()))];
    assert!(f.matches(&arr));
    let v = vec![("a", FieldValue::from(Some(1i64))), ("b", FieldValue::from(None::<&str>))];
    assert!(!f.matches(&v));
    assert!(f.matches(&&arr));
}

/// (input, byte offset, column, message) for malformed filters.
const ERRORS: &[(&str, usize, &str)] = &[
    ("uid == && x", 8, "expected a value after `==`, found `&&`"),
    ("", 1, "expected a field name, `(` or `!`, found end of input"),
    ("   ", 4, "expected a field name, `(` or `!`, found end of input"),
    ("uid ==", 7, "expected a value after `==`, found end of input"),
    ("uid == 0 &&", 12, "expected a field name, `(` or `!` after `&&`, found end of input"),
    ("(uid == 0", 10, "expected `&&`, `||` or `)` after `0`, found end of input (unclosed `(` at column 1)"),
    ("uid == 0)", 9, "expected `&&`, `||` or end of input after `0`, found `)`"),
    ("uid 0", 5, "expected an operator (`==`, `!=`, `<`, `<=`, `>`, `>=`, `~`, `!~`, `in`), `&&`, `||` or end of input after `uid`, found number `0`"),
    ("uid == 0 AND fd == 3", 10, "expected `&&`, `||` or end of input after `0`, found `AND` (keywords are lowercase: `and`)"),
    ("path ~ \"*.log", 8, "unterminated string (missing closing `\"`)"),
    ("name == \"foo\\q\"", 13, "invalid escape `\\q` in string (valid: \\\" \\' \\\\ \\n \\t \\r \\0 \\xHH)"),
    ("x == 99999999999999999999", 6, "integer out of range"),
    ("x > -9223372036854775809", 5, "integer out of range"),
    ("x > 12abc", 7, "invalid number suffix `abc` (expected K, M, G, T or P, optionally followed by `i` and/or `B`)"),
    ("op in {open, unlink", 20, "expected `,` or `}` after `unlink`, found end of input"),
    ("op in open", 7, "expected `{` after `in`, found `open`"),
    ("op not open", 8, "expected `in` after `not`, found `open`"),
    ("op in {open unlink}", 13, "expected `,` or `}` after `open`, found `unlink`"),
    ("path ~ \"[a-\"", 8, "invalid pattern: unterminated `[` character class in glob pattern"),
    ("path ~ 3", 8, "expected a glob pattern (a quoted string) after `~`, found number `3`"),
    ("x < null", 5, "`null` can only be compared with `==` or `!=`, not `<`"),
    ("uid & 1", 5, "`&` is not an operator; did you mean `&&`?"),
    ("uid | 1", 5, "`|` is not an operator; did you mean `||`?"),
    ("== 3", 1, "expected a field name, `(` or `!`, found `==`"),
    ("3 == uid", 1, "expected a field name, `(` or `!`, found number `3`"),
    ("op == and", 7, "expected a value (to compare with the string \"and\", quote it) after `==`, found keyword `and`"),
    ("fd == 3 && && fd", 12, "expected a field name, `(` or `!` after `&&`, found `&&`"),
    ("()", 2, "expected a field name, `(` or `!` after `(`, found `)`"),
    ("x @ 3", 3, "unexpected character `@`"),
    ("x == \"\\x4\"", 7, "`\\x` must be followed by two hex digits"),
    ("pâth == 3", 2, "unexpected character `â`"),
    ("é == 3 &&", 1, "unexpected character `é`"),
    ("x == \"é\" &&", 12, "expected a field name, `(` or `!` after `&&`, found end of input"),
    ("x - 1", 3, "expected a number after `-`"),
];

#[test]
fn error_messages_and_columns() {
    for &(src, column, message) in ERRORS {
        let e = Filter::parse(src).expect_err(src);
        assert_eq!(e.message, message, "{src}");
        assert_eq!(e.column, column, "{src}: {e}");
        assert_eq!(ParseError::column_of(src, e.offset), column);
        assert_eq!(e.input(), src);
        assert_eq!(e.to_string(), format!("filter: {message} at column {column}: {src}"));
        let rendered = e.render(src);
        let lines: Vec<&str> = rendered.lines().collect();
        assert_eq!(lines.len(), 3, "{rendered}");
        assert_eq!(lines[0], format!("filter: {message} (column {column})"));
        assert_eq!(lines[1], format!("  {src}"));
        assert_eq!(lines[2], format!("  {}^", " ".repeat(column - 1)));
        // FromStr agrees.
        assert_eq!(src.parse::<Filter>().unwrap_err(), e);
    }
}

#[test]
fn error_display_is_one_line() {
    let e = Filter::parse("uid == 0\n&&\t").unwrap_err();
    assert_eq!(e.column, 13);
    assert_eq!(e.to_string().lines().count(), 1);
    assert_eq!(
        e.to_string(),
        "filter: expected a field name, `(` or `!` after `&&`, found end of input \
         at column 13: uid == 0 && "
    );
}

#[test]
fn nesting_depth_is_capped() {
    let ok = format!("{}a{}", "(".repeat(256), ")".repeat(256));
    assert_eq!(Filter::parse(&ok).unwrap().to_string(), "a");
    let too_deep = format!("{}a{}", "(".repeat(257), ")".repeat(257));
    let e = Filter::parse(&too_deep).unwrap_err();
    assert_eq!(e.message, "expression nested too deeply (more than 256 levels)");
    assert_eq!(e.column, 257);
    // Far beyond the limit, and unbalanced: still an error, not a stack overflow.
    for src in ["(".repeat(1_000_000), "!".repeat(1_000_000), "not ".repeat(100_000)] {
        let e = Filter::parse(&src).unwrap_err();
        assert!(e.message.contains("nested too deeply"), "{}", e.message);
    }
    let ok = format!("{}fd", "!".repeat(256));
    assert!(Filter::parse(&ok).unwrap().matches(&close_rec()));
    assert!(Filter::parse(&format!("{}a", "!".repeat(257))).is_err());
}

#[test]
fn long_flat_chains_do_not_recurse() {
    // Long `&&`/`||` chains are flat lists: no deep recursion when evaluating, printing or
    // dropping them.
    let src = vec!["fd == 3"; 50_000].join(" && ");
    let f = Filter::parse(&src).unwrap();
    assert!(f.matches(&open_rec()));
    assert_eq!(Filter::parse(&f.to_string()).unwrap().fields(), ["fd"]);
    let src = vec!["fd == 4"; 50_000].join(" or ");
    assert!(!Filter::parse(&src).unwrap().matches(&open_rec()));
}

/// Values of chosen fields resolved by the caller: names to what records hold, `%sets` to
/// their members, an unknown name to an error; other fields and globs are left as written.
#[test]
fn resolved_values() {
    let mut resolve = |v: &[u8]| -> Result<Vec<Vec<u8>>, String> {
        match v {
            b"%files" => Ok(vec![b"open".to_vec(), b"unlink".to_vec()]),
            b"openat" => Ok(vec![b"open".to_vec()]),
            b"open" | b"close" => Ok(vec![v.to_vec()]),
            _ => Err(format!("no op `{}`", String::from_utf8_lossy(v))),
        }
    };
    let run = |src: &str, resolve: &mut crate::Resolver<'_>| {
        let mut f = Filter::parse(src).unwrap();
        f.resolve_values(&["op"], resolve).map(|()| f)
    };
    let f = run("op in %files", &mut resolve).unwrap();
    assert!(f.matches(&open_rec()) && !f.matches(&close_rec()));
    assert_eq!(f.to_string(), r#"op in {"open", "unlink"}"#);
    let f = run("op not in %files", &mut resolve).unwrap();
    assert!(!f.matches(&open_rec()) && f.matches(&close_rec()));
    let f = run("op == openat && !(op != openat)", &mut resolve).unwrap();
    assert!(f.matches(&open_rec()));
    let f = run("op in {openat, close} && path ~ \"/var/**\"", &mut resolve).unwrap();
    assert!(f.matches(&open_rec()));
    assert_eq!(run("op == opne", &mut resolve).unwrap_err(), "no op `opne`");
    // Fields not named, and globs, are not resolved.
    assert!(run("comm == opne || op ~ \"op*\"", &mut resolve).is_ok());
    // Unresolved, `%files` is a string like any other.
    assert!(!Filter::parse("op in %files").unwrap().matches(&open_rec()));
    assert!(Filter::parse("op in %").is_err());
}

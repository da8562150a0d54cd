//! Filter expressions: the small language behind `reanimator dump --where`, the filters of
//! `reanimator record`, and the input filters of the tracing file system.
//!
//! A filter is a boolean expression over the fields of one trace record:
//!
//! ```text
//! uid == 0 && path ~ "*.log" || op in {open, unlink}
//! record_id < 38549988050
//! errno != 0
//! ret >= 4096 and fd == 3
//! !(op == close)
//! path ~ "/tmp/**"
//! bytes_requested > 1M
//! name == "foo\x00"
//! type in {read, pread}
//! ```
//!
//! # Predicates
//!
//! Every predicate starts with a **field name** (letters, digits, `_` and `.`, not starting with
//! a digit, e.g. `path`, `args.fd`). What follows it:
//!
//! | form                    | true when                                                        |
//! |-------------------------|------------------------------------------------------------------|
//! | `f == v`, `f != v`      | the field equals (does not equal) the value                      |
//! | `f < v`, `<=`, `>`, `>=`| the field orders before/after the value (numbers numerically, strings bytewise) |
//! | `f ~ "glob"`            | the whole field (a string) matches the glob pattern (see below)  |
//! | `f !~ "glob"`           | it does not                                                      |
//! | `f in {v1, v2, ...}`    | the field equals one of the values (`{}` is allowed and empty)   |
//! | `f not in {v1, ...}`    | it equals none of them                                           |
//! | `f in %name`            | the field is in the named set `%name`, which the caller defines (`call in %file`: strace's call classes) |
//! | `f` alone               | the field is present, not null, and not `0`/`false`/empty        |
//!
//! `=` is accepted for `==`, `<>` for `!=` and `=~` for `~`; the printed form always uses the
//! first spelling.
//!
//! `true` and `false` on their own are predicates that always / never hold.
//!
//! # Values
//!
//! | literal            | examples                                       | notes |
//! |--------------------|------------------------------------------------|-------|
//! | integer            | `42`, `-1`, `1_000_000`, `0x1f`, `0o755`, `0b101` | from `i64::MIN` to `u64::MAX`; anything else is the error "integer out of range" |
//! | size               | `4K`, `1M`, `2G`, `1T`, `1P`, `4Ki`, `4KiB`, `512B`, `1.5K` | powers of 1024 (`K` = 1024, `M` = 1024², ...), `i` and `B` are optional |
//! | float              | `1.5`, `-0.25`, `1e9`, `2.5E-3`                | compared numerically with integer fields |
//! | string             | `"foo"`, `'foo'`, `"a\"b"`, `"foo\x00"`        | escapes `\"` `\'` `\\` `\n` `\t` `\r` `\0` `\xHH`; strings are **bytes** and need not be UTF-8 |
//! | bare word          | `open`, `O_RDONLY`                             | on the right-hand side or in a set, a bare word is a string: `op == open` is `op == "open"` |
//! | boolean            | `true`, `false`                                |       |
//! | null               | `null`                                         | only with `==`, `!=` and in sets |
//!
//! A bare word is never another field: `uid == gid` compares `uid` with the string `"gid"`.
//! The keywords `and or not in true false null` must be quoted to be used as strings.
//!
//! # Comparison rules
//!
//! * Integer, unsigned and float fields compare numerically with integer and float literals,
//!   exactly (no rounding through `f64`). NaN compares with nothing.
//! * String (bytes) fields compare lexicographically, byte by byte, with string literals.
//! * Boolean fields compare with `true`/`false` (`false < true`).
//! * A type mismatch (e.g. a string literal against an integer field) is not an error: the
//!   comparison is simply false (and its negation true).
//! * A **missing** field (not in this kind of record, e.g. `path` on a `close`) and a **null**
//!   field compare false with everything, except that `f == null` is true.
//! * The negated operators are exact negations: `f != v` is `!(f == v)`, `f !~ p` is
//!   `!(f ~ p)`, `f not in S` is `!(f in S)`. So `path != "/x"`, `path !~ "/tmp/**"` and
//!   `path not in {a}` are all true on a record without a `path`; write
//!   `path != null && path !~ "/tmp/**"` to require the field.
//! * Ordering operators (`<` `<=` `>` `>=`) are false whenever the two sides do not compare, so
//!   `!(f < v)` and `f >= v` differ on missing fields and mismatched types.
//!
//! # Glob patterns
//!
//! `~` matches the whole value against a pattern given as a string (or a bare word):
//!
//! | pattern  | matches                                                     |
//! |----------|-------------------------------------------------------------|
//! | `*`      | any run of bytes, possibly empty, without `/`               |
//! | `**`     | any run of bytes, possibly empty, including `/`             |
//! | `?`      | one byte other than `/`                                     |
//! | `[abc]`, `[a-z]` | one byte from the set or range (never `/`)          |
//! | `[!x]`, `[^x]`   | one byte not in the set (never `/`)                 |
//! | `\*`     | a literal `*` (any byte can be escaped); in a string literal write `"\\*"` |
//!
//! So `path ~ "*.log"` matches `app.log` but not `/var/log/app.log`; `path ~ "**.log"` matches
//! both; `path ~ "/tmp/**"` matches everything under `/tmp/`. Matching takes time linear in the
//! value's length times the pattern's, whatever the pattern.
//!
//! # Combining
//!
//! `&&` (or `and`), `||` (or `or`), `!` (or `not`) and parentheses, from tightest to loosest:
//!
//! 1. the predicates above (`uid == 0`, `path ~ "*.c"`, `op in {..}`);
//! 2. `!` / `not`, which applies to the predicate or parenthesized group right after it:
//!    `!uid == 0` means `!(uid == 0)`, and `!a && b` means `(!a) && b`;
//! 3. `&&` / `and`;
//! 4. `||` / `or`: `a || b && c` means `a || (b && c)`.
//!
//! Keywords are lowercase. Parentheses and negations nest at most 256 deep.
//!
//! # Grammar
//!
//! ```text
//! filter    = or
//! or        = and  { ("||" | "or")  and }
//! and       = unary { ("&&" | "and") unary }
//! unary     = ("!" | "not") unary | primary
//! primary   = "(" or ")" | "true" | "false" | predicate
//! predicate = FIELD [ CMP value | ("~" | "!~") pattern | ["not"] "in" set ]
//! set       = "{" [ value { "," value } [","] ] "}"
//! value     = NUMBER | STRING | WORD | "true" | "false" | "null"
//! pattern   = STRING | WORD
//! CMP       = "==" | "=" | "!=" | "<>" | "<" | "<=" | ">" | ">="
//! ```
//!
//! # Errors
//!
//! A filter that does not parse gives a [`ParseError`] naming the 1-based column and what was
//! expected there:
//!
//! ```
//! let err = ra_filter::Filter::parse("uid == && x").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "filter: expected a value after `==`, found `&&` at column 8: uid == && x"
//! );
//! assert_eq!(
//!     err.render("uid == && x"),
//!     "filter: expected a value after `==`, found `&&` (column 8)\n  uid == && x\n         ^"
//! );
//! ```
//!
//! Field names are not checked by the parser (it knows no schema): callers check
//! [`Filter::fields`] against theirs, and [`suggest`] finds the "did you mean" candidate.
//!
//! # Use from Rust
//!
//! ```
//! use std::collections::HashMap;
//! use ra_filter::{FieldValue, Filter};
//!
//! let f: Filter = r#"uid == 0 && path ~ "*.log" || op in {open, unlink}"#.parse().unwrap();
//! assert_eq!(f.fields(), ["uid", "path", "op"]);
//! assert_eq!(
//!     f.to_string(),
//!     r#"((uid == 0) && (path ~ "*.log")) || (op in {"open", "unlink"})"#
//! );
//!
//! let rec: HashMap<&str, FieldValue> =
//!     HashMap::from([("op", FieldValue::from("close")), ("uid", FieldValue::UInt(0))]);
//! assert!(!f.matches(&rec)); // no `path`, and `close` is not in the set
//!
//! let rec = HashMap::from([("op", FieldValue::from("unlink"))]);
//! assert!(f.matches(&rec));
//!
//! assert_eq!(ra_filter::suggest("pathh", ["uid", "path", "op"]), Some("path"));
//! ```
//!
//! Real callers implement [`Record`] on their own record type, returning borrowed bytes so that
//! evaluation does not allocate.
#![warn(missing_docs)]

mod ast;
mod glob;
mod lexer;
mod parser;
mod suggest;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use std::borrow::{Borrow, Cow};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::str::FromStr;

pub use glob::{Glob, GlobError};
pub use suggest::suggest;

/// One field's value in a record.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue<'a> {
    /// No value (a nullable column left empty, an argument the call did not have).
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer too large for `Int`.
    UInt(u64),
    /// A floating-point number.
    Float(f64),
    /// Strings, paths, buffers: bytes, not necessarily UTF-8.
    Bytes(Cow<'a, [u8]>),
}

impl FieldValue<'_> {
    /// The same value, borrowing any bytes from `self`.
    pub fn reborrow(&self) -> FieldValue<'_> {
        match self {
            FieldValue::Null => FieldValue::Null,
            FieldValue::Bool(b) => FieldValue::Bool(*b),
            FieldValue::Int(i) => FieldValue::Int(*i),
            FieldValue::UInt(u) => FieldValue::UInt(*u),
            FieldValue::Float(f) => FieldValue::Float(*f),
            FieldValue::Bytes(b) => FieldValue::Bytes(Cow::Borrowed(b)),
        }
    }
}

impl From<bool> for FieldValue<'_> {
    fn from(v: bool) -> Self {
        FieldValue::Bool(v)
    }
}

impl From<i64> for FieldValue<'_> {
    fn from(v: i64) -> Self {
        FieldValue::Int(v)
    }
}

impl From<u64> for FieldValue<'_> {
    fn from(v: u64) -> Self {
        FieldValue::UInt(v)
    }
}

impl From<f64> for FieldValue<'_> {
    fn from(v: f64) -> Self {
        FieldValue::Float(v)
    }
}

impl<'a> From<&'a [u8]> for FieldValue<'a> {
    fn from(v: &'a [u8]) -> Self {
        FieldValue::Bytes(Cow::Borrowed(v))
    }
}

impl<'a> From<&'a str> for FieldValue<'a> {
    fn from(v: &'a str) -> Self {
        FieldValue::Bytes(Cow::Borrowed(v.as_bytes()))
    }
}

impl From<Vec<u8>> for FieldValue<'_> {
    fn from(v: Vec<u8>) -> Self {
        FieldValue::Bytes(Cow::Owned(v))
    }
}

impl From<String> for FieldValue<'_> {
    fn from(v: String) -> Self {
        FieldValue::Bytes(Cow::Owned(v.into_bytes()))
    }
}

impl<'a, T: Into<FieldValue<'a>>> From<Option<T>> for FieldValue<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(FieldValue::Null, Into::into)
    }
}

/// A record a filter is evaluated against.
pub trait Record {
    /// The value of `field`, or `None` when this record has no such field (e.g. `path` on a
    /// `close` record). Return [`Cow::Borrowed`] bytes to keep evaluation allocation-free.
    fn get(&self, field: &str) -> Option<FieldValue<'_>>;
}

impl<R: Record + ?Sized> Record for &R {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        (**self).get(field)
    }
}

impl<K: Borrow<str> + Hash + Eq, S: BuildHasher> Record for HashMap<K, FieldValue<'_>, S> {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        HashMap::get(self, field).map(FieldValue::reborrow)
    }
}

impl<K: Borrow<str> + Ord> Record for BTreeMap<K, FieldValue<'_>> {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        BTreeMap::get(self, field).map(FieldValue::reborrow)
    }
}

impl<K: AsRef<str>> Record for [(K, FieldValue<'_>)] {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        self.iter().find(|(k, _)| k.as_ref() == field).map(|(_, v)| v.reborrow())
    }
}

impl<K: AsRef<str>, const N: usize> Record for [(K, FieldValue<'_>); N] {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        Record::get(self.as_slice(), field)
    }
}

impl<K: AsRef<str>> Record for Vec<(K, FieldValue<'_>)> {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        Record::get(self.as_slice(), field)
    }
}

/// What [`Filter::resolve_values`] asks about each value: the values it stands for, or why it
/// names nothing.
pub type Resolver<'a> = dyn FnMut(&[u8]) -> Result<Vec<Vec<u8>>, String> + 'a;

/// A compiled filter: immutable, `Send + Sync`, and cheap to evaluate (evaluation allocates
/// nothing unless the record's [`Record::get`] does, or a glob pattern is over 511 tokens long).
#[derive(Clone, Debug)]
pub struct Filter {
    expr: ast::Expr,
    source: String,
}

impl Filter {
    /// Parses and compiles a filter expression (see the [crate docs](crate) for the language).
    pub fn parse(src: &str) -> Result<Filter, ParseError> {
        Ok(Filter { expr: parser::parse(src)?, source: src.to_string() })
    }

    /// Whether the record satisfies the filter.
    pub fn matches(&self, r: &dyn Record) -> bool {
        self.expr.eval(r)
    }

    /// The field names the expression references, each once, in order of first appearance.
    pub fn fields(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.expr.collect_fields(&mut out);
        out
    }

    /// Give the string values compared with `fields` (by `==`, `!=`, `in`, `not in`) the
    /// meaning the caller has for them: `f` turns each into the values it stands for (a call
    /// name into the name the records hold, a named set such as `%file` into its members) or
    /// says why it names nothing. `call == pwrite64` becomes `call in {pwrite}`; glob
    /// patterns are left as written.
    pub fn resolve_values(&mut self, fields: &[&str], f: &mut Resolver<'_>) -> Result<(), String> {
        self.expr.resolve_values(fields, f)
    }

    /// The text the filter was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl FromStr for Filter {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Filter, ParseError> {
        Filter::parse(s)
    }
}

/// Prints the normalized, fully parenthesized form (symbolic operators, quoted strings), which
/// parses back to an equivalent filter.
impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.expr, f)
    }
}

/// A filter that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("filter: {message} at column {column}: {}", one_line(.input))]
pub struct ParseError {
    /// Byte offset of the error in the source.
    pub offset: usize,
    /// 1-based column (in characters) of the error.
    pub column: usize,
    /// What went wrong, e.g. "expected a value after `==`, found `&&`".
    pub message: String,
    input: String,
}

/// The source on one line (newlines and tabs become spaces, so columns stay aligned).
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

impl ParseError {
    pub(crate) fn new(src: &str, offset: usize, message: String) -> ParseError {
        ParseError {
            offset,
            column: ParseError::column_of(src, offset),
            message,
            input: src.to_string(),
        }
    }

    /// 1-based character column of a byte offset.
    pub(crate) fn column_of(src: &str, offset: usize) -> usize {
        let offset = offset.min(src.len());
        src.char_indices().take_while(|&(i, _)| i < offset).count() + 1
    }

    /// The filter text the error is about.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// A multi-line rendering with the source and a caret under the error:
    ///
    /// ```text
    /// filter: expected a value after `==`, found `&&` (column 8)
    ///   uid == && x
    ///          ^
    /// ```
    ///
    /// `src` should be the text that was parsed (as returned by [`ParseError::input`]).
    pub fn render(&self, src: &str) -> String {
        let column = ParseError::column_of(src, self.offset);
        format!(
            "filter: {} (column {column})\n  {}\n  {}^",
            self.message,
            one_line(src),
            " ".repeat(column - 1)
        )
    }
}

//! The compiled expression tree: evaluation and the normalized printed form.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

use crate::glob::Glob;
use crate::lexer::CmpOp;
use crate::{FieldValue, Record};

/// A literal on the right-hand side of an operator.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Lit {
    Null,
    Bool(bool),
    /// Always within `i64::MIN..=u64::MAX`.
    Int(i128),
    /// Always finite.
    Float(f64),
    Bytes(Vec<u8>),
}

#[derive(Clone, Debug)]
pub(crate) enum Expr {
    /// `true` / `false`.
    Const(bool),
    /// A bare field name: present, non-null and not zero/false/empty.
    Truthy(Box<str>),
    Compare {
        field: Box<str>,
        op: CmpOp,
        lit: Lit,
    },
    /// `field ~ pattern` (or `!~` when `negated`).
    Glob {
        field: Box<str>,
        negated: bool,
        /// The pattern as written (after string unescaping), for printing.
        pattern: Vec<u8>,
        glob: Glob,
    },
    /// `field in {..}` (or `not in` when `negated`).
    In {
        field: Box<str>,
        negated: bool,
        set: Vec<Lit>,
    },
    Not(Box<Expr>),
    /// Two or more operands.
    And(Vec<Expr>),
    /// Two or more operands.
    Or(Vec<Expr>),
}

/// A numeric value, from a field or a literal.
#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

/// Compares an integer in `i64::MIN..=u64::MAX` with a float, exactly.
fn cmp_int_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // 2^64 and -2^63 are exact in f64; past them every integer we hold is smaller/larger.
    if f >= 18_446_744_073_709_551_616.0 {
        return Some(Ordering::Less);
    }
    if f < -9_223_372_036_854_775_808.0 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    // Exact: |t| <= 2^64.
    let ti = t as i128;
    Some(i.cmp(&ti).then_with(|| {
        if f > t {
            Ordering::Less
        } else if f < t {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }))
}

fn cmp_num(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
        (Num::Int(x), Num::Float(y)) => cmp_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => cmp_int_float(y, x).map(Ordering::reverse),
    }
}

/// How a field value orders against a literal; `None` when they do not compare (missing or
/// null field, null literal, type mismatch, NaN).
fn compare(v: &FieldValue<'_>, lit: &Lit) -> Option<Ordering> {
    let field_num = match *v {
        FieldValue::Int(i) => Some(Num::Int(i.into())),
        FieldValue::UInt(u) => Some(Num::Int(u.into())),
        FieldValue::Float(f) => Some(Num::Float(f)),
        _ => None,
    };
    let lit_num = match *lit {
        Lit::Int(i) => Some(Num::Int(i)),
        Lit::Float(f) => Some(Num::Float(f)),
        _ => None,
    };
    if let (Some(a), Some(b)) = (field_num, lit_num) {
        return cmp_num(a, b);
    }
    match (v, lit) {
        (FieldValue::Bool(a), Lit::Bool(b)) => Some(a.cmp(b)),
        (FieldValue::Bytes(a), Lit::Bytes(b)) => Some(a.as_ref().cmp(b.as_slice())),
        _ => None,
    }
}

/// `field == lit`, with `== null` true for a missing or null field.
fn equals(v: Option<&FieldValue<'_>>, lit: &Lit) -> bool {
    match (v, lit) {
        (None | Some(FieldValue::Null), Lit::Null) => true,
        (None | Some(FieldValue::Null), _) | (_, Lit::Null) => false,
        (Some(v), lit) => compare(v, lit) == Some(Ordering::Equal),
    }
}

fn truthy(v: Option<&FieldValue<'_>>) -> bool {
    match v {
        None | Some(FieldValue::Null) => false,
        Some(FieldValue::Bool(b)) => *b,
        Some(FieldValue::Int(i)) => *i != 0,
        Some(FieldValue::UInt(u)) => *u != 0,
        Some(FieldValue::Float(f)) => *f != 0.0,
        Some(FieldValue::Bytes(b)) => !b.is_empty(),
    }
}

impl Expr {
    pub(crate) fn eval(&self, r: &dyn Record) -> bool {
        match self {
            Expr::Const(b) => *b,
            Expr::Truthy(field) => truthy(r.get(field).as_ref()),
            Expr::Compare { field, op, lit } => {
                let v = r.get(field);
                match op {
                    CmpOp::Eq => equals(v.as_ref(), lit),
                    CmpOp::Ne => !equals(v.as_ref(), lit),
                    _ => {
                        let Some(ord) = v.as_ref().and_then(|v| compare(v, lit)) else {
                            return false;
                        };
                        match op {
                            CmpOp::Lt => ord.is_lt(),
                            CmpOp::Le => ord.is_le(),
                            CmpOp::Gt => ord.is_gt(),
                            CmpOp::Ge => ord.is_ge(),
                            CmpOp::Eq | CmpOp::Ne => unreachable!("handled above"),
                        }
                    }
                }
            }
            Expr::Glob { field, negated, glob, .. } => {
                let hit = match r.get(field) {
                    Some(FieldValue::Bytes(b)) => glob.matches(&b),
                    _ => false,
                };
                hit != *negated
            }
            Expr::In { field, negated, set } => {
                let v = r.get(field);
                let hit = set.iter().any(|lit| equals(v.as_ref(), lit));
                hit != *negated
            }
            Expr::Not(e) => !e.eval(r),
            Expr::And(es) => es.iter().all(|e| e.eval(r)),
            Expr::Or(es) => es.iter().any(|e| e.eval(r)),
        }
    }

    /// Appends the field names this expression references (first occurrence order, no
    /// duplicates).
    pub(crate) fn collect_fields<'a>(&'a self, out: &mut Vec<&'a str>) {
        let mut add = |f: &'a str| {
            if !out.contains(&f) {
                out.push(f);
            }
        };
        match self {
            Expr::Const(_) => {}
            Expr::Truthy(field)
            | Expr::Compare { field, .. }
            | Expr::Glob { field, .. }
            | Expr::In { field, .. } => add(field),
            Expr::Not(e) => e.collect_fields(out),
            Expr::And(es) | Expr::Or(es) => es.iter().for_each(|e| e.collect_fields(out)),
        }
    }

    /// [`crate::Filter::resolve_values`] on this tree.
    pub(crate) fn resolve_values(
        &mut self,
        fields: &[&str],
        f: &mut crate::Resolver<'_>,
    ) -> Result<(), String> {
        let mut expand = |lits: &[Lit]| -> Result<Vec<Lit>, String> {
            let mut out = Vec::new();
            for l in lits {
                match l {
                    Lit::Bytes(b) => {
                        for v in f(b)? {
                            let v = Lit::Bytes(v);
                            if !out.contains(&v) {
                                out.push(v);
                            }
                        }
                    }
                    other => out.push(other.clone()),
                }
            }
            Ok(out)
        };
        match self {
            Expr::Compare { field, op, lit: lit @ Lit::Bytes(_) }
                if fields.contains(&&**field) && matches!(op, CmpOp::Eq | CmpOp::Ne) =>
            {
                let set = expand(std::slice::from_ref(lit))?;
                let negated = *op == CmpOp::Ne;
                *self = Expr::In { field: field.clone(), negated, set };
            }
            Expr::In { field, set, .. } if fields.contains(&&**field) => {
                *set = expand(set)?;
            }
            Expr::Not(e) => e.resolve_values(fields, f)?,
            Expr::And(es) | Expr::Or(es) => {
                for e in es {
                    e.resolve_values(fields, f)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Leaves that print without parentheses.
    fn is_atomic(&self) -> bool {
        matches!(self, Expr::Const(_) | Expr::Truthy(_))
    }

    fn fmt_operand(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_atomic() {
            fmt::Display::fmt(self, f)
        } else {
            write!(f, "({self})")
        }
    }
}

/// The normalized form: every operand that is not a bare field or constant is parenthesized,
/// keywords are the symbolic ones (`&&`, `||`, `!`), strings are always quoted.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Const(b) => write!(f, "{b}"),
            Expr::Truthy(field) => f.write_str(field),
            Expr::Compare { field, op, lit } => write!(f, "{field} {} {lit}", op.as_str()),
            Expr::Glob { field, negated, pattern, .. } => {
                write!(f, "{field} {} ", if *negated { "!~" } else { "~" })?;
                write_bytes(f, pattern)
            }
            Expr::In { field, negated, set } => {
                write!(f, "{field} {}in {{", if *negated { "not " } else { "" })?;
                for (i, lit) in set.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{lit}")?;
                }
                f.write_char('}')
            }
            Expr::Not(e) => {
                f.write_char('!')?;
                e.fmt_operand(f)
            }
            Expr::And(es) | Expr::Or(es) => {
                let sep = if matches!(self, Expr::And(_)) { " && " } else { " || " };
                for (i, e) in es.iter().enumerate() {
                    if i > 0 {
                        f.write_str(sep)?;
                    }
                    e.fmt_operand(f)?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lit::Null => f.write_str("null"),
            Lit::Bool(b) => write!(f, "{b}"),
            Lit::Int(i) => write!(f, "{i}"),
            // `{:?}` is the shortest representation that reads back to the same f64 and always
            // has a `.` or an exponent, so it lexes as a float again.
            Lit::Float(x) => write!(f, "{x:?}"),
            Lit::Bytes(b) => write_bytes(f, b),
        }
    }
}

/// Writes bytes as a double-quoted string literal that lexes back to the same bytes: printable
/// text (including non-ASCII UTF-8) as-is, everything else escaped.
pub(crate) fn write_bytes(f: &mut impl fmt::Write, bytes: &[u8]) -> fmt::Result {
    f.write_char('"')?;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\t' => f.write_str("\\t")?,
                '\r' => f.write_str("\\r")?,
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        write!(f, "\\x{b:02x}")?;
                    }
                }
                c => f.write_char(c)?,
            }
        }
        for b in chunk.invalid() {
            write!(f, "\\x{b:02x}")?;
        }
    }
    f.write_char('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_float_comparison_is_exact() {
        use Ordering::*;
        assert_eq!(cmp_int_float(1, 1.0), Some(Equal));
        assert_eq!(cmp_int_float(1, 1.5), Some(Less));
        assert_eq!(cmp_int_float(2, 1.5), Some(Greater));
        assert_eq!(cmp_int_float(-1, -1.5), Some(Greater));
        assert_eq!(cmp_int_float(-2, -1.5), Some(Less));
        assert_eq!(cmp_int_float(0, -0.0), Some(Equal));
        assert_eq!(cmp_int_float(0, f64::NAN), None);
        assert_eq!(cmp_int_float(u64::MAX.into(), f64::INFINITY), Some(Less));
        assert_eq!(cmp_int_float(i64::MIN.into(), f64::NEG_INFINITY), Some(Greater));
        // 2^53 + 1 is not representable: an f64 round trip would call these equal.
        let big: i128 = (1 << 53) + 1;
        assert_eq!(cmp_int_float(big, (1u64 << 53) as f64), Some(Greater));
        assert_eq!(cmp_int_float(u64::MAX.into(), 18_446_744_073_709_551_616.0), Some(Less));
        assert_eq!(cmp_int_float(i64::MIN.into(), -9_223_372_036_854_775_808.0), Some(Equal));
    }

    #[test]
    fn bytes_printing() {
        let p = |b: &[u8]| {
            let mut s = String::new();
            write_bytes(&mut s, b).unwrap();
            s
        };
        assert_eq!(p(b"abc"), r#""abc""#);
        assert_eq!(p(b"a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(p(b"foo\0"), r#""foo\x00""#);
        assert_eq!(p(b"\n\t\r\x7f"), r#""\n\t\r\x7f""#);
        assert_eq!(p("é/日本".as_bytes()), "\"é/日本\"");
        assert_eq!(p(b"\xff\xc3"), r#""\xff\xc3""#);
        assert_eq!(p("\u{85}".as_bytes()), r#""\xc2\x85""#);
    }
}

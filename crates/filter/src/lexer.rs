//! The tokenizer: turns the source text into [`Token`]s with byte spans.

use crate::ParseError;

/// Keywords (always lowercase).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kw {
    And,
    Or,
    Not,
    In,
    True,
    False,
    Null,
}

impl Kw {
    pub(crate) const ALL: [(&'static str, Kw); 7] = [
        ("and", Kw::And),
        ("or", Kw::Or),
        ("not", Kw::Not),
        ("in", Kw::In),
        ("true", Kw::True),
        ("false", Kw::False),
        ("null", Kw::Null),
    ];

    fn from_ident(s: &str) -> Option<Kw> {
        Kw::ALL.iter().find(|(name, _)| *name == s).map(|&(_, k)| k)
    }
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok<'s> {
    Ident(&'s str),
    Kw(Kw),
    Str(Vec<u8>),
    Int(i128),
    Float(f64),
    Cmp(CmpOp),
    /// `~` (also `=~`)
    Match,
    /// `!~`
    NotMatch,
    /// `!`
    Bang,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    LParen,
    RParen,
    LBrace,
    RBrace,
    Comma,
    Eof,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token<'s> {
    pub(crate) tok: Tok<'s>,
    /// Byte offsets of the token in the source.
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Smallest and largest integer literal (the union of `i64` and `u64`).
pub(crate) const INT_MIN: i128 = i64::MIN as i128;
pub(crate) const INT_MAX: i128 = u64::MAX as i128;

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

/// Tokenizes the whole source; the last token is always [`Tok::Eof`].
pub(crate) fn tokenize(src: &str) -> Result<Vec<Token<'_>>, ParseError> {
    let mut lx = Lexer { src, bytes: src.as_bytes(), pos: 0 };
    let mut out = Vec::new();
    loop {
        let t = lx.next_token()?;
        let eof = t.tok == Tok::Eof;
        out.push(t);
        if eof {
            return Ok(out);
        }
    }
}

struct Lexer<'s> {
    src: &'s str,
    bytes: &'s [u8],
    pos: usize,
}

impl<'s> Lexer<'s> {
    fn err(&self, offset: usize, message: impl Into<String>) -> ParseError {
        ParseError::new(self.src, offset, message.into())
    }

    fn peek_at(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    fn next_token(&mut self) -> Result<Token<'s>, ParseError> {
        while self.peek_at(self.pos).is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
        let start = self.pos;
        let Some(c) = self.peek_at(start) else {
            return Ok(Token { tok: Tok::Eof, start, end: start });
        };
        let next = self.peek_at(start + 1);
        let (tok, len) = match (c, next) {
            (b'=', Some(b'=')) => (Tok::Cmp(CmpOp::Eq), 2),
            (b'=', Some(b'~')) => (Tok::Match, 2),
            (b'=', _) => (Tok::Cmp(CmpOp::Eq), 1),
            (b'!', Some(b'=')) => (Tok::Cmp(CmpOp::Ne), 2),
            (b'!', Some(b'~')) => (Tok::NotMatch, 2),
            (b'!', _) => (Tok::Bang, 1),
            (b'<', Some(b'=')) => (Tok::Cmp(CmpOp::Le), 2),
            (b'<', Some(b'>')) => (Tok::Cmp(CmpOp::Ne), 2),
            (b'<', _) => (Tok::Cmp(CmpOp::Lt), 1),
            (b'>', Some(b'=')) => (Tok::Cmp(CmpOp::Ge), 2),
            (b'>', _) => (Tok::Cmp(CmpOp::Gt), 1),
            (b'~', _) => (Tok::Match, 1),
            (b'&', Some(b'&')) => (Tok::AndAnd, 2),
            (b'&', _) => return Err(self.err(start, "`&` is not an operator; did you mean `&&`?")),
            (b'|', Some(b'|')) => (Tok::OrOr, 2),
            (b'|', _) => return Err(self.err(start, "`|` is not an operator; did you mean `||`?")),
            (b'(', _) => (Tok::LParen, 1),
            (b')', _) => (Tok::RParen, 1),
            (b'{', _) => (Tok::LBrace, 1),
            (b'}', _) => (Tok::RBrace, 1),
            (b',', _) => (Tok::Comma, 1),
            (b'"' | b'\'', _) => return self.string(c),
            (b'0'..=b'9', _) => return self.number(),
            (b'-', Some(b'0'..=b'9')) => return self.number(),
            (b'-', _) => {
                return Err(self.err(start, "expected a number after `-`"));
            }
            // A named set (`%file`, `%%stat`): a bare word the caller gives a meaning
            // ([`crate::Filter::resolve_values`]), e.g. strace's call classes.
            (b'%', Some(n)) if is_ident_start(n) || n == b'%' => {
                let mut end = start + 1;
                while self.peek_at(end) == Some(b'%') {
                    end += 1;
                }
                while self.peek_at(end).is_some_and(is_ident_continue) {
                    end += 1;
                }
                self.pos = end;
                return Ok(Token { tok: Tok::Ident(&self.src[start..end]), start, end });
            }
            _ if is_ident_start(c) => {
                let mut end = start + 1;
                while self.peek_at(end).is_some_and(is_ident_continue) {
                    end += 1;
                }
                self.pos = end;
                let text = &self.src[start..end];
                let tok = match Kw::from_ident(text) {
                    Some(k) => Tok::Kw(k),
                    None => Tok::Ident(text),
                };
                return Ok(Token { tok, start, end });
            }
            _ => {
                let ch = self.src[start..].chars().next().unwrap_or('?');
                let hint = if matches!(ch, '*' | '?' | '[' | ']' | '/') {
                    " (strings, paths and glob patterns must be quoted: \"/tmp/*.log\")"
                } else {
                    ""
                };
                return Err(
                    self.err(start, format!("unexpected character `{}`{hint}", ch.escape_debug()))
                );
            }
        };
        self.pos = start + len;
        Ok(Token { tok, start, end: self.pos })
    }

    /// A quoted string; `quote` is `"` or `'`. Strings are bytes: any UTF-8 in the source is kept
    /// as its bytes and `\xHH` inserts arbitrary bytes.
    fn string(&mut self, quote: u8) -> Result<Token<'s>, ParseError> {
        let start = self.pos;
        let mut i = start + 1;
        let mut out = Vec::new();
        loop {
            let Some(b) = self.peek_at(i) else {
                return Err(self.err(
                    start,
                    format!("unterminated string (missing closing `{}`)", char::from(quote)),
                ));
            };
            if b == quote {
                i += 1;
                break;
            }
            if b != b'\\' {
                out.push(b);
                i += 1;
                continue;
            }
            let esc = self.peek_at(i + 1);
            let byte = match esc {
                Some(b'"') => b'"',
                Some(b'\'') => b'\'',
                Some(b'\\') => b'\\',
                Some(b'n') => b'\n',
                Some(b't') => b'\t',
                Some(b'r') => b'\r',
                Some(b'0') => 0,
                Some(b'x') => {
                    let hex = |o: usize| self.peek_at(o).and_then(|h| char::from(h).to_digit(16));
                    match (hex(i + 2), hex(i + 3)) {
                        (Some(h), Some(l)) => {
                            out.push((h * 16 + l) as u8);
                            i += 4;
                            continue;
                        }
                        _ => {
                            return Err(self.err(i, "`\\x` must be followed by two hex digits"));
                        }
                    }
                }
                None => {
                    return Err(self.err(
                        start,
                        format!("unterminated string (missing closing `{}`)", char::from(quote)),
                    ));
                }
                Some(_) => {
                    let ch = self.src[i + 1..].chars().next().unwrap_or('?');
                    return Err(self.err(
                        i,
                        format!(
                            "invalid escape `\\{}` in string (valid: \\\" \\' \\\\ \\n \\t \\r \\0 \\xHH)",
                            ch.escape_debug()
                        ),
                    ));
                }
            };
            out.push(byte);
            i += 2;
        }
        self.pos = i;
        Ok(Token { tok: Tok::Str(out), start, end: i })
    }

    fn number(&mut self) -> Result<Token<'s>, ParseError> {
        let start = self.pos;
        let mut i = start;
        let neg = self.peek_at(i) == Some(b'-');
        if neg {
            i += 1;
        }
        let radix = match (self.peek_at(i), self.peek_at(i + 1).map(|b| b.to_ascii_lowercase())) {
            (Some(b'0'), Some(b'x')) => 16,
            (Some(b'0'), Some(b'o')) => 8,
            (Some(b'0'), Some(b'b')) => 2,
            _ => 10,
        };
        let out_of_range = |this: &Self| this.err(start, "integer out of range");

        // Integer part (or the digits of a prefixed literal).
        if radix != 10 {
            i += 2;
        }
        let digits_start = i;
        let mut magnitude: u128 = 0;
        let mut overflow = false;
        let mut ndigits = 0;
        while let Some(b) = self.peek_at(i) {
            if b == b'_' {
                i += 1;
                continue;
            }
            let Some(d) = char::from(b).to_digit(radix) else { break };
            match magnitude.checked_mul(u128::from(radix)).and_then(|m| m.checked_add(d.into())) {
                Some(m) => magnitude = m,
                None => overflow = true,
            }
            ndigits += 1;
            i += 1;
        }
        if ndigits == 0 {
            let prefix = &self.src[digits_start - 2..digits_start];
            return Err(self.err(start, format!("expected digits after `{prefix}`")));
        }

        // Fraction and exponent make it a float (decimal only).
        let mut is_float = false;
        if radix == 10 {
            if self.peek_at(i) == Some(b'.')
                && self.peek_at(i + 1).is_some_and(|b| b.is_ascii_digit())
            {
                is_float = true;
                i += 1;
                while self.peek_at(i).is_some_and(|b| b.is_ascii_digit() || b == b'_') {
                    i += 1;
                }
            }
            if matches!(self.peek_at(i), Some(b'e' | b'E')) {
                let mut j = i + 1;
                if matches!(self.peek_at(j), Some(b'+' | b'-')) {
                    j += 1;
                }
                if self.peek_at(j).is_some_and(|b| b.is_ascii_digit()) {
                    is_float = true;
                    i = j;
                    while self.peek_at(i).is_some_and(|b| b.is_ascii_digit() || b == b'_') {
                        i += 1;
                    }
                }
            }
        }
        let number_end = i;

        // Size suffix.
        let suffix_start = i;
        while self.peek_at(i).is_some_and(is_ident_continue) {
            i += 1;
        }
        let suffix = &self.src[suffix_start..i];
        let multiplier: u128 = match size_multiplier(suffix) {
            Some(m) => m,
            None => {
                return Err(self.err(
                    suffix_start,
                    format!(
                        "invalid number suffix `{suffix}` (expected K, M, G, T or P, \
                         optionally followed by `i` and/or `B`)"
                    ),
                ));
            }
        };
        self.pos = i;

        let tok = if is_float {
            let text: String = self.src[start..number_end].chars().filter(|&c| c != '_').collect();
            let value: f64 = text.parse().map_err(|_| self.err(start, "invalid number"))?;
            let value = value * multiplier as f64;
            if !value.is_finite() {
                return Err(self.err(start, "number out of range"));
            }
            if multiplier > 1
                && value.fract() == 0.0
                && value >= INT_MIN as f64
                && value < INT_MAX as f64
            {
                Tok::Int(value as i128)
            } else {
                Tok::Float(value)
            }
        } else {
            if overflow {
                return Err(out_of_range(self));
            }
            let magnitude = magnitude.checked_mul(multiplier).ok_or_else(|| out_of_range(self))?;
            let value = if neg {
                // magnitude may be up to 2^128-1; anything past 2^63 is out of range anyway.
                0i128.checked_sub_unsigned(magnitude).ok_or_else(|| out_of_range(self))?
            } else {
                i128::try_from(magnitude).map_err(|_| out_of_range(self))?
            };
            if !(INT_MIN..=INT_MAX).contains(&value) {
                return Err(out_of_range(self));
            }
            Tok::Int(value)
        };
        Ok(Token { tok, start, end: i })
    }
}

/// `""` → 1; `K`/`k`/`M`/`G`/`T`/`P`, each optionally followed by `i` and/or `B`, → powers of
/// 1024; a lone `B` → 1.
fn size_multiplier(suffix: &str) -> Option<u128> {
    let s = suffix.as_bytes();
    let (unit, rest) = match s.split_first() {
        None => return Some(1),
        Some((b'B', [])) => return Some(1),
        Some((u, rest)) => (*u, rest),
    };
    let pow = match unit {
        b'K' | b'k' => 1,
        b'M' => 2,
        b'G' => 3,
        b'T' => 4,
        b'P' => 5,
        _ => return None,
    };
    match rest {
        [] | [b'i'] | [b'B'] | [b'i', b'B'] => Some(1u128 << (10 * pow)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok<'_>> {
        tokenize(src).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn operators() {
        use CmpOp::*;
        assert_eq!(
            toks("== = != <> < <= > >= ~ =~ !~ ! && || ( ) { } ,"),
            vec![
                Tok::Cmp(Eq),
                Tok::Cmp(Eq),
                Tok::Cmp(Ne),
                Tok::Cmp(Ne),
                Tok::Cmp(Lt),
                Tok::Cmp(Le),
                Tok::Cmp(Gt),
                Tok::Cmp(Ge),
                Tok::Match,
                Tok::Match,
                Tok::NotMatch,
                Tok::Bang,
                Tok::AndAnd,
                Tok::OrOr,
                Tok::LParen,
                Tok::RParen,
                Tok::LBrace,
                Tok::RBrace,
                Tok::Comma,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn spans() {
        let t = tokenize("uid  ==0").unwrap();
        assert_eq!((t[0].start, t[0].end), (0, 3));
        assert_eq!((t[1].start, t[1].end), (5, 7));
        assert_eq!((t[2].start, t[2].end), (7, 8));
        assert_eq!((t[3].start, t[3].end), (8, 8));
    }

    #[test]
    fn idents_and_keywords() {
        assert_eq!(
            toks("args.fd _x9 and or not in true false null AND"),
            vec![
                Tok::Ident("args.fd"),
                Tok::Ident("_x9"),
                Tok::Kw(Kw::And),
                Tok::Kw(Kw::Or),
                Tok::Kw(Kw::Not),
                Tok::Kw(Kw::In),
                Tok::Kw(Kw::True),
                Tok::Kw(Kw::False),
                Tok::Kw(Kw::Null),
                Tok::Ident("AND"),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn integers() {
        let one = |s: &str| match &toks(s)[0] {
            Tok::Int(v) => *v,
            t => panic!("{s}: {t:?}"),
        };
        assert_eq!(one("0"), 0);
        assert_eq!(one("42"), 42);
        assert_eq!(one("-42"), -42);
        assert_eq!(one("1_000_000"), 1_000_000);
        assert_eq!(one("0x1F"), 31);
        assert_eq!(one("0XfF"), 255);
        assert_eq!(one("-0x10"), -16);
        assert_eq!(one("0o755"), 0o755);
        assert_eq!(one("0b1010"), 10);
        assert_eq!(one("1K"), 1024);
        assert_eq!(one("1k"), 1024);
        assert_eq!(one("4Ki"), 4096);
        assert_eq!(one("4KiB"), 4096);
        assert_eq!(one("4KB"), 4096);
        assert_eq!(one("1M"), 1 << 20);
        assert_eq!(one("1Mi"), 1 << 20);
        assert_eq!(one("3G"), 3 << 30);
        assert_eq!(one("2Gi"), 2 << 30);
        assert_eq!(one("1T"), 1 << 40);
        assert_eq!(one("1P"), 1 << 50);
        assert_eq!(one("512B"), 512);
        assert_eq!(one("-1K"), -1024);
        assert_eq!(one("1.5K"), 1536);
        assert_eq!(one("0x10K"), 16 * 1024);
        assert_eq!(one("38549988050"), 38_549_988_050);
        assert_eq!(one("18446744073709551615"), u64::MAX.into());
        assert_eq!(one("-9223372036854775808"), i64::MIN.into());
        assert_eq!(one("0xffffffffffffffff"), u64::MAX.into());
        assert_eq!(one("16383P"), 16383 << 50);
    }

    #[test]
    fn floats() {
        let one = |s: &str| match &toks(s)[0] {
            Tok::Float(v) => *v,
            t => panic!("{s}: {t:?}"),
        };
        assert_eq!(one("1.5"), 1.5);
        assert_eq!(one("-0.25"), -0.25);
        assert_eq!(one("1e3"), 1000.0);
        assert_eq!(one("1E-3"), 0.001);
        assert_eq!(one("2.5e+2"), 250.0);
        assert_eq!(one("0.1K"), 102.4);
        assert_eq!(one("1_0.5"), 10.5);
        assert!(one("-0.0").is_sign_negative());
    }

    #[test]
    fn number_errors() {
        for (src, msg) in [
            ("18446744073709551616", "integer out of range"),
            ("-9223372036854775809", "integer out of range"),
            ("99999999999999999999999999999999999999999999", "integer out of range"),
            ("16384P", "integer out of range"),
            ("0x", "expected digits after `0x`"),
            ("0b2", "expected digits after `0b`"),
            ("12abc", "invalid number suffix `abc`"),
            ("1e999", "number out of range"),
            ("0x1g", "invalid number suffix `g`"),
            ("5Kb", "invalid number suffix `Kb`"),
        ] {
            let e = tokenize(src).unwrap_err();
            assert!(e.message.starts_with(msg), "{src}: {}", e.message);
        }
    }

    #[test]
    fn strings() {
        let one = |s: &str| match &toks(s)[0] {
            Tok::Str(v) => v.clone(),
            t => panic!("{s}: {t:?}"),
        };
        assert_eq!(one(r#""abc""#), b"abc");
        assert_eq!(one(r#""""#), b"");
        assert_eq!(one(r#"'it'"#), b"it");
        assert_eq!(one(r#"'say "hi"'"#), b"say \"hi\"");
        assert_eq!(one(r#""a\"b\\c\nd\te\rf\0g\'""#), b"a\"b\\c\nd\te\rf\0g'");
        assert_eq!(one(r#""foo\x00""#), b"foo\0");
        assert_eq!(one(r#""\xff\xFE""#), b"\xff\xfe");
        assert_eq!(one("\"é\""), "é".as_bytes());
    }

    #[test]
    fn string_errors() {
        for (src, offset, msg) in [
            (r#""abc"#, 0, "unterminated string"),
            (r#"'abc"#, 0, "unterminated string"),
            (r#""abc\"#, 0, "unterminated string"),
            (r#""a\q""#, 2, "invalid escape `\\q`"),
            (r#""a\é""#, 2, "invalid escape `\\é`"),
            (r#""\x4""#, 1, "`\\x` must be followed by two hex digits"),
            (r#""\xg0""#, 1, "`\\x` must be followed by two hex digits"),
        ] {
            let e = tokenize(src).unwrap_err();
            assert!(e.message.starts_with(msg), "{src}: {}", e.message);
            assert_eq!(e.offset, offset, "{src}");
        }
    }

    #[test]
    fn stray_characters() {
        assert!(tokenize("a & b").unwrap_err().message.contains("did you mean `&&`"));
        assert!(tokenize("a | b").unwrap_err().message.contains("did you mean `||`"));
        assert!(tokenize("- 1").unwrap_err().message.contains("expected a number after `-`"));
        assert_eq!(tokenize("a @ b").unwrap_err().message, "unexpected character `@`");
        assert_eq!(tokenize("a ☃").unwrap_err().message, "unexpected character `☃`");
        assert_eq!(tokenize(".5").unwrap_err().message, "unexpected character `.`");
        assert_eq!(
            tokenize("path ~ /tmp/*").unwrap_err().message,
            "unexpected character `/` (strings, paths and glob patterns must be quoted: \"/tmp/*.log\")"
        );
    }
}

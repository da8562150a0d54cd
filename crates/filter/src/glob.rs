//! Byte-oriented glob patterns for the `~` / `!~` operators.
//!
//! Syntax (the whole value must match):
//!
//! | pattern  | matches                                                     |
//! |----------|-------------------------------------------------------------|
//! | `*`      | any run of bytes (possibly empty) that contains no `/`      |
//! | `**`     | any run of bytes (possibly empty), `/` included             |
//! | `?`      | exactly one byte other than `/`                             |
//! | `[abc]`  | one byte from the set; ranges `[a-z]`; negation `[!x]`/`[^x]`; never `/` |
//! | `\c`     | the byte `c` literally (e.g. `\*`)                          |
//! | other    | itself                                                      |
//!
//! Matching simulates the pattern's NFA with a bit set of live positions, so it runs in
//! `O(len(text) × live positions)` time whatever the pattern: there is no backtracking and no
//! exponential blow-up on patterns such as `*a*a*a*a*b`. Patterns of up to 511 tokens match
//! without allocating.

use std::fmt;

/// One compiled pattern element.
#[derive(Clone, PartialEq, Eq)]
enum Tok {
    /// One literal byte.
    Byte(u8),
    /// `?`: one byte other than `/`.
    Any,
    /// `[...]`: a 256-bit set of allowed bytes (`/` never in it).
    Class(Box<[u64; 4]>),
    /// `*`: a run without `/`.
    Star,
    /// `**`: any run.
    StarStar,
}

impl fmt::Debug for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Byte(b) => write!(f, "{:?}", char::from(*b)),
            Tok::Any => f.write_str("?"),
            Tok::Class(_) => f.write_str("[..]"),
            Tok::Star => f.write_str("*"),
            Tok::StarStar => f.write_str("**"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// No metacharacters: plain equality.
    Exact(Vec<u8>),
    /// `literal**`.
    Prefix(Vec<u8>),
    /// `**literal`.
    Suffix(Vec<u8>),
    /// Anything else: NFA simulation over `toks`.
    Nfa { toks: Vec<Tok>, stars: Vec<usize> },
}

/// A compiled glob pattern (the syntax of the module documentation); also used outside
/// filter expressions, e.g. by `reanimator diff --ignore`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    kind: Kind,
}

/// Why a pattern does not compile.
#[derive(Debug)]
pub struct GlobError {
    pub(crate) message: String,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GlobError {}

/// Number of `u64` words kept on the stack for the live-state sets.
const INLINE_WORDS: usize = 8;

impl Glob {
    /// Compile `pat`.
    pub fn compile(pat: &[u8]) -> Result<Glob, GlobError> {
        let mut toks = Vec::new();
        let mut i = 0;
        while i < pat.len() {
            match pat[i] {
                b'*' => {
                    let start = i;
                    while i < pat.len() && pat[i] == b'*' {
                        i += 1;
                    }
                    toks.push(if i - start == 1 { Tok::Star } else { Tok::StarStar });
                    continue;
                }
                b'?' => toks.push(Tok::Any),
                b'[' => {
                    let (set, next) = compile_class(pat, i)?;
                    toks.push(Tok::Class(Box::new(set)));
                    i = next;
                    continue;
                }
                b'\\' => {
                    let Some(&b) = pat.get(i + 1) else {
                        return Err(GlobError {
                            message: "glob pattern ends with a lone `\\`".to_string(),
                        });
                    };
                    toks.push(Tok::Byte(b));
                    i += 2;
                    continue;
                }
                b => toks.push(Tok::Byte(b)),
            }
            i += 1;
        }
        Ok(Glob { kind: classify(toks) })
    }

    /// Whether the whole of `text` matches.
    pub fn matches(&self, text: &[u8]) -> bool {
        match &self.kind {
            Kind::Exact(lit) => text == lit.as_slice(),
            Kind::Prefix(lit) => text.starts_with(lit),
            Kind::Suffix(lit) => text.ends_with(lit),
            Kind::Nfa { toks, stars } => {
                let words = (toks.len() + 1).div_ceil(64);
                if words <= INLINE_WORDS {
                    let mut a = [0u64; INLINE_WORDS];
                    let mut b = [0u64; INLINE_WORDS];
                    run_nfa(toks, stars, text, &mut a[..words], &mut b[..words])
                } else {
                    let mut a = vec![0u64; words];
                    let mut b = vec![0u64; words];
                    run_nfa(toks, stars, text, &mut a, &mut b)
                }
            }
        }
    }
}

fn classify(toks: Vec<Tok>) -> Kind {
    let literal = |ts: &[Tok]| -> Option<Vec<u8>> {
        ts.iter().map(|t| if let Tok::Byte(b) = t { Some(*b) } else { None }).collect()
    };
    if let Some(lit) = literal(&toks) {
        return Kind::Exact(lit);
    }
    if let Some((Tok::StarStar, rest)) = toks.split_last() {
        if let Some(lit) = literal(rest) {
            return Kind::Prefix(lit);
        }
    }
    if let Some((Tok::StarStar, rest)) = toks.split_first() {
        if let Some(lit) = literal(rest) {
            return Kind::Suffix(lit);
        }
    }
    let stars = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| matches!(t, Tok::Star | Tok::StarStar))
        .map(|(i, _)| i)
        .collect();
    Kind::Nfa { toks, stars }
}

/// Parses the class starting at `pat[start] == b'['`; returns the byte set and the index after
/// the closing `]`.
fn compile_class(pat: &[u8], start: usize) -> Result<([u64; 4], usize), GlobError> {
    let mut set = [0u64; 4];
    let mut i = start + 1;
    let negate = matches!(pat.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let unterminated =
        || GlobError { message: "unterminated `[` character class in glob pattern".to_string() };
    let mut first = true;
    loop {
        let Some(&c) = pat.get(i) else { return Err(unterminated()) };
        if c == b']' && !first {
            i += 1;
            break;
        }
        first = false;
        // One (possibly escaped) byte, then an optional `-hi`.
        let (lo, next) = class_byte(pat, i).ok_or_else(unterminated)?;
        i = next;
        if pat.get(i) == Some(&b'-') && pat.get(i + 1).is_some_and(|&b| b != b']') {
            let (hi, next) = class_byte(pat, i + 1).ok_or_else(unterminated)?;
            i = next;
            if hi < lo {
                return Err(GlobError {
                    message: format!(
                        "invalid range `{}-{}` in glob character class",
                        char::from(lo).escape_default(),
                        char::from(hi).escape_default()
                    ),
                });
            }
            for b in lo..=hi {
                set[usize::from(b >> 6)] |= 1 << (b & 63);
            }
        } else {
            set[usize::from(lo >> 6)] |= 1 << (lo & 63);
        }
    }
    if negate {
        for w in &mut set {
            *w = !*w;
        }
    }
    // Only `**` crosses a `/`.
    set[usize::from(b'/' >> 6)] &= !(1 << (b'/' & 63));
    Ok((set, i))
}

fn class_byte(pat: &[u8], i: usize) -> Option<(u8, usize)> {
    match pat.get(i)? {
        b'\\' => Some((*pat.get(i + 1)?, i + 2)),
        &b => Some((b, i + 1)),
    }
}

#[inline]
fn set_bit(bits: &mut [u64], i: usize) {
    bits[i >> 6] |= 1 << (i & 63);
}

#[inline]
fn get_bit(bits: &[u64], i: usize) -> bool {
    bits[i >> 6] & (1 << (i & 63)) != 0
}

/// Adds the epsilon moves: a star may match the empty run.
#[inline]
fn close(bits: &mut [u64], stars: &[usize]) {
    // `stars` is ascending, so chains of stars close in one pass.
    for &s in stars {
        if get_bit(bits, s) {
            set_bit(bits, s + 1);
        }
    }
}

/// Bit `i` of a state set means "the first `i` tokens have matched the text read so far".
fn run_nfa<'b>(
    toks: &[Tok],
    stars: &[usize],
    text: &[u8],
    mut cur: &'b mut [u64],
    mut next: &'b mut [u64],
) -> bool {
    let m = toks.len();
    cur.fill(0);
    set_bit(cur, 0);
    close(cur, stars);
    for &c in text {
        next.fill(0);
        for (wi, &word) in cur.iter().enumerate() {
            let mut w = word;
            while w != 0 {
                let i = wi * 64 + w.trailing_zeros() as usize;
                w &= w - 1;
                let Some(tok) = toks.get(i) else { continue };
                match tok {
                    Tok::Byte(b) => {
                        if c == *b {
                            set_bit(next, i + 1);
                        }
                    }
                    Tok::Any => {
                        if c != b'/' {
                            set_bit(next, i + 1);
                        }
                    }
                    Tok::Class(set) => {
                        if set[usize::from(c >> 6)] & (1 << (c & 63)) != 0 {
                            set_bit(next, i + 1);
                        }
                    }
                    Tok::Star => {
                        if c != b'/' {
                            set_bit(next, i);
                        }
                    }
                    Tok::StarStar => set_bit(next, i),
                }
            }
        }
        close(next, stars);
        if next.iter().all(|&w| w == 0) {
            return false;
        }
        std::mem::swap(&mut cur, &mut next);
    }
    get_bit(cur, m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, t: &str) -> bool {
        Glob::compile(p.as_bytes()).unwrap().matches(t.as_bytes())
    }

    #[test]
    fn literal_and_fast_paths() {
        assert!(m("abc", "abc"));
        assert!(!m("abc", "abcd"));
        assert!(!m("abc", "ab"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("/tmp/**", "/tmp/a/b/c"));
        assert!(m("/tmp/**", "/tmp/"));
        assert!(!m("/tmp/**", "/tmp"));
        assert!(!m("/tmp/**", "/var/tmp/x"));
        assert!(m("**.log", "/var/log/syslog.log"));
        assert!(!m("**.log", "/var/log/syslog.log.1"));
        assert!(matches!(Glob::compile(b"abc").unwrap().kind, Kind::Exact(_)));
        assert!(matches!(Glob::compile(b"a**").unwrap().kind, Kind::Prefix(_)));
        assert!(matches!(Glob::compile(b"**a").unwrap().kind, Kind::Suffix(_)));
        assert!(matches!(Glob::compile(b"*a").unwrap().kind, Kind::Nfa { .. }));
    }

    #[test]
    fn star_does_not_cross_slash() {
        assert!(m("*.log", "syslog.log"));
        assert!(m("*.log", ".log"));
        assert!(!m("*.log", "var/syslog.log"));
        assert!(m("/var/*/x", "/var/log/x"));
        assert!(!m("/var/*/x", "/var/log/sub/x"));
        assert!(m("/var/**/x", "/var/log/sub/x"));
        assert!(m("/var/**/x", "/var/log/x"));
        assert!(!m("/var/**/x", "/var/x"));
        assert!(m("**/*.rs", "src/lib.rs"));
        assert!(m("**/*.rs", "a/b/c/lib.rs"));
        assert!(!m("**/*.rs", "lib.rs"));
        assert!(m("**x*y", "x/x_y"));
        assert!(!m("*x*y", "x/x_y"));
    }

    #[test]
    fn question_and_classes() {
        assert!(m("a?c", "abc"));
        assert!(!m("a?c", "a/c"));
        assert!(!m("a?c", "ac"));
        assert!(m("[abc]x", "bx"));
        assert!(!m("[abc]x", "dx"));
        assert!(m("[a-z]1", "q1"));
        assert!(!m("[a-z]1", "Q1"));
        assert!(m("[!x]", "y"));
        assert!(!m("[!x]", "x"));
        assert!(!m("[!x]", "/"));
        assert!(m("[^x]", "y"));
        assert!(m("[]]", "]"));
        assert!(m("[!]]", "a"));
        assert!(m("[a-]", "-"));
        assert!(m("[\\]]", "]"));
        assert!(!m("[/]", "/"), "classes never match `/`");
        assert!(m("file[0-9][0-9].txt", "file42.txt"));
    }

    #[test]
    fn escapes() {
        assert!(m("\\*", "*"));
        assert!(!m("\\*", "a"));
        assert!(m("a\\?", "a?"));
        assert!(!m("a\\?", "ab"));
        assert!(m("\\[x", "[x"));
    }

    #[test]
    fn bytes_not_utf8() {
        let g = Glob::compile(b"a?\xff*").unwrap();
        assert!(g.matches(b"a\x00\xff\xfe\xfd"));
        assert!(!g.matches(b"a\x00\xfe"));
        assert!(Glob::compile(b"\xc3*").unwrap().matches("é".as_bytes()));
    }

    #[test]
    fn errors() {
        assert!(Glob::compile(b"[abc").is_err());
        assert!(Glob::compile(b"[").is_err());
        assert!(Glob::compile(b"[]").is_err());
        assert!(Glob::compile(b"abc\\").is_err());
        assert!(Glob::compile(b"[z-a]").is_err());
    }

    #[test]
    fn long_patterns_spill_to_heap() {
        let pat = format!("{}*", "a?".repeat(400));
        let text = format!("{}tail", "ab".repeat(400));
        assert!(m(&pat, &text));
        assert!(!m(&pat, &text[1..]));
    }

    #[test]
    fn pathological_patterns_are_fast() {
        let text = "a".repeat(20_000);
        let start = std::time::Instant::now();
        for pat in ["*a*a*a*a*a*a*a*a*a*a*a*b", "**a**a**a**a**a**a**a**b", "*a**a*a**a*a**a*b"] {
            assert!(!m(pat, &text));
            assert!(m(&pat.replace('b', "a"), &text));
        }
        let nested = format!("{}b", "*a".repeat(60));
        assert!(!m(&nested, &text));
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
    }

    /// Reference semantics: plain recursive backtracking, exponential but obviously right.
    fn reference(p: &[u8], t: &[u8]) -> bool {
        fn tokens(p: &[u8]) -> Vec<Tok> {
            match Glob::compile(p).unwrap().kind {
                Kind::Nfa { toks, .. } => toks,
                Kind::Exact(l) => l.into_iter().map(Tok::Byte).collect(),
                Kind::Prefix(l) => {
                    let mut v: Vec<Tok> = l.into_iter().map(Tok::Byte).collect();
                    v.push(Tok::StarStar);
                    v
                }
                Kind::Suffix(l) => {
                    let mut v = vec![Tok::StarStar];
                    v.extend(l.into_iter().map(Tok::Byte));
                    v
                }
            }
        }
        fn go(p: &[Tok], t: &[u8]) -> bool {
            match p.split_first() {
                None => t.is_empty(),
                Some((Tok::Star, rest)) => {
                    for k in 0..=t.len() {
                        if go(rest, &t[k..]) {
                            return true;
                        }
                        if k < t.len() && t[k] == b'/' {
                            return false;
                        }
                    }
                    false
                }
                Some((Tok::StarStar, rest)) => (0..=t.len()).any(|k| go(rest, &t[k..])),
                Some((tok, rest)) => {
                    let Some((&c, trest)) = t.split_first() else { return false };
                    let ok = match tok {
                        Tok::Byte(b) => c == *b,
                        Tok::Any => c != b'/',
                        Tok::Class(set) => set[usize::from(c >> 6)] & (1 << (c & 63)) != 0,
                        _ => unreachable!(),
                    };
                    ok && go(rest, trest)
                }
            }
        }
        go(&tokens(p), t)
    }

    proptest::proptest! {
        #[test]
        fn nfa_agrees_with_backtracking(
            pat in proptest::collection::vec(
                proptest::sample::select(vec!["a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "\\*"]),
                0..8,
            ),
            text in proptest::collection::vec(
                proptest::sample::select(vec![b'a', b'b', b'/', b'*']),
                0..12,
            ),
        ) {
            let pat = pat.concat();
            let g = Glob::compile(pat.as_bytes()).unwrap();
            proptest::prop_assert_eq!(g.matches(&text), reference(pat.as_bytes(), &text));
        }
    }
}

//! Recursive-descent parser:
//!
//! ```text
//! filter    = or EOF
//! or        = and  { ("||" | "or")  and }
//! and       = unary { ("&&" | "and") unary }
//! unary     = ("!" | "not") unary | primary
//! primary   = "(" or ")" | "true" | "false" | predicate
//! predicate = FIELD [ CMP value | ("~" | "!~") pattern | ["not"] "in" set ]
//! set       = "{" [ value { "," value } [","] ] "}"
//! value     = NUMBER | STRING | IDENT | "true" | "false" | "null"
//! pattern   = STRING | IDENT
//! ```

use crate::ast::{Expr, Lit};
use crate::glob::Glob;
use crate::lexer::{tokenize, CmpOp, Kw, Tok, Token};
use crate::ParseError;

/// Maximum nesting of parentheses and negations.
pub(crate) const MAX_DEPTH: usize = 256;

pub(crate) fn parse(src: &str) -> Result<Expr, ParseError> {
    let toks = tokenize(src)?;
    let mut p = Parser { src, toks, pos: 0, depth: 0 };
    let e = p.or()?;
    if p.peek().tok != Tok::Eof {
        return Err(p.expected("`&&`, `||` or end of input"));
    }
    Ok(e)
}

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Token<'s>>,
    pos: usize,
    depth: usize,
}

/// How a token is named in messages.
fn describe(src: &str, t: &Token<'_>) -> String {
    let text = &src[t.start..t.end];
    let shown: String = if text.chars().count() > 24 {
        let mut s: String = text.chars().take(20).collect();
        s.push_str("...");
        s
    } else {
        text.to_string()
    };
    match &t.tok {
        Tok::Eof => "end of input".to_string(),
        Tok::Str(_) => format!("string {shown}"),
        Tok::Int(_) | Tok::Float(_) => format!("number `{shown}`"),
        Tok::Kw(_) => format!("keyword `{shown}`"),
        _ => format!("`{shown}`"),
    }
}

/// A hint for identifiers that are keywords in the wrong case (`AND`, `Or`, ...).
fn keyword_hint(t: &Token<'_>) -> String {
    if let Tok::Ident(s) = t.tok {
        let lower = s.to_ascii_lowercase();
        if Kw::ALL.iter().any(|(k, _)| *k == lower) {
            return format!(" (keywords are lowercase: `{lower}`)");
        }
    }
    String::new()
}

impl<'s> Parser<'s> {
    fn peek(&self) -> &Token<'s> {
        // The token list always ends with Eof and we never move past it.
        &self.toks[self.pos]
    }

    fn peek2(&self) -> &Token<'s> {
        &self.toks[(self.pos + 1).min(self.toks.len() - 1)]
    }

    fn bump(&mut self) -> Token<'s> {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn err_at(&self, offset: usize, message: String) -> ParseError {
        ParseError::new(self.src, offset, message)
    }

    /// "expected WHAT [after `PREV`], found X" at the current token.
    fn expected(&self, what: &str) -> ParseError {
        let t = self.peek();
        let after = match self.pos.checked_sub(1).map(|i| &self.toks[i]) {
            Some(prev) => format!(" after `{}`", &self.src[prev.start..prev.end]),
            None => String::new(),
        };
        let after = if after.chars().count() > 40 { String::new() } else { after };
        self.err_at(
            t.start,
            format!("expected {what}{after}, found {}{}", describe(self.src, t), keyword_hint(t)),
        )
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err_at(
                self.peek().start,
                format!("expression nested too deeply (more than {MAX_DEPTH} levels)"),
            ));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut items = vec![self.and()?];
        while matches!(self.peek().tok, Tok::OrOr | Tok::Kw(Kw::Or)) {
            self.bump();
            items.push(self.and()?);
        }
        Ok(if items.len() == 1 { items.pop().expect("one item") } else { Expr::Or(items) })
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut items = vec![self.unary()?];
        while matches!(self.peek().tok, Tok::AndAnd | Tok::Kw(Kw::And)) {
            self.bump();
            items.push(self.unary()?);
        }
        Ok(if items.len() == 1 { items.pop().expect("one item") } else { Expr::And(items) })
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if matches!(self.peek().tok, Tok::Bang | Tok::Kw(Kw::Not)) {
            self.enter()?;
            self.bump();
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(e)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let t = self.peek().clone();
        match t.tok {
            Tok::LParen => {
                self.enter()?;
                self.bump();
                let e = self.or()?;
                if self.peek().tok != Tok::RParen {
                    let col = ParseError::column_of(self.src, t.start);
                    let mut e = self.expected("`&&`, `||` or `)`");
                    e.message.push_str(&format!(" (unclosed `(` at column {col})"));
                    return Err(e);
                }
                self.bump();
                self.depth -= 1;
                Ok(e)
            }
            Tok::Kw(Kw::True) => {
                self.bump();
                Ok(Expr::Const(true))
            }
            Tok::Kw(Kw::False) => {
                self.bump();
                Ok(Expr::Const(false))
            }
            Tok::Ident(name) => {
                self.bump();
                self.predicate(name)
            }
            _ => Err(self.expected("a field name, `(` or `!`")),
        }
    }

    fn predicate(&mut self, field: &'s str) -> Result<Expr, ParseError> {
        let field: Box<str> = field.into();
        let t = self.peek().clone();
        match t.tok {
            Tok::Cmp(op) => {
                self.bump();
                let vt = self.peek().clone();
                let lit = self.value()?;
                if lit == Lit::Null && !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                    return Err(self.err_at(
                        vt.start,
                        format!(
                            "`null` can only be compared with `==` or `!=`, not `{}`",
                            op.as_str()
                        ),
                    ));
                }
                Ok(Expr::Compare { field, op, lit })
            }
            Tok::Match | Tok::NotMatch => {
                self.bump();
                let pt = self.peek().clone();
                let pattern = match &pt.tok {
                    Tok::Str(b) => b.clone(),
                    Tok::Ident(s) => s.as_bytes().to_vec(),
                    _ => return Err(self.expected("a glob pattern (a quoted string)")),
                };
                self.bump();
                let glob = Glob::compile(&pattern)
                    .map_err(|e| self.err_at(pt.start, format!("invalid pattern: {}", e.message)))?;
                Ok(Expr::Glob { field, negated: t.tok == Tok::NotMatch, pattern, glob })
            }
            Tok::Kw(Kw::In) => {
                self.bump();
                Ok(Expr::In { field, negated: false, set: self.set()? })
            }
            Tok::Kw(Kw::Not) if self.peek2().tok == Tok::Kw(Kw::In) => {
                self.bump();
                self.bump();
                Ok(Expr::In { field, negated: true, set: self.set()? })
            }
            Tok::Kw(Kw::Not) => {
                self.bump();
                Err(self.expected("`in`"))
            }
            // A value right after a field name: a missing operator.
            Tok::Int(_) | Tok::Float(_) | Tok::Str(_) | Tok::Ident(_) | Tok::LBrace | Tok::Bang
            | Tok::LParen | Tok::Kw(Kw::True | Kw::False | Kw::Null) => {
                Err(self.expected("an operator (`==`, `!=`, `<`, `<=`, `>`, `>=`, `~`, `!~`, `in`), `&&`, `||` or end of input"))
            }
            // Anything else ends a bare-field predicate; the caller checks what follows.
            _ => Ok(Expr::Truthy(field)),
        }
    }

    fn value(&mut self) -> Result<Lit, ParseError> {
        let lit = match &self.peek().tok {
            Tok::Int(i) => Lit::Int(*i),
            Tok::Float(f) => Lit::Float(*f),
            Tok::Str(b) => Lit::Bytes(b.clone()),
            Tok::Ident(s) => Lit::Bytes(s.as_bytes().to_vec()),
            Tok::Kw(Kw::True) => Lit::Bool(true),
            Tok::Kw(Kw::False) => Lit::Bool(false),
            Tok::Kw(Kw::Null) => Lit::Null,
            Tok::Kw(k) => {
                let name = Kw::ALL.iter().find(|(_, kw)| kw == k).map_or("", |(n, _)| *n);
                return Err(self.expected(&format!(
                    "a value (to compare with the string \"{name}\", quote it)"
                )));
            }
            _ => return Err(self.expected("a value")),
        };
        self.bump();
        Ok(lit)
    }

    fn set(&mut self) -> Result<Vec<Lit>, ParseError> {
        // `in %file`: a named set, one bare word the caller expands.
        if let Tok::Ident(w) = self.peek().tok {
            if w.starts_with('%') {
                self.bump();
                return Ok(vec![Lit::Bytes(w.as_bytes().to_vec())]);
            }
        }
        if self.peek().tok != Tok::LBrace {
            return Err(self.expected("`{`"));
        }
        self.bump();
        let mut set = Vec::new();
        loop {
            if self.peek().tok == Tok::RBrace {
                self.bump();
                return Ok(set);
            }
            set.push(self.value()?);
            match self.peek().tok {
                Tok::Comma => {
                    self.bump();
                }
                Tok::RBrace => {}
                _ => return Err(self.expected("`,` or `}`")),
            }
        }
    }
}

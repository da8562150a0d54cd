//! The registry is the only place that knows calls by name (issue 42): outside this crate,
//! what tells one call from another is a field of its [`SyscallDef`](ra_syscalls::SyscallDef)
//! (`io_class`, `nofollow`, `implied_flags`, `flush`, ...), its handler, or its arguments;
//! never a test of its name. This test reads the non-test Rust sources of every other crate
//! (`crates/*/src/**/*.rs`, without `#[cfg(test)]` items and the files of `#[cfg(test)]`
//! modules) and fails on every string literal equal to a name the registry knows a call by
//! (kernel name, trace name, alias: [`ra_syscalls::all_names`]), except the few in [`ALLOWED`],
//! each with its reason.
//!
//! A literal is found wherever it is (`== "read"`, `"rename" =>`, `starts_with("rename")`,
//! a list of names); a prefix test (`starts_with("symlink")`) is found too, as the literal
//! of any `starts_with`/`ends_with`/`strip_prefix` that begins a registry name.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The literals that may stay, by file (relative to the workspace root) and literal: names
/// that are not a call's in that place (trace schema names that happen to equal one, the
/// text a user reads). Keep it small: every entry says why the name is not a call test.
///
/// A literal of `"*"` stands for every call name in that file: the files whose matches are
/// over another vocabulary that shares names with calls (FUSE operations, io_uring opcodes).
const ALLOWED: &[(&str, &str, &str)] = &[
    // FUSE operation names of `reanimator fs` traces (docs/TRACE_FORMAT.md 3.10), not calls:
    // the FUSE request each record is, turned into the call it stands for or read for its
    // data.
    ("crates/trace/src/fsop.rs", "*", "FUSE operations turned into calls (to_syscalls)"),
    ("crates/anonymize/src/lib.rs", "*", "FUSE operations whose data is a target or a value"),
    ("crates/anonymize/src/xattr.rs", "listxattr", "the FUSE listxattr operation"),
    ("crates/stats/src/lib.rs", "read", "the FUSE read operation's data length"),
    ("crates/stats/src/lib.rs", "write", "the FUSE write operation's data length"),
    // io_uring opcode names (ra_syscalls::uring::OPS, io_uring's IORING_OP_* in lower case),
    // not calls.
    ("crates/trace/src/uring.rs", "*", "io_uring path requests as the calls they stand for"),
    ("crates/trace/src/format.rs", "fsync", "IORING_OP_FSYNC shown as fdatasync with DATASYNC"),
    ("crates/replay/src/calls/uring.rs", "*", "the replay of each io_uring opcode"),
    // Text a user writes or reads.
    ("crates/trace/src/data_mode.rs", "read", "--data's direction `read=LEVEL`"),
    ("crates/trace/src/data_mode.rs", "write", "--data's direction `write=LEVEL`"),
];

/// One string literal of a source file: its text (escapes not decoded: call names have
/// none), its line, and the code just before it (for prefix tests).
struct Lit {
    text: String,
    line: usize,
    /// Where it starts and ends (past its closing quote) in the source.
    span: (usize, usize),
}

/// The string literals of `src`, without those of `#[cfg(test)]` items, and the names of the
/// `#[cfg(test)] mod name;` modules declared in it (whose files are tests).
fn literals(src: &str) -> (Vec<Lit>, Vec<String>) {
    let b = src.as_bytes();
    let mut lits = Vec::new();
    let mut test_mods = Vec::new();
    let mut i = 0;
    let mut line = 1;
    // Inside a #[cfg(test)] item: the brace depth at which it ends (None: not inside).
    let mut skip: Option<(usize, bool)> = None; // (depth at its start, seen its `{`)
    let mut depth = 0usize;
    let line_at = |from: usize, to: usize, line: &mut usize| {
        *line += b[from..to].iter().filter(|&&c| c == b'\n').count();
    };
    while i < b.len() {
        let c = b[i];
        // Comments.
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let end = src[i..].find('\n').map_or(b.len(), |e| i + e);
            i = end;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let (mut j, mut nest) = (i + 2, 1);
            while j < b.len() && nest > 0 {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    nest += 1;
                    j += 1;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    nest -= 1;
                    j += 1;
                }
                j += 1;
            }
            line_at(i, j, &mut line);
            i = j;
            continue;
        }
        // Raw strings r"..", r#".."#, br#".."#.
        let raw_at = if c == b'r' {
            Some(i + 1)
        } else if c == b'b' && b.get(i + 1) == Some(&b'r') {
            Some(i + 2)
        } else {
            None
        };
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if let (Some(mut j), false) = (raw_at, ident_before) {
            let hashes = b[j..].iter().take_while(|&&h| h == b'#').count();
            j += hashes;
            if b.get(j) == Some(&b'"') {
                let close = format!("\"{}", "#".repeat(hashes));
                let end = src[j + 1..].find(&close).map_or(b.len(), |e| j + 1 + e);
                if skip.is_none() {
                    lits.push(Lit {
                        text: src[j + 1..end].to_string(),
                        line,
                        span: (i, end + close.len()),
                    });
                }
                line_at(i, end, &mut line);
                i = end + close.len();
                continue;
            }
        }
        if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                if b[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            if skip.is_none() {
                lits.push(Lit { text: src[i + 1..j].to_string(), line, span: (i, j + 1) });
            }
            line_at(i, j, &mut line);
            i = j + 1;
            continue;
        }
        // Char literals ('"', '{', '\'') and lifetimes ('a).
        if c == b'\'' {
            if b.get(i + 1) == Some(&b'\\') {
                let end = src[i + 2..].find('\'').map_or(b.len(), |e| i + 2 + e);
                i = end + 1;
                continue;
            }
            if b.get(i + 2) == Some(&b'\'') {
                i += 3;
                continue;
            }
            // A multi-byte char literal.
            if let Some(ch) = src[i + 1..].chars().next() {
                if ch.len_utf8() > 1 && src[i + 1 + ch.len_utf8()..].starts_with('\'') {
                    i += 2 + ch.len_utf8();
                    continue;
                }
            }
            i += 1;
            continue;
        }
        if c == b'\n' {
            line += 1;
        }
        if c == b'#' && skip.is_none() && src[i..].starts_with("#[cfg(test)]") {
            skip = Some((depth, false));
            let rest = src[i + "#[cfg(test)]".len()..].trim_start();
            if let Some(m) = rest.strip_prefix("mod ").or_else(|| rest.strip_prefix("pub mod ")) {
                let name: String =
                    m.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if m[name.len()..].trim_start().starts_with(';') {
                    test_mods.push(name);
                }
            }
            i += "#[cfg(test)]".len();
            continue;
        }
        match c {
            b'{' => {
                if let Some((d, seen)) = skip.as_mut() {
                    if *d == depth {
                        *seen = true;
                    }
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if let Some((d, true)) = skip {
                    if d == depth {
                        skip = None;
                    }
                }
            }
            b';' => {
                if let Some((d, false)) = skip {
                    if d == depth {
                        skip = None;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    (lits, test_mods)
}

/// True when literal `k` of `src` is a call name used as a test of a name: compared
/// (`== "read"`, `"read" !=`), a match pattern (`"rename" =>`, `"exit" | "exit_group"`, a
/// guard `"x" if`), the argument of a prefix test that begins a call name
/// (`starts_with("symlink")`), or one of two or more call names of a list of literals
/// (`["clone", "fork", ...]`, the shape of a name list read with `.contains`).
fn is_name_test(src: &str, lits: &[Lit], k: usize, names: &BTreeSet<&str>) -> bool {
    let l = &lits[k];
    let before = src[..l.span.0].trim_end();
    let after = src[l.span.1..].trim_start();
    let exact = names.contains(l.text.as_str());
    if ["starts_with(", "strip_prefix("].iter().any(|p| before.ends_with(p)) {
        return !l.text.is_empty() && names.iter().any(|n| n.starts_with(&l.text));
    }
    if !exact {
        return false;
    }
    // (A suffix test is one when the suffix is a call name: `ends_with("getxattr")`.)
    if ["==", "!=", "ends_with(", "strip_suffix("].iter().any(|p| before.ends_with(p)) {
        return true;
    }
    // The second and later names of an alternation (`"x" | "read"`).
    if before.ends_with('|')
        && !before.ends_with("||")
        && before[..before.len() - 1].trim_end().ends_with('"')
    {
        return true;
    }
    if ["==", "!=", "=>", "if "].iter().any(|p| after.starts_with(p))
        || (after.starts_with('|') && !after.starts_with("||"))
    {
        return true;
    }
    // A list of literals: neighbours joined by commas, within brackets.
    let joined = |a: &Lit, b: &Lit| src[a.span.1..b.span.0].trim() == ",";
    let (mut first, mut last) = (k, k);
    while first > 0 && joined(&lits[first - 1], &lits[first]) {
        first -= 1;
    }
    while last + 1 < lits.len() && joined(&lits[last], &lits[last + 1]) {
        last += 1;
    }
    let opens = src[..lits[first].span.0].trim_end().ends_with('[');
    let closes =
        src[lits[last].span.1..].trim_start().trim_start_matches(',').trim_start().starts_with(']');
    let calls = lits[first..=last].iter().filter(|l| names.contains(l.text.as_str())).count();
    opens && closes && calls >= 2
}

/// Every `.rs` file under `dir`, but those of the `#[cfg(test)]` modules (found as their
/// parent declares them: `tests.rs` or `tests/mod.rs` next to it).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The findings over the workspace: `path:line: "literal"` for every call name outside
/// [`ALLOWED`], and the allowlist entries that matched nothing.
fn scan(root: &Path) -> (Vec<String>, Vec<String>, usize) {
    let names: BTreeSet<&str> = ra_syscalls::all_names().collect();
    let mut crates: Vec<_> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "syscalls" && p.join("src").is_dir())
        .collect();
    crates.sort();
    let mut files = Vec::new();
    for c in &crates {
        sources(&c.join("src"), &mut files);
    }
    let mut test_files = BTreeSet::new();
    let mut parsed = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let (lits, mods) = literals(&src);
        // A module declared in `x.rs` or `x/mod.rs` lives in `x/name.rs` (or next to
        // `lib.rs`/`main.rs`/`mod.rs`: `name.rs`).
        let stem = f.file_stem().unwrap().to_str().unwrap();
        let dir = if ["lib", "main", "mod"].contains(&stem) {
            f.parent().unwrap().to_path_buf()
        } else {
            f.parent().unwrap().join(stem)
        };
        for m in mods {
            test_files.insert(dir.join(format!("{m}.rs")));
            test_files.insert(dir.join(&m).join("mod.rs"));
        }
        parsed.push((f.clone(), lits));
    }
    let mut found = Vec::new();
    let mut used = BTreeSet::new();
    let mut checked = 0;
    for (f, lits) in parsed {
        if test_files.contains(&f) {
            continue;
        }
        let rel = f.strip_prefix(root).unwrap().to_str().unwrap().to_string();
        let src = std::fs::read_to_string(&f).unwrap();
        for (k, l) in lits.iter().enumerate() {
            checked += 1;
            if !is_name_test(&src, &lits, k, &names) {
                continue;
            }
            match ALLOWED.iter().position(|(p, t, _)| *p == rel && (*t == l.text || *t == "*")) {
                Some(k) => {
                    used.insert(k);
                }
                None => found.push(format!("{rel}:{}: \"{}\"", l.line, l.text)),
            }
        }
    }
    let stale = ALLOWED
        .iter()
        .enumerate()
        .filter(|(k, _)| !used.contains(k))
        .map(|(_, (p, t, _))| format!("{p}: \"{t}\""))
        .collect();
    (found, stale, checked)
}

#[test]
fn no_call_name_is_tested_outside_the_registry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap();
    let (found, stale, checked) = scan(&root);
    assert!(
        checked > 5000,
        "only {checked} string literals read: is the scan reading the sources?"
    );
    assert!(
        found.is_empty(),
        "{} call names as string literals outside crates/syscalls (ask the registry entry: \
         ev.def's fields, its handler, its arguments; or, for a name that is not a call's, add \
         it to ALLOWED with the reason):\n{}",
        found.len(),
        found.join("\n")
    );
    assert!(stale.is_empty(), "ALLOWED entries that match nothing any more:\n{}", stale.join("\n"));
}

/// The scanner itself: it finds what it must, and skips comments, test items and char
/// literals that would otherwise derail it.
#[test]
fn the_scan_finds_names_and_skips_tests() {
    let src = r##"
fn a(name: &str) -> bool {
    let c = '"'; let d = '{'; let e = '\''; // "read" in a comment
    /* "write" in a block comment */
    name == "rename" || name.starts_with("symlink") || matches!(name, "x")
}
#[cfg(test)]
mod tests {
    fn b() { assert_eq!(name, "unlink"); let s = "{"; }
}
#[cfg(test)]
mod more;
#[cfg(test)]
use foo::bar;
fn c() -> &'static str { r#"open"# }
"##;
    let (lits, mods) = literals(src);
    let texts: Vec<_> = lits.iter().map(|l| (l.text.as_str(), l.line)).collect();
    assert_eq!(texts, [("rename", 5), ("symlink", 5), ("x", 5), ("open", 15)]);
    assert_eq!(mods, ["more"]);
    let names: BTreeSet<&str> = ra_syscalls::all_names().collect();
    let tested: Vec<_> = (0..lits.len())
        .filter(|&k| is_name_test(src, &lits, k, &names))
        .map(|k| &lits[k].text)
        .collect();
    assert_eq!(tested, ["rename", "symlink"]);
    // Each shape of a name test is found; a name that is only produced is not.
    let shapes = [
        ("fn f(n: &str) -> bool { n == \"read\" }", true),
        ("fn f(n: &str) -> bool { \"read\" != n }", true),
        ("fn f(n: &str) -> u8 { match n { \"rename\" => 1, _ => 0 } }", true),
        ("fn f(n: &str) -> bool { matches!(n, \"exit\" | \"exit_group\") }", true),
        ("fn f(n: &str) -> bool { n.starts_with(\"renameat\") }", true),
        ("fn f(n: &str) -> bool { [\"clone\", \"fork\"].contains(&n) }", true),
        ("fn f() -> Error { Error::Sys { call: \"fork\" } }", false),
        ("fn f() -> Op { lookup(\"openat\") }", false),
        ("fn f(k: u8) -> &'static str { match k { 0 => \"read\", _ => \"x\" } }", false),
        ("fn f(n: &str) -> bool { n.starts_with(\"snapshot.\") }", false),
    ];
    for (code, want) in shapes {
        let (lits, _) = literals(code);
        let got = (0..lits.len()).any(|k| is_name_test(code, &lits, k, &names));
        assert_eq!(got, want, "{code}");
    }
}

//! The guides that tell a contributor where things are (docs/ARCHITECTURE.md,
//! docs/HOWTO_ADD_SYSCALL.md) name files by their paths; a renamed or removed file makes them
//! lie. Every repository path they name must exist.

use std::path::Path;

const ROOTS: &[&str] = &["crates/", "scripts/", "bench/", "docs/", "fuzz/", "vendor/", ".ci/"];

/// Every token in `text` that starts with one of `ROOTS` (inside backticks or not), cut at the
/// first character that cannot be part of a path, without trailing punctuation.
fn named_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for root in ROOTS {
        let mut from = 0;
        while let Some(at) = text[from..].find(root) {
            let start = from + at;
            from = start + root.len();
            // A path starts a token: not the tail of a longer word (`src/crates/...`).
            if start > 0 {
                let prev = text.as_bytes()[start - 1];
                if prev.is_ascii_alphanumeric() || prev == b'/' || prev == b'_' || prev == b'.' {
                    continue;
                }
            }
            let tail = &text[start..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-*{},".contains(c)))
                .unwrap_or(tail.len());
            let p = tail[..end].trim_end_matches(['.', ',', '/']);
            // Globs and brace lists stand for several files; `{a,b}` is expanded below.
            if p.contains('*') {
                continue;
            }
            out.push(p.to_string());
        }
    }
    out
}

/// `crates/cli/src/{signals,partial}.rs` → both paths.
fn expand(p: &str) -> Vec<String> {
    match (p.find('{'), p.find('}')) {
        (Some(a), Some(b)) if a < b => p[a + 1..b]
            .split(',')
            .flat_map(|alt| expand(&format!("{}{}{}", &p[..a], alt, &p[b + 1..])))
            .collect(),
        _ => vec![p.trim_end_matches(',').to_string()],
    }
}

#[test]
fn every_path_the_guides_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in ["docs/ARCHITECTURE.md", "docs/HOWTO_ADD_SYSCALL.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        for p in named_paths(&text).iter().flat_map(|p| expand(p)) {
            checked += 1;
            if !root.join(&p).exists() {
                missing.push(format!("{doc}: {p}"));
            }
        }
    }
    assert!(checked > 20, "only {checked} paths found: the scanner is broken");
    assert!(
        missing.is_empty(),
        "paths named in the guides that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn scanner_finds_paths_and_expands_braces() {
    let t = "see `crates/cli/src/{signals,partial}.rs`, and crates/trace/src/fileio.rs. Not a/crates/x.";
    let got: Vec<String> = named_paths(t).iter().flat_map(|p| expand(p)).collect();
    assert_eq!(
        got,
        ["crates/cli/src/signals.rs", "crates/cli/src/partial.rs", "crates/trace/src/fileio.rs"]
    );
}

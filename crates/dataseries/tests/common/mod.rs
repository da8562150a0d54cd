//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `shared/testdata/dataseries` beside the workspace, or `None` (after printing "skip: ...")
/// when it is absent. With `REANIMATOR_REQUIRE_TESTDATA=1` a missing folder fails the test.
pub fn testdata() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/dataseries");
    if p.is_dir() {
        return Some(p);
    }
    if std::env::var("REANIMATOR_REQUIRE_TESTDATA").as_deref() == Ok("1") {
        panic!("third-party fixtures missing at {} (REANIMATOR_REQUIRE_TESTDATA=1)", p.display());
    }
    println!("skip: third-party fixtures not found at {}", p.display());
    None
}

/// Every valid (non-corrupt) .ds fixture.
pub fn valid_fixtures(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [
        "dataseries-check-data",
        "dataseries-check-data/recovery",
        "dataseries-examples",
        "reanimator-replayer",
    ] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_file() && name.contains(".ds") && !name.starts_with("corrupt-") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 22, "expected at least 22 valid fixtures, found {}", out.len());
    out
}

/// A fresh scratch directory under the target dir (one per test name, emptied when the test
/// starts again: runs do not pile up files).
pub fn scratch(name: &str) -> PathBuf {
    let base = std::env::var_os("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let d = base.join(format!("dataseries-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

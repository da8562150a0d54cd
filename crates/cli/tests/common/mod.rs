//! Helpers shared by the integration tests of this crate (`mod common;` in each file): the
//! ones that run the `reanimator` binary, which only this crate's tests can name. Helpers
//! that need no binary (scratch directories, test programs, skips) are in `ra_testkit`.

// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `reanimator` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reanimator"))
}

/// The standard output of a command that must have succeeded (`what` names it in the panic).
pub fn ok(o: Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {:?}: {}", o.status, String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap_or_else(|e| panic!("{what}: not UTF-8: {e}"))
}

/// `reanimator record` of `cmd` in `cwd` with the current backend and `extra` options.
pub fn record(trace: &Path, cwd: &Path, extra: &[&str], cmd: &[&str]) -> Output {
    bin()
        .args(["record", "-q", "--backend", ra_testkit::backend(), "-o"])
        .arg(trace)
        .args(extra)
        .arg("--")
        .args(cmd)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `reanimator replay TRACE --root ROOT --init --json EXTRA...` into an existing `root`: its
/// JSON report (which must parse) and the output, the exit status unchecked.
pub fn replay_json(trace: &Path, root: &Path, extra: &[&str]) -> (serde_json::Value, Output) {
    let o = bin()
        .arg("replay")
        .arg(trace)
        .arg("--root")
        .arg(root)
        .args(["--init", "--json"])
        .args(extra)
        .output()
        .unwrap();
    let r = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "replay report ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (r, o)
}

/// `reanimator dump TRACE ARGS...`, which must succeed: its output.
pub fn dump(trace: &Path, args: &[&str]) -> String {
    ok(bin().arg("dump").arg(trace).args(args).output().unwrap(), &format!("dump {args:?}"))
}

/// `reanimator keygen PATH`, which must succeed; returns PATH.
pub fn keygen(path: &Path) -> PathBuf {
    let o = bin().arg("keygen").arg(path).output().unwrap();
    assert!(
        o.status.success(),
        "keygen {}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    path.to_path_buf()
}

/// `reanimator verify TRACE --key KEY`: its exit status and what it printed (stdout, then
/// stderr).
pub fn verify(trace: &Path, key: &Path) -> (Option<i32>, String) {
    let o = bin().arg("verify").arg(trace).arg("--key").arg(key).output().unwrap();
    let text =
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    (o.status.code(), text)
}

/// A scripted trace: these calls, as recorded on x86_64 by a program started in `cwd`, with no
/// synthetic records of inherited descriptors.
pub fn write_scripted_trace(path: &Path, cwd: &[u8], events: &[ra_trace::Event]) {
    let info: Vec<(&str, &[u8])> = vec![("cwd", cwd), ("arch", b"x86_64"), ("synthetic_ids", b"0")];
    let mut w =
        ra_trace::TraceWriter::create(path, &info, ra_trace::WriterConfig::default()).unwrap();
    for e in events {
        w.append(e).unwrap();
    }
    w.finish().unwrap();
}

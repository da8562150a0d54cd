//! The finishing touches of the command-line tool (issue 40 item 7): `doctor` on this
//! machine (as root and as an unprivileged user), shell completions that a real bash
//! completes with, and man pages that man renders.

mod common;

use std::process::{Command, Output};

use common::bin;

fn doctor_json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("doctor --json: {e}: {}{}", String::from_utf8_lossy(&o.stdout), stderr(o))
    })
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The check called `name` (the first, for `free space`).
fn check<'a>(j: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {j:#}"))
}

fn root() -> Result<(), String> {
    if rustix::process::geteuid().is_root() {
        Ok(())
    } else {
        Err("needs root".into())
    }
}

/// As root on a machine where every backend works (CI's), doctor says so: each backend's
/// check is `ok` and agrees with what the backends' own probes find.
#[test]
fn doctor_as_root_finds_every_backend() {
    if !ra_testkit::privileged("doctor as root", root()) || !ra_testkit::ebpf_available() {
        return;
    }
    let o = bin().args(["doctor", "--json"]).output().unwrap();
    let j = doctor_json(&o);
    for name in ["ebpf backend", "kernel BTF", "ptrace backend", "FUSE", "cgroup v2"] {
        assert_eq!(check(&j, name)["status"], "ok", "{name}: {j:#}");
    }
    assert_eq!(j["failed"], 0, "{j:#}");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let free = check(&j, "free space");
    assert!(free["found"].as_str().unwrap().contains("MiB free"), "{free}");
    // The text form has a line per check.
    let t = bin().arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&t.stdout);
    assert!(text.lines().any(|l| l.starts_with("ok    ebpf backend")), "{text}");
}

/// As nobody the eBPF backend and FUSE mounts fail, each with why and what to do, ptrace
/// still works, and the exit status says that something failed.
#[test]
fn doctor_unprivileged_says_why_and_what_to_do() {
    if !ra_testkit::privileged("doctor as nobody (setpriv from root)", root())
        || !ra_testkit::have_program("setpriv")
    {
        return;
    }
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"])
        .arg(env!("CARGO_BIN_EXE_reanimator"))
        .args(["doctor", "--json"])
        .current_dir("/")
        .output()
        .unwrap();
    let j = doctor_json(&o);
    let ebpf = check(&j, "ebpf backend");
    assert_eq!(ebpf["status"], "fail", "{j:#}");
    assert!(ebpf["found"].as_str().unwrap().contains("CAP_BPF"), "{ebpf}");
    assert!(ebpf["fix"].as_str().unwrap().contains("root"), "{ebpf}");
    let fuse = check(&j, "FUSE");
    assert_eq!(fuse["status"], "fail", "{fuse}");
    assert!(fuse["fix"].as_str().is_some_and(|f| !f.is_empty()), "{fuse}");
    assert_eq!(check(&j, "ptrace backend")["status"], "ok", "{j:#}");
    assert!(j["failed"].as_u64().unwrap() >= 2, "{j:#}");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// The bash completions complete subcommands and their flags in a real bash.
#[test]
fn bash_completions_complete() {
    let o = bin().args(["completions", "bash"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let script = std::env::temp_dir().join(format!("ra-compl-{}.bash", std::process::id()));
    std::fs::write(&script, &o.stdout).unwrap();
    let complete = |words: &str| -> String {
        let r = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
                 _reanimator reanimator \"${{COMP_WORDS[COMP_CWORD]}}\" \
                 \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                script.display()
            ))
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", stderr(&r));
        String::from_utf8_lossy(&r.stdout).into_owned()
    };
    let subs = complete("reanimator d");
    assert!(subs.lines().any(|l| l == "doctor"), "{subs}");
    assert!(subs.lines().any(|l| l == "dump"), "{subs}");
    let flags = complete("reanimator record --ba");
    assert_eq!(flags.trim(), "--backend", "{flags}");
    let values = complete("reanimator record --backend ''");
    for b in ["auto", "ebpf", "ptrace"] {
        assert!(values.lines().any(|l| l == b), "{values}");
    }
    let _ = std::fs::remove_file(&script);
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let o = bin().args(["completions", shell]).output().unwrap();
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let s = String::from_utf8_lossy(&o.stdout);
        assert!(s.contains("doctor") && s.contains("backend"), "{shell}");
    }
    let bad = bin().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// `man DIR` writes a page per subcommand (nested ones too), which man renders with the
/// subcommand's flags.
#[test]
fn man_pages_per_subcommand() {
    let d = ra_testkit::scratch_dir("man");
    let o = bin().arg("man").arg(&d).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for page in
        ["reanimator.1", "reanimator-record.1", "reanimator-fs-mount.1", "reanimator-doctor.1"]
    {
        assert!(d.join(page).is_file(), "{page}");
    }
    if ra_testkit::have_program("man") {
        let r = Command::new("man")
            .arg("-l")
            .arg(d.join("reanimator-record.1"))
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&r.stdout);
        assert!(text.contains("reanimator-record") && text.contains("--backend"), "{text}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

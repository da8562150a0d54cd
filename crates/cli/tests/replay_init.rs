//! `replay --init`: the initial state a trace needs, inferred from its calls alone (recorded
//! without `--snapshot`, replayed with `--init=infer`, 0 mismatches: a reproducer, a make + gcc
//! build, a pyenv-style shim, an original Re-Animator `ls -R` trace), and what a snapshot
//! restore withholds unless `--allow-special` (device nodes, setuid/setgid bits, `security.*`
//! xattrs); roots that would hold the system or the replayer's own files are refused. Live
//! recordings run once per capture backend (`<test>::ptrace`, `<test>::ebpf`).

mod common;

use std::ffi::OsStr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ra_testkit::{backend, both_backends, have_program, shared_testdata};

use common::bin;

both_backends!(
    inferdir_access_then_enoent_beneath_makes_a_directory,
    make_and_gcc_build_replays_from_inferred_state,
    pyenv_style_shim_replays_from_inferred_state,
    content_read_through_a_listed_symlink_is_restored,
    snapshot_restore_withholds_special_files_unless_allowed,
);

/// Whether the tests run as root (uid 0: the owner of our own /proc entry).
fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

struct Case {
    base: PathBuf,
    work: PathBuf,
}

impl Case {
    fn new(name: &str) -> Case {
        let base = ra_testkit::case_dir("init", name);
        Case { work: base.join("work"), base }
    }

    /// Record `cmd` in the work directory (`snapshot`: with `--snapshot` of it).
    fn record(&self, cmd: &[&OsStr], env: &[(&str, &OsStr)], snapshot: bool) -> PathBuf {
        let trace = self.base.join("t.ds");
        let mut c = bin();
        c.args(["record", "-q", "--backend", backend(), "-o"]).arg(&trace);
        if snapshot {
            c.arg("--snapshot").arg(&self.work);
        }
        c.arg("--").args(cmd).current_dir(&self.work).stdin(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "record {cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
        trace
    }

    /// Replay into a fresh root `name`; the JSON report and the output.
    fn replay(&self, trace: &Path, name: &str, extra: &[&str]) -> (serde_json::Value, Output) {
        let root = self.base.join(name);
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        let o = bin()
            .arg("replay")
            .arg(trace)
            .arg("--root")
            .arg(&root)
            .arg("--json")
            .args(extra)
            .output()
            .unwrap();
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "replay report ({e}): {}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        });
        (r, o)
    }

    /// Replay with `--init=infer` and require every verified call to match.
    fn replay_inferred_clean(&self, trace: &Path) -> serde_json::Value {
        let (r, o) = self.replay(trace, "root", &["--init=infer"]);
        let show = || serde_json::to_string_pretty(&r).unwrap();
        assert_eq!(r["mismatch_total"], 0, "every verified call matches: {}", show());
        assert_eq!(r["totals"]["mismatched"], 0, "{}", show());
        assert!(r["totals"]["issued"].as_u64().unwrap() > 0, "{}", show());
        assert_eq!(o.status.code(), Some(0), "{}", show());
        r
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for inspection", self.base.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.base);
        }
    }
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// shared/testdata/repro/inferdir.c: `access("d", F_OK)` = 0, then `open("d/missing")` =
/// ENOENT. Nothing else shows what d is; the ENOENT beneath it says it is a directory (a file
/// would have given ENOTDIR).
fn inferdir_access_then_enoent_beneath_makes_a_directory() {
    let Some(src) = shared_testdata("repro/inferdir.c") else { return };
    if !have_program("cc") {
        return;
    }
    let c = Case::new("inferdir");
    let exe = c.base.join("inferdir");
    let o = Command::new("cc").arg("-O2").arg("-o").arg(&exe).arg(&src).output().unwrap();
    assert!(o.status.success(), "cc: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::create_dir(c.work.join("d")).unwrap();
    let trace = c.record(&[exe.as_os_str()], &[], false);
    c.replay_inferred_clean(&trace);
    let d = c.base.join("root").join(c.work.strip_prefix("/").unwrap()).join("d");
    assert!(d.is_dir(), "{} is a directory", d.display());
}

/// `make` runs `cc` twice to compile and once to link: `/usr/bin/cc` is a chain of symlinks
/// (`/etc/alternatives/cc`, `gcc`, `gcc-12`, ...) gcc resolves with readlink, stats and
/// executes; the PATH search stats and access()es every candidate.
fn make_and_gcc_build_replays_from_inferred_state() {
    if !have_program("make") || !have_program("cc") {
        return;
    }
    let c = Case::new("make");
    std::fs::write(
        c.work.join("main.c"),
        "#include <stdio.h>\n#include \"util.h\"\nint main(void) { printf(\"%d\\n\", twice(21)); return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        c.work.join("util.c"),
        "#include \"util.h\"\nint twice(int x) { return 2 * x; }\n",
    )
    .unwrap();
    std::fs::write(c.work.join("util.h"), "int twice(int x);\n").unwrap();
    std::fs::write(
        c.work.join("Makefile"),
        "CC = cc\nprog: main.o util.o\n\t$(CC) -o prog main.o util.o\n%.o: %.c util.h\n\t$(CC) -c -O2 -o $@ $<\n",
    )
    .unwrap();
    let trace = c.record(&[os("make"), os("-s")], &[], false);
    assert_eq!(
        Command::new(c.work.join("prog")).output().unwrap().stdout,
        b"42\n",
        "the recorded build worked"
    );
    let r = c.replay_inferred_clean(&trace);
    assert!(r["per_call"]["execve"]["matched"].as_u64().unwrap() >= 4, "{}", r["per_call"]);
    // The linked program is rebuilt in the root from the replayed writes.
    let prog = c.base.join("root").join(c.work.strip_prefix("/").unwrap()).join("prog");
    assert_eq!(std::fs::read(&prog).unwrap(), std::fs::read(c.work.join("prog")).unwrap());
}

/// A pyenv-style shim: `python3` on PATH is a shell script that finds the real interpreter and
/// `exec`s it (the kernel runs the script's `#!` interpreter; python then resolves
/// `/usr/bin/python3 -> python3.11` and stats its library, including symlinks seen only in a
/// directory listing).
fn pyenv_style_shim_replays_from_inferred_state() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("shim");
    let shims = c.work.join("shims");
    std::fs::create_dir(&shims).unwrap();
    let shim = shims.join("python3");
    std::fs::write(
        &shim,
        "#!/bin/sh\n# pyenv-style shim: find the real interpreter, exec it in this process.\n\
         program=\"${0##*/}\"\nPATH=/usr/bin:/bin\nexport PATH\nexec \"$program\" \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut path = shims.into_os_string();
    path.push(":/usr/bin:/bin");
    let trace = c.record(
        &[
            os("python3"),
            os("-c"),
            os("import json; open('out.json', 'w').write(json.dumps([1, 2]))"),
        ],
        &[("PATH", &path)],
        false,
    );
    assert_eq!(std::fs::read(c.work.join("out.json")).unwrap(), b"[1, 2]");
    c.replay_inferred_clean(&trace);
    let out = c.base.join("root").join(c.work.strip_prefix("/").unwrap()).join("out.json");
    assert_eq!(std::fs::read(out).unwrap(), b"[1, 2]");
}

/// A file read through a symlink that only a directory listing showed (binutils' `ar` lists
/// /usr/lib/bfd-plugins, stats each plugin and reads its ELF header through the link; a make
/// of libbpf replayed 23 reads of zeros): the bytes read are the link target's, and the target
/// the replay makes for the link holds them.
fn content_read_through_a_listed_symlink_is_restored() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("linkread");
    std::fs::create_dir_all(c.work.join("real")).unwrap();
    std::fs::create_dir_all(c.work.join("plugins")).unwrap();
    let elf: Vec<u8> = (0..84_472u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(c.work.join("real/plug.so"), &elf).unwrap();
    std::os::unix::fs::symlink("../real/plug.so", c.work.join("plugins/plug.so")).unwrap();
    let trace = c.record(
        &[
            os("python3"),
            os("-c"),
            os("import os\n\
                d = 'bin/../plugins'\n\
                os.makedirs('bin')\n\
                for n in os.listdir(d):\n\
                \x20   p = d + '/' + n\n\
                \x20   os.stat(p)\n\
                \x20   f = os.open(p, os.O_RDONLY)\n\
                \x20   assert len(os.read(f, 832)) == 832\n\
                \x20   os.close(f)\n"),
        ],
        &[],
        false,
    );
    c.replay_inferred_clean(&trace);
}

/// The original Re-Animator `ls -R` trace (strace --dataseries) replays from what it shows.
#[test]
fn original_ls_r_trace_replays_from_inferred_state() {
    let Some(trace) = shared_testdata("dataseries/reanimator-replayer/output_lsR.ds") else {
        return;
    };
    ra_testkit::set_backend("ptrace");
    let c = Case::new("lsR");
    let r = c.replay_inferred_clean(&trace);
    assert!(r["totals"]["issued"].as_u64().unwrap() > 10, "{}", r["totals"]);
}

/// A snapshot holding a setuid/setgid program, a device node (as root: `mknod c 1 3`) and a
/// file capability (`security.capability`): by default they come back as harmless
/// placeholders, each named in the report's initial-state notes; `--allow-special` restores
/// them as recorded.
fn snapshot_restore_withholds_special_files_unless_allowed() {
    let c = Case::new("special");
    let suid = c.work.join("suid");
    std::fs::write(&suid, b"#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o6755)).unwrap();
    let root = is_root();
    if root {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            c.work.join("null"),
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o666),
            rustix::fs::makedev(1, 3),
        )
        .unwrap();
        std::fs::set_permissions(c.work.join("null"), std::fs::Permissions::from_mode(0o666))
            .unwrap();
        // cap_net_raw+ep as setcap writes it (VFS_CAP_REVISION_2, little endian).
        let cap = [1u8, 0, 0, 2, 0, 0x20, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        std::fs::write(c.work.join("capped"), b"\x7fELF").unwrap();
        rustix::fs::setxattr(
            c.work.join("capped"),
            "security.capability",
            &cap,
            rustix::fs::XattrFlags::empty(),
        )
        .unwrap();
    } else {
        eprintln!("skip (part): the device node and security.capability need root");
    }
    let trace = c.record(&[os("sh"), os("-c"), os("echo done > out")], &[], true);
    let rel = c.work.strip_prefix("/").unwrap().to_path_buf();
    let notes = |r: &serde_json::Value| -> Vec<String> {
        r["init"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["what"] == "withheld")
            .map(|n| n["detail"].as_str().unwrap().to_string())
            .collect()
    };

    // Default: placeholders, reported.
    let (r, _) = c.replay(&trace, "safe", &["--init"]);
    let show = serde_json::to_string_pretty(&r["init"]).unwrap();
    let w = notes(&r);
    let dest = c.base.join("safe").join(&rel);
    let m = std::fs::symlink_metadata(dest.join("suid")).unwrap();
    assert_eq!(m.mode() & 0o7777, 0o755, "setuid/setgid bits dropped");
    assert_eq!(std::fs::read(dest.join("suid")).unwrap(), b"#!/bin/sh\necho hi\n");
    assert!(
        w.iter().any(|n| n.contains("/suid: setuid and setgid bits (mode 6755 restored as 0755)")
            && n.contains("--allow-special")),
        "{show}"
    );
    let snap = r["init"].as_array().unwrap().iter().find(|n| n["what"] == "snapshot 0").unwrap();
    let sentence = snap["detail"].as_str().unwrap();
    assert!(sentence.contains("restored") && sentence.contains("entries ("), "{sentence}");
    assert!(!sentence.contains("RestoreStats"), "a sentence, not a Debug dump: {sentence}");
    if root {
        let m = std::fs::symlink_metadata(dest.join("null")).unwrap();
        assert!(m.file_type().is_file() && m.len() == 0, "an empty regular file: {m:?}");
        assert_eq!(m.mode() & 0o7777, 0o666);
        assert!(
            w.iter().any(|n| n.contains("/null: character device 1:3 (an empty regular file")),
            "{show}"
        );
        let mut buf = [0u8; 64];
        assert!(rustix::fs::getxattr(dest.join("capped"), "security.capability", &mut buf).is_err());
        assert!(
            w.iter().any(|n| n.contains("/capped: xattr security.capability (not set)")),
            "{show}"
        );
        assert_eq!(w.len(), 3, "{show}");
    } else {
        assert_eq!(w.len(), 1, "{show}");
    }

    // --allow-special: as recorded; the final tree matches the recorded end state.
    let (r, o) = c.replay(&trace, "special", &["--init", "--allow-special"]);
    let show = serde_json::to_string_pretty(&r).unwrap();
    assert!(notes(&r).is_empty(), "{show}");
    assert_eq!(o.status.code(), Some(0), "{show}");
    assert_eq!(r["final_state"][0]["differences"], 0, "{show}");
    let dest = c.base.join("special").join(&rel);
    assert_eq!(std::fs::symlink_metadata(dest.join("suid")).unwrap().mode() & 0o7777, 0o6755);
    if root {
        let m = std::fs::symlink_metadata(dest.join("null")).unwrap();
        assert_eq!(m.mode() & libc::S_IFMT, libc::S_IFCHR);
        assert_eq!(m.rdev(), rustix::fs::makedev(1, 3));
        let mut buf = [0u8; 64];
        let n = rustix::fs::getxattr(dest.join("capped"), "security.capability", &mut buf).unwrap();
        assert_eq!(n, 20);
    }
}

/// `--root /`, or a root that holds the replayer's executable or the trace, is refused before
/// anything is replayed: one line, exit status 2 (with or without --force).
#[test]
fn roots_holding_the_system_or_the_replayer_are_refused() {
    let base = std::env::temp_dir().join(format!("ra-init-{}-roots", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let trace = base.join("t.ds");
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/example.ds"),
        &trace,
    )
    .unwrap();
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_reanimator"));
    let exe_dir = exe.parent().unwrap().to_path_buf();
    for (root, needle) in [
        (PathBuf::from("/"), "refusing to replay into /"),
        (exe_dir, "holds the reanimator executable"),
        (base.clone(), "holds the trace"),
    ] {
        for force in [false, true] {
            let mut c = bin();
            c.arg("replay").arg(&trace).arg("--root").arg(&root).arg("--init=infer");
            if force {
                c.arg("--force");
            }
            let o = c.output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{}: {err}", root.display());
            assert!(err.contains(needle), "{}: {err}", root.display());
            assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
            assert!(o.stdout.is_empty());
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}

//! `reanimator replay` never reaches outside its root: hostile traces (absolute paths to files
//! outside, `../` chains, symlinks planted by the trace pointing at `/` and outside, /proc
//! magic links, device nodes, a cwd walked up with `..`) replay without reading, writing,
//! creating, renaming, linking or changing the metadata of anything outside the root. inotify
//! watches on the outside files and directories prove it (opens and reads included), and
//! their state is compared before and after.

mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use ra_trace::{ArgValue, Event};

use common::bin;

fn path(p: &[u8]) -> ArgValue {
    let mut v = p.to_vec();
    v.push(0);
    ArgValue::data(v)
}

struct Script {
    t: i64,
    events: Vec<Event>,
}

impl Script {
    fn call(&mut self, name: &str, ret: i64, errno: i32, args: &[(&str, ArgValue)]) {
        let def = ra_syscalls::lookup(name).unwrap_or_else(|| panic!("{name} in the registry"));
        let mut e = Event::new(def);
        self.t += 10_000;
        e.time_called = Some(self.t);
        e.time_returned = Some(self.t + 5_000);
        e.pid = Some(777);
        e.tid = Some(777);
        e.ppid = Some(1);
        e.uid = Some(0);
        e.gid = Some(0);
        e.ret = Some(ret);
        e.errno = Some(errno);
        for (n, v) in args {
            assert!(e.set_arg(n, v.clone()), "{name} has no argument {n}");
        }
        self.events.push(e);
    }
    fn open(&mut self, p: &[u8], flags: i32, fd: i64) {
        self.call(
            "openat",
            fd,
            0,
            &[
                ("dirfd", ArgValue::Int(-100)),
                ("pathname", path(p)),
                ("flags", ArgValue::Int(flags.into())),
                ("mode", ArgValue::Int(0o644)),
            ],
        );
    }
    fn write(&mut self, fd: i64, data: &[u8]) {
        self.call(
            "write",
            data.len() as i64,
            0,
            &[
                ("fd", ArgValue::Int(fd)),
                ("buf", ArgValue::data(data.to_vec())),
                ("count", ArgValue::Int(data.len() as i64)),
            ],
        );
    }
    fn read(&mut self, fd: i64, data: &[u8]) {
        self.call(
            "read",
            data.len() as i64,
            0,
            &[
                ("fd", ArgValue::Int(fd)),
                ("buf", ArgValue::data(data.to_vec())),
                ("count", ArgValue::Int(4096)),
            ],
        );
    }
    fn close(&mut self, fd: i64) {
        self.call("close", 0, 0, &[("fd", ArgValue::Int(fd))]);
    }
    fn path_call(&mut self, name: &str, args: &[(&str, ArgValue)]) {
        self.call(name, 0, 0, args);
    }
    /// Write the calls as a trace recorded in /work.
    fn write_trace(&self, trace: &Path) {
        common::write_scripted_trace(trace, b"/work", &self.events);
    }
}

/// Every byte, mode, owner, size and mtime of a tree, for before/after comparison.
fn state(dir: &Path) -> Vec<(PathBuf, u32, u64, i64, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let md = std::fs::symlink_metadata(&d).unwrap();
        let content = if md.is_file() { std::fs::read(&d).unwrap() } else { Vec::new() };
        out.push((
            d.clone(),
            md.mode(),
            md.size(),
            md.mtime_nsec() + md.mtime() * 1_000_000_000,
            content,
        ));
        if md.is_dir() {
            for e in std::fs::read_dir(&d).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    out.sort();
    out
}

/// An inotify instance watching `paths` for every event.
struct Watch(i32);

impl Watch {
    fn new(paths: &[&Path]) -> Watch {
        // SAFETY: plain syscalls; the returned descriptor is owned by the Watch.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0);
        for p in paths {
            let c = CString::new(p.as_os_str().as_bytes()).unwrap();
            // SAFETY: `c` is a valid C string.
            let w = unsafe { libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_ALL_EVENTS) };
            assert!(w >= 0, "watch {}", p.display());
        }
        Watch(fd)
    }
    /// Events seen so far: (mask, name of the entry within a watched directory).
    fn events(&self) -> Vec<(u32, String)> {
        let mut buf = vec![0u8; 65536];
        let mut out = Vec::new();
        loop {
            // SAFETY: `buf` is valid for writes of its length.
            let r = unsafe { libc::read(self.0, buf.as_mut_ptr().cast(), buf.len()) };
            if r <= 0 {
                return out;
            }
            let mut off = 0usize;
            while off + 16 <= r as usize {
                let mask = u32::from_ne_bytes(buf[off + 4..off + 8].try_into().unwrap());
                let len = u32::from_ne_bytes(buf[off + 12..off + 16].try_into().unwrap()) as usize;
                let name =
                    buf[off + 16..off + 16 + len].split(|&c| c == 0).next().unwrap_or_default();
                out.push((mask, String::from_utf8_lossy(name).into_owned()));
                off += 16 + len;
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // SAFETY: closing the descriptor this Watch owns.
        unsafe { libc::close(self.0) };
    }
}

#[test]
fn hostile_traces_cannot_reach_outside_the_root() {
    let base = std::env::temp_dir().join(format!("ra-replay-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("secret.txt"), b"top secret\n").unwrap();
    let base = base.canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    let secret = outside.join("secret.txt");
    let sec = secret.as_os_str().as_bytes();
    let out_b = outside.as_os_str().as_bytes();
    // From the trace's cwd (/work) up to / and down to the outside directory.
    let ups = {
        let mut v = b"../../../../../../../../..".to_vec();
        v.extend_from_slice(out_b);
        v
    };
    let rel_secret = [&ups[..], b"/secret.txt"].concat();

    let mut s = Script { t: 1_763_800_000_000_000_000, events: Vec::new() };
    let o_rdwr = libc::O_RDWR;
    let creat = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;
    // 1. Absolute path to the outside file: read and overwrite.
    s.open(sec, o_rdwr, 3);
    s.read(3, b"top secret\n");
    s.write(3, b"pwned by absolute path\n");
    s.close(3);
    // 2. A ../ chain.
    s.open(&rel_secret, o_rdwr, 3);
    s.write(3, b"pwned by dotdot\n");
    s.close(3);
    // 3. The machine's password file.
    s.open(b"/etc/passwd", libc::O_RDONLY, 3);
    s.read(3, b"root:x:0:0:root:/root:/bin/bash\n");
    s.close(3);
    // 4. Symlinks the trace plants: to / and to the outside directory; then write through them.
    s.path_call("mkdir", &[("pathname", path(b"/work")), ("mode", ArgValue::Int(0o755))]);
    s.path_call("symlink", &[("target", path(b"/")), ("linkpath", path(b"/work/escape"))]);
    s.path_call("symlink", &[("target", path(out_b)), ("linkpath", path(b"/work/out"))]);
    s.path_call("symlink", &[("target", path(sec)), ("linkpath", path(b"/work/sec"))]);
    s.open(&[b"/work/escape", sec].concat(), creat, 3);
    s.write(3, b"pwned through a symlink to /\n");
    s.close(3);
    s.open(b"/work/out/secret.txt", creat, 3);
    s.write(3, b"pwned through a symlink outside\n");
    s.close(3);
    s.open(b"/work/sec", creat, 3);
    s.write(3, b"pwned through a file symlink\n");
    s.close(3);
    s.open(b"/work/out/planted.txt", creat | libc::O_EXCL, 3);
    s.write(3, b"planted\n");
    s.close(3);
    // 5. /proc magic links.
    s.open(&[b"/proc/self/root", sec].concat(), creat, 3);
    s.write(3, b"pwned through /proc\n");
    s.close(3);
    s.open(&[b"/proc/1/cwd/../../../..", sec].concat(), o_rdwr, 3);
    s.close(3);
    // 6. Namespace and metadata calls on outside paths.
    s.path_call("chdir", &[("path", path(b"/work"))]);
    s.path_call(
        "mkdir",
        &[("pathname", path(&[&ups[..], b"/newdir"].concat())), ("mode", ArgValue::Int(0o777))],
    );
    s.path_call("rename", &[("oldpath", path(sec)), ("newpath", path(b"/work/stolen"))]);
    s.path_call(
        "rename",
        &[("oldpath", path(b"/work/x")), ("newpath", path(&[out_b, b"/dir/moved"].concat()))],
    );
    s.path_call("link", &[("oldpath", path(sec)), ("newpath", path(b"/work/hard"))]);
    s.path_call("link", &[("oldpath", path(b"/work/sec")), ("newpath", path(b"/work/hard2"))]);
    s.path_call("chmod", &[("pathname", path(sec)), ("mode", ArgValue::Int(0o777))]);
    s.path_call("chmod", &[("pathname", path(b"/work/sec")), ("mode", ArgValue::Int(0o777))]);
    s.path_call(
        "chown",
        &[
            ("pathname", path(b"/work/out")),
            ("owner", ArgValue::Int(1234)),
            ("group", ArgValue::Int(1234)),
        ],
    );
    s.path_call("truncate", &[("path", path(b"/work/sec")), ("length", ArgValue::Int(0))]);
    s.path_call("unlink", &[("pathname", path(&rel_secret))]);
    s.path_call("rmdir", &[("pathname", path(&[out_b, b"/dir"].concat()))]);
    s.path_call(
        "setxattr",
        &[
            ("path", path(b"/work/sec")),
            ("name", path(b"user.pwned")),
            ("value", ArgValue::data(b"1".to_vec())),
            ("size", ArgValue::Int(1)),
            ("flags", ArgValue::Int(0)),
        ],
    );
    s.path_call(
        "utimensat",
        &[
            ("dirfd", ArgValue::Int(-100)),
            ("pathname", path(b"/work/sec")),
            ("times", ArgValue::Absent),
            ("flags", ArgValue::Int(0)),
        ],
    );
    // 7. A cwd walked up with .. and a relative create.
    s.path_call("chdir", &[("path", path(b"../../../../../../../../.."))]);
    s.open(&[&out_b[1..], b"/from-cwd.txt"].concat(), creat, 3);
    s.write(3, b"pwned from a walked-up cwd\n");
    s.close(3);
    // 8. A device node (a raw disk, if it were created and opened).
    s.path_call(
        "mknod",
        &[
            ("pathname", path(b"/work/disk")),
            ("mode", ArgValue::Int((libc::S_IFBLK | 0o666).into())),
            ("dev", ArgValue::Int(0x800)),
        ],
    );
    s.open(b"/work/disk", o_rdwr, 3);
    s.write(3, b"pwned the disk\n");
    s.close(3);
    s.call("exit_group", 0, 0, &[("status", ArgValue::Int(0))]);

    let trace = base.join("hostile.ds");
    s.write_trace(&trace);

    let before = state(&outside);
    let passwd_before = std::fs::read("/etc/passwd").unwrap();
    for init in [false, true] {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let watch = Watch::new(&[&outside, &outside.join("dir"), &secret, &base]);
        let passwd = Watch::new(&[Path::new("/etc/passwd")]);
        let _ = passwd.events();
        let mut c = bin();
        c.arg("replay").arg(&trace).arg("--root").arg(&root).arg("--json");
        if init {
            c.arg("--init=infer");
        }
        let o = c.output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "report: {e}: {}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        });
        // The hostile calls did not do what the trace says they did: replay reports it.
        assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(report["mismatch_total"].as_u64().unwrap() > 0);
        // Nothing outside was touched or even opened. (The base directory also reports what
        // happens to its children `root` and the trace file, which replay uses.)
        let seen: Vec<_> =
            watch.events().into_iter().filter(|(_, n)| n != "root" && n != "hostile.ds").collect();
        let after = state(&outside);
        assert!(after == before, "the outside tree changed (init={init})");
        assert_eq!(std::fs::read("/etc/passwd").unwrap(), passwd_before);
        let base_entries: Vec<_> =
            std::fs::read_dir(&base).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(
            base_entries.len(),
            3,
            "only root, outside and the trace in {}: {base_entries:?}",
            base.display()
        );
        assert!(seen.is_empty(), "inotify saw events on the outside files (init={init}): {seen:?}");
        assert!(passwd.events().iter().all(|(m, _)| m
            & (libc::IN_MODIFY | libc::IN_ATTRIB | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF)
            == 0));
        // What was created landed inside the root.
        assert!(root.join("work/escape").is_symlink());
        // The device node became an empty regular file (a placeholder), and the write meant
        // for the disk went into that file, inside the root.
        use std::os::unix::fs::FileTypeExt;
        let disk = std::fs::symlink_metadata(root.join("work/disk")).unwrap();
        assert!(!disk.file_type().is_block_device(), "a device node was created");
        assert!(disk.file_type().is_file(), "placeholder: {:?}", disk.file_type());
        assert_eq!(std::fs::read(root.join("work/disk")).unwrap(), b"pwned the disk\n");
        // With --init=infer the root holds its own copy of the "outside" file (the trace read
        // it): the writes and the rename acted on that copy.
        if init {
            let stolen = std::fs::read(root.join("work/stolen")).unwrap();
            assert!(stolen.starts_with(b"pwned"), "{}", String::from_utf8_lossy(&stolen));
            assert!(root.join(outside.strip_prefix("/").unwrap()).join("planted.txt").is_file());
        }
    }
    if std::env::var_os("KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&base);
    }
}

/// fcntl commands whose `arg` points to memory the trace does not hold (F_GET/SET_RW_HINT: a
/// u64; F_GETOWN_EX: a struct) are simulated: issued with the recorded address, the kernel
/// read or wrote the replayer's own memory there, or failed with EFAULT where it was not
/// mapped (stress-ng's fcntl stressor showed the EFAULTs).
#[test]
fn recorded_pointers_are_never_handed_to_the_kernel() {
    let base = std::env::temp_dir().join(format!("ra-replay-pointers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let root = base.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let mut s = Script { t: 1_763_800_000_000_000_000, events: Vec::new() };
    // The trace has no inherited descriptors: the file gets number 0.
    s.open(b"/work/f", libc::O_CREAT | libc::O_RDWR, 0);
    // An address that is mapped in every process: the replayer's own stack.
    let here = 0u64;
    let addr = std::ptr::addr_of!(here) as i64;
    for cmd in [1035, 1036, 1037, 1038, 16, 15] {
        s.call(
            "fcntl",
            0,
            0,
            &[("fd", ArgValue::Int(0)), ("cmd", ArgValue::Int(cmd)), ("arg", ArgValue::Int(addr))],
        );
    }
    s.close(0);
    s.call("exit_group", 0, 0, &[("status", ArgValue::Int(0))]);
    let trace = base.join("pointers.ds");
    s.write_trace(&trace);
    let o = bin()
        .arg("replay")
        .arg(&trace)
        .arg("--root")
        .arg(&root)
        .args(["--init=infer", "--json"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("report: {e}: {}", String::from_utf8_lossy(&o.stderr)));
    let fcntl = &r["per_call"]["fcntl"];
    assert_eq!(fcntl["replayed"], 6, "{fcntl}");
    assert_eq!(fcntl["issued"], 0, "never issued with the recorded address: {fcntl}");
    assert_eq!(fcntl["simulated"], 6, "{fcntl}");
    assert_eq!(r["mismatch_total"], 0, "{}", r["mismatches"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&base);
}

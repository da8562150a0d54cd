use std::collections::HashSet;
use std::path::PathBuf;

use ra_syscalls::lookup;

use super::*;
use ra_trace::key::Key;

fn key(b: u8) -> Key {
    Key::from_bytes([b; 32])
}

fn forward(fields: &[Field]) -> Forward {
    Forward {
        p: Pseudonymizer::new(&key(7).derive(Purpose::Pseudonym), false, Vec::new()),
        fields: fields.to_vec(),
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ra-anon-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn same_value_same_pseudonym_and_fields_keyed_apart() {
    let mut m = forward(&[Field::Path, Field::Uid, Field::Gid]);
    let a = m.string(Field::Path, b"alice");
    assert_eq!(a, m.string(Field::Path, b"alice"));
    assert_eq!(a.len(), PSEUDONYM_CHARS);
    assert_ne!(a, m.string(Field::Path, b"bob"));
    assert!(a.iter().all(|c| c.is_ascii_lowercase() || (b'2'..=b'7').contains(c)));
    // Same value, another field: another pseudonym (Tracefs: uid 0/gid 0 not correlated).
    assert_ne!(m.id(Field::Uid, 1000), m.id(Field::Gid, 1000));
    assert_eq!(m.id(Field::Uid, 1000), m.id(Field::Uid, 1000));
    // Special ids stay.
    for v in [0, -1, i64::from(u32::MAX)] {
        assert_eq!(m.id(Field::Uid, v), v);
    }
    assert_eq!(m.id(Field::Pid, 1), 1);
    let p = m.id(Field::Pid, 4242);
    assert!((300..1 << 22).contains(&p), "{p}");
    assert_eq!(m.id(Field::Pid, -4242), -p, "a process group is its leader's pid negated");
    // Another key, other pseudonyms.
    let mut other = Pseudonymizer::new(&key(8).derive(Purpose::Pseudonym), false, Vec::new());
    assert_ne!(other.string(Field::Path, b"alice"), a);
}

#[test]
fn collisions_never_merge_two_values() {
    // One-character pseudonyms: 32 of them, so 500 names must collide and be lengthened.
    let mut p =
        Pseudonymizer::new(&key(1).derive(Purpose::Pseudonym), false, Vec::new()).with_chars(1);
    let names: Vec<Vec<u8>> = (0..500).map(|i| format!("name{i}").into_bytes()).collect();
    let first: Vec<Vec<u8>> = names.iter().map(|n| p.string(Field::Path, n)).collect();
    let distinct: HashSet<&Vec<u8>> = first.iter().collect();
    assert_eq!(distinct.len(), names.len(), "two names got one pseudonym");
    assert!(p.strings(Field::Path).unwrap().collisions > 0);
    // Consistent afterwards, whatever the order.
    for (n, f) in names.iter().zip(&first).rev() {
        assert_eq!(&p.string(Field::Path, n), f);
    }
    // Ids: 20,000 pids, all distinct.
    let ids: HashSet<i64> = (2..20_002).map(|v| p.id(Field::Pid, v)).collect();
    assert_eq!(ids.len(), 20_000);
}

#[test]
fn paths_are_replaced_component_by_component() {
    let mut m = forward(&[Field::Path, Field::Pid]);
    let a = m.string(Field::Path, b"home");
    let b = m.string(Field::Path, b"alice");
    let c = m.string(Field::Path, b"notes.txt");
    let join = |parts: &[&[u8]]| parts.join(&b'/');
    let abs = map_path(&mut m, b"/home/alice/notes.txt\0");
    assert_eq!(abs, [b"/".as_slice(), &join(&[&a, &b, &c]), b"\0"].concat());
    assert_eq!(map_path(&mut m, b"alice/notes.txt"), join(&[&b, &c]));
    assert_eq!(map_path(&mut m, b"./alice/../alice//"), join(&[b".", &b, b"..", &b, b"", b""]));
    assert_eq!(map_path(&mut m, b""), b"");
    assert_eq!(map_path(&mut m, b"/"), b"/");
    // The kernel's directories stay; /proc/<pid> follows the pid.
    assert_eq!(map_path(&mut m, b"/proc/self/fd/3\0"), b"/proc/self/fd/3\0");
    assert_eq!(map_path(&mut m, b"/dev/null"), b"/dev/null");
    assert_eq!(map_path(&mut m, b"pipe:[4334370]\0"), b"pipe:[4334370]\0");
    assert_eq!(map_path(&mut m, b"anon_inode:[eventfd]"), b"anon_inode:[eventfd]");
    let pid = m.id(Field::Pid, 1234);
    assert_eq!(map_path(&mut m, b"/proc/1234/stat"), format!("/proc/{pid}/stat").into_bytes());
    // ... but only at the root.
    assert_ne!(map_path(&mut m, b"proc/self"), b"proc/self");
    let tid = m.id(Field::Pid, 1235);
    assert_eq!(
        map_path(&mut m, b"/proc/1234/task/1235/stat"),
        format!("/proc/{pid}/task/{tid}/stat").into_bytes()
    );
}

#[test]
fn what_follows_a_magic_link_is_the_path_it_names() {
    let mut m = forward(&[Field::Path, Field::Pid]);
    let n = |m: &mut Forward, c: &[u8]| m.string(Field::Path, c);
    let (a, b) = (n(&mut m, b"alice"), n(&mut m, b"x.txt"));
    let rel = [a.as_slice(), b"/", &b].concat();
    let abs = map_path(&mut m, b"/alice/x.txt");
    assert_eq!(abs, [b"/".as_slice(), &rel].concat());
    let pid = m.id(Field::Pid, 77).to_string();
    let tid = m.id(Field::Pid, 78).to_string();
    // Relative to the directory the link names: the rest is a relative path.
    for (prefix, kept) in [
        ("/proc/self/cwd/".to_string(), "/proc/self/cwd/".to_string()),
        ("/proc/thread-self/cwd/".into(), "/proc/thread-self/cwd/".into()),
        ("/proc/77/cwd/".into(), format!("/proc/{pid}/cwd/")),
        ("/proc/77/task/78/cwd/".into(), format!("/proc/{pid}/task/{tid}/cwd/")),
        ("/proc/self/fd/7/".into(), "/proc/self/fd/7/".into()),
        ("/proc/77/fd/12/".into(), format!("/proc/{pid}/fd/12/")),
        ("/proc/self/task/78/fd/3/".into(), format!("/proc/self/task/{tid}/fd/3/")),
        ("/proc/self/exe/".into(), "/proc/self/exe/".into()),
        (
            "/proc/self/map_files/400000-401000/".into(),
            "/proc/self/map_files/400000-401000/".into(),
        ),
        ("/dev/fd/7/".into(), "/dev/fd/7/".into()),
        ("/dev/stdin/".into(), "/dev/stdin/".into()),
        ("/dev/shm/".into(), "/dev/shm/".into()),
        ("/dev/mqueue/".into(), "/dev/mqueue/".into()),
        ("/sys/fs/cgroup/".into(), "/sys/fs/cgroup/".into()),
    ] {
        let p = format!("{prefix}alice/x.txt\0");
        let want = [kept.as_bytes(), &rel, b"\0"].concat();
        assert_eq!(map_path(&mut m, p.as_bytes()), want, "{prefix}");
    }
    // After `root`, an absolute path: the same as the path itself, kernel rules included.
    let root = map_path(&mut m, b"/proc/self/root/alice/x.txt");
    assert_eq!(root, [b"/proc/self/root".as_slice(), &abs].concat());
    assert_eq!(
        map_path(&mut m, b"/proc/77/root/proc/self/cwd/alice/x.txt"),
        [format!("/proc/{pid}/root/proc/self/cwd/").as_bytes(), &rel].concat()
    );
    assert_eq!(map_path(&mut m, b"/proc/self/root/"), b"/proc/self/root/");
    // The links themselves, and the kernel's other names, stay.
    for p in [&b"/proc/self/fd/7"[..], b"/proc/self/cwd", b"/proc/self/root", b"/dev/fd/3"] {
        assert_eq!(map_path(&mut m, p), p);
    }
    for p in [&b"/proc/sys/kernel/hostname"[..], b"/sys/class/net", b"/dev/pts/3", b"/proc/fd"] {
        assert_eq!(map_path(&mut m, p), p);
    }
    // A `..` may leave the kernel's directories: names from there on.
    assert_eq!(map_path(&mut m, b"/dev/../alice/x.txt"), [b"/dev/../".as_slice(), &rel].concat());
    assert_eq!(
        map_path(&mut m, b"/proc/self/../../alice"),
        [b"/proc/self/../../".as_slice(), &a].concat()
    );
    // A cgroup's path: every name beneath the hierarchy.
    let cg = map_path(&mut m, b"/sys/fs/cgroup/unified/alice.slice/cgroup.procs");
    assert!(cg.starts_with(b"/sys/fs/cgroup/") && !cg.windows(5).any(|w| w == b"alice"));
    // Kept names.
    let mut k = Forward {
        p: Pseudonymizer::new(&key(7).derive(Purpose::Pseudonym), false, vec![b"usr".to_vec()]),
        fields: vec![Field::Path],
    };
    let lib = k.string(Field::Path, b"lib");
    assert_eq!(map_path(&mut k, b"/usr/lib"), [b"/usr/".as_slice(), &lib].concat());
}

#[test]
fn extensions_kept_when_asked() {
    assert_eq!(extension(b"report.pdf"), b".pdf");
    assert_eq!(extension(b"a.tar.gz"), b".gz");
    assert_eq!(extension(b".bashrc"), b"");
    assert_eq!(extension(b"noext"), b"");
    assert_eq!(extension(b"trailing."), b"");
    assert_eq!(extension(b"x.verylongext"), b"");
    assert_eq!(extension(b"x.a-b"), b"");
    let mut p = Pseudonymizer::new(&key(7).derive(Purpose::Pseudonym), true, Vec::new());
    let r = p.string(Field::Path, b"report.pdf");
    assert!(r.ends_with(b".pdf") && r.len() == PSEUDONYM_CHARS + 4, "{r:?}");
    assert!(!r.starts_with(b"report"));
    // Two names with one stem: unrelated pseudonyms.
    let t = p.string(Field::Path, b"report.txt");
    assert_ne!(r[..PSEUDONYM_CHARS], t[..PSEUDONYM_CHARS]);
    let mut q = Pseudonymizer::new(&key(7).derive(Purpose::Pseudonym), false, Vec::new());
    assert!(!q.string(Field::Path, b"report.pdf").contains(&b'.'));
    // A name longer than NAME_MAX keeps its length (ENAMETOOLONG stays).
    let long = vec![b'x'; 300];
    assert_eq!(q.string(Field::Path, &long).len(), 300);
}

fn dirents64(names: &[&[u8]]) -> Vec<u8> {
    let ents: Vec<ra_trace::structs::Dirent> = names
        .iter()
        .enumerate()
        .map(|(i, n)| ra_trace::structs::Dirent {
            ino: 100 + i as u64,
            off: i as i64 + 1,
            d_type: if i < 2 { 4 } else { 8 },
            name: n.to_vec(),
        })
        .collect();
    ra_trace::structs::encode_dirents64(&ents)
}

fn names_of(b: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut o = 0;
    while o < b.len() {
        let len = usize::from(u16::from_le_bytes([b[o + 16], b[o + 17]]));
        let end = b[o + 19..].iter().position(|&c| c == 0).unwrap();
        out.push(b[o + 19..o + 19 + end].to_vec());
        o += len;
    }
    out
}

/// A small trace: calls with paths, listings, links, owners, pids, argv; a snapshot.
fn sample_trace(dir: &Path) -> PathBuf {
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("sub/data.txt"), b"secret contents").unwrap();
    std::os::unix::fs::symlink("sub/data.txt", tree.join("link")).unwrap();
    std::fs::hard_link(tree.join("sub/data.txt"), tree.join("zz-hard")).unwrap();
    let path = dir.join("t.ds");
    let mut w = TraceWriter::create(
        &path,
        &[("hostname", b"myhost.example"), ("cwd", b"/home/alice"), ("command", b"cp -r a b")],
        WriterConfig::default(),
    )
    .unwrap();
    w.record_snapshot(0, Phase::Start, &tree, Default::default()).unwrap();
    let ev = |name: &str| {
        let mut e = Event::new(lookup(name).unwrap());
        e.pid = Some(4242);
        e.tid = Some(4243);
        e.uid = Some(1000);
        e.gid = Some(1000);
        e.errno = Some(0);
        e
    };
    let mut e = ev("openat");
    e.set_arg("dirfd", ArgValue::Int(-100));
    e.set_arg("pathname", ArgValue::data(b"/home/alice/sub/data.txt\0".to_vec()));
    e.set_arg("flags", ArgValue::Int(0));
    e.set_arg("mode", ArgValue::Int(0));
    e.ret = Some(3);
    w.append(&e).unwrap();
    let mut e = ev("read");
    e.set_arg("fd", ArgValue::Int(3));
    e.set_arg("buf", ArgValue::data(b"secret contents".to_vec()));
    e.set_arg("count", ArgValue::Int(4096));
    e.ret = Some(15);
    w.append(&e).unwrap();
    let mut e = ev("getdents64");
    let listing = dirents64(&[b".", b"..", b"data.txt"]);
    e.set_arg("fd", ArgValue::Int(4));
    e.set_arg("count", ArgValue::Int(32768));
    e.ret = Some(listing.len() as i64);
    e.set_arg("dirp", ArgValue::data(listing));
    w.append(&e).unwrap();
    let mut e = ev("readlink");
    e.set_arg("pathname", ArgValue::data(b"link\0".to_vec()));
    e.set_arg("buf", ArgValue::data(b"sub/data.txt".to_vec()));
    e.set_arg("bufsiz", ArgValue::Int(13));
    e.ret = Some(12);
    w.append(&e).unwrap();
    let mut e = ev("chown");
    e.set_arg("pathname", ArgValue::data(b"sub\0".to_vec()));
    e.set_arg("owner", ArgValue::Int(1000));
    e.set_arg("group", ArgValue::Int(-1));
    e.ret = Some(0);
    w.append(&e).unwrap();
    let mut e = ev("kill");
    e.set_arg("pid", ArgValue::Int(-4242));
    e.set_arg("sig", ArgValue::Int(15));
    e.ret = Some(0);
    w.append(&e).unwrap();
    let mut e = ev("execve");
    e.set_arg("pathname", ArgValue::data(b"/usr/bin/cp\0".to_vec()));
    e.set_arg("argv", ArgValue::Strings(vec![b"cp".to_vec(), b"secret-arg".to_vec()]));
    e.set_arg("envp", ArgValue::Strings(vec![b"HOME=/home/alice".to_vec()]));
    e.ret = Some(0);
    w.append(&e).unwrap();
    // A kernel-side copy, with the bytes it moved (the ptrace recorder reads them back).
    let mut e = ev("copy_file_range");
    e.set_arg("fd_in", ArgValue::Int(3));
    e.set_arg("fd_out", ArgValue::Int(5));
    e.set_arg("len", ArgValue::Int(1 << 30));
    e.set_arg("flags", ArgValue::Int(0));
    e.ret = Some(13);
    e.extra
        .push((ra_trace::schema::COPIED_DATA.into(), ExtraValue::Bytes(b"secret copied".to_vec())));
    w.append(&e).unwrap();
    w.record_snapshot(0, Phase::End, &tree, Default::default()).unwrap();
    w.finish().unwrap();
    path
}

fn events(p: &Path) -> Vec<Event> {
    TraceReader::open(p).unwrap().events(None).collect::<Result<Vec<_>>>().unwrap()
}

fn all_opts(data: DataMode) -> Options {
    let fields =
        vec![Field::Path, Field::Uid, Field::Gid, Field::Pid, Field::Hostname, Field::Cmdline];
    Options {
        reversible: fields.clone(),
        fields,
        data,
        keep_extensions: true,
        keep_names: vec![b"usr".to_vec()],
        time_origin: 0,
        ds: dataseries::WriterOptions::uncompressed(),
    }
}

#[test]
fn anonymize_then_reverse_gives_the_trace_back() {
    let dir = scratch("roundtrip");
    let t = sample_trace(&dir);
    let k = key(3);
    let a = dir.join("a.ds");
    let s = anonymize_trace(&t, &a, &k, &all_opts(DataMode::Keep)).unwrap();
    assert_eq!(s.events, 8);
    assert!(s.fields[&Field::Path].0 > 0 && s.table_entries > 0);
    let orig = events(&t);
    let anon = events(&a);
    // Nothing identifying is left.
    let bytes = std::fs::read(&a).unwrap();
    for secret in [&b"alice"[..], b"myhost", b"data.txt", b"secret-arg", b"4242"] {
        assert!(!bytes.windows(secret.len()).any(|w| w == secret), "{secret:?} left");
    }
    // The listing's names are the path components' pseudonyms; lengths follow.
    let mut m = Forward {
        p: Pseudonymizer::new(&k.derive(Purpose::Pseudonym), true, vec![b"usr".to_vec()]),
        fields: all_opts(DataMode::Keep).fields,
    };
    let name = m.string(Field::Path, b"data.txt");
    assert!(name.ends_with(b".txt"));
    let listing = anon[2].arg("dirp").unwrap().as_data().unwrap();
    assert_eq!(names_of(listing), vec![b".".to_vec(), b"..".to_vec(), name.clone()]);
    assert_eq!(anon[2].ret, Some(listing.len() as i64));
    let target = anon[3].arg("buf").unwrap().as_data().unwrap().to_vec();
    assert_eq!(target, map_path(&mut m, b"sub/data.txt"));
    assert_eq!(anon[3].ret, Some(target.len() as i64));
    assert_eq!(anon[3].arg("bufsiz"), Some(&ArgValue::Int(13 + target.len() as i64 - 12)));
    assert_eq!(anon[4].arg("owner"), Some(&ArgValue::Int(m.id(Field::Uid, 1000))));
    assert_eq!(anon[4].arg("group"), Some(&ArgValue::Int(-1)));
    assert_eq!(anon[5].arg("pid"), Some(&ArgValue::Int(-m.id(Field::Pid, 4242))));
    assert_eq!(anon[0].pid, Some(m.id(Field::Pid, 4242) as i32));
    assert_eq!(anon[6].arg("pathname").unwrap().as_data().unwrap()[..5], *b"/usr/");
    // Snapshot paths agree with the calls'.
    let tr = TraceReader::open(&a).unwrap();
    let entries: Vec<Entry> =
        tr.snapshot_entries(0, Phase::Start).unwrap().collect::<Result<_>>().unwrap();
    let sub = m.string(Field::Path, b"sub");
    let paths: HashSet<Vec<u8>> = entries.iter().map(|e| e.path.clone()).collect();
    assert!(paths.contains(&[sub.as_slice(), b"/", &name].concat()));
    let mut sorted = entries.clone();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(sorted, entries, "entries in path order");
    // A hard-link group names its (new) first path.
    let linked: Vec<&Entry> = entries.iter().filter(|e| e.link.is_some()).collect();
    assert_eq!(linked.len(), 1);
    let first = linked[0].link.as_ref().unwrap();
    assert!(first < &linked[0].path && entries.iter().any(|e| &e.path == first));
    // Back.
    let b = dir.join("b.ds");
    reverse_trace(&a, &b, &k, Default::default()).unwrap();
    let back = events(&b);
    assert_eq!(back.len(), orig.len());
    for (o, r) in orig.iter().zip(&back) {
        assert_eq!(o, r);
    }
    let tb = TraceReader::open(&b).unwrap();
    let to = TraceReader::open(&t).unwrap();
    for phase in [Phase::Start, Phase::End] {
        let x: Vec<Entry> = to.snapshot_entries(0, phase).unwrap().collect::<Result<_>>().unwrap();
        let y: Vec<Entry> = tb.snapshot_entries(0, phase).unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(x, y);
    }
    for k in ["hostname", "cwd", "command"] {
        assert_eq!(to.info_value(k), tb.info_value(k), "{k}");
    }
    assert!(tb.info_value(INFO_FIELDS).is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn wrong_key_is_refused_without_showing_keys() {
    let dir = scratch("wrongkey");
    let t = sample_trace(&dir);
    let a = dir.join("a.ds");
    anonymize_trace(&t, &a, &key(3), &all_opts(DataMode::Keep)).unwrap();
    let e = reverse_trace(&a, &dir.join("b.ds"), &key(4), Default::default()).unwrap_err();
    assert!(matches!(e, Error::WrongKey { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains(&key(3).fingerprint()) && msg.contains(&key(4).fingerprint()), "{msg}");
    for k in [key(3), key(4)] {
        for d in [Purpose::Pseudonym, Purpose::Reverse] {
            let hex = ra_hex::encode(&k.derive(d));
            assert!(!msg.contains(&hex[..16]));
        }
    }
    // The key's bytes are nowhere in the output.
    let bytes = std::fs::read(&a).unwrap();
    for secret in [[3u8; 32].to_vec(), key(3).derive(Purpose::Reverse).to_vec()] {
        assert!(!bytes.windows(32).any(|w| w == secret.as_slice()));
    }
    // A trace anonymized irreversibly has nothing to reverse.
    let c = dir.join("c.ds");
    let opts = Options { reversible: Vec::new(), ..all_opts(DataMode::Keep) };
    anonymize_trace(&t, &c, &key(3), &opts).unwrap();
    let e = reverse_trace(&c, &dir.join("d.ds"), &key(3), Default::default()).unwrap_err();
    assert!(e.to_string().contains("no pseudonym table"), "{e}");
    // Data is never reversible; a reversible field must be replaced.
    let bad = Options { reversible: vec![Field::Comm], ..all_opts(DataMode::Keep) };
    assert!(anonymize_trace(&t, &dir.join("e.ds"), &key(3), &bad).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn data_dropped_or_digested() {
    let dir = scratch("data");
    let t = sample_trace(&dir);
    for (mode, name) in [(DataMode::Digest, "dg.ds"), (DataMode::Drop, "dr.ds")] {
        let a = dir.join(name);
        let s = anonymize_trace(&t, &a, &key(3), &all_opts(mode)).unwrap();
        assert_eq!(s.data_buffers, 2, "the read's buffer and the bytes the copy moved");
        let copy = events(&a).pop().unwrap();
        assert_eq!(copy.name, "copy_file_range");
        assert_eq!(copy.copy().unwrap().data, None, "{mode:?}");
        let bytes = std::fs::read(&a).unwrap();
        assert!(!bytes.windows(6).any(|w| w == b"secret"), "{mode:?}");
        let ev = &events(&a)[1];
        match mode {
            DataMode::Digest => assert_eq!(
                ev.arg("buf"),
                Some(&ArgValue::Hashed {
                    len: 15,
                    blake3: *blake3::hash(b"secret contents").as_bytes()
                })
            ),
            _ => {
                assert_eq!(ev.arg("buf"), Some(&ArgValue::NotCaptured));
                assert!(ev.buffer_not_captured);
            }
        }
        // Snapshot contents: zeros of the same size, stored nowhere.
        let tr = TraceReader::open(&a).unwrap();
        assert!(tr.blob_offsets().is_empty());
        let e: Vec<Entry> =
            tr.snapshot_entries(0, Phase::Start).unwrap().collect::<Result<_>>().unwrap();
        let f = e.iter().find(|e| e.kind == Kind::File).unwrap();
        assert_eq!(f.size, 15);
        assert_eq!(f.digest, Some(Digest::of(&[0u8; 15])));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn field_lists_name_the_valid_fields() {
    assert_eq!(parse_fields("uid,path,uid").unwrap(), vec![Field::Path, Field::Uid]);
    assert_eq!(parse_fields("all").unwrap().len(), Field::ALL.len() - 1);
    let e = parse_fields("path,name").unwrap_err();
    assert!(e.contains("`name`") && e.contains("path, uid, gid, pid, comm, hostname"), "{e}");
}

#[test]
fn fs_traces_are_anonymized_and_reversed() {
    use ra_trace::fsop::{FsData, FsRecord};
    let dir = scratch("fs");
    let t = dir.join("fs.ds");
    let cfg = WriterConfig { fs_ops: true, ..WriterConfig::default() };
    let mut w = TraceWriter::create(&t, &[("fs_mountpoint", b"/mnt/alice")], cfg).unwrap();
    let base = FsRecord {
        time_called: 1,
        time_returned: 2,
        pid: Some(4242),
        tid: 4243,
        uid: 1000,
        gid: 1000,
        comm: Some(b"alice-editor".to_vec()),
        fuse_unique: 7,
        nodeid: 1,
        ..FsRecord::default()
    };
    let recs = [
        FsRecord { op: "lookup", path: Some(b"/mnt/alice/notes.txt".to_vec()), ..base.clone() },
        FsRecord {
            op: "symlink",
            path: Some(b"/mnt/alice/link".to_vec()),
            data: FsData::Full(b"notes.txt".as_slice().into()),
            ..base.clone()
        },
        FsRecord {
            op: "write",
            fh: Some(3),
            offset: Some(0),
            length: Some(15),
            ret: 15,
            data: FsData::Full(b"secret contents".as_slice().into()),
            ..base.clone()
        },
        FsRecord { op: "setattr", owner_uid: Some(1000), owner_gid: Some(1000), ..base.clone() },
    ];
    for (i, r) in recs.iter().enumerate() {
        w.append_fs_preserving(r, 10 + 2 * i as u64).unwrap();
    }
    w.finish().unwrap();
    let mut opts = all_opts(DataMode::Keep);
    opts.fields.push(Field::Comm);
    opts.reversible.push(Field::Comm);
    let a = dir.join("a.ds");
    let s = anonymize_trace(&t, &a, &key(5), &opts).unwrap();
    assert_eq!(s.events, 4);
    assert_eq!(s.fields[&Field::Comm], (4, 1));
    let bytes = std::fs::read(&a).unwrap();
    for secret in [&b"alice"[..], b"notes", b"editor"] {
        assert!(!bytes.windows(secret.len()).any(|w| w == secret), "{secret:?} left");
    }
    let anon = events(&a);
    assert_eq!(anon.iter().map(|e| e.unique_id).collect::<Vec<_>>(), [10, 12, 14, 16]);
    let b = dir.join("b.ds");
    reverse_trace(&a, &b, &key(5), Default::default()).unwrap();
    assert_eq!(events(&b), events(&t));
    // Data digested: the write's bytes become a digest; the symlink's target is a path.
    let d = dir.join("d.ds");
    let s = anonymize_trace(&t, &d, &key(5), &all_opts(DataMode::Digest)).unwrap();
    assert_eq!(s.data_buffers, 1);
    let ev = &events(&d)[2];
    assert!(ev.extra.contains(&(
        "data_blake3".to_string(),
        ExtraValue::Bytes(blake3::hash(b"secret contents").as_bytes().to_vec())
    )));
    assert!(!ev.extra.iter().any(|(k, _)| k == "data"));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn info_of(p: &Path) -> Vec<(String, Vec<u8>)> {
    TraceReader::open(p).unwrap().info().to_vec()
}

fn fact<'a>(facts: &'a [(String, Vec<u8>)], k: &str) -> Option<&'a [u8]> {
    facts.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_slice())
}

#[test]
fn every_fact_follows_its_rule_and_unknown_ones_are_left_out() {
    // One table, no key twice.
    let keys: HashSet<&str> = facts::FACTS.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys.len(), facts::FACTS.len());
    let dir = scratch("facts");
    let t = dir.join("t.ds");
    let given: Vec<(&str, &[u8])> = vec![
        ("cwd", b"/home/alice"),
        ("hostname", b"alice-laptop"),
        ("command", b"cp -r alice-src alice-dst"),
        ("cgroup", b"/sys/fs/cgroup/alice.slice"),
        ("fs_lower_mount", b"/srv/alice"),
        ("fs_lower_device", b"alice-pool/home"),
        ("fs_lower_options", b"rw,relatime rw,size=16384k,uid=1000,context=alice"),
        ("fs_filter", b"path ~ \"/home/alice/**\""),
        ("spill_collector", b"alice-host.example:7070"),
        ("spill_reason", b"cannot reach alice-host.example: refused"),
        ("start_time", b"2023-11-14T22:13:20.250000000Z"),
        ("snapshot.0.dir", b"/home/alice/work"),
        ("snapshot.0.start.scan_began_ns", b"1700000001000000000"),
        ("snapshot.0.start.entries", b"0"),
        ("data_mode", b"full"),
        ("kernel", b"6.1.0"),
        ("exit_status", b"0"),
        ("some_new_fact", b"alice"),
        ("snapshot.0.start.something_new", b"alice"),
        ("anonymized_fields", b"alice"),
    ];
    let mut w = TraceWriter::create(&t, &given, WriterConfig::default()).unwrap();
    let mut e = Event::new(lookup("openat").unwrap());
    e.time_called = Some(1_700_000_002_000_000_000);
    e.set_arg("dirfd", ArgValue::Int(-100));
    e.set_arg("pathname", ArgValue::data(b"x\0".to_vec()));
    w.append(&e).unwrap();
    w.finish().unwrap();
    let mut opts = all_opts(DataMode::Digest);
    opts.fields.push(Field::Time);
    opts.reversible.push(Field::Time);
    let a = dir.join("a.ds");
    anonymize_trace(&t, &a, &key(3), &opts).unwrap();
    let out = info_of(&a);
    let bytes = std::fs::read(&a).unwrap();
    assert!(!bytes.windows(5).any(|w| w == b"alice"), "a name left in the facts");
    let mut m = Forward {
        p: Pseudonymizer::new(&key(3).derive(Purpose::Pseudonym), true, vec![b"usr".to_vec()]),
        fields: opts.fields.clone(),
    };
    assert_eq!(fact(&out, "cwd"), Some(map_path(&mut m, b"/home/alice").as_slice()));
    assert_eq!(fact(&out, "fs_lower_mount"), Some(map_path(&mut m, b"/srv/alice").as_slice()));
    assert_eq!(fact(&out, "hostname"), Some(m.string(Field::Hostname, b"alice-laptop").as_slice()));
    let opts_v = fact(&out, "fs_lower_options").unwrap();
    assert!(opts_v.starts_with(b"rw,relatime rw,size="), "{}", String::from_utf8_lossy(opts_v));
    assert!(opts_v.windows(5).any(|w| w == b",uid="));
    assert_eq!(fact(&out, "fs_filter"), Some(facts::REMOVED));
    assert_eq!(fact(&out, "spill_reason"), Some(facts::REMOVED));
    assert_eq!(fact(&out, "data_mode"), Some(&b"hash"[..]));
    assert_eq!(fact(&out, "kernel"), Some(&b"6.1.0"[..]));
    assert_eq!(fact(&out, "snapshot.0.start.entries"), Some(&b"0"[..]));
    // Times: the start at the origin (the fraction kept), the scan 0.75 s after it.
    assert_eq!(fact(&out, "start_time"), Some(&b"1970-01-01T00:00:00.250000000Z"[..]));
    assert_eq!(fact(&out, "snapshot.0.start.scan_began_ns"), Some(&b"1000000000"[..]));
    // What no rule knows is not copied; this run's own anonymized_* facts are.
    for k in ["some_new_fact", "snapshot.0.start.something_new"] {
        assert_eq!(fact(&out, k), None, "{k}");
    }
    assert_eq!(fact(&out, INFO_FIELDS).unwrap().windows(4).filter(|w| w == b"path").count(), 1);
    for (k, _) in &given {
        assert!(
            facts::fact_rule(k).is_some() || *k == "some_new_fact" || k.ends_with("something_new"),
            "{k}"
        );
    }
    // Back: every fact with a reversible rule as it was.
    let b = dir.join("b.ds");
    reverse_trace(&a, &b, &key(3), Default::default()).unwrap();
    let back = info_of(&b);
    for k in ["cwd", "hostname", "command", "cgroup", "fs_lower_mount", "fs_lower_options"] {
        assert_eq!(fact(&back, k), fact(&info_of(&t), k), "{k}");
    }
    for k in ["start_time", "snapshot.0.start.scan_began_ns", "snapshot.0.dir"] {
        assert_eq!(fact(&back, k), fact(&info_of(&t), k), "{k}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `struct stat` (x86_64) of a regular file with these times (seconds, nanoseconds).
fn stat_with_times(times: [(i64, i64); 3]) -> Vec<u8> {
    let mut b = vec![0u8; 144];
    b[24..28].copy_from_slice(&0o100644u32.to_le_bytes());
    for (i, (s, ns)) in times.iter().enumerate() {
        b[72 + 16 * i..80 + 16 * i].copy_from_slice(&s.to_le_bytes());
        b[80 + 16 * i..88 + 16 * i].copy_from_slice(&ns.to_le_bytes());
    }
    b
}

fn secs_at(b: &[u8], o: usize) -> i64 {
    i64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

#[test]
fn times_shift_to_the_origin_and_older_file_times_are_replaced_one_to_one() {
    let dir = scratch("time");
    let t = dir.join("t.ds");
    const S: i64 = 1_000_000_000;
    let start = 1_700_000_000; // 2023-11-14T22:13:20Z
    let old = 978_307_200; // 2001-01-01: a package's file
    let mut w = TraceWriter::create(
        &t,
        &[("start_time", b"2023-11-14T22:13:20.500000000Z"), ("end_time", b"2023-11-14T22:13:30Z")],
        WriterConfig::default(),
    )
    .unwrap();
    let mut e = Event::new(lookup("fstat").unwrap());
    e.time_called = Some((start + 1) * S + 7);
    e.time_returned = Some((start + 1) * S + 9);
    e.set_arg("fd", ArgValue::Int(3));
    e.set_arg(
        "statbuf",
        ArgValue::data(stat_with_times([(old, 1), (start + 3, 2), (start + 4, 3)])),
    );
    e.ret = Some(0);
    w.append(&e).unwrap();
    let mut e = Event::new(lookup("utimensat").unwrap());
    e.time_called = Some((start + 2) * S);
    let mut ts = Vec::new();
    for v in [old, 1, 0, ra_trace::structs::UTIME_OMIT] {
        ts.extend_from_slice(&v.to_le_bytes());
    }
    e.set_arg("dirfd", ArgValue::Int(-100));
    e.set_arg("pathname", ArgValue::data(b"f\0".to_vec()));
    e.set_arg("times", ArgValue::data(ts));
    e.set_arg("flags", ArgValue::Int(0));
    e.ret = Some(0);
    w.append(&e).unwrap();
    let mut e = Event::new(lookup("utimes").unwrap());
    e.time_called = Some((start + 2) * S + 1);
    let mut tv = Vec::new();
    for v in [start + 5, 250_000, old - 1, 0] {
        tv.extend_from_slice(&v.to_le_bytes());
    }
    e.set_arg("filename", ArgValue::data(b"f\0".to_vec()));
    e.set_arg("times", ArgValue::data(tv));
    e.ret = Some(0);
    w.append(&e).unwrap();
    w.add_lost("read", 2, 10, Some(((start + 3) * S, (start + 4) * S)), "ring full").unwrap();
    w.finish().unwrap();
    let opts = Options {
        fields: vec![Field::Time],
        reversible: vec![Field::Time],
        time_origin: 1000,
        ..all_opts(DataMode::Keep)
    };
    let a = dir.join("a.ds");
    let s = anonymize_trace(&t, &a, &key(9), &opts).unwrap();
    assert!(s.fields[&Field::Time].0 >= 8, "{:?}", s.fields);
    let ev = events(&a);
    let origin = 1000;
    // The clock: shifted by whole seconds, intervals exact.
    assert_eq!(ev[0].time_called, Some((origin + 1) * S + 7));
    assert_eq!(ev[0].time_returned, Some((origin + 1) * S + 9));
    assert_eq!(ev[1].time_called, Some((origin + 2) * S));
    // File times from the start on: shifted alike; older: replaced, before the origin.
    let st = ev[0].arg("statbuf").unwrap().as_data().unwrap();
    assert_eq!(secs_at(st, 88), origin + 3);
    assert_eq!(secs_at(st, 104), origin + 4);
    let old_p = secs_at(st, 72);
    assert!((origin - time::TIME_SPAN..origin).contains(&old_p), "{old_p}");
    assert_eq!(secs_at(st, 80), 1, "the sub-second part stays");
    // The same old second gives the same pseudonym in utimensat; UTIME_OMIT stays.
    let ts = ev[1].arg("times").unwrap().as_data().unwrap();
    assert_eq!(secs_at(ts, 0), old_p);
    assert_eq!((secs_at(ts, 16), secs_at(ts, 24)), (0, ra_trace::structs::UTIME_OMIT));
    let tv = ev[2].arg("times").unwrap().as_data().unwrap();
    assert_eq!((secs_at(tv, 0), secs_at(tv, 8)), (origin + 5, 250_000));
    assert!(secs_at(tv, 16) < origin && secs_at(tv, 16) != old_p);
    // Facts and losses: the trace's clock.
    let out = info_of(&a);
    assert_eq!(fact(&out, "start_time"), Some(&b"1970-01-01T00:16:40.500000000Z"[..]));
    assert_eq!(fact(&out, "end_time"), Some(&b"1970-01-01T00:16:50Z"[..]));
    let l = TraceReader::open(&a).unwrap().lost()[0].clone();
    assert_eq!((l.time_first, l.time_last), (Some((origin + 3) * S), Some((origin + 4) * S)));
    // No original second is left anywhere in the file.
    let bytes = std::fs::read(&a).unwrap();
    for v in [start, start + 3, old, old - 1] {
        assert!(!bytes.windows(8).any(|w| w == v.to_le_bytes()), "{v}");
    }
    // Back, exactly.
    let b = dir.join("b.ds");
    reverse_trace(&a, &b, &key(9), Default::default()).unwrap();
    assert_eq!(events(&b), events(&t));
    assert_eq!(TraceReader::open(&b).unwrap().lost(), TraceReader::open(&t).unwrap().lost());
    for k in ["start_time", "end_time"] {
        assert_eq!(fact(&info_of(&b), k), fact(&info_of(&t), k));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rfc3339_reads_what_it_writes() {
    for ns in [
        0,
        1,
        -1,
        1_700_000_000_250_000_000,
        -2_000_000_000_000_000_000,
        951_782_400 * 1_000_000_000,
    ] {
        assert_eq!(time::parse_rfc3339(&time::rfc3339(ns)), Some(ns), "{ns}");
    }
    assert_eq!(time::parse_rfc3339("2023-11-14T22:13:20Z"), Some(1_700_000_000_000_000_000));
    assert_eq!(time::parse_rfc3339("2023-11-14T22:13:20.5Z"), Some(1_700_000_000_500_000_000));
    // Any offset, as RFC 3339 allows.
    assert_eq!(time::parse_rfc3339("2023-11-14T23:13:20+01:00"), Some(1_700_000_000_000_000_000));
    for bad in [
        "",
        "2023-11-14T22:13:20",
        "2023-13-14T22:13:20Z",
        "2023-11-14T22:13:20.Z",
        "2023-02-30T00:00:00Z",
        "2300-01-01T00:00:00Z",
    ] {
        assert_eq!(time::parse_rfc3339(bad), None, "{bad}");
    }
}

#[test]
fn xattr_names_are_names_values_data_and_acls_permissions() {
    let dir = scratch("xattr");
    let tree = dir.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("f"), b"x").unwrap();
    let c = std::ffi::CString::new(tree.join("f").to_str().unwrap()).unwrap();
    let n = std::ffi::CString::new("user.alice-secret").unwrap();
    // SAFETY: NUL-terminated strings and a live 11-byte buffer.
    let r =
        unsafe { libc::setxattr(c.as_ptr(), n.as_ptr(), b"alice-value".as_ptr().cast(), 11, 0) };
    if r != 0 {
        eprintln!("skip: no user xattrs on {}", tree.display());
        return;
    }
    let t = dir.join("t.ds");
    let mut w = TraceWriter::create(&t, &[], WriterConfig::default()).unwrap();
    w.record_snapshot(0, Phase::Start, &tree, Default::default()).unwrap();
    let mut e = Event::new(lookup("flistxattr").unwrap());
    e.set_arg("fd", ArgValue::Int(3));
    let list = b"user.alice-secret\0security.selinux\0".to_vec();
    e.ret = Some(list.len() as i64);
    e.set_arg("list", ArgValue::data(list.clone()));
    e.set_arg("size", ArgValue::Int(list.len() as i64));
    w.append(&e).unwrap();
    let mut e = Event::new(lookup("fsetxattr").unwrap());
    e.set_arg("fd", ArgValue::Int(4));
    e.set_arg("name", ArgValue::data(b"user.alice-secret\0".to_vec()));
    e.set_arg("value", ArgValue::data(b"alice-value".to_vec()));
    e.set_arg("size", ArgValue::Int(11));
    e.set_arg("flags", ArgValue::Int(0));
    e.ret = Some(0);
    w.append(&e).unwrap();
    // An ACL: user::rw-, user:1000:r--, group::r--, mask::r--, other::---.
    let mut acl = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (1u16, 6u16, u32::MAX),
        (2, 4, 1000),
        (4, 4, u32::MAX),
        (0x10, 4, u32::MAX),
        (0x20, 0, u32::MAX),
    ] {
        acl.extend_from_slice(&tag.to_le_bytes());
        acl.extend_from_slice(&perm.to_le_bytes());
        acl.extend_from_slice(&id.to_le_bytes());
    }
    let mut e = Event::new(lookup("setxattr").unwrap());
    e.set_arg("path", ArgValue::data(b"f\0".to_vec()));
    e.set_arg("name", ArgValue::data(b"system.posix_acl_access\0".to_vec()));
    e.set_arg("value", ArgValue::data(acl.clone()));
    e.set_arg("size", ArgValue::Int(acl.len() as i64));
    e.set_arg("flags", ArgValue::Int(0));
    e.ret = Some(0);
    w.append(&e).unwrap();
    w.finish().unwrap();
    let mut m = forward(&[Field::Path, Field::Uid]);
    let p = m.xattr_name(b"alice-secret");
    // The name's length is kept, so that listxattr's size answers stay true.
    assert_eq!(p.len(), b"alice-secret".len());
    assert_ne!(p, m.string(Field::Path, b"alice-secret"), "unrelated to the file name's");
    let name = [b"user.".as_slice(), &p].concat();
    let uid = m.id(Field::Uid, 1000) as u32;
    for mode in [DataMode::Keep, DataMode::Drop] {
        let opts = Options {
            fields: vec![Field::Path, Field::Uid],
            reversible: vec![Field::Path, Field::Uid],
            keep_extensions: false,
            keep_names: Vec::new(),
            ..all_opts(mode)
        };
        let k = Key::from_bytes([7; 32]);
        let a = dir.join(format!("a-{}.ds", mode.name()));
        anonymize_trace(&t, &a, &k, &opts).unwrap();
        let bytes = std::fs::read(&a).unwrap();
        assert!(!bytes.windows(12).any(|w| w == b"alice-secret"), "{mode:?}");
        let ev = events(&a);
        // The list: each name, the kernel's as it is; its length and the capacity follow.
        let got = ev[0].arg("list").unwrap().as_data().unwrap();
        let want = [name.as_slice(), b"\0security.selinux\0"].concat();
        assert_eq!(got, want.as_slice());
        assert_eq!(ev[0].ret, Some(want.len() as i64));
        assert_eq!(ev[0].arg("size"), Some(&ArgValue::Int(want.len() as i64)));
        assert_eq!(
            ev[1].arg("name").unwrap().as_data().unwrap(),
            [name.as_slice(), b"\0"].concat()
        );
        // The ACL: kept whatever --data says, its user entry's id replaced.
        let v = ev[2].arg("value").unwrap().as_data().unwrap().to_vec();
        assert_eq!(v.len(), acl.len());
        assert_eq!(u32::from_le_bytes(v[16..20].try_into().unwrap()), uid);
        assert_eq!(v[..16], acl[..16]);
        // The snapshot's attribute: its name replaced, its value data.
        let tr = TraceReader::open(&a).unwrap();
        let es: Vec<Entry> =
            tr.snapshot_entries(0, Phase::Start).unwrap().collect::<Result<_>>().unwrap();
        let f = es.iter().find(|e| e.kind == Kind::File).unwrap();
        let value = f.xattrs.get(&name).expect("the renamed attribute");
        match mode {
            DataMode::Keep => assert_eq!(value, b"alice-value"),
            _ => assert_eq!(value, &vec![0u8; 11]),
        }
        if mode == DataMode::Keep {
            let b = dir.join("b.ds");
            reverse_trace(&a, &b, &k, Default::default()).unwrap();
            assert_eq!(events(&b), events(&t));
            let tb = TraceReader::open(&b).unwrap();
            let x: Vec<Entry> =
                tb.snapshot_entries(0, Phase::Start).unwrap().collect::<Result<_>>().unwrap();
            let y: Vec<Entry> = TraceReader::open(&t)
                .unwrap()
                .snapshot_entries(0, Phase::Start)
                .unwrap()
                .collect::<Result<_>>()
                .unwrap();
            assert_eq!(x, y);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bytes_in_a_column_no_rule_covers_are_left_out() {
    let mut ev = Event::new(lookup("openat").unwrap());
    ev.extra.push(("full_pathname".into(), ExtraValue::Bytes(b"/home/alice".to_vec())));
    ev.extra.push(("scm_rights".into(), ExtraValue::Bytes(vec![3, 0, 0, 0])));
    ev.extra.push(("some_new_column".into(), ExtraValue::Bytes(b"alice".to_vec())));
    ev.extra.push(("cache_miss_pages".into(), ExtraValue::Int(4)));
    let mut m = forward(&[Field::Pid]);
    map_event(&mut m, &mut ev, &LinkSizes::new());
    let get = |k: &str| ev.extra.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("some_new_column"), Some(ExtraValue::Null));
    assert_eq!(get("scm_rights"), Some(ExtraValue::Bytes(vec![3, 0, 0, 0])));
    assert_eq!(get("cache_miss_pages"), Some(ExtraValue::Int(4)));
    // A path column is the path field's: kept when paths are.
    assert_eq!(get("full_pathname"), Some(ExtraValue::Bytes(b"/home/alice".to_vec())));
}

#[test]
fn socket_addresses_by_family() {
    let sa = |family: u16, rest: &[u8]| [family.to_le_bytes().as_slice(), rest].concat();
    let v4 = sa(2, &[0x01, 0xbb, 192, 168, 1, 7, 0, 0, 0, 0, 0, 0, 0, 0]);
    let lo = sa(2, &[0x01, 0xbb, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    let mut six = vec![0x01, 0xbb, 0, 0, 0, 0];
    six.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    six.extend_from_slice(&[0, 0, 0, 0]);
    let v6 = sa(10, &six);
    let mut mapped = vec![0x01, 0xbb, 0, 0, 0, 0];
    mapped.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 7]);
    mapped.extend_from_slice(&[0, 0, 0, 0]);
    let mapped = sa(10, &mapped);
    let abstract_ = sa(1, b"\0alice-sock");
    let netlink = sa(16, &[0, 0, 0x92, 0x10, 0, 0, 0, 0, 0, 0]);
    let packet = sa(17, &[0, 3, 2, 0, 0, 0, 0, 1, 6, 0xde, 0xad, 0xbe, 0xef, 0, 1, 0, 0]);
    let mut m = forward(&[Field::Path, Field::Hostname, Field::Pid]);
    let a4 = sockaddr::map(&mut m, &v4).unwrap();
    assert_eq!(a4[..4], v4[..4], "family and port stay");
    assert_eq!(a4[4], 10);
    assert_ne!(a4[4..8], v4[4..8]);
    assert_eq!(sockaddr::map(&mut m, &v4).unwrap(), a4, "the same address, the same pseudonym");
    assert_eq!(sockaddr::map(&mut m, &lo), None, "loopback stays");
    let a6 = sockaddr::map(&mut m, &v6).unwrap();
    assert_eq!(a6[8..12], [0xfd, 0, 0, 0]);
    assert_eq!(a6.len(), v6.len());
    let am = sockaddr::map(&mut m, &mapped).unwrap();
    assert_eq!(am[20..24], a4[4..8], "an IPv4-mapped address maps its IPv4 part");
    let ab = sockaddr::map(&mut m, &abstract_).unwrap();
    assert_eq!(ab, sa(1, &[b"\0".as_slice(), &m.string(Field::Path, b"alice-sock")].concat()));
    let nl = sockaddr::map(&mut m, &netlink).unwrap();
    assert_eq!(u32::from_le_bytes(nl[4..8].try_into().unwrap()), m.id(Field::Pid, 4242) as u32);
    let pk = sockaddr::map(&mut m, &packet).unwrap();
    assert!(pk[..2] == packet[..2] && pk[2..].iter().all(|&b| b == 0));
    // A path socket's address as glibc passes it: the path, its NUL, then whatever the
    // caller's stack held (here a file time and a pointer). The garbage goes, with paths
    // anonymized or not, and as many bytes follow the NUL as before.
    let garbage = [0x9d, 0x10, 0x10, 0x6b, 0, 0, 0, 0, 0x12, 0x70, 0x37, 0xd8, 0x0e, 0x7f, 0, 0];
    let unix = sa(1, &[b"/run/nscd/socket\0".as_slice(), &garbage].concat());
    let au = sockaddr::map(&mut m, &unix).unwrap();
    let end = au[2..].iter().position(|&c| c == 0).unwrap() + 2;
    assert_eq!(au.len() - end, unix.len() - (2 + 16));
    assert!(au[end..].iter().all(|&b| b == 0), "{au:?}");
    assert_ne!(au[2..end], unix[2..2 + 16], "the path is a pseudonym");
    let mut keep_paths = forward(&[Field::Hostname]);
    let ku = sockaddr::map(&mut keep_paths, &unix).unwrap();
    assert_eq!(ku.len(), unix.len());
    assert_eq!(ku[..2 + 17], unix[..2 + 17], "the path and its NUL kept");
    assert!(ku[2 + 17..].iter().all(|&b| b == 0));
    // Back: the IPv6 address and the abstract name, from the table.
    let mut r = Reverser::default();
    r.strings.insert(
        Field::Path,
        [(m.string(Field::Path, b"alice-sock"), b"alice-sock".to_vec())].into(),
    );
    r.strings.insert(Field::Hostname, [(a6[12..24].to_vec(), v6[8..24].to_vec())].into());
    let mut b = Backward { r, fields: vec![Field::Path, Field::Hostname] };
    assert_eq!(sockaddr::map(&mut b, &a6).unwrap(), v6);
    assert_eq!(sockaddr::map(&mut b, &ab).unwrap(), abstract_);
}

#[test]
fn drop_also_drops_the_digests_a_hashed_recording_holds() {
    let dir = scratch("hashed");
    let t = dir.join("t.ds");
    let mut w =
        TraceWriter::create(&t, &[("data_mode", b"hash")], WriterConfig::default()).unwrap();
    let mut e = Event::new(lookup("read").unwrap());
    e.set_arg("fd", ArgValue::Int(3));
    e.set_arg("buf", ArgValue::Hashed { len: 6, blake3: *blake3::hash(b"secret").as_bytes() });
    e.set_arg("count", ArgValue::Int(6));
    e.ret = Some(6);
    w.append(&e).unwrap();
    w.finish().unwrap();
    for (mode, kept) in [(DataMode::Digest, true), (DataMode::Drop, false)] {
        let a = dir.join(format!("{}.ds", mode.name()));
        anonymize_trace(&t, &a, &key(3), &all_opts(mode)).unwrap();
        let ev = &events(&a)[0];
        assert_eq!(matches!(ev.arg("buf"), Some(ArgValue::Hashed { .. })), kept, "{mode:?}");
        let bytes = std::fs::read(&a).unwrap();
        let digest = blake3::hash(b"secret");
        assert_eq!(bytes.windows(32).any(|w| w == digest.as_bytes()), kept, "{mode:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn xattr_pseudonyms_keep_length_and_never_merge_two_names() {
    let mut m = forward(&[Field::Path]);
    // Every one-letter name: 36 originals for 32 one-letter pseudonyms; some must lengthen,
    // none may share a pseudonym, and none may become a kernel-interpreted name.
    let mut seen = std::collections::HashMap::new();
    let names: Vec<Vec<u8>> = (b'a'..=b'z').chain(b'0'..=b'9').map(|c| vec![c]).collect();
    for n in &names {
        let p = m.xattr_name(n);
        assert!(!p.is_empty());
        assert!(!super::xattr::is_kernel_rest(&p));
        if let Some(prev) = seen.insert(p.clone(), n.clone()) {
            panic!("{n:?} and {prev:?} share the pseudonym {p:?}");
        }
        assert_eq!(m.xattr_name(n), p, "stable");
    }
    let short = seen.keys().filter(|p| p.len() == 1).count();
    assert!((28..=32).contains(&short), "{short} of 36 kept one letter");
    for n in [b"checksum".as_slice(), b"selinux-like-but-not", b"x"] {
        if n.len() > 1 {
            assert_eq!(m.xattr_name(n).len(), n.len());
        }
    }
}

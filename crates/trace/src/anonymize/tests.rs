use std::collections::HashSet;
use std::path::PathBuf;

use ra_syscalls::lookup;

use super::*;
use crate::key::Key;

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
    let ents: Vec<crate::structs::Dirent> = names
        .iter()
        .enumerate()
        .map(|(i, n)| crate::structs::Dirent {
            ino: 100 + i as u64,
            off: i as i64 + 1,
            d_type: if i < 2 { 4 } else { 8 },
            name: n.to_vec(),
        })
        .collect();
    crate::structs::encode_dirents64(&ents)
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
    e.extra.push((crate::schema::COPIED_DATA.into(), ExtraValue::Bytes(b"secret copied".to_vec())));
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
            let hex: String = k.derive(d).iter().map(|b| format!("{b:02x}")).collect();
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
    use crate::fsop::{FsData, FsRecord};
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

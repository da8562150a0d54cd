//! Properties: any entries round-trip through a manifest; any bytes given to the manifest
//! reader give entries or an error, never a panic.

use std::collections::BTreeMap;

use proptest::prelude::*;
use ra_fsstate::{DevNum, Digest, Entry, Kind, Manifest, ManifestHeader, ManifestReader};

fn name() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>().prop_filter("no / or NUL", |b| *b != b'/' && *b != 0), 1..8)
        .prop_filter("not . or ..", |n| n != b"." && n != b"..")
}

fn entry(path: Vec<u8>, seed: u64, xattrs: BTreeMap<Vec<u8>, Vec<u8>>) -> Entry {
    let kind = if path.is_empty() { Kind::Dir } else { Kind::ALL[(seed % 7) as usize] };
    let target = (kind == Kind::Symlink).then(|| {
        let mut t = seed.to_le_bytes().to_vec();
        t.retain(|&b| b != 0);
        t.push(b'\xff');
        t
    });
    Entry {
        kind,
        mode: (seed as u32) & 0o7777,
        uid: (seed >> 8) as u32 % 70000,
        gid: (seed >> 16) as u32 % 70000,
        size: match (&target, kind) {
            (Some(t), _) => t.len() as u64,
            (None, Kind::File) => seed >> 40,
            _ => 0,
        },
        digest: (kind == Kind::File).then(|| Digest::of(&seed.to_le_bytes())),
        target,
        rdev: kind.is_device().then_some(DevNum { major: (seed % 300) as u32, minor: 7 }),
        xattrs,
        link: None,
        mtime_ns: (seed as i64).wrapping_sub(1 << 62),
        path,
    }
}

proptest! {
    #[test]
    fn entries_round_trip(
        names in prop::collection::btree_set(prop::collection::vec(name(), 1..3), 0..20),
        seeds in prop::collection::vec(any::<u64>(), 21),
        xattrs in prop::collection::btree_map(name(), prop::collection::vec(any::<u8>(), 0..6), 0..3),
    ) {
        let mut paths: Vec<Vec<u8>> = names.into_iter().map(|c| c.join(&b'/')).collect();
        paths.push(Vec::new());
        paths.sort();
        paths.dedup();
        let entries: Vec<Entry> = paths
            .into_iter()
            .enumerate()
            .map(|(i, p)| entry(p, seeds[i], if i % 2 == 0 { xattrs.clone() } else { BTreeMap::new() }))
            .collect();
        let m = Manifest { header: ManifestHeader::default(), entries };
        let bytes = m.write_to(Vec::new()).unwrap();
        prop_assert_eq!(Manifest::read_from(&bytes[..]).unwrap(), m);
    }

    #[test]
    fn reader_never_panics(lines in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..80), 0..6)) {
        let mut t = b"{\"format\":\"reanimator-manifest\",\"version\":1}\n".to_vec();
        for l in lines {
            t.extend(l);
            t.push(b'\n');
        }
        if let Ok(r) = ManifestReader::new(&t[..]) {
            for e in r {
                let _ = e;
            }
        }
    }

    #[test]
    fn mutated_manifests_never_panic(pos in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut x = BTreeMap::new();
        x.insert(b"user.a".to_vec(), b"\xff\x00".to_vec());
        let m = Manifest {
            header: ManifestHeader::default(),
            entries: vec![entry(Vec::new(), 1, x), entry(b"a".to_vec(), 2, BTreeMap::new())],
        };
        let mut bytes = m.write_to(Vec::new()).unwrap();
        let i = pos.index(bytes.len());
        bytes[i] = byte;
        let _ = Manifest::read_from(&bytes[..]);
    }
}

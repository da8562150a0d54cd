//! The output chain shared by every trace writer (issue 19): compression modes, and the
//! flags' effect on what is recorded (nothing: the same events come back from every mode).

use std::path::{Path, PathBuf};
use std::process::Command;

use ra_testkit::{backend, both_backends};
use ra_trace::{Event, TraceReader};

both_backends!(every_compression_mode_records_the_same_events);

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reanimator"))
}

fn scratch(name: &str) -> PathBuf {
    let d =
        std::env::temp_dir().join(format!("ra-chain-{}-{name}-{}", std::process::id(), backend()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn events(path: &Path) -> Vec<Event> {
    TraceReader::open(path).expect("trace opens").events(None).map(|e| e.expect("event")).collect()
}

/// The calls' names in order: the same run to run (addresses and times are not).
fn shape(evs: &[Event]) -> Vec<String> {
    evs.iter().map(|e| e.name.clone()).collect()
}

fn every_compression_mode_records_the_same_events() {
    let d = scratch("compress");
    let zeros = d.join("zeros");
    let script = format!(
        "dd if=/dev/zero of={} bs=4k count=500 2>/dev/null; cat /etc/services >/dev/null",
        zeros.display()
    );
    let mut sizes = Vec::new();
    let mut shapes = Vec::new();
    for mode in ["none", "lz4", "zlib", "bz2"] {
        let t = d.join(format!("{mode}.ds"));
        let _ = std::fs::remove_file(&zeros);
        let o = bin()
            .args(["record", "-q", "--backend", backend(), "--compress", mode, "-o"])
            .arg(&t)
            .args(["--", "sh", "-c", &script])
            .output()
            .unwrap();
        assert!(o.status.success(), "{mode}: {}", String::from_utf8_lossy(&o.stderr));
        let info = bin().arg("info").arg(&t).output().unwrap();
        let text = String::from_utf8_lossy(&info.stdout);
        if mode != "none" {
            assert!(text.contains(&format!("{mode}/{mode}")), "{mode}: {text}");
        }
        sizes.push(std::fs::metadata(&t).unwrap().len());
        let evs = events(&t);
        let written: usize = evs
            .iter()
            .filter(|e| e.name == "write")
            .filter_map(|e| e.args.get(1).and_then(|a| a.as_data()).map(<[u8]>::len))
            .sum();
        assert!(written >= 500 * 4096, "{mode}: {written} bytes of writes captured");
        shapes.push(shape(&evs));
    }
    for (i, s) in shapes.iter().enumerate().skip(1) {
        assert_eq!(s, &shapes[0], "mode {i}: other calls");
    }
    // 2 MB of zeros: every compressing mode stores far less than the raw trace.
    for (i, s) in sizes.iter().enumerate().skip(1) {
        assert!(*s * 4 < sizes[0], "mode {i}: {s} bytes against {} raw", sizes[0]);
    }
}

//! Compiles every `c/*.c` with the system C compiler (`$CC`, else `cc`) into
//! `$OUT_DIR/bin/<stem>`; `ra_testkit::program("<stem>")` finds the binary.

use std::path::{Path, PathBuf};
use std::process::Command;

const FLAGS: &[&str] = &["-O1", "-g", "-Wall", "-D_GNU_SOURCE", "-pthread"];

fn main() {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let src_dir = manifest.join("c");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("bin");
    std::fs::create_dir_all(&out).unwrap_or_else(|e| panic!("create {}: {e}", out.display()));
    // A directory here makes cargo rescan it: new, removed and edited .c files all rebuild.
    println!("cargo:rerun-if-changed={}", src_dir.display());
    println!("cargo:rerun-if-env-changed=CC");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());

    let mut sources: Vec<PathBuf> = std::fs::read_dir(&src_dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", src_dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    let mut failures = Vec::new();
    for src in &sources {
        println!("cargo:rerun-if-changed={}", src.display());
        if let Err(msg) = compile(&cc, src, &out) {
            failures.push(msg);
        }
    }
    if !failures.is_empty() {
        panic!("compiling the test programs failed:\n{}", failures.join("\n"));
    }
}

fn compile(cc: &str, src: &Path, out: &Path) -> Result<(), String> {
    let stem = src.file_stem().expect("a .c file has a stem").to_string_lossy().into_owned();
    let bin = out.join(&stem);
    let o = Command::new(cc)
        .args(FLAGS)
        .arg("-o")
        .arg(&bin)
        .arg(src)
        .output()
        .map_err(|e| format!("cannot run `{cc}` (install a C compiler, e.g. gcc): {e}"))?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    for line in stderr.lines() {
        println!("cargo:warning={stem}.c: {line}");
    }
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cc} {} -o {} {}: {}\n{stderr}",
            FLAGS.join(" "),
            bin.display(),
            src.display(),
            o.status
        ))
    }
}

//! Compiles the eBPF programs (`src/ebpf/bpf/capture.bpf.c`, the recorder's, and
//! `profile.bpf.c`, the live profiler's) with clang and generates their typed skeletons
//! (`$OUT_DIR/capture.skel.rs`, `profile.skel.rs`) with libbpf-cargo. Needs `clang` (Debian's
//! clang 14 or newer; `scripts/install-deps.sh` installs it); `$CLANG` picks another one.

use std::path::PathBuf;

use libbpf_cargo::SkeletonBuilder;

fn main() {
    let dir = PathBuf::from("src/ebpf/bpf");
    for f in [
        "capture.bpf.c",
        "capture.h",
        "vmlinux_min.h",
        "profile.bpf.c",
        "vmlinux_prof.h",
        "folio.h",
    ] {
        println!("cargo:rerun-if-changed={}", dir.join(f).display());
    }
    println!("cargo:rerun-if-env-changed=CLANG");
    for name in ["capture", "profile"] {
        build(&dir, name);
    }
}

fn build(dir: &std::path::Path, name: &str) {
    let src = dir.join(format!("{name}.bpf.c"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"))
        .join(format!("{name}.skel.rs"));
    let clang = std::env::var_os("CLANG").unwrap_or_else(|| "clang".into());
    if let Err(e) = SkeletonBuilder::new()
        .source(&src)
        .clang(&clang)
        .clang_args(["-Wall", "-Werror"])
        .build_and_generate(&out)
    {
        panic!(
            "building the eBPF program {} failed (is clang installed? run scripts/install-deps.sh): {e:#}",
            src.display()
        );
    }
}

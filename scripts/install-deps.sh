#!/usr/bin/env bash
# Installs every system package and Rust component reanimator needs on a fresh Debian 12 machine.
# Idempotent; needs root (or sudo). Each later feature adds its packages here in the same commit.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Debian packages:
#   build-essential pkg-config  - C toolchain for crates with C parts (libfuzzer-sys, codecs)
#   python3                     - the independent DataSeries decoder used as a test oracle, generators, bench parsers
#   python3-pip                 - installs the Python modules below (duckdb, pyarrow)
#   linux-libc-dev              - UAPI headers the syscall number tables are generated from
#   sqlite3                     - workload of the record tests (crates/cli/tests/record_programs.rs) and bench/record
#   tar                         - record tests: traced tar x / tar c of trees the tests build
#   git                         - record tests: traced git init/add/commit in a scratch repository
#   coreutils                   - record tests: traced cp -r of a tree (files, empty files, a symlink)
#   fio                         - bench/record: 4 KiB random-write workload
#   strace                      - bench/record: the strace baseline the recorder is compared with
#   hyperfine                   - optional: ad-hoc timing of traced commands (no script requires it)
#   time                        - bench/record: GNU time gives sqlite3's own elapsed time
#   xz-utils                    - bench/record: xz -T2, the parallel CPU-bound workload (--cpu auto)
#   clang                       - compiles the eBPF capture program (crates/capture/src/ebpf/bpf/*.bpf.c)
#   libelf-dev zlib1g-dev       - libbpf, which libbpf-sys builds from its vendored source and links
#   bpftool                     - bench/record/kernel_cost.sh: reads the BPF programs' run statistics
#   fuse3                       - `reanimator fs`: fusermount3 and /etc/fuse.conf, for it and for the bench/fs peers
#   acl                         - fs tests: setfacl/getfacl, POSIX ACLs that must hold through the mount
#   bindfs                      - bench/fs: untraced C FUSE passthrough, the FUSE floor
#   loggedfs                    - bench/fs: the best-known FUSE tracing file system, the peer
#   stress-ng                   - fs correctness tests: stress-ng --class filesystem over the mount
#   dbench                      - fs tests: dbench's NetBench-style client load over the mount
#   fsmark                      - bench/fs: fs_mark, the metadata-heavy workload (many small files)
#   libpython3.11-testsuite     - fs tests: Python's own test suite run over the mount
#   babeltrace2                 - export tests: reads `export --format ctf` back (crates/cli/tests/export_tables.rs)
#   librsvg2-bin                - profile tests: rsvg-convert renders `profile --svg` to PNG to check the picture
#   bpftrace                    - bench/profile: the bpftrace one-liner `reanimator profile` is measured against
#   prometheus                  - profile tests (crates/cli/tests/profile_live.rs): Debian's Prometheus (2.42) scrapes
#                                   `profile --listen` on loopback, on ports of the test's own (the
#                                   package's service on :9090 is not used)
#   rocksdb-tools sysbench postmark - scripts/replay-conformance.sh (bench suite): db_bench, sysbench
#                                   fileio and PostMark recorded and replayed
#   rsync zip unzip zstd make   - scripts/replay-conformance.sh (programs suite): real programs recorded and replayed
#   e2fsprogs xfsprogs btrfs-progs - replay --compare tests (crates/cli/tests/replay_compare.rs): mkfs.ext4, mkfs.xfs, mkfs.btrfs for
#                                   loop-device roots (with tmpfs)
PKGS=(build-essential pkg-config python3 python3-pip linux-libc-dev ca-certificates
      sqlite3 tar git coreutils fio strace hyperfine time xz-utils
      clang libelf-dev zlib1g-dev bpftool
      fuse3 acl bindfs loggedfs stress-ng dbench fsmark libpython3.11-testsuite
      librsvg2-bin bpftrace babeltrace2 prometheus e2fsprogs xfsprogs btrfs-progs
      rocksdb-tools sysbench postmark rsync zip unzip zstd make)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python modules (pip): duckdb, pyarrow - the engines `export --format parquet` is checked
#   with (crates/cli/tests/export_tables.rs runs scripts/analysis-check.py, docs/ANALYSIS.md).
#   pyspark is optional (scripts/spark-example.sh installs it when run).
PYMODS=(duckdb pyarrow)
pymissing=()
for m in "${PYMODS[@]}"; do python3 -c "import $m" 2>/dev/null || pymissing+=("$m"); done
if [ "${#pymissing[@]}" -gt 0 ]; then
  echo "install-deps: pip installing ${pymissing[*]}"
  # Debian's own python3 refuses pip outside a venv (PEP 668) unless told.
  python3 -m pip install -q "${pymissing[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${pymissing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then export PATH="$HOME/.cargo/bin:$PATH"; else
    echo "install-deps: cargo not found; install Rust with rustup (https://rustup.rs) first" >&2; exit 1
  fi
fi
# The toolchain pinned in rust-toolchain.toml, with rustfmt and clippy (no-op when present).
cd "$(dirname "$0")/.."
rustup show active-toolchain >/dev/null
rustup component add rustfmt clippy >/dev/null 2>&1 || true
echo "install-deps: ok ($(rustc --version))"

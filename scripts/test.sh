#!/usr/bin/env bash
# The whole test suite: the one gate CI runs. fmt, clippy, tests, docs, fuzz targets build,
# generated files fresh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
step() { printf '\n==> %s\n' "$*"; }

step "rustfmt"
cargo fmt --all --check

step "generated files are fresh"
python3 scripts/gen-syscall-tables.py --check
python3 scripts/gen-errno-table.py --check
python3 scripts/gen-strace-classes.py --check
bash scripts/gen-cli-docs.sh --check

step "clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "tests"
# --show-output: passing tests' output is kept, so tests that skipped (they print a line
# starting with "skip:" and return) are counted and named by scripts/test-summary.py. The
# full output is in the log; the terminal shows progress and failures.
log=/tmp/reanimator-test.log
# The tests' scratch (std::env::temp_dir() follows TMPDIR) goes beneath a directory of this
# run's, removed at the end (without crossing into a mount a failed test left): about 160
# scratch directories a run were left in /tmp, and a local disk filled up.
scratch=$(mktemp -d /tmp/reanimator-tests.XXXXXX)
# As /tmp is: tests run programs as other users (setuid, dropped privileges) beneath it.
chmod 1777 "$scratch"
trap 'rm -rf --one-file-system "$scratch"' EXIT
set +e
TMPDIR="$scratch" cargo test --workspace --locked -- --show-output 2>&1 | tee "$log" |
    grep --line-buffered -E '^(\s+(Running|Doc-tests) |test result:|test .* FAILED$|error)'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
    # The failing tests' output (libtest's failures sections) and cargo's own errors.
    awk '/^failures:$/ { on = 1 } on { print } /^test result:/ { on = 0 }' "$log"
    grep -E '^error(\[|:)' -A12 "$log" || true
fi
# In CI (root, every fixture required) a skip is a failure too.
strict=()
[ "${REANIMATOR_REQUIRE_PRIVILEGED:-}" = 1 ] && strict=(--no-skips)
python3 scripts/test-summary.py "${strict[@]}" "$log"
[ "$status" -eq 0 ] || { echo "tests failed (full output: $log)"; exit "$status"; }

# A suite that needs root: it runs as root (CI is root), fails without root under
# REANIMATOR_REQUIRE_PRIVILEGED=1, and is skipped otherwise.
root_suite() { # root_suite WHAT SCRIPT
    if [ "$(id -u)" -eq 0 ]; then
        cargo build --release --locked -q -p reanimator
        bash "$2" --quick
    elif [ "${REANIMATOR_REQUIRE_PRIVILEGED:-}" = 1 ]; then
        echo "$1 needs root (REANIMATOR_REQUIRE_PRIVILEGED=1)"; exit 1
    else
        echo "skip: $1 needs root"
    fi
}

step "reanimator fs against third-party suites (scripts/fs-conformance.sh --quick)"
# Python's own test modules, stress-ng's filesystem class, dbench, fs_mark and real programs,
# each run natively and on a mount: any difference fails. Needs root (FUSE).
root_suite "fs conformance" scripts/fs-conformance.sh

step "record and replay of third-party suites (scripts/replay-conformance.sh --quick)"
# Python's own test modules, stress-ng's filesystem stressors and real programs, recorded by
# each recorder, replayed from the trace and from its plan: any unexplained difference fails.
# Needs root (the eBPF recorder).
root_suite "replay conformance" scripts/replay-conformance.sh

step "the README's tour, every line as written (scripts/readme-tour.sh)"
# Each command of README.md's "A 60-second tour", with the small real workloads it names, in
# a private mount namespace. Needs root (eBPF, FUSE, loop devices).
root_suite "README tour" scripts/readme-tour.sh

step "docs build"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked -q

step "fuzz targets build"
cargo build --manifest-path fuzz/Cargo.toml --locked -q

echo "all checks passed"

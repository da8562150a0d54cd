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

step "clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "tests"
cargo test --workspace --locked 2>&1 | tee /tmp/reanimator-test.log
# Every test binary's summary line, totalled, as one closing line.
awk '/^test result:/ { p += $4; f += $6; i += $8 } END { printf "\ntests: %d passed, %d failed, %d skipped\n", p, f, i }' /tmp/reanimator-test.log

step "docs build"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked -q

step "fuzz targets build"
cargo build --manifest-path fuzz/Cargo.toml --locked -q

echo "all checks passed"

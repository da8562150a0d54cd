#!/usr/bin/env bash
# The README's first command: record a real program (sqlite3 building a small database),
# look at the trace, replay it into an empty directory with verification, and show that the
# replayed tree is identical to the recorded one. Uses $REANIMATOR if set, else builds the
# release binary. Scratch under $TMPDIR (removed at the end unless DEMO_KEEP=1).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${REANIMATOR:-}" ]; then
  cargo build --release -q -p reanimator
  REANIMATOR="$(realpath "${CARGO_TARGET_DIR:-target}/release/reanimator")"
fi
RA="$REANIMATOR"
D="$(mktemp -d "${TMPDIR:-/tmp}/reanimator-demo.XXXXXX")"
[ "${DEMO_KEEP:-0}" = 1 ] || trap 'rm -rf "$D"' EXIT
mkdir "$D/work" "$D/replay"
cd "$D/work"
if [ -t 1 ]; then B=$'\033[1m' N=$'\033[0m'; else B='' N=''; fi
say() { printf '\n%s$ %s%s\n' "$B" "$*" "$N"; }

say "reanimator record -o trace.ds --snapshot . -- sqlite3 shop.db '...'"
"$RA" record -o "$D/trace.ds" --snapshot . -- sqlite3 shop.db \
  "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, price REAL);
   INSERT INTO item(name, price) VALUES ('tea', 3.5), ('coffee', 4.25), ('cocoa', 2.75);
   UPDATE item SET price = price * 1.1;
   SELECT count(*), round(sum(price), 2) FROM item;"

say "reanimator info trace.ds --quick"
"$RA" info "$D/trace.ds" --quick

say "reanimator dump trace.ds --where 'call in {openat, pwrite, fdatasync, unlink} && errno == 0' | tail -8"
"$RA" dump "$D/trace.ds" --where 'call in {openat, pwrite, fdatasync, unlink} && errno == 0' | tail -8

say "reanimator replay trace.ds --root replay/ --init"
"$RA" replay "$D/trace.ds" --root "$D/replay" --init

say "reanimator diff work/ replay/.../work   (the recorded run's tree against the replayed one)"
"$RA" diff "$D/work" "$D/replay/${D#/}/work"
echo "identical: every call verified, and the replayed tree is the recorded one"

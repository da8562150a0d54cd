#!/usr/bin/env bash
# Analysis benchmark (issue 40): `reanimator stats` on a large trace of a real workload, side
# by side with strace -c on the same calls.
#   1. records `dd if=/dev/zero of=/dev/null bs=BS count=N` (BYTES read and BYTES written, so a
#      trace of ~2 x BYTES) with `record --backend ebpf --compress none` (ptrace without root);
#   2. reads it once (warm page cache), then times, under GNU time, `stats` (strace -c's
#      table), `stats --by file --files --histogram` and `stats --json --by pid`: wall, CPU,
#      peak RSS, MB/s of trace; and `dump --format jsonl` (one line per call) the same way;
#      then `stats T` next to `cat T | stats -` (spooled stdin);
#   3. runs the same dd under `strace -c -f -o /dev/null` and under `strace -f -o /dev/null
#      -e trace=none` (strace's stops without its per-call accounting and summary): the
#      difference in strace's own user CPU is what counting those calls cost strace.
# Prints one markdown table (docs/PERFORMANCE.md, section "analysis").
#   bash bench/analysis/run.sh [BYTES] [BS]     (default 1073741824 4096)
#   BENCH_DIR=DIR                               scratch directory (default: mktemp under
#                                               /dev/shm, which no other process's drop_caches
#                                               empties, when it has room; else /var/tmp)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
BYTES="${1:-1073741824}"
BS="${2:-4096}"
COUNT=$((BYTES / BS))
if [ -z "${BENCH_DIR:-}" ] && [ "$(df --output=avail -B1 /dev/shm | tail -1)" -gt $((BYTES * 3)) ]; then
  BENCH_DIR=$(mktemp -d /dev/shm/bench-analysis.XXXXXX)
fi
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-analysis.XXXXXX)}"
trap 'rm -rf "$DIR"' EXIT
cargo build --release -q -p reanimator
BIN="${CARGO_TARGET_DIR:-target}/release/reanimator"
backend=ptrace
if [ "$(id -u)" = 0 ]; then backend=ebpf; fi
T="$DIR/dd.ds"
"$BIN" record --backend "$backend" --compress none -o "$T" -- \
  dd if=/dev/zero of=/dev/null bs="$BS" count="$COUNT" status=none
size=$(stat -c %s "$T")
cat "$T" >/dev/null
echo "| run | trace | calls | wall s | user s | sys s | MB/s of trace (wall) | MB/s per CPU-second | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|---|"
calls=$("$BIN" stats --json "$T" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["calls"])')
measure() {
  local label="$1"; shift
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/time" "$@" >/dev/null
  read -r wall user sys rss <"$DIR/time"
  python3 - "$label" "$size" "$calls" "$wall" "$user" "$sys" "$rss" <<'PY'
import sys
label, size, calls, wall, user, sys_, rss = sys.argv[1:]
size, wall, cpu = int(size), float(wall), float(user) + float(sys_)
mbs = size / 1e6 / wall if wall > 0 else float("inf")
per_cpu = size / 1e6 / cpu if cpu > 0 else float("inf")
print(f"| {label} | {size/1e9:.2f} GB | {int(calls):,} | {wall:.2f} | {float(user):.2f} | {float(sys_):.2f} | {mbs:,.0f} | {per_cpu:,.0f} | {int(rss)/1024:.0f} |")
PY
}
for _ in 1 2; do
  measure "stats" "$BIN" stats "$T"
  measure "stats --by file --files --histogram" "$BIN" stats --by file --files --histogram "$T"
  measure "stats --json --by pid" "$BIN" stats --json --by pid "$T"
  measure "dump --format jsonl" "$BIN" dump --format jsonl "$T"
done
# The same trace piped (`stats -` spools standard input to an unnamed temporary file in
# $TMPDIR, here the bench's directory, then reads it as a file): its own small table.
echo
echo "| run (piped) | trace | calls | wall s | user s | sys s | MB/s of trace (wall) | MB/s per CPU-second | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|---|"
for _ in 1 2; do
  measure "stats T" "$BIN" stats "$T"
  measure "cat T | stats -" env TMPDIR="$DIR" bash -c 'cat "$1" | "$0" stats -' "$BIN" "$T"
done
if command -v strace >/dev/null; then
  for mode in count none; do
    if [ "$mode" = count ]; then args=(-c -f -o /dev/null); else args=(-f -o /dev/null -e trace=none); fi
    /usr/bin/time -f "%e %U %S %M" -o "$DIR/time" strace "${args[@]}" \
      dd if=/dev/zero of=/dev/null bs="$BS" count="$COUNT" status=none
    read -r wall user sys rss <"$DIR/time"
    echo "| strace ${args[*]} dd (tracing) | - | $((COUNT * 2)) reads+writes | $wall | $user | $sys | - | - | $((rss / 1024)) |"
  done
fi
echo
echo "command: bash bench/analysis/run.sh $BYTES $BS (backend $backend)"

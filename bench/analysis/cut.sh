#!/usr/bin/env bash
# Peak memory of the commands that cut and combine traces (issue 41: select, split, merge),
# side by side with `reanimator stats` on the same traces, at several trace sizes: each must
# stay bounded in bytes whatever the size of its input.
#   For each BYTES:BS in SIZES: records `dd if=/dev/zero of=/dev/null bs=BS count=BYTES/BS`
#   with `record --backend ebpf --compress none` (ptrace without root): a trace of ~2 x BYTES
#   and 2 x BYTES/BS calls (small blocks: many calls, for what grows with the calls);
#   reads it once (warm page cache), then runs under GNU time (%e %U %S %M): `stats`,
#   `select --where 'call == read'`, `split --by size=256M`, `split --by time=1s`,
#   `split --by pid`, `merge T T`; each output removed after its row.
# Writes JSON lines and the section "cut" of docs/PERFORMANCE.md (bench/update_perf.py).
#   bash bench/analysis/cut.sh [SIZES]  (default "268435456:4096 1073741824:4096 1073741824:512")
#   BENCH_DIR=DIR   scratch directory (default: mktemp under /dev/shm when it has room)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
SIZES="${1:-268435456:4096 1073741824:4096 1073741824:512}"
max=0
for s in $SIZES; do b=${s%%:*}; [ "$b" -gt "$max" ] && max=$b; done
if [ -z "${BENCH_DIR:-}" ] && [ "$(df --output=avail -B1 /dev/shm | tail -1)" -gt $((max * 7)) ]; then
  BENCH_DIR=$(mktemp -d /dev/shm/bench-cut.XXXXXX)
fi
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-cut.XXXXXX)}"
trap 'rm -rf "$DIR"' EXIT
cargo build --release -q -p reanimator
BIN="${CARGO_TARGET_DIR:-target}/release/reanimator"
backend=ptrace
if [ "$(id -u)" = 0 ]; then backend=ebpf; fi
OUT="${CUT_RESULTS:-$DIR/cut.jsonl}"
: >"$OUT"
for item in $SIZES; do
  BYTES=${item%%:*} BS=${item#*:}
  T="$DIR/dd.ds"
  rm -f "$T"
  "$BIN" record --backend "$backend" --compress none -q -o "$T" -- \
    dd if=/dev/zero of=/dev/null bs="$BS" count=$((BYTES / BS)) status=none
  size=$(stat -c %s "$T")
  cat "$T" >/dev/null
  calls=$("$BIN" stats --json "$T" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["calls"])')
  measure() { # measure LABEL OUTPUT CMD...: one JSON line; OUTPUT (file or directory) removed after
    local label="$1" out="$2"; shift 2
    rm -rf "$out"
    /usr/bin/time -f "%e %U %S %M" -o "$DIR/time" "$@" >/dev/null 2>"$DIR/err" || { cat "$DIR/err"; exit 1; }
    read -r wall user sys rss <"$DIR/time"
    local ob=0 parts=0
    if [ -e "$out" ]; then
      ob=$(du -sb "$out" | cut -f1)
      if [ -d "$out" ]; then parts=$(find "$out" -name '*.ds' | wc -l); fi
    fi
    rm -rf "$out"
    python3 - "$label" "$size" "$calls" "$wall" "$user" "$sys" "$rss" "$ob" "$parts" "$BYTES" "$BS" >>"$OUT" <<'PY'
import json, sys
label, size, calls, wall, user, sys_, rss, ob, parts, data, bs = sys.argv[1:]
print(json.dumps({"run": label, "trace_bytes": int(size), "calls": int(calls), "dd_bytes": int(data), "bs": int(bs),
                  "wall_s": float(wall), "user_s": float(user), "sys_s": float(sys_),
                  "peak_rss_mb": int(rss) / 1024, "out_bytes": int(ob), "parts": int(parts)}))
PY
    tail -1 "$OUT"
  }
  measure "stats" "$DIR/none" "$BIN" stats "$T"
  measure "select --where 'call == read'" "$DIR/sel.ds" "$BIN" select -q "$T" --where 'call == read' -o "$DIR/sel.ds"
  measure "split --by size=256M" "$DIR/parts" "$BIN" split -q "$T" --by size=256M -o "$DIR/parts"
  measure "split --by time=1s" "$DIR/parts" "$BIN" split -q "$T" --by time=1s -o "$DIR/parts"
  measure "split --by pid" "$DIR/parts" "$BIN" split -q "$T" --by pid -o "$DIR/parts"
  measure "merge T T" "$DIR/m.ds" "$BIN" merge -q "$T" "$T" -o "$DIR/m.ds"
done
rm -f "$DIR/dd.ds"
python3 bench/update_perf.py cut "$OUT" "bash bench/analysis/cut.sh $SIZES (backend $backend)"

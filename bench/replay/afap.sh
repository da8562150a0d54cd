#!/usr/bin/env bash
# AFAP replay of the eBPF-recorded fio plan against its floor, side by side in one run (issue 42,
# item 5): run.sh's fio-ebpf rows alone, each replay under `perf stat` for its CPU time.
#   fio: 4 KiB random writes, psync, one job, 256 MiB file, SECS s time-based (run.sh's job),
#   untraced (vanilla) and recorded with `reanimator record --backend ebpf`; the trace compiled
#   once; then RUNS interleaved rounds of: `floor` and `floor-data` (bench/replay/floor.c: the
#   trace's pwrite and fadvise calls on the file issued back to back, from one hot buffer and
#   from bytes of its own for each write), and the plan's replay from the page cache with full
#   verification (`plan-warm`; and with RA_BEFORE=path, the same by another build, e.g. of an
#   earlier commit: `plan-warm-before`). Each replay's CPU time (all threads, user + system) is
#   perf's task-clock; "CPU beyond floor-data per call" is the replay's CPU time less
#   floor-data's, per call: what the replay spends beyond issuing the calls (reading the plan,
#   dispatch, the gate, verification, accounting; and `--init`'s restore of the 256 MiB data
#   file, the same for every build: compare builds by it, not with a goal).
# Needs root (eBPF), fio, perf. Scratch under /var/tmp or $BENCH_DIR (the trace and the plan
# take about 6 GB each for 10 s).
#   RUNS=3 SECS=10 [RA_BEFORE=path] bash bench/replay/afap.sh
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
RUNS="${RUNS:-3}"
SECS="${SECS:-10}"
if [ "$(id -u)" -ne 0 ]; then
  echo "bench/replay/afap.sh: needs root (records with --backend ebpf)" >&2
  exit 1
fi
for p in fio perf python3 cargo cc; do
  command -v "$p" >/dev/null 2>&1 || { echo "bench/replay/afap.sh: $p not found; run: bash scripts/install-deps.sh" >&2; exit 1; }
done
cargo build --release -q -p reanimator
RA="$(realpath "${CARGO_TARGET_DIR:-target}/release/reanimator")"
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-replay-afap.XXXXXX)}"
mkdir -p "$DIR"
DIR="$(realpath "$DIR")"
trap 'rm -rf "$DIR"' EXIT
OUT="$DIR/results.jsonl"
: >"$OUT"

# row CONFIG RUN key=value...
row() {
  local c=$1 r=$2
  shift 2
  python3 - "$c" "$r" "$@" >>"$OUT" <<'PY'
import json, sys
c, r, *kv = sys.argv[1:]
row = {"workload": "fio-ebpf", "config": c, "run": int(r)}
for x in kv:
    k, v = x.split("=", 1)
    try:
        row[k] = float(v) if "." in v else int(v)
    except ValueError:
        row[k] = v
print(json.dumps(row))
PY
  tail -n 1 "$OUT" >&2
}

# cpu_s PERF_CSV: task-clock seconds from `perf stat -x,` output.
cpu_s() {
  awk -F, '$3 == "task-clock" { printf "%.3f", $1 / 1000 }' "$1"
}

mkdir -p "$DIR/w"
FILE="$DIR/w/fio.dat"
FIO_ARGS=(--name=rw --filename="$FILE" --size=256M --rw=randwrite --bs=4k --ioengine=psync
  --numjobs=1 --runtime="$SECS" --time_based --output-format=json)
fio --name=lay --filename="$FILE" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null
drop_caches
t0=$EPOCHREALTIME
fio "${FIO_ARGS[@]}" --output="$DIR/fio.json" >/dev/null
t1=$EPOCHREALTIME
ios=$(python3 -c "import json,sys; t=open(sys.argv[1]).read(); print(json.loads(t[t.index('{'):])['jobs'][0]['write']['total_ios'])" "$DIR/fio.json")
row vanilla 1 wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')" calls="$ios"
drop_caches
"$RA" record -q --backend ebpf --compress none -o "$DIR/fio.ds" --snapshot "$DIR/w" -- fio "${FIO_ARGS[@]}" --output="$DIR/fio.json" >/dev/null
"$RA" compile "$DIR/fio.ds" -o "$DIR/plan" >/dev/null
"$RA" dump -s 1 --type pwrite,fadvise64 "$DIR/fio.ds" | python3 bench/replay/floor_ops.py >"$DIR/floor.ops"
cc -O2 -o "$DIR/floor" bench/replay/floor.c

BINS=("plan-warm=$RA")
[ -n "${RA_BEFORE:-}" ] && BINS+=("plan-warm-before=$(realpath "$RA_BEFORE")")
for i in $(seq "$RUNS"); do
  for cfg in floor floor-data; do
    mode=()
    [ "$cfg" = floor-data ] && mode=(distinct)
    drop_caches
    out=$(perf stat -x, -e task-clock -o "$DIR/perf" -- "$DIR/floor" "$FILE" "$DIR/floor.ops" "${mode[@]}")
    # shellcheck disable=SC2046
    row "$cfg" "$i" $(echo "$out" | sed 's/seconds=/replay_s=/') cpu_s="$(cpu_s "$DIR/perf")"
  done
  for b in "${BINS[@]}"; do
    cfg=${b%%=*} bin=${b#*=}
    rm -rf "$DIR/root"; mkdir "$DIR/root"
    drop_caches
    cat "$DIR/plan" >/dev/null
    st=0
    t0=$EPOCHREALTIME
    perf stat -x, -e task-clock -o "$DIR/perf" -- "$bin" replay "$DIR/plan" --root "$DIR/root" --init --verify full \
      --report "$DIR/report.json" -q || st=$?
    t1=$EPOCHREALTIME
    if [ "$st" -ge 2 ]; then echo "bench/replay/afap.sh: replay failed (status $st)" >&2; exit 1; fi
    kv=$(python3 - "$DIR/report.json" "$t0" "$t1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"replay_s={r['elapsed_s']:.3f} init_s={max(wall - r['elapsed_s'], 0):.3f} "
      f"calls={r['totals']['replayed']} mismatched={r['mismatch_total']}")
PY
)
    # shellcheck disable=SC2086
    row "$cfg" "$i" $kv cpu_s="$(cpu_s "$DIR/perf")"
  done
done

python3 bench/update_perf.py replay-afap "$OUT" \
  "${RA_BEFORE:+RA_BEFORE=<build of an earlier commit> }RUNS=$RUNS SECS=$SECS bash bench/replay/afap.sh"
cat "$OUT"

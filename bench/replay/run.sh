#!/usr/bin/env bash
# Replay benchmark, side by side in one run: a workload's original run (vanilla, and under
# `reanimator record --backend ptrace`, whose trace is replayed) against AFAP replays of that
# trace with full verification and with none, and of the plan `reanimator compile` makes of it
# (compiled RUNS times with the trace in the page cache: compile MB/s, plan size and RSS),
# with the plan read from disk (plan-full, plan-none) and from the page cache (plan-warm); and
# the plan compiled with `--compress lz4` (compile-lz4: its size and speed; plan-lz4-warm: its
# replay from the page cache, full verification).
#   fio: 4 KiB random writes, psync, one job, 256 MiB file, 10 s time-based; and its "floor":
#   the trace's pwrite and fadvise calls on the file issued back to back by a C loop
#   (bench/replay/floor.c), the least any faithful replay of the trace can take; and as root
#   the same job recorded by the eBPF recorder (fio-ebpf: its plan's replay from the page cache
#   and its floor; ptrace slows fio about threefold, so its trace holds a third of the calls
#   fio makes untraced; the eBPF recorder's holds nearly all);
#   sqlite3: 200,000 inserts in 2,000 transactions (the bench/record workload);
#   threads: 5,000 threads at once (../shared/testdata/repro/threads.c), ptrace and eBPF traces;
#   build: make -j1 of libbpf's C sources (the copy cargo fetched for libbpf-sys): a CPU-heavy
#   build, recorded with `record` (ptrace).
# Each replay starts from an empty root: `--init` recreates the initial state first (the
# trace's snapshot of the workload directory where it has one, else inferred); the replay time
# is the report's `elapsed_s` (replay only), the initial-state time is reported beside it.
# Peak RSS is the replay process's (init included).
#   bash bench/replay/run.sh [RUNS]      (default 3; scratch under /var/tmp or $BENCH_DIR)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
RUNS="${1:-3}"
for p in fio sqlite3 python3 cargo; do
  command -v "$p" >/dev/null 2>&1 || { echo "bench/replay: $p not found; run: bash scripts/install-deps.sh" >&2; exit 1; }
done
cargo build --release -q -p reanimator
RA="$(realpath "${CARGO_TARGET_DIR:-target}/release/reanimator")"
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-replay.XXXXXX)}"
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
OUT="$DIR/results.jsonl"
: >"$OUT"
SNAP=()
"$RA" record --help | grep -q -- '--snapshot' && SNAP=(--snapshot "$DIR/w")

# row WORKLOAD CONFIG RUN key=value...
row() {
  local w=$1 c=$2 r=$3
  shift 3
  python3 - "$w" "$c" "$r" "$@" >>"$OUT" <<'PY'
import json, sys
w, c, r, *kv = sys.argv[1:]
row = {"workload": w, "config": c, "run": int(r)}
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

# compile_runs WORKLOAD TRACE CONFIG PLAN [ARGS...]: RUNS compiles of the trace into PLAN (the
# trace read once first, so that the page cache holds it: the compiler is measured, not the
# disk).
compile_runs() {
  local w=$1 trace=$2 cfg=$3 out=$4 i
  shift 4
  cat "$trace" >/dev/null
  for i in $(seq "$RUNS"); do
    rm -f "$out"
    local t0 t1
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$DIR/rss" "$RA" compile "$trace" -o "$out" --json "$@" >"$DIR/compile.json"
    t1=$EPOCHREALTIME
    python3 - "$DIR/compile.json" "$t0" "$t1" "$(tail -n 1 "$DIR/rss")" "$(stat -c %s "$trace")" >"$DIR/kv" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
tb = int(sys.argv[5])
print(f"compile_s={wall:.3f} trace_bytes={tb} plan_bytes={c['plan_bytes']} mb_per_s={tb / 1e6 / wall:.1f} "
      f"rss_mb={int(sys.argv[4]) / 1024:.1f} calls={c['calls']} buffers={c['buffers']} unique_buffers={c['unique_buffers']} "
      f"data_in={c['data_in']} data_stored={c['data_stored']}")
PY
    # shellcheck disable=SC2046
    row "$w" "$cfg" "$i" $(cat "$DIR/kv")
  done
}

# replay_runs WORKLOAD TRACE [CONFIG...]: RUNS x (full, none) replays of the trace and of its
# plan into fresh roots (or only the configurations named).
replay_runs() {
  local w=$1 trace=$2 i cfg verify input
  shift 2
  local cfgs=("$@")
  [ ${#cfgs[@]} -gt 0 ] || cfgs=(replay-full replay-none plan-full plan-none plan-warm plan-lz4-warm)
  compile_runs "$w" "$trace" compile "$DIR/plan"
  case " ${cfgs[*]} " in *" plan-lz4-warm "*) compile_runs "$w" "$trace" compile-lz4 "$DIR/zplan" --compress lz4 ;; esac
  for i in $(seq "$RUNS"); do
    for cfg in "${cfgs[@]}"; do
      verify=full; case $cfg in *-none) verify=none ;; esac
      input=$trace; case $cfg in plan-lz4-*) input=$DIR/zplan ;; plan-*) input=$DIR/plan ;; esac
      rm -rf "$DIR/root"; mkdir "$DIR/root"
      drop_caches
      # plan-warm: the plan read into the page cache first (the replay engine's own speed,
      # not the disk's reading of a multi-GB plan).
      case $cfg in *-warm) cat "$input" >/dev/null ;; esac
      local t0 t1 st=0
      t0=$EPOCHREALTIME
      /usr/bin/time -f "%M" -o "$DIR/rss" "$RA" replay "$input" --root "$DIR/root" --init --verify "$verify" \
        --report "$DIR/report.json" -q || st=$?
      t1=$EPOCHREALTIME
      if [ "$st" -ge 2 ]; then echo "bench/replay: replay of $w failed (status $st)" >&2; exit 1; fi
      python3 - "$DIR/report.json" "$t0" "$t1" "$(tail -n 1 "$DIR/rss")" >"$DIR/kv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["totals"]
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"replay_s={r['elapsed_s']:.3f} wall_s={wall:.3f} init_s={max(wall - r['elapsed_s'], 0):.3f} "
      f"rss_mb={int(sys.argv[4]) / 1024:.1f} calls={t['replayed']} mismatched={r['mismatch_total']} "
      f"span_s={r['trace_span_s']:.3f}")
for m in r["mismatches"][:3]:
    print(f"bench/replay: mismatch #{m['unique_id']} {m['call']}: {m['what']}: expected {m['expected']}, got {m['actual']}", file=sys.stderr)
for f in r["final_state"]:
    if f["differences"]:
        print(f"bench/replay: final state {f['compared']}: {f['differences']} differences: {f['first'][:3]}", file=sys.stderr)
PY
      # shellcheck disable=SC2046
      row "$w" "$cfg" "$i" $(cat "$DIR/kv")
    done
  done
}

# floor_runs WORKLOAD TRACE: RUNS x the floor under any faithful replay of a fio trace
# (bench/replay/floor.c: its pwrite and fadvise calls on fio's file, back to back) from one hot
# buffer (floor) and from bytes of its own for each write (floor-data: as much memory as the
# trace's buffers, as a replay writes each call's recorded bytes).
floor_runs() {
  local w=$1 trace=$2 i cfg
  "$RA" dump -s 1 --type pwrite,fadvise64 "$trace" | python3 bench/replay/floor_ops.py >"$DIR/floor.ops"
  for i in $(seq "$RUNS"); do
    for cfg in floor floor-data; do
      local mode=()
      [ "$cfg" = floor-data ] && mode=(distinct)
      drop_caches
      out=$("$DIR/floor" "$FIO_FILE" "$DIR/floor.ops" "${mode[@]}")
      # shellcheck disable=SC2046
      row "$w" "$cfg" "$i" $(echo "$out" | sed 's/seconds=/replay_s=/')
    done
  done
}

# ---- fio --------------------------------------------------------------------------------------
mkdir -p "$DIR/w"
FIO_FILE="$DIR/w/fio.dat"
FIO_ARGS=(--name=rw --filename="$FIO_FILE" --size=256M --rw=randwrite --bs=4k --ioengine=psync
  --numjobs=1 --runtime=10 --time_based --output-format=json)
fio --name=lay --filename="$FIO_FILE" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null
for i in $(seq "$RUNS"); do
  drop_caches
  t0=$EPOCHREALTIME
  fio "${FIO_ARGS[@]}" --output="$DIR/fio.json" >/dev/null
  t1=$EPOCHREALTIME
  ios=$(python3 -c "import json,sys; t=open(sys.argv[1]).read(); print(json.loads(t[t.index('{'):])['jobs'][0]['write']['total_ios'])" "$DIR/fio.json")
  row fio vanilla "$i" wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')" calls="$ios"
done
drop_caches
t0=$EPOCHREALTIME
"$RA" record -q --backend ptrace --compress none -o "$DIR/fio.ds" "${SNAP[@]}" -- fio "${FIO_ARGS[@]}" --output="$DIR/fio.json" >/dev/null
t1=$EPOCHREALTIME
row fio traced 1 wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')" \
  trace_bytes="$(stat -c %s "$DIR/fio.ds")"
replay_runs fio "$DIR/fio.ds"
# The floor under any faithful replay of the trace: its pwrite and fadvise calls on fio's file
# (fio's `invalidate` fadvise(DONTNEED) at every pass over the file, each writing back the
# pass's dirty pages), issued back to back by a C loop with nothing else.
cc -O2 -o "$DIR/floor" bench/replay/floor.c
floor_runs fio "$DIR/fio.ds"
rm -f "$DIR/fio.ds" "$DIR/plan" "$DIR/zplan"
# The same fio job recorded by the eBPF recorder (root only), which slows fio far less than
# ptrace: its trace holds about as many calls as fio's untraced run made, and so does any
# faithful replay of it (its plan's replay from the page cache, and the floor under it).
if [ "$(id -u)" -eq 0 ]; then
  drop_caches
  t0=$EPOCHREALTIME
  "$RA" record -q --backend ebpf --compress none -o "$DIR/fio.ds" "${SNAP[@]}" -- fio "${FIO_ARGS[@]}" --output="$DIR/fio.json" >/dev/null
  t1=$EPOCHREALTIME
  row fio-ebpf traced 1 wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')" \
    trace_bytes="$(stat -c %s "$DIR/fio.ds")"
  replay_runs fio-ebpf "$DIR/fio.ds" plan-warm
  floor_runs fio-ebpf "$DIR/fio.ds"
  rm -f "$DIR/fio.ds" "$DIR/plan"
fi
rm -f "$FIO_FILE"

# ---- sqlite3 ----------------------------------------------------------------------------------
sqlite_inserts "$DIR/ins.sql"
for i in $(seq "$RUNS"); do
  rm -f "$DIR/w/s.db" "$DIR/w/s.db-journal"
  drop_caches
  t0=$EPOCHREALTIME
  sqlite3 "$DIR/w/s.db" <"$DIR/ins.sql"
  t1=$EPOCHREALTIME
  row sqlite vanilla "$i" wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')"
done
rm -f "$DIR/w/s.db" "$DIR/w/s.db-journal"
drop_caches
t0=$EPOCHREALTIME
"$RA" record -q --backend ptrace --compress none -o "$DIR/sqlite.ds" "${SNAP[@]}" -- sqlite3 "$DIR/w/s.db" <"$DIR/ins.sql"
t1=$EPOCHREALTIME
row sqlite traced 1 wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')" \
  trace_bytes="$(stat -c %s "$DIR/sqlite.ds")"
replay_runs sqlite "$DIR/sqlite.ds"
rm -f "$DIR/sqlite.ds" "$DIR/plan" "$DIR/zplan"

# ---- build: make -j1 of libbpf ----------------------------------------------------------------
# A CPU-heavy build (issue 18's goal: AFAP replay of its plan at most 0.1x the untraced build):
# libbpf's C sources as cargo fetched them for libbpf-sys (a third-party project with its own
# Makefile), a static library at -j1.
LB=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 3 -type d -path '*libbpf-sys-*/libbpf' 2>/dev/null | sort | tail -n 1)
if [ -n "$LB" ] && [ -f "$LB/src/Makefile" ]; then
  rm -rf "$DIR/w"; mkdir -p "$DIR/w"
  cp -r "$LB" "$DIR/w/libbpf"
  BUILD=(make -C "$DIR/w/libbpf/src" -j1 BUILD_STATIC_ONLY=1 OBJDIR=obj)
  for i in $(seq "$RUNS"); do
    "${BUILD[@]}" clean >/dev/null 2>&1
    drop_caches
    t0=$EPOCHREALTIME
    "${BUILD[@]}" >/dev/null 2>&1
    t1=$EPOCHREALTIME
    row build vanilla "$i" wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')"
  done
  "${BUILD[@]}" clean >/dev/null 2>&1
  drop_caches
  t0=$EPOCHREALTIME
  "$RA" record -q --backend ptrace --compress none -o "$DIR/build.ds" --snapshot "$DIR/w" -- "${BUILD[@]}" >/dev/null 2>&1
  t1=$EPOCHREALTIME
  row build traced 1 wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')" \
    trace_bytes="$(stat -c %s "$DIR/build.ds")"
  replay_runs build "$DIR/build.ds"
  rm -f "$DIR/build.ds" "$DIR/plan" "$DIR/zplan"
else
  echo "bench/replay: libbpf-sys sources not found under ~/.cargo/registry (cargo build fetches them): no build rows" >&2
fi

# ---- 5,000 threads ----------------------------------------------------------------------------
# ../shared/testdata/repro/threads.c: N threads each open, write, close and unlink their own
# file at once (a reproducer from outside: 7,703 such threads once replayed in 226 s for a
# 1.44 s recording). Recorded with each backend; goal: replay no slower than the recording.
TSRC="../shared/testdata/repro/threads.c"
if [ -f "$TSRC" ]; then
  cc -O2 -pthread -o "$DIR/threads" "$TSRC"
  mkdir -p "$DIR/tw"
  for i in $(seq "$RUNS"); do
    drop_caches
    t0=$EPOCHREALTIME
    (cd "$DIR/tw" && "$DIR/threads" 5000 >/dev/null)
    t1=$EPOCHREALTIME
    row threads vanilla "$i" wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')"
  done
  backends=(ptrace)
  [ "$(id -u)" -eq 0 ] && backends+=(ebpf)
  for b in "${backends[@]}"; do
    w=threads; [ "$b" = ebpf ] && w=threads-ebpf
    drop_caches
    t0=$EPOCHREALTIME
    (cd "$DIR/tw" && "$RA" record -q --backend "$b" --compress none -o "$DIR/threads.ds" --snapshot "$DIR/tw" -- "$DIR/threads" 5000 >/dev/null)
    t1=$EPOCHREALTIME
    row "$w" traced 1 wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')" \
      trace_bytes="$(stat -c %s "$DIR/threads.ds")"
    replay_runs "$w" "$DIR/threads.ds"
    rm -f "$DIR/threads.ds" "$DIR/plan" "$DIR/zplan"
  done
else
  echo "bench/replay: $TSRC not found: no thread-scaling rows" >&2
fi

python3 bench/update_perf.py replay "$OUT" "bash bench/replay/run.sh $RUNS"
cat "$OUT"

#!/usr/bin/env bash
# Profiling benchmark (issue 17), every case side by side in one run: fio (4 KiB random writes,
# psync, one job, 256 MiB file, FIO_SECONDS time-based) and sqlite3 (200,000 inserts, 2,000
# transactions: bench/lib.sh's sqlite_inserts), each run
#   vanilla       the command alone;
#   ebpf-noop     `reanimator record --backend ebpf --data none` with REANIMATOR_BPF_NOOP=1:
#                 its sys_enter/sys_exit programs attached but returning at once, the floor
#                 of any pair of programs on these tracepoints;
#   profile       `reanimator profile --json -o FILE -- CMD` (default layers: syscall; the
#                 command's process tree);
#   profile-all   the same with `--layers all`;
#   bpftrace      the one-liner a user would write instead: sys_exit - sys_enter of each call,
#                 `hist()` per system-call number, on the same tracepoints, filtered on the
#                 workload's process name (comm == "fio" / "sqlite3": bpftrace has no
#                 process-tree filter; `-c` alone gives only the child's pid, and fio's job
#                 runs in a process of its own);
#   record-none   `reanimator record --backend ebpf --data none -o X.ds -- CMD`;
# REPS times, interleaved (vanilla, ebpf-noop, ..., record-none, vanilla, ...), the page cache
# dropped before each run. Reports fio's IOPS and sqlite3's own elapsed seconds, the ratios
# against vanilla and against bpftrace, CPU, the peak RSS under GNU time and the calls each
# tool counted (profile: its syscall histograms; bpftrace: its @h histograms; record: the calls
# recorded).
# Then, with the kernel's BPF statistics on (kernel.bpf_stats_enabled, restored on exit),
# REPS more fio runs of ebpf-noop, profile, profile-all, bpftrace and record-none whose
# programs bpftool reads 1 s after they load and 1 s before fio ends: ns per run of the
# sys_enter and sys_exit programs in the steady state (as bench/record/kernel_cost.sh), the
# kernel maps' memory, and the tool's own peak RSS (VmHWM); and one `profile` run of fio
# LONG_FACTOR times as long (default 3), for memory against run length.
# Writes the tables to docs/PERFORMANCE.md (section "profile").
#   sudo bash bench/profile/run.sh            REPS=3 FIO_SECONDS=10 LONG_FACTOR=3 by default
#   WORKLOADS="fio sqlite"                    (the default; a subset runs only those)
#   BENCH_DIR=DIR                             scratch directory (default: mktemp under /var/tmp)
# Needs root, and fio, sqlite3, bpftrace, bpftool, python3, cargo, GNU time
# (bash scripts/install-deps.sh). bpftrace's tracepoint probes need tracefs: when
# /sys/kernel/tracing is not mounted, the script mounts it and unmounts it on exit.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPS="${REPS:-${1:-3}}"
FIO_SECONDS="${FIO_SECONDS:-10}"
LONG_FACTOR="${LONG_FACTOR:-3}"
WORKLOADS="${WORKLOADS:-fio sqlite}"
wants() { [[ " $WORKLOADS " == *" $1 "* ]]; }
if [ "$(id -u)" -ne 0 ]; then
  echo "bench/profile: needs root (eBPF programs, bpftrace, kernel.bpf_stats_enabled); run: sudo bash bench/profile/run.sh" >&2
  exit 1
fi
for p in fio sqlite3 bpftrace bpftool python3 cargo /usr/bin/time; do
  command -v "$p" >/dev/null 2>&1 || { echo "bench/profile: $p not found; run: bash scripts/install-deps.sh" >&2; exit 1; }
done
[ "$FIO_SECONDS" -ge 3 ] || { echo "bench/profile: FIO_SECONDS must be at least 3 (bpftool samples at 1 s and 1 s before the end)" >&2; exit 1; }
cargo build --release -q -p reanimator
RA="$(realpath "${CARGO_TARGET_DIR:-target}/release/reanimator")"
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-profile.XXXXXX)}"
mkdir -p "$DIR"
OLD_STATS=$(cat /proc/sys/kernel/bpf_stats_enabled)
MOUNTED_TRACEFS=""
cleanup() {
  echo "$OLD_STATS" >/proc/sys/kernel/bpf_stats_enabled
  if [ -n "$MOUNTED_TRACEFS" ]; then umount /sys/kernel/tracing || true; fi
  rm -rf "$DIR"
}
trap cleanup EXIT
# bpftrace attaches `tracepoint:` probes through tracefs; reanimator's tp_btf programs do not
# need it.
if [ ! -d /sys/kernel/tracing/events/raw_syscalls ]; then
  mount -t tracefs nodev /sys/kernel/tracing
  MOUNTED_TRACEFS=1
  echo "bench/profile: mounted tracefs on /sys/kernel/tracing for bpftrace (unmounted on exit)" >&2
fi
OUT="$DIR/results.jsonl"
: >"$OUT"
echo 0 >/proc/sys/kernel/bpf_stats_enabled

# Children's user + system seconds from the shell's `times` (second line: "0m1.234s 0m0.567s").
cpu_of() { awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"; }

# The bpftrace one-liner: the latency of every call of processes named COMM, one log2
# histogram per system-call number.
bt_prog() {
  printf 'tracepoint:raw_syscalls:sys_enter /comm == "%s"/ { @s[tid] = nsecs; } tracepoint:raw_syscalls:sys_exit /@s[tid]/ { @h[args->id] = hist(nsecs - @s[tid]); delete(@s[tid]); }' "$1"
}

# wrap_for CONFIG COMM CMD...: sets WRAP, the command line of CONFIG running CMD.
wrap_for() {
  local cfg=$1 comm=$2
  shift 2
  case $cfg in
    vanilla) WRAP=("$@") ;;
    ebpf-noop) WRAP=(env REANIMATOR_BPF_NOOP=1 "$RA" record --backend ebpf --data none -o "$DIR/out.ds" -- "$@") ;;
    profile) WRAP=("$RA" profile --json -o "$DIR/out.json" -- "$@") ;;
    profile-all) WRAP=("$RA" profile --layers all --json -o "$DIR/out.json" -- "$@") ;;
    record-none) WRAP=("$RA" record --backend ebpf --data none -o "$DIR/out.ds" -- "$@") ;;
    # bpftrace -c takes one string, split at spaces, whose program must be a unique path.
    bpftrace)
      local argv0
      argv0=$(command -v "$1")
      shift
      WRAP=(bpftrace -o "$DIR/out.bt" -e "$(bt_prog "$comm")" -c "$argv0 $*") ;;
    *) echo "bench/profile: unknown configuration $cfg" >&2; exit 1 ;;
  esac
}

# fail WORKLOAD CONFIG RUN WHAT: the run failed; its stderr, and out.
fail() {
  echo "bench/profile: $1 ($2, run $3) failed: $4. Its stderr:" >&2
  tail -n 20 "$DIR/stderr" >&2
  exit 1
}

# bench WORKLOAD CONFIG RUN COMM CMD...: one timed run (stdin from $STDIN), one JSON line.
bench() {
  local workload=$1 cfg=$2 run=$3 comm=$4 st=0 t0 t1
  shift 4
  wrap_for "$cfg" "$comm" "$@"
  rm -f "$DIR"/out.* "$DIR/fio.json" "$DIR/inner.t" "$DIR/rss.t"
  [ "$workload" = sqlite ] && rm -f "$DIR/s.db" "$DIR/s.db-journal"
  drop_caches
  times >"$DIR/times.0"
  t0=$EPOCHREALTIME
  # GNU time around the tool: its peak RSS (%M, KB; the largest of the tool and the
  # processes it waited for, the command included).
  /usr/bin/time -f %M -o "$DIR/rss.t" "${WRAP[@]}" <"${STDIN:-/dev/null}" >"$DIR/stdout" 2>"$DIR/stderr" || st=$?
  t1=$EPOCHREALTIME
  times >"$DIR/times.1"
  [ "$st" -eq 0 ] || fail "$workload" "$cfg" "$run" "exit status $st"
  # bpftrace exits 0 whatever its command did: check the command's own output.
  if [ "$workload" = fio ] && ! grep -q '"jobs"' "$DIR/fio.json" 2>/dev/null; then
    fail "$workload" "$cfg" "$run" "fio wrote no JSON result"
  fi
  if [ "$workload" = sqlite ] && ! grep -Eq '^[0-9.]+$' "$DIR/inner.t" 2>/dev/null; then
    fail "$workload" "$cfg" "$run" "sqlite3: $(cat "$DIR/inner.t" 2>/dev/null)"
  fi
  local wall cpu
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  cpu=$(awk -v a="$(cpu_of "$DIR/times.0")" -v b="$(cpu_of "$DIR/times.1")" 'BEGIN { printf "%.3f", b - a }')
  python3 bench/profile/row.py run "$workload" "$cfg" "$run" "$wall" "$cpu" "$DIR" >>"$OUT"
  printf '%-6s %-11s run %s: %s\n' "$workload" "$cfg" "$run" "$(tail -n 1 "$OUT")" >&2
  rm -f "$DIR"/out.*
}

# progs FILE: `bpftool -j prog show` into FILE.
progs() { bpftool -j prog show >"$1"; }

# stats CONFIG RUN SECONDS: one fio run of SECONDS under CONFIG with the BPF statistics on;
# bpftool reads the programs 1 s after ours load and 1 s before fio ends, the maps and the
# tool's VmHWM at the second reading. One JSON line (kind "stats").
stats() {
  local cfg=$1 run=$2 secs=$3 st=0 tpid="" tool="" i
  wrap_for "$cfg" fio fio "${FIO_ARGS[@]/--runtime=*/--runtime=$secs}"
  rm -f "$DIR"/out.* "$DIR/fio.json" "$DIR/rss.t" "$DIR"/p?.json "$DIR/maps.json" "$DIR/hwm"
  drop_caches
  progs "$DIR/pre.json"
  /usr/bin/time -f %M -o "$DIR/rss.t" "${WRAP[@]}" </dev/null >"$DIR/stdout" 2>"$DIR/stderr" &
  tpid=$!
  # Wait for the programs to load (bpftrace compiles first).
  for i in $(seq 300); do
    progs "$DIR/pl.json"
    python3 bench/profile/row.py loaded "$cfg" "$DIR/pre.json" "$DIR/pl.json" && break
    kill -0 "$tpid" 2>/dev/null || break
    sleep 0.1
  done
  sleep 1
  progs "$DIR/p0.json"
  tool=$(pgrep -P "$tpid" | head -n 1 || true)
  sleep "$((secs - 2))"
  progs "$DIR/p1.json"
  bpftool -j map show >"$DIR/maps.json"
  [ -n "$tool" ] && awk '/^VmHWM/ { print $2 }' "/proc/$tool/status" >"$DIR/hwm" 2>/dev/null || true
  wait "$tpid" || st=$?
  [ "$st" -eq 0 ] || fail fio "$cfg" "$run" "exit status $st (BPF statistics run)"
  grep -q '"jobs"' "$DIR/fio.json" 2>/dev/null || fail fio "$cfg" "$run" "fio wrote no JSON result (BPF statistics run)"
  python3 bench/profile/row.py stats fio "$cfg" "$run" "$secs" "$DIR" >>"$OUT"
  printf 'stats  %-11s run %s: %s\n' "$cfg" "$run" "$(tail -n 1 "$OUT")" >&2
  rm -f "$DIR"/out.*
}

CONFIGS="vanilla ebpf-noop profile profile-all bpftrace record-none"
"$RA" profile --json -o "$DIR/probe.json" -- true 2>"$DIR/probe.err" \
  || { echo "bench/profile: \`reanimator profile\` cannot run here: $(cat "$DIR/probe.err")" >&2; exit 1; }
rm -f "$DIR/probe.json" "$DIR/probe.err"

FIO_ARGS=(--name=rw --filename="$DIR/fio.dat" --size=256M --rw=randwrite --bs=4k --ioengine=psync
  --numjobs=1 --runtime="$FIO_SECONDS" --time_based --output-format=json --output="$DIR/fio.json")
if wants fio; then
  # Lay the file out once, then time random 4 KiB overwrites.
  fio --name=lay --filename="$DIR/fio.dat" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null
  for i in $(seq "$REPS"); do
    for cfg in $CONFIGS; do
      STDIN=/dev/null bench fio "$cfg" "$i" fio fio "${FIO_ARGS[@]}"
    done
  done
fi

if wants sqlite; then
  sqlite_inserts "$DIR/ins.sql"
  for i in $(seq "$REPS"); do
    for cfg in $CONFIGS; do
      # GNU time around sqlite3 in every configuration: sqlite3's own elapsed time, without
      # the tool's start (loading programs; bpftrace compiles its script) and end.
      STDIN="$DIR/ins.sql" bench sqlite "$cfg" "$i" sqlite3 /usr/bin/time -f %e -o "$DIR/inner.t" sqlite3 "$DIR/s.db"
    done
  done
  rm -f "$DIR/ins.sql" "$DIR/s.db" "$DIR/s.db-journal"
fi

# The programs' own cost per call, and memory against run length (fio).
if wants fio; then
  echo 1 >/proc/sys/kernel/bpf_stats_enabled
  for i in $(seq "$REPS"); do
    for cfg in ebpf-noop profile profile-all bpftrace record-none; do
      stats "$cfg" "$i" "$FIO_SECONDS"
    done
  done
  stats profile 1 "$((FIO_SECONDS * LONG_FACTOR))"
  echo "$OLD_STATS" >/proc/sys/kernel/bpf_stats_enabled
  rm -f "$DIR/fio.dat"
fi

cmd="sudo bash bench/profile/run.sh"
[ "$LONG_FACTOR" = 3 ] || cmd="LONG_FACTOR=$LONG_FACTOR $cmd"
[ "$FIO_SECONDS" = 10 ] || cmd="FIO_SECONDS=$FIO_SECONDS $cmd"
[ "$REPS" = 3 ] || cmd="REPS=$REPS $cmd"
section=profile
if [ "$WORKLOADS" != "fio sqlite" ]; then
  cmd="WORKLOADS=\"$WORKLOADS\" $cmd"
  section="profile-$(echo $WORKLOADS | tr ' ' '-')"
fi
python3 bench/update_perf.py "$section" "$OUT" "$cmd"
cat "$OUT"

#!/usr/bin/env bash
# Recording benchmark, all cases side by side in one run: fio (4 KiB random writes, psync, one
# job, 256 MiB file, 10 s time-based), sqlite3 (200,000 inserts, 100 per transaction, default
# rollback journal), dd (2 GiB in 1 MiB writes from /dev/zero: big buffers) and xz (-T2 -3 of
# 48 MB of base64 text: a parallel CPU-bound program), each run vanilla, under `strace -f -s 65536 -xx -o FILE`, under
# `reanimator record --backend ptrace --data full -o FILE`, and under `reanimator record
# --backend ebpf --data full|hash|none` (where eBPF works), all with `--compress none` (the
# rows compare capture costs; lz4, the default, has rows of its own: reanimator-lz4, ebpf-lz4), RUNS times interleaved (vanilla,
# strace, reanimator, ..., vanilla, ...). Reports median IOPS (fio) and elapsed seconds (sqlite3,
# dd), the ratios against vanilla, reanimator's speedup over strace, CPU time, the peak RSS of
# the tool's process (GNU time's %M: the recorder, strace, or the command in vanilla rows) and
# the trace/log sizes; writes the table to docs/PERFORMANCE.md (section "record").
# The eBPF backend also runs as `ebpf-noop` (REANIMATOR_BPF_NOOP=1: its system-call programs
# attached but returning at once): the cost of the tracepoints themselves, the floor under
# every eBPF row; and as `ebpf-discard` (REANIMATOR_DISCARD_EVENTS=1: full buffers captured and
# assembled into events as in ebpf-full, which are then dropped instead of written): ebpf-full
# less the trace writer and its disk writes.
#   bash bench/record/run.sh [RUNS]      (default 3; scratch files under /var/tmp or $BENCH_DIR)
#   FIO_SECONDS=N                         (fio's run time, default 10: shorter runs, more of
#                                         them, give more pairs for the by-run ratios)
# xz also runs as `reanimator-samecpu` (--cpu same: the command bound to one CPU all along),
# against the default --cpu auto, which unbinds a command once two of its threads run.
#   WORKLOADS="fio sqlite dd xz"          (the default; a subset runs only those, and its table
#                                         goes to a section of its own, record-<workloads>;
#                                         also dd4k: 800 MB of zeros in 4 KiB writes,
#                                         fiorand: fio with --refill_buffers, incompressible,
#                                         fiorw: fio's random reads and writes, half each,
#                                         and fiouring: fio's io_uring engine at iodepth 32,
#                                         4 KiB random writes; the recorded io_uring writes
#                                         and bytes are checked against fio's own counts)
#   CONFIGS="vanilla ebpf-full ..."       (instead of every configuration; the table goes to a
#                                         section record-chain-<workloads>). The output chain
#                                         (issue 19): ebpf-lz4, ebpf-zlib (--compress), ebpf-seal
#                                         (--seal), ebpf-seal-lz4, ebpf-encrypt (--encrypt),
#                                         ebpf-seal-lz4-encrypt; each compared with ebpf-full.
# The output-chain comparison:
#   CONFIGS="vanilla ebpf-full ebpf-lz4 ebpf-seal-lz4 ebpf-encrypt ebpf-seal-lz4-encrypt" \
#   WORKLOADS="fio fiorand sqlite dd4k" bash bench/record/run.sh 3
# What `record --print` costs (reanimator-print, ebpf-print: each call also printed into a
# file), against the same recorder without it:
#   SECTION=record-print CONFIGS="vanilla reanimator reanimator-print ebpf-full ebpf-print" \
#   WORKLOADS=fio FIO_SECONDS=5 bash bench/record/run.sh 5
# --data per direction (ebpf-wfull: write=full,read=hash) against full and hash:
#   SECTION=record-data-directions CONFIGS="vanilla ebpf-full ebpf-hash ebpf-wfull" \
#   WORKLOADS="fio fiorw" FIO_SECONDS=3 bash bench/record/run.sh 3
# Needs only what scripts/install-deps.sh installs (fio, sqlite3, strace, python3, cargo).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
RUNS="${1:-3}"
FIO_SECONDS="${FIO_SECONDS:-10}"
WORKLOADS="${WORKLOADS:-fio sqlite dd xz}"
wants() { [[ " $WORKLOADS " == *" $1 "* ]]; }
for p in fio sqlite3 strace python3 cargo xz /usr/bin/time; do
  command -v "$p" >/dev/null 2>&1 || { echo "bench/record: $p not found; run: bash scripts/install-deps.sh" >&2; exit 1; }
done
cargo build --release -q -p reanimator
RA="$(realpath "${CARGO_TARGET_DIR:-target}/release/reanimator")"
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-record.XXXXXX)}"
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
OUT="$DIR/results.jsonl"
: >"$OUT"

# Children's user + system seconds from the shell's `times` (second line: "0m1.234s 0m0.567s").
cpu_of() { awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"; }

# bench WORKLOAD CONFIG RUN CMD...: one timed run of CMD (stdin from $STDIN) under CONFIG, one
# JSON line appended to $OUT.
bench() {
  local workload=$1 cfg=$2 run=$3 out="" st=0 t0 t1
  shift 3
  local -a wrap=()
  case $cfg in
    vanilla) ;;
    strace) out="$DIR/out.strace"; wrap=(strace -f -s 65536 -xx -o "$out") ;;
    # strace with tracer and command bound to one CPU, as reanimator does by default.
    strace-1cpu) out="$DIR/out.strace"; wrap=(taskset -c 0 strace -f -s 65536 -xx -o "$out") ;;
    reanimator) out="$DIR/out.ds"; wrap=("$RA" record --backend ptrace --data full --compress none -o "$out" --) ;;
    # ptrace with lz4 (the default since issue 19's measurements; the other rows say none).
    reanimator-lz4) out="$DIR/out.ds"; wrap=("$RA" record --backend ptrace --data full --compress lz4 -o "$out" --) ;;
    reanimator-anycpu) out="$DIR/out.ds"; wrap=("$RA" record --backend ptrace --data full --compress none --cpu any -o "$out" --) ;;
    reanimator-samecpu) out="$DIR/out.ds"; wrap=("$RA" record --backend ptrace --data full --compress none --cpu same -o "$out" --) ;;
    # The eBPF backend (default loss policy: throttle), every buffer / digests only / metadata.
    ebpf-full | ebpf-hash | ebpf-none)
      out="$DIR/out.ds"; wrap=("$RA" record --backend ebpf --data "${cfg#ebpf-}" --compress none -o "$out" --) ;;
    # Per direction (issue 44 item 11): written data in full, read data as digests.
    ebpf-wfull)
      out="$DIR/out.ds"; wrap=("$RA" record --backend ebpf --data write=full,read=hash --compress none -o "$out" --) ;;
    # The output chain on top of ebpf-full.
    ebpf-lz4 | ebpf-zlib)
      out="$DIR/out.ds"; wrap=("$RA" record --backend ebpf --data full --compress "${cfg#ebpf-}" -o "$out" --) ;;
    ebpf-seal)
      out="$DIR/out.ds"; wrap=("$RA" record --backend ebpf --data full --compress none --seal "$KEY" -o "$out" --) ;;
    ebpf-seal-lz4)
      out="$DIR/out.ds"; wrap=("$RA" record --backend ebpf --data full --compress lz4 --seal "$KEY" -o "$out" --) ;;
    ebpf-encrypt)
      out="$DIR/out.ds"; wrap=("$RA" record --backend ebpf --data full --compress none --encrypt "$KEY" -o "$out" --) ;;
    ebpf-seal-lz4-encrypt)
      out="$DIR/out.ds"; wrap=("$RA" record --backend ebpf --data full --compress lz4 --seal "$KEY" --encrypt "$KEY" -o "$out" --) ;;
    # Live output (issue 40 item 5): each call also printed, as dump shows it, into a file.
    reanimator-print)
      out="$DIR/out.ds"; wrap=("$RA" record --backend ptrace --data full --compress none --print="$DIR/out.print" -o "$out" --) ;;
    ebpf-print)
      out="$DIR/out.ds"; wrap=("$RA" record --backend ebpf --data full --compress none --print="$DIR/out.print" -o "$out" --) ;;
    # ebpf-full without the trace writer: events assembled, then dropped.
    ebpf-discard)
      out="$DIR/out.ds"; wrap=(env REANIMATOR_DISCARD_EVENTS=1 "$RA" record --backend ebpf --data full --compress none -o "$out" --) ;;
    # The floor: the same programs attached, returning at once.
    ebpf-noop)
      out="$DIR/out.ds"; wrap=(env REANIMATOR_BPF_NOOP=1 "$RA" record --backend ebpf --data none --compress none -o "$out" --) ;;
    *) echo "bench/record: unknown configuration $cfg" >&2; exit 1 ;;
  esac
  rm -f "$DIR"/out.* "$DIR/fio.json" "$DIR/inner.t" "$DIR/rss.t" "$DIR/dd.dat"
  [ "$workload" = sqlite ] && rm -f "$DIR/s.db" "$DIR/s.db-journal"
  drop_caches
  times >"$DIR/times.0"
  t0=$EPOCHREALTIME
  # GNU time around the tool: its peak RSS (%M, KB).
  /usr/bin/time -f %M -o "$DIR/rss.t" "${wrap[@]}" "$@" <"${STDIN:-/dev/null}" >"$DIR/stdout" 2>"$DIR/stderr" || st=$?
  t1=$EPOCHREALTIME
  times >"$DIR/times.1"
  if [ "$st" -ne 0 ]; then
    if [[ "$cfg" = reanimator* || "$cfg" = ebpf* ]]; then
      echo "bench/record: \`reanimator record\` failed on $workload (run $run) with exit status $st" \
        "(2: reanimator itself failed; otherwise the recorded command's status). Its stderr:" >&2
    else
      echo "bench/record: $workload ($cfg, run $run) failed with exit status $st. Its stderr:" >&2
    fi
    tail -n 20 "$DIR/stderr" >&2
    exit 1
  fi
  local wall cpu size=0
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  cpu=$(awk -v a="$(cpu_of "$DIR/times.0")" -v b="$(cpu_of "$DIR/times.1")" 'BEGIN { printf "%.3f", b - a }')
  [ -n "$out" ] && [ -e "$out" ] && size=$(stat -c %s "$out")
  local info="$DIR/none.json"
  # The key only for the sealed and encrypted traces: a reader given a key checks the seal
  # and refuses an unsealed trace.
  local -a key=()
  [[ "$cfg" = *seal* || "$cfg" = *encrypt* ]] && key=(--key "$KEY")
  if [[ "$cfg" = ebpf* ]]; then info="$DIR/info.json"; "$RA" info "${key[@]}" --json "$out" >"$info"; fi
  # io_uring: what the trace holds of the requests, checked against fio's counts (row.py).
  rm -f "$DIR/stats.json"
  if [ "$workload" = fiouring ] && [[ "$cfg" = reanimator* || "$cfg" = ebpf* ]] && [ -e "$out" ]; then
    "$RA" stats "${key[@]}" --json "$out" >"$DIR/stats.json"
  fi
  STATS_JSON="$DIR/stats.json" PRINT_FILE="$DIR/out.print" python3 bench/record/row.py "$workload" "$cfg" "$run" "$wall" "$cpu" "$size" "$DIR/fio.json" "$DIR/stderr" "$info" "$DIR/inner.t" "$DIR/rss.t" >>"$OUT"
  printf '%-7s %-10s run %s: %s\n' "$workload" "$cfg" "$run" "$(tail -n 1 "$OUT")" >&2
  rm -f "$DIR"/out.* "$DIR/dd.dat"
}

# The key of the sealed and encrypted rows.
KEY="$DIR/bench.key"
"$RA" keygen "$KEY" 2>/dev/null
# Every configuration, interleaved; the eBPF ones only where the backend can run.
CHAIN=${CONFIGS:+yes}
if [ -z "${CONFIGS:-}" ]; then
CONFIGS="vanilla strace strace-1cpu reanimator reanimator-anycpu"
if "$RA" record --backend ebpf -q -o "$DIR/probe.ds" -- true 2>"$DIR/probe.err"; then
  CONFIGS="$CONFIGS ebpf-noop ebpf-discard ebpf-full ebpf-hash ebpf-none"
else
  echo "bench/record: the eBPF backend cannot run here, its rows are left out: $(cat "$DIR/probe.err")" >&2
fi
fi
rm -f "$DIR/probe.ds" "$DIR/probe.err"

# fio: lay the file out once, then time random 4 KiB overwrites.
if wants fio; then
FIO_ARGS=(--name=rw --filename="$DIR/fio.dat" --size=256M --rw=randwrite --bs=4k --ioengine=psync
  --numjobs=1 --runtime="$FIO_SECONDS" --time_based --output-format=json --output="$DIR/fio.json")
fio --name=lay --filename="$DIR/fio.dat" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null
for i in $(seq "$RUNS"); do
  for cfg in $CONFIGS; do
    STDIN=/dev/null bench fio "$cfg" "$i" fio "${FIO_ARGS[@]}"
  done
done
rm -f "$DIR/fio.dat"
fi

# fiorw: random 4 KiB reads and writes, half each (--rwmixread=50), over the same file: the
# workload whose reads --data write=full,read=hash keeps as digests.
if wants fiorw; then
FIO_ARGS=(--name=rw --filename="$DIR/fio.dat" --size=256M --rw=randrw --rwmixread=50 --bs=4k
  --ioengine=psync --numjobs=1 --runtime="$FIO_SECONDS" --time_based --output-format=json
  --output="$DIR/fio.json")
fio --name=lay --filename="$DIR/fio.dat" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null
for i in $(seq "$RUNS"); do
  for cfg in $CONFIGS; do
    STDIN=/dev/null bench fiorw "$cfg" "$i" fio "${FIO_ARGS[@]}"
  done
done
rm -f "$DIR/fio.dat"
fi

# fiouring: the same random 4 KiB writes submitted through io_uring, 32 in flight (issue 43):
# what no system-call tracer sees. Each recording's io_uring writes and their bytes (`stats
# --json`) are compared with fio's own total_ios and io_bytes.
if wants fiouring; then
FIO_ARGS=(--name=rw --filename="$DIR/fio.dat" --size=256M --rw=randwrite --bs=4k
  --ioengine=io_uring --iodepth=32 --numjobs=1 --runtime="$FIO_SECONDS" --time_based
  --output-format=json --output="$DIR/fio.json")
fio --name=lay --filename="$DIR/fio.dat" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null
for i in $(seq "$RUNS"); do
  for cfg in $CONFIGS; do
    STDIN=/dev/null bench fiouring "$cfg" "$i" fio "${FIO_ARGS[@]}"
  done
done
rm -f "$DIR/fio.dat"
fi

# fiorand: the same with --refill_buffers: every write's buffer is fresh random data, which no
# compressor shrinks (fio otherwise writes the same buffer over and over).
if wants fiorand; then
FIO_ARGS=(--name=rw --filename="$DIR/fio.dat" --size=256M --rw=randwrite --bs=4k --ioengine=psync
  --numjobs=1 --runtime="$FIO_SECONDS" --time_based --refill_buffers --output-format=json
  --output="$DIR/fio.json")
fio --name=lay --filename="$DIR/fio.dat" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null
for i in $(seq "$RUNS"); do
  for cfg in $CONFIGS; do
    STDIN=/dev/null bench fiorand "$cfg" "$i" fio "${FIO_ARGS[@]}"
  done
done
rm -f "$DIR/fio.dat"
fi

# sqlite3: 2,000 transactions of 100 inserts (27.6 MB of SQL), file database, rollback journal.
if wants sqlite; then
sqlite_inserts "$DIR/ins.sql"
for i in $(seq "$RUNS"); do
  for cfg in $CONFIGS; do
    # GNU time around sqlite3 in every configuration: sqlite3's own elapsed time (exec to
    # exit), without the recorder's start (loading the BPF programs) and end.
    STDIN="$DIR/ins.sql" bench sqlite "$cfg" "$i" /usr/bin/time -f %e -o "$DIR/inner.t" sqlite3 "$DIR/s.db"
  done
done
fi

# dd: 2 GiB in 1 MiB writes (and as many reads of /dev/zero): every call carries 1 MiB, the
# case where a queue bounded in calls rather than bytes grew the recorder to GBs.
if wants dd; then
for i in $(seq "$RUNS"); do
  for cfg in $CONFIGS; do
    STDIN=/dev/null bench dd "$cfg" "$i" dd if=/dev/zero of="$DIR/dd.dat" bs=1M count=2048
  done
done
fi

# dd4k: 800 MB of zeros in 4 KiB writes: a burst of small, very compressible buffers, where
# the trace's disk traffic bounds a full-buffer recorder.
if wants dd4k; then
for i in $(seq "$RUNS"); do
  for cfg in $CONFIGS; do
    STDIN=/dev/null bench dd4k "$cfg" "$i" dd if=/dev/zero of="$DIR/dd.dat" bs=4k count=204800
  done
done
fi

# xz: two compressing threads (-T2), little I/O: what a binding to one CPU takes away.
if wants xz; then
head -c 36000000 /dev/urandom | base64 >"$DIR/xz.in"
for i in $(seq "$RUNS"); do
  for cfg in $CONFIGS $([ -n "$CHAIN" ] || echo reanimator-samecpu); do
    STDIN=/dev/null bench xz "$cfg" "$i" xz -T2 -3 -c -k "$DIR/xz.in"
  done
done
rm -f "$DIR/xz.in"
fi

cmd="bash bench/record/run.sh $RUNS"
[ "$FIO_SECONDS" = 10 ] || cmd="FIO_SECONDS=$FIO_SECONDS $cmd"
section=record
if [ "$WORKLOADS" != "fio sqlite dd xz" ] || [ -n "$CHAIN" ]; then
  cmd="WORKLOADS=\"$WORKLOADS\" $cmd"
  section="record-$(echo $WORKLOADS | tr ' ' '-')"
fi
if [ -n "$CHAIN" ]; then
  cmd="CONFIGS=\"$CONFIGS\" $cmd"
  section="record-chain-$(echo $WORKLOADS | tr ' ' '-')"
fi
# SECTION=NAME: the table goes to a section of that name (e.g. record-print), so that a
# comparison of a few configurations replaces no other table.
if [ -n "${SECTION:-}" ]; then
  cmd="SECTION=$SECTION $cmd"
  section=$SECTION
fi
python3 bench/update_perf.py "$section" "$OUT" "$cmd"
cat "$OUT"

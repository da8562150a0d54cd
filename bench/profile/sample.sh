#!/usr/bin/env bash
# The cost of `reanimator profile --sample N` (issue 44 item 6): fio 4 KiB random writes
# (psync, one job, 64 MiB file, FIO_SECONDS time-based, as bench/profile/run.sh's fio case
# but shorter) run REPS times, interleaved, under
#   vanilla        fio alone;
#   profile        `reanimator profile --json -o FILE -- fio ...` (every call timed);
#   sample-N       the same with `--sample N` for each N of SAMPLES (default "4 16 64");
# with the kernel's BPF statistics on (kernel.bpf_stats_enabled, restored on exit), so that
# besides fio's IOPS each profiled run gives the mean ns per run of the profiler's
# prof_sys_enter and prof_sys_exit programs (bpftool, 1 s after they load and 1 s before fio
# ends), and the write count the profile estimated against fio's own.
# Writes the table to docs/PERFORMANCE.md (section "profile-sample").
#   sudo bash bench/profile/sample.sh         REPS=3 FIO_SECONDS=6 SAMPLES="4 16 64"
#   RA=PATH                                   a reanimator binary to use instead of building
#                                             the release one (the BPF programs are the same
#                                             whatever the Rust profile)
# Needs root, fio, bpftool, python3.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPS="${REPS:-3}"
FIO_SECONDS="${FIO_SECONDS:-6}"
SAMPLES="${SAMPLES:-4 16 64}"
if [ "$(id -u)" -ne 0 ]; then
  echo "bench/profile/sample.sh: needs root (eBPF, kernel.bpf_stats_enabled)" >&2
  exit 1
fi
for p in fio bpftool python3; do
  command -v "$p" >/dev/null 2>&1 || { echo "bench/profile/sample.sh: $p not found; run: bash scripts/install-deps.sh" >&2; exit 1; }
done
[ "$FIO_SECONDS" -ge 4 ] || { echo "bench/profile/sample.sh: FIO_SECONDS must be at least 4" >&2; exit 1; }
if [ -z "${RA:-}" ]; then
  cargo build --release -q -p reanimator
  RA="$(realpath "${CARGO_TARGET_DIR:-target}/release/reanimator")"
fi
DIR="$(mktemp -d /var/tmp/bench-sample.XXXXXX)"
OLD_STATS=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
  echo "$OLD_STATS" >/proc/sys/kernel/bpf_stats_enabled
  rm -rf "$DIR"
}
trap cleanup EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
OUT="$DIR/results.jsonl"
: >"$OUT"
FIO=(fio --name=rw --filename="$DIR/fio.dat" --size=64M --rw=randwrite --bs=4k --ioengine=psync
  --numjobs=1 --runtime="$FIO_SECONDS" --time_based --output-format=json --output="$DIR/fio.json")
fio --name=lay --filename="$DIR/fio.dat" --size=64M --rw=write --bs=1M --ioengine=psync >/dev/null

one() {
  local cfg=$1 run=$2 n=1 pid
  case "$cfg" in
    sample-*) n=${cfg#sample-} ;;
  esac
  rm -f "$DIR"/fio.json "$DIR"/p?.json "$DIR/prof.json"
  drop_caches
  if [ "$cfg" = vanilla ]; then
    "${FIO[@]}"
    python3 bench/profile/sample_row.py "$cfg" "$run" "$DIR" >>"$OUT"
    return
  fi
  bpftool -j prog show >"$DIR/pre.json"
  "$RA" profile --json -o "$DIR/prof.json" --sample "$n" -- "${FIO[@]}" 2>"$DIR/err" &
  pid=$!
  for _ in $(seq 100); do
    bpftool -j prog show >"$DIR/p0.json"
    python3 bench/profile/sample_row.py loaded "$DIR/pre.json" "$DIR/p0.json" && break
    sleep 0.1
  done
  sleep 1
  bpftool -j prog show >"$DIR/p0.json"
  sleep "$((FIO_SECONDS - 2))"
  bpftool -j prog show >"$DIR/p1.json"
  wait "$pid" || { echo "bench/profile/sample.sh: $cfg run $run failed: $(tail -n 2 "$DIR/err")" >&2; exit 1; }
  python3 bench/profile/sample_row.py "$cfg" "$run" "$DIR" >>"$OUT"
}

for i in $(seq "$REPS"); do
  for cfg in vanilla profile $(for n in $SAMPLES; do echo "sample-$n"; done); do
    one "$cfg" "$i"
    printf '%-10s run %s: %s\n' "$cfg" "$i" "$(tail -n 1 "$OUT")" >&2
  done
done
python3 bench/profile/sample_row.py table "$OUT" \
  "sudo bash bench/profile/sample.sh (REPS=$REPS FIO_SECONDS=$FIO_SECONDS SAMPLES=\"$SAMPLES\")"

#!/usr/bin/env bash
# In-kernel cost of the eBPF backend per system call, from the kernel's own BPF statistics
# (`sysctl kernel.bpf_stats_enabled=1`: the run time and run count of every program), on the
# fio workload of bench/record/run.sh (4 KiB random writes, psync, one job). For each of
# `--data full|hash|none` and for `ebpf-noop` (REANIMATOR_BPF_NOOP=1: the programs attached
# but returning at once, whose figures are the statistics' own overhead), one recording of
# fio per round, whose programs' counters `bpftool` reads twice while fio runs (at 1 s and
# near the end): the mean ns of one run of sys_enter and of sys_exit in between, i.e. in the
# steady state (the trace fact `ebpf_prog_ns_per_run` averages over the whole recording,
# start and end included: the flush of a process's mmap pages at its exit, for one). These
# figures hardly depend on how busy the host is, unlike the IOPS ratios of
# bench/record/run.sh; they leave out the tracepoints' dispatch (see its ebpf-noop row) and
# what the recorder's own threads cost the machine.
#   bash bench/record/kernel_cost.sh [ROUNDS]   (default 3; needs root; restores the sysctl)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
ROUNDS="${1:-3}"
SECS="${FIO_SECONDS:-6}"
for p in fio python3 cargo bpftool; do
  command -v "$p" >/dev/null 2>&1 || { echo "bench/record/kernel_cost: $p not found; run: bash scripts/install-deps.sh" >&2; exit 1; }
done
[ -w /proc/sys/kernel/bpf_stats_enabled ] || { echo "bench/record/kernel_cost: needs root (kernel.bpf_stats_enabled)" >&2; exit 1; }
cargo build --release -q -p reanimator
RA="$(realpath "${CARGO_TARGET_DIR:-target}/release/reanimator")"
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-kcost.XXXXXX)}"
mkdir -p "$DIR"
OLD=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo "$OLD" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$DIR"' EXIT
OUT="$DIR/results.jsonl"
: >"$OUT"
fio --name=lay --filename="$DIR/fio.dat" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for i in $(seq "$ROUNDS"); do
  for cfg in noop full hash none; do
    env=()
    data=$cfg
    if [ "$cfg" = noop ]; then env=(REANIMATOR_BPF_NOOP=1); data=none; fi
    env "${env[@]}" "$RA" record -q --backend ebpf --data "$data" -o "$DIR/out.ds" -- \
      fio --name=rw --filename="$DIR/fio.dat" --size=256M --rw=randwrite --bs=4k --ioengine=psync \
      --numjobs=1 --runtime="$SECS" --time_based --output-format=json --output="$DIR/fio.json" \
      2>"$DIR/stderr" &
    rec=$!
    sleep 1
    bpftool -j prog show >"$DIR/p0.json"
    sleep "$(awk -v s="$SECS" 'BEGIN { print s - 1.5 }')"
    bpftool -j prog show >"$DIR/p1.json"
    wait "$rec" || { echo "bench/record/kernel_cost: recording failed:" >&2; cat "$DIR/stderr" >&2; exit 1; }
    python3 - "$cfg" "$i" "$DIR/p0.json" "$DIR/p1.json" "$DIR/fio.json" >>"$OUT" <<'PY'
import json, sys
cfg, run, p0, p1, fio = sys.argv[1:]
def progs(f):
    return {p["name"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0))
            for p in json.load(open(f)) if p.get("name") in ("on_sys_enter", "on_sys_exit")}
a, b = progs(p0), progs(p1)
ns = {n: (b[n][0] - a[n][0]) / max(1, b[n][1] - a[n][1]) for n in b if n in a}
text = open(fio).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
print(json.dumps({"config": cfg, "run": int(run), "iops": job["write"]["iops"],
                  "sys_enter_ns": round(ns.get("on_sys_enter", 0)),
                  "sys_exit_ns": round(ns.get("on_sys_exit", 0))}))
PY
    printf 'kernel %-5s round %s: %s\n' "$cfg" "$i" "$(tail -n 1 "$OUT")" >&2
  done
done
python3 bench/update_perf.py kernel "$OUT" "bash bench/record/kernel_cost.sh $ROUNDS"
cat "$OUT"

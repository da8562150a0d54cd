#!/usr/bin/env bash
# Timed replay accuracy: `reanimator replay --timing original` against `fio --read_iolog`
# replaying the same I/O (issue 18, items 3 and 6).
#   Workload: fio 4 KiB random reads, psync, one job, a 256 MiB file laid out first (and kept
#   in the page cache: --invalidate=0), paced with --rate_iops at each of RATES for SECS s
#   (time-based), recorded with `reanimator record --backend ebpf --data none`.
#   For each trace, REPS interleaved rounds of:
#   (a) `reanimator replay T --root R --init --init-unknown fill --timing original --verify ret
#       --report r.json` (the data file's unknown bytes written out, not holes: fio's replay
#       below reads a real copy too)
#       into a fresh root: the report's own `timing` figures (internal measurement, all calls);
#   (b) the same replay, recorded with eBPF: each data pread's issue time measured outside;
#   (c) `fio --read_iolog` of `reanimator export T --format fio-iolog` (made once per trace;
#       the data file copied beneath the prefix), recorded with eBPF, measured the same way.
#   External error, the same for both tools: the k-th pread on the data file of the replay is
#   paired with the k-th of the original trace and anchored at the first one:
#   due_k = replay_first + (orig_k - orig_first), error_k = replay_k - due_k (negative: early).
#   RA_BEFORE=path: another reanimator binary (e.g. a build of an earlier commit) whose timed
#   replay runs (a) and (b) too in each round, beside this tree's (tool "reanimator-before").
# Needs root (eBPF). Scratch under /var/tmp or $BENCH_DIR.
#   RATES="10000 50000" REPS=3 SECS=5 bash bench/replay/timing.sh
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
RATES="${RATES:-10000 50000}"
REPS="${REPS:-3}"
SECS="${SECS:-5}"
if [ "$(id -u)" -ne 0 ]; then
  echo "bench/replay/timing.sh: needs root (records with --backend ebpf); run: sudo bash bench/replay/timing.sh" >&2
  exit 1
fi
for p in fio python3 cargo; do
  command -v "$p" >/dev/null 2>&1 || { echo "bench/replay/timing.sh: $p not found; run: bash scripts/install-deps.sh" >&2; exit 1; }
done
cargo build --release -q -p reanimator
# Timing is what is measured: another busy process on the machine shows in the tail.
load=$(cut -d' ' -f1 /proc/loadavg)
awk -v l="$load" 'BEGIN{exit !(l > 0.5)}' &&
  echo "bench/replay/timing.sh: load average $load: the machine is busy; timing figures will show it" >&2
RA="$(realpath "${CARGO_TARGET_DIR:-target}/release/reanimator")"
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-replay-timing.XXXXXX)}"
mkdir -p "$DIR"
DIR="$(realpath "$DIR")"
trap 'rm -rf "$DIR"' EXIT
OUT="$DIR/results.jsonl"
: >"$OUT"
REC=("$RA" record -q --backend ebpf --data none)

# The data file: laid out once, read by every original run; fio's replay reads a copy of it
# beneath the export prefix (fio needs a file only read to exist: docs/REPLAY.md).
mkdir -p "$DIR/w"
FILE="$DIR/w/fio.dat"
fio --name=lay --filename="$FILE" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null

# preads TRACE OUT: the data file's preads (time_called, ns, sorted) of a trace: descriptors
# are followed from the opens of a path named fio.dat, per process.
preads() {
  "$RA" dump "$1" --format jsonl \
    --where 'call == "pread" || call == "open" || call == "openat" || call == "openat2" || call == "creat" || call == "close"' |
    python3 -c '
import json, sys
data, t = {}, []
for line in sys.stdin:
    r = json.loads(line)
    c, key = r["call"], (r["pid"], r["args"].get("fd"))
    if c == "pread":
        if data.get(key) and r["errno"] == 0:
            t.append(r["time_called"])
    elif c == "close":
        data.pop(key, None)
    elif r["errno"] == 0:
        data[(r["pid"], r["return_value"])] = r["args"].get("pathname", "").endswith("fio.dat")
t.sort()
print("\n".join(map(str, t)))
' >"$2"
}

# external RATE TOOL REP ORIG REPLAY KEY=VALUE...: one row of issue-time errors, measured
# outside (see the header), with whatever KEY=VALUEs the caller adds.
external() {
  python3 - "$@" >>"$OUT" <<'PY'
import json, sys
rate, tool, rep, orig, rep_f, *kv = sys.argv[1:]
o = [int(x) for x in open(orig).read().split()]
x = [int(x) for x in open(rep_f).read().split()]
n = min(len(o), len(x))
row = {"rate": int(rate), "tool": tool, "measure": "external", "rep": int(rep),
       "calls": n, "orig_calls": len(o), "replay_calls": len(x)}
if len(o) != len(x):
    print(f"bench/replay/timing.sh: {tool} at {rate}/s: {len(x)} preads replayed for {len(o)} recorded "
          f"(the first {n} paired)", file=sys.stderr)
err = sorted((x[k] - x[0]) - (o[k] - o[0]) for k in range(n))
q = lambda p: err[min(n - 1, max(0, int(p * n + 0.999999) - 1))] / 1e3
row.update(median_us=q(0.5), p90_us=q(0.9), p99_us=q(0.99), max_us=err[-1] / 1e3,
           mean_us=sum(err) / n / 1e3, early_frac=sum(1 for e in err if e < 0) / n,
           earliest_us=min(0, err[0]) / 1e3,
           pread_span_s=(x[n - 1] - x[0]) / 1e9, orig_pread_span_s=(o[n - 1] - o[0]) / 1e9)
# The same errors anchored at the least-late pread instead of the first: for a tool that never
# issues a call early (reanimator's pacer), a lower bound of each call's lateness, undisturbed by
# a late first pread.
m = err[0]
row.update(ll_median_us=q(0.5) - m / 1e3, ll_p99_us=q(0.99) - m / 1e3)
# Per second of the original preads (from the first): the worst p99 after the first second.
per = {}
for k in range(n):
    per.setdefault((o[k] - o[0]) // 10**9, []).append((x[k] - x[0]) - (o[k] - o[0]))
late = [sorted(v)[max(0, int(0.99 * len(v) + 0.999999) - 1)] / 1e3 for s, v in per.items() if s >= 1 and len(v) >= 100]
row["worst_second_p99_us"] = max(late) if late else None
# Where the tail is: of the calls late by more than the p99, how many were recorded less than
# 5 us after the previous pread (fio catching up on its rate) against all calls.
by_k = [((x[k] - x[0]) - (o[k] - o[0]), o[k] - o[k - 1]) for k in range(1, n)]
tail = [g for e, g in by_k if e / 1e3 > row["p99_us"]]
row["tail_close_frac"] = sum(1 for g in tail if g < 5000) / len(tail) if tail else 0.0
row["close_frac"] = sum(1 for _, g in by_k if g < 5000) / len(by_k)
for s in kv:
    k, v = s.split("=", 1)
    row[k] = float(v)
row["load1"] = float(open("/proc/loadavg").read().split()[0])
print(json.dumps(row))
PY
  tail -n 1 "$OUT" >&2
}

for rate in $RATES; do
  T="$DIR/t$rate.ds"
  FIO_ARGS=(--name=rr --filename="$FILE" --size=256M --rw=randread --bs=4k --ioengine=psync --numjobs=1
    --invalidate=0 --rate_iops="$rate" --runtime="$SECS" --time_based --output-format=json)
  "${REC[@]}" -o "$T" -- fio "${FIO_ARGS[@]}" --output="$DIR/fio.json" >/dev/null
  preads "$T" "$DIR/orig.txt"
  python3 - "$rate" "$DIR/fio.json" "$DIR/orig.txt" >>"$OUT" <<'PY'
import json, sys
rate, fj, orig = sys.argv[1:]
t = open(fj).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
o = [int(x) for x in open(orig).read().split()]
gaps = [b - a for a, b in zip(o, o[1:])]
print(json.dumps({"rate": int(rate), "tool": "fio", "measure": "original", "rep": 1,
                  "calls": len(o), "ios": j["read"]["total_ios"], "iops": j["read"]["iops"],
                  "pread_span_s": (o[-1] - o[0]) / 1e9,
                  "close_frac": sum(1 for g in gaps if g < 5000) / len(gaps)}))
PY
  tail -n 1 "$OUT" >&2
  # The fio log, once per trace: the data file's I/O only (fio's own reads of its libraries
  # and its JSON output would need those files beneath the prefix).
  "$RA" export "$T" --format fio-iolog --prefix "$DIR/p" -o "$DIR/log" --where 'path ~ "**/fio.dat"' 2>"$DIR/export.err" ||
    { cat "$DIR/export.err" >&2; exit 1; }
  mkdir -p "$DIR/p$DIR/w"
  [ -f "$DIR/p$FILE" ] || cp "$FILE" "$DIR/p$FILE"
  for rep in $(seq "$REPS"); do
    for TOOL in reanimator ${RA_BEFORE:+reanimator-before}; do
      BIN=$RA; [ "$TOOL" = reanimator-before ] && BIN=$(realpath "$RA_BEFORE")
      # (a) internal: the report's own figures.
      rm -rf "$DIR/root"; mkdir "$DIR/root"
      st=0
      "$BIN" replay "$T" --root "$DIR/root" --init --init-unknown fill --timing original --verify ret --report "$DIR/r.json" -q || st=$?
      if [ "$st" -ge 2 ]; then echo "bench/replay/timing.sh: replay at $rate/s failed (status $st)" >&2; exit 1; fi
      python3 - "$rate" "$rep" "$DIR/r.json" "$TOOL" >>"$OUT" <<'PY'
import json, sys
rate, rep, rj, tool = sys.argv[1:]
r = json.load(open(rj))
t = r["timing"]
e = t["issue_error_us"]
# The worst second after the first (which holds fio's start: exec, libraries, the file's open).
worst = max((s for s in t["per_second"] if s["second"] >= 1 and s["calls"] >= 100),
            key=lambda s: s["p99_us"], default={"second": None, "p99_us": None})
print(json.dumps({"rate": int(rate), "tool": tool, "measure": "internal", "rep": int(rep),
                  "calls": t["calls"], "median_us": e["median"], "p90_us": e["p90"], "p99_us": e["p99"],
                  "max_us": e["max"], "mean_us": e["mean"], "early_frac": 0.0, "spun_s": t["spun_s"],
                  "worst_second": worst["second"], "worst_second_p99_us": worst["p99_us"],
                  "elapsed_s": r["elapsed_s"], "span_s": r["trace_span_s"], "mismatched": r["mismatch_total"],
                  "load1": float(open("/proc/loadavg").read().split()[0])}))
PY
      tail -n 1 "$OUT" >&2
      # (b) the same replay, recorded.
      rm -rf "$DIR/root"; mkdir "$DIR/root"
      st=0
      "${REC[@]}" -o "$DIR/x.ds" -- "$BIN" replay "$T" --root "$DIR/root" --init --init-unknown fill --timing original --verify ret \
        --report "$DIR/r.json" -q || st=$?
      if [ "$st" -ge 2 ]; then echo "bench/replay/timing.sh: recorded replay at $rate/s failed (status $st)" >&2; exit 1; fi
      preads "$DIR/x.ds" "$DIR/x.txt"
      # Its report's figures beside the external ones: the recorder's cost on the replay's own.
      kv=$(python3 - "$DIR/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r["timing"]["issue_error_us"]
print(f"elapsed_s={r['elapsed_s']:.6f} span_s={r['trace_span_s']:.6f} "
      f"internal_median_us={e['median']:.3f} internal_p99_us={e['p99']:.3f}")
PY
      )
      # shellcheck disable=SC2086
      external "$rate" "$TOOL" "$rep" "$DIR/orig.txt" "$DIR/x.txt" $kv
      rm -f "$DIR/x.ds"
    done
    # (c) fio --read_iolog, recorded.
    "${REC[@]}" -o "$DIR/y.ds" -- fio --name=replay --read_iolog="$DIR/log" --ioengine=psync --invalidate=0 \
      --output-format=json --output="$DIR/f.json" >/dev/null
    preads "$DIR/y.ds" "$DIR/y.txt"
    el=$(python3 -c 'import json,sys; t=open(sys.argv[1]).read(); print(json.loads(t[t.index("{"):])["jobs"][0]["job_runtime"] / 1e3)' "$DIR/f.json")
    external "$rate" fio "$rep" "$DIR/orig.txt" "$DIR/y.txt" elapsed_s="$el"
    rm -f "$DIR/y.ds"
  done
  rm -rf "$DIR/root" "$T"
done

python3 bench/update_perf.py replay-timing "$OUT" \
  "${RA_BEFORE:+RA_BEFORE=<build of an earlier commit> }RATES=\"$RATES\" REPS=$REPS SECS=$SECS bash bench/replay/timing.sh"
cat "$OUT"

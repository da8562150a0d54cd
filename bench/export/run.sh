#!/usr/bin/env bash
# Parquet export, side by side in one run (docs/PERFORMANCE.md, "Export"): a >= 1 GB trace of
# dd copying random data in 512-byte blocks (2 M calls, every buffer captured), recorded once
# with the ptrace recorder; then
#   export --format parquet with --data none, digest and full: time (one trace: one core),
#     calls/s, peak RSS, dataset size against the trace's;
#   the same per-call group-by (count, bytes, p99 latency) by DuckDB over the export, beside
#     one full pass over the trace (`dump --format jsonl`; `stats` once it exists).
# usage: bench/export/run.sh [WORKDIR]   (RA=path/to/reanimator, BLOCKS=2097152 by default)
set -euo pipefail
cd "$(dirname "$0")/../.."
RA=${RA:-target/release/reanimator}
W=${1:-/tmp/ra-bench-export}
BLOCKS=${BLOCKS:-1048576}
mkdir -p "$W"
T="$W/dd.ds"
if [ ! -s "$T" ]; then
  "$RA" record --backend ptrace -q -o "$T" -- \
    dd if=/dev/urandom of=/dev/null bs=512 count="$BLOCKS" status=none
fi
tsize=$(stat -c %s "$T")
echo "trace: $T, $tsize bytes"
measure() { # measure LABEL CMD...: elapsed seconds, peak RSS (KiB) and CPU seconds of CMD
  local label=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$W/time" "$@" >/dev/null 2>"$W/err" || { cat "$W/err"; exit 1; }
  read -r secs kib user sys <"$W/time"
  echo "$label $secs $kib $(python3 -c "print($user + $sys)")"
}
for data in none digest full; do
  rm -rf "$W/pq-$data"
  read -r _ secs kib cpu < <(measure export "$RA" export "$T" --format parquet -o "$W/pq-$data" --data "$data" -q)
  n=$(python3 -c "import duckdb; print(duckdb.connect().execute(\"select count(*) from read_parquet('$W/pq-$data/calls/*/*/*.parquet')\").fetchall()[0][0])")
  size=$(du -sb "$W/pq-$data" | cut -f1)
  # Per core: calls per CPU-second (user + sys, all of the export's threads: the pass and
  # the trace reader's prefetch thread).
  python3 -c "print(f'export --data $data: $n calls in $secs s = {$n/$secs/1e6:.2f} M calls/s (1 thread), CPU {$cpu:.2f} s = {$n/$cpu/1e6:.2f} M calls per CPU-second, peak RSS {$kib/1024:.0f} MiB, dataset $size bytes = {$size/$tsize*100:.1f} % of the trace')"
done
Q="SELECT call, count(*) AS calls, sum(return_value) AS bytes, quantile_disc(duration_ns, 0.99) AS p99_ns FROM read_parquet('$W/pq-none/calls/*/*/*.parquet') GROUP BY call ORDER BY call"
cat >"$W/q.py" <<PY
import duckdb, time
c = duckdb.connect()
t = time.time(); r = c.execute("""$Q""").fetchall(); dt = time.time() - t
print(f"duckdb group-by over the export: {dt:.2f} s: {r}")
PY
python3 "$W/q.py"
read -r _ secs kib cpu < <(measure dump "$RA" dump "$T" --format jsonl)
echo "one full pass over the trace (dump --format jsonl > /dev/null): $secs s, CPU $cpu s, peak RSS $((kib / 1024)) MiB"
if "$RA" stats --help >/dev/null 2>&1; then
  read -r _ secs kib cpu < <(measure stats "$RA" stats "$T")
  echo "reanimator stats: $secs s, CPU $cpu s, peak RSS $((kib / 1024)) MiB"
fi

#!/usr/bin/env bash
# Codec benchmark: encode a >= 2 GB synthetic trace (mixed calls, 4 KiB-1 MiB buffers) without
# compression and with zlib, then decode each (DataSeries extents only, and full events in
# unique_id order). Each phase is its own process, so peak RSS is per phase. Writes the table
# to docs/PERFORMANCE.md (section "codec").
#   bash bench/codec/run.sh [BYTES]      (default 2147483648)
set -euo pipefail
cd "$(dirname "$0")/../.."
BYTES="${1:-2147483648}"
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-codec.XXXXXX)}"
trap 'rm -rf "$DIR"' EXIT
cargo build --release -q -p bench-codec
BIN="${CARGO_TARGET_DIR:-target}/release/bench-codec"
OUT="$DIR/results.jsonl"
for c in none zlib; do
  "$BIN" encode "$DIR/$c.ds" --bytes "$BYTES" --compression "$c" | sed "s/^{/{\"file\":\"$c\",/" >>"$OUT"
  # Both read phases measure decoding, not the disk: start them from a warm page cache.
  cat "$DIR/$c.ds" > /dev/null
  "$BIN" decode "$DIR/$c.ds" | sed "s/^{/{\"file\":\"$c\",/" >>"$OUT"
  "$BIN" events "$DIR/$c.ds" | sed "s/^{/{\"file\":\"$c\",/" >>"$OUT"
  rm -f "$DIR/$c.ds"
done
python3 bench/update_perf.py codec "$OUT" "bash bench/codec/run.sh $BYTES"
cat "$OUT"

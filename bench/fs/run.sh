#!/usr/bin/env bash
# Tracing file system benchmark, every configuration side by side in one run. The workloads run
# in a directory LOWER (scratch under /var/tmp, ext4 here; the script prints its type) used
#   native               directly, no FUSE;
#   bindfs               through `bindfs -f LOWER MNT`: an untraced C FUSE passthrough, the floor
#                        of any FUSE file system;
#   loggedfs             through `loggedfs -f -l LOG LOWER`: the best-known FUSE tracing file
#                        system, mounted over LOWER itself (it logs the directory it is mounted
#                        on), every operation logged as a line of text to LOG (its default
#                        configuration: no -c file);
#   bindfs-nocache       bindfs with the kernel's attribute and entry caches off, as in
#                        `reanimator fs`'s default --fidelity mode: the same request stream;
#   reanimator-none      through `reanimator fs mount LOWER MNT -o TRACE --data none`;
#   reanimator-full      ... `--data full` (every byte read and written in the trace);
#   reanimator-discard   ... `--data full` with REANIMATOR_DISCARD_EVENTS=1: every record built
#                        and dropped (the per-stage A/B: full minus discard = the trace writer);
#   reanimator-fast      ... `--fast`;
#   reanimator-full-dev  ... `--data full --transport dev` (/dev/fuse; the rows above take the
#                        default transport, io_uring where the kernel's enable_uring is on);
#   reanimator-every-lookup ... `--data full --every-lookup` (no entry cache: the old default);
#   reanimator-fast-dev  ... `--fast --transport dev`;
#   reanimator-filtered  ... `--filter 'path ~ "/nomatch/**"'`: nothing matches, every call
#                        passes through untraced (the cost of the daemon without its trace);
#                        (these five with --compress none: lz4, the default since issue 19,
#                        has a row of its own)
#   reanimator-tracers3  ... `--data full` and two more tracers on the same mount
#                        (`--tracer`: writes, creates and unlinks with data digests; per-second
#                        aggregates): what several tracers cost (not in the default set);
#   reanimator-wfull     ... `--data write=full,read=hash`: the bytes written kept whole, the
#                        bytes read as digests (issue 44; not in the default rows);
#   reanimator-sync      ... `--data full --sync --compress none`: each record written and
#                        fdatasync'ed before its operation is answered (not in the default
#                        rows; compare with reanimator-full);
#   reanimator-lz4, reanimator-seal-lz4, reanimator-encrypt, reanimator-seal-lz4-encrypt
#                        ... `--data full` with the output chain (issue 19): --compress lz4,
#                        --seal KEY, --encrypt KEY (not in the default rows; name them in
#                        CONFIGS, and compare with reanimator-full).
# Each daemon runs in the foreground under GNU time (its peak RSS and its CPU seconds from mount
# to exit, so a trace flushed at unmount counts); a mount that is not up within 10 s fails the
# run. The reanimator rows unmount with `reanimator fs umount MNT`, the others with
# `fusermount3 -u`; the time from the unmount request to the daemon's exit is reported too.
# Workloads (one fresh mount per run, the page cache dropped before each as bench/record does):
#   randread   fio 4 KiB random reads, psync, one job, 256 MiB file, FIO_SECONDS (10) time-based;
#              the file is read once natively after the cache drop and fio runs with
#              --invalidate=0 (it would otherwise drop LOWER's cache of the file, but not a
#              FUSE daemon's), so the reads measure the file systems, not this VM's disk;
#   randwrite  the same, random 4 KiB overwrites;
#   untar      tar x of /usr/include (a tarball made once; some 8,000 files, 130 MB), then
#              rm -rf of the extracted tree on the same mount (reported as its own line);
#   fsmark     fs_mark: 10,000 files of 4 KiB in 16 directories, one thread, no sync (-S 0);
#   sqlite     sqlite3: 2,000 single-row INSERTs, each its own transaction (journal written,
#              synced and deleted 2,000 times), file database, rollback journal; the row count
#              is checked in LOWER once unmounted.
# Reports per workload the median (IOPS and MB/s for fio, elapsed seconds otherwise), its ratio
# to native and to bindfs, CPU seconds, the trace size (reanimator; and its call count from
# `reanimator info --json`; for fio, the trace's reads or writes against fio's I/O count) and
# the log size (loggedfs); writes the table to docs/PERFORMANCE.md
# (section "fs").
#   REPS=N bash bench/fs/run.sh          (default 3 runs, interleaved: native, bindfs, ...,
#                                         native, ...; `bash bench/fs/run.sh N` also works)
#   WORKLOADS="randread randwrite untar fsmark sqlite"   (the default; a subset runs only those,
#                                         and its table goes to a section of its own, fs-<workloads>)
#   CONFIGS="native bindfs ..."          (a subset of the rows; the same section naming)
#   FIO_SECONDS=N                        (fio's run time, default 10)
#   BENCH_DIR=DIR                        (scratch directory, default a new one under /var/tmp)
# The reanimator rows are left out, with a printed reason, when the built binary has no
# `fs mount` (or FUSE is unavailable). Needs what scripts/install-deps.sh installs (fio,
# sqlite3, fuse3, bindfs, loggedfs, fsmark, time, python3, cargo) and root (drop_caches,
# FUSE mounts with allow_other).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPS="${1:-${REPS:-3}}"
FIO_SECONDS="${FIO_SECONDS:-10}"
ALL_WORKLOADS="randread randwrite untar fsmark sqlite"
ALL_CONFIGS="native bindfs bindfs-nocache loggedfs reanimator-none reanimator-full reanimator-full-dev reanimator-every-lookup reanimator-discard reanimator-fast reanimator-fast-dev reanimator-filtered"
CHAIN_CONFIGS="reanimator-tracers3 reanimator-wfull reanimator-sync reanimator-lz4 reanimator-seal-lz4 reanimator-encrypt reanimator-seal-lz4-encrypt"
WORKLOADS="${WORKLOADS:-$ALL_WORKLOADS}"
CONFIGS="${CONFIGS:-$ALL_CONFIGS}"
# A workload that takes longer than this under any configuration is a hang: fail the run.
LIMIT="${LIMIT:-900}"
wants() { [[ " $WORKLOADS " == *" $1 "* ]]; }
die() { echo "bench/fs: $*" >&2; exit 1; }
for p in fio sqlite3 python3 cargo tar fs_mark bindfs loggedfs fusermount3 findmnt timeout /usr/bin/time; do
  command -v "$p" >/dev/null 2>&1 || die "$p not found; run: bash scripts/install-deps.sh"
done
for c in $CONFIGS; do [[ " $ALL_CONFIGS $CHAIN_CONFIGS " == *" $c "* ]] || die "unknown configuration $c (known: $ALL_CONFIGS $CHAIN_CONFIGS)"; done
for w in $WORKLOADS; do [[ " $ALL_WORKLOADS " == *" $w "* ]] || die "unknown workload $w (known: $ALL_WORKLOADS)"; done
[ -e /dev/fuse ] || die "/dev/fuse is missing: FUSE is unavailable here"
cargo build --release -q -p reanimator
RA="$(realpath "${CARGO_TARGET_DIR:-target}/release/reanimator")"
DIR="${BENCH_DIR:-$(mktemp -d /var/tmp/bench-fs.XXXXXX)}"
mkdir -p "$DIR"
DIR="$(realpath "$DIR")"
LOWER="$DIR/lower" MNT="$DIR/mnt"
mkdir -p "$LOWER" "$MNT"
OUT="$DIR/results.jsonl"
: >"$OUT"
# The key of the sealed and encrypted rows.
KEY="$DIR/bench.key"
rm -f "$KEY"
"$RA" keygen "$KEY" 2>/dev/null

# The daemon of the current row: its pid (GNU time's, the daemon is its child), the mount
# point it serves ("" when none) and its trace or log file; the running workload's pid.
DPID="" MNTED="" OUTF="" UMOUNT_S="" WPID=""
is_fuse() { findmnt -n -o FSTYPE --mountpoint "$1" 2>/dev/null | grep -q '^fuse'; }
# Always leave nothing mounted and no daemon running, whatever stopped the script.
cleanup() {
  local st=$?
  if [ -n "$WPID" ]; then
    kill "$WPID" 2>/dev/null || true
    wait "$WPID" 2>/dev/null || true
  fi
  if [ -n "$MNTED" ] && is_fuse "$MNTED"; then
    fusermount3 -u "$MNTED" 2>/dev/null || umount "$MNTED" 2>/dev/null || umount -l "$MNTED" 2>/dev/null || true
  fi
  if [ -n "$DPID" ]; then
    # SIGTERM to the daemon (GNU time's child): it unmounts and finishes its file; then wait
    # for it (up to 30 s, then SIGKILL), so that nothing writes into $DIR while it is removed.
    local kid i
    for kid in $(cat /proc/"$DPID"/task/*/children 2>/dev/null); do kill "$kid" 2>/dev/null || true; done
    for ((i = 0; i < 600; i++)); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.05; done
    if kill -0 "$DPID" 2>/dev/null; then
      for kid in $(cat /proc/"$DPID"/task/*/children 2>/dev/null); do kill -9 "$kid" 2>/dev/null || true; done
      kill -9 "$DPID" 2>/dev/null || true
    fi
    wait "$DPID" 2>/dev/null || true
  fi
  # Never remove the scratch directory through (or under) a mount.
  local m
  for m in $(findmnt -n -l -o TARGET | grep -F "$DIR" || true); do umount -l "$m" 2>/dev/null || true; done
  if findmnt -n -l -o TARGET | grep -qF "$DIR"; then
    echo "bench/fs: something is still mounted under $DIR; left in place" >&2
  else
    rm -rf "$DIR" || echo "bench/fs: could not remove $DIR" >&2
  fi
  exit "$st"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The reanimator rows need a binary with `fs mount`.
if [[ " $CONFIGS " == *" reanimator-"* ]] && ! "$RA" fs mount --help >/dev/null 2>"$DIR/probe.err"; then
  echo "bench/fs: this reanimator has no \`fs mount\`; its rows are left out: $(head -n 3 "$DIR/probe.err")" >&2
  CONFIGS="$(for c in $CONFIGS; do [[ $c = reanimator-* ]] || echo "$c"; done | xargs)"
fi
rm -f "$DIR/probe.err"
[ -n "$CONFIGS" ] || die "no configuration left to run"
FSTYPE="$(findmnt -n -o FSTYPE --target "$LOWER")"
echo "bench/fs: LOWER $LOWER is on $FSTYPE; rows: $CONFIGS; workloads: $WORKLOADS; $REPS run(s)" >&2

# start_fs CONFIG: mount CONFIG's file system; sets W, the directory the workload runs in.
start_fs() {
  local cfg=$1 t0 line
  local -a cmd
  DPID="" MNTED="" OUTF="" UMOUNT_S=""
  rm -f "$DIR"/out.* "$DIR/daemon.err" "$DIR/daemon.t"
  case $cfg in
    native) W=$LOWER; return 0 ;;
    bindfs) MNTED=$MNT; cmd=(bindfs -f "$LOWER" "$MNT") ;;
    bindfs-nocache)
      MNTED=$MNT; cmd=(bindfs -f -o attr_timeout=0,entry_timeout=0,negative_timeout=0 "$LOWER" "$MNT") ;;
    loggedfs) MNTED=$LOWER; OUTF=$DIR/out.log; cmd=(loggedfs -f -l "$OUTF" "$LOWER") ;;
    reanimator-none | reanimator-full)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data "${cfg#reanimator-}" --compress none) ;;
    reanimator-discard)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=(env REANIMATOR_DISCARD_EVENTS=1 "$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data full --compress none) ;;
    reanimator-fast)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --fast --compress none) ;;
    reanimator-fast-dev)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --fast --transport dev --compress none) ;;
    reanimator-full-dev)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data full --transport dev --compress none) ;;
    reanimator-every-lookup)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data full --every-lookup --compress none) ;;
    reanimator-filtered)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --filter 'path ~ "/nomatch/**"' --compress none) ;;
    reanimator-tracers3)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data full --compress none
        --tracer "out=$DIR/out.t2.ds,data=hash,filter='op in {write, create, unlink}'"
        --tracer "out=$DIR/out.t3.ds,driver=aggregate:1") ;;
    reanimator-wfull)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data write=full,read=hash --compress none) ;;
    reanimator-sync)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data full --sync --compress none) ;;
    reanimator-lz4)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data full --compress lz4) ;;
    reanimator-seal-lz4)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data full --compress lz4 --seal "$KEY") ;;
    reanimator-encrypt)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data full --compress none --encrypt "$KEY") ;;
    reanimator-seal-lz4-encrypt)
      MNTED=$MNT; OUTF=$DIR/out.ds; cmd=("$RA" fs mount "$LOWER" "$MNT" -o "$OUTF" --data full --compress lz4 --seal "$KEY" --encrypt "$KEY") ;;
  esac
  W=$MNTED
  is_fuse "$MNTED" && die "$MNTED is already a FUSE mount before $cfg starts"
  # GNU time around the daemon: peak RSS (KB), user and system seconds, voluntary and
  # involuntary context switches, mount to exit.
  /usr/bin/time -f '%M %U %S %w %c' -o "$DIR/daemon.t" "${cmd[@]}" </dev/null >"$DIR/daemon.out" 2>"$DIR/daemon.err" &
  DPID=$!
  t0=$SECONDS
  # Up: the mount is in the mount table (and reanimator has said "... mounted LOWER at MNT ...").
  while :; do
    if is_fuse "$MNTED"; then
      [[ $cfg != reanimator-* ]] && break
      grep -q "mounted .* at " "$DIR/daemon.err" && break
    fi
    if ! kill -0 "$DPID" 2>/dev/null; then
      wait "$DPID" && line=0 || line=$?
      DPID=""
      echo "bench/fs: $cfg exited with status $line before mounting: ${cmd[*]}" >&2
      tail -n 20 "$DIR/daemon.err" >&2
      exit 1
    fi
    if [ $((SECONDS - t0)) -ge 10 ]; then
      echo "bench/fs: $cfg is not mounted at $MNTED after 10 s: ${cmd[*]}; its stderr:" >&2
      tail -n 20 "$DIR/daemon.err" >&2
      exit 1
    fi
    sleep 0.05
  done
}

# stop_fs CONFIG: unmount, wait for the daemon to exit (it may flush its trace first), fail
# on a non-zero exit; sets UMOUNT_S (request to exit).
stop_fs() {
  local cfg=$1 t0 st=0 i
  [ -n "$DPID" ] || return 0
  t0=$EPOCHREALTIME
  if [[ $cfg = reanimator-* ]]; then
    "$RA" fs umount "$MNTED" >"$DIR/umount.err" 2>&1 || {
      echo "bench/fs: \`reanimator fs umount $MNTED\` failed ($cfg):" >&2; cat "$DIR/umount.err" >&2
      exit 1
    }
  else
    # Busy for a moment after the workload's last close: retry.
    for i in 1 2 3 4 5; do fusermount3 -u "$MNTED" 2>"$DIR/umount.err" && break; sleep 0.2; done
    is_fuse "$MNTED" && { echo "bench/fs: fusermount3 -u $MNTED failed ($cfg):" >&2; cat "$DIR/umount.err" >&2; exit 1; }
  fi
  # The daemon has UMOUNT_WAIT seconds (default 300: a full-data trace to flush) to exit.
  for ((i = 0; i < ${UMOUNT_WAIT:-300} * 20; i++)); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$DPID" 2>/dev/null; then
    echo "bench/fs: $cfg still running ${UMOUNT_WAIT:-300} s after the unmount request; its stderr:" >&2
    tail -n 20 "$DIR/daemon.err" >&2
    exit 1
  fi
  wait "$DPID" || st=$?
  DPID=""
  UMOUNT_S=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
  if is_fuse "$MNTED"; then echo "bench/fs: $cfg exited but $MNTED is still mounted" >&2; exit 1; fi
  MNTED=""
  if [ "$st" -ne 0 ]; then
    echo "bench/fs: $cfg exited with status $st after unmounting; its stderr:" >&2
    tail -n 20 "$DIR/daemon.err" >&2
    exit 1
  fi
}

# Children's user + system seconds from the shell's `times` (second line: "0m1.234s 0m0.567s").
cpu_of() { awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'; }

# timed NAME CMD...: run CMD (in W, stdin $STDIN, under the hang limit); NAME_S its elapsed
# seconds, NAME_CPU its user + system seconds.
timed() {
  local name=$1 t0 st=0
  shift
  times >"$DIR/times.0"
  t0=$EPOCHREALTIME
  # In the background, waited for: a signal to the script is handled at once (the trap ends the
  # workload, then unmounts).
  (cd "$W" && exec timeout -k 10 "$LIMIT" "$@" <"${STDIN:-/dev/null}" >"$DIR/stdout" 2>"$DIR/stderr") &
  WPID=$!
  wait "$WPID" || st=$?
  WPID=""
  printf -v "${name}_S" '%s' "$(since "$t0")"
  times >"$DIR/times.1"
  printf -v "${name}_CPU" '%s' "$(awk -v a="$(cpu_of "$DIR/times.0")" -v b="$(cpu_of "$DIR/times.1")" 'BEGIN { printf "%.3f", b - a }')"
  if [ "$st" -ne 0 ]; then
    local why=""
    [ "$st" -eq 124 ] && why=" (over the ${LIMIT} s limit)"
    echo "bench/fs: $WORKLOAD ($CFG, run $RUN): \`$*\` failed with exit status $st$why. Its stderr:" >&2
    tail -n 20 "$DIR/stderr" >&2
    [ -n "$MNTED" ] && { echo "the daemon's stderr:" >&2; tail -n 20 "$DIR/daemon.err" >&2; }
    exit 1
  fi
}

# bench WORKLOAD CONFIG RUN: one run on a fresh mount; one or two JSON lines appended to $OUT.
bench() {
  WORKLOAD=$1 CFG=$2 RUN=$3
  local -a kv=()
  drop_caches
  case $WORKLOAD in
    randread | randwrite) cat "$LOWER/fio.dat" >/dev/null ;;
    untar) rm -rf "$LOWER/tree" ;;
    fsmark) rm -rf "$LOWER/fsm" ;;
    sqlite) rm -f "$LOWER/s.db" "$LOWER/s.db-journal" ;;
  esac
  start_fs "$CFG"
  case $WORKLOAD in
    randread | randwrite)
      rm -f "$DIR/fio.json"
      timed MAIN fio --name="$WORKLOAD" --filename=fio.dat --size=256M --rw="$WORKLOAD" --bs=4k \
        --ioengine=psync --numjobs=1 --runtime="$FIO_SECONDS" --time_based --invalidate=0 \
        --output-format=json --output="$DIR/fio.json"
      kv+=(fio_json="$DIR/fio.json") ;;
    untar)
      timed MAIN tar xf "$DIR/tree.tar"
      [ "$(cd "$W" && find tree | wc -l)" = "$TREE_ENTRIES" ] || die "untar ($CFG, run $RUN): the extracted tree has not $TREE_ENTRIES entries"
      timed RM rm -rf tree
      [ ! -e "$W/tree" ] || die "untar ($CFG, run $RUN): rm -rf left the tree behind"
      kv+=(rm_s="$RM_S" rm_cpu_s="$RM_CPU" tree_entries="$TREE_ENTRIES") ;;
    fsmark)
      mkdir -p "$W/fsm"
      # 10,000 files: `reanimator fs` holds a descriptor per file the kernel knows, and 20,000
      # exceed this machine's open-file limit (20,000): creat fails with EMFILE.
      timed MAIN fs_mark -d "$W/fsm" -s 4096 -n 10000 -t 1 -S 0 -L 1 -D 16 -l "$DIR/fsmark.log"
      kv+=(fsmark_out="$DIR/stdout") ;;
    sqlite)
      STDIN="$DIR/single.sql" timed MAIN sqlite3 s.db ;;
  esac
  stop_fs "$CFG"
  # What reached LOWER, checked there once unmounted.
  if [ "$WORKLOAD" = sqlite ]; then
    local n
    n=$(sqlite3 "$LOWER/s.db" 'SELECT count(*) FROM t') || die "sqlite ($CFG, run $RUN): counting the rows in LOWER failed"
    [ "$n" = 2000 ] || die "sqlite ($CFG, run $RUN): $n rows in the table, not 2000"
  fi
  local size=0 calls=""
  [ -n "$OUTF" ] && [ -e "$OUTF" ] && size=$(stat -c %s "$OUTF")
  if [[ $CFG = reanimator-* ]]; then
    [ -e "$OUTF" ] || die "$CFG wrote no trace at $OUTF"
    # The key only for the sealed and encrypted rows: a reader given a key reads sealed
    # files only.
    local -a keyargs=()
    [[ $CFG = *seal* || $CFG = *encrypt* ]] && keyargs=(--key "$KEY")
    "$RA" info "${keyargs[@]}" --json "$OUTF" >"$DIR/info.json" 2>"$DIR/info.err" || {
      echo "bench/fs: \`reanimator info --json\` of $CFG's trace failed:" >&2; cat "$DIR/info.err" >&2; exit 1
    }
    kv+=(info_json="$DIR/info.json" daemon_err="$DIR/daemon.err")
    # fio: how many of its reads or writes reached the trace.
    if [[ $WORKLOAD = rand* ]]; then
      kv+=(rw_records="$("$RA" dump "${keyargs[@]}" "$OUTF" --where 'call in {read, write}' | wc -l)")
    fi
  fi
  [ "$CFG" = loggedfs ] && [ -e "$OUTF" ] && calls=$(wc -l <"$OUTF") && kv+=(log_lines="$calls")
  [ -e "$DIR/daemon.t" ] && kv+=(daemon_t="$DIR/daemon.t" umount_s="$UMOUNT_S")
  python3 bench/fs/row.py "$WORKLOAD" "$CFG" "$RUN" wall_s="$MAIN_S" cpu_s="$MAIN_CPU" out_bytes="$size" \
    fstype="$FSTYPE" "${kv[@]}" >>"$OUT"
  printf '%-9s %-19s run %s: %s\n' "$WORKLOAD" "$CFG" "$RUN" "$(tail -n 1 "$OUT")" >&2
  rm -f "$DIR"/out.*
}

# Inputs, made once, outside LOWER.
if wants randread || wants randwrite; then
  fio --name=lay --filename="$LOWER/fio.dat" --size=256M --rw=write --bs=1M --ioengine=psync >/dev/null
fi
if wants untar; then
  # /usr/include, its top directory renamed "tree".
  tar cf "$DIR/tree.tar" --transform 's,^include,tree,' -C /usr include
  TREE_ENTRIES=$(tar tf "$DIR/tree.tar" | wc -l)
  echo "bench/fs: untar: $TREE_ENTRIES entries, $(du -sm "$DIR/tree.tar" | cut -f1) MB tarball" >&2
fi
if wants sqlite; then
  python3 - "$DIR/single.sql" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("CREATE TABLE t(k INTEGER, v TEXT);\n")
    for i in range(2000):
        f.write(f"INSERT INTO t(k,v) VALUES({i},'{'x' * 100}');\n")
PY
fi

for i in $(seq "$REPS"); do
  for w in $WORKLOADS; do
    for cfg in $CONFIGS; do
      bench "$w" "$cfg" "$i"
    done
  done
done

cmd="bash bench/fs/run.sh"
[ "$REPS" = 3 ] || cmd="REPS=$REPS $cmd"
[ "$FIO_SECONDS" = 10 ] || cmd="FIO_SECONDS=$FIO_SECONDS $cmd"
section=fs
if [ "$CONFIGS" != "$ALL_CONFIGS" ]; then
  cmd="CONFIGS=\"$CONFIGS\" $cmd"
  section="$section-$(echo $CONFIGS | tr ' ' '-')"
fi
if [ "$WORKLOADS" != "$ALL_WORKLOADS" ]; then
  cmd="WORKLOADS=\"$WORKLOADS\" $cmd"
  section="$section-$(echo $WORKLOADS | tr ' ' '-')"
fi
python3 bench/update_perf.py "$section" "$OUT" "$cmd"
cat "$OUT"

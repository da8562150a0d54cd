#!/usr/bin/env bash
# replay-conformance.sh: record programs and test suites that nobody here wrote, with each
# recorder, replay every trace and its compiled plan into an empty root (`--init`), and report
# every call whose replayed outcome differs from the recording, every final-tree difference,
# and every place where the plan's replay differs from the trace's.
#
# Usage: scripts/replay-conformance.sh [--quick] [--backends LIST] [--suites LIST]
#                                      [--units LIST] [--keep] [--work DIR]
#   --quick          bounded subset for CI (about 3 minutes)
#   --backends LIST  comma-separated subset of: ptrace,ebpf (default both)
#   --suites LIST    comma-separated subset of: python,programs,stress,bench
#   --units LIST     run only these units of those suites (names as the report prints them:
#                    test_os, cp-r, stress-dir, ...), e.g. to rerun one that failed
#   --keep           keep the work directory (traces, reports) afterwards; without it a run
#                    with differences keeps only the failing units' files
#   --work DIR       where to put the work directory (default /var/tmp)
# Environment: REANIMATOR (binary; default $CARGO_TARGET_DIR/release/reanimator or
#   target/release/reanimator), PYTHON (default /usr/bin/python3: the one whose test suite
#   libpython3.11-testsuite installs).
#
# A unit passes when its recording exits 0, the trace's replay exits 0 with no mismatch and
# no final-tree difference, and the plan's replay reports the same calls, outcomes and tree.
# Differences this kernel and --init cannot avoid are listed per unit below (KNOWN) with the
# reason; they are printed and counted, and never hide another difference. Every command runs
# under a time bound; one that outlives it is a HANG.
#
# Exit status: 0 when no difference was found, 1 otherwise, 2 on a usage or setup error.
set -uo pipefail

QUICK=0 KEEP=0 BACKENDS=ptrace,ebpf SUITES=python,programs,stress,bench WORKBASE=/var/tmp ONLY=
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --keep) KEEP=1 ;;
        --backends) BACKENDS=$2; shift ;;
        --suites) SUITES=$2; shift ;;
        --units) ONLY=$2; shift ;;
        --work) WORKBASE=$2; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "replay-conformance: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
# Checked before anything is made or run.
for s in ${SUITES//,/ }; do
    case "$s" in python|stress|programs|bench) ;; *) echo "replay-conformance: unknown suite $s (python, programs, stress, bench)" >&2; exit 2 ;; esac
done
for b in ${BACKENDS//,/ }; do
    case "$b" in ptrace|ebpf) ;; *) echo "replay-conformance: unknown backend $b (ptrace, ebpf)" >&2; exit 2 ;; esac
done

HERE=$(cd "$(dirname "$0")/.." && pwd)
R=${REANIMATOR:-${CARGO_TARGET_DIR:-$HERE/target}/release/reanimator}
[ -x "$R" ] || { echo "replay-conformance: no reanimator binary at $R (cargo build --release)" >&2; exit 2; }
PY=${PYTHON:-/usr/bin/python3}
WORK=$(mktemp -d "$WORKBASE/replay-conformance.XXXXXX") || { echo "replay-conformance: cannot make a work directory in $WORKBASE (does it exist?)" >&2; exit 2; }
chmod 755 "$WORK"
REPORT=$WORK/report.txt
DIFFS=0 KNOWN=0 UNITS=0 SKIPS=0
T0=$(date +%s)
say() { echo "$*" | tee -a "$REPORT"; }
diff_found() { DIFFS=$((DIFFS + 1)); say "  DIFF: $*"; }
skip() {
    SKIPS=$((SKIPS + 1)); say "  SKIP: $*"
    if [ "${REANIMATOR_REQUIRE_TESTDATA:-}" = 1 ]; then DIFFS=$((DIFFS + 1)); say "  (a skip fails under REANIMATOR_REQUIRE_TESTDATA=1)"; fi
}

# Mismatches a unit is known to show, as "call:what" patterns (shell globs; PATTERN=reordered
# only when the replayed value is the recorded one with its bytes reordered), with the reason;
# keyed NAME, or NAME/BACKEND for one recorder only.
declare -A ALLOW WHY
ALLOW[stress-dir]='getdents64:getdents entries|fstatat:stat.st_nlink|fstatat:result|rmdir:*'
WHY[stress-dir]="two processes make, remove and list directories at once; calls that overlapped are replayed in one order where the recording saw the other's effect"
ALLOW[stress-access]='access:result|faccessat:result|faccessat2:result'
WHY[stress-access]="two processes chmod and access one file at once; overlapping chmods are replayed in one order where the recording saw the other's mode"
ALLOW[stress-open]='utimensat:result'
WHY[stress-open]="the stressor's O_TMPFILE in /tmp (tmpfs here, outside the snapshot) refuses utimensat with EINVAL; the replay makes it under the root, on another file system"
ALLOW[test_posix]='read:buf*=reordered'
WHY[test_posix]="test_posix's register_at_fork test: parent and child write letters to one pipe at once; which of two overlapping writes went first is not in their times (the pipe's recorded read shows it), and the replay may interleave them the other way"
ALLOW[test_mmap/ptrace]='read:buf*'
WHY[test_mmap/ptrace]="ptrace sees no loads and stores to mapped memory: bytes test_mmap wrote through a shared mapping and then read back with read() are not in the trace (docs/REPLAY.md); the eBPF recorder records them"
ALLOW[test_subprocess]='fstatat:errno|fstatat:stat.st_size|write:result'
WHY[test_subprocess]="children that drop root (user=, group=) find ~/.local unreadable (EACCES recorded; the replayer runs as root: ENOENT); /bin/sh's lstat sees the --init tree's symlink; a write to a pipe whose reader a killed child held races that death"
ALLOW[test_logging/ptrace]='fstatat:stat.st_nlink'
WHY[test_logging/ptrace]="WatchedFileHandler's test: a thread unlinks the log file while the main thread fstats it; which of the two overlapping calls went first shows only in the link count the fstat returned, and the replay may run them the other way"
ALLOW[stress-link]='fstatat:stat.st_size|link:errno|readlink*:errno'
WHY[stress-link]="the stressor links, reads links and stats files outside its temp path (in /tmp: tmpfs here); --init=infer makes them from what other calls showed, and not /tmp where only failed links named it (link(\"/\", \"/tmp/...\"): EPERM recorded, ENOENT replayed)"

# Units whose differences are reported but do not fail the run, each with why: a regression
# seen and not yet found, never a known limit (those are ALLOW entries above). Every
# quarantined difference is printed and counted in the summary line.
declare -A QUARANTINE
QUARANTINED=0

# Options a unit's replays need.
declare -A REPLAY_OPTS
# test_tarfile extracts device nodes (as root): made as recorded, or placeholders would differ.
REPLAY_OPTS[test_tarfile]=--allow-special

# check.py REPORT-OF-TRACE REPORT-OF-PLAN ALLOWED: the unit's verdict lines, exit 1 on a difference.
CHECK=$WORK/check.py
cat >"$CHECK" <<'PY'
import fnmatch, json, sys
def load(p):
    try:
        return json.load(open(p))
    except Exception as e:
        return {"_error": f"no report ({e})"}
t, p = load(sys.argv[1]), load(sys.argv[2])
allowed = [a for a in sys.argv[3].split("|") if a]
bad = known = 0
for name, r in (("trace", t), ("plan", p)):
    if "_error" in r:
        print(f"DIFF {name}: {r['_error']}"); bad += 1; continue
    for m in r.get("mismatches", []):
        key = f"{m['call']}:{m['what']}"
        # PATTERN=reordered: only when the replayed value is the recorded one reordered.
        def fits(a):
            if a.endswith("=reordered"):
                return fnmatch.fnmatch(key, a[:-10]) and sorted(m["expected"]) == sorted(m["actual"]) \
                    and m["expected"] != m["actual"]
            return fnmatch.fnmatch(key, a)
        if any(fits(a) for a in allowed):
            known += 1
            continue
        bad += 1
        print(f"DIFF {name}: #{m['unique_id']} {m['call']} {m['what']}: expected {m['expected']}, replayed {m['actual']}")
    listed = len(r.get("mismatches", []))
    if r.get("mismatch_total", 0) > listed:
        # Mismatches the report did not list cannot be told known.
        bad += 1; print(f"DIFF {name}: {r['mismatch_total'] - listed} more mismatches not listed")
    for f in r.get("final_state", []):
        if f.get("differences"):
            bad += 1; print(f"DIFF {name}: final tree: {f['differences']} differences: {f.get('first')}")
if "_error" not in t and "_error" not in p:
    # What ran must be the same; what matched is each report's own verdict above (the
    # replays of racing processes may interleave differently from run to run).
    ran = ("replayed", "issued", "emulated", "simulated", "skipped")
    def runs(r):
        return {c: tuple(v.get(k) for k in ran) for c, v in r.get("per_call", {}).items()}
    if runs(t) != runs(p):
        bad += 1; print("DIFF plan: its replay ran other calls than the trace's")
    for k in ("processes", "threads", "unknown_calls"):
        if t.get(k) != p.get(k):
            bad += 1; print(f"DIFF plan: its replay's {k} differs from the trace's")
tt = t.get("totals", {})
print(f"OK calls={tt.get('replayed')} issued={tt.get('issued')} matched={tt.get('matched')} known={known} trace={t.get('elapsed_s', 0):.2f}s plan={p.get('elapsed_s', 0):.2f}s")
sys.exit(1 if bad else 0)
PY

# unit NAME BOUND -- COMMAND...: record, replay, compile, replay the plan, check. The command
# runs in $dir ($WORK/NAME.BACKEND/work, snapshotted) with TMPDIR there.
unit() {
    local name=$1 bound=$2; shift 3
    if [ -n "$ONLY" ] && [[ ",$ONLY," != *,"$name",* ]]; then return; fi
    local b
    for b in ${BACKENDS//,/ }; do
        local u=$WORK/$name.$b dir=$WORK/$name.$b/work
        mkdir -p "$dir"; chmod 1777 "$dir"
        UNITS=$((UNITS + 1))
        local t rc
        t=$(date +%s.%N)
        (cd "$dir" && TMPDIR=$dir timeout -k 5 "$bound" "$R" record -q --backend "$b" -o "$u/t.ds" --snapshot "$dir" -- "${@//@DIR@/$dir}") >"$u/record.log" 2>&1
        rc=$?
        t=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
        if [ $rc = 124 ] || [ $rc = 137 ]; then diff_found "$name/$b: record HANGS (bound ${bound}s)"; continue; fi
        if [ $rc != 0 ]; then diff_found "$name/$b: record exit $rc: $(tail -3 "$u/record.log" | tr '\n' ' ')"; continue; fi
        local opts=${REPLAY_OPTS[$name]:-}
        local what
        for what in trace plan; do
            local input=$u/t.ds
            if [ $what = plan ]; then
                timeout -k 5 "$bound" "$R" compile -q "$u/t.ds" -o "$u/t.plan" >"$u/compile.log" 2>&1
                rc=$?
                [ $rc = 0 ] || { diff_found "$name/$b: compile exit $rc: $(tail -2 "$u/compile.log" | tr '\n' ' ')"; continue 2; }
                input=$u/t.plan
            fi
            rm -rf "$u/root"; mkdir "$u/root"
            # shellcheck disable=SC2086
            timeout -k 5 "$bound" "$R" replay "$input" --root "$u/root" --init --json --max-mismatches 100000 $opts >"$u/$what.json" 2>"$u/$what.err"
            rc=$?
            if [ $rc = 124 ] || [ $rc = 137 ]; then diff_found "$name/$b: $what replay HANGS (bound ${bound}s)"; continue 2; fi
            # 1 = mismatches (judged below); anything else is trouble.
            if [ $rc != 0 ] && [ $rc != 1 ]; then diff_found "$name/$b: $what replay exit $rc: $(tail -2 "$u/$what.err" | tr '\n' ' ')"; continue 2; fi
        done
        rm -rf "$u/root"
        local out
        local key=$name
        [ -n "${ALLOW[$name/$b]:-}" ] && key=$name/$b
        out=$(python3 "$CHECK" "$u/trace.json" "$u/plan.json" "${ALLOW[$key]:-}")
        rc=$?
        local k
        k=$(sed -n 's/.* known=\([0-9]*\) .*/\1/p' <<<"$out" | tail -1)
        KNOWN=$((KNOWN + ${k:-0}))
        say "  $(printf '%-16s %-6s record %5ss  %s' "$name" "$b" "$t" "$(tail -1 <<<"$out")")"
        if [ "${k:-0}" != 0 ]; then say "    KNOWN: $k mismatches: ${WHY[$key]}"; fi
        if [ $rc != 0 ] && [ -n "${QUARANTINE[$name/$b]:-}" ]; then
            grep '^DIFF' <<<"$out" | head -20 | while read -r l; do say "    QUARANTINED $l"; done
            say "    QUARANTINED: ${QUARANTINE[$name/$b]}"
            QUARANTINED=$((QUARANTINED + 1))
        elif [ $rc != 0 ]; then
            grep '^DIFF' <<<"$out" | head -20 | while read -r l; do say "    $l"; done
            DIFFS=$((DIFFS + 1))
        elif [ $KEEP = 0 ]; then
            rm -rf "$u"
        fi
    done
}

have_ebpf() {
    # The recorder says when eBPF cannot run; that is a skip (a failure under CI's strict mode).
    local o
    o=$("$R" record -q --backend ebpf -o "$WORK/probe.ds" -- true 2>&1) && { rm -f "$WORK/probe.ds"; return 0; }
    echo "$o" | tail -1
    return 1
}
if [[ ,$BACKENDS, == *,ebpf,* ]]; then
    if ! why=$(have_ebpf); then
        skip "eBPF recorder: $why"
        BACKENDS=$(echo ",$BACKENDS," | sed 's/,ebpf,/,/; s/^,//; s/,$//')
    fi
fi

say "replay-conformance: $("$R" --version 2>/dev/null), backends: $BACKENDS, work: $WORK"

# ---------------------------------------------------------------- python's own tests
# test_mailbox: mailboxes locked with fcntl and dot-lock files by a parent and its forked
# child; test_mmap: files written and read through shared and private mappings; test_pty:
# pseudo-terminals from openpty/forkpty; test_eintr: FIFO opens that wait for the other end,
# and calls interrupted by signals.
PY_QUICK="test_shutil test_tempfile test_glob test_fileio test_posix test_fileinput test_mailbox test_mmap test_fcntl test_pty test_eintr"
PY_FULL="$PY_QUICK test_os test_pathlib test_zipfile test_tarfile test_dbm test_shelve test_gzip test_py_compile test_filecmp test_file test_file_eintr test_dbm_dumb test_zipimport test_bz2 test_lzma test_subprocess test_posixpath test_genericpath test_stat test_unicode_file_functions test_wait4 test_popen test_fork1 test_selectors test_poll test_epoll test_openpty test_zipapp test_runpy test_plistlib test_netrc test_linecache test_tabnanny test_csv test_uuid test_select test_signal test_threading test_dbm_gnu test_dbm_ndbm test_largefile test_wave test_aifc test_sunau test_configparser test_gettext test_mimetypes test_pkgutil test_zipimport_support test_site test_getpass test_cmd_line_script test_queue test_thread test_threading_local test_threadsignals test_sched test_importlib test_import test_pipes test_logging test_concurrent_futures"
suite_python() {
    say "== $PY -m test ($($PY -V 2>&1))"
    [ -e /usr/lib/python3.11/test/test_os.py ] || [ "$PY" != /usr/bin/python3 ] || { skip "no libpython3.11-testsuite"; return; }
    local mods=$PY_FULL mod
    [ "$QUICK" = 1 ] && mods=$PY_QUICK
    for mod in $mods; do
        unit "$mod" 300 -- "$PY" -m test --tempdir @DIR@ "$mod"
    done
    # Descriptors passed over Unix sockets (SCM_RIGHTS), in the quick set too. test_socket
    # whole hangs on this VM even untraced (its AF_VSOCK test waits in accept for a client
    # whose connect failed with ENODEV): its descriptor-passing tests (socketpairs between
    # threads) alone.
    unit test_socket-scm-rights 300 -- "$PY" -m test --tempdir @DIR@ \
        -m '*SCMRights*' -m '*FDPass*' -m '*CmsgMacro*' test_socket
    # multiprocessing's spawn and forkserver start methods (the forkserver hands pipes to the
    # processes it forks that way), under a short unit name: the forkserver's socket path lies
    # beneath the unit's directory, and a Unix socket's path has at most 107 bytes.
    unit mp-main 300 -- "$PY" -m test --tempdir @DIR@ test_multiprocessing_main_handling
}

# ---------------------------------------------------------------- real programs
suite_programs() {
    say "== programs"
    local src=/usr/share/doc
    unit tar-c-x 120 -- sh -c "tar cf @DIR@/a.tar -C /usr/share/doc apt coreutils && mkdir @DIR@/x && tar xf @DIR@/a.tar -C @DIR@/x && cmp @DIR@/x/apt/copyright $src/apt/copyright"
    # cp copies with copy_file_range, whose bytes never pass through the program's memory:
    # both recorders read them back from the source, outside the snapshot here, so
    # --init=infer learns its content from them (eBPF: with the thread stopped by its
    # throttle, docs/EBPF.md).
    unit cp-r 120 -- sh -c "cp -r /usr/share/doc/coreutils /usr/share/doc/apt @DIR@/ && cmp @DIR@/apt/copyright $src/apt/copyright"
    if command -v git >/dev/null; then
        unit git 120 -- sh -c "cd @DIR@ && git init -q r && cd r && tar -C /usr/share/doc -cf - apt | tar -xf - && git add . && git -c user.name=t -c user.email=t@t commit -qm one && git gc -q && git log --oneline | wc -l"
    else
        skip "no git"
    fi
    unit rsync 120 -- rsync -a /usr/share/doc/apt /usr/share/doc/coreutils @DIR@/r/
    unit gzip-xz-zstd 120 -- sh -c "cp /usr/share/doc/apt/changelog.gz @DIR@/a.gz && gzip -d @DIR@/a.gz && xz -k @DIR@/a && zstd -q @DIR@/a && xz -t @DIR@/a.xz && zstd -t -q @DIR@/a.zst && gzip -9 @DIR@/a"
    # make and gcc: temporary files, the assembler's output, the linker's (written, then
    # made executable), and the program run.
    unit make-gcc 180 -- sh -c "cd @DIR@ && printf 'int f(int);\nint main(){return f(1)-2;}\n' >m.c && printf 'int f(int x){return x+1;}\n' >f.c && printf 'p: m.o f.o\n\tgcc -o p m.o f.o\n%%.o: %%.c\n\tgcc -O1 -c \$< -o \$@\n' >Makefile && make -s && ./p"
    # sed -i (a temporary file renamed over the original), sort -o, split.
    unit sed-sort-split 60 -- sh -c "cp /usr/share/doc/apt/copyright @DIR@/c && sed -i 's/Copyright/(c)/g' @DIR@/c && sort -o @DIR@/s @DIR@/c && split -l 10 @DIR@/s @DIR@/p_ && cat @DIR@/p_* | wc -l"
    unit zip-unzip 60 -- sh -c "cd @DIR@ && zip -qr z.zip /usr/share/doc/apt && unzip -q z.zip -d u && ls -R u | wc -l"
    # dd with conv=fsync,notrunc, truncate, fallocate, a symlink renamed, install -m.
    unit dd-coreutils 60 -- sh -c "dd if=/dev/urandom of=@DIR@/d bs=64k count=16 status=none && dd if=@DIR@/d of=@DIR@/e bs=4k conv=fsync,notrunc status=none && cmp @DIR@/d @DIR@/e && truncate -s 100k @DIR@/e && fallocate -l 2M @DIR@/e && ln -s e @DIR@/l && mv @DIR@/l @DIR@/m && install -m 600 @DIR@/d @DIR@/i"
    if command -v sqlite3 >/dev/null; then
        unit sqlite3 120 -- sh -c "cd @DIR@ && for i in \$(seq 200); do echo \"insert into t values(\$i, randomblob(300));\"; done | sed '1i create table t(k, v);' | sqlite3 s.db && sqlite3 s.db 'select count(*) from t'"
    else
        skip "no sqlite3"
    fi
}

# ---------------------------------------------------------------- storage benchmarks
suite_bench() {
    say "== storage benchmarks (short, fixed work where the tool allows)"
    if command -v fio >/dev/null; then
        # Two jobs (processes) of random reads and writes with fio's own data verification.
        unit fio-verify 120 -- fio --name=v --directory=@DIR@ --size=2M --bs=4k --rw=randrw --ioengine=psync --verify=crc32c --do_verify=1 --numjobs=2 --output=/dev/null
        # Direct I/O (O_DIRECT): the replay's buffers must be aligned as fio's were.
        unit fio-direct 120 -- fio --name=d --directory=@DIR@ --size=1M --bs=4k --rw=randrw --ioengine=psync --direct=1 --output=/dev/null
        # fio's splice engine: each read spliced from the file into a pipe, then taken out
        # of the pipe with vmsplice.
        unit fio-splice 120 -- fio --name=s --directory=@DIR@ --size=1M --bs=4k --rw=read --ioengine=splice --output=/dev/null
    else
        skip "no fio"
    fi
    if command -v db_bench >/dev/null; then
        # RocksDB: its write-ahead log, memtable flushes and a compaction on background
        # threads, SST files written, synced, renamed and read back.
        unit rocksdb 180 -- db_bench --db=@DIR@/db --benchmarks=fillseq,overwrite,readrandom,compact --num=3000 --value_size=200 --compression_type=none --threads=1 --histogram=0 --sync=0
    else
        skip "no db_bench (rocksdb-tools)"
    fi
    if command -v sysbench >/dev/null; then
        # sysbench fileio: two threads of random reads and writes over 4 files, fsync every 10.
        unit sysbench 180 -- sh -c "cd @DIR@ && sysbench fileio --file-num=4 --file-total-size=4M prepare >/dev/null && sysbench fileio --file-num=4 --file-total-size=4M --file-test-mode=rndrw --file-fsync-freq=10 --time=0 --events=1500 --threads=2 run >/dev/null && sysbench fileio --file-num=4 cleanup >/dev/null"
    else
        skip "no sysbench"
    fi
    if command -v postmark >/dev/null; then
        # PostMark: a mail server's small files created, appended, read and deleted.
        unit postmark 180 -- sh -c "printf 'set location @DIR@\nset number 200\nset transactions 600\nset size 500 20000\nrun\nquit\n' | postmark >/dev/null"
    else
        skip "no postmark"
    fi
    if command -v fs_mark >/dev/null; then
        # 2 threads x 100 files of 16 KiB, each fsynced before close (in the unit's directory:
        # fs_mark takes paths under 40 bytes).
        unit fs_mark 120 -- fs_mark -d f -n 100 -s 16384 -t 2 -S 1 -L 1
    else
        skip "no fs_mark"
    fi
    if command -v dbench >/dev/null && [ -e /usr/share/dbench/client.txt ]; then
        # Samba's NetBench load, one client for 2 s (time-bound: the calls vary by run). Not
        # two: both would start by making their shared directory at once, and what each one's
        # stat and listing saw of the other's mkdir is a race the replay cannot repeat.
        unit dbench 120 -- dbench -c /usr/share/dbench/client.txt -D @DIR@ -t 2 1
    else
        skip "no dbench"
    fi
}

# ---------------------------------------------------------------- stress-ng
suite_stress() {
    say "== stress-ng, filesystem stressors (a fixed number of operations each)"
    command -v stress-ng >/dev/null || { skip "no stress-ng"; return; }
    # Not symlink: one of its ops takes 7 s untraced here (link's take 0.25 s); not fpunch:
    # 50 ops outlast a minute untraced; not lockf: parent and child seek one shared open file
    # and lock at SEEK_CUR, and under ptrace the replay's order can leave the position where
    # the other process's lock is (docs/REPLAY.md, record locks); not iomix: processes read
    # and write one file at once, and what a read saw varies with the interleaving; not msync:
    # it reads back with read() what it wrote through a mapping before the flush point where
    # the eBPF recorder records the page, and ptrace sees no mapped writes (docs/REPLAY.md).
    local list="access chmod chown dentry dir dirmany fallocate fcntl flock getdent hdd lease link locka lockofd mknod open rename splice utime xattr" st
    # The quick set (CI) leaves out link (most of what it does is in /tmp, outside its temp
    # path) and the racing dir and access stressors, whose mismatches vary from run to run.
    [ "$QUICK" = 1 ] && list="chmod dentry fcntl flock hdd lease lockofd mknod open rename splice utime"
    local ops
    for st in $list; do
        # An op of link is thousands of links (200 take 70 s untraced here).
        # fallocate: an op is many calls (50 take 2-4 s traced here).
        case $st in link) ops=3 ;; fallocate) ops=50 ;; *) ops=200 ;; esac
        unit "stress-$st" 120 -- stress-ng --"$st" 1 --"$st"-ops $ops --temp-path @DIR@ --verify --quiet
    done
}

for s in ${SUITES//,/ }; do
    case "$s" in
        python) suite_python ;;
        stress) suite_stress ;;
        programs) suite_programs ;;
        bench) suite_bench ;;
    esac
done

say "replay-conformance: $UNITS units, $DIFFS with differences, $QUARANTINED quarantined with differences, $KNOWN known mismatches, $SKIPS skips, $(( $(date +%s) - T0 ))s (report: $REPORT)"
if [ $DIFFS = 0 ] && [ $KEEP = 0 ]; then
    rm -rf "$WORK"
fi
[ $DIFFS = 0 ]

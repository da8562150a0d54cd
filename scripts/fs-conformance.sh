#!/usr/bin/env bash
# fs-conformance.sh: run test suites that nobody here wrote once on a plain directory
# ("native") and once inside a `reanimator fs` mount of an equivalent directory ("mount"),
# and report every difference in outcome.
#
# Usage: scripts/fs-conformance.sh [--quick] [--fast] [--suites LIST] [--keep] [--work DIR]
#   --quick         bounded subset for CI (< 3 minutes)
#   --fast          mount with `reanimator fs mount --fast` (kernel caches on)
#   --suites LIST   comma-separated subset of: python,stress,dbench,fsmark,programs
#   --keep          keep the whole work directory (traces, trees) afterwards; without it a
#                   run with differences keeps only its report, logs and error records
#   --work DIR      where to put the work directory (default /var/tmp)
# Environment: REANIMATOR (binary; default $CARGO_TARGET_DIR/release/reanimator or
#   target/release/reanimator), PYTHON (default /usr/bin/python3: the one whose test suite
#   libpython3.11-testsuite installs).
#
# Every command runs under a watchdog. A command that outlives its bound is a HANG: the
# watchdog aborts the FUSE connection (/sys/fs/fuse/connections/N/abort) first, since a
# process blocked on a FUSE request cannot be killed, then kills the command's process
# group; the next unit gets a fresh mount. Each mount's trace is checked with
# `reanimator info` and its records are counted. Nothing here reads other processes' /proc
# entries (ps, pgrep): those can block behind a deadlocked FUSE request.
#
# Exit status: 0 when no difference was found, 1 otherwise, 2 on a usage or setup error.
set -uo pipefail

QUICK=0 FAST=0 KEEP=0 SUITES=python,stress,dbench,fsmark,programs WORKBASE=/var/tmp
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --fast) FAST=1 ;;
        --keep) KEEP=1 ;;
        --suites) SUITES=$2; shift ;;
        --work) WORKBASE=$2; shift ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        *) echo "fs-conformance: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
# Checked before anything is made or run.
for s in ${SUITES//,/ }; do
    case "$s" in python|stress|dbench|fsmark|programs) ;; *) echo "fs-conformance: unknown suite $s (python, stress, dbench, fsmark, programs)" >&2; exit 2 ;; esac
done

[ "$(id -u)" = 0 ] || { echo "fs-conformance: needs root (FUSE mounts)" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")/.." && pwd)
R=${REANIMATOR:-${CARGO_TARGET_DIR:-$HERE/target}/release/reanimator}
[ -x "$R" ] || { echo "fs-conformance: no reanimator binary at $R (cargo build --release)" >&2; exit 2; }
PY=${PYTHON:-/usr/bin/python3}

# A suite that cannot run is a skip, and under REANIMATOR_REQUIRE_TESTDATA=1 (CI) a failure.
skip_suite() {
    say "  SKIP: $1"
    if [ "${REANIMATOR_REQUIRE_TESTDATA:-}" = 1 ]; then DIFFS=$((DIFFS + 1)); say "  (a skip fails under REANIMATOR_REQUIRE_TESTDATA=1)"; fi
}

need_pkg() { # need_pkg COMMAND-OR-PATH PACKAGE
    if [ -e "$1" ] || command -v "$1" >/dev/null 2>&1; then return 0; fi
    echo "fs-conformance: installing $2" >&2
    (apt-get install -y "$2" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$2" >/dev/null 2>&1; }) || true
    [ -e "$1" ] || command -v "$1" >/dev/null 2>&1
}

WORK=$(mktemp -d "$WORKBASE/fs-conformance.XXXXXX") || { echo "fs-conformance: cannot make a work directory in $WORKBASE (does it exist?)" >&2; exit 2; }
chmod 755 "$WORK"
REPORT=$WORK/report.txt
DIFFS=0
MOUNTS=()        # mountpoints that may still be mounted
T0=$(date +%s)

say() { echo "$*" | tee -a "$REPORT"; }
diff_found() { DIFFS=$((DIFFS + 1)); say "  DIFF: $*"; }

conn_of() { # FUSE connection number of a mountpoint (the minor of its st_dev)
    awk -v m="$1" '$5 == m && $9 ~ /^fuse/ { split($3, d, ":"); print d[2] }' /proc/self/mountinfo | tail -1
}
is_mounted() { awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }

abort_conn() {
    local c
    c=$(conn_of "$1")
    [ -n "$c" ] && [ -w "/sys/fs/fuse/connections/$c/abort" ] && echo 1 >"/sys/fs/fuse/connections/$c/abort"
}

# Mount state of the current unit.
MNT= LOWER= DPID= DLOG= TRACE= MCOUNT=0 ABORTED=0
mount_fs() { # mount_fs NAME DATA-MODE: a fresh lower + mount at $WORK/NAME.K
    MCOUNT=$((MCOUNT + 1))
    local base=$WORK/$1.m$MCOUNT
    LOWER=$base/lower MNT=$base/mnt TRACE=$base/trace.ds DLOG=$base/daemon.log ABORTED=0
    mkdir -p "$LOWER" "$MNT"
    chmod 1777 "$LOWER"
    local extra=()
    [ "$FAST" = 1 ] && extra+=(--fast)
    "$R" fs mount "$LOWER" "$MNT" -o "$TRACE" --data "$2" "${extra[@]}" >"$DLOG" 2>&1 &
    DPID=$!
    MOUNTS+=("$MNT")
    local i
    for i in $(seq 1 100); do
        grep -q 'reanimator fs: mounted' "$DLOG" 2>/dev/null && is_mounted "$MNT" && return 0
        kill -0 "$DPID" 2>/dev/null || break
        sleep 0.2
    done
    say "  MOUNT FAILED ($1): $(tail -3 "$DLOG")"
    return 1
}

umount_fs() { # finish the current mount, check its daemon and trace
    [ -n "$MNT" ] || return 0
    local urc=0 drc
    if [ "$ABORTED" = 1 ]; then
        umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
    elif is_mounted "$MNT"; then
        timeout 120 "$R" fs umount "$MNT" >>"$DLOG" 2>&1 || urc=$?
        if [ $urc != 0 ]; then
            say "  UMOUNT FAILED (rc $urc) for $MNT: $(tail -2 "$DLOG")"
            diff_found "reanimator fs umount failed (rc $urc) on $MNT"
            abort_conn "$MNT"; umount -l "$MNT" 2>/dev/null
        fi
    fi
    # the daemon must be gone now; give it a while, then end it
    local i
    for i in $(seq 1 60); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$DPID" 2>/dev/null && { say "  daemon $DPID still running after umount: SIGTERM"; kill -TERM "$DPID"; sleep 2; kill -KILL "$DPID" 2>/dev/null; }
    wait "$DPID"; drc=$?
    if grep -qE 'panicked|RUST_BACKTRACE|stack overflow' "$DLOG" || { [ $drc != 0 ] && [ "$ABORTED" = 0 ]; }; then
        diff_found "daemon exited with status $drc: $(grep -E 'panicked|error' "$DLOG" | head -3 | tr '\n' ' ')"
    fi
    local irc=0 recs
    timeout 300 "$R" info "$TRACE" >"$TRACE.info" 2>&1 || irc=$?
    recs=$(awk '/^Records/ { gsub(",", "", $2); print $2 }' "$TRACE.info")
    if [ $irc != 0 ]; then
        diff_found "reanimator info $TRACE exited $irc: $(tail -2 "$TRACE.info" | tr '\n' ' ')"
    fi
    say "  trace $(basename "$(dirname "$TRACE")"): info rc=$irc, records=${recs:-?}, size=$(stat -c %s "$TRACE" 2>/dev/null || echo 0) bytes$([ "$ABORTED" = 1 ] && echo ', connection aborted after a hang')"
    TRACES=$((TRACES + 1)); RECORDS=$((RECORDS + ${recs:-0}))
    # the errors the daemon returned, for diagnosis
    timeout 300 "$R" dump "$TRACE" --where 'errno != 0' -s 80 >"$TRACE.errors.txt" 2>&1 || true
    MNT=
}
TRACES=0 RECORDS=0

cleanup() {
    local m
    [ -n "$MNT" ] && umount_fs
    for m in "${MOUNTS[@]}"; do
        if is_mounted "$m"; then
            timeout 60 "$R" fs umount "$m" >/dev/null 2>&1 || { abort_conn "$m"; umount -l "$m" 2>/dev/null; }
        fi
    done
    if grep -q " $WORK/" /proc/mounts; then echo "fs-conformance: WARNING: mounts left under $WORK" >&2; fi
    if [ "$KEEP" != 1 ]; then
        if [ "$DIFFS" = 0 ]; then rm -rf "$WORK"; else
            # keep the report, the logs and each trace's error records; the traces and
            # lower trees run to gigabytes
            rm -rf "$WORK"/*.m[0-9]*/trace.ds "$WORK"/*.m[0-9]*/lower "$WORK"/*.native "$WORK"/programs.src
            echo "fs-conformance: logs kept in $WORK (--keep keeps the traces too)" >&2
        fi
    fi
}
trap cleanup EXIT
trap 'echo "fs-conformance: interrupted" >&2; exit 130' INT TERM

# run_bounded SECONDS LOG DIR CMD...: run CMD in DIR in its own process group, bounded.
# Returns CMD's status, or 124 on a hang (then the mount, if DIR is inside it, is aborted).
run_bounded() {
    local t=$1 log=$2 dir=$3; shift 3
    (cd "$dir" && exec setsid "$@") >"$log" 2>&1 </dev/null &
    local p=$! s=0
    while kill -0 "$p" 2>/dev/null; do
        if [ $s -ge $((t * 5)) ]; then
            echo "fs-conformance: TIMEOUT after ${t}s" >>"$log"
            if [ -n "$MNT" ] && [[ "$dir" == "$MNT"* ]]; then abort_conn "$MNT"; ABORTED=1; fi
            kill -TERM -- "-$p" 2>/dev/null; sleep 1; kill -KILL -- "-$p" 2>/dev/null
            wait "$p" 2>/dev/null
            return 124
        fi
        sleep 0.2; s=$((s + 1))
    done
    wait "$p"
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------- python's own tests
PY_QUICK="test_os test_shutil test_tempfile test_glob test_pathlib test_fileio test_posix"
PY_FULL="$PY_QUICK test_io test_zipfile test_tarfile test_fileinput"
# parse a `python -m test -v` log: one line per test: "STATUS id"
py_results() {
    "$PY" - "$1" <<'EOF'
import re, sys
txt = open(sys.argv[1], errors="replace").read()
res = {}
for m in re.finditer(r"^(\w+) \(([\w.]+)\)(?: \.\.\. |\n)", txt, re.M):
    tid = m.group(2)
    # the verdict is the first ok/FAIL/ERROR/skipped after the header (output may come between)
    rest = txt[m.end():m.end() + 4000]
    v = re.search(r"(?:^|\.\.\. |\s)(ok|FAIL|ERROR|skipped|expected failure|unexpected success)\b", rest)
    res[tid] = v.group(1) if v else "NO-VERDICT"
for m in re.finditer(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)", txt, re.M):
    res[m.group(3)] = m.group(1)
for tid, v in sorted(res.items()):
    print(v.replace(" ", "-"), tid)
EOF
}
py_excerpt() { # py_excerpt LOG TESTID: the traceback of one failing test
    "$PY" - "$1" "$2" <<'EOF'
import re, sys
txt = open(sys.argv[1], errors="replace").read()
name = sys.argv[2].rsplit(".", 1)[-1]
m = re.search(r"^(?:FAIL|ERROR): %s \(%s\)\n-+\n(.*?)(?=\n={20}|\n-{20}|\Z)" % (re.escape(name), re.escape(sys.argv[2])), txt, re.M | re.S)
if m:
    lines = [l for l in m.group(1).strip().splitlines() if l.strip()]
    print("\n".join("      " + l for l in (lines[:2] + ["      ..."] + lines[-4:] if len(lines) > 8 else lines)))
EOF
}
suite_python() {
    say "== python3 -m test ($($PY -V 2>&1))"
    need_pkg /usr/lib/python3.11/test/test_os.py libpython3.11-testsuite || { skip_suite "no libpython3.11-testsuite"; return; }
    local mods=$PY_FULL bound=300
    [ "$QUICK" = 1 ] && mods=$PY_QUICK bound=60
    local side mod dir log rc t tn=0 tm=0
    for mod in $mods; do
        for side in native mount; do
            if [ $side = native ]; then
                dir=$WORK/python.native/$mod; mkdir -p "$dir"; chmod 1777 "$dir"
            else
                [ -n "$MNT" ] || mount_fs python full || return
                dir=$MNT/$mod; mkdir -p "$dir"
            fi
            log=$WORK/python.$mod.$side.log
            t=$(now)
            run_bounded $bound "$log" "$dir" env TMPDIR="$dir" "$PY" -m test --tempdir "$dir" -v "$mod"
            rc=$?
            t=$(elapsed "$t")
            [ $side = native ] && tn=$(awk -v a=$tn -v b=$t 'BEGIN{print a+b}') || tm=$(awk -v a=$tm -v b=$t 'BEGIN{print a+b}')
            py_results "$log" >"$log.results"
            printf '  %-15s %-6s rc=%-3s %6ss  ok=%-4s fail=%-3s error=%-3s skipped=%s\n' "$mod" $side $rc "$t" \
                "$(grep -c '^ok ' "$log.results")" "$(grep -c '^FAIL ' "$log.results")" \
                "$(grep -c '^ERROR ' "$log.results")" "$(grep -c '^skipped ' "$log.results")" | tee -a "$REPORT"
            if [ $rc = 124 ]; then
                diff_found "$mod HANGS on the $side side (bound ${bound}s); last test started: $(grep -E ' \.\.\. ' "$log" | tail -1 | sed 's/ \.\.\. .*//')"
                [ $side = mount ] && umount_fs
            fi
        done
        # tests whose verdict differs
        local nat=$WORK/python.$mod.native.log mnt=$WORK/python.$mod.mount.log id vn vm
        while read -r id vn vm; do
            [ "$vn" = "$vm" ] && continue
            [ "$vm" = MISSING ] && grep -q TIMEOUT "$mnt" && continue   # not reached after a hang
            diff_found "$id: native=$vn mount=$vm"
            if [ "$vm" = FAIL ] || [ "$vm" = ERROR ]; then py_excerpt "$mnt" "$id" | tee -a "$REPORT"; fi
        done < <(join -j 2 -a 1 -a 2 -e MISSING -o 0,1.1,2.1 <(sort -k2 "$nat.results") <(sort -k2 "$mnt.results"))
    done
    umount_fs
    say "  python total: native ${tn}s, mount ${tm}s"
}

# ---------------------------------------------------------------- stress-ng
suite_stress() {
    say "== stress-ng --class filesystem"
    need_pkg stress-ng stress-ng || { skip_suite "no stress-ng"; return; }
    local all list t=5s bound=60
    all=$(stress-ng --class 'filesystem?' 2>&1 | sed -n "s/^class 'filesystem' stressors: //p")
    # left out: bind-mount, binderfs (need namespaces/binder), procfs (never touches the temp
    # path), verity (fs-verity: not on ext4 without the feature, never on FUSE)
    list=$(for s in $all; do case $s in bind-mount|binderfs|procfs|verity) ;; *) echo "$s" ;; esac; done)
    if [ "$QUICK" = 1 ]; then
        t=1s bound=30
        list="access chmod dentry dir fcntl getdent link open rename symlink utime xattr"
    fi
    local s side dir log rc rcn tt tn=0 tm=0
    for s in $list; do
        for side in native mount; do
            if [ $side = native ]; then dir=$WORK/stress.native/$s; else
                [ -n "$MNT" ] || mount_fs stress hash || return
                dir=$MNT/$s; fi
            mkdir -p "$dir"
            log=$WORK/stress.$s.$side.log
            tt=$(now)
            run_bounded $bound "$log" "$dir" stress-ng --"$s" 1 -t $t --temp-path "$dir" \
                --hdd-bytes 64M --iomix-bytes 64M --fallocate-bytes 64M --metrics-brief --verify
            rc=$?
            tt=$(elapsed "$tt")
            [ $side = native ] && { rcn=$rc; tn=$(awk -v a=$tn -v b=$tt 'BEGIN{print a+b}'); } || tm=$(awk -v a=$tm -v b=$tt 'BEGIN{print a+b}')
            if [ $rc = 124 ]; then
                diff_found "stress-ng $s HANGS on the $side side (bound ${bound}s)"
                [ $side = mount ] && umount_fs
            fi
        done
        printf '  %-12s native rc=%-3s mount rc=%s\n' "$s" "$rcn" "$rc" >>"$REPORT"
        if [ "$rcn" != "$rc" ] && [ "$rc" != 124 ]; then
            diff_found "stress-ng $s: native rc=$rcn, mount rc=$rc: $(grep -E 'fail|error|FAIL' "$log" | grep -v 'passed:' | head -3 | tr '\n' ' ')"
        fi
        # a stressor that runs natively but skips itself on the mount (an unsupported ioctl...)
        if grep -q 'skipping stressor' "$log" && ! grep -q 'skipping stressor' "$WORK/stress.$s.native.log"; then
            diff_found "stress-ng $s skips itself only on the mount: $(grep -m1 'skipping stressor' "$log" | sed 's/.*\] //')"
        fi
        rm -rf "$WORK/stress.native/$s"
    done
    umount_fs
    say "  stress-ng: $(echo $list | wc -w) stressors; native ${tn}s, mount ${tm}s"
}

# ---------------------------------------------------------------- dbench, fs_mark
suite_dbench() {
    say "== dbench"
    need_pkg dbench dbench || { skip_suite "no dbench"; return; }
    local t=20 side dir rc rcn tt
    [ "$QUICK" = 1 ] && t=5
    for side in native mount; do
        if [ $side = native ]; then dir=$WORK/dbench.native; else mount_fs dbench hash || return; dir=$MNT/d; fi
        mkdir -p "$dir"; tt=$(now)
        run_bounded $((t + 120)) "$WORK/dbench.$side.log" "$dir" dbench -D "$dir" -t $t -c /usr/share/dbench/client.txt 2
        rc=$?; tt=$(elapsed "$tt")
        say "  dbench $side: rc=$rc ${tt}s $(grep -E '^Throughput' "$WORK/dbench.$side.log")"
        [ $side = native ] && rcn=$rc
        [ $rc = 124 ] && diff_found "dbench HANGS on the $side side"
        [ $side = mount ] && umount_fs
    done
    [ "$rcn" = "$rc" ] || diff_found "dbench: native rc=$rcn, mount rc=$rc: $(grep -iE 'error|fail' "$WORK/dbench.mount.log" | head -3 | tr '\n' ' ')"
}
suite_fsmark() {
    say "== fs_mark"
    need_pkg fs_mark fsmark || { skip_suite "no fs_mark"; return; }
    local n=1000 side dir rc rcn tt
    [ "$QUICK" = 1 ] && n=200
    for side in native mount; do
        if [ $side = native ]; then dir=$WORK/fsmark.native; else mount_fs fsmark hash || return; dir=$MNT/f; fi
        mkdir -p "$dir"; tt=$(now)
        # fs_mark takes directory names under 40 bytes only: a short symlink to the real one
        local short=/tmp/fsm.$$.$side
        ln -sfn "$dir" "$short"
        run_bounded 300 "$WORK/fsmark.$side.log" "$dir" fs_mark -d "$short/" -n $n -s 4096 -t 2 -D 4 -S 1 -L 2
        rc=$?; tt=$(elapsed "$tt")
        rm -f "$short"
        say "  fs_mark $side: rc=$rc ${tt}s"
        [ $side = native ] && rcn=$rc
        [ $rc = 124 ] && diff_found "fs_mark HANGS on the $side side"
        [ $side = mount ] && umount_fs
    done
    [ "$rcn" = "$rc" ] || diff_found "fs_mark: native rc=$rcn, mount rc=$rc: $(grep -iE 'error|fail' "$WORK/fsmark.mount.log" | head -3 | tr '\n' ' ')"
}

# ---------------------------------------------------------------- real programs
# manifest DIR: one line per entry: path, type, mode, owner, group, size, link target,
# mtime (seconds), content digest, xattrs
manifest() {
    # (fields split on \x1f: a run of tabs would collapse an empty link-target field)
    (cd "$1" && find . -mindepth 1 -printf '%P\037%y\037%m\037%U\037%G\037%s\037%l\037%TY%Tm%Td%TH%TM%TS\n' | sort |
        while IFS=$'\037' read -r p y m u g s l mt; do
            [ "$y" = d ] && s=-
            local h=-
            [ "$y" = f ] && h=$(md5sum <"$p" | cut -c1-12)
            # directory mtimes change as the program works: not compared
            [ "$y" = d ] && mt=-
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$y" "$m" "$u" "$g" "$s" "$l" "${mt%.*}" "$h" \
                "$(getfattr -h -d -m - --absolute-names "$p" 2>/dev/null | grep -v '^#' | sort | tr '\n' ' ')"
        done)
}
make_tree() { # a source tree with the awkward kinds of entry
    local d=$1
    mkdir -p "$d/sub/deeper" "$d/empty" "$d/ümlaut dir"
    cp -a /usr/share/common-licenses "$d/licenses" 2>/dev/null || true
    head -c 3000000 /dev/urandom >"$d/big.bin"
    printf 'x' >"$d/sub/one"; : >"$d/zero"
    truncate -s 10M "$d/sparse"; printf 'end' >>"$d/sparse"
    ln -s sub/one "$d/link"; ln -s /nonexistent "$d/dangling"; ln -s ../sub "$d/sub/deeper/up"
    ln "$d/sub/one" "$d/hard"
    mkfifo "$d/fifo"
    chmod 4755 "$d/zero"; chmod 0600 "$d/sub/one"; chmod 1777 "$d/empty"; chmod 0000 "$d/big.bin"
    chown 1234:5678 "$d/sub/deeper"; chown -h 4321:8765 "$d/link"
    setfattr -n user.color -v blue "$d/sub/one" 2>/dev/null || true
    touch -h -d '2001-02-03 04:05:06' "$d/link" "$d/sub/one" "$d/zero"
}
suite_programs() {
    say "== real programs (tar, cp -a, rsync, sqlite3, git)"
    need_pkg getfattr attr || true
    need_pkg sqlite3 sqlite3 || true
    need_pkg rsync rsync || true
    local rows=2000 side base rc tt
    [ "$QUICK" = 1 ] && rows=300
    local src=$WORK/programs.src
    make_tree "$src"
    for side in native mount; do
        if [ $side = native ]; then base=$WORK/programs.native; mkdir -p "$base"; else mount_fs programs full || return; base=$MNT; fi
        tt=$(now)
        cat >"$WORK/programs.$side.sh" <<EOF
set -x
export GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e HOME=$base
cd $base
status() { echo "STEP \$1 rc=\$2"; }
tar -C $src --xattrs -cpf src.tar .; status tar-c-from-native \$?
mkdir tarx && tar --xattrs --xattrs-include='*' -C tarx -xpf src.tar; status tar-x \$?
tar --xattrs -C tarx -cpf tarx.tar . ; status tar-c \$?
mkdir tarx2 && tar --xattrs --xattrs-include='*' -C tarx2 -xpf tarx.tar; status tar-x-of-tar-c \$?
cp -a $src cpa; status cp-a-in \$?
cp -a cpa cpa2; status cp-a-within \$?
mkdir -p cpaout; cp -a cpa2 cpaout/; status cp-a-out \$?
if command -v rsync >/dev/null; then rsync -aHAX $src/ rs/; status rsync-in \$?; rsync -aHAX rs/ rs2/; status rsync-within \$?; fi
sqlite3 db.sqlite 'create table t(a integer primary key, b text); pragma journal_mode=wal;' >/dev/null; status sqlite-create \$?
for i in \$(seq 1 $rows); do echo "insert into t(b) values('row \$i \$(printf %0200d \$i)');"; done | sqlite3 db.sqlite; status sqlite-insert \$?
sqlite3 db.sqlite 'pragma wal_checkpoint(truncate); pragma journal_mode=delete;' >/dev/null; status sqlite-checkpoint \$?
sqlite3 db.sqlite 'begin; update t set b = upper(b) where a % 3 = 0; delete from t where a % 7 = 0; commit; vacuum;'; status sqlite-update-vacuum \$?
sqlite3 db.sqlite 'pragma integrity_check; select count(*), sum(length(b)), max(a) from t;' > sqlite.out; status sqlite-check \$?
git init -q repo && cd repo && cp -a $src/sub $src/licenses . && git add -A && git commit -qm one; status git-commit \$?
echo more >> one2 && git add one2 && git commit -qm two && git gc -q && git fsck --full; status git-gc-fsck \$?
git log --format='%H %s' > ../git.log; git status --porcelain > ../git.status; status git-log \$?
cd ..; git clone -q repo clone && (cd clone && git log --format=%H | head -1) >> git.log; status git-clone \$?
EOF
        run_bounded 300 "$WORK/programs.$side.log" "$base" bash "$WORK/programs.$side.sh"
        rc=$?; tt=$(elapsed "$tt")
        [ $rc = 124 ] && diff_found "programs HANG on the $side side: last step $(grep '^STEP' "$WORK/programs.$side.log" | tail -1)"
        grep '^STEP' "$WORK/programs.$side.log" >"$WORK/programs.$side.steps"
        # manifests of the results (git's .git, clone and repo mtimes vary from run to run)
        local d
        for d in tarx tarx2 cpa cpa2 cpaout/cpa2 rs rs2; do
            [ -d "$base/$d" ] && manifest "$base/$d" >"$WORK/programs.$side.$(echo $d | tr / _).manifest"
        done
        cp "$base/sqlite.out" "$base/git.log" "$base/git.status" "$WORK/" 2>/dev/null
        for f in sqlite.out git.log git.status; do cp "$base/$f" "$WORK/programs.$side.$f" 2>/dev/null; done
        say "  programs $side: rc=$rc ${tt}s"
        [ $side = mount ] && umount_fs
    done
    local f
    if ! diff "$WORK/programs.native.steps" "$WORK/programs.mount.steps" >/dev/null; then
        diff_found "program steps differ: $(diff "$WORK/programs.native.steps" "$WORK/programs.mount.steps" | grep '^>' | tr '\n' ' ')"
    fi
    for f in "$WORK"/programs.native.*.manifest "$WORK"/programs.native.sqlite.out "$WORK"/programs.native.git.log "$WORK"/programs.native.git.status; do
        local g=${f/programs.native./programs.mount.}
        [ -e "$f" ] || continue
        if ! diff "$f" "$g" >"$g.diff" 2>&1; then
            diff_found "$(basename "$g") differs from native:"
            head -12 "$g.diff" | sed 's/^/      /' | tee -a "$REPORT"
        fi
    done
}

say "fs-conformance: $([ $QUICK = 1 ] && echo quick || echo full) run, $($R --version), mount mode $([ $FAST = 1 ] && echo --fast || echo fidelity), work $WORK"
for s in ${SUITES//,/ }; do
    t=$(now)
    case $s in
        python) suite_python ;;
        stress) suite_stress ;;
        dbench) suite_dbench ;;
        fsmark) suite_fsmark ;;
        programs) suite_programs ;;
    esac
    say "  ($s took $(elapsed "$t")s in all)"
done
say "== $TRACES traces checked, $RECORDS records; $DIFFS differences; $(( $(date +%s) - T0 ))s"
say "report: $REPORT"
[ $DIFFS = 0 ]

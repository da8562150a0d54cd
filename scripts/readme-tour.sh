#!/usr/bin/env bash
# Runs every command of the README's "A 60-second tour" exactly as written, one after the
# other in one scratch directory, with the small real workloads the tour names: archive.tar
# (a C project src/ with its Makefile), job.fio, data/ with the script ./job that changes it,
# a running process $PID, the cgroup /sys/fs/cgroup/system.slice/nginx.service with a process
# in it, ext4, xfs and tmpfs file systems at /mnt/ext4, /mnt/xfs and /mnt/tmpfs, db.sqlite and
# ins.sql, and any.ds (a third-party DataSeries file). It all happens in a private mount
# namespace, so the mounts end with it; HOME is the scratch directory (~/.trace.key).
#
# Each command must exit 0 (`reanimator diff` and `replay --compare`: 0 or 1, "same" or
# "differs"); a command whose
# comment says Ctrl-C is sent SIGINT after 3 s and must then exit 0. Beyond exit statuses it
# checks what the tour promises: every replay ends "verified", the fs dump finds the compiler,
# fio reports no error.
#
# Usage: scripts/readme-tour.sh [--quick]   (needs root; --quick is accepted for test.sh and
# changes nothing: the tour takes about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
if [ "${1:-}" != --inner ]; then
    [ "$(id -u)" -eq 0 ] || { echo "readme-tour: needs root (FUSE, eBPF, loop devices)"; exit 1; }
    cargo build --release --locked -q -p reanimator
    exec unshare --mount --propagation private bash "$0" --inner
fi

bin="${CARGO_TARGET_DIR:-$repo/target}/release"
[ -x "$bin/reanimator" ] || { echo "readme-tour: $bin/reanimator is not built"; exit 1; }
export PATH="$bin:$PATH"
work=$(mktemp -d /tmp/reanimator-tour.XXXXXX)
export HOME="$work/home"
mkdir -p "$HOME"
pids=()
cgroup=/sys/fs/cgroup/system.slice/nginx.service
made_cgroup=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    mountpoint -q /mnt/t && reanimator fs umount --force /mnt/t >/dev/null 2>&1 || true
    for c in "${made_cgroup[@]}"; do rmdir "$c" 2>/dev/null || true; done
    for m in /mnt/ext4 /mnt/xfs /mnt/tmpfs; do umount "$m" 2>/dev/null || true; done
    rm -rf --one-file-system "$work"
}
trap cleanup EXIT

# --- the workloads the tour names --------------------------------------------------------
cd "$work"
mkdir src
printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' > src/hello.c
printf 'hello: hello.c\n\tcc -O1 -o hello hello.c\n' > src/Makefile
tar cf archive.tar src && rm -r src
cat > job.fio <<'EOF'
[randwrite]
filename=fio.dat
size=8m
rw=randwrite
bs=4k
ioengine=psync
fsync=64
EOF
mkdir data
echo hello > data/notes.txt
cat > job <<'EOF'
#!/bin/sh
echo more >> "$1/notes.txt"
mkdir -p "$1/out"
cp "$1/notes.txt" "$1/out/copy"
rm -f "$1/gone"
EOF
chmod +x job
sqlite3 db.sqlite 'create table t (k integer primary key, v text);'
printf 'begin;\n' > ins.sql
for i in $(seq 1 200); do printf "insert into t (v) values ('row %d');\n" "$i" >> ins.sql; done
printf 'commit;\n' >> ins.sql
any=/work/shared/testdata/dataseries/dataseries-check-data/nfs-1.set-0.ip.ds
[ -f "$repo/../shared/testdata/dataseries/dataseries-check-data/nfs-1.set-0.ip.ds" ] &&
    any="$repo/../shared/testdata/dataseries/dataseries-check-data/nfs-1.set-0.ip.ds"
if [ -f "$any" ]; then cp "$any" any.ds; else cp "$repo/testdata/example.ds" any.ds; fi
# A process to attach to.
sh -c 'while :; do cat /etc/hostname > /dev/null; sleep 0.2; done' &
pids+=($!)
export PID=$!
# The cgroup: cgroup2 mounted where the tour expects it (a hybrid host mounts v1 there), a
# process in it.
if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
    mount -t cgroup2 none /sys/fs/cgroup
fi
for c in /sys/fs/cgroup/system.slice "$cgroup"; do
    [ -d "$c" ] || { mkdir "$c"; made_cgroup=("$c" "${made_cgroup[@]}"); }
done
sh -c "echo \$\$ > $cgroup/cgroup.procs; while :; do cat /etc/hostname > /dev/null; sleep 0.2; done" &
pids+=($!)
# File systems for --compare (the namespace's own /mnt).
mount -t tmpfs tmpfs /mnt
mkdir -p /mnt/ext4 /mnt/xfs /mnt/tmpfs /mnt/scratch
truncate -s 64M "$work/ext4.img" && mkfs.ext4 -q -F "$work/ext4.img"
truncate -s 320M "$work/xfs.img" && mkfs.xfs -q -f "$work/xfs.img"
mount -o loop "$work/ext4.img" /mnt/ext4
mount -o loop "$work/xfs.img" /mnt/xfs
mount -t tmpfs tmpfs /mnt/tmpfs
mkdir /mnt/ext4/r /mnt/xfs/r /mnt/tmpfs/r

# --- the tour, line by line ----------------------------------------------------------------
mapfile -t lines < <(awk '
    /^## A 60-second tour/ { tour = 1 }
    tour && /^```sh/ { on = 1; next }
    on && /^```/ { exit }
    on && !/^[[:space:]]*#/ { print }' "$repo/README.md")
[ "${#lines[@]}" -ge 40 ] || { echo "readme-tour: found only ${#lines[@]} commands in README.md"; exit 1; }
n=0
failed=0
for line in "${lines[@]}"; do
    n=$((n + 1))
    cmd=$(printf '%s' "$line" | sed -E 's/[[:space:]]{2,}#.*$//')
    comment=$(printf '%s' "$line" | sed -nE 's/^.*[[:space:]]{2,}#(.*)$/\1/p')
    out="$work/out.$n"
    t0=$(date +%s%N)
    set +e
    if [[ "$comment" == *Ctrl-C* ]]; then
        bash -c "exec $cmd" > "$out" 2>&1 &
        p=$!
        sleep 3
        kill -INT "$p"
        wait "$p"
        st=$?
    else
        timeout 300 bash -o pipefail -c "$cmd" > "$out" 2>&1
        st=$?
    fi
    set -e
    ms=$((($(date +%s%N) - t0) / 1000000))
    secs="$((ms / 1000)).$((ms % 1000 / 100))"
    ok=1
    case "$cmd" in
        # Exit 1 is a result for these: the trees differ, the roots differ (cp reflinks on
        # xfs and copies elsewhere).
        "reanimator diff "* | *--compare*) [ "$st" -le 1 ] || ok=0 ;;
        *) [ "$st" -eq 0 ] || ok=0 ;;
    esac
    why=""
    if [ "$ok" = 1 ]; then
        case "$cmd" in
            *"reanimator replay "*--compare*)
                grep -q "^trees: " "$out" || { ok=0; why="no comparison of the trees"; } ;;
            *"reanimator replay "*)
                grep -q "verified: every call matched" "$out" || { ok=0; why="not verified"; } ;;
            *"comm == cc1"*) [ -s "$out" ] || { ok=0; why="matched nothing"; } ;;
            "fio "*) grep -q "err= 0" "$out" || { ok=0; why="fio reported an error"; } ;;
        esac
    else
        why="exit status $st"
    fi
    if [ "$ok" = 1 ]; then
        printf 'ok   %2d  %5ss  %s\n' "$n" "$secs" "$cmd"
    else
        failed=$((failed + 1))
        printf 'FAIL %2d  %5ss  %s  (%s)\n' "$n" "$secs" "$cmd" "$why"
        tail -n 15 "$out" | sed 's/^/        /'
    fi
done
if [ "$failed" -gt 0 ]; then
    echo "readme-tour: $failed of $n commands failed"
    exit 1
fi
echo "readme-tour: all $n commands ran as written"


use builtin;
use str;

set edit:completion:arg-completer[reanimator] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'reanimator'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'reanimator'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand info 'Summarize a trace or any DataSeries file (extent types, record counts, sizes, compression, time span, recording facts, losses) or a compiled plan (version, source trace, calls, data and deduplication, every checksum verified)'
            cand record 'Run a command and record its system calls with full data buffers into a trace'
            cand dump 'Print the records of a trace (strace-like lines in unique_id order by default) or of any DataSeries file'
            cand replay 'Replay a trace into a sandboxed root directory, verifying return values, returned data and (with a recorded snapshot) the final file tree'
            cand compile 'Compile a trace into a replay plan (Replayfs): calls placed and gated once, data buffers deduplicated in a memory-mapped region; `replay PLAN` takes it like a trace'
            cand snapshot 'Write the logical state of a directory tree (names, kinds, sizes, modes, owners, content digests, symlink targets, xattrs, hard links) as a manifest'
            cand diff 'Compare two directory trees'' logical state; each a directory, a manifest or a trace''s snapshot. Exit status 0 equal, 1 different, 2 trouble'
            cand fs 'Tracing file system (Tracefs on FUSE): mount a traced view of a directory and record every file-system operation of every process that uses it'
            cand profile 'Latency profiles (FSprof): log2 histograms of every operation''s latency per interval, from a trace or live; text (bcc''s layout), table, JSON Lines, SVG heat maps; `merge`'
            cand stats 'strace -c''s summary of traces (calls, errors, time per call), or tables per call class, process, thread, program, file, directory or errno with latency quantiles, bytes read and written, I/O sizes and the busiest files; one streaming pass in bounded memory'
            cand export 'Write traces in other tools'' formats: a Parquet or CSV dataset of several traces (for DuckDB, Spark, pandas; SNIA IOTTA), a timeline (Perfetto''s trace-event JSON, CTF for babeltrace2), or a trace''s file I/O as fio''s iolog (`fio --read_iolog`)'
            cand collect 'Receive traces streamed by `record -o tcp://` and `fs mount -o tcp://`, each into its own file as it arrives; `--join` puts a cut stream and its sender''s spill file together'
            cand keygen 'Create a key file (256 random bits, mode 0600) for sealed and encrypted traces and for anonymization'
            cand verify 'Check a sealed trace (`record --seal`): say which extent was modified, dropped, duplicated, reordered or inserted, or where the trace was cut. Exit 0 intact, 1 tampered, 2 trouble'
            cand anonymize 'Rewrite a trace with paths, ids, names and data replaced by keyed pseudonyms, consistently, so that it still replays to a tree of the same shape; `--reverse` restores the fields stored reversibly'
            cand select 'Write the calls of a trace selected by --where, --time and --pid/--tid (with descendants) as a trace of their own: facts kept, snapshots and losses kept or said'
            cand split 'Cut a trace into parts by process, time window or size; the parts together hold every call once'
            cand merge 'Join traces of several hosts or runs into one, interleaved by time, ids remapped so that none collide, each call''s host known by its pid''s range'
            cand doctor 'Say which backends and features work on this machine and, for each that does not, why and what to do (eBPF and BTF, capabilities, ptrace_scope, perf_event_paranoid, FUSE, cgroup v2, ring buffer memory, free space)'
            cand completions 'Write shell completions for bash, zsh, fish, elvish or powershell on stdout'
            cand man 'Write a man page for reanimator and each of its subcommands into a directory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reanimator;info'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand --json 'Print one JSON object instead of the table'
            cand --quick 'Read extent headers only: skips checksum verification and the time span (fast on huge files). For a plan: its chunk headers only, the calls and data not read back'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;record'= {
            cand --key 'With `-o tcp://`: the host key (`reanimator keygen --host NAME --from MASTER`) this sender authenticates to the collector with; the trace is then sealed with it (docs/NETWORK.md)'
            cand -o 'The trace file to write (replaced if it exists; created mode 0600, readable by you alone, whatever the umask: it holds every byte the command read), or tcp://HOST:PORT[/LABEL] to stream it to `reanimator collect` (see --spill; with the global `--key HOSTKEY` the sender authenticates and the trace is sealed with that host key, docs/NETWORK.md), or `-`: stream it to standard output, for a reader that takes `-` (`reanimator record -o - -- make | reanimator dump -`); what the command prints on its standard output then goes to standard error'
            cand --output 'The trace file to write (replaced if it exists; created mode 0600, readable by you alone, whatever the umask: it holds every byte the command read), or tcp://HOST:PORT[/LABEL] to stream it to `reanimator collect` (see --spill; with the global `--key HOSTKEY` the sender authenticates and the trace is sealed with that host key, docs/NETWORK.md), or `-`: stream it to standard output, for a reader that takes `-` (`reanimator record -o - -- make | reanimator dump -`); what the command prints on its standard output then goes to standard error'
            cand --backend 'Capture backend'
            cand --data 'How much of each data buffer to keep: `full` (every byte), `hash` (length and BLAKE3 digest: enough to verify a replay''s data), `none` (not read: lengths only); paths, struct results and argv are kept in full whatever it says. Per direction: `write=LEVEL,read=LEVEL` (an omitted direction is `full`), data the command writes (write, pwritev, sendmsg, io_uring writes, kernel-side copies, mmap pages written) apart from data read into it (read, recvmsg, getxattr, io_uring reads, mmap pages read). E.g. `--data write=full,read=hash`: a replay has every byte it must write and checks what it reads by digest, in a trace smaller by the data read'
            cand --syscalls 'Calls to capture: `storage` (files, descriptors, memory maps, processes, sockets), `all`, or strace''s `-e trace=` list: names (`openat,pwrite64`; kernel, trace and 32-bit names such as `_llseek`), strace''s classes (`%file`, `%desc`, `%network`, `%memory`, `%process`, `%signal`, `%ipc`, `%creds`, `%clock`, `%stat`, `%%stat`, `%statfs`, ...), a leading `!` for every call but those (`!%memory`). Process lifecycle calls are always captured; delivered signals (`signal_deliver`, dump''s `--- SIGCHLD {...} ---`) too, unless a `!` list leaves them out (`!%signal`)'
            cand --cpu 'Where the command runs relative to the tracer (ptrace backend; ignored with -p and by the ebpf backend, which has no tracer hand-offs)'
            cand --loss 'What the ebpf backend does when the command produces faster than the trace is written'
            cand --ring-size 'Size of the ebpf backend''s ring buffer (a power of two from 1M to 1G; K, M, G suffixes). Default: 64M, or 16M with `--data none` (call records only: ~200 bytes per call)'
            cand --io-uring '`deny`: every io_uring_setup fails with ENOSYS (recorded so, the trace''s `io_uring_denied` fact counting them), so that programs such as fio fall back to system calls or stop with a clear error; ptrace backend (`auto` then picks it). `record` (the default): requests are recorded; the ptrace backend cannot see SQPOLL rings and says so'
            cand --cgroup 'Record every process in this cgroup (v2 directory, e.g. /sys/fs/cgroup/system.slice/foo.service) and below, until Ctrl-C (ebpf backend)'
            cand --compress 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)'
            cand --seal 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file'
            cand --encrypt 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption'
            cand --spill 'With `-o tcp://HOST:PORT`: when the collector fails (connection lost, collector killed, no acknowledgement for 30 s), go on writing here: a trace holding everything the collector did not acknowledge (`reanimator collect --join` puts the two parts together). Without it such a failure stops the recording'
            cand --net-buffer 'With `-o tcp://`: bytes sent and not yet acknowledged by the collector, at most (K, M, G suffixes), or one extent if that is larger; the trace writer waits beyond (backpressure)'
            cand --snapshot 'Store DIR''s state (and its file contents) in the trace before the command starts, and its state again after it ends (repeatable)'
            cand --print 'Also print each call as it completes, as `reanimator dump` shows it (strace-like lines, buffers cut at --print-strsize bytes), on stderr or into FILE (created mode 0600: it quotes traced data). The lines are printed by a thread of their own that the recording never waits for: when they cannot be printed as fast as calls are recorded (a slow terminal), lines are left out and a line says how many; the trace has every call'
            cand --print-strsize 'With --print: show at most this many bytes of each buffer (0: all), as dump''s -s'
            cand -p 'Attach to this running process (every thread) instead of starting a command; Ctrl-C detaches and leaves it running. Its open descriptors are recorded first as synthetic `openat` records (trace info `synthetic_ids` says how many)'
            cand --pid 'Attach to this running process (every thread) instead of starting a command; Ctrl-C detaches and leaves it running. Its open descriptors are recorded first as synthetic `openat` records (trace info `synthetic_ids` says how many)'
            cand --mmap-private 'Also record data read through private file mappings (`mmappread` page records, ebpf backend): files a program maps MAP_PRIVATE to read them, as git does its pack files. Program images are left out: executables and libraries (every mapping of a file that was mapped executable, or by the dynamic loader), their read-only data included. Writes to private mappings never reach the file and are never recorded. Shared file mappings are always recorded. The ptrace backend records no page records at all'
            cand -q 'Don''t print the summary line'
            cand --quiet 'Don''t print the summary line'
            cand --json 'Print the summary as JSON on stdout when the recording ends (calls, data bytes, processes, threads, lost calls, throttle stops, exit status, elapsed seconds, the trace''s path and size or where a network trace went, snapshots), instead of the line on stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;dump'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand -f 'Output format'
            cand --format 'Output format'
            cand --type 'Only these calls / extent types (comma-separated or repeated), as strace''s `-e trace=` names them: trace names (`pread`), kernel names and aliases (`pread64`, `_llseek`), strace''s classes (`%file`, `%desc`, `%network`, `%process`, `%memory`, `%signal`, `%ipc`, `%creds`, `%clock`, `%stat`, `%lstat`, `%fstat`, `%%stat`, `%statfs`, `%fstatfs`, `%%statfs`), a leading `!` for every call but those; or full extent type names. A name that is no call is an error'
            cand -e 'strace''s spelling of --type: `-e trace=%file,read` (or `-e %file,read`)'
            cand -w 'Only records matching this expression, e.g. `call == openat && errno != 0`, `path ~ "/etc/**"`, `fd == 3 and ret > 0`, `call in %file`, `call not in %network` (call names as --type takes them). Fields: unique_id, time_called, time_returned, duration, pid, tid, uid, gid, call, ret, errno, errno_name, path (the file the call acts on: what a descriptor it returned or took refers to, or its path argument), fd_path and fd_path2 (what its descriptor arguments refer to), size, fd, signal (a delivered signal''s name: `signal == SIGCHLD`; `--type signal_deliver` selects them all), every argument by man-page name and by trace field name'
            cand --where 'Only records matching this expression, e.g. `call == openat && errno != 0`, `path ~ "/etc/**"`, `fd == 3 and ret > 0`, `call in %file`, `call not in %network` (call names as --type takes them). Fields: unique_id, time_called, time_returned, duration, pid, tid, uid, gid, call, ret, errno, errno_name, path (the file the call acts on: what a descriptor it returned or took refers to, or its path argument), fd_path and fd_path2 (what its descriptor arguments refer to), size, fd, signal (a delivered signal''s name: `signal == SIGCHLD`; `--type signal_deliver` selects them all), every argument by man-page name and by trace field name'
            cand -s 'Show at most this many bytes of each buffer in text output (0 = everything)'
            cand --strsize 'Show at most this many bytes of each buffer in text output (0 = everything)'
            cand -n 'Stop after this many records'
            cand --limit 'Stop after this many records'
            cand -X 'How flags and named constants are shown (strace''s `-X`): `abbrev` (names: `O_RDONLY|O_CLOEXEC`), `raw` (numbers: `0x80000`), `verbose` (both)'
            cand --follow 'Read a trace while it is being written (by `record` or `fs mount`): print its calls as they are written, in order, and end when the recording ends (the trace''s trailer is written, or its writer is gone). A trace not there yet is waited for up to 10 s. Ctrl-C ends it at once'
            cand -t 'Times as the wall clock (strace''s `-t`: `08:26:40`; `-tt`: with microseconds; `-ttt`: seconds.microseconds since the epoch). Without it, seconds.nanoseconds since the epoch'
            cand -r 'Times as the seconds since the previous record shown (strace''s `-r`)'
            cand --relative 'Times as the seconds since the previous record shown (strace''s `-r`)'
            cand -T 'Show the time spent in each call, `<0.000012>` (strace''s `-T`; on unless --no-duration)'
            cand --duration 'Show the time spent in each call, `<0.000012>` (strace''s `-T`; on unless --no-duration)'
            cand --no-duration 'Leave out the time spent in each call'
            cand -x 'Strings holding a byte that is not printable ASCII in hexadecimal (`-x`, strace''s); every string in hexadecimal (`-xx`)'
            cand --no-decode-fds 'Do not follow descriptors: text shows `read(3, ...)` instead of strace `-y`''s `read(3</srv/db/shop.db>, ...)`, JSON lines and CSV have no `fd_path`, and `--where ''path ~ ...''` sees only the calls that name a path'
            cand --raw 'Print the DataSeries records extent by extent (file order), even for traces'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;replay'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand -w 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)'
            cand --where 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)'
            cand --time 'Only the calls made in this time range, `A..B` (from A up to, not including, B; either side may be left out): durations from the trace''s first call (`2s..5.5s`, `500ms..`, `..1m`; units ns, us, ms, s, m, h; a bare number is seconds), instants in RFC 3339 (`2026-12-02T06:00:00Z`) or seconds since the epoch after `@` (`@1764655200.5`)'
            cand --pid 'Only the calls of these processes and of the processes they created, as the trace''s clone, fork and vfork calls show (comma-separated or repeated)'
            cand --tid 'Only the calls of these threads and of the threads and processes they created'
            cand --root 'Directory to replay into; must exist and be empty unless --force or --clean'
            cand --compare 'Differential replay: replay the trace again into DIR (repeatable; roots on different file systems) and report, call by call, where the roots'' outcomes differ from each other and from the recording, their final trees'' differences and each root''s elapsed time (see below)'
            cand --init 'Recreate the initial state under --root before replaying (`--init` alone = auto)'
            cand --init-unknown 'What --init puts in the bytes of files that the trace never showed (a file a stat showed 1 GB long, of which 4 KiB were read: 1 GB less 4 KiB): holes (`sparse`) or the --fill data written out (`fill`: costs the disk space and the time)'
            cand --verify 'What to verify'
            cand --on-mismatch 'What to do at a mismatch'
            cand --timing '`afap` (as fast as possible), `original` (recorded pace) or `scale=K` (recorded time offsets times K: 0.5 = twice as fast)'
            cand --timing-cpus 'Where a --timing replay''s threads run: `split` (with two CPUs or more, the workers and the timer on all but the last eighth of the CPUs this process may use, the dispatcher and the read-ahead on the rest: the load balancer otherwise moves them onto a spinning worker''s CPU, and due calls wait) or `shared` (wherever the kernel puts them)'
            cand --fill 'Data for writes the trace holds no bytes for (traces recorded with --data hash|none)'
            cand --mmap 'How memory-mapped file I/O (mmap, mmappread/mmappwrite records) is replayed'
            cand --reads 'Which reads of files to replay (the report says which ran): all, only those that missed the page cache when recorded, or none'
            cand --uring 'How io_uring requests recorded by the eBPF recorder (`io_uring_op` records) are replayed and verified (docs/REPLAY.md, "io_uring requests")'
            cand --prefetch 'How far the trace is read ahead, on a thread of its own: at most N calls and BYTES of data, whichever is reached first, in batches of 256 calls or 1 MiB (the default, 4096,16M: 16 batches); the report gives the horizon used and whether replay ever waited for it'
            cand --stall-timeout 'Seconds a call may block (pipe read, lock wait) before it is reported as stalled'
            cand --report 'Write the full report as JSON to this file'
            cand --log 'Where -v/-vv lines go (default: stderr)'
            cand --max-mismatches 'How many mismatches the report lists (all are counted)'
            cand --force 'Replay into a root that is not empty: its files stay, and the replay''s mix with them (where they differ from the recorded start state, verification can fail; --clean starts afresh instead)'
            cand --clean 'Empty the root (and each --compare root) first: everything beneath it is removed, never crossing into another file system. Only for a root an earlier replay used (replay remembers its roots, by device and inode, in ~/.local/state/reanimator/replay-roots); any other non-empty directory is refused'
            cand --allow-special 'Let --init create device nodes, setuid/setgid files and security.* xattrs (file capabilities) as the trace recorded them, and replayed mknod calls create device nodes; by default each becomes a harmless placeholder (an empty regular file, the mode without setuid/setgid, no xattr) listed in the report''s initial-state notes or warnings'
            cand --json 'Print the report as JSON on stdout instead of the table'
            cand -v '-v: log each mismatch; -vv: log every replayed call (to --log, or stderr)'
            cand --verbose '-v: log each mismatch; -vv: log every replayed call (to --log, or stderr)'
            cand -q 'No progress bar, no table (exit status and --report only)'
            cand --quiet 'No progress bar, no table (exit status and --report only)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;compile'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand -o 'Where to write the plan (mode 0600: it holds the trace''s data)'
            cand --output 'Where to write the plan (mode 0600: it holds the trace''s data)'
            cand -w 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)'
            cand --where 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)'
            cand --time 'Only the calls made in this time range, `A..B` (from A up to, not including, B; either side may be left out): durations from the trace''s first call (`2s..5.5s`, `500ms..`, `..1m`; units ns, us, ms, s, m, h; a bare number is seconds), instants in RFC 3339 (`2026-12-02T06:00:00Z`) or seconds since the epoch after `@` (`@1764655200.5`)'
            cand --pid 'Only the calls of these processes and of the processes they created, as the trace''s clone, fork and vfork calls show (comma-separated or repeated)'
            cand --tid 'Only the calls of these threads and of the threads and processes they created'
            cand --dedup-memory 'Memory for the deduplication index (e.g. 256M, the default): once it is full, new contents are stored without being indexed (the summary says when)'
            cand --compress 'How to store the data chunks: `none` (the default) keeps them as they are, and replay writes from the mapped plan without copying; `lz4` compresses each chunk (when that makes it smaller): a smaller plan for compressible data, and replay decompresses the chunks as it goes. Plans with lz4 chunks are format version 2'
            cand --json 'Print the summary as JSON on stdout'
            cand -q 'No progress bar, no summary'
            cand --quiet 'No progress bar, no summary'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;snapshot'= {
            cand -o 'The manifest to write (replaced if it exists, mode 0600; `-` for standard output)'
            cand --output 'The manifest to write (replaced if it exists, mode 0600; `-` for standard output)'
            cand --store 'Also copy each distinct file content into this directory, one file per BLAKE3 digest (OBJDIR/ab/abcd...): the manifest plus the store are a complete copy of the tree'
            cand --cross-mounts 'Enter directories on other file systems (default: record mount points, don''t enter)'
            cand -q 'Don''t print the summary line'
            cand --quiet 'Don''t print the summary line'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;diff'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand --ignore 'Leave out paths matching this glob, and everything beneath them (repeatable). Globs match the whole path relative to the tree: `*` within a name, `**` across `/`, `?`, `[a-z]`'
            cand --times 'Compare modification times too'
            cand --json 'Print JSON Lines (one object per difference, then a summary object)'
            cand -q 'Print nothing; the exit status tells (0 equal, 1 different)'
            cand --quiet 'Print nothing; the exit status tells (0 equal, 1 different)'
            cand --cross-mounts 'Enter directories on other file systems when scanning a directory'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;fs'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand mount 'Mount a tracing passthrough of LOWER at MOUNTPOINT and record every file-system operation into a trace. Runs in the foreground until Ctrl-C, SIGTERM, `reanimator fs umount MOUNTPOINT` or `umount MOUNTPOINT`; then finishes the trace'
            cand umount 'Unmount a tracing file system: the daemon flushes and closes its trace, and this waits for it. Exit status 0 when the trace was finished, 2 when the daemon''s trace is incomplete (a write failed) or it did not finish in time'
            cand ctl 'Control a live mount without unmounting it (Tracefs'' run-time control): pause and resume tracing, change the filter or the data mode, read the counters, flush the trace. Only the mount''s owner (who started its daemon) and root may. Each change is a `ctl` record in the trace at the moment it took effect'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reanimator;fs;mount'= {
            cand --key 'With `-o tcp://`: the host key (`reanimator keygen --host NAME --from MASTER`) the daemon authenticates to the collector with; the trace is then sealed with it (docs/NETWORK.md)'
            cand -o 'The trace file to write (not inside MOUNTPOINT; created mode 0600, readable by you alone, as is its .log), or tcp://HOST:PORT[/LABEL] to stream it to `reanimator collect` (with `--key HOSTKEY` the sender authenticates and the trace is sealed with that host key, docs/NETWORK.md)'
            cand --output 'The trace file to write (not inside MOUNTPOINT; created mode 0600, readable by you alone, as is its .log), or tcp://HOST:PORT[/LABEL] to stream it to `reanimator collect` (with `--key HOSTKEY` the sender authenticates and the trace is sealed with that host key, docs/NETWORK.md)'
            cand --data 'How much of each read''s and write''s data to keep: full, hash (length and digest) or none, both ways, or per direction `write=LEVEL,read=LEVEL` (an omitted direction is full), e.g. `--data write=full,read=none` keeps what was written (write, setxattr) and only the length of what was read (read, getxattr). Paths, names and link targets are always kept'
            cand --transport 'How requests reach the daemon: auto (io_uring where the kernel offers it, else /dev/fuse), uring, dev (default: REANIMATOR_FS_TRANSPORT, else auto; see Transport below)'
            cand --threads 'FUSE worker threads (default: 1, the CPU count with --fast; more than one on io_uring means one per CPU, each pinned to its CPU)'
            cand --filter 'Record only operations for which this expression holds (see Filters below)'
            cand --tracer 'One more tracer on this mount, with its own trace file, filter, data mode and driver (repeatable; see Tracers below): `out=FILE[,name=NAME][,filter=EXPR] [,data=full|hash|none][,driver=stream|aggregate:SECS|stream+aggregate:SECS]`'
            cand --tracer-name 'The name of the first tracer (the one -o, --filter, --data and --aggregate configure), for `fs ctl --tracer` (default: 1)'
            cand --aggregate 'Aggregate driver: per interval and operation, counts, bytes, errors and a log2 latency histogram, stored in the trace (`Reanimator::FsAggregate`). Default interval 1 s'
            cand --aggregate-by 'Group the aggregate by operation and this key as well'
            cand --aggregate-depth 'With --aggregate-by path: how many leading path components form a group'
            cand --profile 'Write the aggregate as a latency profile to FILE (JSON Lines, docs/PROFILE.md: FSprof''s stackable mode): per interval and operation, the daemon''s service time of every request (lower calls included) in log2 histograms. Turns on --aggregate=1 unless it is given. `reanimator profile FILE` shows it as text or pictures (--svg)'
            cand --compress 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)'
            cand --seal 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file'
            cand --encrypt 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption'
            cand --spill 'With `-o tcp://HOST:PORT`: when the collector fails (connection lost, collector killed, no acknowledgement for 30 s), go on writing here: a trace holding everything the collector did not acknowledge (`reanimator collect --join` puts the two parts together). Without it such a failure stops the recording'
            cand --net-buffer 'With `-o tcp://`: bytes sent and not yet acknowledged by the collector, at most (K, M, G suffixes), or one extent if that is larger; the trace writer waits beyond (backpressure)'
            cand --print 'Also print each operation recorded, as `reanimator dump` shows it, on stderr or into FILE (created mode 0600; not beneath LOWER or MOUNTPOINT), by a thread the file system never waits for: lines it cannot print in time are left out and counted (the trace has every operation)'
            cand --log 'With --daemon: the daemon''s log (default: the trace''s name with `.log`, or reanimator-fs-PID.log in the temporary directory for a tcp:// trace)'
            cand --fast 'Kernel caches on, several threads (see Modes below)'
            cand --fidelity 'Names cached 1 s, attributes asked every time (the default; see Modes below)'
            cand --every-lookup 'No kernel cache at all: every lookup of every path walk reaches the tracer; one worker thread (see Modes below)'
            cand --direct-io 'No page cache on the mount (FOPEN_DIRECT_IO): each read and write call a program makes reaches the tracer as one operation (split at 1 MiB), even rereads of cached data; shared mmaps still work. Slower for programs that reread'
            cand --print-aggregate 'Print each aggregate interval on stderr as it closes (bcc-style histograms)'
            cand --aggregate-only 'With --aggregate: record no per-operation records, only the aggregates'
            cand --daemon 'Detach once the mount is up (the daemon keeps running; stop it with `fs umount`)'
            cand --json 'When the mount ends, print its summary as JSON on stdout (operations, recorded, filtered out, untraced, elapsed seconds, the trace''s path and size, and whether it is complete), as `fs umount --json` does'
            cand --sync 'Each record is written to the trace file and made durable (fdatasync) before its operation is answered (Tracefs'' unbuffered mode, for debugging): a daemon killed or a machine that crashes loses no operation a program saw answered. Costs a disk flush per operation (docs/PERFORMANCE.md, bench/fs `reanimator-sync`). Needs `-o FILE`'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;fs;umount'= {
            cand --timeout 'How long to wait for the daemon to finish its trace (what it waits for is said every 5 s)'
            cand --force 'Cut the connection off (pending and future operations fail with ENOTCONN) and detach the mount: for a daemon that was killed or hangs. The trace keeps what was written'
            cand --json 'Print how the trace ended as JSON on stdout: `ended` (finished, incomplete, unknown, stale, forced), the daemon, and what it did (operations, recorded, filtered out, untraced, elapsed seconds, the trace''s path and size) when it said'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;fs;ctl'= {
            cand --tracer 'Address one tracer of the mount (its number, from 1, or its `name=`); default: all of them (`stats`: the first''s counters, then each''s as `tracer.N.*`). May also come right after MOUNTPOINT'
            cand --json 'Print the answer as JSON on stdout (`stats`: its counters, numbers as numbers); may also come last, after the command'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;fs;help'= {
            cand mount 'Mount a tracing passthrough of LOWER at MOUNTPOINT and record every file-system operation into a trace. Runs in the foreground until Ctrl-C, SIGTERM, `reanimator fs umount MOUNTPOINT` or `umount MOUNTPOINT`; then finishes the trace'
            cand umount 'Unmount a tracing file system: the daemon flushes and closes its trace, and this waits for it. Exit status 0 when the trace was finished, 2 when the daemon''s trace is incomplete (a write failed) or it did not finish in time'
            cand ctl 'Control a live mount without unmounting it (Tracefs'' run-time control): pause and resume tracing, change the filter or the data mode, read the counters, flush the trace. Only the mount''s owner (who started its daemon) and root may. Each change is a `ctl` record in the trace at the moment it took effect'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reanimator;fs;help;mount'= {
        }
        &'reanimator;fs;help;umount'= {
        }
        &'reanimator;fs;help;ctl'= {
        }
        &'reanimator;fs;help;help'= {
        }
        &'reanimator;profile'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand --interval 'Interval length in seconds, on a grid anchored at the Unix epoch (so profiles of different traces line up and merge). Default: one interval for a trace, 1 s live'
            cand --by 'Split histograms by call only, or also by process name, process id, path prefix'
            cand --depth 'Path components kept with `--by path` (live: directories below the file system''s root)'
            cand -w 'Only operations matching this expression (the `dump --where` language)'
            cand --where 'Only operations matching this expression (the `dump --where` language)'
            cand --svg 'Also draw latency heat maps into this SVG file'
            cand --svg-top 'Operations drawn in the SVG (largest total time first)'
            cand -o 'Write the text or JSON output here instead of stdout (mode 0600, as is the SVG)'
            cand --output 'Write the text or JSON output here instead of stdout (mode 0600, as is the SVG)'
            cand -p 'Live: profile this process'
            cand --pid 'Live: profile this process'
            cand --cgroup 'Live: profile the processes of this cgroup'
            cand --duration 'Live: stop after this many seconds'
            cand --layers 'Live: the layers to probe, comma-separated: syscall (the default), class (system calls summed by I/O class), block, fuse, ext4, writeback, cache, or all'
            cand --map-size 'Live: memory for the kernel''s histograms (e.g. 16M, the default); a key that does not fit is counted and reported, never dropped silently'
            cand --weight 'Rows, bars and heat maps show calls per bucket (count) or the time they took (time: count x latency, FSprof''s delay-weighted view)'
            cand --buckets 'Buckets: log2 (the default: 2^(k-1) <= v < 2^k), log10, or linear:WIDTH (WIDTH in the profile''s unit, or with a suffix: 100us, 4k)'
            cand --sample 'Count each call with probability 1/N (one in N per thread on average) and scale the counts by N (stated in the header and the JSON). Live: the system-call layer (and class) only'
            cand --value 'Histograms of a parameter instead of latency, from traces or live: size (bytes a read or write moved), offset (its file offset), seek-distance (bytes from where the previous read or write of the file ended), queue-depth (reads, writes, syncs and async calls of the target in flight when the call began, itself included)'
            cand --correlate 'Correlate two keys over the intervals (`layer:op[@group],layer:op[@group]`, e.g. `syscall:read,syscall:fsync`), or `top` / `top:N` for the most strongly correlated pairs. Prints the coefficients and the aligned series instead of the histograms'
            cand --listen 'Live: serve the profile''s cumulative histograms as Prometheus metrics at http://ADDR/metrics (loopback addresses only: OpenMetrics or Prometheus text, and the protobuf format that carries native histograms)'
            cand --json 'JSON Lines (docs/PROFILE.md) instead of text'
            cand --table 'One line per operation instead of histograms'
            cand -T 'Show each interval''s wall-clock time (`%H:%M:%S`, local time)'
            cand --timestamp 'Show each interval''s wall-clock time (`%H:%M:%S`, local time)'
            cand --all 'Live: profile every process'
            cand --calibrate 'Live: subtract the probes'' self-delay (measured at start-up and shown in the header either way) from every system call''s latency'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand merge 'Combine JSON profiles exactly: histograms of the same key and interval are added'
            cand compare 'Compare two profiles key by key, with a test that tells changes from noise'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reanimator;profile;merge'= {
            cand -o 'Write the merged profile here instead of stdout (mode 0600)'
            cand --output 'Write the merged profile here instead of stdout (mode 0600)'
            cand --total 'Collapse all intervals into one (profiles with different interval lengths merge then)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;profile;compare'= {
            cand --svg 'Also draw both histograms of each key side by side into this SVG file'
            cand --svg-top 'Keys drawn in the SVG (differing keys first)'
            cand -o 'Write the text or JSON here instead of stdout (mode 0600)'
            cand --output 'Write the text or JSON here instead of stdout (mode 0600)'
            cand --alpha 'The family-wise false-alarm rate of the test'
            cand --min-shift 'The least share of a key''s calls that must move bucket for a change to count'
            cand --interval 'For traces: the interval length (seconds) and grouping they are profiled with'
            cand --by 'by'
            cand --buckets 'For traces: the buckets (log2, log10, linear:WIDTH)'
            cand --json 'JSON Lines instead of text'
            cand --per-interval 'Compare the profiles interval by interval (by position) instead of as wholes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;profile;help'= {
            cand merge 'Combine JSON profiles exactly: histograms of the same key and interval are added'
            cand compare 'Compare two profiles key by key, with a test that tells changes from noise'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reanimator;profile;help;merge'= {
        }
        &'reanimator;profile;help;compare'= {
        }
        &'reanimator;profile;help;help'= {
        }
        &'reanimator;stats'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand -S 'Order of the rows (strace''s -S keys, plus bytes)'
            cand --sort 'Order of the rows (strace''s -S keys, plus bytes)'
            cand --by 'Group rows by this instead of strace''s per-call table: the table then has latency quantiles (p50, p90, p99, max) and bytes read and written'
            cand --depth 'With `--by dir`: keep the first N components of the directory'
            cand --top 'Show the first N rows; the rest are summed into one `<other>` row'
            cand -w 'Only calls matching this expression (the `dump --where` language)'
            cand --where 'Only calls matching this expression (the `dump --where` language)'
            cand --max-groups 'Rows a group table (and the file table) holds in memory before folding its lightest half into `<other>`'
            cand --json 'One JSON object per trace (or one for `--sum`) with every group, quantile and histogram; numbers as numbers, times in ns'
            cand --sum 'Several traces: one table of all their calls instead of one table per trace'
            cand --histogram 'Also print the I/O sizes of reads and writes as log2 histograms'
            cand --files 'Also print the busiest files (most bytes read and written; `--top` of them, 10 by default)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;export'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand -f 'Output format'
            cand --format 'Output format'
            cand -o 'fio-iolog: write here instead of stdout. parquet, csv: the dataset''s directory (created 0700; files 0600: they hold the traces'' paths and data). chrome-trace: the JSON file. ctf: the CTF trace directory'
            cand --output 'fio-iolog: write here instead of stdout. parquet, csv: the dataset''s directory (created 0700; files 0600: they hold the traces'' paths and data). chrome-trace: the JSON file. ctf: the CTF trace directory'
            cand --data 'Tables: which data buffers to keep: lengths only, their BLAKE3 digests too, or the bytes as well (the `data` table, each distinct buffer once)'
            cand --compress 'Tables: compression (parquet: zstd, snappy or none, zstd by default; csv: xz or none, none by default)'
            cand --threads 'Tables: traces exported at once, one thread each (default: the CPUs, at most the number of traces)'
            cand --host 'Tables: the `host` column and partition of every trace given, instead of each trace''s `hostname` fact (`unknown` without one)'
            cand --profile 'Tables: also export this profile (`reanimator profile --json`) into the `profiles` table, one row per interval, key and bucket (repeatable)'
            cand --prefix 'Re-root the recorded absolute paths beneath this directory (`/a/b` becomes `DIR/a/b`), creating the files'' directories there (fio does not), and laying out each file the log reads at the size its reads need (extended with zeros, sparse; an existing larger file is left as it is): fio creates a missing file empty, and a read of it fails with EIO'
            cand -w 'Only the reads, writes and syncs matching this expression (the `dump --where` language; `path` is the file''s path, also for calls given a descriptor)'
            cand --where 'Only the reads, writes and syncs matching this expression (the `dump --where` language; `path` is the file''s path, also for calls given a descriptor)'
            cand -q 'Tables: no progress bar and no summary lines'
            cand --quiet 'Tables: no progress bar and no summary lines'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;collect'= {
            cand --key 'The master key (`reanimator keygen`): senders authenticate with host keys derived from it (`keygen --host NAME --from MASTER`), and every stream''s seal is checked under its host''s key as it arrives. Without it the collector authenticates nobody (loopback only, unless --insecure)'
            cand --listen 'Address to listen on (port 0: any free port; the first output line names it)'
            cand --dir 'Directory the streams are written to (created if missing)'
            cand --hello-timeout 'Seconds a connection has for its hello and authentication (not renewed by bytes)'
            cand --max-handshakes 'Connections in their hello and authentication at once; beyond, the oldest is dropped'
            cand --max-handshakes-per-ip 'Connections from one IP address in their hello and authentication at once; beyond, that address''s oldest is dropped'
            cand --max-streams 'Streams served at once; a sender authenticated beyond is refused (`busy`)'
            cand --max-streams-per-host 'Streams of one host (its authenticated name; without --key, its IP address) at once'
            cand --max-streams-per-ip 'Streams from one IP address at once'
            cand --idle-timeout 'A stream between extents silent this long is cut'
            cand --min-rate 'Inside an extent, a stream delivering fewer bytes a second than this over 10 s is cut (K, M, G suffixes)'
            cand --max-extent 'Largest extent accepted (K, M, G suffixes); a stream announcing a larger one is refused'
            cand --quota 'Bytes one host (without --key: one IP address) may store while this collector runs, all its streams together; the stream passing it is cut (K, M, G suffixes)'
            cand --max-stream-bytes 'Bytes of one stream; a stream passing it is cut (K, M, G suffixes)'
            cand --join 'Join a cut collected file and the sender''s spill file into one trace (-o OUT)'
            cand -o 'With --join: the trace to write (refused if it exists; mode 0600)'
            cand --output 'With --join: the trace to write (refused if it exists; mode 0600)'
            cand --json 'Print JSON Lines'
            cand --insecure 'Without --key: listen on an address other than loopback anyway (unauthenticated)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;keygen'= {
            cand --host 'Write the host key of NAME, derived from the master key --from'
            cand --from 'The collector''s master key that --host derives from'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;verify'= {
            cand --key 'The key file the trace was sealed (and encrypted) with'
            cand --json 'One JSON object instead of text'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;anonymize'= {
            cand --key 'The key file (`reanimator keygen`) the pseudonyms are derived from (the same key, the same pseudonyms), that encrypts the reversible table, and that decrypts an encrypted IN'
            cand --fields 'Fields to replace, comma-separated (default: all but data)'
            cand --reversible 'Fields whose originals `--reverse` can restore (a subset of --fields)'
            cand --data 'What becomes of data buffers (and of snapshot file contents: zeros of the same size unless kept)'
            cand --keep-names 'Path components kept as they are wherever they occur, comma-separated'
            cand --time-origin 'With the `time` field: the instant the trace''s start becomes, in seconds since the Unix epoch (negative: before it). (Default 0: 1970-01-01T00:00:00Z.)'
            cand --compress 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)'
            cand --seal 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file'
            cand --encrypt 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption'
            cand --keep-extensions 'Keep file name extensions (`report.pdf` becomes `<pseudonym>.pdf`)'
            cand --reverse 'Restore the reversible fields of an anonymized trace (needs its key)'
            cand --json 'Print a JSON summary (values replaced per field) on stdout'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;select'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand -o 'The trace to write (must not exist)'
            cand --output 'The trace to write (must not exist)'
            cand -w 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)'
            cand --where 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)'
            cand --time 'Only the calls made in this time range, `A..B` (from A up to, not including, B; either side may be left out): durations from the trace''s first call (`2s..5.5s`, `500ms..`, `..1m`; units ns, us, ms, s, m, h; a bare number is seconds), instants in RFC 3339 (`2026-12-02T06:00:00Z`) or seconds since the epoch after `@` (`@1764655200.5`)'
            cand --pid 'Only the calls of these processes and of the processes they created, as the trace''s clone, fork and vfork calls show (comma-separated or repeated)'
            cand --tid 'Only the calls of these threads and of the threads and processes they created'
            cand --compress 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)'
            cand --seal 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file'
            cand --encrypt 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption'
            cand -q 'No progress bar and no summary line'
            cand --quiet 'No progress bar and no summary line'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;split'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand --by 'How to cut: `pid`, `time=DURATION` (`60s`, `500ms`, `1h`) or `size=BYTES` (`1G`, `256M`)'
            cand -o 'The directory of the parts'
            cand --output 'The directory of the parts'
            cand --compress 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)'
            cand --seal 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file'
            cand --encrypt 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption'
            cand -q 'No summary line'
            cand --quiet 'No summary line'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;merge'= {
            cand --key 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note'
            cand -o 'The trace to write (must not exist)'
            cand --output 'The trace to write (must not exist)'
            cand --compress 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)'
            cand --seal 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file'
            cand --encrypt 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption'
            cand -q 'No summary line'
            cand --quiet 'No summary line'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;doctor'= {
            cand --json 'Print the checks as JSON on stdout (`{"checks": [{"name", "status", "found", "fix", "affects"}], "failed": N}`)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;completions'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;man'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'reanimator;help'= {
            cand info 'Summarize a trace or any DataSeries file (extent types, record counts, sizes, compression, time span, recording facts, losses) or a compiled plan (version, source trace, calls, data and deduplication, every checksum verified)'
            cand record 'Run a command and record its system calls with full data buffers into a trace'
            cand dump 'Print the records of a trace (strace-like lines in unique_id order by default) or of any DataSeries file'
            cand replay 'Replay a trace into a sandboxed root directory, verifying return values, returned data and (with a recorded snapshot) the final file tree'
            cand compile 'Compile a trace into a replay plan (Replayfs): calls placed and gated once, data buffers deduplicated in a memory-mapped region; `replay PLAN` takes it like a trace'
            cand snapshot 'Write the logical state of a directory tree (names, kinds, sizes, modes, owners, content digests, symlink targets, xattrs, hard links) as a manifest'
            cand diff 'Compare two directory trees'' logical state; each a directory, a manifest or a trace''s snapshot. Exit status 0 equal, 1 different, 2 trouble'
            cand fs 'Tracing file system (Tracefs on FUSE): mount a traced view of a directory and record every file-system operation of every process that uses it'
            cand profile 'Latency profiles (FSprof): log2 histograms of every operation''s latency per interval, from a trace or live; text (bcc''s layout), table, JSON Lines, SVG heat maps; `merge`'
            cand stats 'strace -c''s summary of traces (calls, errors, time per call), or tables per call class, process, thread, program, file, directory or errno with latency quantiles, bytes read and written, I/O sizes and the busiest files; one streaming pass in bounded memory'
            cand export 'Write traces in other tools'' formats: a Parquet or CSV dataset of several traces (for DuckDB, Spark, pandas; SNIA IOTTA), a timeline (Perfetto''s trace-event JSON, CTF for babeltrace2), or a trace''s file I/O as fio''s iolog (`fio --read_iolog`)'
            cand collect 'Receive traces streamed by `record -o tcp://` and `fs mount -o tcp://`, each into its own file as it arrives; `--join` puts a cut stream and its sender''s spill file together'
            cand keygen 'Create a key file (256 random bits, mode 0600) for sealed and encrypted traces and for anonymization'
            cand verify 'Check a sealed trace (`record --seal`): say which extent was modified, dropped, duplicated, reordered or inserted, or where the trace was cut. Exit 0 intact, 1 tampered, 2 trouble'
            cand anonymize 'Rewrite a trace with paths, ids, names and data replaced by keyed pseudonyms, consistently, so that it still replays to a tree of the same shape; `--reverse` restores the fields stored reversibly'
            cand select 'Write the calls of a trace selected by --where, --time and --pid/--tid (with descendants) as a trace of their own: facts kept, snapshots and losses kept or said'
            cand split 'Cut a trace into parts by process, time window or size; the parts together hold every call once'
            cand merge 'Join traces of several hosts or runs into one, interleaved by time, ids remapped so that none collide, each call''s host known by its pid''s range'
            cand doctor 'Say which backends and features work on this machine and, for each that does not, why and what to do (eBPF and BTF, capabilities, ptrace_scope, perf_event_paranoid, FUSE, cgroup v2, ring buffer memory, free space)'
            cand completions 'Write shell completions for bash, zsh, fish, elvish or powershell on stdout'
            cand man 'Write a man page for reanimator and each of its subcommands into a directory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reanimator;help;info'= {
        }
        &'reanimator;help;record'= {
        }
        &'reanimator;help;dump'= {
        }
        &'reanimator;help;replay'= {
        }
        &'reanimator;help;compile'= {
        }
        &'reanimator;help;snapshot'= {
        }
        &'reanimator;help;diff'= {
        }
        &'reanimator;help;fs'= {
            cand mount 'Mount a tracing passthrough of LOWER at MOUNTPOINT and record every file-system operation into a trace. Runs in the foreground until Ctrl-C, SIGTERM, `reanimator fs umount MOUNTPOINT` or `umount MOUNTPOINT`; then finishes the trace'
            cand umount 'Unmount a tracing file system: the daemon flushes and closes its trace, and this waits for it. Exit status 0 when the trace was finished, 2 when the daemon''s trace is incomplete (a write failed) or it did not finish in time'
            cand ctl 'Control a live mount without unmounting it (Tracefs'' run-time control): pause and resume tracing, change the filter or the data mode, read the counters, flush the trace. Only the mount''s owner (who started its daemon) and root may. Each change is a `ctl` record in the trace at the moment it took effect'
        }
        &'reanimator;help;fs;mount'= {
        }
        &'reanimator;help;fs;umount'= {
        }
        &'reanimator;help;fs;ctl'= {
        }
        &'reanimator;help;profile'= {
            cand merge 'Combine JSON profiles exactly: histograms of the same key and interval are added'
            cand compare 'Compare two profiles key by key, with a test that tells changes from noise'
        }
        &'reanimator;help;profile;merge'= {
        }
        &'reanimator;help;profile;compare'= {
        }
        &'reanimator;help;stats'= {
        }
        &'reanimator;help;export'= {
        }
        &'reanimator;help;collect'= {
        }
        &'reanimator;help;keygen'= {
        }
        &'reanimator;help;verify'= {
        }
        &'reanimator;help;anonymize'= {
        }
        &'reanimator;help;select'= {
        }
        &'reanimator;help;split'= {
        }
        &'reanimator;help;merge'= {
        }
        &'reanimator;help;doctor'= {
        }
        &'reanimator;help;completions'= {
        }
        &'reanimator;help;man'= {
        }
        &'reanimator;help;help'= {
        }
    ]
    $completions[$command]
}

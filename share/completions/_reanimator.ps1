
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'reanimator' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'reanimator'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'reanimator' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Summarize a trace or any DataSeries file (extent types, record counts, sizes, compression, time span, recording facts, losses) or a compiled plan (version, source trace, calls, data and deduplication, every checksum verified)')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Run a command and record its system calls with full data buffers into a trace')
            [CompletionResult]::new('dump', 'dump', [CompletionResultType]::ParameterValue, 'Print the records of a trace (strace-like lines in unique_id order by default) or of any DataSeries file')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Replay a trace into a sandboxed root directory, verifying return values, returned data and (with a recorded snapshot) the final file tree')
            [CompletionResult]::new('compile', 'compile', [CompletionResultType]::ParameterValue, 'Compile a trace into a replay plan (Replayfs): calls placed and gated once, data buffers deduplicated in a memory-mapped region; `replay PLAN` takes it like a trace')
            [CompletionResult]::new('snapshot', 'snapshot', [CompletionResultType]::ParameterValue, 'Write the logical state of a directory tree (names, kinds, sizes, modes, owners, content digests, symlink targets, xattrs, hard links) as a manifest')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two directory trees'' logical state; each a directory, a manifest or a trace''s snapshot. Exit status 0 equal, 1 different, 2 trouble')
            [CompletionResult]::new('fs', 'fs', [CompletionResultType]::ParameterValue, 'Tracing file system (Tracefs on FUSE): mount a traced view of a directory and record every file-system operation of every process that uses it')
            [CompletionResult]::new('profile', 'profile', [CompletionResultType]::ParameterValue, 'Latency profiles (FSprof): log2 histograms of every operation''s latency per interval, from a trace or live; text (bcc''s layout), table, JSON Lines, SVG heat maps; `merge`')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'strace -c''s summary of traces (calls, errors, time per call), or tables per call class, process, thread, program, file, directory or errno with latency quantiles, bytes read and written, I/O sizes and the busiest files; one streaming pass in bounded memory')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write traces in other tools'' formats: a Parquet or CSV dataset of several traces (for DuckDB, Spark, pandas; SNIA IOTTA), a timeline (Perfetto''s trace-event JSON, CTF for babeltrace2), or a trace''s file I/O as fio''s iolog (`fio --read_iolog`)')
            [CompletionResult]::new('collect', 'collect', [CompletionResultType]::ParameterValue, 'Receive traces streamed by `record -o tcp://` and `fs mount -o tcp://`, each into its own file as it arrives; `--join` puts a cut stream and its sender''s spill file together')
            [CompletionResult]::new('keygen', 'keygen', [CompletionResultType]::ParameterValue, 'Create a key file (256 random bits, mode 0600) for sealed and encrypted traces and for anonymization')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Check a sealed trace (`record --seal`): say which extent was modified, dropped, duplicated, reordered or inserted, or where the trace was cut. Exit 0 intact, 1 tampered, 2 trouble')
            [CompletionResult]::new('anonymize', 'anonymize', [CompletionResultType]::ParameterValue, 'Rewrite a trace with paths, ids, names and data replaced by keyed pseudonyms, consistently, so that it still replays to a tree of the same shape; `--reverse` restores the fields stored reversibly')
            [CompletionResult]::new('select', 'select', [CompletionResultType]::ParameterValue, 'Write the calls of a trace selected by --where, --time and --pid/--tid (with descendants) as a trace of their own: facts kept, snapshots and losses kept or said')
            [CompletionResult]::new('split', 'split', [CompletionResultType]::ParameterValue, 'Cut a trace into parts by process, time window or size; the parts together hold every call once')
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Join traces of several hosts or runs into one, interleaved by time, ids remapped so that none collide, each call''s host known by its pid''s range')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Say which backends and features work on this machine and, for each that does not, why and what to do (eBPF and BTF, capabilities, ptrace_scope, perf_event_paranoid, FUSE, cgroup v2, ring buffer memory, free space)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Write shell completions for bash, zsh, fish, elvish or powershell on stdout')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Write a man page for reanimator and each of its subcommands into a directory')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reanimator;info' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object instead of the table')
            [CompletionResult]::new('--quick', '--quick', [CompletionResultType]::ParameterName, 'Read extent headers only: skips checksum verification and the time span (fast on huge files). For a plan: its chunk headers only, the calls and data not read back')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;record' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'With `-o tcp://`: the host key (`reanimator keygen --host NAME --from MASTER`) this sender authenticates to the collector with; the trace is then sealed with it (docs/NETWORK.md)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The trace file to write (replaced if it exists; created mode 0600, readable by you alone, whatever the umask: it holds every byte the command read), or tcp://HOST:PORT[/LABEL] to stream it to `reanimator collect` (see --spill; with the global `--key HOSTKEY` the sender authenticates and the trace is sealed with that host key, docs/NETWORK.md), or `-`: stream it to standard output, for a reader that takes `-` (`reanimator record -o - -- make | reanimator dump -`); what the command prints on its standard output then goes to standard error')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The trace file to write (replaced if it exists; created mode 0600, readable by you alone, whatever the umask: it holds every byte the command read), or tcp://HOST:PORT[/LABEL] to stream it to `reanimator collect` (see --spill; with the global `--key HOSTKEY` the sender authenticates and the trace is sealed with that host key, docs/NETWORK.md), or `-`: stream it to standard output, for a reader that takes `-` (`reanimator record -o - -- make | reanimator dump -`); what the command prints on its standard output then goes to standard error')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'Capture backend')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'How much of each data buffer to keep: `full` (every byte), `hash` (length and BLAKE3 digest: enough to verify a replay''s data), `none` (not read: lengths only); paths, struct results and argv are kept in full whatever it says. Per direction: `write=LEVEL,read=LEVEL` (an omitted direction is `full`), data the command writes (write, pwritev, sendmsg, io_uring writes, kernel-side copies, mmap pages written) apart from data read into it (read, recvmsg, getxattr, io_uring reads, mmap pages read). E.g. `--data write=full,read=hash`: a replay has every byte it must write and checks what it reads by digest, in a trace smaller by the data read')
            [CompletionResult]::new('--syscalls', '--syscalls', [CompletionResultType]::ParameterName, 'Calls to capture: `storage` (files, descriptors, memory maps, processes, sockets), `all`, or strace''s `-e trace=` list: names (`openat,pwrite64`; kernel, trace and 32-bit names such as `_llseek`), strace''s classes (`%file`, `%desc`, `%network`, `%memory`, `%process`, `%signal`, `%ipc`, `%creds`, `%clock`, `%stat`, `%%stat`, `%statfs`, ...), a leading `!` for every call but those (`!%memory`). Process lifecycle calls are always captured; delivered signals (`signal_deliver`, dump''s `--- SIGCHLD {...} ---`) too, unless a `!` list leaves them out (`!%signal`)')
            [CompletionResult]::new('--cpu', '--cpu', [CompletionResultType]::ParameterName, 'Where the command runs relative to the tracer (ptrace backend; ignored with -p and by the ebpf backend, which has no tracer hand-offs)')
            [CompletionResult]::new('--loss', '--loss', [CompletionResultType]::ParameterName, 'What the ebpf backend does when the command produces faster than the trace is written')
            [CompletionResult]::new('--ring-size', '--ring-size', [CompletionResultType]::ParameterName, 'Size of the ebpf backend''s ring buffer (a power of two from 1M to 1G; K, M, G suffixes). Default: 64M, or 16M with `--data none` (call records only: ~200 bytes per call)')
            [CompletionResult]::new('--io-uring', '--io-uring', [CompletionResultType]::ParameterName, '`deny`: every io_uring_setup fails with ENOSYS (recorded so, the trace''s `io_uring_denied` fact counting them), so that programs such as fio fall back to system calls or stop with a clear error; ptrace backend (`auto` then picks it). `record` (the default): requests are recorded; the ptrace backend cannot see SQPOLL rings and says so')
            [CompletionResult]::new('--cgroup', '--cgroup', [CompletionResultType]::ParameterName, 'Record every process in this cgroup (v2 directory, e.g. /sys/fs/cgroup/system.slice/foo.service) and below, until Ctrl-C (ebpf backend)')
            [CompletionResult]::new('--compress', '--compress', [CompletionResultType]::ParameterName, 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)')
            [CompletionResult]::new('--seal', '--seal', [CompletionResultType]::ParameterName, 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file')
            [CompletionResult]::new('--encrypt', '--encrypt', [CompletionResultType]::ParameterName, 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption')
            [CompletionResult]::new('--spill', '--spill', [CompletionResultType]::ParameterName, 'With `-o tcp://HOST:PORT`: when the collector fails (connection lost, collector killed, no acknowledgement for 30 s), go on writing here: a trace holding everything the collector did not acknowledge (`reanimator collect --join` puts the two parts together). Without it such a failure stops the recording')
            [CompletionResult]::new('--net-buffer', '--net-buffer', [CompletionResultType]::ParameterName, 'With `-o tcp://`: bytes sent and not yet acknowledged by the collector, at most (K, M, G suffixes), or one extent if that is larger; the trace writer waits beyond (backpressure)')
            [CompletionResult]::new('--snapshot', '--snapshot', [CompletionResultType]::ParameterName, 'Store DIR''s state (and its file contents) in the trace before the command starts, and its state again after it ends (repeatable)')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Also print each call as it completes, as `reanimator dump` shows it (strace-like lines, buffers cut at --print-strsize bytes), on stderr or into FILE (created mode 0600: it quotes traced data). The lines are printed by a thread of their own that the recording never waits for: when they cannot be printed as fast as calls are recorded (a slow terminal), lines are left out and a line says how many; the trace has every call')
            [CompletionResult]::new('--print-strsize', '--print-strsize', [CompletionResultType]::ParameterName, 'With --print: show at most this many bytes of each buffer (0: all), as dump''s -s')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Attach to this running process (every thread) instead of starting a command; Ctrl-C detaches and leaves it running. Its open descriptors are recorded first as synthetic `openat` records (trace info `synthetic_ids` says how many)')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Attach to this running process (every thread) instead of starting a command; Ctrl-C detaches and leaves it running. Its open descriptors are recorded first as synthetic `openat` records (trace info `synthetic_ids` says how many)')
            [CompletionResult]::new('--mmap-private', '--mmap-private', [CompletionResultType]::ParameterName, 'Also record data read through private file mappings (`mmappread` page records, ebpf backend): files a program maps MAP_PRIVATE to read them, as git does its pack files. Program images are left out: executables and libraries (every mapping of a file that was mapped executable, or by the dynamic loader), their read-only data included. Writes to private mappings never reach the file and are never recorded. Shared file mappings are always recorded. The ptrace backend records no page records at all')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Don''t print the summary line')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Don''t print the summary line')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the summary as JSON on stdout when the recording ends (calls, data bytes, processes, threads, lost calls, throttle stops, exit status, elapsed seconds, the trace''s path and size or where a network trace went, snapshots), instead of the line on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;dump' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Only these calls / extent types (comma-separated or repeated), as strace''s `-e trace=` names them: trace names (`pread`), kernel names and aliases (`pread64`, `_llseek`), strace''s classes (`%file`, `%desc`, `%network`, `%process`, `%memory`, `%signal`, `%ipc`, `%creds`, `%clock`, `%stat`, `%lstat`, `%fstat`, `%%stat`, `%statfs`, `%fstatfs`, `%%statfs`), a leading `!` for every call but those; or full extent type names. A name that is no call is an error')
            [CompletionResult]::new('-e', '-e', [CompletionResultType]::ParameterName, 'strace''s spelling of --type: `-e trace=%file,read` (or `-e %file,read`)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Only records matching this expression, e.g. `call == openat && errno != 0`, `path ~ "/etc/**"`, `fd == 3 and ret > 0`, `call in %file`, `call not in %network` (call names as --type takes them). Fields: unique_id, time_called, time_returned, duration, pid, tid, uid, gid, call, ret, errno, errno_name, path (the file the call acts on: what a descriptor it returned or took refers to, or its path argument), fd_path and fd_path2 (what its descriptor arguments refer to), size, fd, signal (a delivered signal''s name: `signal == SIGCHLD`; `--type signal_deliver` selects them all), every argument by man-page name and by trace field name')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only records matching this expression, e.g. `call == openat && errno != 0`, `path ~ "/etc/**"`, `fd == 3 and ret > 0`, `call in %file`, `call not in %network` (call names as --type takes them). Fields: unique_id, time_called, time_returned, duration, pid, tid, uid, gid, call, ret, errno, errno_name, path (the file the call acts on: what a descriptor it returned or took refers to, or its path argument), fd_path and fd_path2 (what its descriptor arguments refer to), size, fd, signal (a delivered signal''s name: `signal == SIGCHLD`; `--type signal_deliver` selects them all), every argument by man-page name and by trace field name')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Show at most this many bytes of each buffer in text output (0 = everything)')
            [CompletionResult]::new('--strsize', '--strsize', [CompletionResultType]::ParameterName, 'Show at most this many bytes of each buffer in text output (0 = everything)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Stop after this many records')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Stop after this many records')
            [CompletionResult]::new('-X', '-X ', [CompletionResultType]::ParameterName, 'How flags and named constants are shown (strace''s `-X`): `abbrev` (names: `O_RDONLY|O_CLOEXEC`), `raw` (numbers: `0x80000`), `verbose` (both)')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Read a trace while it is being written (by `record` or `fs mount`): print its calls as they are written, in order, and end when the recording ends (the trace''s trailer is written, or its writer is gone). A trace not there yet is waited for up to 10 s. Ctrl-C ends it at once')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Times as the wall clock (strace''s `-t`: `08:26:40`; `-tt`: with microseconds; `-ttt`: seconds.microseconds since the epoch). Without it, seconds.nanoseconds since the epoch')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'Times as the seconds since the previous record shown (strace''s `-r`)')
            [CompletionResult]::new('--relative', '--relative', [CompletionResultType]::ParameterName, 'Times as the seconds since the previous record shown (strace''s `-r`)')
            [CompletionResult]::new('-T', '-T ', [CompletionResultType]::ParameterName, 'Show the time spent in each call, `<0.000012>` (strace''s `-T`; on unless --no-duration)')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'Show the time spent in each call, `<0.000012>` (strace''s `-T`; on unless --no-duration)')
            [CompletionResult]::new('--no-duration', '--no-duration', [CompletionResultType]::ParameterName, 'Leave out the time spent in each call')
            [CompletionResult]::new('-x', '-x', [CompletionResultType]::ParameterName, 'Strings holding a byte that is not printable ASCII in hexadecimal (`-x`, strace''s); every string in hexadecimal (`-xx`)')
            [CompletionResult]::new('--no-decode-fds', '--no-decode-fds', [CompletionResultType]::ParameterName, 'Do not follow descriptors: text shows `read(3, ...)` instead of strace `-y`''s `read(3</srv/db/shop.db>, ...)`, JSON lines and CSV have no `fd_path`, and `--where ''path ~ ...''` sees only the calls that name a path')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Print the DataSeries records extent by extent (file order), even for traces')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;replay' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)')
            [CompletionResult]::new('--time', '--time', [CompletionResultType]::ParameterName, 'Only the calls made in this time range, `A..B` (from A up to, not including, B; either side may be left out): durations from the trace''s first call (`2s..5.5s`, `500ms..`, `..1m`; units ns, us, ms, s, m, h; a bare number is seconds), instants in RFC 3339 (`2026-12-02T06:00:00Z`) or seconds since the epoch after `@` (`@1764655200.5`)')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Only the calls of these processes and of the processes they created, as the trace''s clone, fork and vfork calls show (comma-separated or repeated)')
            [CompletionResult]::new('--tid', '--tid', [CompletionResultType]::ParameterName, 'Only the calls of these threads and of the threads and processes they created')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Directory to replay into; must exist and be empty unless --force or --clean')
            [CompletionResult]::new('--compare', '--compare', [CompletionResultType]::ParameterName, 'Differential replay: replay the trace again into DIR (repeatable; roots on different file systems) and report, call by call, where the roots'' outcomes differ from each other and from the recording, their final trees'' differences and each root''s elapsed time (see below)')
            [CompletionResult]::new('--init', '--init', [CompletionResultType]::ParameterName, 'Recreate the initial state under --root before replaying (`--init` alone = auto)')
            [CompletionResult]::new('--init-unknown', '--init-unknown', [CompletionResultType]::ParameterName, 'What --init puts in the bytes of files that the trace never showed (a file a stat showed 1 GB long, of which 4 KiB were read: 1 GB less 4 KiB): holes (`sparse`) or the --fill data written out (`fill`: costs the disk space and the time)')
            [CompletionResult]::new('--verify', '--verify', [CompletionResultType]::ParameterName, 'What to verify')
            [CompletionResult]::new('--on-mismatch', '--on-mismatch', [CompletionResultType]::ParameterName, 'What to do at a mismatch')
            [CompletionResult]::new('--timing', '--timing', [CompletionResultType]::ParameterName, '`afap` (as fast as possible), `original` (recorded pace) or `scale=K` (recorded time offsets times K: 0.5 = twice as fast)')
            [CompletionResult]::new('--timing-cpus', '--timing-cpus', [CompletionResultType]::ParameterName, 'Where a --timing replay''s threads run: `split` (with two CPUs or more, the workers and the timer on all but the last eighth of the CPUs this process may use, the dispatcher and the read-ahead on the rest: the load balancer otherwise moves them onto a spinning worker''s CPU, and due calls wait) or `shared` (wherever the kernel puts them)')
            [CompletionResult]::new('--fill', '--fill', [CompletionResultType]::ParameterName, 'Data for writes the trace holds no bytes for (traces recorded with --data hash|none)')
            [CompletionResult]::new('--mmap', '--mmap', [CompletionResultType]::ParameterName, 'How memory-mapped file I/O (mmap, mmappread/mmappwrite records) is replayed')
            [CompletionResult]::new('--reads', '--reads', [CompletionResultType]::ParameterName, 'Which reads of files to replay (the report says which ran): all, only those that missed the page cache when recorded, or none')
            [CompletionResult]::new('--uring', '--uring', [CompletionResultType]::ParameterName, 'How io_uring requests recorded by the eBPF recorder (`io_uring_op` records) are replayed and verified (docs/REPLAY.md, "io_uring requests")')
            [CompletionResult]::new('--prefetch', '--prefetch', [CompletionResultType]::ParameterName, 'How far the trace is read ahead, on a thread of its own: at most N calls and BYTES of data, whichever is reached first, in batches of 256 calls or 1 MiB (the default, 4096,16M: 16 batches); the report gives the horizon used and whether replay ever waited for it')
            [CompletionResult]::new('--stall-timeout', '--stall-timeout', [CompletionResultType]::ParameterName, 'Seconds a call may block (pipe read, lock wait) before it is reported as stalled')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Write the full report as JSON to this file')
            [CompletionResult]::new('--log', '--log', [CompletionResultType]::ParameterName, 'Where -v/-vv lines go (default: stderr)')
            [CompletionResult]::new('--max-mismatches', '--max-mismatches', [CompletionResultType]::ParameterName, 'How many mismatches the report lists (all are counted)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replay into a root that is not empty: its files stay, and the replay''s mix with them (where they differ from the recorded start state, verification can fail; --clean starts afresh instead)')
            [CompletionResult]::new('--clean', '--clean', [CompletionResultType]::ParameterName, 'Empty the root (and each --compare root) first: everything beneath it is removed, never crossing into another file system. Only for a root an earlier replay used (replay remembers its roots, by device and inode, in ~/.local/state/reanimator/replay-roots); any other non-empty directory is refused')
            [CompletionResult]::new('--allow-special', '--allow-special', [CompletionResultType]::ParameterName, 'Let --init create device nodes, setuid/setgid files and security.* xattrs (file capabilities) as the trace recorded them, and replayed mknod calls create device nodes; by default each becomes a harmless placeholder (an empty regular file, the mode without setuid/setgid, no xattr) listed in the report''s initial-state notes or warnings')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the report as JSON on stdout instead of the table')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, '-v: log each mismatch; -vv: log every replayed call (to --log, or stderr)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, '-v: log each mismatch; -vv: log every replayed call (to --log, or stderr)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bar, no table (exit status and --report only)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bar, no table (exit status and --report only)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;compile' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Where to write the plan (mode 0600: it holds the trace''s data)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Where to write the plan (mode 0600: it holds the trace''s data)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)')
            [CompletionResult]::new('--time', '--time', [CompletionResultType]::ParameterName, 'Only the calls made in this time range, `A..B` (from A up to, not including, B; either side may be left out): durations from the trace''s first call (`2s..5.5s`, `500ms..`, `..1m`; units ns, us, ms, s, m, h; a bare number is seconds), instants in RFC 3339 (`2026-12-02T06:00:00Z`) or seconds since the epoch after `@` (`@1764655200.5`)')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Only the calls of these processes and of the processes they created, as the trace''s clone, fork and vfork calls show (comma-separated or repeated)')
            [CompletionResult]::new('--tid', '--tid', [CompletionResultType]::ParameterName, 'Only the calls of these threads and of the threads and processes they created')
            [CompletionResult]::new('--dedup-memory', '--dedup-memory', [CompletionResultType]::ParameterName, 'Memory for the deduplication index (e.g. 256M, the default): once it is full, new contents are stored without being indexed (the summary says when)')
            [CompletionResult]::new('--compress', '--compress', [CompletionResultType]::ParameterName, 'How to store the data chunks: `none` (the default) keeps them as they are, and replay writes from the mapped plan without copying; `lz4` compresses each chunk (when that makes it smaller): a smaller plan for compressible data, and replay decompresses the chunks as it goes. Plans with lz4 chunks are format version 2')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the summary as JSON on stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bar, no summary')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bar, no summary')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;snapshot' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The manifest to write (replaced if it exists, mode 0600; `-` for standard output)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The manifest to write (replaced if it exists, mode 0600; `-` for standard output)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Also copy each distinct file content into this directory, one file per BLAKE3 digest (OBJDIR/ab/abcd...): the manifest plus the store are a complete copy of the tree')
            [CompletionResult]::new('--cross-mounts', '--cross-mounts', [CompletionResultType]::ParameterName, 'Enter directories on other file systems (default: record mount points, don''t enter)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Don''t print the summary line')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Don''t print the summary line')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;diff' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('--ignore', '--ignore', [CompletionResultType]::ParameterName, 'Leave out paths matching this glob, and everything beneath them (repeatable). Globs match the whole path relative to the tree: `*` within a name, `**` across `/`, `?`, `[a-z]`')
            [CompletionResult]::new('--times', '--times', [CompletionResultType]::ParameterName, 'Compare modification times too')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON Lines (one object per difference, then a summary object)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing; the exit status tells (0 equal, 1 different)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing; the exit status tells (0 equal, 1 different)')
            [CompletionResult]::new('--cross-mounts', '--cross-mounts', [CompletionResultType]::ParameterName, 'Enter directories on other file systems when scanning a directory')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;fs' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('mount', 'mount', [CompletionResultType]::ParameterValue, 'Mount a tracing passthrough of LOWER at MOUNTPOINT and record every file-system operation into a trace. Runs in the foreground until Ctrl-C, SIGTERM, `reanimator fs umount MOUNTPOINT` or `umount MOUNTPOINT`; then finishes the trace')
            [CompletionResult]::new('umount', 'umount', [CompletionResultType]::ParameterValue, 'Unmount a tracing file system: the daemon flushes and closes its trace, and this waits for it. Exit status 0 when the trace was finished, 2 when the daemon''s trace is incomplete (a write failed) or it did not finish in time')
            [CompletionResult]::new('ctl', 'ctl', [CompletionResultType]::ParameterValue, 'Control a live mount without unmounting it (Tracefs'' run-time control): pause and resume tracing, change the filter or the data mode, read the counters, flush the trace. Only the mount''s owner (who started its daemon) and root may. Each change is a `ctl` record in the trace at the moment it took effect')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reanimator;fs;mount' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'With `-o tcp://`: the host key (`reanimator keygen --host NAME --from MASTER`) the daemon authenticates to the collector with; the trace is then sealed with it (docs/NETWORK.md)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The trace file to write (not inside MOUNTPOINT; created mode 0600, readable by you alone, as is its .log), or tcp://HOST:PORT[/LABEL] to stream it to `reanimator collect` (with `--key HOSTKEY` the sender authenticates and the trace is sealed with that host key, docs/NETWORK.md)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The trace file to write (not inside MOUNTPOINT; created mode 0600, readable by you alone, as is its .log), or tcp://HOST:PORT[/LABEL] to stream it to `reanimator collect` (with `--key HOSTKEY` the sender authenticates and the trace is sealed with that host key, docs/NETWORK.md)')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'How much of each read''s and write''s data to keep: full, hash (length and digest) or none, both ways, or per direction `write=LEVEL,read=LEVEL` (an omitted direction is full), e.g. `--data write=full,read=none` keeps what was written (write, setxattr) and only the length of what was read (read, getxattr). Paths, names and link targets are always kept')
            [CompletionResult]::new('--transport', '--transport', [CompletionResultType]::ParameterName, 'How requests reach the daemon: auto (io_uring where the kernel offers it, else /dev/fuse), uring, dev (default: REANIMATOR_FS_TRANSPORT, else auto; see Transport below)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'FUSE worker threads (default: 1, the CPU count with --fast; more than one on io_uring means one per CPU, each pinned to its CPU)')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'Record only operations for which this expression holds (see Filters below)')
            [CompletionResult]::new('--tracer', '--tracer', [CompletionResultType]::ParameterName, 'One more tracer on this mount, with its own trace file, filter, data mode and driver (repeatable; see Tracers below): `out=FILE[,name=NAME][,filter=EXPR] [,data=full|hash|none][,driver=stream|aggregate:SECS|stream+aggregate:SECS]`')
            [CompletionResult]::new('--tracer-name', '--tracer-name', [CompletionResultType]::ParameterName, 'The name of the first tracer (the one -o, --filter, --data and --aggregate configure), for `fs ctl --tracer` (default: 1)')
            [CompletionResult]::new('--aggregate', '--aggregate', [CompletionResultType]::ParameterName, 'Aggregate driver: per interval and operation, counts, bytes, errors and a log2 latency histogram, stored in the trace (`Reanimator::FsAggregate`). Default interval 1 s')
            [CompletionResult]::new('--aggregate-by', '--aggregate-by', [CompletionResultType]::ParameterName, 'Group the aggregate by operation and this key as well')
            [CompletionResult]::new('--aggregate-depth', '--aggregate-depth', [CompletionResultType]::ParameterName, 'With --aggregate-by path: how many leading path components form a group')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Write the aggregate as a latency profile to FILE (JSON Lines, docs/PROFILE.md: FSprof''s stackable mode): per interval and operation, the daemon''s service time of every request (lower calls included) in log2 histograms. Turns on --aggregate=1 unless it is given. `reanimator profile FILE` shows it as text or pictures (--svg)')
            [CompletionResult]::new('--compress', '--compress', [CompletionResultType]::ParameterName, 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)')
            [CompletionResult]::new('--seal', '--seal', [CompletionResultType]::ParameterName, 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file')
            [CompletionResult]::new('--encrypt', '--encrypt', [CompletionResultType]::ParameterName, 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption')
            [CompletionResult]::new('--spill', '--spill', [CompletionResultType]::ParameterName, 'With `-o tcp://HOST:PORT`: when the collector fails (connection lost, collector killed, no acknowledgement for 30 s), go on writing here: a trace holding everything the collector did not acknowledge (`reanimator collect --join` puts the two parts together). Without it such a failure stops the recording')
            [CompletionResult]::new('--net-buffer', '--net-buffer', [CompletionResultType]::ParameterName, 'With `-o tcp://`: bytes sent and not yet acknowledged by the collector, at most (K, M, G suffixes), or one extent if that is larger; the trace writer waits beyond (backpressure)')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Also print each operation recorded, as `reanimator dump` shows it, on stderr or into FILE (created mode 0600; not beneath LOWER or MOUNTPOINT), by a thread the file system never waits for: lines it cannot print in time are left out and counted (the trace has every operation)')
            [CompletionResult]::new('--log', '--log', [CompletionResultType]::ParameterName, 'With --daemon: the daemon''s log (default: the trace''s name with `.log`, or reanimator-fs-PID.log in the temporary directory for a tcp:// trace)')
            [CompletionResult]::new('--fast', '--fast', [CompletionResultType]::ParameterName, 'Kernel caches on, several threads (see Modes below)')
            [CompletionResult]::new('--fidelity', '--fidelity', [CompletionResultType]::ParameterName, 'Names cached 1 s, attributes asked every time (the default; see Modes below)')
            [CompletionResult]::new('--every-lookup', '--every-lookup', [CompletionResultType]::ParameterName, 'No kernel cache at all: every lookup of every path walk reaches the tracer; one worker thread (see Modes below)')
            [CompletionResult]::new('--direct-io', '--direct-io', [CompletionResultType]::ParameterName, 'No page cache on the mount (FOPEN_DIRECT_IO): each read and write call a program makes reaches the tracer as one operation (split at 1 MiB), even rereads of cached data; shared mmaps still work. Slower for programs that reread')
            [CompletionResult]::new('--print-aggregate', '--print-aggregate', [CompletionResultType]::ParameterName, 'Print each aggregate interval on stderr as it closes (bcc-style histograms)')
            [CompletionResult]::new('--aggregate-only', '--aggregate-only', [CompletionResultType]::ParameterName, 'With --aggregate: record no per-operation records, only the aggregates')
            [CompletionResult]::new('--daemon', '--daemon', [CompletionResultType]::ParameterName, 'Detach once the mount is up (the daemon keeps running; stop it with `fs umount`)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'When the mount ends, print its summary as JSON on stdout (operations, recorded, filtered out, untraced, elapsed seconds, the trace''s path and size, and whether it is complete), as `fs umount --json` does')
            [CompletionResult]::new('--sync', '--sync', [CompletionResultType]::ParameterName, 'Each record is written to the trace file and made durable (fdatasync) before its operation is answered (Tracefs'' unbuffered mode, for debugging): a daemon killed or a machine that crashes loses no operation a program saw answered. Costs a disk flush per operation (docs/PERFORMANCE.md, bench/fs `reanimator-sync`). Needs `-o FILE`')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;fs;umount' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long to wait for the daemon to finish its trace (what it waits for is said every 5 s)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Cut the connection off (pending and future operations fail with ENOTCONN) and detach the mount: for a daemon that was killed or hangs. The trace keeps what was written')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print how the trace ended as JSON on stdout: `ended` (finished, incomplete, unknown, stale, forced), the daemon, and what it did (operations, recorded, filtered out, untraced, elapsed seconds, the trace''s path and size) when it said')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;fs;ctl' {
            [CompletionResult]::new('--tracer', '--tracer', [CompletionResultType]::ParameterName, 'Address one tracer of the mount (its number, from 1, or its `name=`); default: all of them (`stats`: the first''s counters, then each''s as `tracer.N.*`). May also come right after MOUNTPOINT')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the answer as JSON on stdout (`stats`: its counters, numbers as numbers); may also come last, after the command')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;fs;help' {
            [CompletionResult]::new('mount', 'mount', [CompletionResultType]::ParameterValue, 'Mount a tracing passthrough of LOWER at MOUNTPOINT and record every file-system operation into a trace. Runs in the foreground until Ctrl-C, SIGTERM, `reanimator fs umount MOUNTPOINT` or `umount MOUNTPOINT`; then finishes the trace')
            [CompletionResult]::new('umount', 'umount', [CompletionResultType]::ParameterValue, 'Unmount a tracing file system: the daemon flushes and closes its trace, and this waits for it. Exit status 0 when the trace was finished, 2 when the daemon''s trace is incomplete (a write failed) or it did not finish in time')
            [CompletionResult]::new('ctl', 'ctl', [CompletionResultType]::ParameterValue, 'Control a live mount without unmounting it (Tracefs'' run-time control): pause and resume tracing, change the filter or the data mode, read the counters, flush the trace. Only the mount''s owner (who started its daemon) and root may. Each change is a `ctl` record in the trace at the moment it took effect')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reanimator;fs;help;mount' {
            break
        }
        'reanimator;fs;help;umount' {
            break
        }
        'reanimator;fs;help;ctl' {
            break
        }
        'reanimator;fs;help;help' {
            break
        }
        'reanimator;profile' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'Interval length in seconds, on a grid anchored at the Unix epoch (so profiles of different traces line up and merge). Default: one interval for a trace, 1 s live')
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'Split histograms by call only, or also by process name, process id, path prefix')
            [CompletionResult]::new('--depth', '--depth', [CompletionResultType]::ParameterName, 'Path components kept with `--by path` (live: directories below the file system''s root)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Only operations matching this expression (the `dump --where` language)')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only operations matching this expression (the `dump --where` language)')
            [CompletionResult]::new('--svg', '--svg', [CompletionResultType]::ParameterName, 'Also draw latency heat maps into this SVG file')
            [CompletionResult]::new('--svg-top', '--svg-top', [CompletionResultType]::ParameterName, 'Operations drawn in the SVG (largest total time first)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the text or JSON output here instead of stdout (mode 0600, as is the SVG)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the text or JSON output here instead of stdout (mode 0600, as is the SVG)')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Live: profile this process')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Live: profile this process')
            [CompletionResult]::new('--cgroup', '--cgroup', [CompletionResultType]::ParameterName, 'Live: profile the processes of this cgroup')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'Live: stop after this many seconds')
            [CompletionResult]::new('--layers', '--layers', [CompletionResultType]::ParameterName, 'Live: the layers to probe, comma-separated: syscall (the default), class (system calls summed by I/O class), block, fuse, ext4, writeback, cache, or all')
            [CompletionResult]::new('--map-size', '--map-size', [CompletionResultType]::ParameterName, 'Live: memory for the kernel''s histograms (e.g. 16M, the default); a key that does not fit is counted and reported, never dropped silently')
            [CompletionResult]::new('--weight', '--weight', [CompletionResultType]::ParameterName, 'Rows, bars and heat maps show calls per bucket (count) or the time they took (time: count x latency, FSprof''s delay-weighted view)')
            [CompletionResult]::new('--buckets', '--buckets', [CompletionResultType]::ParameterName, 'Buckets: log2 (the default: 2^(k-1) <= v < 2^k), log10, or linear:WIDTH (WIDTH in the profile''s unit, or with a suffix: 100us, 4k)')
            [CompletionResult]::new('--sample', '--sample', [CompletionResultType]::ParameterName, 'Count each call with probability 1/N (one in N per thread on average) and scale the counts by N (stated in the header and the JSON). Live: the system-call layer (and class) only')
            [CompletionResult]::new('--value', '--value', [CompletionResultType]::ParameterName, 'Histograms of a parameter instead of latency, from traces or live: size (bytes a read or write moved), offset (its file offset), seek-distance (bytes from where the previous read or write of the file ended), queue-depth (reads, writes, syncs and async calls of the target in flight when the call began, itself included)')
            [CompletionResult]::new('--correlate', '--correlate', [CompletionResultType]::ParameterName, 'Correlate two keys over the intervals (`layer:op[@group],layer:op[@group]`, e.g. `syscall:read,syscall:fsync`), or `top` / `top:N` for the most strongly correlated pairs. Prints the coefficients and the aligned series instead of the histograms')
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Live: serve the profile''s cumulative histograms as Prometheus metrics at http://ADDR/metrics (loopback addresses only: OpenMetrics or Prometheus text, and the protobuf format that carries native histograms)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'JSON Lines (docs/PROFILE.md) instead of text')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'One line per operation instead of histograms')
            [CompletionResult]::new('-T', '-T ', [CompletionResultType]::ParameterName, 'Show each interval''s wall-clock time (`%H:%M:%S`, local time)')
            [CompletionResult]::new('--timestamp', '--timestamp', [CompletionResultType]::ParameterName, 'Show each interval''s wall-clock time (`%H:%M:%S`, local time)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Live: profile every process')
            [CompletionResult]::new('--calibrate', '--calibrate', [CompletionResultType]::ParameterName, 'Live: subtract the probes'' self-delay (measured at start-up and shown in the header either way) from every system call''s latency')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Combine JSON profiles exactly: histograms of the same key and interval are added')
            [CompletionResult]::new('compare', 'compare', [CompletionResultType]::ParameterValue, 'Compare two profiles key by key, with a test that tells changes from noise')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reanimator;profile;merge' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the merged profile here instead of stdout (mode 0600)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the merged profile here instead of stdout (mode 0600)')
            [CompletionResult]::new('--total', '--total', [CompletionResultType]::ParameterName, 'Collapse all intervals into one (profiles with different interval lengths merge then)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;profile;compare' {
            [CompletionResult]::new('--svg', '--svg', [CompletionResultType]::ParameterName, 'Also draw both histograms of each key side by side into this SVG file')
            [CompletionResult]::new('--svg-top', '--svg-top', [CompletionResultType]::ParameterName, 'Keys drawn in the SVG (differing keys first)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the text or JSON here instead of stdout (mode 0600)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the text or JSON here instead of stdout (mode 0600)')
            [CompletionResult]::new('--alpha', '--alpha', [CompletionResultType]::ParameterName, 'The family-wise false-alarm rate of the test')
            [CompletionResult]::new('--min-shift', '--min-shift', [CompletionResultType]::ParameterName, 'The least share of a key''s calls that must move bucket for a change to count')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'For traces: the interval length (seconds) and grouping they are profiled with')
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'by')
            [CompletionResult]::new('--buckets', '--buckets', [CompletionResultType]::ParameterName, 'For traces: the buckets (log2, log10, linear:WIDTH)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'JSON Lines instead of text')
            [CompletionResult]::new('--per-interval', '--per-interval', [CompletionResultType]::ParameterName, 'Compare the profiles interval by interval (by position) instead of as wholes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;profile;help' {
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Combine JSON profiles exactly: histograms of the same key and interval are added')
            [CompletionResult]::new('compare', 'compare', [CompletionResultType]::ParameterValue, 'Compare two profiles key by key, with a test that tells changes from noise')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reanimator;profile;help;merge' {
            break
        }
        'reanimator;profile;help;compare' {
            break
        }
        'reanimator;profile;help;help' {
            break
        }
        'reanimator;stats' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('-S', '-S ', [CompletionResultType]::ParameterName, 'Order of the rows (strace''s -S keys, plus bytes)')
            [CompletionResult]::new('--sort', '--sort', [CompletionResultType]::ParameterName, 'Order of the rows (strace''s -S keys, plus bytes)')
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'Group rows by this instead of strace''s per-call table: the table then has latency quantiles (p50, p90, p99, max) and bytes read and written')
            [CompletionResult]::new('--depth', '--depth', [CompletionResultType]::ParameterName, 'With `--by dir`: keep the first N components of the directory')
            [CompletionResult]::new('--top', '--top', [CompletionResultType]::ParameterName, 'Show the first N rows; the rest are summed into one `<other>` row')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Only calls matching this expression (the `dump --where` language)')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only calls matching this expression (the `dump --where` language)')
            [CompletionResult]::new('--max-groups', '--max-groups', [CompletionResultType]::ParameterName, 'Rows a group table (and the file table) holds in memory before folding its lightest half into `<other>`')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per trace (or one for `--sum`) with every group, quantile and histogram; numbers as numbers, times in ns')
            [CompletionResult]::new('--sum', '--sum', [CompletionResultType]::ParameterName, 'Several traces: one table of all their calls instead of one table per trace')
            [CompletionResult]::new('--histogram', '--histogram', [CompletionResultType]::ParameterName, 'Also print the I/O sizes of reads and writes as log2 histograms')
            [CompletionResult]::new('--files', '--files', [CompletionResultType]::ParameterName, 'Also print the busiest files (most bytes read and written; `--top` of them, 10 by default)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;export' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'fio-iolog: write here instead of stdout. parquet, csv: the dataset''s directory (created 0700; files 0600: they hold the traces'' paths and data). chrome-trace: the JSON file. ctf: the CTF trace directory')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'fio-iolog: write here instead of stdout. parquet, csv: the dataset''s directory (created 0700; files 0600: they hold the traces'' paths and data). chrome-trace: the JSON file. ctf: the CTF trace directory')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'Tables: which data buffers to keep: lengths only, their BLAKE3 digests too, or the bytes as well (the `data` table, each distinct buffer once)')
            [CompletionResult]::new('--compress', '--compress', [CompletionResultType]::ParameterName, 'Tables: compression (parquet: zstd, snappy or none, zstd by default; csv: xz or none, none by default)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Tables: traces exported at once, one thread each (default: the CPUs, at most the number of traces)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Tables: the `host` column and partition of every trace given, instead of each trace''s `hostname` fact (`unknown` without one)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Tables: also export this profile (`reanimator profile --json`) into the `profiles` table, one row per interval, key and bucket (repeatable)')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Re-root the recorded absolute paths beneath this directory (`/a/b` becomes `DIR/a/b`), creating the files'' directories there (fio does not), and laying out each file the log reads at the size its reads need (extended with zeros, sparse; an existing larger file is left as it is): fio creates a missing file empty, and a read of it fails with EIO')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Only the reads, writes and syncs matching this expression (the `dump --where` language; `path` is the file''s path, also for calls given a descriptor)')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only the reads, writes and syncs matching this expression (the `dump --where` language; `path` is the file''s path, also for calls given a descriptor)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Tables: no progress bar and no summary lines')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Tables: no progress bar and no summary lines')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;collect' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The master key (`reanimator keygen`): senders authenticate with host keys derived from it (`keygen --host NAME --from MASTER`), and every stream''s seal is checked under its host''s key as it arrives. Without it the collector authenticates nobody (loopback only, unless --insecure)')
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address to listen on (port 0: any free port; the first output line names it)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Directory the streams are written to (created if missing)')
            [CompletionResult]::new('--hello-timeout', '--hello-timeout', [CompletionResultType]::ParameterName, 'Seconds a connection has for its hello and authentication (not renewed by bytes)')
            [CompletionResult]::new('--max-handshakes', '--max-handshakes', [CompletionResultType]::ParameterName, 'Connections in their hello and authentication at once; beyond, the oldest is dropped')
            [CompletionResult]::new('--max-handshakes-per-ip', '--max-handshakes-per-ip', [CompletionResultType]::ParameterName, 'Connections from one IP address in their hello and authentication at once; beyond, that address''s oldest is dropped')
            [CompletionResult]::new('--max-streams', '--max-streams', [CompletionResultType]::ParameterName, 'Streams served at once; a sender authenticated beyond is refused (`busy`)')
            [CompletionResult]::new('--max-streams-per-host', '--max-streams-per-host', [CompletionResultType]::ParameterName, 'Streams of one host (its authenticated name; without --key, its IP address) at once')
            [CompletionResult]::new('--max-streams-per-ip', '--max-streams-per-ip', [CompletionResultType]::ParameterName, 'Streams from one IP address at once')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'A stream between extents silent this long is cut')
            [CompletionResult]::new('--min-rate', '--min-rate', [CompletionResultType]::ParameterName, 'Inside an extent, a stream delivering fewer bytes a second than this over 10 s is cut (K, M, G suffixes)')
            [CompletionResult]::new('--max-extent', '--max-extent', [CompletionResultType]::ParameterName, 'Largest extent accepted (K, M, G suffixes); a stream announcing a larger one is refused')
            [CompletionResult]::new('--quota', '--quota', [CompletionResultType]::ParameterName, 'Bytes one host (without --key: one IP address) may store while this collector runs, all its streams together; the stream passing it is cut (K, M, G suffixes)')
            [CompletionResult]::new('--max-stream-bytes', '--max-stream-bytes', [CompletionResultType]::ParameterName, 'Bytes of one stream; a stream passing it is cut (K, M, G suffixes)')
            [CompletionResult]::new('--join', '--join', [CompletionResultType]::ParameterName, 'Join a cut collected file and the sender''s spill file into one trace (-o OUT)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'With --join: the trace to write (refused if it exists; mode 0600)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'With --join: the trace to write (refused if it exists; mode 0600)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON Lines')
            [CompletionResult]::new('--insecure', '--insecure', [CompletionResultType]::ParameterName, 'Without --key: listen on an address other than loopback anyway (unauthenticated)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;keygen' {
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Write the host key of NAME, derived from the master key --from')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'The collector''s master key that --host derives from')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;verify' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file the trace was sealed (and encrypted) with')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object instead of text')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;anonymize' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the pseudonyms are derived from (the same key, the same pseudonyms), that encrypts the reversible table, and that decrypts an encrypted IN')
            [CompletionResult]::new('--fields', '--fields', [CompletionResultType]::ParameterName, 'Fields to replace, comma-separated (default: all but data)')
            [CompletionResult]::new('--reversible', '--reversible', [CompletionResultType]::ParameterName, 'Fields whose originals `--reverse` can restore (a subset of --fields)')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'What becomes of data buffers (and of snapshot file contents: zeros of the same size unless kept)')
            [CompletionResult]::new('--keep-names', '--keep-names', [CompletionResultType]::ParameterName, 'Path components kept as they are wherever they occur, comma-separated')
            [CompletionResult]::new('--time-origin', '--time-origin', [CompletionResultType]::ParameterName, 'With the `time` field: the instant the trace''s start becomes, in seconds since the Unix epoch (negative: before it). (Default 0: 1970-01-01T00:00:00Z.)')
            [CompletionResult]::new('--compress', '--compress', [CompletionResultType]::ParameterName, 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)')
            [CompletionResult]::new('--seal', '--seal', [CompletionResultType]::ParameterName, 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file')
            [CompletionResult]::new('--encrypt', '--encrypt', [CompletionResultType]::ParameterName, 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption')
            [CompletionResult]::new('--keep-extensions', '--keep-extensions', [CompletionResultType]::ParameterName, 'Keep file name extensions (`report.pdf` becomes `<pseudonym>.pdf`)')
            [CompletionResult]::new('--reverse', '--reverse', [CompletionResultType]::ParameterName, 'Restore the reversible fields of an anonymized trace (needs its key)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print a JSON summary (values replaced per field) on stdout')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;select' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The trace to write (must not exist)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The trace to write (must not exist)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only the calls matching this expression (the `dump --where` language: `path` is the file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`)')
            [CompletionResult]::new('--time', '--time', [CompletionResultType]::ParameterName, 'Only the calls made in this time range, `A..B` (from A up to, not including, B; either side may be left out): durations from the trace''s first call (`2s..5.5s`, `500ms..`, `..1m`; units ns, us, ms, s, m, h; a bare number is seconds), instants in RFC 3339 (`2026-12-02T06:00:00Z`) or seconds since the epoch after `@` (`@1764655200.5`)')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Only the calls of these processes and of the processes they created, as the trace''s clone, fork and vfork calls show (comma-separated or repeated)')
            [CompletionResult]::new('--tid', '--tid', [CompletionResultType]::ParameterName, 'Only the calls of these threads and of the threads and processes they created')
            [CompletionResult]::new('--compress', '--compress', [CompletionResultType]::ParameterName, 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)')
            [CompletionResult]::new('--seal', '--seal', [CompletionResultType]::ParameterName, 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file')
            [CompletionResult]::new('--encrypt', '--encrypt', [CompletionResultType]::ParameterName, 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bar and no summary line')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bar and no summary line')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;split' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'How to cut: `pid`, `time=DURATION` (`60s`, `500ms`, `1h`) or `size=BYTES` (`1G`, `256M`)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The directory of the parts')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The directory of the parts')
            [CompletionResult]::new('--compress', '--compress', [CompletionResultType]::ParameterName, 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)')
            [CompletionResult]::new('--seal', '--seal', [CompletionResultType]::ParameterName, 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file')
            [CompletionResult]::new('--encrypt', '--encrypt', [CompletionResultType]::ParameterName, 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No summary line')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No summary line')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;merge' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The key file (`reanimator keygen`) the trace was encrypted or sealed with: decrypts an encrypted trace, and checks the seal of every trace read (the whole trace once, when opened): a modified, dropped, reordered or inserted extent, or a missing seal, stops the command with one line and exit status 1; a trace that is not sealed (unless encrypted with the key) is refused the same way. A trace cut before its final seal is read up to its last seal, with a note')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The trace to write (must not exist)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The trace to write (must not exist)')
            [CompletionResult]::new('--compress', '--compress', [CompletionResultType]::ParameterName, 'Compression of the trace''s extents, on two background threads. Standard DataSeries modes only; each section is stored raw when compressing does not shrink it. lz4 by default: it costs nothing measurable on data that does not compress and shrinks traces of text, zeros and repeated buffers 17-100x, which is disk traffic a full-buffer recorder saves (docs/PERFORMANCE.md, record-chain). `none` for readers without lz4 (DataSeries builds before lz4 support)')
            [CompletionResult]::new('--seal', '--seal', [CompletionResultType]::ParameterName, 'Seal the trace with the key in KEYFILE (`reanimator keygen`): a keyed MAC chain over every extent, so that `reanimator verify` finds any modified, dropped, duplicated, reordered or cut extent. The trace stays an ordinary DataSeries file')
            [CompletionResult]::new('--encrypt', '--encrypt', [CompletionResultType]::ParameterName, 'Encrypt the trace with the key in KEYFILE (AES-256-GCM over 1 MiB chunks): without the key it shows its size and nothing else. `info`, `dump`, `replay`, `verify` and the other readers take `--key KEYFILE`. Compression and sealing apply before encryption')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No summary line')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No summary line')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;doctor' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the checks as JSON on stdout (`{"checks": [{"name", "status", "found", "fix", "affects"}], "failed": N}`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;completions' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;man' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reanimator;help' {
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Summarize a trace or any DataSeries file (extent types, record counts, sizes, compression, time span, recording facts, losses) or a compiled plan (version, source trace, calls, data and deduplication, every checksum verified)')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Run a command and record its system calls with full data buffers into a trace')
            [CompletionResult]::new('dump', 'dump', [CompletionResultType]::ParameterValue, 'Print the records of a trace (strace-like lines in unique_id order by default) or of any DataSeries file')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Replay a trace into a sandboxed root directory, verifying return values, returned data and (with a recorded snapshot) the final file tree')
            [CompletionResult]::new('compile', 'compile', [CompletionResultType]::ParameterValue, 'Compile a trace into a replay plan (Replayfs): calls placed and gated once, data buffers deduplicated in a memory-mapped region; `replay PLAN` takes it like a trace')
            [CompletionResult]::new('snapshot', 'snapshot', [CompletionResultType]::ParameterValue, 'Write the logical state of a directory tree (names, kinds, sizes, modes, owners, content digests, symlink targets, xattrs, hard links) as a manifest')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two directory trees'' logical state; each a directory, a manifest or a trace''s snapshot. Exit status 0 equal, 1 different, 2 trouble')
            [CompletionResult]::new('fs', 'fs', [CompletionResultType]::ParameterValue, 'Tracing file system (Tracefs on FUSE): mount a traced view of a directory and record every file-system operation of every process that uses it')
            [CompletionResult]::new('profile', 'profile', [CompletionResultType]::ParameterValue, 'Latency profiles (FSprof): log2 histograms of every operation''s latency per interval, from a trace or live; text (bcc''s layout), table, JSON Lines, SVG heat maps; `merge`')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'strace -c''s summary of traces (calls, errors, time per call), or tables per call class, process, thread, program, file, directory or errno with latency quantiles, bytes read and written, I/O sizes and the busiest files; one streaming pass in bounded memory')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write traces in other tools'' formats: a Parquet or CSV dataset of several traces (for DuckDB, Spark, pandas; SNIA IOTTA), a timeline (Perfetto''s trace-event JSON, CTF for babeltrace2), or a trace''s file I/O as fio''s iolog (`fio --read_iolog`)')
            [CompletionResult]::new('collect', 'collect', [CompletionResultType]::ParameterValue, 'Receive traces streamed by `record -o tcp://` and `fs mount -o tcp://`, each into its own file as it arrives; `--join` puts a cut stream and its sender''s spill file together')
            [CompletionResult]::new('keygen', 'keygen', [CompletionResultType]::ParameterValue, 'Create a key file (256 random bits, mode 0600) for sealed and encrypted traces and for anonymization')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Check a sealed trace (`record --seal`): say which extent was modified, dropped, duplicated, reordered or inserted, or where the trace was cut. Exit 0 intact, 1 tampered, 2 trouble')
            [CompletionResult]::new('anonymize', 'anonymize', [CompletionResultType]::ParameterValue, 'Rewrite a trace with paths, ids, names and data replaced by keyed pseudonyms, consistently, so that it still replays to a tree of the same shape; `--reverse` restores the fields stored reversibly')
            [CompletionResult]::new('select', 'select', [CompletionResultType]::ParameterValue, 'Write the calls of a trace selected by --where, --time and --pid/--tid (with descendants) as a trace of their own: facts kept, snapshots and losses kept or said')
            [CompletionResult]::new('split', 'split', [CompletionResultType]::ParameterValue, 'Cut a trace into parts by process, time window or size; the parts together hold every call once')
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Join traces of several hosts or runs into one, interleaved by time, ids remapped so that none collide, each call''s host known by its pid''s range')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Say which backends and features work on this machine and, for each that does not, why and what to do (eBPF and BTF, capabilities, ptrace_scope, perf_event_paranoid, FUSE, cgroup v2, ring buffer memory, free space)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Write shell completions for bash, zsh, fish, elvish or powershell on stdout')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Write a man page for reanimator and each of its subcommands into a directory')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reanimator;help;info' {
            break
        }
        'reanimator;help;record' {
            break
        }
        'reanimator;help;dump' {
            break
        }
        'reanimator;help;replay' {
            break
        }
        'reanimator;help;compile' {
            break
        }
        'reanimator;help;snapshot' {
            break
        }
        'reanimator;help;diff' {
            break
        }
        'reanimator;help;fs' {
            [CompletionResult]::new('mount', 'mount', [CompletionResultType]::ParameterValue, 'Mount a tracing passthrough of LOWER at MOUNTPOINT and record every file-system operation into a trace. Runs in the foreground until Ctrl-C, SIGTERM, `reanimator fs umount MOUNTPOINT` or `umount MOUNTPOINT`; then finishes the trace')
            [CompletionResult]::new('umount', 'umount', [CompletionResultType]::ParameterValue, 'Unmount a tracing file system: the daemon flushes and closes its trace, and this waits for it. Exit status 0 when the trace was finished, 2 when the daemon''s trace is incomplete (a write failed) or it did not finish in time')
            [CompletionResult]::new('ctl', 'ctl', [CompletionResultType]::ParameterValue, 'Control a live mount without unmounting it (Tracefs'' run-time control): pause and resume tracing, change the filter or the data mode, read the counters, flush the trace. Only the mount''s owner (who started its daemon) and root may. Each change is a `ctl` record in the trace at the moment it took effect')
            break
        }
        'reanimator;help;fs;mount' {
            break
        }
        'reanimator;help;fs;umount' {
            break
        }
        'reanimator;help;fs;ctl' {
            break
        }
        'reanimator;help;profile' {
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Combine JSON profiles exactly: histograms of the same key and interval are added')
            [CompletionResult]::new('compare', 'compare', [CompletionResultType]::ParameterValue, 'Compare two profiles key by key, with a test that tells changes from noise')
            break
        }
        'reanimator;help;profile;merge' {
            break
        }
        'reanimator;help;profile;compare' {
            break
        }
        'reanimator;help;stats' {
            break
        }
        'reanimator;help;export' {
            break
        }
        'reanimator;help;collect' {
            break
        }
        'reanimator;help;keygen' {
            break
        }
        'reanimator;help;verify' {
            break
        }
        'reanimator;help;anonymize' {
            break
        }
        'reanimator;help;select' {
            break
        }
        'reanimator;help;split' {
            break
        }
        'reanimator;help;merge' {
            break
        }
        'reanimator;help;doctor' {
            break
        }
        'reanimator;help;completions' {
            break
        }
        'reanimator;help;man' {
            break
        }
        'reanimator;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}

//! Capture backends: run or attach to a process tree and turn its system calls — arguments,
//! results and full data buffers — into [`ra_trace::Event`]s.
//!
//! The call set and every buffer rule come from the registry (`ra-syscalls`). A few calls still
//! get code of their own here, where the registry has no field for what differs (the extra
//! struct a call's record carries, `common::Xarg::of_call`; which calls change mappings; the
//! eBPF rule table's flush points): issue 42 item 1 moves those into `SyscallDef`.
//!
//! Every backend implements [`Backend`]: [`ptrace::PtraceBackend`] is the
//! unprivileged one (seccomp-filtered ptrace, two stops per captured call, buffers through
//! `process_vm_readv`); [`ebpf::EbpfBackend`] runs in the kernel (root; BPF programs on the
//! syscall tracepoints copy buffers into a ring buffer, with a lossless throttle mode).
//! [`sink::TraceSink`] writes events to a trace on its own thread, flushing at least once a
//! second.
//!
//! # Parts
//!
//! Capture backends. `ptrace`: forks the command, which stops itself, installs a seccomp filter
//! (RET_TRACE for the selected calls, ALLOW for the rest; without `PR_SET_NO_NEW_PRIVS` when the
//! recorder has `CAP_SYS_ADMIN`, so set-uid programs keep their privileges; unprivileged,
//! `privilege_loss` warns before a set-uid or file-capability command runs) and execs; the tracer
//! reads arguments with `PTRACE_GET_SYSCALL_INFO` and buffers with `process_vm_readv` (batched;
//! PEEKDATA fallback) at the entry stop (inputs) and exit stop (outputs), reads a
//! `sendmsg`/`recvmsg`'s control data after the call for the descriptors it passed (`scm_rights`;
//! `common::Xarg::MsgControl`, the eBPF backend's `RF_XARG_MSG`), reads back from the file the
//! bytes a `sendfile`/`copy_file_range`/`splice` moved (`data_copied`: they never pass through the
//! program's memory; `common::add_copied_data`, which the eBPF backend calls too, with the thread
//! stopped by its throttle: `RF_READBACK`/`CF_READBACK`), follows fork/vfork/clone/exec; records
//! the signals it stops for (`PTRACE_GETSIGINFO`, `common::signal_event`, which the eBPF backend
//! shares); binds the command to the tracer's CPU by default (cross-CPU hand-offs dominate ptrace
//! cost on VMs) until a monitor thread (`ptrace/cpu.rs`) sees two traced threads runnable at once,
//! then unbinds the tree for the rest of the run (`--cpu same` never does); records io_uring
//! requests as `io_uring_op` events read from the program's rings at its `io_uring_enter` calls
//! (with the paths, names and `open_how` path requests point to, read at that entry)
//! (`ptrace/uring.rs`: the filter stops `io_uring_*`, `mmap` and `munmap` for it; SQPOLL rings
//! are counted, not seen) and with `--io-uring deny` skips `io_uring_setup` with `-ENOSYS`;
//! `-p` attaches with `PTRACE_SEIZE` and stops on every call instead. `ebpf` (see `docs/EBPF.md`): `bpf/capture.bpf.c`
//! on the `tp_btf` sys_enter/sys_exit, sched_process_fork/exit, signal_deliver/signal_generate
//! (delivered signals, `RK_SIGNAL`) and page-fault tracepoints (user and kernel mode; a fault's
//! large folio found in the page cache), driven by a rule table built from the registry at start-up
//! (`rules.rs`); `capture.h` is the one definition of the contract with user space: `build.rs`
//! turns its `#define`s into `layout.rs`'s constants, `layout.rs` reads each record field at the
//! offset of the type libbpf-cargo generates from its struct (`at!`, which also checks the field's
//! type), and `_Static_assert`s in the header pin every struct's size and field offsets (`MAX_NR`
//! once, in `syscall_nr.h`, shared with the profiler); copies every buffer in chunks into a BPF
//! ring buffer; io_uring requests from the `io_uring_submit_req` / `io_uring_complete` tracepoints
//! (the SQE read from the ring, a write's data (a vectored one's through its iovec array) and a
//! path request's strings at submission, a read's data at completion), paired into
//! one `io_uring_op` event each by `uring.rs` and handed over after the `io_uring_enter` that
//! submitted it (the sink's writer thread puts that call's unique id into `enter_id`);
//! `assemble.rs` rebuilds events exactly as the ptrace backend does; loss policies throttle
//! (SIGSTOP/SIGCONT) or drop (counted). `ebpf::profile` is the live profiler (docs/PROFILE.md):
//! `bpf/profile.bpf.c` (its contract with `profile.rs` in `bpf/profile.h`, checked the same way)
//! keeps log2 latency histograms in a per-CPU hash map (system calls of a target set, per call and
//! `--by` group resolved in the kernel from the descriptor table or the dentry chain; block, FUSE,
//! ext4, writeback; page-cache counters), keys carry an epoch bit so that intervals are read
//! exactly, and start-up calibration measures the probes' own cost. Both sit behind the `Backend`
//! trait (`probe`, `record`); `common.rs` holds what they share (path resolution, /proc facts,
//! synthetic openat records, the generated `exit` of a thread killed between calls, struct sizes).
//! `sink::TraceSink`: the `TraceWriter` on its own thread, fed in batches through a channel bounded
//! in bytes, flushed every second; with `record --print` the writer thread hands each batch's
//! previews to `ra_trace::live`'s printer; a write error stops the recording (not the command: see
//! Memory and errors). Call set and buffer rules come from the registry only.
#![warn(missing_docs)]

mod common;
pub mod ebpf;
pub mod ptrace;
pub mod selection;
pub mod sink;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::AtomicI32;

pub use ra_trace::{DataLevel, DataMode};
pub use selection::Selection;

/// Set by the caller's signal handler: the number of stop requests (Ctrl-C / SIGTERM).
pub static STOP_REQUESTS: AtomicI32 = AtomicI32::new(0);
/// The signal to forward to the traced command on the first stop request.
pub static STOP_SIGNAL: AtomicI32 = AtomicI32::new(libc::SIGTERM);

/// What to record.
#[derive(Clone, Debug)]
pub enum Target {
    /// Run this command (`argv[0]` searched in `PATH`) and record it and every process it
    /// starts, until all of them have exited.
    Command(Vec<OsString>),
    /// Attach to this running process (every thread) and record it, and the processes it
    /// starts from now on, until it exits or a stop is requested (then detach).
    Pid(i32),
    /// Every process in this cgroup (v2) or below it, until a stop is requested.
    Cgroup(PathBuf),
}

/// What to capture, whatever the backend.
#[derive(Clone, Debug)]
pub struct Options {
    /// The calls to record (`--syscalls`).
    pub selection: Selection,
    /// How much of each data buffer to keep, per direction (`--data`).
    pub data: DataMode,
    /// Also record reads through private file mappings that are no program image
    /// (`mmappread` records; `record --mmap-private`, eBPF backend, docs/EBPF.md).
    pub mmap_private: bool,
    /// Make every `io_uring_setup` fail with ENOSYS (`record --io-uring deny`, ptrace
    /// backend), so that programs fall back to system calls the recorder sees.
    pub uring_deny: bool,
}

/// How a recording ended.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The command's exit status as a shell reports it (128 + signal when killed); 0 when
    /// attached or recording a cgroup.
    pub exit_code: i32,
    /// Events handed to the sink (calls, synthetic records, signals, io_uring operations).
    pub events: u64,
    /// Processes seen.
    pub processes: u64,
    /// Threads seen.
    pub threads: u64,
    /// Bytes of captured buffers.
    pub data_bytes: u64,
    /// The CPU the command and the tracer were bound to, if they were.
    pub pinned_cpu: Option<usize>,
    /// When and why they were unbound during the run, if they were (`until 0.52 s, then
    /// unbound: ...`).
    pub cpu_note: Option<String>,
    /// Synthetic records written first (descriptors a process had open when attached to).
    pub synthetic_ids: u64,
    /// Calls lost (each one is in a `Reanimator::Lost` record of the trace).
    pub lost_events: u64,
    /// Facts about the recording for the trace info (`key`, `value`), backend-specific.
    pub facts: Vec<(String, String)>,
}

/// What a backend can do on this machine.
#[derive(Clone, Debug)]
pub struct Capabilities {
    /// One line: what was found (kernel features, privileges).
    pub summary: String,
}

/// Why a backend cannot run here: what is missing, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    /// What is missing, precisely (a capability, a file, a kernel option).
    pub missing: String,
    /// How to fix it.
    pub fix: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; {}", self.missing, self.fix)
    }
}

/// A capture backend: `capture/src/<name>/` implements it and passes the shared conformance
/// tests (same workload, same decoded trace, apart from its declared capability gaps).
pub trait Backend {
    /// The name used by `--backend` and in the trace info (`ptrace`, `ebpf`).
    fn name(&self) -> &'static str;
    /// Can this backend run here? Checks privileges and kernel features without recording.
    fn probe(&self) -> std::result::Result<Capabilities, Unavailable>;
    /// Record `target` into `sink` until it is done (see [`Target`]).
    fn record(
        &mut self,
        target: &Target,
        opts: &Options,
        sink: &mut sink::TraceSink,
    ) -> Result<Outcome>;
}

/// Errors of the capture layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The command could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program, as given.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A system call of the recorder itself failed.
    #[error("{call} failed: {source}")]
    Sys {
        /// Which.
        call: &'static str,
        /// Its error.
        #[source]
        source: std::io::Error,
    },
    /// A `--syscalls` list that names nothing ([`ra_syscalls::SelectError`]'s words).
    #[error("{why}")]
    UnknownSyscall {
        /// The parser's message.
        why: String,
    },
    /// `-p PID` could not be attached to.
    #[error("cannot trace process {pid}: {why}")]
    Attach {
        /// The process.
        pid: i32,
        /// Why not.
        why: String,
    },
    /// No command was given.
    #[error("the command is empty: give the program to run after `--`")]
    EmptyCommand,
    /// The trace writer failed.
    #[error("writing the trace: {0}")]
    Trace(#[from] ra_trace::Error),
    /// The trace writer's thread ended before the recording did.
    #[error("the trace writer thread stopped unexpectedly")]
    WriterGone,
    /// The trace file could not be written (e.g. its disk is full).
    #[error("cannot write the trace {}", path.display())]
    TraceWrite {
        /// The trace file.
        path: PathBuf,
        /// The writer's error.
        #[source]
        source: ra_trace::Error,
    },
    /// Writing the trace failed while recording: the recording stopped there and the target
    /// was let be (`fate`: a command ran on to its end, an attached process was detached).
    #[error(
        "recording stopped early; the trace holds what was written before (unfinished), and {fate}"
    )]
    RecordingStopped {
        /// What became of the target.
        fate: String,
        /// The error that stopped it.
        #[source]
        source: Box<Error>,
    },
    /// The backend cannot run on this machine.
    #[error("the {backend} backend cannot run here: {why}")]
    Unavailable {
        /// `ptrace` or `ebpf`.
        backend: &'static str,
        /// What is missing and what to do.
        why: Unavailable,
    },
    /// The backend cannot record this kind of target.
    #[error("the {backend} backend cannot record {what}")]
    UnsupportedTarget {
        /// `ptrace` or `ebpf`.
        backend: &'static str,
        /// The kind of target (`a cgroup`).
        what: &'static str,
    },
    /// Loading, attaching or reading the BPF programs or maps failed.
    #[error("eBPF: {what}: {source}")]
    Bpf {
        /// What was being done.
        what: String,
        /// libbpf's error.
        #[source]
        source: libbpf_rs::Error,
    },
    /// `--cgroup PATH` cannot be recorded.
    #[error("cgroup {path}: {why}")]
    Cgroup {
        /// The cgroup directory.
        path: PathBuf,
        /// Why not.
        why: String,
    },
    /// An option's value is wrong.
    #[error("invalid {what}: {why}")]
    InvalidOption {
        /// The option.
        what: &'static str,
        /// What is wrong with it.
        why: String,
    },
}

/// The capture layer's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// This error (the trace could not be written) stopped the recording; `fate` says what
    /// became of the target.
    pub(crate) fn stopped(self, fate: String) -> Error {
        Error::RecordingStopped { fate, source: Box::new(self) }
    }
}

/// What becomes of a command when the trace cannot be written any more: it is not killed
/// but runs on, unrecorded, and the recorder waits for it (both backends).
pub(crate) fn fate_of_command(program: &str, exit_code: i32) -> String {
    format!("`{program}` ran on unrecorded to its end (exit status {exit_code})")
}

/// ... and of an attached process (`-p`): it is detached (no longer recorded) and runs on.
pub(crate) fn fate_of_attached(pid: i32) -> String {
    format!("process {pid} was let go and runs on unrecorded")
}

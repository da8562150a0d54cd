//! Capture backends: run or attach to a process tree and turn its system calls — arguments,
//! results and full data buffers — into [`ra_trace::Event`]s.
//!
//! The call set and every buffer rule come from the registry (`ra-syscalls`): a backend never
//! has per-call code. [`ptrace`] is the unprivileged backend (seccomp-filtered ptrace, two stops
//! per captured call, buffers through `process_vm_readv`). [`sink::TraceSink`] writes events to
//! a trace on its own thread, flushing at least once a second.

pub mod ptrace;
pub mod selection;
pub mod sink;

pub use selection::{DataMode, Selection};

/// Errors of the capture layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{call} failed: {source}")]
    Sys {
        call: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("unknown system call `{name}` in --syscalls{hint}")]
    UnknownSyscall { name: String, hint: String },
    #[error("cannot trace process {pid}: {why}")]
    Attach { pid: i32, why: String },
    #[error("the command is empty: give the program to run after `--`")]
    EmptyCommand,
    #[error("writing the trace: {0}")]
    Trace(#[from] ra_trace::Error),
    #[error("the trace writer thread stopped unexpectedly")]
    WriterGone,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

//! strace-like one-line rendering of events (`reanimator dump`'s text, `record --print`), times,
//! errno and signal names. The JSON Lines of `dump --format jsonl` are made by the CLI's `dump`
//! module, not here.

use std::fmt::Write as _;

use ra_syscalls::{ArgKind, Struct};

use crate::event::{ArgValue, Event, ExtraValue};
use crate::structs::{Stat, Statfs, Statx};

mod errno_table {
    include!("generated_errno.rs");
}

/// Kernel-internal codes a tracer sees at the exit of an interrupted call (linux/errno.h, not
/// part of the UAPI). The program itself never sees them: the kernel turns them into a
/// transparent restart (a following record of the same call) or into EINTR when it delivers
/// the signal.
const KERNEL_INTERNAL: &[(i32, &str)] = &[
    (512, "ERESTARTSYS"),
    (513, "ERESTARTNOINTR"),
    (514, "ERESTARTNOHAND"),
    (515, "ENOIOCTLCMD"),
    (516, "ERESTART_RESTARTBLOCK"),
];

/// True for the kernel-internal restart codes (see [`errno_name`]).
pub fn is_restart_errno(e: i32) -> bool {
    matches!(e, 512..=514 | 516)
}

/// The symbolic name of an errno value (`ENOENT`), including the kernel-internal restart codes
/// a tracer sees (`ERESTARTSYS`).
pub fn errno_name(e: i32) -> Option<&'static str> {
    errno_table::ERRNO_NAMES.iter().chain(KERNEL_INTERNAL).find(|(n, _)| *n == e).map(|(_, s)| *s)
}

/// How much to show.
#[derive(Clone, Debug)]
pub struct FormatOptions {
    /// Show at most this many bytes of each buffer (0 = all), like strace's `-s`.
    pub strsize: usize,
    /// Prefix with the time, in `time_format`.
    pub show_time: bool,
    /// Subtract this from every time shown ([`TimeFormat::Epoch`], [`TimeFormat::Relative`]).
    pub time_base: Option<i64>,
    /// Append `<seconds>` spent in the call, like strace's `-T`.
    pub show_duration: bool,
    /// How times are written (strace's `-t`, `-tt`, `-ttt`, `-r`).
    pub time_format: TimeFormat,
    /// Which strings are written in hexadecimal (strace's `-x`, `-xx`).
    pub hex: Hex,
    /// How flags and other named constants are written (strace's `-X`).
    pub flags: FlagStyle,
}

impl Default for FormatOptions {
    fn default() -> Self {
        FormatOptions {
            strsize: 32,
            show_time: true,
            time_base: None,
            show_duration: true,
            time_format: TimeFormat::Epoch,
            hex: Hex::NonPrintable,
            flags: FlagStyle::Abbrev,
        }
    }
}

/// How a call's time is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeFormat {
    /// Seconds.nanoseconds since the epoch (or since `time_base`): `1763800000.000123456`.
    #[default]
    Epoch,
    /// The wall clock, local time, to the second (strace `-t`): `08:26:40`.
    Clock,
    /// The wall clock to the microsecond (strace `-tt`): `08:26:40.000123`.
    ClockMicros,
    /// Seconds.microseconds since the epoch (strace `-ttt`): `1763800000.000123`.
    EpochMicros,
    /// Seconds.microseconds since `time_base` (strace `-r`: the caller sets it to the previous
    /// call's time): `     0.000123`.
    Relative,
}

/// Which strings are written in hexadecimal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Hex {
    /// Printable ASCII as it is, `\n`-style escapes, other bytes as `\xNN`.
    #[default]
    NonPrintable,
    /// A string holding any byte that is not printable ASCII, whole in `\xNN` (strace `-x`).
    NonAscii,
    /// Every string in `\xNN` (strace `-xx`).
    All,
}

/// How flags and named constants are written (strace's `-X`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlagStyle {
    /// Names: `O_RDONLY|O_CLOEXEC`, `AT_FDCWD`.
    #[default]
    Abbrev,
    /// Numbers: `0x80000`, `-100`.
    Raw,
    /// Both: `0x80000 /* O_RDONLY|O_CLOEXEC */`.
    Verbose,
}

/// Escape bytes as a C string literal body, strace style (lives with the DataSeries text
/// output, which uses it too).
pub use dataseries::text::escape_bytes;

/// `b` as strace shows a buffer: quoted, escaped ([`escape_bytes`]), cut after `strsize`
/// bytes (0: whole) with `...` after the closing quote.
pub fn quoted(out: &mut String, b: &[u8], strsize: usize) {
    quoted_hex(out, b, strsize, Hex::NonPrintable)
}

/// [`quoted`], with the strings `hex` says written in `\xNN`.
pub fn quoted_hex(out: &mut String, b: &[u8], strsize: usize, hex: Hex) {
    let cut = strsize > 0 && b.len() > strsize;
    let shown = if cut { &b[..strsize] } else { b };
    out.push('"');
    let all_hex = match hex {
        Hex::NonPrintable => false,
        Hex::NonAscii => b.iter().any(|&c| !(0x20..=0x7e).contains(&c)),
        Hex::All => true,
    };
    if all_hex {
        for c in shown {
            let _ = write!(out, "\\x{c:02x}");
        }
    } else {
        escape_bytes(out, shown);
    }
    out.push('"');
    if cut {
        out.push_str("...");
    }
}

fn mode_str(m: u32) -> String {
    let t = match m & 0o170000 {
        0o140000 => "S_IFSOCK|",
        0o120000 => "S_IFLNK|",
        0o100000 => "S_IFREG|",
        0o060000 => "S_IFBLK|",
        0o040000 => "S_IFDIR|",
        0o020000 => "S_IFCHR|",
        0o010000 => "S_IFIFO|",
        _ => "",
    };
    format!("{t}{:04o}", m & 0o7777)
}

fn time_str(ns: i64) -> String {
    let mut s = String::with_capacity(20);
    push_secs(&mut s, ns, 9);
    s
}

/// `x` in decimal.
fn push_int(s: &mut String, x: impl itoa::Integer) {
    s.push_str(itoa::Buffer::new().format(x));
}

/// `x` in decimal, right-aligned in `width` columns (`{x:>width$}`).
fn push_int_right(s: &mut String, x: impl itoa::Integer, width: usize) {
    let mut b = itoa::Buffer::new();
    let d = b.format(x);
    s.extend(std::iter::repeat_n(' ', width.saturating_sub(d.len())));
    s.push_str(d);
}

/// `x` (below 10^`digits`) in `digits` decimal digits, zeros first (`{x:0digits$}`).
fn push_zero_padded(s: &mut String, x: u64, digits: usize) {
    let mut b = itoa::Buffer::new();
    let d = b.format(x);
    s.extend(std::iter::repeat_n('0', digits.saturating_sub(d.len())));
    s.push_str(d);
}

/// Nanoseconds `ns` as seconds with `digits` (3, 6 or 9) decimals, cut (not rounded), the
/// seconds floored as `div_euclid` does (a time before the epoch: `-2.999999999`).
fn push_secs(s: &mut String, ns: i64, digits: u32) {
    push_int(s, ns.div_euclid(1_000_000_000));
    s.push('.');
    let frac = ns.rem_euclid(1_000_000_000) as u64 / 10u64.pow(9 - digits);
    push_zero_padded(s, frac, digits as usize);
}

/// A call's time as `f` writes it (`base` subtracted for [`TimeFormat::Epoch`] and
/// [`TimeFormat::Relative`]).
pub fn format_time(ns: i64, f: TimeFormat, base: Option<i64>) -> String {
    let (secs, nanos) = (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000));
    match f {
        TimeFormat::Epoch => time_str(ns - base.unwrap_or(0)),
        TimeFormat::EpochMicros => format!("{secs}.{:06}", nanos / 1000),
        TimeFormat::Relative => {
            // Calls are in the order they returned: one may have begun before the previous.
            let d = ns - base.unwrap_or(ns);
            let (sign, d) = if d < 0 { ("-", d.unsigned_abs()) } else { ("", d as u64) };
            let secs = format!("{sign}{}", d / 1_000_000_000);
            format!("{secs:>6}.{:06}", d % 1_000_000_000 / 1000)
        }
        TimeFormat::Clock | TimeFormat::ClockMicros => {
            // Local time, as strace shows it (TZ honoured).
            let t = secs as libc::time_t;
            // SAFETY: libc::tm is plain integers (and a pointer), for which zeroes are valid.
            let mut tm: libc::tm = unsafe { std::mem::zeroed() };
            // SAFETY: localtime_r reads t and writes the tm it is given, both live here.
            let ok = !unsafe { libc::localtime_r(&t, &mut tm) }.is_null();
            let (h, m, s) = if ok {
                (tm.tm_hour as i64, tm.tm_min as i64, tm.tm_sec as i64)
            } else {
                let d = secs.rem_euclid(86_400);
                (d / 3600, d / 60 % 60, d % 60)
            };
            if f == TimeFormat::Clock {
                format!("{h:02}:{m:02}:{s:02}")
            } else {
                format!("{h:02}:{m:02}:{s:02}.{:06}", nanos / 1000)
            }
        }
    }
}

fn fmt_struct(out: &mut String, s: Struct, b: &[u8], strsize: usize) {
    match s {
        Struct::Stat => {
            if let Some(st) = Stat::decode(b) {
                let _ = write!(
                    out,
                    "{{st_dev={}, st_ino={}, st_mode={}, st_nlink={}, st_uid={}, st_gid={}, st_size={}, st_mtime={}}}",
                    st.dev, st.ino, mode_str(st.mode), st.nlink, st.uid, st.gid, st.size,
                    time_str(st.mtime_ns)
                );
                return;
            }
        }
        Struct::Statx => {
            if let Some(st) = Statx::decode(b) {
                let _ = write!(
                    out,
                    "{{stx_mask={:#x}, stx_mode={}, stx_size={}, stx_ino={}, stx_uid={}, stx_gid={}, stx_mtime={}}}",
                    st.mask, mode_str(st.mode.into()), st.size, st.ino, st.uid, st.gid,
                    time_str(st.mtime_ns)
                );
                return;
            }
        }
        Struct::Statfs => {
            if let Some(st) = Statfs::decode(b) {
                let _ = write!(
                    out,
                    "{{f_type={:#x}, f_bsize={}, f_blocks={}, f_bfree={}, f_bavail={}, f_files={}, f_ffree={}}}",
                    st.fs_type, st.bsize, st.blocks, st.bfree, st.bavail, st.files, st.ffree
                );
                return;
            }
        }
        Struct::Dirents | Struct::Dirents64 => {
            let d = if s == Struct::Dirents {
                crate::structs::parse_dirents(b)
            } else {
                crate::structs::parse_dirents64(b)
            };
            out.push('[');
            for (i, e) in d.iter().take(8).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                quoted(out, &e.name, strsize);
            }
            if d.len() > 8 {
                out.push_str(", ...");
            }
            let _ = write!(out, "] /* {} entries */", d.len());
            return;
        }
        Struct::UringParams if b.len() >= ra_syscalls::uring::params::SIZE => {
            use ra_syscalls::uring::params::*;
            let f = |at| field(b, at).unwrap_or(0);
            let _ = write!(
                out,
                "{{sq_entries={}, cq_entries={}, flags={:#x}, sq_thread_cpu={}, \
                 sq_thread_idle={}, features={:#x}, wq_fd={}}}",
                f(SQ_ENTRIES),
                f(CQ_ENTRIES),
                f(FLAGS),
                f(SQ_THREAD_CPU),
                f(SQ_THREAD_IDLE),
                f(FEATURES),
                f(WQ_FD)
            );
            return;
        }
        Struct::FdPair if b.len() >= 8 => {
            let a = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let z = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            let _ = write!(out, "[{a}, {z}]");
            return;
        }
        _ => {}
    }
    quoted(out, b, strsize);
}

/// Render one argument.
pub fn format_arg(out: &mut String, kind: ArgKind, v: &ArgValue, strsize: usize) {
    fmt_arg(out, kind, v, &FormatOptions { strsize, ..FormatOptions::default() })
}

fn fmt_arg(out: &mut String, kind: ArgKind, v: &ArgValue, o: &FormatOptions) {
    let strsize = o.strsize;
    let quoted = |out: &mut String, b: &[u8], n: usize| quoted_hex(out, b, n, o.hex);
    match (kind, v) {
        (_, ArgValue::NotCaptured) => out.push_str("<not captured>"),
        (_, ArgValue::Hashed { len, blake3 }) => {
            let _ = write!(out, "<{len} bytes, blake3 ");
            ra_hex::push_str(out, &blake3[..8]);
            out.push_str("..>");
        }
        (k, ArgValue::Absent) if k.is_pointer_data() => out.push_str("NULL"),
        (_, ArgValue::Absent) => out.push('?'),
        (ArgKind::DirFd, ArgValue::Int(-100)) => match o.flags {
            FlagStyle::Abbrev => out.push_str("AT_FDCWD"),
            FlagStyle::Raw => out.push_str("-100"),
            FlagStyle::Verbose => out.push_str("-100 /* AT_FDCWD */"),
        },
        (ArgKind::Flags(set), ArgValue::Int(x)) => match o.flags {
            FlagStyle::Abbrev => out.push_str(&set.format(*x as u64)),
            FlagStyle::Raw => {
                let _ = write!(out, "{:#x}", *x as u64);
            }
            FlagStyle::Verbose => {
                let _ = write!(out, "{:#x} /* {} */", *x as u64, set.format(*x as u64));
            }
        },
        (ArgKind::Mode, ArgValue::Int(0)) => out.push('0'),
        (ArgKind::Mode, ArgValue::Int(x)) => {
            let _ = write!(out, "0{x:o}");
        }
        (ArgKind::Addr, ArgValue::Int(x)) => {
            let _ = write!(out, "{:#x}", x);
        }
        (_, ArgValue::Int(x)) => push_int(out, *x),
        (k, ArgValue::Data(d)) if k.is_c_string() => quoted(
            out,
            d.strip_suffix(&[0]).unwrap_or(d),
            if k == ArgKind::Path { 0 } else { strsize },
        ),
        (
            ArgKind::InStruct(s, _) | ArgKind::OutStruct(s, _) | ArgKind::InOutStruct(s, _),
            ArgValue::Data(d),
        ) => fmt_struct(out, s, d, strsize),
        (_, ArgValue::Data(d)) if o.hex != Hex::NonPrintable => quoted(out, d, strsize),
        (_, ArgValue::Data(d)) => quoted(out, d, strsize),
        (_, ArgValue::Iov(v)) => {
            out.push('[');
            for (i, iov) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str("{iov_base=");
                match &iov.data {
                    Some(d) => quoted(out, d, strsize),
                    None => out.push('?'),
                }
                let _ = write!(out, ", iov_len={}}}", iov.requested);
            }
            out.push(']');
        }
        (_, ArgValue::Strings(v)) => {
            out.push('[');
            for (i, s) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                quoted(out, s, strsize);
            }
            out.push(']');
        }
    }
}

/// `name` as `strace -y` appends it to a descriptor: `<name>`, bytes that are not printable
/// escaped.
fn push_fd_name(s: &mut String, name: &[u8]) {
    s.push('<');
    escape_bytes(s, name);
    s.push('>');
}

/// One strace-like line: `ID TIME [TID] call(args) = ret ERRNO <duration>`.
pub fn format_event(ev: &Event, o: &FormatOptions) -> String {
    format_event_fds(ev, o, None)
}

/// A signal's name as strace gives it: `SIGCHLD`, real-time signals `SIGRT_N` (signal 32 + N).
pub fn signal_name(sig: i32) -> String {
    match sig {
        32..=64 => format!("SIGRT_{}", sig - 32),
        _ => ra_syscalls::flags::SIGNAL.format(sig as u64),
    }
}

/// A delivered signal (`signal_deliver`) as strace shows it:
/// `--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=1234, si_uid=0, si_status=0,
/// si_utime=0, si_stime=0} ---`, the members its `si_code` carries
/// ([`ra_syscalls::siginfo::layout`]).
pub fn signal_line(ev: &Event) -> String {
    use ra_syscalls::siginfo::{code_name, layout, Layout};
    let int = |n: &str| ev.arg(n).and_then(ArgValue::as_int).unwrap_or(0);
    let signo = int("signo") as i32;
    let code = int("code") as i32;
    let name = signal_name(signo);
    let mut s = format!("--- {name} {{si_signo={name}, si_code=");
    match code_name(signo, code) {
        Some(c) => s.push_str(c),
        None => {
            let _ = write!(s, "{code}");
        }
    }
    let errno = int("errno") as i32;
    if errno != 0 {
        match errno_name(errno) {
            Some(e) => {
                let _ = write!(s, ", si_errno={e}");
            }
            None => {
                let _ = write!(s, ", si_errno={errno}");
            }
        }
    }
    let sender = |s: &mut String| {
        let _ = write!(s, ", si_pid={}, si_uid={}", int("pid"), int("uid"));
    };
    let value = |s: &mut String| {
        let v = int("value");
        let _ = write!(s, ", si_int={}, si_ptr={:#x}", v as i32, v as u64);
    };
    let addr = |s: &mut String, what: &str| match int("addr") as u64 {
        0 => {
            let _ = write!(s, ", {what}=NULL");
        }
        a => {
            let _ = write!(s, ", {what}={a:#x}");
        }
    };
    match layout(signo, code) {
        Layout::Plain => {}
        Layout::Kill => sender(&mut s),
        Layout::Rt => {
            sender(&mut s);
            value(&mut s);
        }
        Layout::Timer => value(&mut s),
        Layout::Chld => {
            sender(&mut s);
            let status = int("status");
            // CLD_EXITED: the exit status; the others: the signal that ended or stopped it.
            if code == 1 {
                let _ = write!(s, ", si_status={status}");
            } else {
                let _ = write!(s, ", si_status={}", signal_name(status as i32));
            }
            let _ = write!(s, ", si_utime={}, si_stime={}", int("utime"), int("stime"));
        }
        Layout::Fault => addr(&mut s, "si_addr"),
        Layout::Poll => {
            let _ = write!(s, ", si_band={}", int("value"));
        }
        Layout::Sys => {
            addr(&mut s, "si_call_addr");
            let _ = write!(s, ", si_syscall={}", int("value"));
        }
    }
    s.push_str("} ---");
    s
}

/// [`format_event`], each descriptor followed by what it refers to as `strace -y` shows it
/// (`read(3</etc/hostname>, ...`, `= 3</etc/hostname>`), from `fds`
/// ([`crate::fileio::FileIoTracker::event_fds`]); `fds` `None` gives [`format_event`]'s
/// line. `dump` and the `record --print` printer ([`crate::live`]) call it.
pub fn format_event_fds(
    ev: &Event,
    o: &FormatOptions,
    fds: Option<&crate::fileio::EventFds>,
) -> String {
    let mut s = String::with_capacity(128);
    push_int_right(&mut s, ev.unique_id, 6);
    s.push(' ');
    if o.show_time {
        match ev.time_called {
            Some(t) if o.time_format == TimeFormat::Epoch && o.time_base.is_none() => {
                push_secs(&mut s, t, 9)
            }
            Some(t) => s.push_str(&format_time(t, o.time_format, o.time_base)),
            None => s.push('?'),
        }
        s.push(' ');
    }
    s.push('[');
    match (ev.pid, ev.tid) {
        (Some(p), Some(t)) if p != t => {
            push_int(&mut s, p);
            s.push('/');
            push_int(&mut s, t);
        }
        (_, Some(t)) | (Some(t), None) => push_int(&mut s, t),
        (None, None) => s.push('?'),
    }
    s.push_str("] ");
    if ev.def.is_some_and(|d| d.is_signal()) {
        s.push_str(&signal_line(ev));
        return s;
    }
    let mut uring =
        ev.def.is_some_and(|d| d.replay.handler() == Some(ra_syscalls::Handler::UringOp));
    // A path request (or a close) as the call it stands for: `[uring 5] openat(AT_FDCWD,
    // "f", O_RDONLY, 0)`, its descriptors named as the call's (`fds` is of that call).
    let call = if uring { crate::uring::as_call(ev) } else { None };
    let shown = call.as_ref().unwrap_or(ev);
    if let Some(c) = &call {
        push_uring_prefix(&mut s, ev);
        s.push_str(&c.name);
        s.push('(');
        uring = false;
    } else if uring {
        fmt_uring_op(&mut s, ev, o, fds);
    } else {
        s.push_str(&ev.name);
        s.push('(');
    }
    if uring {
    } else if let Some(def) = shown.def {
        let ev = shown;
        let no_result = ev.failed() || ev.ret.is_none();
        for (i, (a, v)) in def.args.iter().zip(&ev.args).enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            if no_result && a.kind.is_output() && *v == ArgValue::Absent {
                // Nothing was written by the kernel; the pointer itself was not NULL.
                s.push('?');
                continue;
            }
            match a.kind {
                ArgKind::InStruct(Struct::UringRegister, _) if fmt_registration(ev).is_some() => {
                    s.push_str(&fmt_registration(ev).unwrap_or_default());
                }
                _ => fmt_arg(&mut s, a.kind, v, o),
            }
            if let Some(name) = fds.and_then(|f| f.args.get(i)?.as_deref()) {
                push_fd_name(&mut s, name);
            }
        }
    } else {
        for (i, (k, v)) in ev.extra.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{k}=");
            match v {
                ExtraValue::Null => s.push_str("null"),
                ExtraValue::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
                ExtraValue::Int(x) => {
                    let _ = write!(s, "{x}");
                }
                ExtraValue::DoubleBits(b) => {
                    let _ = write!(s, "{}", f64::from_bits(*b));
                }
                ExtraValue::Bytes(b) => quoted(&mut s, b, o.strsize),
            }
        }
    }
    if !uring {
        // (fmt_uring_op closes its own, then adds the SQE's flags)
        s.push(')');
    }
    if call.is_some() {
        push_sqe_flags(&mut s, ev);
        uring = true;
    }
    match ev.ret {
        Some(r) => {
            let hex = ev.def.is_some_and(|d| d.ret == ra_syscalls::Ret::Addr) && r > 0;
            if hex {
                let _ = write!(s, " = {r:#x}");
            } else {
                s.push_str(" = ");
                push_int(&mut s, r);
            }
            if let Some(name) = fds.and_then(|f| f.ret.as_deref()) {
                push_fd_name(&mut s, name);
            }
        }
        None => s.push_str(" = ?"),
    }
    if let Some(e) = ev.errno.filter(|&e| e != 0) {
        match errno_name(e) {
            Some(n) => {
                let _ = write!(s, " {n}");
            }
            None => {
                let _ = write!(s, " errno {e}");
            }
        }
    }
    let passed = ev.scm_rights();
    if !passed.is_empty() {
        let fds: Vec<String> = passed.iter().map(i32::to_string).collect();
        let _ = write!(s, " (SCM_RIGHTS [{}])", fds.join(", "));
    }
    // What a kernel-side copy moved (sendfile, copy_file_range, splice): in the trace, never
    // in the program's memory, so no argument shows it.
    if let Some(moved) = ev.extra_bytes(crate::schema::COPIED_DATA) {
        s.push_str(" (data ");
        quoted(&mut s, moved, o.strsize);
        s.push(')');
    }
    if ev.extra.iter().any(|(k, v)| k == "synthetic" && *v == ExtraValue::Bool(true)) {
        s.push_str(" (synthetic)");
    }
    if ev.generated() {
        s.push_str(" (generated: killed between calls)");
    }
    if uring {
        // From submission to completion, always: what a request's latency is.
        if let Some(d) = ev.duration_ns() {
            let _ = write!(s, " <{}.{:03} us>", d / 1000, (d % 1000).abs());
        }
    } else if o.show_duration {
        if let Some(d) = ev.duration_ns() {
            s.push_str(" <");
            if d < 0 {
                // (clocks that went backwards: the sign, then the magnitude, as before)
                let _ = write!(s, "{}.{:09}", d / 1_000_000_000, (d % 1_000_000_000).abs());
            } else {
                push_secs(&mut s, d, 9);
            }
            s.push('>');
        }
    }
    s
}

/// An io_uring request (`io_uring_op`) as the call it stands for, up to its closing
/// parenthesis: `[uring 5] write(3</data/f>, "...", 4096, 8192)` (ring descriptor 5; `[fixed
/// 2]` for a registered file; the offset left out when it is the file position), then its
/// SQE flags (`IOSQE_IO_LINK`, ...). Opcodes without a decoder show their SQE.
fn fmt_uring_op(
    s: &mut String,
    ev: &Event,
    o: &FormatOptions,
    fds: Option<&crate::fileio::EventFds>,
) {
    use ra_syscalls::uring::{self, UringData};
    let int = |n: &str| ev.arg(n).and_then(ArgValue::as_int);
    push_uring_prefix(s, ev);
    let opcode = int("opcode").unwrap_or(-1);
    let Some(op) = uring::lookup(opcode) else {
        let _ = write!(s, "opcode_{opcode}(");
        if let Some(ArgValue::Data(q)) = ev.arg("sqe") {
            s.push_str("sqe=");
            quoted_hex(s, q, q.len(), Hex::All);
        }
        s.push(')');
        return;
    };
    let sqe_flags = int("sqe_flags").unwrap_or(0) as u8;
    let op_flags = int("op_flags").unwrap_or(0) as u32;
    let name = match op.name {
        "fsync" if op_flags & uring::IORING_FSYNC_DATASYNC != 0 => "fdatasync",
        n => n,
    };
    s.push_str(name);
    s.push('(');
    let fd = int("fd").unwrap_or(-1);
    if sqe_flags & uring::IOSQE_FIXED_FILE != 0 {
        // The descriptor the slot was registered from and its file, when the trace shows
        // the registration: `3</data/f>[fixed 0]`.
        if let Some(from) = fds.and_then(|f| f.fixed_fd) {
            let _ = write!(s, "{from}");
            let at = ev.def.and_then(|d| d.arg("fd")).map(|(i, _)| i);
            if let Some(name) = at.and_then(|i| fds.and_then(|f| f.args.get(i)?.as_deref())) {
                push_fd_name(s, name);
            }
        }
        let _ = write!(s, "[fixed {fd}]");
    } else if op.syscall.is_none() {
        // io_uring's own operations (nop, timeouts, futexes): `fd` names no file.
        let _ = write!(s, "{fd}");
    } else {
        let _ = write!(s, "{fd}");
        let at = ev.def.and_then(|d| d.arg("fd")).map(|(i, _)| i);
        if let Some(name) = at.and_then(|i| fds.and_then(|f| f.args.get(i)?.as_deref())) {
            push_fd_name(s, name);
        }
    }
    let off = int("offset").unwrap_or(0);
    let len = int("len").unwrap_or(0);
    let push_off = |s: &mut String| {
        // -1: the file position (read/write without an offset)
        if off != -1 {
            let _ = write!(s, ", {off}");
        }
    };
    match op.data {
        UringData::In | UringData::Out => {
            let buf = if op.data == UringData::In { "buf_in" } else { "buf_out" };
            s.push_str(", ");
            match ev.arg(buf) {
                Some(v @ (ArgValue::Data(_) | ArgValue::NotCaptured | ArgValue::Hashed { .. })) => {
                    fmt_arg(s, ArgKind::InBuf(ra_syscalls::Len::Ret), v, o)
                }
                _ => {
                    let _ = write!(s, "{:#x}", int("addr").unwrap_or(0));
                }
            }
            let _ = write!(s, ", {len}");
            push_off(s);
            push_fixed_buffer(s, ev, fds);
        }
        UringData::InVec | UringData::OutVec => {
            let _ = write!(s, ", {:#x}, {len}", int("addr").unwrap_or(0));
            push_off(s);
        }
        UringData::None if op.decoded => {
            let _ = write!(s, ", {:#x}, {len}, {off}, {op_flags:#x}", int("addr").unwrap_or(0));
        }
        UringData::None => {
            if let Some(ArgValue::Data(q)) = ev.arg("sqe") {
                s.push_str(", sqe=");
                quoted_hex(s, q, q.len(), Hex::All);
            }
        }
    }
    s.push(')');
    push_sqe_flags(s, ev);
}

/// A `READ_FIXED`/`WRITE_FIXED` request's registered buffer: `, buf 1={0x7f..., 4096}`
/// (`buf 1=?` when the trace does not show the registration).
fn push_fixed_buffer(s: &mut String, ev: &Event, fds: Option<&crate::fileio::EventFds>) {
    if !ev.uring_op().is_some_and(|o| o.name.ends_with("_fixed")) {
        return;
    }
    let index = ev.arg("buf_index").and_then(ArgValue::as_int).unwrap_or(0);
    match fds.and_then(|f| f.fixed_buffer) {
        Some((addr, len)) => {
            let _ = write!(s, ", buf {index}={{{addr:#x}, {len}}}");
        }
        None => {
            let _ = write!(s, ", buf {index}=?");
        }
    }
}

/// io_uring_register's files or buffers: `{fds=[3, 4, -1]}`, `{offset=2, fds=[5]}`,
/// `{sparse, 8 slots}`, `{buffers=[{0x7f..., 4096}]}`; `...` after the slots the recorder
/// read when it cut the array. None when the record does not say (then the bytes are shown).
fn fmt_registration(ev: &Event) -> Option<String> {
    let r = ev.uring_registration()?;
    let r = match r {
        // (An unregister's argument is NULL.)
        Ok(Some(r)) if r.unregister => return None,
        Ok(Some(r)) => r,
        Ok(None) => return None,
        Err(e) => return Some(format!("/* corrupt: {e} */")),
    };
    let mut s = String::from("{");
    if r.update {
        let _ = write!(s, "offset={}, ", r.offset);
    }
    if r.sparse {
        let _ = write!(s, "sparse, {} slots", r.count);
    } else if !r.fds.is_empty() || r.buffers.is_empty() {
        let v: Vec<String> = r.fds.iter().map(i32::to_string).collect();
        let _ = write!(s, "fds=[{}{}]", v.join(", "), if r.cut { ", ..." } else { "" });
    } else {
        let v: Vec<String> = r.buffers.iter().map(|(a, n)| format!("{{{a:#x}, {n}}}")).collect();
        let _ = write!(s, "buffers=[{}{}]", v.join(", "), if r.cut { ", ..." } else { "" });
    }
    s.push('}');
    Some(s)
}

/// `[uring 5] `: the ring's descriptor in the submitting call.
fn push_uring_prefix(s: &mut String, ev: &Event) {
    match ev.arg("ring_fd").and_then(ArgValue::as_int).filter(|&fd| fd >= 0) {
        Some(fd) => {
            let _ = write!(s, "[uring {fd}] ");
        }
        None => s.push_str("[uring ?] "),
    }
}

/// The SQE's flags after a request: ` IOSQE_IO_LINK`.
fn push_sqe_flags(s: &mut String, ev: &Event) {
    use ra_syscalls::uring;
    let sqe_flags = ev.arg("sqe_flags").and_then(ArgValue::as_int).unwrap_or(0) as u8;
    for (bit, n) in [
        (uring::IOSQE_IO_LINK, "IOSQE_IO_LINK"),
        (uring::IOSQE_IO_HARDLINK, "IOSQE_IO_HARDLINK"),
        (uring::IOSQE_IO_DRAIN, "IOSQE_IO_DRAIN"),
        (uring::IOSQE_ASYNC, "IOSQE_ASYNC"),
        (uring::IOSQE_BUFFER_SELECT, "IOSQE_BUFFER_SELECT"),
    ] {
        if sqe_flags & bit != 0 {
            let _ = write!(s, " {n}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel-side copy shows what it moved: the bytes are in the trace (`data_copied`),
    /// never in an argument (the text dump left them out while jsonl had them).
    #[test]
    fn a_copy_shows_the_data_it_moved() {
        let def = ra_syscalls::lookup("copy_file_range").unwrap();
        let mut ev = Event::new(def);
        ev.ret = Some(6);
        ev.extra.push((crate::schema::COPIED_DATA.into(), ExtraValue::Bytes(b"hello\n".to_vec())));
        let o = FormatOptions { show_time: false, show_duration: false, ..Default::default() };
        let line = format_event(&ev, &o);
        assert!(line.ends_with(" = 6 (data \"hello\\n\")"), "{line}");
        let o = FormatOptions { strsize: 2, ..o };
        assert!(format_event(&ev, &o).ends_with(" = 6 (data \"he\"...)"));
    }
}

/// `ev` with every buffer that [`format_event`] cuts at `strsize` (`0`: none) cut one byte
/// after it (so the `...` still shows), copied: what a live printer holds while the call's
/// line waits to be printed, in bytes bounded by `strsize` and the call's paths and structs
/// (shown whole), however large the call's buffers. `format_event(&preview(ev, s), o)` is
/// `format_event(ev, o)` for `o.strsize == s`.
pub fn preview(ev: &Event, strsize: usize) -> Event {
    let cut = |d: &[u8]| -> crate::Bytes {
        let n = if strsize == 0 { d.len() } else { d.len().min(strsize + 1) };
        d[..n].to_vec().into()
    };
    let kinds = ev.def.map(|d| d.args).unwrap_or_default();
    let args = ev
        .args
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let kind = kinds.get(i).map(|a| a.kind);
            let whole = kind.is_some_and(|k| {
                k.is_c_string()
                    || matches!(
                        k,
                        ArgKind::InStruct(..) | ArgKind::OutStruct(..) | ArgKind::InOutStruct(..)
                    )
            });
            match v {
                ArgValue::Data(d) if !whole => ArgValue::Data(cut(d)),
                ArgValue::Iov(v) => ArgValue::Iov(
                    v.iter()
                        .map(|iov| crate::IovValue {
                            requested: iov.requested,
                            data: iov.data.as_deref().map(cut),
                        })
                        .collect(),
                ),
                other => other.clone(),
            }
        })
        .collect();
    let extra = ev
        .extra
        .iter()
        .map(|(k, v)| {
            let v = match v {
                ExtraValue::Bytes(b) if strsize > 0 && b.len() > strsize + 1 => {
                    ExtraValue::Bytes(b[..strsize + 1].to_vec())
                }
                other => other.clone(),
            };
            (k.clone(), v)
        })
        .collect();
    Event { args, extra, name: ev.name.clone(), ..*ev }
}

#[cfg(test)]
mod preview_tests {
    use super::*;

    /// The hand-made number writers write what `format!` writes.
    #[test]
    fn number_writers_are_formats() {
        for ns in
            [0i64, 1, 999_999_999, 1_000_000_000, 1_796_355_846_162_880_040, -1, -1_500_000_000]
        {
            let mut s = String::new();
            push_secs(&mut s, ns, 9);
            assert_eq!(
                s,
                format!("{}.{:09}", ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000))
            );
            assert_eq!(time_str(ns), s);
            let mut s = String::new();
            push_secs(&mut s, ns, 6);
            let want = format!(
                "{}.{:06}",
                ns.div_euclid(1_000_000_000),
                ns.rem_euclid(1_000_000_000) / 1000
            );
            assert_eq!(s, want);
        }
        for x in [0u64, 7, 123_456, 1_234_567, u64::MAX] {
            let mut s = String::new();
            push_int_right(&mut s, x, 6);
            assert_eq!(s, format!("{x:>6}"));
        }
        for x in [i64::MIN, -100, 0, 4096, i64::MAX] {
            let mut s = String::new();
            push_int(&mut s, x);
            assert_eq!(s, x.to_string());
        }
    }

    /// A preview prints as the event does, and holds a 1 MiB write's first bytes only.
    #[test]
    fn a_preview_prints_as_the_event_and_holds_little() {
        let mut w = Event::new(ra_syscalls::lookup("write").unwrap());
        w.args =
            vec![ArgValue::Int(3), ArgValue::data(vec![b'x'; 1 << 20]), ArgValue::Int(1 << 20)];
        w.ret = Some(1 << 20);
        let mut o = Event::new(ra_syscalls::lookup("openat").unwrap());
        o.args[0] = ArgValue::Int(-100);
        o.args[1] = ArgValue::data(vec![b'p'; 300].into_iter().chain([0]).collect::<Vec<u8>>());
        o.ret = Some(3);
        let mut v = Event::new(ra_syscalls::lookup("writev").unwrap());
        v.args[1] = ArgValue::Iov(vec![
            crate::IovValue { requested: 100, data: Some(vec![b'a'; 100].into()) },
            crate::IovValue { requested: 2, data: Some(b"bc".to_vec().into()) },
        ]);
        v.ret = Some(102);
        for ev in [&w, &o, &v] {
            for s in [0, 1, 32] {
                let f = FormatOptions { strsize: s, ..FormatOptions::default() };
                assert_eq!(format_event(&preview(ev, s), &f), format_event(ev, &f));
            }
        }
        assert!(preview(&w, 32).memory_bytes() < 4096, "{}", preview(&w, 32).memory_bytes());
    }
}

//! How many bits of each argument register the kernel reads.
//!
//! A 32-bit C argument arrives in a 64-bit register whose upper half the caller need not
//! clear (glibc's variadic `fcntl`, hand-written assembly, a compiler reusing a register):
//! the kernel reads only the low half. A trace must record what the kernel read, or a replay
//! passes the garbage on (`getdents64` with such a count fails with EINVAL; `fcntl`'s
//! command would not be recognised). The width comes from the C type of the argument in the
//! registry's prototype, corrected where the kernel's own declaration (`SYSCALL_DEFINE`)
//! differs from the man page's.

use std::sync::OnceLock;

use crate::{SyscallDef, REGISTRY};

/// How the kernel reads one argument register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// All 64 bits (pointers, `long`, `size_t`, `off_t`).
    Full,
    /// The low 32 bits, sign-extended (`int`, `pid_t`; `uid_t`/`gid_t`, whose -1 means
    /// "unchanged").
    I32,
    /// The low 32 bits, zero-extended (`unsigned int`, `socklen_t`, `dev_t` of `mknod`).
    U32,
    /// The low 16 bits, zero-extended (`umode_t`: every `mode_t` the kernel takes).
    U16,
}

impl Width {
    /// The value the kernel sees in a register holding `raw`.
    pub fn apply(self, raw: u64) -> i64 {
        match self {
            Width::Full => raw as i64,
            Width::I32 => raw as u32 as i32 as i64,
            Width::U32 => raw as u32 as i64,
            Width::U16 => raw as u16 as i64,
        }
    }

    /// The width of a C parameter type as the kernel declares it; `None` if unknown.
    pub fn of_c_type(ty: &str) -> Option<Width> {
        let ty = ty.trim();
        if ty.contains('*') || ty.contains('[') {
            return Some(Width::Full);
        }
        let ty = ty.strip_prefix("const ").unwrap_or(ty);
        Some(match ty {
            // uid_t and gid_t are unsigned, but their one special value is (uid_t) -1
            // ("unchanged" for chown): recorded as -1 (the same 32 bits), as strace shows it.
            "int" | "pid_t" | "clockid_t" | "key_t" | "timer_t" | "idtype_t" | "uid_t"
            | "gid_t" | "id_t" => Width::I32,
            "unsigned int" | "unsigned" | "socklen_t" | "u32" | "__u32" => Width::U32,
            "mode_t" | "umode_t" => Width::U16,
            "long" | "unsigned long" | "size_t" | "ssize_t" | "off_t" | "off64_t" | "loff_t"
            | "dev_t" | "ino_t" | "nfds_t" | "u64" | "__u64" | "rlim_t" | "aio_context_t" => {
                Width::Full
            }
            _ => return None,
        })
    }
}

/// Arguments whose kernel type differs from the prototype's: (call, argument, kernel type).
/// From the kernel's `SYSCALL_DEFINE`s (fs/readdir.c, fs/select.c, fs/namei.c, fs/ioctl.c,
/// fs/read_write.c, mm/mmap.c).
const KERNEL_TYPES: &[(&str, &str, &str)] = &[
    // SYSCALL_DEFINE3(getdents64, unsigned int, fd, ..., unsigned int, count)
    ("getdents64", "count", "unsigned int"),
    // SYSCALL_DEFINE3(poll, struct pollfd __user *, ufds, unsigned int, nfds, int, ...)
    ("poll", "nfds", "unsigned int"),
    // SYSCALL_DEFINE3(mknod, ..., umode_t, mode, unsigned, dev) (and mknodat)
    ("mknod", "dev", "unsigned int"),
    ("mknodat", "dev", "unsigned int"),
    // SYSCALL_DEFINE3(ioctl, unsigned int, fd, unsigned int, cmd, unsigned long, arg)
    ("ioctl", "request", "unsigned int"),
    ("ioctl", "cmd", "unsigned int"),
    // SYSCALL_DEFINE3(lseek, unsigned int, fd, off_t, offset, unsigned int, whence)
    ("lseek", "whence", "unsigned int"),
    // SYSCALL_DEFINE3(fcntl, unsigned int, fd, unsigned int, cmd, unsigned long, arg)
    ("fcntl", "cmd", "unsigned int"),
    // SYSCALL_DEFINE6(mmap, ..., unsigned long, prot, unsigned long, flags, unsigned long, fd,
    // unsigned long, off): prot and flags are read whole (high bits fail with EINVAL).
    ("mmap", "prot", "unsigned long"),
    ("mmap", "flags", "unsigned long"),
    ("mprotect", "prot", "unsigned long"),
    // SYSCALL_DEFINE5(mremap, ..., unsigned long, flags, ...)
    ("mremap", "flags", "unsigned long"),
    // SYSCALL_DEFINE3(msync, unsigned long, start, size_t, len, int, flags)
    // SYSCALL_DEFINE3(madvise, unsigned long, start, size_t, len_in, int, behavior)
];

/// The C type and name of each parameter of a prototype (`int fd` -> ("int", "fd"),
/// `const char *pathname` -> ("const char *", "pathname"), `int fds[2]` -> ("int[]", "fds"),
/// `...` -> ("...", "")), in order; `None` for a prototype that does not parse.
fn params(proto: &str) -> Option<Vec<(String, &str)>> {
    let open = proto.find('(')?;
    let close = proto.rfind(')')?;
    let inner = proto.get(open + 1..close)?.trim();
    if inner.is_empty() || inner == "void" {
        return Some(Vec::new());
    }
    inner
        .split(',')
        .map(|p| {
            let p = p.trim();
            if p == "..." {
                return Some(("...".to_string(), ""));
            }
            // The name is the last identifier; an array suffix stays with the type.
            let (decl, array) = match p.find('[') {
                Some(i) => (&p[..i], "[]"),
                None => (p, ""),
            };
            let name_start = decl.rfind(|c: char| !(c.is_alphanumeric() || c == '_'))? + 1;
            Some((format!("{}{array}", decl[..name_start].trim()), &decl[name_start..]))
        })
        .collect()
}

/// The widths of `def`'s arguments, computed from its prototype and [`KERNEL_TYPES`].
/// Arguments the prototype does not name (registers the kernel splits, such as `preadv2`'s
/// offset halves) are read whole.
fn compute(def: &SyscallDef) -> Vec<Width> {
    let params = params(def.proto).unwrap_or_default();
    def.args
        .iter()
        .map(|a| {
            if let Some((_, _, t)) =
                KERNEL_TYPES.iter().find(|(c, n, _)| *c == def.name && *n == a.name)
            {
                return Width::of_c_type(t).unwrap_or(Width::Full);
            }
            params
                .iter()
                .find(|(_, n)| *n == a.name)
                .and_then(|(t, _)| Width::of_c_type(t))
                .unwrap_or(Width::Full)
        })
        .collect()
}

/// The widths of every registry entry's arguments, computed once.
fn table() -> &'static [Vec<Width>] {
    static T: OnceLock<Vec<Vec<Width>>> = OnceLock::new();
    T.get_or_init(|| REGISTRY.iter().map(compute).collect())
}

impl SyscallDef {
    /// How the kernel reads each argument register (same order as `args`).
    pub fn arg_widths(&self) -> &'static [Width] {
        let base = REGISTRY.as_ptr() as usize;
        let at = (self as *const SyscallDef as usize).wrapping_sub(base)
            / std::mem::size_of::<SyscallDef>();
        match table().get(at) {
            Some(w) if std::ptr::eq(&REGISTRY[at], self) => w,
            // Not a registry entry (a test's own definition): every register read whole.
            _ => &[],
        }
    }

    /// The value the kernel sees in argument `i`'s register holding `raw`.
    pub fn arg_value(&self, i: usize, raw: u64) -> i64 {
        self.arg_widths().get(i).copied().unwrap_or(Width::Full).apply(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every prototype parses, every argument is a parameter of its prototype (or a register
    /// the entry documents as split), and every parameter type has a known width.
    #[test]
    fn every_argument_has_a_width_from_its_prototype() {
        let mut problems = Vec::new();
        for d in REGISTRY {
            let Some(params) = params(d.proto) else {
                problems.push(format!("{}: prototype does not parse: {}", d.name, d.proto));
                continue;
            };
            for a in d.args {
                match params.iter().find(|(_, n)| *n == a.name) {
                    None if d.is_pseudo() => {}
                    None => problems.push(format!("{}: {} is not in {}", d.name, a.name, d.proto)),
                    Some((t, _)) if t != "..." && Width::of_c_type(t).is_none() => {
                        problems.push(format!("{}: {} has unknown type {t:?}", d.name, a.name))
                    }
                    Some(_) => {}
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn the_kernel_widths_of_known_arguments() {
        let w = |call: &str, arg: &str| {
            let d: &'static SyscallDef = crate::lookup(call).unwrap();
            let (i, _) = d.arg(arg).unwrap();
            d.arg_widths()[i]
        };
        assert_eq!(w("getdents64", "count"), Width::U32);
        assert_eq!(w("read", "count"), Width::Full);
        assert_eq!(w("fcntl", "cmd"), Width::U32);
        assert_eq!(w("fcntl", "arg"), Width::Full);
        assert_eq!(w("openat", "flags"), Width::I32);
        assert_eq!(w("openat", "mode"), Width::U16);
        assert_eq!(w("openat", "dirfd"), Width::I32);
        assert_eq!(w("mmap", "flags"), Width::Full);
        assert_eq!(w("lseek", "whence"), Width::U32);
        let d: &'static SyscallDef = crate::lookup("getdents64").unwrap();
        assert_eq!(d.arg_value(2, 0xdead_beef_0000_1000), 0x1000);
        assert_eq!(Width::I32.apply(0xffff_ffff_ffff_ff9c), -100);
        assert_eq!(Width::I32.apply(0x1234_5678_ffff_ff9c), -100);
    }
}

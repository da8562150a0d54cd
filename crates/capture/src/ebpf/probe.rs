//! Can the eBPF backend run here? Each check names what is missing and how to fix it. The
//! last one loads and attaches the real programs (and detaches them at once): the kernel's
//! own answer, whatever the configuration.

use std::sync::Mutex;

use crate::Unavailable;

/// CAP_SYS_ADMIN, CAP_PERFMON, CAP_BPF (linux/capability.h).
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;

fn effective_caps() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let v = s.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    u64::from_str_radix(v.trim(), 16).ok()
}

/// The checks that need no BPF: architecture, privileges, kernel BTF.
pub fn static_checks() -> Result<(), Unavailable> {
    if !cfg!(target_arch = "x86_64") {
        return Err(Unavailable {
            missing: "the eBPF backend reads x86_64 syscall registers and numbers".into(),
            fix: "use --backend ptrace on this architecture".into(),
        });
    }
    let caps = effective_caps().unwrap_or(0);
    let has = |c: u32| caps & (1u64 << c) != 0;
    if !(has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON))) {
        // SAFETY: geteuid takes no arguments.
        let uid = unsafe { libc::geteuid() };
        return Err(Unavailable {
            missing: format!(
                "loading tracing BPF programs needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN); \
                 this process (uid {uid}) has neither in its effective set (CapEff {caps:#x})"
            ),
            fix: "run as root (sudo), or use --backend ptrace (no privileges needed)".into(),
        });
    }
    if std::fs::metadata("/sys/kernel/btf/vmlinux").is_err() {
        return Err(Unavailable {
            missing: "kernel BTF is missing: /sys/kernel/btf/vmlinux does not exist (kernel built \
                      without CONFIG_DEBUG_INFO_BTF=y)"
                .into(),
            fix: "boot a kernel with BTF (most distribution kernels have it), or use --backend ptrace"
                .into(),
        });
    }
    Ok(())
}

/// libbpf's messages while loading: the probe shows the relevant one instead of letting them
/// reach the terminal.
static LIBBPF_LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn collect(_level: libbpf_rs::PrintLevel, msg: String) {
    if let Ok(mut v) = LIBBPF_LOG.lock() {
        if v.len() < 4096 {
            v.push(msg);
        }
    }
}

/// Capture libbpf's messages from now on (instead of printing them).
pub fn quiet_libbpf() {
    libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Warn, collect)));
}

/// The collected libbpf messages, emptied.
pub fn take_libbpf_log() -> Vec<String> {
    LIBBPF_LOG.lock().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default()
}

/// Why loading or attaching failed, in words a user can act on.
pub fn explain_load_error(stage: &str, e: &libbpf_rs::Error, log: &[String]) -> Unavailable {
    let text = log.join("");
    if std::env::var_os("REANIMATOR_BPF_LOG").is_some() {
        // The whole libbpf / verifier log, for debugging the programs.
        eprintln!("{text}");
    }
    let kind = e.kind();
    let last = |pred: &dyn Fn(&str) -> bool| {
        text.lines().rev().find(|l| pred(l)).map(|l| l.trim().to_string())
    };
    if text.contains("bpf_probe_read_user_dynptr") {
        return Unavailable {
            missing: "the kernel does not provide the kfunc bpf_probe_read_user_dynptr (recent \
                      Linux 6.x kernels do)"
                .into(),
            fix: "use a newer kernel, or --backend ptrace".into(),
        };
    }
    let msg = e.to_string();
    if kind == libbpf_rs::ErrorKind::PermissionDenied || msg.contains("Operation not permitted") {
        let mut memlock = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes one rlimit.
        unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut memlock) };
        let lockdown = std::fs::read_to_string("/sys/kernel/security/lockdown").unwrap_or_default();
        return Unavailable {
            missing: format!(
                "the kernel refused to {stage} the BPF programs (EPERM); possible causes: kernel \
                 lockdown ({}), a security module or seccomp policy, or on kernels before 5.11 \
                 RLIMIT_MEMLOCK (now {} bytes)",
                if lockdown.trim().is_empty() {
                    "unknown".to_string()
                } else {
                    lockdown.trim().to_string()
                },
                memlock.rlim_cur
            ),
            fix: "run as root on a kernel that allows BPF tracing (raise `ulimit -l` on old \
                  kernels), or use --backend ptrace"
                .into(),
        };
    }
    if msg.contains("Function not implemented") {
        return Unavailable {
            missing: "the bpf() system call is not available (kernel built without \
                      CONFIG_BPF_SYSCALL)"
                .into(),
            fix: "use --backend ptrace".into(),
        };
    }
    let detail = last(&|l: &str| l.contains("invalid") || l.contains("unknown") || l.contains("R"))
        .or_else(|| last(&|l: &str| !l.trim().is_empty()))
        .unwrap_or_default();
    Unavailable {
        missing: format!(
            "the kernel rejected the BPF programs at {stage}: {msg}{}",
            if detail.is_empty() { String::new() } else { format!(" ({detail})") }
        ),
        fix: "this kernel lacks a feature the eBPF backend needs (tp_btf, ring buffer, task \
              storage, bpf_loop, dynptr kfuncs); use --backend ptrace"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_kfunc_is_named() {
        let e = libbpf_rs::Error::from(std::io::Error::from_raw_os_error(libc::ESRCH));
        let u = explain_load_error(
            "load",
            &e,
            &["libbpf: extern (func ksym) 'bpf_probe_read_user_dynptr': not found in kernel BTF\n"
                .into()],
        );
        assert!(u.missing.contains("bpf_probe_read_user_dynptr"), "{u}");
        let e = libbpf_rs::Error::from(std::io::Error::from_raw_os_error(libc::EPERM));
        let u = explain_load_error("load", &e, &[]);
        assert!(u.missing.contains("EPERM") && u.fix.contains("ptrace"), "{u}");
    }
}

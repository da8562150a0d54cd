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

/// `why` as the live profiler says it: it has no ptrace backend, so the way around a missing
/// eBPF is to profile a trace the ptrace recorder made (`--backend ptrace` is record's flag).
pub fn for_profiler(mut why: Unavailable) -> Unavailable {
    const OFFLINE: &str = "profile a trace instead, which needs no privileges: \
                           `reanimator record --backend ptrace -o t.ds -- CMD`, then \
                           `reanimator profile t.ds`";
    for (from, to) in [
        ("or use --backend ptrace (no privileges needed)", "or ".to_string() + OFFLINE),
        ("or use --backend ptrace", "or ".to_string() + OFFLINE),
        ("or --backend ptrace", "or ".to_string() + OFFLINE),
        (
            "use --backend ptrace on this architecture",
            OFFLINE.to_string() + " on this architecture",
        ),
        ("use --backend ptrace", OFFLINE.to_string()),
    ] {
        if why.fix.contains(from) {
            why.fix = why.fix.replacen(from, &to, 1);
            break;
        }
    }
    why
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
    // libbpf: "extern (func ksym) 'NAME': not found in kernel BTF". (The verifier's log of a
    // rejected program quotes the source lines that call the kfunc too: only this message
    // says it is missing.)
    if let Some(name) = text.lines().find_map(|l| {
        let rest = &l[l.find("extern (func ksym) '")? + "extern (func ksym) '".len()..];
        let (name, tail) = rest.split_once('\'')?;
        tail.contains("not found").then(|| name.to_string())
    }) {
        return Unavailable {
            missing: format!(
                "the kernel does not provide the kfunc {name} (recent Linux 6.x kernels do)"
            ),
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
    // The verifier ends its log with "processed N insns ..."; the line before says why it
    // refused the program, and libbpf names the program.
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let verdict = lines
        .iter()
        .rposition(|l| l.starts_with("processed ") && l.contains(" insns"))
        .and_then(|i| i.checked_sub(1))
        .map(|i| lines[i].to_string());
    let prog = lines.iter().find_map(|l| {
        let rest = &l[l.find("prog '")? + "prog '".len()..];
        let (name, tail) = rest.split_once('\'')?;
        tail.contains("failed to load").then(|| name.to_string())
    });
    let detail = match (verdict, prog) {
        (Some(v), Some(p)) => format!("verifier, program {p}: {v}"),
        (Some(v), None) => format!("verifier: {v}"),
        (None, _) => last(&|l: &str| l.contains("invalid") || l.contains("unknown"))
            .or_else(|| last(&|l: &str| !l.trim().is_empty()))
            .unwrap_or_default(),
    };
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

    #[test]
    fn a_verifier_rejection_names_the_program_and_the_reason() {
        // A rejected program whose source mentions the kfunc is not a missing kfunc.
        let log = [
            "libbpf: prog 'on_sys_exit': BPF program load failed: Invalid argument\n",
            "libbpf: prog 'on_sys_exit': -- BEGIN PROG LOAD LOG --\n",
            "; if (bpf_probe_read_user_dynptr(&dp, 0, len, p)) @ capture.bpf.c:961\n",
            "1219: (85) call bpf_dynptr_slice_rdwr#63897\n",
            "the prog does not allow writes to packet data\n",
            "processed 12450 insns (limit 1000000) max_states_per_insn 14 total_states 962\n",
            "-- END PROG LOAD LOG --\n",
            "libbpf: prog 'on_sys_exit': failed to load: -EINVAL\n",
        ]
        .map(String::from);
        let e = libbpf_rs::Error::from(std::io::Error::from_raw_os_error(libc::EINVAL));
        let u = explain_load_error("load", &e, &log);
        assert!(!u.missing.contains("does not provide"), "{u}");
        assert!(
            u.missing
                .contains("program on_sys_exit: the prog does not allow writes to packet data"),
            "{u}"
        );
    }
}

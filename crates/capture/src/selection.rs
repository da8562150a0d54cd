//! Which calls to capture and how much of their data.

use ra_syscalls::{SyscallDef, REGISTRY};

use crate::{Error, Result};

/// The set of calls to capture, as registry entries.
#[derive(Clone, Debug)]
pub struct Selection {
    defs: Vec<&'static SyscallDef>,
    /// Re-Animator's pseudo-calls (`mmappread`, `mmappwrite`): records a backend synthesizes
    /// from memory-mapped I/O, when it can.
    pseudo: Vec<&'static SyscallDef>,
}

impl Selection {
    /// `storage` (every class but Other), `all`, or strace's `-e trace=` list
    /// ([`ra_syscalls::Selection::parse`]: kernel or trace names and aliases, `%file`-style
    /// classes, a leading `!` for every call but those). The process lifecycle calls are
    /// always in (following processes needs them whatever the user asked).
    pub fn parse(spec: &str) -> Result<Selection> {
        let real = |d: &&'static SyscallDef| !d.is_pseudo();
        let pseudo = |d: &&'static SyscallDef| d.is_pseudo();
        let (defs, pseudos): (Vec<&'static SyscallDef>, Vec<&'static SyscallDef>) = match spec {
            "storage" => (
                REGISTRY.iter().filter(real).filter(|d| d.class.is_storage()).collect(),
                REGISTRY.iter().filter(pseudo).filter(|d| d.class.is_storage()).collect(),
            ),
            list => {
                let chosen = ra_syscalls::Selection::parse(list)
                    .map_err(|e| Error::UnknownSyscall { why: e.to_string() })?;
                let mut v: Vec<&'static SyscallDef> =
                    chosen.defs.iter().copied().filter(real).collect();
                // The process lifecycle (clone, fork, execve, exit, ...), always.
                for d in REGISTRY.iter().filter(|d| d.is_lifecycle()) {
                    if !v.iter().any(|x| x.name == d.name) {
                        v.push(d);
                    }
                }
                // Delivered signals too, as strace shows them whatever `-e trace=` says
                // (`signal_deliver`: named or not, unless the list leaves it out by name or
                // class, `!%signal`).
                let mut p: Vec<&'static SyscallDef> =
                    chosen.defs.iter().copied().filter(pseudo).collect();
                let negated = list.trim_start().starts_with('!');
                if !negated && !p.iter().any(|d| d.is_signal()) {
                    p.extend(REGISTRY.iter().filter(|d| d.is_signal()));
                }
                (v, p)
            }
        };
        Ok(Selection { defs, pseudo: pseudos })
    }

    /// The real system calls of the selection.
    pub fn defs(&self) -> &[&'static SyscallDef] {
        &self.defs
    }

    /// The pseudo-calls of the selection (`mmappread`, `mmappwrite`).
    pub fn pseudo(&self) -> &[&'static SyscallDef] {
        &self.pseudo
    }

    /// x86_64 syscall numbers of the selection.
    pub fn numbers_x86_64(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.defs.iter().filter_map(|d| d.nr_x86_64()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_set_is_large_and_lists_parse() {
        let s = Selection::parse("storage").unwrap();
        assert!(s.defs().len() >= 70);
        assert!(s.numbers_x86_64().contains(&0)); // read
        let l = Selection::parse("openat,pwrite64").unwrap();
        assert!(l.defs().iter().any(|d| d.name == "pwrite64"));
        assert!(l.defs().iter().any(|d| d.name == "execve"), "lifecycle calls always");
        assert_eq!(s.pseudo().len(), 4, "mmappread, mmappwrite, io_uring_op, signal_deliver");
        let p = Selection::parse("mmappwrite,openat").unwrap();
        let names = |s: &Selection| s.pseudo().iter().map(|d| d.name).collect::<Vec<_>>();
        assert_eq!(names(&p), ["mmappwrite", "signal_deliver"]);
        // Signals whatever the list, as strace shows them, unless left out.
        assert_eq!(names(&Selection::parse("openat").unwrap()), ["signal_deliver"]);
        assert_eq!(names(&Selection::parse("%signal").unwrap()), ["signal_deliver"]);
        let unsignalled = names(&Selection::parse("!%signal").unwrap());
        assert!(
            !unsignalled.contains(&"signal_deliver") && unsignalled.len() == 3,
            "{unsignalled:?}"
        );
        let e = Selection::parse("opnat").unwrap_err().to_string();
        assert!(e.contains("did you mean `openat`"), "{e}");
        // strace's names: classes, aliases, negation.
        let f = Selection::parse("%file").unwrap();
        assert!(f.defs().iter().any(|d| d.name == "unlink"));
        assert!(!f.defs().iter().any(|d| d.name == "read"));
        let a = Selection::parse("_llseek,fstatat64").unwrap();
        assert!(a.defs().iter().any(|d| d.name == "lseek"));
        assert!(a.defs().iter().any(|d| d.name == "newfstatat"));
        let n = Selection::parse("!%memory").unwrap();
        assert!(!n.defs().iter().any(|d| d.name == "mmap"));
        assert_eq!(names(&n), ["signal_deliver"]);
        assert!(Selection::parse("%mem").is_err());
    }
}

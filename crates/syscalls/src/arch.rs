//! Per-architecture syscall number tables.
//!
//! The tables are generated from the kernel UAPI headers by `scripts/gen-syscall-tables.py`
//! (x86_64 from `asm/unistd_64.h`, aarch64 from the generic `asm-generic/unistd.h` evaluated for
//! a 64-bit arch); never edit `src/generated/{x86_64,aarch64}.rs` by hand.

#[path = "generated/aarch64.rs"]
mod aarch64;
#[path = "generated/x86_64.rs"]
mod x86_64;

/// `AUDIT_ARCH_X86_64` (`EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE`), as reported by
/// `PTRACE_GET_SYSCALL_INFO` and seccomp.
pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// `AUDIT_ARCH_AARCH64` (`EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE`).
pub const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;

/// One architecture's syscall numbering.
#[derive(Debug)]
pub struct ArchTable {
    /// `x86_64`, `aarch64`.
    pub name: &'static str,
    /// The `AUDIT_ARCH_*` value identifying this ABI.
    pub audit_arch: u32,
    /// (kernel name, number), sorted by number.
    entries: &'static [(&'static str, u32)],
}

impl ArchTable {
    /// The number of the call with this kernel name (`pread64`, `newfstatat`).
    pub fn number(&self, name: &str) -> Option<u32> {
        self.entries.iter().find(|(n, _)| *n == name).map(|&(_, nr)| nr)
    }

    /// The kernel name of syscall number `nr`.
    pub fn name(&self, nr: u32) -> Option<&'static str> {
        self.entries.binary_search_by_key(&nr, |&(_, n)| n).ok().map(|i| self.entries[i].0)
    }

    /// All (name, number) pairs, sorted by number.
    pub fn entries(&self) -> &'static [(&'static str, u32)] {
        self.entries
    }

    /// The table for an `AUDIT_ARCH_*` value.
    pub fn by_audit_arch(audit_arch: u32) -> Option<&'static ArchTable> {
        ALL.iter().copied().find(|t| t.audit_arch == audit_arch)
    }

    /// The table for an arch name (`x86_64`, `aarch64`).
    pub fn by_name(name: &str) -> Option<&'static ArchTable> {
        ALL.iter().copied().find(|t| t.name == name)
    }

    /// The table of the architecture this crate was compiled for, if we have one.
    pub fn native() -> Option<&'static ArchTable> {
        if cfg!(target_arch = "x86_64") {
            Some(&X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(&AARCH64)
        } else {
            None
        }
    }
}

/// x86_64 (64-bit ABI; not x32 or i386).
pub static X86_64: ArchTable =
    ArchTable { name: "x86_64", audit_arch: AUDIT_ARCH_X86_64, entries: x86_64::ENTRIES };

/// aarch64 (the asm-generic table for a 64-bit arch).
pub static AARCH64: ArchTable =
    ArchTable { name: "aarch64", audit_arch: AUDIT_ARCH_AARCH64, entries: aarch64::ENTRIES };

/// Every table we have.
pub static ALL: &[&ArchTable] = &[&X86_64, &AARCH64];

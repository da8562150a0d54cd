//! What anonymization makes of each trace fact (`Reanimator::TraceInfo` key/value records):
//! one rule per key, in one table ([`FACTS`], docs/ANONYMIZE.md "Facts"). A key the table
//! does not know is left out: what a new recorder writes is not copied until someone has
//! said what it holds.

use super::{map_path, time, DataMode, Field, Mapper};

/// What becomes of one fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactRule {
    /// Copied as it is: it says nothing of users, names, addresses, times or data (versions,
    /// counts, modes, the recorder's settings).
    Keep,
    /// A path, component by component (`path`).
    Path,
    /// The machine's name (`hostname`).
    Hostname,
    /// A network address, `host:port`: one pseudonym (`hostname`).
    Address,
    /// A command line, word by word (`cmdline`).
    Command,
    /// Mount options: each `name=value` keeps its name, its value is rewritten as a path
    /// (`path`).
    MountOptions,
    /// An instant of the trace's clock, integer nanoseconds or RFC 3339 (`time`).
    Time,
    /// The data mode, following `--data` (`data_mode`, and `data_mode_write` /
    /// `data_mode_read` of a recording whose directions differ): `none` stays `none`.
    DataMode,
    /// Replaced by `(removed by anonymize)`, whatever the fields: it may say anything (a
    /// filter expression names paths, users and processes; an error message an address).
    Removed,
    /// Left out: the output's writer writes its own, or anonymize does.
    Dropped,
}

/// Every fact key a reanimator recorder writes, with its rule. `snapshot.N.*` keys are
/// matched by [`fact_rule`]; `ebpf_*` keys are listed one by one, so that a new one is left
/// out until it is listed here.
pub const FACTS: &[(&str, FactRule)] = {
    use FactRule::*;
    &[
        // The trace writer (every trace).
        ("schema_version", Dropped),
        ("time_unit", Dropped),
        ("writer", Dropped),
        ("oversized_buffers", Keep),
        // `record`.
        ("command", Command),
        ("cwd", Path),
        ("umask", Keep),
        ("backend", Keep),
        ("data_mode", DataMode),
        ("data_mode_write", DataMode),
        ("data_mode_read", DataMode),
        ("syscalls", Keep),
        ("hostname", Hostname),
        ("kernel", Keep),
        ("kernel_version", Keep),
        ("arch", Keep),
        ("start_time", Time),
        ("end_time", Time),
        ("synthetic_ids", Keep),
        ("exit_status", Keep),
        ("cpu_affinity", Keep),
        // `record --backend ebpf`.
        ("cgroup", Path),
        ("lost_events", Keep),
        ("ebpf_loss_policy", Keep),
        ("ebpf_ring_bytes", Keep),
        ("ebpf_throttle_stops", Keep),
        ("ebpf_throttle_resumes", Keep),
        ("ebpf_throttle_stopped_ms", Keep),
        ("ebpf_throttle_forced_resumes", Keep),
        ("ebpf_deferred_records", Keep),
        ("ebpf_deferred_bytes", Keep),
        ("ebpf_copy_faults", Keep),
        ("ebpf_inputs_recovered", Keep),
        ("ebpf_page_table_walks", Keep),
        ("ebpf_unclassified_faults", Keep),
        ("ebpf_recursion_misses", Keep),
        ("ebpf_noop", Keep),
        ("ebpf_prog_ns_per_run", Keep),
        ("ebpf_faults_classified_late", Keep),
        ("ebpf_folio_pages", Keep),
        ("ebpf_mmap_private", Keep),
        // io_uring requests (counts only).
        ("uring_ops", Keep),
        ("uring_not_completed", Keep),
        ("uring_data_not_captured", Keep),
        ("uring_dropped", Keep),
        ("uring_data_after_completion", Keep),
        ("uring_unobserved", Keep),
        ("uring_rings_unobserved", Keep),
        // A fixed list of reasons (`SQPOLL`, `not mapped`, `registered ring descriptor`).
        ("uring_unobserved_why", Keep),
        ("io_uring_denied", Keep),
        // `reanimator fs` (hostname, kernel, command, data_mode, start_time above).
        ("source", Keep),
        ("fs_lower", Path),
        ("fs_mountpoint", Path),
        ("fs_mode", Keep),
        ("fs_kernel_cache", Keep),
        ("fs_threads", Keep),
        ("fs_direct_io", Keep),
        ("fs_filter", Removed),
        ("fs_stream", Keep),
        ("fs_aggregate", Keep),
        ("fs_tracer", Keep),
        ("fs_permissions", Keep),
        ("fs_locks", Keep),
        ("fs_lower_type", Keep),
        ("fs_lower_device", Path),
        ("fs_lower_mount", Path),
        ("fs_lower_options", MountOptions),
        ("fs_lower_capacity_bytes", Keep),
        ("fs_lower_free_bytes", Keep),
        ("os", Keep),
        ("cpus", Keep),
        ("ram_bytes", Keep),
        ("fs_node_descriptors", Keep),
        ("fs_discarded_records", Keep),
        ("fs_proc_lookups_timed_out", Keep),
        // How many of the daemon's own files (its trace, log, spill) it passed through
        // untraced, and whether the kernel checked ACLs: counts and a fixed phrase.
        ("fs_own_files_untraced", Keep),
        ("fs_posix_acl", Keep),
        // The transport the daemon served (a fixed phrase with counts, or why not io_uring)
        // and how many requests came over io_uring rings.
        ("fs_transport", Keep),
        ("fs_uring_requests", Keep),
        ("fs_sync", Keep),
        // A network sender's spill file (docs/NETWORK.md).
        ("spill_stream_offset", Keep),
        ("spill_reason", Removed),
        ("spill_collector", Address),
        ("spill_collector_file", Path),
    ]
};

/// Counts a snapshot state's facts end with (`snapshot.N.<phase>.<count>`).
const SNAPSHOT_COUNTS: [&str; 5] = ["files", "file_bytes", "blobs", "blob_bytes", "entries"];

/// The rule of a fact key; `None` for a key no recorder writes (left out).
pub fn fact_rule(key: &str) -> Option<FactRule> {
    if let Some((_, r)) = FACTS.iter().find(|(k, _)| *k == key) {
        return Some(*r);
    }
    if key.starts_with(super::INFO_PREFIX) {
        return Some(FactRule::Dropped);
    }
    // snapshot.N.dir, snapshot.N.<phase>.<what>
    let rest = key.strip_prefix("snapshot.")?;
    let (n, rest) = rest.split_once('.')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if rest == "dir" {
        return Some(FactRule::Path);
    }
    let (phase, what) = rest.split_once('.')?;
    if phase != "start" && phase != "end" {
        return None;
    }
    match what {
        "scan_began_ns" | "scan_ended_ns" => Some(FactRule::Time),
        w if SNAPSHOT_COUNTS.contains(&w) => Some(FactRule::Keep),
        _ => None,
    }
}

/// What the text of a removed fact becomes.
pub const REMOVED: &[u8] = b"(removed by anonymize)";

/// One fact rewritten by its rule; `None`: left out. Reversing (`!m.forward()`), the rules
/// run backwards and facts without a rule are kept (the anonymization left out what it did
/// not know; what is left is its own).
pub fn map_fact(m: &mut dyn Mapper, key: &str, v: &[u8], data: DataMode) -> Option<Vec<u8>> {
    use FactRule::*;
    let Some(rule) = fact_rule(key) else {
        return (!m.forward()).then(|| v.to_vec());
    };
    let on = |f| m.on(f);
    Some(match rule {
        Keep => v.to_vec(),
        Dropped => return None,
        Path if on(Field::Path) => map_path(m, v),
        Hostname | Address if on(Field::Hostname) => m.string(Field::Hostname, v),
        Command if on(Field::Cmdline) => {
            let words: Vec<Vec<u8>> = v
                .split(|&b| b == b' ')
                .map(|w| if w.is_empty() { Vec::new() } else { m.string(Field::Cmdline, w) })
                .collect();
            words.join(&b' ')
        }
        MountOptions if on(Field::Path) => map_mount_options(m, v),
        Time if on(Field::Time) => match time::map_instant(m, v) {
            Some(t) => t,
            // Not an instant we can read: it cannot be shifted, so it goes.
            None if m.forward() => return None,
            None => v.to_vec(),
        },
        DataMode => match data {
            super::DataMode::Keep => v.to_vec(),
            super::DataMode::Drop => b"none".to_vec(),
            // (Digests of what was not captured are not captured either.)
            super::DataMode::Digest if v == b"none" => v.to_vec(),
            super::DataMode::Digest => b"hash".to_vec(),
        },
        Removed if m.forward() && !v.is_empty() => REMOVED.to_vec(),
        Path | Hostname | Address | Command | MountOptions | Time | Removed => v.to_vec(),
    })
}

/// `rw,relatime rw,size=16384k,uid=1000`: option names kept, values rewritten as paths (a
/// value may be a directory, an id, a label).
fn map_mount_options(m: &mut dyn Mapper, v: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() + 16);
    for (i, group) in v.split(|&b| b == b' ').enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        for (j, opt) in group.split(|&b| b == b',').enumerate() {
            if j > 0 {
                out.push(b',');
            }
            match opt.iter().position(|&b| b == b'=') {
                Some(eq) => {
                    out.extend_from_slice(&opt[..=eq]);
                    out.extend_from_slice(&map_path(m, &opt[eq + 1..]));
                }
                None => out.extend_from_slice(opt),
            }
        }
    }
    out
}

//! `reanimator info`: what is in a trace or any DataSeries file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use dataseries::{Compression, DsReader, TrailerStatus};
use ra_trace::quirks::normalize_time;
use ra_trace::{schema::PREFIX, TraceKind, TraceReader};
use serde_json::json;

use crate::progress::Progress;

#[derive(Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    pub key: crate::output::ReadKeyArgs,
    /// The trace, DataSeries file or compiled plan (`reanimator compile`). `-` reads standard input: it is first copied to a private temporary
    /// file (mode 0600, unnamed, in $TMPDIR, gone when the command ends) and read from there.
    pub file: PathBuf,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Read extent headers only: skips checksum verification and the time span (fast on huge
    /// files). For a plan: its chunk headers only, the calls and data not read back.
    #[arg(long)]
    pub quick: bool,
}

#[derive(Default)]
struct TypeStats {
    extents: u64,
    records: u64,
    packed: u64,
    variable: u64,
    modes: Vec<String>,
}

/// A trace fact in `info --json`, by the one rule of its JSON: a number is a JSON number (a
/// decimal integer without leading zeros: `synthetic_ids`, `exit_status`; `umask`'s `0022` is
/// octal and stays text), a time is nanoseconds since the epoch in a field named `..._ns`
/// (`start_time`'s RFC 3339 becomes `start_time_ns`), anything else text ([`JsonBytes`]).
///
/// [`JsonBytes`]: ra_fsstate::JsonBytes
fn fact_json(k: &str, v: &[u8]) -> (String, serde_json::Value) {
    let text = std::str::from_utf8(v).ok();
    let canonical_int = |t: &str| {
        let digits = t.strip_prefix('-').unwrap_or(t);
        !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'))
            && t != "-0"
    };
    if let Some(t) = text {
        if k.ends_with("_time") {
            if let Some(ns) = ra_trace::time::parse_rfc3339(t) {
                return (format!("{k}_ns"), json!(ns));
            }
        }
        if canonical_int(t) {
            if let Ok(n) = t.parse::<i64>() {
                return (k.to_string(), json!(n));
            }
            if let Ok(n) = t.parse::<u64>() {
                return (k.to_string(), json!(n));
            }
        }
    }
    (k.to_string(), ra_fsstate::JsonBytes::value(v))
}

/// Nanoseconds since the epoch as RFC 3339 UTC, nine fraction digits.
pub fn rfc3339(ns: i64) -> String {
    ra_trace::time::rfc3339(ns)
}

fn mode_name(m: u8) -> String {
    Compression::from_mode(m).map_or_else(|| format!("mode{m}"), |c| c.to_string())
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Read `a.file` (a DataSeries file or trace) through: its extents, types, trailer and index,
/// and without `--quick` every extent's checksums and the trace's time span.
fn examine(a: &InfoArgs) -> Result<FileInfo> {
    let path = &a.file;
    let ds = DsReader::open(path)
        .with_context(|| format!("cannot read {}", crate::spool::shown(path)))?;
    let file_len = ds.file_len();
    let disk_len = std::fs::metadata(path).map_or(0, |m| m.len());
    let trailer = ds.trailer_status();
    let mut types: BTreeMap<String, TypeStats> = BTreeMap::new();
    let mut total_records = 0u64;
    let mut total_extents = 0u64;
    let mut header_error = None;
    // An unfinished file that ends inside an extent (a writer killed while writing it): the
    // extents before it are whole and described as usual; that one is reported, not an error.
    let mut cut_tail = None;
    // (offset, type) of every extent, for the index check below.
    let mut extents = Vec::new();
    for h in ds.headers() {
        if let Ok(h) = &h {
            extents.push((h.offset, h.type_name.clone()));
        }
        match h {
            // The index extent is part of the container, not of the data.
            Ok(h) if h.type_name.starts_with("DataSeries: ") => {}
            Ok(h) => {
                let t = types.entry(h.type_name.clone()).or_default();
                t.extents += 1;
                t.records += u64::from(h.nrecords);
                t.packed += h.packed_len;
                t.variable += u64::from(h.variable_size);
                let m = format!("{}/{}", mode_name(h.fixed_mode), mode_name(h.variable_mode));
                if !t.modes.contains(&m) {
                    t.modes.push(m);
                }
                total_records += u64::from(h.nrecords);
                total_extents += 1;
            }
            Err(e) => {
                match e.cut_tail() {
                    Some(c) => cut_tail = Some(c),
                    None => header_error = Some(e),
                }
                break;
            }
        }
    }
    // The index against the extents themselves (headers only): readers that seek through it
    // (dump, replay) must find at each offset the type it names.
    let index_error = match (&trailer, &header_error) {
        (TrailerStatus::Valid { .. }, None) => ds.verify_index_with(extents).err(),
        _ => None,
    };
    let declared = ds.types().len();
    let is_trace = ds.types().iter().any(|t| t.name().starts_with(PREFIX));

    // Full pass: verify every extent's checksums and find the time span of a trace.
    let mut span: Option<(i64, i64)> = None;
    let mut verify_error = None;
    if !a.quick && header_error.is_none() {
        let progress = Progress::bytes("verifying", file_len);
        for e in ds.extents() {
            let e = match e {
                Ok(e) => e,
                Err(err) if err.cut_tail().is_some() => break,
                Err(err) => {
                    verify_error = Some(err);
                    break;
                }
            };
            progress.set(e.offset().unwrap_or(0));
            let ty = e.extent_type();
            if !ty.name().starts_with(PREFIX) && ty.name() != ra_trace::FS_OP_TYPE {
                continue;
            }
            let tc = ty.field_index("time_called");
            let tr = ty.field_index("time_returned");
            for (f, is_end) in [(tc, false), (tr, true)] {
                let Some(f) = f else { continue };
                let units = ty.fields()[f].units.clone();
                for r in 0..e.len() {
                    let Some(v) = e.i64(r, f) else { continue };
                    // Re-Animator's synthetic umask record holds seconds: normalize_time
                    // converts by magnitude when no unit is declared.
                    let t = normalize_time(v, units.as_deref());
                    span = Some(match span {
                        None => (t, t),
                        Some((lo, hi)) => (if is_end { lo } else { lo.min(t) }, hi.max(t)),
                    });
                }
            }
        }
        progress.finish();
    }

    // (The same reader: with --key, its seal was checked once, when it was opened.)
    let trace = if is_trace { TraceReader::from_ds(ds.clone()).ok() } else { None };
    crate::note_incomplete(path, ds.incomplete_with(cut_tail), "what it holds is described");
    let kind = match trace.as_ref().map(TraceReader::kind) {
        Some(TraceKind::Ours) => "reanimator",
        Some(TraceKind::ReAnimator) => "re-animator",
        None => "dataseries",
    };
    let trailer_text = match &trailer {
        TrailerStatus::Valid { .. } => match &index_error {
            None => "complete (trailer valid, index verified against the extents)".to_string(),
            Some(e) => format!("complete trailer, damaged index: {e}"),
        },
        TrailerStatus::Missing => match cut_tail {
            None => format!(
                "unfinished, cut after extent {total_extents}: no trailer (the writer or its \
                 stream stopped before the end); all {total_extents} extents are readable"
            ),
            Some(c) => format!(
                "unfinished, cut after extent {total_extents}: no trailer, and the file {c}; \
                 the {total_extents} extents before it are readable"
            ),
        },
        TrailerStatus::Corrupt(why) => format!("damaged trailer: {why}"),
        #[allow(unreachable_patterns)]
        _ => "unknown".to_string(),
    };

    Ok(FileInfo {
        path: path.clone(),
        quick: a.quick,
        file_len,
        disk_len,
        ds,
        trailer,
        trailer_text,
        cut_tail,
        kind,
        declared,
        total_extents,
        total_records,
        types,
        span,
        trace,
        header_error,
        verify_error,
        index_error,
    })
}

/// What [`examine`] found: what `info` prints, as text or JSON.
struct FileInfo {
    path: std::path::PathBuf,
    quick: bool,
    file_len: u64,
    disk_len: u64,
    /// The file, open (its encryption, seal, byte order and types).
    ds: DsReader,
    trailer: TrailerStatus,
    trailer_text: String,
    cut_tail: Option<dataseries::CutTail>,
    kind: &'static str,
    declared: usize,
    total_extents: u64,
    total_records: u64,
    types: BTreeMap<String, TypeStats>,
    /// The first call's start and the last call's end, ns (without `--quick`).
    span: Option<(i64, i64)>,
    trace: Option<TraceReader>,
    header_error: Option<dataseries::Error>,
    verify_error: Option<dataseries::Error>,
    index_error: Option<dataseries::Error>,
}

pub fn run(a: InfoArgs) -> Result<ExitCode> {
    if ra_replay::planfile::is_plan(&a.file) {
        return plan_info(&a);
    }
    let i = examine(&a)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&info_json(&i))?)?;
    } else {
        info_text(&mut out, &i)?;
    }
    let FileInfo { path, header_error, verify_error, index_error, .. } = i;
    if let Some(e) = header_error.or(verify_error).or(index_error) {
        return Err(
            anyhow::Error::new(e).context(format!("{} is damaged", crate::spool::shown(&path)))
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `info --json`.
fn info_json(i: &FileInfo) -> serde_json::Value {
    let FileInfo {
        path,
        ds,
        trailer,
        trailer_text,
        cut_tail,
        types,
        trace,
        header_error,
        verify_error,
        index_error,
        ..
    } = i;
    let (file_len, disk_len, declared) = (i.file_len, i.disk_len, i.declared);
    let (total_extents, total_records) = (i.total_extents, i.total_records);
    let (enc, seal) = (ds.encryption(), ds.seal_status());
    let (kind, span, quick) = (i.kind, i.span, i.quick);
    let types_json: Vec<_> = types
        .iter()
        .map(|(n, t)| {
            json!({"name": n, "extents": t.extents, "records": t.records,
                       "packed_bytes": t.packed, "variable_bytes": t.variable,
                       "compression": t.modes})
        })
        .collect();
    let info: serde_json::Map<String, serde_json::Value> = trace
        .as_ref()
        .map(|t| t.info().iter().map(|(k, v)| fact_json(k, v)).collect())
        .unwrap_or_default();
    let lost: Vec<_> = trace
        .as_ref()
        .map(|t| {
            t.lost()
                .iter()
                .map(|l| {
                    json!({"syscall": l.syscall, "count": l.count, "bytes": l.bytes,
                                    "time_first_ns": l.time_first, "time_last_ns": l.time_last,
                                    "reason": l.reason})
                })
                .collect()
        })
        .unwrap_or_default();
    let snapshots: Vec<_> = trace
        .as_ref()
        .map(|t| {
            t.snapshots()
                .iter()
                .map(|s| {
                    let phase = |p: Option<&ra_trace::PhaseInfo>| {
                        p.map(|p| {
                            json!({"entries": p.entries, "files": p.files,
                                       "file_bytes": p.file_bytes, "blobs": p.blobs,
                                       "blob_bytes": p.blob_bytes,
                                       "scan_began_ns": p.scan_began_ns,
                                       "scan_ended_ns": p.scan_ended_ns})
                        })
                    };
                    json!({"index": s.index, "dir": ra_fsstate::JsonBytes::value(&s.dir),
                               "start": phase(s.start.as_ref()), "end": phase(s.end.as_ref())})
                })
                .collect()
        })
        .unwrap_or_default();
    let v = json!({
        "file": crate::spool::json_name(path),
        "size": file_len,
        "encryption": enc.as_ref().map(|e| json!({"cipher": "AES-256-GCM",
            "key_id": e.key_id, "chunks": e.chunks, "complete": e.complete,
            "size_on_disk": disk_len})),
        "sealed": ds.type_by_name(dataseries::seal::SEAL_TYPE_NAME).is_some(),
        "seal_verified": seal.map(|s| json!({"key_id": s.summary.key_id,
            "serial": s.summary.serial, "extents": s.summary.extents,
            "bytes": s.summary.bytes, "seals": s.summary.seals,
            "complete": s.cut.is_none(), "cut": s.cut.as_ref().map(|f| f.why.clone()),
            "left_out_bytes": s.left_out})),
        "byte_order": if ds.is_big_endian() { "big-endian" } else { "little-endian" },
        "complete": matches!(trailer, TrailerStatus::Valid { .. }),
        "cut": matches!(trailer, TrailerStatus::Missing),
        "trailer": trailer_text,
        "cut_tail": cut_tail.map(|c| json!({"extent_offset": c.extent_offset,
                                            "extent_bytes": c.extent_bytes,
                                            "bytes_present": c.bytes_present})),
        "kind": kind,
        "declared_types": declared,
        "extents": total_extents,
        "records": total_records,
        "verified": !quick && verify_error.is_none() && header_error.is_none()
            && index_error.is_none(),
        "index_valid": matches!(trailer, TrailerStatus::Valid { .. }) && index_error.is_none(),
        "time_span": span.map(|(lo, hi)| json!({"first_ns": lo, "last_ns": hi,
                                              "duration_ns": hi - lo})),
        "types": types_json,
        "info": info,
        "lost": lost,
        "snapshots": snapshots,
    });
    v
}

/// `info`'s text.
fn info_text(out: &mut impl Write, i: &FileInfo) -> Result<()> {
    let FileInfo { path, ds, trailer_text, types, trace, .. } = i;
    let (file_len, disk_len, declared) = (i.file_len, i.disk_len, i.declared);
    let (total_extents, total_records) = (i.total_extents, i.total_records);
    let (enc, seal) = (ds.encryption(), ds.seal_status());
    let (kind, span) = (i.kind, i.span);
    {
        writeln!(
            out,
            "File        {}  ({} bytes)",
            crate::spool::shown(path),
            thousands(file_len)
        )?;
        if let Some(e) = &enc {
            writeln!(
                out,
                "Encrypted   AES-256-GCM, key {}, {} chunks, {} bytes on disk{}",
                e.key_id,
                e.chunks,
                thousands(disk_len),
                if e.complete { "" } else { "; CUT: the last chunk is missing" }
            )?;
        }
        match seal {
            Some(s) => {
                let v = &s.summary;
                write!(
                    out,
                    "Sealed      yes, verified with key {}: {} extents ({} bytes) by {} seals, \
                     serial {}",
                    v.key_id,
                    v.extents,
                    thousands(v.bytes),
                    v.seals,
                    v.serial
                )?;
                match &s.cut {
                    None => writeln!(out)?,
                    Some(f) => writeln!(
                        out,
                        "; CUT: {}; the {} bytes after the verified part are left out",
                        f.why,
                        thousands(s.left_out)
                    )?,
                }
            }
            None if ds.type_by_name(dataseries::seal::SEAL_TYPE_NAME).is_some() => {
                writeln!(
                    out,
                    "Sealed      yes: check it with --key KEYFILE (or `reanimator verify`)"
                )?;
            }
            None => {}
        }
        writeln!(
            out,
            "Format      DataSeries v1, {}, {}",
            if ds.is_big_endian() { "big-endian" } else { "little-endian" },
            trailer_text
        )?;
        let kind_text = match kind {
            "reanimator" => format!(
                "reanimator {} trace, schema {}",
                if ds.type_by_name(ra_trace::FS_OP_TYPE).is_some() {
                    "file-system (reanimator fs)"
                } else {
                    "system-call"
                },
                trace
                    .as_ref()
                    .and_then(|t| t.info_value("schema_version"))
                    .map(|v| String::from_utf8_lossy(v).into_owned())
                    .unwrap_or_else(|| "?".into())
            ),
            "re-animator" => "Re-Animator system-call trace (original tool chain; its quirks are handled: see docs/TRACE_FORMAT.md)".into(),
            _ => "plain DataSeries file (not a system-call trace)".into(),
        };
        writeln!(out, "Content     {kind_text}")?;
        writeln!(
            out,
            "Records     {} in {} extents ({} of {} declared types used)",
            thousands(total_records),
            thousands(total_extents),
            types.len(),
            declared
        )?;
        if let Some((lo, hi)) = span {
            let d = hi - lo;
            writeln!(
                out,
                "Time span   {} .. {}  ({}.{:09} s)",
                rfc3339(lo),
                rfc3339(hi),
                d / 1_000_000_000,
                d % 1_000_000_000
            )?;
        }
        if let Some(t) = &trace {
            // Snapshot facts get a section of their own below.
            for (k, v) in t.info().iter().filter(|(k, _)| !k.starts_with("snapshot.")) {
                writeln!(out, "  {k:<18} {}", String::from_utf8_lossy(v))?;
            }
            let lost: i64 = t.lost().iter().map(|l| l.count).sum();
            let lost_bytes: i64 = t.lost().iter().map(|l| l.bytes).sum();
            if t.kind() == TraceKind::Ours {
                if lost == 0 {
                    writeln!(out, "Lost        0 events")?;
                } else {
                    writeln!(
                        out,
                        "Lost        {} events, {} bytes of data",
                        thousands(lost as u64),
                        thousands(lost_bytes as u64)
                    )?;
                }
            }
            // One line per call type and reason: the loss records of a recording come one per
            // call type and interval.
            // (count, bytes, first, last) per (call, reason).
            type Span = (i64, i64, Option<i64>, Option<i64>);
            let mut by_call: BTreeMap<(&str, &str), Span> = BTreeMap::new();
            for l in t.lost() {
                let e = by_call.entry((&l.syscall, &l.reason)).or_insert((0, 0, None, None));
                e.0 += l.count;
                e.1 += l.bytes;
                e.2 = match (e.2, l.time_first) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                e.3 = e.3.max(l.time_last);
            }
            let mut rows: Vec<_> = by_call.into_iter().collect();
            rows.sort_by_key(|(_, v)| std::cmp::Reverse(v.0));
            for ((call, reason), (count, bytes, first, last)) in rows {
                let span = match (first, last) {
                    (Some(a), Some(b)) => format!(", {} .. {}", rfc3339(a), rfc3339(b)),
                    _ => String::new(),
                };
                writeln!(
                    out,
                    "  {:<18} {} events, {} bytes{span} ({reason})",
                    if call.is_empty() { "(unknown)" } else { call },
                    thousands(count as u64),
                    thousands(bytes as u64)
                )?;
            }
            let snaps = t.snapshots();
            if !snaps.is_empty() {
                writeln!(out, "Snapshots   {}", snaps.len())?;
            }
            for s in &snaps {
                writeln!(out, "  {}  {}", s.index, ra_fsstate::escape_bytes(&s.dir))?;
                for (name, p) in [("start", &s.start), ("end", &s.end)] {
                    let Some(p) = p else {
                        writeln!(out, "     {name:<5}  not stored (incomplete)")?;
                        continue;
                    };
                    let secs = (p.scan_ended_ns - p.scan_began_ns) as f64 / 1e9;
                    let stored = if name == "start" {
                        format!(
                            "; {} contents stored ({} bytes)",
                            thousands(p.blobs),
                            thousands(p.blob_bytes)
                        )
                    } else {
                        String::new()
                    };
                    writeln!(
                        out,
                        "     {name:<5}  {} entries, {} files of {} bytes{stored}; scanned {} in {secs:.2} s",
                        thousands(p.entries),
                        thousands(p.files),
                        thousands(p.file_bytes),
                        rfc3339(p.scan_began_ns),
                    )?;
                }
            }
        }
        writeln!(out)?;
        let w = types.keys().map(String::len).max().unwrap_or(10).max(11);
        writeln!(
            out,
            "{:<w$}  {:>8}  {:>10}  {:>14}  {:>14}  compression (fixed/variable)",
            "extent type", "extents", "records", "packed bytes", "variable bytes"
        )?;
        for (n, t) in types {
            writeln!(
                out,
                "{n:<w$}  {:>8}  {:>10}  {:>14}  {:>14}  {}",
                thousands(t.extents),
                thousands(t.records),
                thousands(t.packed),
                thousands(t.variable),
                t.modes.join(", ")
            )?;
        }
    }
    Ok(())
}

/// What `info` says about a compiled plan (`reanimator compile`).
struct PlanInfo {
    bytes: u64,
    compiled_by: String,
    source: ra_replay::planfile::PlanSource,
    layout: ra_replay::planfile::PlanLayout,
    stats: ra_replay::planfile::CompileStats,
    notes: ra_replay::planner::PlanNotes,
    /// Calls read back and checked (None with --quick).
    checked: Option<u64>,
}

/// Open the plan and, unless `quick`, read it through as a replay would (every checksum).
fn plan_facts(a: &InfoArgs) -> Result<PlanInfo> {
    let path = &a.file;
    let plan = ra_replay::Plan::open(path).context("opening the plan")?;
    let checked = if a.quick {
        None
    } else {
        Some(plan.check().with_context(|| format!("checking {}", crate::spool::shown(path)))?)
    };
    Ok(PlanInfo {
        bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
        compiled_by: plan.compiled_by().to_string(),
        source: plan.source().clone(),
        layout: plan.layout(),
        stats: plan.stats().clone(),
        notes: plan.notes().clone(),
        checked,
    })
}

fn plan_json(p: &PlanInfo) -> serde_json::Value {
    json!({
        "kind": "reanimator-plan",
        "bytes": p.bytes,
        "version": p.layout.version,
        "compiled_by": p.compiled_by,
        "source": {"path": p.source.path, "size": p.source.size,
                   "mtime_ns": p.source.mtime_ns, "snapshots": p.source.snapshots},
        "chunks": {"calls": p.layout.calls_chunks, "data": p.layout.data_chunks,
                   "data_lz4": p.layout.lz4_chunks,
                   "data_stored_bytes": p.layout.data_stored_bytes},
        "stats": p.stats.to_json(),
        "unknown": p.notes.unknown,
        "warnings": p.notes.warnings,
        "checked_calls": p.checked,
    })
}

fn plan_text(o: &mut impl Write, path: &std::path::Path, p: &PlanInfo) -> std::io::Result<()> {
    let mb = |b: u64| b as f64 / 1e6;
    let l = &p.layout;
    let st = &p.stats;
    writeln!(o, "File        {}  ({} bytes)", crate::spool::shown(path), thousands(p.bytes))?;
    writeln!(
        o,
        "Format      reanimator replay plan, version {}{} (compiled by reanimator {})",
        l.version,
        if l.lz4_chunks > 0 { ", lz4 data chunks" } else { "" },
        p.compiled_by
    )?;
    writeln!(
        o,
        "Source      {} ({} bytes, modified {}){}",
        p.source.path,
        thousands(p.source.size),
        rfc3339(p.source.mtime_ns),
        match p.source.snapshots {
            0 => String::new(),
            n => format!("; {n} snapshot(s), restored from the trace by --init"),
        }
    )?;
    writeln!(
        o,
        "Calls       {} in {} chunks{}",
        thousands(st.calls),
        l.calls_chunks,
        match p.checked {
            Some(n) => format!("; all {} read back, every checksum verified", thousands(n)),
            None => "; not read back (--quick)".into(),
        }
    )?;
    writeln!(
        o,
        "Data        {:.1} MB in {} chunks{}: {} buffers of {:.1} MB stored once per content as {} \
         ({:.1}% saved); {} bytes inline",
        mb(st.data_stored),
        l.data_chunks,
        if l.lz4_chunks > 0 {
            format!(" ({} lz4-compressed; {:.1} MB in the file)", l.lz4_chunks, mb(l.data_stored_bytes))
        } else {
            String::new()
        },
        thousands(st.buffers),
        mb(st.data_in),
        thousands(st.unique_buffers),
        if st.data_in > 0 { 100.0 * (1.0 - st.data_stored as f64 / st.data_in as f64) } else { 0.0 },
        thousands(st.inline_bytes),
    )?;
    for (what, m) in [("Unknown", &p.notes.unknown), ("Warnings", &p.notes.warnings)] {
        for (k, n) in m {
            writeln!(o, "{what:<11} {k}: {n}")?;
        }
    }
    Ok(())
}

/// `info PLAN`.
fn plan_info(a: &InfoArgs) -> Result<ExitCode> {
    let p = plan_facts(a)?;
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &plan_json(&p))?;
        writeln!(out)?;
    } else {
        plan_text(&mut out, &a.file, &p)?;
    }
    Ok(ExitCode::SUCCESS)
}

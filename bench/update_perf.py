#!/usr/bin/env python3
"""Replace one section of docs/PERFORMANCE.md with a table made from a benchmark's JSON lines.
usage: update_perf.py SECTION RESULTS.jsonl COMMAND"""
import json
import platform
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs/PERFORMANCE.md"


def machine():
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    return f"{platform.node()}, Linux {platform.release()}, {cpu}, {subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores; commit {commit}"


def _fio_label(label, rows, w):
    """The workload's label with fio's run time as the rows say it was (when they agree)."""
    secs = {r.get("fio_seconds") for r in rows if r["workload"] == w} - {None}
    return label.replace("10 s", f"{secs.pop()} s") if len(secs) == 1 else label


def _medians(rows, w, configs, key):
    """{config: (median of key, its rows by run)} for workload w, in configs' order."""
    from statistics import median
    med = {}
    for c in configs:
        rs = sorted((r for r in rows if r["workload"] == w and r["config"] == c), key=lambda r: r["run"])
        if rs:
            med[c] = (median(r[key] for r in rs), rs)
    return med


def codec_table(rows):
    out = ["| trace | phase | data | file | wall s | CPU s | MB/s (wall) | MB/s per CPU-second | peak RSS MB |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        data = r.get("data_bytes", r.get("decoded_bytes", 0))
        out.append("| {} | {} | {:.2f} GB | {} | {:.1f} | {:.1f} | {:.0f} | {:.0f} | {:.0f} |".format(
            r["file"], r["phase"], data / 1e9,
            f"{r['file_bytes'] / 1e9:.2f} GB" if "file_bytes" in r else "",
            r["wall_s"], r["cpu_s"], r["mb_per_s"], r["mb_per_cpu_s"], r["peak_rss_mb"]))
    return "\n".join(out)


def _size(n):
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


# bench/record: how each workload is measured. (label, metric, row key, higher is better)
RECORD_WORKLOADS = {
    "fio": ("fio randwrite 4 KiB, psync, 10 s", "IOPS", "iops", True),
    "sqlite": ("sqlite3 200k inserts, 2,000 txns", "elapsed s", "wall_s", False),
    "dd": ("dd 2 GiB, 1 MiB writes", "elapsed s", "wall_s", False),
    "dd4k": ("dd 800 MB of zeros, 4 KiB writes", "elapsed s", "wall_s", False),
    "fiorand": ("fio randwrite 4 KiB, psync, 10 s, --refill_buffers (incompressible data)", "IOPS", "iops", True),
    "fiorw": ("fio randrw 4 KiB (half reads), psync, 10 s", "IOPS (read + write)", "iops", True),
    "fiouring": ("fio randwrite 4 KiB, io_uring, iodepth 32, 10 s", "IOPS", "iops", True),
    "xz": ("xz -T2 of 48 MB (two threads computing)", "elapsed s", "wall_s", False),
}
RECORD_CONFIGS = ["vanilla", "strace", "strace-1cpu", "reanimator", "reanimator-lz4",
                  "reanimator-samecpu", "reanimator-anycpu",
                  "ebpf-noop", "ebpf-discard", "ebpf-full", "ebpf-hash", "ebpf-none",
                  "ebpf-wfull", "ebpf-lz4", "ebpf-zlib", "ebpf-seal", "ebpf-seal-lz4", "ebpf-encrypt",
                  "ebpf-seal-lz4-encrypt", "reanimator-print", "ebpf-print"]
# The output chain's rows (issue 19) are compared with the same recorder writing a plain
# trace: ebpf-full, or (ptrace) reanimator.
CHAIN_REF = {c: "ebpf-full" for c in ("ebpf-lz4", "ebpf-zlib", "ebpf-seal", "ebpf-seal-lz4",
                                      "ebpf-encrypt", "ebpf-seal-lz4-encrypt",
                                      "ebpf-wfull")}
CHAIN_REF["reanimator-lz4"] = "reanimator"
# `record --print` (issue 40 item 5) against the same recorder without it.
CHAIN_REF["reanimator-print"] = "reanimator"
CHAIN_REF["ebpf-print"] = "ebpf-full"


def record_table(rows):
    """Median per (workload, config); slowdown against vanilla; reanimator against strace."""
    from statistics import median
    out = ["| workload | config | metric: runs | median | slowdown vs vanilla (medians; by run) | against strace (output-chain rows: against the same recorder's plain trace) "
           "| CPU s (median) | peak RSS MB (max) | trace/log file (median) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for w in dict.fromkeys(r["workload"] for r in rows):
        label, metric, key, higher = RECORD_WORKLOADS[w]
        label = _fio_label(label, rows, w)
        med = _medians(rows, w, RECORD_CONFIGS, key)
        for c, (m, rs) in med.items():
            fmt = (lambda v: f"{v:,.0f}") if higher else (lambda v: f"{v:.2f}")
            base = med.get("vanilla", (None,))[0]
            slow = "" if not base else f"{(base / m if higher else m / base):.2f}×"
            # The same ratio run by run (run i against vanilla's run i, minutes apart rather
            # than spread over the whole benchmark): its median and range, less exposed to a
            # host whose speed drifts.
            if base and c != "vanilla":
                van = {r["run"]: r[key] for r in med["vanilla"][1]}
                pairs = sorted((van[r["run"]] / r[key] if higher else r[key] / van[r["run"]])
                               for r in rs if r["run"] in van and r[key])
                if len(pairs) > 1:
                    slow += f" (by run {median(pairs):.2f}×, {pairs[0]:.2f}–{pairs[-1]:.2f})"
                # The command's own time (GNU time around it): without the tool's start and end.
                vin = {r["run"]: r["inner_s"] for r in med["vanilla"][1] if r.get("inner_s")}
                inner = sorted(r["inner_s"] / vin[r["run"]] for r in rs if r.get("inner_s") and r["run"] in vin)
                if inner:
                    slow += f"; {label.split()[0]} alone {median(inner):.2f}× ({inner[0]:.2f}–{inner[-1]:.2f})"
            vs = ""
            # Each reanimator row against the strace row with the same CPU placement.
            ref = {"reanimator": "strace-1cpu", "reanimator-samecpu": "strace-1cpu",
                   "reanimator-anycpu": "strace", "ebpf-full": "strace",
                   "ebpf-hash": "strace", "ebpf-none": "strace"}.get(c)
            ref = CHAIN_REF.get(c, ref)
            if ref in med:
                s = med[ref][0]
                x = m / s if higher else s / m
                vs = f"{x:.2f}× {'faster' if x >= 1 else 'slower'}"
                if c in CHAIN_REF:
                    # The cost in percent of the reference row's time, run by run.
                    fr = {r["run"]: r[key] for r in med[ref][1]}
                    pct = sorted(100 * ((fr[r["run"]] / r[key]) if higher else (r[key] / fr[r["run"]])) - 100
                                 for r in rs if r["run"] in fr and r[key])
                    vs = f"{m / s - 1 if not higher else s / m - 1:+.1%} time vs {ref}"
                    if len(pct) > 1:
                        vs += f" (by run {median(pct):+.1f}%, {pct[0]:+.1f}…{pct[-1]:+.1f}%)"
            size = ""
            if c != "vanilla":
                size = _size(median(r["out_bytes"] for r in rs))
                calls = [r["calls"] for r in rs if "calls" in r]
                if calls:
                    size += f" ({median(calls):,.0f} calls)"
                lost = [r["lost"] for r in rs if "lost" in r]
                if c == "ebpf-noop":
                    size = "programs attached, returning at once: records nothing"
                    lost = []
                elif c == "ebpf-discard":
                    size = "full buffers captured and assembled, then dropped: writes no calls"
                if lost:
                    stops = [r.get("throttle_stops", 0) for r in rs]
                    held = [r.get("throttle_stopped_ms", 0) for r in rs]
                    size += (f"; lost {max(lost):,}, throttle stops {median(stops):,.0f}"
                             f" ({median(held) / 1000:.2f} s stopped)")
                # io_uring runs: the requests and bytes the trace holds against fio's counts.
                ring = [r for r in rs if "uring_ops" in r]
                if ring:
                    whole = sum(1 for r in ring if r["uring_ops"] == r["fio_ios"]
                                and r["uring_written"] == r["fio_bytes"])
                    size += (f"; io_uring writes recorded (all runs): {sum(r['uring_ops'] for r in ring):,} "
                             f"of fio's {sum(r['fio_ios'] for r in ring):,}, their results "
                             f"{sum(r['uring_written'] for r in ring):,} bytes of fio's "
                             f"{sum(r['fio_bytes'] for r in ring):,} (equal in {whole} of {len(ring)} runs)")
                    data = [r["data_mb"] for r in ring if "data_mb" in r]
                    if data:
                        size += f"; data captured {sum(data) / 1000:,.2f} GB"
                # --print runs: every call's line printed, or how many were not.
                shown = [(r["printed"], r["print_dropped"], r.get("calls")) for r in rs if "printed" in r]
                if shown:
                    dropped = sum(d for _, d, _ in shown)
                    whole = sum(1 for p, d, n in shown if d == 0 and n is not None and p >= n)
                    size += (f"; printed: every line in {whole} of {len(shown)} runs, "
                             f"{dropped:,} dropped in all")
            # The tool's process at its peak: the worst run.
            rss = [r["rss_mb"] for r in rs if "rss_mb" in r]
            rss = f"{max(rss):,.0f}" if rss else ""
            out.append(f"| {label} | {c} | {metric}: {', '.join(fmt(r[key]) for r in rs)} | {fmt(m)} | {slow} "
                       f"| {vs} | {median(r['cpu_s'] for r in rs):.1f} | {rss} | {size} |")
    return "\n".join(out)


# bench/replay: workload labels.
REPLAY_WORKLOADS = {
    "fio": "fio randwrite 4 KiB, psync, 10 s",
    "fio-ebpf": "fio randwrite 4 KiB, psync, 10 s (eBPF trace)",
    "sqlite": "sqlite3 200k inserts, 2,000 txns",
    "threads": "5,000 threads: open/write/close/unlink (ptrace trace)",
    "threads-ebpf": "5,000 threads: open/write/close/unlink (eBPF trace)",
    "build": "make -j1 of libbpf (CPU-heavy build, ptrace trace)",
}
# Workloads whose untraced runs are another workload's rows (the same job, recorded otherwise).
REPLAY_VANILLA_OF = {"fio-ebpf": "fio", "threads-ebpf": "threads"}
REPLAY_CONFIGS = ["vanilla", "traced", "compile", "compile-lz4", "replay-full", "replay-none", "plan-full",
                  "plan-none", "plan-warm", "plan-lz4-warm", "floor", "floor-data"]


def replay_table(rows):
    """Median per (workload, config): the original runs against AFAP replays of the trace and
    of its compiled plan; the compile's own rows (MB/s of trace, plan size)."""
    from statistics import median
    out = ["| workload | config | seconds: runs | median s | replay / traced run | replay / vanilla "
           "| initial state s | peak RSS MB | calls | mismatched |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for w in dict.fromkeys(r["workload"] for r in rows):
        med = {}
        for c in REPLAY_CONFIGS:
            rs = sorted((r for r in rows if r["workload"] == w and r["config"] == c), key=lambda r: r["run"])
            if rs:
                key = ("replay_s" if c.startswith(("replay", "plan", "floor")) else
                       "compile_s" if c.startswith("compile") else "wall_s")
                med[c] = (median(r[key] for r in rs), rs, key)
        traced = med.get("traced", (None,))[0]
        vanilla = med.get("vanilla", (None,))[0]
        if vanilla is None and w in REPLAY_VANILLA_OF:
            vs = [r["wall_s"] for r in rows if r["workload"] == REPLAY_VANILLA_OF[w] and r["config"] == "vanilla"]
            vanilla = median(vs) if vs else None
        for c, (m, rs, key) in med.items():
            replayed = c.startswith(("replay", "plan", "floor"))
            rel_t = f"{m / traced:.2f}" if replayed and traced else ""
            rel_v = f"{m / vanilla:.2f}" if replayed and vanilla else ""
            init = f"{median(r['init_s'] for r in rs):.2f}" if "init_s" in rs[0] else ""
            rss = f"{median(r['rss_mb'] for r in rs):.0f}" if "rss_mb" in rs[0] else ""
            calls = f"{median(r['calls'] for r in rs):,.0f}" if "calls" in rs[0] else ""
            if c == "traced" and "trace_bytes" in rs[0]:
                calls = f"trace {_size(rs[0]['trace_bytes'])}"
            if c.startswith("compile"):
                r0 = rs[0]
                saved = 1 - r0["data_stored"] / r0["data_in"] if r0["data_in"] else 0
                calls = (f"{median(r['mb_per_s'] for r in rs):.0f} MB/s of trace; plan {_size(r0['plan_bytes'])} "
                         f"({r0['plan_bytes'] / r0['trace_bytes']:.2f}x the trace; dedup saved {saved:.0%} of "
                         f"{_size(r0['data_in'])} of buffers)")
            mism = f"{max(r['mismatched'] for r in rs)}" if "mismatched" in rs[0] else ""
            out.append(f"| {REPLAY_WORKLOADS[w]} | {c} | {', '.join(f'{r[key]:.2f}' for r in rs)} | {m:.2f} "
                       f"| {rel_t} | {rel_v} | {init} | {rss} | {calls} | {mism} |")
    return "\n".join(out)


def replay_timing_table(rows):
    """bench/replay/timing.sh: per rate, the original run, then the issue-time error of
    reanimator's timed replay (its own report; measured outside) and of fio --read_iolog
    (measured outside); medians over the rounds, p99 of each round, the largest maximum."""
    from statistics import median
    out = ["| rate (achieved) | tool | measured | calls | median µs | p90 µs | p99 µs (median; rounds) | max µs "
           "| worst p99 µs of a later second | early (earliest µs) | least-late anchor: median / p99 µs "
           "| elapsed s / span s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    def us(v):
        return f"{v:,.1f}" if abs(v) < 100 else f"{v:,.0f}"
    for rate in dict.fromkeys(r["rate"] for r in rows):
        rr = [r for r in rows if r["rate"] == rate]
        orig = next((r for r in rr if r["measure"] == "original"), None)
        label = f"{rate:,}/s"
        if orig:
            label += f" ({orig['iops']:,.0f}/s)"
            out.append(f"| {label} | fio (original run, recorded) | trace | {orig['calls']:,} preads | | | | | "
                       f"| {orig['close_frac']:.0%} of preads < 5 µs after the previous | | "
                       f"preads span {orig['pread_span_s']:.3f} |")
        for tool, measure, name in [("reanimator", "internal", "reanimator replay --timing original"),
                                    ("reanimator", "external", "reanimator replay --timing original"),
                                    ("reanimator-before", "internal", "the same, RA_BEFORE's build"),
                                    ("reanimator-before", "external", "the same, RA_BEFORE's build"),
                                    ("fio", "external", "fio --read_iolog")]:
            rs = sorted((r for r in rr if r["tool"] == tool and r["measure"] == measure), key=lambda r: r["rep"])
            if not rs:
                continue
            how = "its report (all calls)" if measure == "internal" else "eBPF recording (preads)"
            calls = f"{median(r['calls'] for r in rs):,.0f}"
            bad = [r for r in rs if r.get("orig_calls") is not None and r["orig_calls"] != r["replay_calls"]]
            if bad:
                calls += f" (counts differ in {len(bad)} rounds: " + ", ".join(
                    f"{r['replay_calls']:,} for {r['orig_calls']:,}" for r in bad) + ")"
            p99s = ", ".join(us(r["p99_us"]) for r in rs)
            early = "never (by construction)" if measure == "internal" else (
                f"{median(r['early_frac'] for r in rs):.1%} ({us(min(r['earliest_us'] for r in rs))})")
            ws = [r["worst_second_p99_us"] for r in rs if r.get("worst_second_p99_us") is not None]
            ws = f"{median(ws):,.0f}" if ws else ""
            ll = "" if measure == "internal" else (
                f"{us(median(r['ll_median_us'] for r in rs))} / {us(median(r['ll_p99_us'] for r in rs))}")
            if measure == "internal":
                span = f"{median(r['elapsed_s'] for r in rs):.3f} / {median(r['span_s'] for r in rs):.3f}"
            else:
                span = (f"{median(r['elapsed_s'] for r in rs):.3f}; preads span "
                        f"{median(r['pread_span_s'] for r in rs):.3f} / {median(r['orig_pread_span_s'] for r in rs):.3f}")
            out.append(f"| {label} | {name} | {how} | {calls} | {us(median(r['median_us'] for r in rs))} "
                       f"| {us(median(r['p90_us'] for r in rs))} | {us(median(r['p99_us'] for r in rs))} ({p99s}) "
                       f"| {us(max(r['max_us'] for r in rs))} | {ws} | {early} | {ll} | {span} |")
    return "\n".join(out)


def replay_afap_table(rows):
    """bench/replay/afap.sh: the eBPF-recorded fio plan's AFAP replay against its floor, with
    each run's CPU time (perf task-clock) and the replay's own CPU time per call."""
    from statistics import median
    van = next((r for r in rows if r["config"] == "vanilla"), None)
    fd = [r["cpu_s"] for r in rows if r["config"] == "floor-data"]
    floor = {c: median(r["replay_s"] for r in rows if r["config"] == c)
             for c in ("floor", "floor-data") if any(r["config"] == c for r in rows)}
    out = ["| config | seconds: runs | median s | / vanilla | / floor | / floor-data | CPU s (median) "
           "| CPU beyond floor-data per call µs (median; runs) | calls | mismatched |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    if van:
        out.append(f"| vanilla fio | {van['wall_s']:.2f} | {van['wall_s']:.2f} | 1.00 | | | | | {van['calls']:,} writes | |")
    for c in dict.fromkeys(r["config"] for r in rows if r["config"] != "vanilla"):
        rs = [r for r in rows if r["config"] == c]
        m = median(r["replay_s"] for r in rs)
        own = ""
        if "init_s" in rs[0] and fd:
            o = [(r["cpu_s"] - median(fd)) / r["calls"] * 1e6 for r in rs]
            own = f"{median(o):.2f} ({', '.join(f'{x:.2f}' for x in o)})"
        ratio = lambda d: f"{m / d:.2f}" if d else ""
        runs = ", ".join(f"{r['replay_s']:.2f}" for r in rs)
        out.append(f"| {c} | {runs} | {m:.2f} "
                   f"| {ratio(van['wall_s'] if van else 0)} | {ratio(floor.get('floor'))} | {ratio(floor.get('floor-data'))} "
                   f"| {median(r['cpu_s'] for r in rs):.2f} | {own} | {median(r['calls'] for r in rs):,.0f} "
                   f"| {max(r.get('mismatched', 0) for r in rs)} |")
    return "\n".join(out)


# bench/fs: workload labels, and the metric of each: (label, metric, row key, higher is better).
FS_WORKLOADS = {
    "randread": ("fio randread 4 KiB, psync, 256 MiB, 10 s", "IOPS", "iops", True),
    "randwrite": ("fio randwrite 4 KiB, psync, 256 MiB, 10 s", "IOPS", "iops", True),
    "untar": ("tar x of /usr/include", "elapsed s", "wall_s", False),
    "rm": ("rm -rf of that tree (same mount)", "elapsed s", "rm_s", False),
    "fsmark": ("fs_mark 10,000 × 4 KiB files, 16 dirs, no sync", "elapsed s", "wall_s", False),
    "sqlite": ("sqlite3 2,000 single-row transactions", "elapsed s", "wall_s", False),
}
FS_CONFIGS = ["native", "bindfs", "bindfs-nocache", "loggedfs", "reanimator-none", "reanimator-full", "reanimator-discard",
              "reanimator-lz4", "reanimator-seal-lz4", "reanimator-encrypt", "reanimator-seal-lz4-encrypt",
              "reanimator-fast", "reanimator-filtered", "reanimator-full-dev", "reanimator-every-lookup",
              "reanimator-fast-dev", "reanimator-sync", "reanimator-tracers3", "reanimator-wfull"]


def fs_table(rows):
    """Median per (workload, config); slowdown against native and against bindfs (the FUSE
    floor); CPU of the workload and of the daemon; trace or log size."""
    from statistics import median
    out = ["| workload | config | metric: runs | median | slowdown vs native | vs bindfs | workload CPU s "
           "| daemon CPU s | daemon peak RSS MB | unmount s | trace/log file (median) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    # The untar runs also timed rm -rf of the tree: a line of its own.
    rows = rows + [dict(r, workload="rm", cpu_s=r.get("rm_cpu_s", 0)) for r in rows
                   if r["workload"] == "untar" and "rm_s" in r]
    order = [w for w in FS_WORKLOADS if any(r["workload"] == w for r in rows)]
    for w in order:
        label, metric, key, higher = FS_WORKLOADS[w]
        label = _fio_label(label, rows, w)
        if w == "untar":
            n = {r.get("tree_entries") for r in rows if r["workload"] == w} - {None}
            if len(n) == 1:
                label += f" ({n.pop():,} entries)"
        # Every configuration the rows have gets a line: the known ones in their order, any
        # other after them (a new config is never left out of the table unnoticed).
        known = FS_CONFIGS + sorted({r["config"] for r in rows} - set(FS_CONFIGS))
        med = _medians(rows, w, known, key)
        fmt = (lambda v: f"{v:,.0f}") if higher else (lambda v: f"{v:.2f}")

        def ratio(c, m):
            if c not in med or not med[c][0] or not m:
                return ""
            b = med[c][0]
            return f"{(b / m if higher else m / b):.2f}×"
        for c, (m, rs) in med.items():
            vals = ", ".join(fmt(r[key]) for r in rs)
            shown = fmt(m)
            if w.startswith("rand"):
                shown += f" ({median(r['mb_s'] for r in rs):.1f} MB/s)"
            elif w == "fsmark" and all("files_s" in r for r in rs):
                shown += f" ({median(r['files_s'] for r in rs):,.0f} files/s)"
            vs_native = ratio("native", m) if c != "native" else ""
            vs_bindfs = ratio("bindfs", m) if c not in ("native", "bindfs") else ""
            cpu = f"{median(r['cpu_s'] for r in rs):.2f}"
            dcpu = drss = ums = size = ""
            if w != "rm" and c != "native":
                d = [r["daemon_cpu_s"] for r in rs if "daemon_cpu_s" in r]
                dcpu = f"{median(d):.2f}" if d else ""
                d = [r["daemon_rss_mb"] for r in rs if "daemon_rss_mb" in r]
                drss = f"{max(d):,.0f}" if d else ""
                d = [r["umount_s"] for r in rs if "umount_s" in r]
                ums = f"{median(d):.2f}" if d else ""
                if c == "loggedfs":
                    size = f"log {_size(median(r['out_bytes'] for r in rs))}"
                    if all("log_lines" in r for r in rs):
                        size += f" ({median(r['log_lines'] for r in rs):,.0f} lines)"
                elif c.startswith("reanimator"):
                    size = f"trace {_size(median(r['out_bytes'] for r in rs))}"
                    if all("records" in r for r in rs):
                        size += f" ({median(r['records'] for r in rs):,.0f} records"
                        if all("fs_ops" in r for r in rs) and any(r.get("fs_filtered") for r in rs):
                            size += f" of {median(r['fs_ops'] for r in rs):,.0f} operations"
                        if w.startswith("rand") and all("rw_records" in r for r in rs):
                            size += (f"; reads/writes {median(r['rw_records'] for r in rs):,.0f}"
                                     f" of fio's {median(r['ios'] for r in rs):,.0f} I/Os")
                        lost = max(r.get("lost", 0) for r in rs)
                        size += f"; lost {lost:,})" if lost else ")"
                if w == "untar" and size:
                    size += ", untar and rm -rf"
            name = f"{c} ({rs[0]['fstype']})" if c == "native" and "fstype" in rs[0] else c
            out.append(f"| {label} | {name} | {metric}: {vals} | {shown} | {vs_native} | {vs_bindfs} | {cpu} "
                       f"| {dcpu} | {drss} | {ums} | {size} |")
    return "\n".join(out)


def kernel_table(rows):
    """bench/record/kernel_cost.sh: median ns per program run, and the same less the noop
    programs' figures (the statistics' own overhead plus an empty program)."""
    from statistics import median
    out = ["| data | sys_enter ns/run | sys_exit ns/run | both, less noop | runs (enter+exit ns) "
           "| fio IOPS (stats on, median) |",
           "|---|---|---|---|---|---|"]
    med = {}
    for c in ["noop", "full", "hash", "none"]:
        rs = [r for r in rows if r["config"] == c]
        if rs:
            med[c] = (median(r["sys_enter_ns"] for r in rs), median(r["sys_exit_ns"] for r in rs), rs)
    base = med.get("noop")
    for c, (e, x, rs) in med.items():
        less = "" if c == "noop" or not base else f"{e + x - base[0] - base[1]:.0f}"
        runs = ", ".join(str(r["sys_enter_ns"] + r["sys_exit_ns"]) for r in rs)
        out.append(f"| {c} | {e:.0f} | {x:.0f} | {less} | {runs} | {median(r['iops'] for r in rs):,.0f} |")
    return "\n".join(out)


# bench/profile: workloads (label, metric, row key, higher is better) and configurations.
PROFILE_WORKLOADS = {
    "fio": ("fio randwrite 4 KiB, psync, 10 s", "IOPS", "iops", True),
    "sqlite": ("sqlite3 200k inserts, 2,000 txns", "sqlite3 elapsed s", "inner_s", False),
}
PROFILE_CONFIGS = ["vanilla", "ebpf-noop", "profile", "profile-all", "bpftrace", "record-none"]


def profile_table(rows):
    """bench/profile: median per (workload, config), against vanilla and against the bpftrace
    one-liner; then the programs' ns per call from the BPF statistics, and memory against run
    length."""
    from statistics import median
    runs = [r for r in rows if r.get("kind", "run") == "run"]
    out = ["| workload | config | metric: runs | median | slowdown vs vanilla (medians; by run) | vs bpftrace "
           "| CPU s, tool + workload (median) | peak RSS MB (max) | calls counted (median) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for w in [w for w in PROFILE_WORKLOADS if any(r["workload"] == w for r in runs)]:
        label, metric, key, higher = PROFILE_WORKLOADS[w]
        label = _fio_label(label, runs, w)
        med = _medians(runs, w, PROFILE_CONFIGS, key)
        fmt = (lambda v: f"{v:,.0f}") if higher else (lambda v: f"{v:.2f}")
        base = med.get("vanilla", (None,))[0]
        for c, (m, rs) in med.items():
            slow = "" if not base else f"{(base / m if higher else m / base):.2f}×"
            if base and c != "vanilla":
                van = {r["run"]: r[key] for r in med["vanilla"][1]}
                pairs = sorted((van[r["run"]] / r[key] if higher else r[key] / van[r["run"]])
                               for r in rs if r["run"] in van and r[key])
                if len(pairs) > 1:
                    slow += f" (by run {median(pairs):.2f}×, {pairs[0]:.2f}–{pairs[-1]:.2f})"
                if key == "inner_s":
                    # The whole run, the tool's start and end included (bpftrace compiles).
                    vw = med["vanilla"][0] and median(r["wall_s"] for r in med["vanilla"][1])
                    slow += f"; with the tool's start and end {median(r['wall_s'] for r in rs) / vw:.2f}×"
            vs = ""
            if c != "bpftrace" and c != "vanilla" and "bpftrace" in med:
                b = med["bpftrace"][0]
                x = m / b if higher else b / m
                vs = f"{x:.2f}× {'faster' if x >= 1 else 'slower'}"
            calls = [r["calls"] for r in rs if "calls" in r]
            counted = f"{median(calls):,.0f}" if calls else ""
            if c == "ebpf-noop":
                counted = "programs attached, returning at once: counts nothing"
            elif c == "profile-all" and all("other_ops" in r for r in rs):
                counted += f" (+ {median(r['other_ops'] for r in rs):,.0f} block/fs/cache operations)"
            elif c == "record-none" and calls:
                counted += " recorded"
            if w == "fio" and c != "vanilla" and calls:
                counted += f"; fio's writes {median(r['ios'] for r in rs):,.0f}"
            rss = [r["rss_mb"] for r in rs if "rss_mb" in r]
            rss = f"{max(rss):,.0f}" if rss else ""
            out.append(f"| {label} | {c} | {metric}: {', '.join(fmt(r[key]) for r in rs)} | {fmt(m)} | {slow} "
                       f"| {vs} | {median(r['cpu_s'] for r in rs):.1f} | {rss} | {counted} |")
    st = [r for r in rows if r.get("kind") == "stats"]
    if not st:
        return "\n".join(out)
    length = median(r["length_s"] for r in st)
    short = [r for r in st if r["length_s"] == length]
    out += ["", f"The programs' own cost (BPF statistics on, fio as above, {length:.0f} s runs; steady state "
            "between 1 s after loading and 1 s before the end):", "",
            "| config | sys_enter ns/run | sys_exit ns/run | enter + exit ns (median; runs) | above the noop floor "
            "| fio IOPS (stats on, median) | kernel maps MB | tool's own peak RSS MB (VmHWM) |",
            "|---|---|---|---|---|---|---|---|"]
    sums = {}
    for c in ["ebpf-noop", "profile", "profile-all", "bpftrace", "record-none"]:
        rs = [r for r in short if r["config"] == c]
        if rs:
            sums[c] = (median(r["enter_ns"] + r["exit_ns"] for r in rs), rs)
    floor = sums.get("ebpf-noop", (None,))[0]
    for c, (both, rs) in sums.items():
        above = "" if c == "ebpf-noop" or floor is None else f"{both - floor:+.0f}"
        hwm = [r["tool_hwm_mb"] for r in rs if "tool_hwm_mb" in r]
        each = ", ".join(f"{r['enter_ns'] + r['exit_ns']:.0f}" for r in rs)
        out.append(f"| {c} | {median(r['enter_ns'] for r in rs):.0f} | {median(r['exit_ns'] for r in rs):.0f} "
                   f"| {both:.0f} ({each}) | {above} "
                   f"| {median(r['iops'] for r in rs):,.0f} | {median(r['map_bytes'] for r in rs) / 2**20:.1f} "
                   f"| {f'{max(hwm):.0f}' if hwm else ''} |")
    prof = sorted((r for r in st if r["config"] == "profile"), key=lambda r: r["length_s"])
    lengths = sorted({r["length_s"] for r in prof})
    if len(lengths) > 1:
        out += ["", "`profile` (fio, BPF statistics on) at two run lengths: memory against run length:", "",
                "| fio run s | runs | tool's own peak RSS MB (VmHWM, max) | peak RSS MB under GNU time (max) "
                "| kernel maps MB | of which `hists` MB | sys_exit program runs between the readings (all tasks) |",
                "|---|---|---|---|---|---|---|"]
        for n in lengths:
            rs = [r for r in prof if r["length_s"] == n]
            hwm = [r["tool_hwm_mb"] for r in rs if "tool_hwm_mb" in r]
            rss = [r["rss_mb"] for r in rs if "rss_mb" in r]
            out.append(f"| {n} | {len(rs)} | {max(hwm) if hwm else 0:.1f} | {max(rss) if rss else 0:.1f} "
                       f"| {max(r['map_bytes'] for r in rs) / 2**20:.1f} "
                       f"| {max(r['maps'].get('hists', 0) for r in rs) / 2**20:.1f} "
                       f"| {median(r['exit_runs'] for r in rs):,.0f} |")
    return "\n".join(out)


def cut_table(rows):
    """bench/analysis/cut.sh: select, split and merge beside stats, per trace size; then each
    command's peak RSS at every size (bounded: the same whatever the trace's size)."""
    out = ["| trace | dd bs | calls | run | wall s | CPU s | MB/s of trace (wall) | peak RSS MB | output |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cpu = r["user_s"] + r["sys_s"]
        mbs = r["trace_bytes"] / 1e6 / r["wall_s"] if r["wall_s"] > 0 else float("inf")
        o = ""
        if r["out_bytes"]:
            o = _size(r["out_bytes"]) + (f" in {r['parts']} parts" if r["parts"] > 1 else "")
        out.append(f"| {_size(r['trace_bytes'])} | {r.get('bs', '')} | {r['calls']:,} | `{r['run']}` | {r['wall_s']:.2f} | {cpu:.2f} "
                   f"| {mbs:,.0f} | {r['peak_rss_mb']:.0f} | {o} |")
    traces = sorted({(r["trace_bytes"], r["calls"]) for r in rows})
    if len(traces) > 1:
        out += ["", "Peak RSS MB by trace (size, calls):", "",
                "| run | " + " | ".join(f"{_size(z)}, {n:,} calls" for z, n in traces) + " |",
                "|---|" + "---|" * len(traces)]
        for run in dict.fromkeys(r["run"] for r in rows):
            by = {(r["trace_bytes"], r["calls"]): r["peak_rss_mb"] for r in rows if r["run"] == run}
            out.append(f"| `{run}` | " + " | ".join(f"{by[t]:.0f}" if t in by else "" for t in traces) + " |")
    return "\n".join(out)


def main():
    section, results, command = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = [json.loads(l) for l in Path(results).read_text().splitlines() if l.strip()]
    # "record-<workloads>": a run of some of bench/record's workloads, in a section of its own.
    # "fs-<configs>-<workloads>": a run of some of bench/fs's rows or workloads, likewise;
    # "profile-<workloads>": a run of some of bench/profile's workloads.
    kind = section.split("-", 1)[0] if section.startswith(("record-", "fs-", "profile-")) else section
    table = {"codec": codec_table, "record": record_table, "replay": replay_table,
             "replay-timing": replay_timing_table, "replay-afap": replay_afap_table,
             "kernel": kernel_table, "fs": fs_table,
             "profile": profile_table, "cut": cut_table}[kind](rows)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = f"<!-- section:{section} -->\nCommand: `{command}` — {stamp}, {machine()}\n\n{table}\n<!-- /section:{section} -->"
    text = DOC.read_text() if DOC.exists() else "# Performance\n"
    pat = re.compile(rf"<!-- section:{section} -->.*?<!-- /section:{section} -->", re.S)
    if pat.search(text):
        text = pat.sub(lambda _: body, text)
    else:
        text = text.rstrip() + "\n\n" + body + "\n"
    DOC.write_text(text)


if __name__ == "__main__":
    main()

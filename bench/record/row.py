#!/usr/bin/env python3
"""One JSON line for one run of bench/record/run.sh.
usage: row.py WORKLOAD CONFIG RUN WALL_S CPU_S OUT_BYTES FIO_JSON STDERR_FILE [INFO_JSON [INNER_T [RSS_T]]]
fio: adds the write IOPS from fio's JSON output; reanimator: adds the number of recorded calls
from its summary line when it prints one ("recorded N calls"); eBPF runs: adds the lost-call
count and the throttle stops from `reanimator info --json` of the trace (INFO_JSON); the tool's
peak RSS in MB (1 MB = 1024 KB) from GNU time's %M (RSS_T); `--print` runs (PRINT_FILE in the
environment): the lines printed and the calls the printer said it dropped; io_uring runs
(STATS_JSON, `reanimator stats --json` of the trace): the io_uring requests recorded and the
bytes they wrote, beside fio's own counts (fio_ios, fio_bytes)."""
import json
import os
import re
import sys

workload, config, run, wall, cpu, size, fio_json, stderr = sys.argv[1:9]
info_json = sys.argv[9] if len(sys.argv) > 9 else None
inner_t = sys.argv[10] if len(sys.argv) > 10 else None
rss_t = sys.argv[11] if len(sys.argv) > 11 else None
row = {"workload": workload, "config": config, "run": int(run), "wall_s": float(wall),
       "cpu_s": float(cpu), "out_bytes": int(size)}
if workload.startswith("fio"):
    text = open(fio_json, errors="replace").read()
    # fio may print notices before the JSON object.
    job = json.loads(text[text.index("{"):])["jobs"][0]
    # (fiorw: reads and writes together.)
    dirs = ["read", "write"] if workload == "fiorw" else ["write"]
    row["iops"] = sum(job[d]["iops"] for d in dirs)
    row["fio_ios"] = sum(job[d]["total_ios"] for d in dirs)
    row["fio_bytes"] = sum(job[d]["io_bytes"] for d in dirs)
    row["ios"] = sum(job[d]["total_ios"] for d in dirs)
    row["fio_seconds"] = round(job["job_runtime"] / 1000)
if config.startswith(("reanimator", "ebpf")):
    m = re.search(r"recorded (\d+) calls(?: \(([\d.]+) MB of data\))?", open(stderr, errors="replace").read())
    if m:
        row["calls"] = int(m.group(1))
        if m.group(2):
            row["data_mb"] = float(m.group(2))
if config.startswith("ebpf") and info_json:
    info = json.load(open(info_json))
    row["lost"] = sum(l["count"] for l in info.get("lost", []))
    facts = info.get("info", {})
    row["throttle_stops"] = int(facts.get("ebpf_throttle_stops", 0) or 0)
    row["throttle_stopped_ms"] = int(facts.get("ebpf_throttle_stopped_ms", 0) or 0)
# The command's own elapsed seconds, from GNU time around it (sqlite3), when present.
if inner_t:
    try:
        row["inner_s"] = float(open(inner_t).read().split()[-1])
    except (OSError, ValueError, IndexError):
        pass
if rss_t:
    try:
        row["rss_mb"] = round(int(open(rss_t).read().split()[-1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
stats_json = os.environ.get("STATS_JSON")
if stats_json and os.path.exists(stats_json):
    groups = json.load(open(stats_json))["groups"]
    ring = [g for g in groups if g["group"].startswith("io_uring:")]
    row["uring_ops"] = sum(g["calls"] for g in ring)
    row["uring_written"] = sum(g["written_bytes"] for g in ring)
print_file = os.environ.get("PRINT_FILE")
if print_file and os.path.exists(print_file):
    printed = dropped = 0
    with open(print_file, "rb") as f:
        for line in f:
            m = re.match(rb"reanimator: --print fell behind the recording: (\d+) calls not shown", line)
            if m:
                dropped += int(m.group(1))
            else:
                printed += 1
    row["printed"] = printed
    row["print_dropped"] = dropped
print(json.dumps(row))

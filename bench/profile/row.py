#!/usr/bin/env python3
"""Rows of bench/profile/run.sh, one JSON line each.
usage: row.py run WORKLOAD CONFIG RUN WALL_S CPU_S DIR
       row.py stats WORKLOAD CONFIG RUN FIO_SECONDS DIR
       row.py loaded CONFIG PRE.json NOW.json   (exit 0 once CONFIG's two programs are loaded)
run: fio's write IOPS (DIR/fio.json), sqlite3's own elapsed seconds (DIR/inner.t), the peak
RSS under GNU time (DIR/rss.t, KB), and the calls the tool counted: profile, the counts of its
syscall histograms (DIR/out.json, --json; other layers apart); bpftrace, the counts of its @h
histograms (DIR/out.bt); record, "recorded N calls" on its stderr.
stats: from two `bpftool -j prog show` (DIR/p0.json, DIR/p1.json) the mean ns per run of the
configuration's sys_enter and sys_exit programs in between; from `bpftool -j map show`
(DIR/maps.json) the memory of the maps those programs use; the tool's VmHWM (DIR/hwm, KB)."""
import json
import re
import sys
from pathlib import Path

# The programs on sys_enter / sys_exit of each configuration: (bpftool type, name).
PROGS = {
    "ebpf-noop": (("tracing", "on_sys_enter"), ("tracing", "on_sys_exit")),
    "record-none": (("tracing", "on_sys_enter"), ("tracing", "on_sys_exit")),
    "profile": (("tracing", "prof_sys_enter"), ("tracing", "prof_sys_exit")),
    "profile-all": (("tracing", "prof_sys_enter"), ("tracing", "prof_sys_exit")),
    "bpftrace": (("tracepoint", "sys_enter"), ("tracepoint", "sys_exit")),
}


def fio_row(d, row):
    text = (d / "fio.json").read_text(errors="replace")
    # fio may print notices before the JSON object.
    job = json.loads(text[text.index("{"):])["jobs"][0]
    row["iops"] = job["write"]["iops"]
    row["ios"] = job["write"]["total_ios"]
    row["fio_seconds"] = round(job["job_runtime"] / 1000)


def rss(d):
    try:
        return round(int((d / "rss.t").read_text().split()[-1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        return None


def new_progs(pre, now):
    """Programs in NOW that were not loaded at PRE (other sessions' programs of the same name
    stay out), by (type, name): the newest of each."""
    old = {p["id"] for p in pre}
    out = {}
    for p in sorted(now, key=lambda p: p["id"]):
        if p["id"] not in old:
            out[(p.get("type"), p.get("name"))] = p
    return out


def run(workload, config, run_no, wall, cpu, d):
    d = Path(d)
    row = {"kind": "run", "workload": workload, "config": config, "run": int(run_no),
           "wall_s": float(wall), "cpu_s": float(cpu)}
    if workload == "fio":
        fio_row(d, row)
    if workload == "sqlite":
        row["inner_s"] = float((d / "inner.t").read_text().split()[-1])
    r = rss(d)
    if r is not None:
        row["rss_mb"] = r
    if config.startswith("profile"):
        sys_calls = other = no_latency = 0
        for line in (d / "out.json").read_text().splitlines():
            o = json.loads(line)
            if o.get("type") == "hist":
                if o["layer"] == "syscall":
                    sys_calls += o["count"]
                elif o["layer"] != "class":
                    other += o["count"]
            elif o.get("type") == "counters":
                no_latency += o["counters"].get("no_latency", 0)
        row["calls"] = sys_calls
        if config == "profile-all":
            row["other_ops"] = other
        row["no_latency"] = no_latency
    elif config == "bpftrace":
        # `@h[ID]:` then rows `[lo, hi)   COUNT |@@@|` (or `[N]` for the single-value buckets).
        calls = 0
        in_h = False
        for line in (d / "out.bt").read_text(errors="replace").splitlines():
            if line.startswith("@"):
                in_h = line.startswith("@h[")
                continue
            m = re.match(r"^\[[^\]]*[\])]\s+(\d+)\s+\|", line)
            if in_h and m:
                calls += int(m.group(1))
        row["calls"] = calls
    elif config == "record-none":
        m = re.search(r"recorded (\d+) calls", (d / "stderr").read_text(errors="replace"))
        if m:
            row["calls"] = int(m.group(1))
    print(json.dumps(row))


def stats(workload, config, run_no, secs, d):
    d = Path(d)
    pre = json.loads((d / "pre.json").read_text())
    p0 = new_progs(pre, json.loads((d / "p0.json").read_text()))
    p1 = new_progs(pre, json.loads((d / "p1.json").read_text()))
    row = {"kind": "stats", "workload": workload, "config": config, "run": int(run_no),
           "length_s": int(secs)}
    fio_row(d, row)
    map_ids = set()
    for side, key in zip(("enter", "exit"), PROGS[config]):
        a, b = p0.get(key), p1.get(key)
        if not a or not b or a["id"] != b["id"]:
            sys.exit(f"bench/profile: {config}: program {key[1]} not found in both bpftool readings")
        n = b.get("run_cnt", 0) - a.get("run_cnt", 0)
        row[f"{side}_ns"] = round((b.get("run_time_ns", 0) - a.get("run_time_ns", 0)) / max(1, n), 1)
        row[f"{side}_runs"] = n
    # Every map of the tool's programs (those loaded for this run).
    for p in p1.values():
        map_ids.update(p.get("map_ids", []))
    maps = [m for m in json.loads((d / "maps.json").read_text()) if m["id"] in map_ids]
    row["map_bytes"] = sum(m.get("bytes_memlock", 0) for m in maps)
    row["maps"] = {m.get("name", "?"): m.get("bytes_memlock", 0) for m in maps}
    try:
        row["tool_hwm_mb"] = round(int((d / "hwm").read_text().split()[0]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    r = rss(d)
    if r is not None:
        row["rss_mb"] = r
    print(json.dumps(row))


def loaded(config, pre, now):
    p = new_progs(json.loads(Path(pre).read_text()), json.loads(Path(now).read_text()))
    sys.exit(0 if all(k in p for k in PROGS[config]) else 1)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"run": run, "stats": stats, "loaded": loaded}[mode](*args)

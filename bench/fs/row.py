#!/usr/bin/env python3
"""One JSON line for one run of bench/fs/run.sh.
usage: row.py WORKLOAD CONFIG RUN key=value...
Plain keys are copied (numbers as numbers). Files named by these keys are read instead:
  fio_json=F    fio's JSON output: IOPS, MB/s (1 MB = 10^6 bytes), I/Os and runtime of the job
                (its read or write side, whichever the workload did);
  fsmark_out=F  fs_mark's report: its files/s (the mean of its rounds, -L);
  info_json=F   `reanimator info --json` of the trace: its operation records, lost calls;
  daemon_err=F  reanimator fs's stderr: operations served, recorded, filtered out;
  daemon_t=F    GNU time's "%M %U %S %w %c" around the FUSE daemon: its peak RSS (MB, 1 MB =
                1024 KB), CPU seconds and voluntary/involuntary context switches, mount to exit."""
import json
import re
import sys

workload, config, run, *kv = sys.argv[1:]
row = {"workload": workload, "config": config, "run": int(run)}
files = {}
for x in kv:
    k, v = x.split("=", 1)
    if k in ("fio_json", "fsmark_out", "info_json", "daemon_t", "daemon_err"):
        files[k] = v
        continue
    try:
        row[k] = float(v) if "." in v else int(v)
    except ValueError:
        row[k] = v

if "fio_json" in files:
    text = open(files["fio_json"], errors="replace").read()
    # fio may print notices before the JSON object.
    job = json.loads(text[text.index("{"):])["jobs"][0]
    side = job["read"] if job["read"]["total_ios"] else job["write"]
    row["iops"] = side["iops"]
    row["mb_s"] = side["bw_bytes"] / 1e6
    row["ios"] = side["total_ios"]
    row["fio_seconds"] = round(job["job_runtime"] / 1000)
if "fsmark_out" in files:
    # One table line per round: "FSUse%  Count  Size  Files/sec  App Overhead"; their mean.
    rates = [float(f[3]) for f in (line.split() for line in open(files["fsmark_out"], errors="replace"))
             if len(f) == 5 and f[0].isdigit()]
    if rates:
        row["files_s"] = sum(rates) / len(rates)
if "info_json" in files:
    info = json.load(open(files["info_json"]))
    # The operation records: all but the header's (Reanimator::TraceInfo).
    row["records"] = info.get("records", 0) - sum(
        t.get("records", 0) for t in info.get("types", []) if t.get("name", "").endswith("::TraceInfo"))
    row["lost"] = sum(l.get("count", 0) for l in info.get("lost", []))
if "daemon_err" in files:
    # reanimator fs's closing line: "N operations in S s, R recorded, F filtered out; trace ...".
    m = re.search(r"(\d+) operations in [\d.]+ s, (\d+) recorded, (\d+) filtered out",
                  open(files["daemon_err"], errors="replace").read())
    if m:
        row["fs_ops"], row["fs_recorded"], row["fs_filtered"] = (int(g) for g in m.groups())
if "daemon_t" in files:
    try:
        rss, user, sys_, vcsw, ivcsw = open(files["daemon_t"]).read().split()[-5:]
        row["daemon_rss_mb"] = round(int(rss) / 1024, 1)
        row["daemon_cpu_s"] = round(float(user) + float(sys_), 2)
        row["daemon_vcsw"], row["daemon_ivcsw"] = int(vcsw), int(ivcsw)
    except (OSError, ValueError):
        pass
print(json.dumps(row))

#!/usr/bin/env python3
"""Per-request account of a bench/fs run: where the time goes, per workload and configuration.
usage: account.py RESULTS.jsonl   (the JSON lines bench/fs/run.sh prints at its end)
For each workload and row, medians over the runs: the workload's figure, the FUSE requests the
reanimator daemon served (its closing line's operation count: every request but FORGET and
INTERRUPT) and per workload operation unit, daemon CPU microseconds per request, daemon
context switches (voluntary + involuntary) per request, and daemon CPU seconds. Prints a
Markdown table."""
import json
import statistics
import sys
from collections import defaultdict

rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = defaultdict(list)
order = []
for r in rows:
    k = (r["workload"], r["config"])
    if k not in by:
        order.append(k)
    by[k].append(r)


def med(rs, f):
    v = [f(r) for r in rs]
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(x, p=2):
    return "" if x is None else f"{x:,.{p}f}"


print("| workload | config | runs | figure: median (runs) | requests | daemon CPU s | CPU µs / request | context switches / request |")
print("|---|---|---|---|---|---|---|---|")
for k in order:
    rs = by[k]
    w, c = k
    key, unit, p = ("iops", "IOPS", 0) if "iops" in rs[0] else ("wall_s", "s", 2)
    fig = f"{fmt(med(rs, lambda r: r.get(key)), p)} {unit}"
    if len(rs) > 1:
        fig += " (" + ", ".join(fmt(r.get(key), p) for r in rs) + ")"
    req = med(rs, lambda r: r.get("fs_ops"))
    cpu = med(rs, lambda r: r.get("daemon_cpu_s"))
    us = med(rs, lambda r: r["daemon_cpu_s"] * 1e6 / r["fs_ops"] if r.get("fs_ops") and "daemon_cpu_s" in r else None)
    cs = med(rs, lambda r: (r["daemon_vcsw"] + r["daemon_ivcsw"]) / r["fs_ops"] if r.get("fs_ops") and "daemon_vcsw" in r else None)
    csabs = med(rs, lambda r: r["daemon_vcsw"] + r["daemon_ivcsw"] if "daemon_vcsw" in r else None)
    cs_txt = fmt(cs) if cs is not None else (f"({fmt(csabs, 0)} in all)" if csabs is not None else "")
    print(f"| {w} | {c} | {len(rs)} | {fig} | {fmt(req, 0)} | {fmt(cpu)} | {fmt(us, 1)} | {cs_txt} |")

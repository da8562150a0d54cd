#!/usr/bin/env python3
"""Rows and table of bench/profile/sample.sh.
usage: sample_row.py loaded PRE.json NOW.json   (exit 0 once the profiler's two programs load)
       sample_row.py CONFIG RUN DIR             (one JSON line: fio's IOPS and writes; for
                                                 profiled runs the ns per run of prof_sys_enter
                                                 and prof_sys_exit between DIR/p0.json and
                                                 DIR/p1.json, and the writes the profile counted)
       sample_row.py table RESULTS.jsonl COMMAND (the section "profile-sample" of
                                                 docs/PERFORMANCE.md)"""
import json
import platform
import re
import statistics
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
NAMES = ("prof_sys_enter", "prof_sys_exit")


def new_progs(pre, now):
    old = {p["id"] for p in pre}
    out = {}
    for p in sorted(now, key=lambda p: p["id"]):
        if p["id"] not in old and p.get("name") in NAMES:
            out[p["name"]] = p
    return out


def load(path):
    return json.loads(Path(path).read_text())


def row(cfg, run, d):
    d = Path(d)
    text = (d / "fio.json").read_text(errors="replace")
    job = json.loads(text[text.index("{"):])["jobs"][0]
    r = {"config": cfg, "run": int(run), "iops": job["write"]["iops"],
         "ios": job["write"]["total_ios"]}
    if cfg != "vanilla":
        pre = load(d / "pre.json")
        p0, p1 = new_progs(pre, load(d / "p0.json")), new_progs(pre, load(d / "p1.json"))
        for n in NAMES:
            a, b = p0.get(n), p1.get(n)
            # bpftool leaves the counters out while they are 0.
            if a and b and b.get("run_cnt", 0) > a.get("run_cnt", 0):
                r[n] = ((b.get("run_time_ns", 0) - a.get("run_time_ns", 0))
                        / (b["run_cnt"] - a.get("run_cnt", 0)))
        writes = 0
        for line in (d / "prof.json").read_text().splitlines():
            v = json.loads(line)
            if v.get("type") == "hist" and v["layer"] == "syscall" and v["op"].startswith("pwrite"):
                writes += v["count"]
        r["counted_writes"] = writes
    return r


def machine():
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    return f"{platform.node()}, Linux {platform.release()}, {cpu}, {nproc} cores; commit {commit}"


def table(results, command):
    rows = [json.loads(l) for l in Path(results).read_text().splitlines() if l.strip()]
    configs = []
    for r in rows:
        if r["config"] not in configs:
            configs.append(r["config"])
    med = lambda c, k: statistics.median([r[k] for r in rows if r["config"] == c and k in r])
    base = med("vanilla", "iops")
    out = ["| configuration | fio IOPS by run | median | vanilla / this | sys_enter ns/run | sys_exit ns/run | writes counted / fio's (median run) |",
           "|---|---|---|---|---|---|---|"]
    for c in configs:
        runs = [r for r in rows if r["config"] == c]
        iops = ", ".join(f"{r['iops']:,.0f}" for r in runs)
        m = med(c, "iops")
        ns = lambda k: f"{med(c, k):.0f}" if any(k in r for r in runs) else "-"
        if c == "vanilla":
            counted = "-"
        else:
            ratios = sorted(r["counted_writes"] / r["ios"] for r in runs if r["ios"])
            counted = f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})"
        out.append(f"| {c} | {iops} | {m:,.0f} | {base / m:.2f}× | {ns('prof_sys_enter')} | {ns('prof_sys_exit')} | {counted} |")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = (f"<!-- section:profile-sample -->\nCommand: `{command}` — {stamp}, {machine()}\n\n"
            + "\n".join(out) + "\n<!-- /section:profile-sample -->")
    doc = ROOT / "docs/PERFORMANCE.md"
    text = doc.read_text()
    pat = re.compile(r"<!-- section:profile-sample -->.*?<!-- /section:profile-sample -->", re.S)
    if pat.search(text):
        text = pat.sub(lambda _: body, text)
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    doc.write_text(text)
    print(body)


def main():
    a = sys.argv[1:]
    if a and a[0] == "loaded":
        sys.exit(0 if len(new_progs(load(a[1]), load(a[2]))) == 2 else 1)
    if a and a[0] == "table":
        table(a[1], a[2])
        return
    print(json.dumps(row(a[0], a[1], a[2])))


if __name__ == "__main__":
    main()

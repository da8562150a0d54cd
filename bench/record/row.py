#!/usr/bin/env python3
"""One JSON line for one run of bench/record/run.sh.
usage: row.py WORKLOAD CONFIG RUN WALL_S CPU_S OUT_BYTES FIO_JSON STDERR_FILE
fio: adds the write IOPS from fio's JSON output; reanimator: adds the number of recorded calls
from its summary line when it prints one ("recorded N calls")."""
import json
import re
import sys

workload, config, run, wall, cpu, size, fio_json, stderr = sys.argv[1:]
row = {"workload": workload, "config": config, "run": int(run), "wall_s": float(wall),
       "cpu_s": float(cpu), "out_bytes": int(size)}
if workload == "fio":
    text = open(fio_json, errors="replace").read()
    # fio may print notices before the JSON object.
    job = json.loads(text[text.index("{"):])["jobs"][0]
    row["iops"] = job["write"]["iops"]
    row["ios"] = job["write"]["total_ios"]
if config.startswith("reanimator"):
    m = re.search(r"recorded (\d+) calls", open(stderr, errors="replace").read())
    if m:
        row["calls"] = int(m.group(1))
print(json.dumps(row))

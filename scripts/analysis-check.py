#!/usr/bin/env python3
"""Run docs/ANALYSIS.md's queries with DuckDB over a Parquet export and check every answer
against values computed here, independently, from `reanimator dump --format jsonl` of the same
traces; read the tables back with pyarrow and check the data buffers byte for byte.

usage: analysis-check.py DATASET HOST/TRACE_ID=DUMP.jsonl... [--files HOST/TRACE_ID]...

`--files` names the traces whose busiest files are checked (the independent descriptor model
here follows open/openat/creat of absolute paths, dup/dup2/dup3 and close only). Prints one
line per query and exits 1 on the first difference."""

import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pyarrow.dataset as pads

READS = {"read", "pread64", "readv", "preadv", "preadv2"}
WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}


def queries(doc):
    """The `-- query: NAME` sql blocks of docs/ANALYSIS.md."""
    out = {}
    for block in re.findall(r"```sql\n(.*?)```", doc, re.S):
        m = re.match(r"-- query: (\w+)\n", block)
        if m:
            out[m.group(1)] = block[m.end():].strip().rstrip(";")
    return out


def views(doc, dataset):
    """The CREATE VIEW statements of the page, pointed at DATASET."""
    v = re.findall(r"^CREATE VIEW .*?;$", doc, re.M)
    return [s.replace("'dataset/", f"'{dataset}/") for s in v]


def json_bytes(v):
    if v is None:
        return None
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, dict) and "hex" in v:
        return bytes.fromhex(v["hex"])
    return None


def nearest_rank(sorted_vals, q):
    return sorted_vals[max(0, math.ceil(len(sorted_vals) * q) - 1)]


def expected(dumps, files_for):
    calls = defaultdict(lambda: [0, 0])
    io = defaultdict(lambda: [0, 0])
    lat = defaultdict(list)
    busy = defaultdict(lambda: [0, 0])
    per_host = {}
    for (host, tid), path in dumps.items():
        fds = {}
        io[(host, tid)]
        for line in open(path):
            e = json.loads(line)
            name, sc, ret = e["call"], e.get("syscall"), e.get("return_value")
            c = calls[(host, tid, name)]
            c[0] += 1
            if e.get("errno") not in (None, 0):
                c[1] += 1
            if ret is not None and ret > 0 and sc in READS:
                io[(host, tid)][0] += ret
            if ret is not None and ret > 0 and sc in WRITES:
                io[(host, tid)][1] += ret
            tc, tr = e.get("time_called"), e.get("time_returned")
            if tc is not None and tr is not None:
                lat[(host, tid, name)].append(tr - tc)
            h = per_host.setdefault(host, [set(), 0, None, None])
            h[0].add(tid)
            h[1] += 1
            if tc is not None:
                h[2] = tc if h[2] is None else min(h[2], tc)
            if tr is not None:
                h[3] = tr if h[3] is None else max(h[3], tr)
            if (host, tid) not in files_for:
                continue
            a, pid = e.get("args", {}), e.get("pid")
            if sc in ("open", "openat", "creat") and ret is not None and ret >= 0:
                p = json_bytes(a.get("pathname"))
                fds[(pid, ret)] = p.decode() if p and p.startswith(b"/") else None
            elif sc in ("dup", "dup2", "dup3") and ret is not None and ret >= 0:
                fds[(pid, ret)] = fds.get((pid, a.get("oldfd", a.get("fildes"))))
            elif sc == "close" and ret == 0:
                fds.pop((pid, a.get("fd")), None)
            elif ret is not None and ret > 0 and sc in READS | WRITES:
                f = fds.get((pid, a.get("fd")))
                if f is not None:
                    b = busy[(host, tid, f)]
                    b[0] += 1
                    b[1] += ret
    exp = {}
    exp["calls_per_call"] = sorted((h, t, c, v[0], v[1]) for (h, t, c), v in calls.items())
    exp["bytes"] = sorted((h, t, v[0], v[1]) for (h, t), v in io.items())
    rows = []
    for (h, t, c), v in lat.items():
        v.sort()
        rows.append((h, t, c, len(v), nearest_rank(v, 0.5), nearest_rank(v, 0.9),
                     nearest_rank(v, 0.99), v[-1]))
    exp["latency"] = sorted(rows)
    rows = sorted(((h, t, f, v[0], v[1]) for (h, t, f), v in busy.items()),
                  key=lambda r: (r[0], r[1], -r[4], r[2]))
    rank = defaultdict(int)
    exp["busiest_files"] = []
    for r in rows:
        rank[r[:2]] += 1
        if rank[r[:2]] <= 10:
            exp["busiest_files"].append(r)
    return exp, per_host


def main():
    args = sys.argv[1:]
    files_for = set()
    while "--files" in args:
        i = args.index("--files")
        files_for.add(tuple(args[i + 1].split("/", 1)))
        del args[i:i + 2]
    dataset, pairs = args[0], args[1:]
    dumps = {}
    for p in pairs:
        k, v = p.split("=", 1)
        dumps[tuple(k.split("/", 1))] = v
    doc = (Path(__file__).resolve().parent.parent / "docs/ANALYSIS.md").read_text()
    qs = queries(doc)
    con = duckdb.connect()
    for v in views(doc, dataset):
        con.execute(v)
    exp, per_host = expected(dumps, files_for)
    fail = False

    def check(name, got, want):
        nonlocal fail
        if got != want:
            fail = True
            i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                     min(len(got), len(want)))
            print(f"{name}: DIFFERENT ({len(got)} rows, {len(want)} expected), from row {i}:"
                  f"\n  duckdb: {got[i:i + 3]}\n  jsonl:  {want[i:i + 3]}")
        else:
            print(f"{name}: {len(got)} rows equal")

    for name in ("calls_per_call", "bytes", "latency"):
        got = [tuple(r) for r in con.execute(qs[name]).fetchall()]
        check(name, got, exp[name])
    got = [tuple(r) for r in con.execute(qs["busiest_files"]).fetchall()
           if (r[0], r[1]) in files_for]
    want = exp["busiest_files"]
    if not want:
        print("busiest_files: no files in the independent model"); fail = True
    check("busiest_files", got, want)
    got = [tuple(r) for r in con.execute(qs["per_host"]).fetchall()]
    want = {h: (len(v[0]), v[1], v[2], v[3]) for h, v in per_host.items()}
    got_h = {}
    for h, _backend, traces, n, first, last in got:
        t = got_h.get(h, (0, 0, None, None))
        got_h[h] = (t[0] + traces, t[1] + n, first if t[2] is None else min(t[2], first),
                    last if t[3] is None else max(t[3], last))
    check("per_host", sorted(got_h.items()), sorted(want.items()))

    # pyarrow: the dataset read back, and every data buffer the dumps hold, byte for byte.
    calls = pads.dataset(f"{dataset}/calls", format="parquet", partitioning="hive").to_table()
    print(f"pyarrow: calls {calls.num_rows} rows, {calls.num_columns} columns")
    data_dir = Path(dataset) / "data"
    if data_dir.exists():
        data = {}
        for f in data_dir.glob("*/*/*.parquet"):
            t = pq.read_table(f, columns=["trace_id", "digest", "length", "bytes"]).to_pydict()
            for tid, d, n, b in zip(t["trace_id"], t["digest"], t["length"], t["bytes"]):
                assert len(b) == n, f"data row of {tid}: length {n}, {len(b)} bytes"
                data[(tid, d)] = b
        cols = [c for c in calls.column_names if c.endswith("_digest")]
        by_id = {}
        t = calls.select(["host", "trace_id", "unique_id"] + cols).to_pydict()
        for i in range(calls.num_rows):
            for c in cols:
                d = t[c][i]
                if d is not None:
                    by_id[(t["host"][i], t["trace_id"][i], t["unique_id"][i], c[:-7])] = d
        checked = 0
        for (host, tid), path in dumps.items():
            for line in open(path):
                e = json.loads(line)
                for arg, v in e.get("args", {}).items():
                    d = by_id.get((host, tid, e["unique_id"], arg))
                    if d is None:
                        continue
                    if isinstance(v, list):
                        want = b"".join(json_bytes(x.get("data")) or b"" for x in v)
                    else:
                        want = json_bytes(v)
                    if want is None:
                        continue
                    got = data.get((tid, d))
                    if got != want:
                        fail = True
                        print(f"data: {tid} call {e['unique_id']} {arg}: "
                              f"{got!r:.60} != {want!r:.60}")
                        break
                    checked += 1
        print(f"data: {checked} buffers equal to the dumps' bytes")
        if checked == 0:
            fail = True
    sys.exit(1 if fail else 0)


if __name__ == "__main__":
    main()

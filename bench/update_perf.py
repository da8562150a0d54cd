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


def main():
    section, results, command = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = [json.loads(l) for l in Path(results).read_text().splitlines() if l.strip()]
    table = {"codec": codec_table}[section](rows)
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

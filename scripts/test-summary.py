#!/usr/bin/env python3
"""Totals of a `cargo test -- --show-output` log, with the tests that skipped, by name.

A test that cannot run here (no root, no eBPF, a program or fixture missing) returns early
after printing a line that starts with `skip:`; libtest counts it as passed. With
--show-output libtest prints each passing test's captured output under `---- NAME stdout
----`, so those lines name the test. This prints every such test (and `skip (part):` lines
of tests that ran only in part), then one closing line with real counts:

    tests: 340 passed, 0 failed, 3 skipped (2 by a skip line, 1 ignored)

Usage: test-summary.py [--no-skips] LOG

With --no-skips (CI: root, every fixture present) a test that skipped is a failure: exit 3.
"""
import re
import sys

binary = "?"
current = None
skipped = {}  # (binary, test) -> reason
partial = {}
passed = failed = ignored = 0
result = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")
running = re.compile(r"^\s+(Running|Doc-tests) (\S+)")
section = re.compile(r"^---- (.+) std(out|err) ----$")

args = sys.argv[1:]
no_skips = "--no-skips" in args
args = [a for a in args if a != "--no-skips"]

with open(args[0], errors="replace") as f:
    for line in f:
        line = line.rstrip("\n")
        m = running.match(line)
        if m:
            # "tests/record_ebpf.rs (target/...)" -> record_ebpf; "unittests src/lib.rs (..deps/ra_trace-..)"
            rest = line.split(m.group(1), 1)[1].strip()
            dep = re.search(r"deps/([A-Za-z0-9_]+?)-[0-9a-f]+\)", rest)
            binary = dep.group(1) if dep else m.group(2)
            current = None
            continue
        m = section.match(line)
        if m:
            current = m.group(1)
            continue
        if line in ("successes:", "failures:") or line.startswith("test result:"):
            current = None
        m = result.match(line)
        if m:
            passed += int(m.group(1))
            failed += int(m.group(2))
            ignored += int(m.group(3))
            continue
        if current is None:
            continue
        s = line.strip()
        if s.startswith("skip:"):
            skipped.setdefault((binary, current), s[len("skip:"):].strip())
        elif s.startswith("skip (part):"):
            partial.setdefault((binary, current), s[len("skip (part):"):].strip())

if skipped:
    print(f"\nskipped at run time ({len(skipped)}): the test returned early")
    for (b, t), why in sorted(skipped.items()):
        print(f"  {b}::{t}: {why}")
if partial:
    print(f"\nran in part ({len(partial)}):")
    for (b, t), why in sorted(partial.items()):
        print(f"  {b}::{t}: {why}")
real_passed = passed - len(skipped)
print(
    f"\ntests: {real_passed} passed, {failed} failed, {len(skipped) + ignored} skipped "
    f"({len(skipped)} by a skip line, {ignored} ignored), {len(partial)} ran in part"
)
if no_skips and (skipped or partial):
    print("tests that skip are failures here (--no-skips: CI runs as root with every fixture)")
    sys.exit(3)

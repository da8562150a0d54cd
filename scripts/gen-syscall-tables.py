#!/usr/bin/env python3
"""Generate crates/syscalls/src/generated/{x86_64,aarch64}.rs from the kernel UAPI headers.

Usage:
    scripts/gen-syscall-tables.py [--check] [--x86-64-header H] [--generic-header H]

Inputs (Debian/Ubuntu package linux-libc-dev):
    /usr/include/x86_64-linux-gnu/asm/unistd_64.h   x86_64 table (`#define __NR_name N`)
    /usr/include/asm-generic/unistd.h               the generic table aarch64 uses

With --check nothing is written; the exit status is 1 if any generated file would change.
Python 3 standard library only.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "crates", "syscalls", "src", "generated")
X86_64_HEADER = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
GENERIC_HEADER = "/usr/include/asm-generic/unistd.h"

DEFINE_RE = re.compile(r"^\s*#\s*define\s+(__NR3264_|__NR_)(\w+)\s+(.+?)\s*(?:/\*.*)?$")


def parse_x86_64(path):
    """`#define __NR_name N` lines -> [(name, nr)] sorted by number."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\s*#\s*define\s+__NR_(\w+)\s+(\d+)\s*$", line)
            if m:
                out.append((m.group(1), int(m.group(2))))
    return sorted(out, key=lambda e: (e[1], e[0]))


def parse_generic(path):
    """The asm-generic table as compiled for a 64-bit arch (aarch64).

    The header is a C file with conditionals: `__BITS_PER_LONG == 32` branches, optional
    `__ARCH_WANT_*` blocks, and `__NR3264_foo` numbers which 64-bit arches publish as `__NR_foo`
    (`#define __NR_fcntl __NR3264_fcntl` inside `#if __BITS_PER_LONG == 64 ...`). We evaluate
    the conditionals for aarch64: __BITS_PER_LONG = 64, and of the __ARCH_WANT_* macros only
    those arch/arm64/include/uapi/asm/unistd.h defines (RENAMEAT, NEW_STAT, SET_GET_RLIMIT,
    TIME32_SYSCALLS is 32-bit only, SYS_CLONE3, MEMFD_SECRET).
    """
    defined = {
        "__ARCH_WANT_RENAMEAT",
        "__ARCH_WANT_NEW_STAT",
        "__ARCH_WANT_SET_GET_RLIMIT",
        "__ARCH_WANT_SYS_CLONE3",
        "__ARCH_WANT_MEMFD_SECRET",
    }
    values = {}  # macro name -> int or alias name
    stack = []  # [active, taken] per #if level

    def active():
        return all(s[0] for s in stack)

    def eval_cond(expr):
        expr = re.sub(r"/\*.*?\*/", "", expr).strip()
        expr = re.sub(r"defined\s*\(\s*(\w+)\s*\)", lambda m: "1" if m.group(1) in defined else "0", expr)
        expr = re.sub(r"defined\s+(\w+)", lambda m: "1" if m.group(1) in defined else "0", expr)
        expr = expr.replace("__BITS_PER_LONG", "64").replace("__SYSCALL_COMPAT", "0")
        expr = re.sub(r"\b__[A-Z0-9_]+\b", "0", expr)
        expr = expr.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
        expr = expr.replace(" not =", "!=")
        return bool(eval(expr, {"__builtins__": {}}, {}))

    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = text.replace("\\\n", " ")
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"#\s*(ifdef|ifndef|if|elif|else|endif)\b\s*(.*)", s)
        if m:
            d, rest = m.group(1), m.group(2)
            if d == "ifdef":
                c = rest.split()[0] in defined
                stack.append([c, c])
            elif d == "ifndef":
                c = rest.split()[0] not in defined
                stack.append([c, c])
            elif d == "if":
                c = eval_cond(rest)
                stack.append([c, c])
            elif d == "elif":
                c = (not stack[-1][1]) and eval_cond(rest)
                stack[-1] = [c, stack[-1][1] or c]
            elif d == "else":
                stack[-1] = [not stack[-1][1], True]
            elif d == "endif":
                stack.pop()
            continue
        if not active():
            continue
        m = re.match(r"#\s*define\s+(\w+)\s+(\w+)", s)
        if m:
            name, val = m.group(1), m.group(2)
            if name == "__NR_syscalls":
                continue
            if not (name.startswith("__NR_") or name.startswith("__NR3264_")):
                continue
            values[name] = int(val) if val.isdigit() else val
        m = re.match(r"#\s*undef\s+(\w+)", s)
        if m:
            values.pop(m.group(1), None)

    def resolve(v, depth=0):
        while isinstance(v, str) and depth < 10:
            v = values.get(v)
            depth += 1
        return v

    out = []
    for name, v in values.items():
        if not name.startswith("__NR_"):
            continue
        nr = resolve(v)
        if not isinstance(nr, int):
            raise SystemExit(f"{path}: cannot resolve {name} = {v!r}")
        out.append((name[len("__NR_"):], nr))
    if len(out) < 250:
        raise SystemExit(f"{path}: only {len(out)} syscalls parsed; parser out of date?")
    return sorted(out, key=lambda e: (e[1], e[0]))


def render(table, header, arch_name):
    lines = [
        f"// @generated by scripts/gen-syscall-tables.py from {header}; do not edit.",
        f"// {arch_name} syscall numbers: (kernel name, number), sorted by number.",
        "",
        "pub(crate) const ENTRIES: &[(&str, u32)] = &[",
    ]
    for name, nr in table:
        lines.append(f'    ("{name}", {nr}),')
    lines.append("];")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file would change")
    ap.add_argument("--x86-64-header", default=X86_64_HEADER)
    ap.add_argument("--generic-header", default=GENERIC_HEADER)
    args = ap.parse_args()

    outputs = {
        "x86_64.rs": render(parse_x86_64(args.x86_64_header), args.x86_64_header, "x86_64"),
        "aarch64.rs": render(parse_generic(args.generic_header), args.generic_header, "aarch64"),
    }
    stale = []
    for fname, text in outputs.items():
        path = os.path.join(OUT_DIR, fname)
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                old = f.read()
        if old == text:
            continue
        if args.check:
            stale.append(path)
        else:
            os.makedirs(OUT_DIR, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {path}")
    if stale:
        for p in stale:
            print(f"stale: {p} (run scripts/gen-syscall-tables.py)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

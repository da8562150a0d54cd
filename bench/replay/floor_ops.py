"""The input of bench/replay/floor.c from `reanimator dump -s 1 --type pwrite,fadvise64 TRACE` on
stdin: the trace's pwrite and fadvise calls on the file of its first pwrite, one per line
("w OFFSET LENGTH", "a OFFSET LENGTH ADVICE"); calls on other descriptors, and writes that
wrote less than asked, are left out (counted on stderr)."""
import re
import sys

ADVICE = {"POSIX_FADV_NORMAL": 0, "POSIX_FADV_RANDOM": 1, "POSIX_FADV_SEQUENTIAL": 2,
          "POSIX_FADV_WILLNEED": 3, "POSIX_FADV_DONTNEED": 4, "POSIX_FADV_NOREUSE": 5}
fd = None
n = other = 0
for line in sys.stdin:
    # (A descriptor is shown with its path: `3</w/fio.dat>`.)
    m = re.search(r"\] pwrite\((\d+)(?:<[^>]*>)?, .*, (\d+), (\d+)\) = (-?\d+)", line)
    a = re.search(r"\] fadvise64\((\d+)(?:<[^>]*>)?, (\d+), (\d+), (\w+)\) = 0", line)
    if m:
        fd = fd or m.group(1)
        if m.group(1) == fd and m.group(4) == m.group(2):
            print("w", m.group(3), m.group(2))
            n += 1
            continue
    elif a and a.group(1) == (fd or a.group(1)) and a.group(4) in ADVICE:
        fd = fd or a.group(1)
        print("a", a.group(2), a.group(3), ADVICE[a.group(4)])
        n += 1
        continue
    other += 1
print(f"bench/replay: floor: {n} calls on fd {fd}; {other} others left out", file=sys.stderr)

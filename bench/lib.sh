# Shared by the bench/*/run.sh scripts (sourced): the workloads they have in common and the
# page-cache reset between runs, so that the record and replay benchmarks measure the same
# workloads.

# Flush and drop the page cache (when /proc/sys/vm/drop_caches is writable, i.e. as root).
drop_caches() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; fi
}

# sqlite_inserts FILE: the sqlite3 workload's SQL: a table, then 2,000 transactions of 100
# INSERTs of 100-byte text (200,000 rows, 27.6 MB of SQL).
sqlite_inserts() {
  python3 - "$1" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("CREATE TABLE t(k INTEGER, v TEXT);\n")
    v = "x" * 100
    for t in range(2000):
        f.write("BEGIN;\n")
        for i in range(100):
            f.write(f"INSERT INTO t(k,v) VALUES({t * 100 + i},'{v}');\n")
        f.write("COMMIT;\n")
PY
}

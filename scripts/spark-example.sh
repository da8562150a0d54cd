#!/usr/bin/env bash
# docs/ANALYSIS.md's queries on Spark in local mode over a Parquet dataset of several traces,
# each answer compared with DuckDB's over the same files (which scripts/analysis-check.py
# checks against the traces themselves). Needs Java 17 (Debian: openjdk-17-jre-headless) and
# pyspark (pip install pyspark; installed here when missing). Not in the quick CI path: Spark
# takes a minute to start.
# usage: scripts/spark-example.sh [DATASET]   (default: an export of ../shared/testdata's
#        Re-Animator traces and testdata/example.ds, made with RA=reanimator)
set -euo pipefail
cd "$(dirname "$0")/.."
RA=${RA:-target/release/reanimator}
python3 -c "import pyspark" 2>/dev/null || python3 -m pip install -q pyspark
command -v java >/dev/null || { echo "spark-example: java not found (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
DS=${1:-}
if [ -z "$DS" ]; then
  DS=$(mktemp -d /tmp/ra-spark.XXXXXX)/dataset
  "$RA" export ../shared/testdata/dataseries/reanimator-replayer/*.ds testdata/example.ds \
    --format parquet -o "$DS" --data full -q
fi
python3 - "$DS" <<'PY'
import re, sys, time
from pathlib import Path
import duckdb
from pyspark.sql import SparkSession

ds = sys.argv[1]
doc = Path("docs/ANALYSIS.md").read_text()
queries = {}
for block in re.findall(r"```sql\n(.*?)```", doc, re.S):
    m = re.match(r"-- query: (\w+)\n", block)
    if m:
        queries[m.group(1)] = block[m.end():].strip().rstrip(";")
con = duckdb.connect()
for v in re.findall(r"^CREATE VIEW .*?;$", doc, re.M):
    con.execute(v.replace("'dataset/", f"'{ds}/"))

t = time.time()
spark = (SparkSession.builder.master("local[2]").appName("reanimator-analysis")
         .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
for table in ("calls", "data", "facts"):
    spark.read.option("mergeSchema", "true").parquet(f"{ds}/{table}").createOrReplaceTempView(table)
print(f"spark {spark.version} local[2] started and read {ds} in {time.time() - t:.1f} s")

def spark_sql(q):
    # DuckDB's quantile_disc(x, q) is Spark's percentile_disc(q) WITHIN GROUP (ORDER BY x)
    # (both nearest rank).
    return re.sub(r"quantile_disc\((\w+), ([0-9.]+)\)",
                  r"percentile_disc(\2) WITHIN GROUP (ORDER BY \1)", q)

def norm(rows):
    return [tuple(int(v) if isinstance(v, float) and v.is_integer() else v for v in r)
            for r in rows]

bad = 0
for name, q in queries.items():
    t = time.time()
    got = norm(tuple(r) for r in spark.sql(spark_sql(q)).collect())
    dt = time.time() - t
    want = norm(tuple(r) for r in con.execute(q).fetchall())
    same = got == want
    bad += not same
    print(f"{name}: {len(got)} rows in {dt:.2f} s on Spark, "
          f"{'the same as DuckDB' if same else 'DIFFERENT from DuckDB'}")
    for r in got[:3]:
        print("   ", r)
    if not same:
        print("    duckdb:", want[:3])
spark.stop()
sys.exit(1 if bad else 0)
PY

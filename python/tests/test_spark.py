"""verdict.spark in local[2] mode: the same verdicts as `check --format jsonl` on a
generated 100k-record log (bench/gen.py, into a temp folder), the funnel as the CLI's
summary counts it, and the chain summary as `verdict chains` reports samples/chains."""

import json
import os
import shutil
import subprocess
import sys

import pytest

pyspark = pytest.importorskip("pyspark", reason="pip install pyspark pyarrow (docs/python.md#tests)")
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

import verdict.spark  # noqa: E402
from conftest import REPO  # noqa: E402

N = 100_000


@pytest.fixture(scope="module")
def spark():
    # the executors' Python is this one (its pyarrow and verdict), not the first on PATH
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    s = (
        SparkSession.builder.master("local[2]")
        .appName("verdict-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "4096")
        .getOrCreate()
    )
    yield s
    s.stop()


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """bench/gen.py's workspace of N capture records, its contracts alone in `contracts/`,
    and the log as a parquet table of (value, source)."""
    out = tmp_path_factory.mktemp("gen")
    subprocess.run(
        [sys.executable, str(REPO / "bench" / "gen.py"), str(out), "--n", "10", "--m", str(N)],
        check=True, capture_output=True,
    )
    ws = out / "workspace"
    contracts = out / "contracts"
    contracts.mkdir()
    shutil.copy(ws / "verdict.toml", contracts / "verdict.toml")
    shutil.copytree(ws / "schemas", contracts / "schemas")
    lines = (ws / "captures" / "log.jsonl").read_text(encoding="utf-8").split("\n")
    values = [l for l in lines if l.strip()]
    assert len(values) == N
    sources = [f"captures/log.jsonl:{i}" for i, l in enumerate(lines, 1) if l.strip()]
    pq.write_table(pa.table({"value": values, "source": sources}), out / "log.parquet",
                   row_group_size=N // 8)
    return ws, contracts, out / "log.parquet"


def test_spark_gives_the_verdicts_check_jsonl_gives_on_100k_records(cli, spark, generated):
    ws, contracts, parquet = generated
    out = cli("check", ws, "--format", "jsonl").stdout.decode().splitlines()
    expected = {}
    summary = None
    for line in out:
        if line.startswith('{"type":"verdict","data":'):
            text = line[len('{"type":"verdict","data":'):-1]
            expected[json.loads(text)["source"]] = text
        elif line.startswith('{"type":"summary"'):
            summary = json.loads(line)["data"]
    assert len(expected) == N
    df = spark.read.parquet(str(parquet))
    assert df.rdd.getNumPartitions() >= 2
    verdicts = verdict.spark.check(df, str(contracts), column="value", source_column="source")
    got = verdicts.select("source", "verdict", "stage", "decision", "reason", "pointer", "id").toArrow()
    assert got.num_rows == N
    rows = got.to_pylist()
    by_source = {r["source"]: r for r in rows}
    assert len(by_source) == N
    mismatched = [s for s, t in expected.items() if by_source[s]["verdict"] != t]
    assert mismatched == []
    # the columns are the verdict's own
    for r in rows[:1000]:
        v = json.loads(r["verdict"])
        first = (v["errors"] or [{}])[0].get("pointer")
        assert (r["id"], r["stage"], r["decision"], r["reason"], r["pointer"]) == (
            v["id"], v["stage"], v["decision"], v["reason"], first)
    # the funnel and the decisions as check's summary counts them
    f = verdict.spark.funnel(verdicts).collect()[0].asDict()
    assert f["captures"] == summary["captures"] == N
    assert {k: f[k] for k in summary["funnel"]} == summary["funnel"]
    assert {k: f[k] for k in summary["decisions"]} == summary["decisions"]
    assert sum(f[d] for d in ("ready-for-commit", "retry", "regenerate", "recheck", "reject")) == N


def test_spark_reads_lines_of_text_with_the_default_source(spark, generated, tmp_path):
    _, contracts, _ = generated
    log = tmp_path / "few.jsonl"
    records = [
        {"id": "a", "output": "{\"schema_version\": \"refund-v1\"}"},
        {"id": "b", "output": "not json", "status": "refusal"},
    ]
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n\n")
    df = spark.read.text(str(log))
    rows = sorted(verdict.spark.check(df, str(contracts)).collect(), key=lambda r: r["id"])
    assert [(r["id"], r["source"], r["stage"], r["decision"], r["reason"]) for r in rows] == [
        ("a", "<python>", "schema", "regenerate", "SCHEMA_MISMATCH"),
        ("b", "<python>", "response", "reject", "REFUSAL"),
    ]
    assert json.loads(rows[0]["errors"])[0]["reason"] == "SCHEMA_MISMATCH"


def test_the_chain_summary_is_the_chains_report(cli, spark, tmp_path):
    """samples/chains' agent loop: outcome, attempts, first failure and tokens per chain."""
    src = REPO / "samples" / "chains"
    report = json.loads(cli("chains", src, "--format", "json").stdout)
    loop_rows = {r["chain"]: r for r in report["rows"] if r["linked_by"] == "record"}
    assert len(loop_rows) == 7
    contracts = tmp_path / "chains"
    contracts.mkdir()
    shutil.copy(src / "verdict.toml", contracts / "verdict.toml")
    shutil.copytree(src / "schemas", contracts / "schemas")
    shutil.copytree(src / "joins", contracts / "joins")
    lines = (src / "captures" / "agent-loop.jsonl").read_text().splitlines()
    df = spark.createDataFrame(
        [(l, f"captures/agent-loop.jsonl:{i}") for i, l in enumerate(lines, 1)], "value string, source string"
    )
    rows = verdict.spark.chains(verdict.spark.check(df, str(contracts), source_column="source")).collect()
    got = {r["chain"]: r for r in rows}
    assert sorted(got) == sorted(loop_rows)
    for name, want in loop_rows.items():
        r = got[name]
        ff = want["first_failure"] or {}
        assert (r["attempts"], r["outcome"], r["first_stage"], r["first_reason"], r["first_pointer"],
                r["last_decision"], r["last_reason"], r["tokens"]) == (
            want["attempts"], want["outcome"], ff.get("stage"), ff.get("reason"), ff.get("pointer"),
            want["last_decision"], want["last_reason"], want["tokens"]), name


def test_a_broken_workspace_fails_on_the_driver(spark, tmp_path):
    df = spark.createDataFrame([("{}",)], "value string")
    with pytest.raises(verdict.WorkspaceError, match="no such file or folder"):
        verdict.spark.check(df, str(tmp_path / "missing"))

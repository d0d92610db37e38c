"""verdict on Apache Spark: logs too big for one machine (docs/python.md#spark).

``check(df, workspace)`` maps a DataFrame of raw records (one string column, e.g.
``spark.read.text("s3://bucket/logs/*.jsonl.gz")``'s ``value``) to a DataFrame of verdicts
with ``mapInArrow``: each Arrow batch's strings go to ``Workspace.check_many_json`` (the
library, in parallel, the GIL released) on the executors. ``funnel`` and ``chains`` are
Spark aggregations over those verdicts.

Needs ``pyspark`` and ``pyarrow`` (``pip install verdict[spark]``); this module imports
them only when called.
"""

from __future__ import annotations

import json
import os
from typing import Dict, Iterator, Optional

__all__ = ["check", "funnel", "chains", "VERDICT_SCHEMA"]

#: The columns of ``check``'s DataFrame, as a Spark DDL schema: the verdict's ``id``,
#: ``source``, ``format``, ``contract``, ``stage``, ``decision``, ``reason``, the first
#: error's ``pointer``, ``errors`` as JSON text, its ``chain`` link's ``id`` and ``attempt``,
#: and the whole verdict as the JSON text ``check --format json`` prints (``verdict``).
VERDICT_SCHEMA = (
    "id string, source string, format string, contract string, stage string, "
    "decision string, reason string, pointer string, errors string, chain string, "
    "attempt long, tokens long, verdict string"
)

_COLUMNS = [c.strip().split(" ")[0] for c in VERDICT_SCHEMA.split(",")]

# one opened workspace per executor process and path (a Python worker is reused)
_OPEN: Dict[str, object] = {}


def _workspace(path: str):
    from verdict import Workspace

    ws = _OPEN.get(path)
    if ws is None:
        ws = _OPEN[path] = Workspace(path)
    return ws


def _row(text: str) -> dict:
    v = json.loads(text)
    errors = v.get("errors") or []
    chain = v.get("chain") or {}
    tokens = ((v.get("response") or {}).get("tokens") or {}).get("total_tokens")
    if tokens is None:
        tokens = ((v.get("meta") or {}).get("usage") or {}).get("total_tokens")
    return {
        "id": v["id"],
        "source": v["source"],
        "format": v.get("format"),
        "contract": v.get("contract"),
        "stage": v["stage"],
        "decision": v["decision"],
        "reason": v.get("reason"),
        "pointer": errors[0].get("pointer") if errors else None,
        "errors": json.dumps(errors, ensure_ascii=False),
        "chain": chain.get("id"),
        "attempt": chain.get("attempt"),
        "tokens": tokens if isinstance(tokens, int) else None,
        "verdict": text,
    }


def _mapper(workspace: str, shipped: bool, has_source: bool):
    def run(batches: Iterator) -> Iterator:
        import pyarrow as pa

        path = workspace
        if shipped:
            from pyspark import SparkFiles

            path = SparkFiles.get(os.path.basename(os.path.normpath(workspace)))
        ws = _workspace(path)
        for batch in batches:
            values = batch.column(0).to_pylist()
            sources = batch.column(1).to_pylist() if has_source else [None] * len(values)
            # a null or blank value is no record, as check skips a blank line of a log
            keep = [i for i, t in enumerate(values) if t is not None and t.strip()]
            texts = ws.check_many_json([values[i] for i in keep], [sources[i] for i in keep])
            rows = [_row(t) for t in texts if t is not None]
            yield pa.RecordBatch.from_pylist(rows, schema=_arrow_schema())

    return run


def _arrow_schema():
    import pyarrow as pa

    types = {"attempt": pa.int64(), "tokens": pa.int64()}
    return pa.schema([(c, types.get(c, pa.string())) for c in _COLUMNS])


def check(df, workspace: str, column: str = "value", source_column: Optional[str] = None,
          ship: bool = True):
    """The verdicts of the records in ``df[column]`` (strings: one capture record or
    provider record of any shape ``check`` reads per row), as a DataFrame of
    ``VERDICT_SCHEMA``, one row per capture (rows that are null, blank or no capture, such
    as MCP messages other than tools/call, give none).

    ``workspace`` is the contracts' workspace folder (``verdict.toml``, ``schemas/``,
    ``[[join]]`` files). ``ship=True`` sends it to every executor with
    ``SparkContext.addFile`` (``SparkFiles``); ``ship=False`` uses the path as it is, which
    every executor must be able to read. Ship a folder of contracts, not of logs: opening
    a workspace reads its own capture files (docs/python.md#spark).

    ``source_column``, when given, names a string column with each record's source
    (``logs/x.jsonl:3``): the verdict's ``source``, and its ``id`` when the record has none;
    by default every source is ``<python>``.
    """
    from verdict import Workspace

    Workspace(workspace)  # a broken workspace fails here, on the driver, with its message
    shipped = False
    if ship:
        sc = df.sparkSession.sparkContext
        name = os.path.basename(os.path.normpath(workspace))
        added = getattr(sc, "_verdict_shipped", {})
        if added.get(name) not in (None, os.path.abspath(workspace)):
            raise ValueError(f"another workspace named {name!r} was shipped already")
        if name not in added:
            sc.addFile(os.path.abspath(workspace), recursive=True)
            added[name] = os.path.abspath(workspace)
            sc._verdict_shipped = added
        shipped = True
    cols = [column] + ([source_column] if source_column else [])
    return df.select(*cols).mapInArrow(
        _mapper(workspace, shipped, source_column is not None), VERDICT_SCHEMA
    )


def funnel(verdicts):
    """The funnel of ``check``'s summary as one row: ``captures`` > ``completed`` (past
    the response stage) > ``parsed`` > ``schema`` (past it) > ``business`` (past it) >
    ``ready``, and the count of each decision (docs/verdicts.md)."""
    from pyspark.sql import functions as F

    stage = F.col("stage")
    past = lambda *s: F.sum(F.when(~stage.isin(*s), 1).otherwise(0))  # noqa: E731
    decisions = ["ready-for-commit", "retry", "regenerate", "recheck", "reject"]
    return verdicts.agg(
        F.count(F.lit(1)).alias("captures"),
        past("input", "response").alias("completed"),
        past("input", "response", "parse").alias("parsed"),
        past("input", "response", "parse", "schema").alias("schema"),
        past("input", "response", "parse", "schema", "business").alias("business"),
        F.sum(F.when(stage == "ready", 1).otherwise(0)).alias("ready"),
        *[
            F.sum(F.when(F.col("decision") == d, 1).otherwise(0)).alias(d)
            for d in decisions
        ],
    )


def chains(verdicts):
    """The chain summary as a Spark aggregation: one row per chain (verdicts with a
    ``chain`` link), its attempts ordered by ``attempt`` then ``source``: ``attempts``,
    ``outcome`` (``first-pass``, ``recovered``, ``unrecovered``: docs/chains.md#outcomes),
    the first failure's ``first_stage`` / ``first_reason`` / ``first_pointer``, the last
    attempt's ``last_decision`` / ``last_reason``, and ``tokens`` (the sum of the attempts'
    total tokens). Flags (wasted, over budget) and the budget advice are in
    ``verdict chains``' report only."""
    from pyspark.sql import functions as F

    linked = verdicts.where(F.col("chain").isNotNull())
    steps = F.array_sort(
        F.collect_list(
            F.struct(
                F.coalesce(F.col("attempt"), F.lit(2**62)).alias("attempt"),
                F.col("source").alias("source"),
                F.col("stage").alias("stage"),
                F.col("decision").alias("decision"),
                F.col("reason").alias("reason"),
                F.col("pointer").alias("pointer"),
            )
        )
    )
    grouped = linked.groupBy("chain").agg(
        steps.alias("steps"), F.count(F.lit(1)).alias("attempts"), F.sum("tokens").alias("tokens")
    )
    first = F.element_at("steps", 1)
    last = F.element_at("steps", -1)
    failures = F.filter("steps", lambda s: s["stage"] != "ready")
    first_failure = F.try_element_at(failures, F.lit(1))
    outcome = (
        F.when((first["stage"] == "ready") & (last["stage"] == "ready"), "first-pass")
        .when(last["stage"] == "ready", "recovered")
        .otherwise("unrecovered")
    )
    return grouped.select(
        "chain",
        "attempts",
        outcome.alias("outcome"),
        first_failure["stage"].alias("first_stage"),
        first_failure["reason"].alias("first_reason"),
        first_failure["pointer"].alias("first_pointer"),
        last["decision"].alias("last_decision"),
        last["reason"].alias("last_reason"),
        "tokens",
    )

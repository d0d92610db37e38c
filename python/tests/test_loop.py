"""The agent-loop example (python/examples/loop.py) against its scripted fake model: it
fails twice (schema, then intent) and recovers; a refusal stops it at once; the loop's own
log, read back by `verdict chains`, reports the same."""

import json
import shutil
import sys

import pytest

import verdict
from conftest import REPO

sys.path.insert(0, str(REPO / "python" / "examples"))
import loop  # noqa: E402


@pytest.fixture()
def ws_dir(tmp_path):
    d = tmp_path / "loop"
    shutil.copytree(REPO / "python" / "examples" / "loop-workspace", d)
    (d / "captures").mkdir()
    return d


def run(ws_dir, chain, model, **kw):
    ws = verdict.Workspace(ws_dir)
    log = ws_dir / "captures" / "loop.jsonl"
    return Loop(ws, model, str(log), **kw).run(
        chain, "Refund 5000 KRW on order O-1042", loop.CONTEXT, loop.INTENT
    )


Loop = loop.Loop


def steps(out):
    return [(v["stage"], v["decision"], v["reason"]) for v in out.verdicts]


def test_fails_on_schema_then_intent_and_recovers_with_the_feedback(ws_dir):
    model = loop.fails_twice_then_recovers()
    out = run(ws_dir, "ticket-1", model)
    assert (out.ended, out.attempts) == ("ready", 3)
    assert steps(out) == [
        ("schema", "regenerate", "SCHEMA_MISMATCH"),
        ("business", "regenerate", "INTENT_MISMATCH"),
        ("ready", "ready-for-commit", None),
    ]
    assert out.verdicts[0]["errors"][0]["pointer"] == "/amount_minor"
    assert out.verdicts[1]["errors"][0]["pointer"] == "/amount_minor"
    assert out.proposal["amount_minor"] == 5000
    # each re-ask carried the feedback of the verdict before it
    ws = verdict.Workspace(ws_dir)
    assert len(model.seen) == 3
    assert [m["role"] for m in model.seen[2]] == ["user", "assistant", "user", "assistant", "user"]
    logged = [json.loads(l) for l in (ws_dir / "captures" / "loop.jsonl").read_text().splitlines()]
    assert model.seen[1][2]["content"] == ws.feedback(record=logged[0])
    assert model.seen[2][4]["content"] == ws.feedback(record=logged[1])
    assert model.seen[1][2]["content"].startswith(
        "Your previous output does not meet the required JSON Schema (schema stage, SCHEMA_MISMATCH)."
    )
    assert model.seen[2][4]["content"].startswith(
        "Your previous output was rejected by a business rule (business stage, INTENT_MISMATCH)."
    )


def test_a_refusal_stops_the_loop_at_once(ws_dir):
    model = loop.refuses()
    out = run(ws_dir, "ticket-2", model)
    assert (out.ended, out.attempts) == ("stopped", 1)
    assert steps(out) == [("response", "reject", "REFUSAL")]
    assert len(model.seen) == 1, "never asked again"


def test_retry_backs_off_and_the_budget_bounds_the_loop(ws_dir):
    slept = []
    model = loop.ScriptedModel([loop.Reply("", status="request_error", status_detail="429")] * 3)
    out = run(ws_dir, "ticket-3", model, max_attempts=3, backoff_s=0.25, sleep=slept.append)
    assert (out.ended, out.attempts) == ("out-of-attempts", 3)
    assert steps(out) == [("response", "retry", "REQUEST_ERROR")] * 3
    assert slept == [0.25, 0.5, 1.0]
    assert len(model.seen) == 3


def test_the_loops_log_read_back_by_verdict_chains_reports_the_same(cli, ws_dir):
    first = run(ws_dir, "ticket-1", loop.fails_twice_then_recovers())
    second = run(ws_dir, "ticket-2", loop.refuses())
    lines = (ws_dir / "captures" / "loop.jsonl").read_text().splitlines()
    records = [json.loads(l) for l in lines]
    assert [(r["chain"], r["attempt"], r["id"]) for r in records] == [
        ("ticket-1", 1, "ticket-1/1"), ("ticket-1", 2, "ticket-1/2"),
        ("ticket-1", 3, "ticket-1/3"), ("ticket-2", 1, "ticket-2/1"),
    ]
    report = json.loads(cli("chains", ws_dir, "--format", "json").stdout)
    rows = {r["chain"]: r for r in report["rows"]}
    assert sorted(rows) == ["ticket-1", "ticket-2"]
    t1, t2 = rows["ticket-1"], rows["ticket-2"]
    assert (t1["outcome"], t1["attempts"], t1["recovered_at"]) == ("recovered", 3, 3)
    assert t1["first_failure"] == {"stage": "schema", "reason": "SCHEMA_MISMATCH", "pointer": "/amount_minor"}
    assert t1["tokens"] == 3 * 440
    assert t1["sources"] == ["captures/loop.jsonl:1", "captures/loop.jsonl:2", "captures/loop.jsonl:3"]
    assert (t2["outcome"], t2["attempts"], t2["last_reason"]) == ("unrecovered", 1, "REFUSAL")
    assert t1["flags"] == t2["flags"] == []
    s = report["summary"]
    assert (s["chains"], s["first_pass"], s["recovered"], s["unrecovered"], s["attempts"]) == (2, 0, 1, 1, 4)
    # and `check` gives the log's records the verdicts the loop saw
    out = cli("check", ws_dir, "--format", "jsonl").stdout.decode().splitlines()
    seen = [json.loads(l)["data"] for l in out if l.startswith('{"type":"verdict"')]
    assert [(v["id"], v["stage"], v["decision"], v["reason"]) for v in seen] == [
        (v["id"], v["stage"], v["decision"], v["reason"]) for v in first.verdicts + second.verdicts
    ]

#!/usr/bin/env python3
"""The `otlp` workload (bench/README.md): the `pipeline` workload's outputs as OTLP/JSON spans.

    python3 bench/otlp.py OUT_DIR [--m 1000000] [--seed 5] [--max-spans 8]

Writes into OUT_DIR:
  otlp/                  a verdict workspace: verdict.toml, schemas/refund-v1.schema.json (the
                         refund schema only, no rules), captures/spans.jsonl: the first M outputs of
                         the pipeline workload (bench/gen.py `capture_records`, same seed, same mix)
                         as the OpenTelemetry file exporter writes traces: one `TracesData` per
                         line, one resource and one scope per line, holding 1 to MAX_SPANS GenAI
                         `chat` spans (uniform, from its own seeded generator): each span one
                         capture, named `TRACEID/SPANID`, its source `captures/spans.jsonl:LINE#N`
                         when the line holds several
  otlp-as-captures/      the same workspace with the same M outputs as capture records
                         (captures/log.jsonl: `id` the span's `TRACEID/SPANID`, `output`, `status`,
                         `status_detail`), so both give the same verdict per id: what `check` on
                         the spans is compared with (tests/bench_otlp.rs holds it on a small M)
  otlp.manifest.json     the counts by kind, the lines, the spans per line, the seed

How a capture record's status becomes a span (docs/record-shapes.md#otlp):
  completed              `gen_ai.output.messages` (a JSON string, as most emitters write it) of one
                         assistant message, its text part the output, `finish_reason` "stop";
                         `gen_ai.response.finish_reasons` ["stop"]; status unset
  refusal                the same, `finish_reason` "refusal"
  incomplete             `finish_reason` "length" (max_output_tokens) or "content_filter"
  request_error          span status ERROR ("Rate limit reached"), `error.type` "RateLimitError",
                         no output messages (a failed call has none)
The schema only (no rules): a span carries no trusted `context` or `intent`, and a `[[join]]`
of 1M lines would be held in memory, so the business stage's kinds (bench/gen.py) reach it
only on the pipeline workload; here they are ready or fail the schema as their outputs do.
Every span has its own parent span (an agent step not in the file): no two LLM spans are
siblings, so no chains (docs/chains.md). Same seed, same sizes -> byte-identical output.
"""
import argparse
import json
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402


def attr(key, value):
    return {"key": key, "value": value}


def sv(s):
    return {"stringValue": s}


def span_of(rec, trace_id, span_id, parent_id, i):
    """The GenAI chat span of the capture record `rec` (the pipeline workload's i-th)."""
    status = rec.get("status", "completed")
    detail = rec.get("status_detail")
    finish = {"completed": "stop", "refusal": "refusal"}.get(status)
    if status == "incomplete":
        finish = "length" if detail == "max_output_tokens" else "content_filter"
    start = 1764288000_000_000_000 + i * 1_000_000_000
    attrs = [
        attr("gen_ai.operation.name", sv("chat")),
        attr("gen_ai.provider.name", sv("openai")),
        attr("gen_ai.request.model", sv("gpt-4.1-mini")),
        attr("server.address", sv("api.openai.com")),
    ]
    span_status = {}
    if status == "request_error":
        attrs.append(attr("error.type", sv("RateLimitError")))
        span_status = {"code": 2, "message": "Rate limit reached"}
    else:
        message = {"role": "assistant", "parts": [{"type": "text", "content": rec["output"]}],
                   "finish_reason": finish}
        attrs += [
            attr("gen_ai.response.model", sv("gpt-4.1-mini-2025-04-14")),
            attr("gen_ai.response.id", sv(f"chatcmpl-{i:07d}")),
            attr("gen_ai.response.finish_reasons", {"arrayValue": {"values": [sv(finish)]}}),
            # ProtoJSON writes int64 as a string
            attr("gen_ai.usage.input_tokens", {"intValue": "310"}),
            attr("gen_ai.usage.output_tokens", {"intValue": "42"}),
            attr("gen_ai.output.messages", sv(gen.dumps([message]))),
        ]
    return {"traceId": trace_id, "spanId": span_id, "parentSpanId": parent_id,
            "name": "chat gpt-4.1-mini", "kind": 3,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 850_000_000),
            "attributes": attrs, "status": span_status}


def traces_data(spans):
    return {"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", sv("refund-agent")),
                                    attr("telemetry.sdk.language", sv("python"))]},
        "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2", "version": "2.1b0"},
                        "spans": spans}]}]}


def workspaces(out, m, seed, max_spans):
    """Writes otlp/ and otlp-as-captures/ under `out`; returns the manifest."""
    for name in ("otlp", "otlp-as-captures"):
        ws = os.path.join(out, name)
        if os.path.isdir(ws):
            shutil.rmtree(ws)
        gen.workspace_skeleton(ws)
        os.remove(os.path.join(ws, "schemas", "refund-v1.rules.toml"))
    sizes = random.Random(seed + 2)
    counts = {}
    lines = 0
    per_line = {}
    records = gen.capture_records(m, seed)
    with open(os.path.join(out, "otlp", "captures", "spans.jsonl"), "w", encoding="utf-8") as s, \
            open(os.path.join(out, "otlp-as-captures", "captures", "log.jsonl"), "w", encoding="utf-8") as c:
        i = 0
        while i < m:
            n = min(sizes.randint(1, max_spans), m - i)
            trace_id = f"{seed:08x}{lines:024x}"
            spans = []
            for _ in range(n):
                name, rec = next(records)
                counts[name] = counts.get(name, 0) + 1
                span_id = f"{i + 1:016x}"
                spans.append(span_of(rec, trace_id, span_id, f"{(1 << 63) | (i + 1):016x}", i))
                as_capture = {"id": f"{trace_id}/{span_id}", "output": rec["output"]}
                for k in ("status", "status_detail"):
                    if k in rec:
                        as_capture[k] = rec[k]
                c.write(gen.dumps(as_capture) + "\n")
                i += 1
            s.write(gen.dumps(traces_data(spans)) + "\n")
            lines += 1
            per_line[n] = per_line.get(n, 0) + 1
    manifest = {"seed": seed, "m": m, "max_spans": max_spans, "lines": lines,
                "spans_per_line": {str(k): v for k, v in sorted(per_line.items())}, "captures": counts}
    with open(os.path.join(out, "otlp.manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    return manifest


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--m", type=int, default=1_000_000, help="spans (default 1000000)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--max-spans", type=int, default=8, help="spans per line: 1 to this (default 8)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print(json.dumps(workspaces(a.out, a.m, a.seed, a.max_spans), sort_keys=True))


if __name__ == "__main__":
    main()

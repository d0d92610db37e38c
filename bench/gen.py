#!/usr/bin/env python3
"""Deterministic workloads for the verdict benchmark (bench/README.md).

    python3 bench/gen.py OUT_DIR [--n 100000] [--m 1000000] [--seed 5]

Writes into OUT_DIR:
  refund-v1.schema.json        the schema (copied from samples/refund)
  proposals.jsonl              N plain refund proposals, one per line (~10% invalid)
  proposals/NNNNNNN.json       the same N proposals, one file each
  proposals.files              the file names of proposals/, one a line (for peers that take argv)
  workspace/                   a verdict workspace: verdict.toml, schemas/ (schema + the five rules),
                               captures/log.jsonl with M capture records (~70% ready, the rest
                               spread over every stage: response, parse, schema, business)
  batch/, batch-as-captures/   with --batch B: B records of the pipeline's mix as OpenAI Batch output
                               lines, and the same bodies as capture records (schema only, no rules)
  batch-joined/                with --batch B: batch/'s output file (a hard link) beside its B-line
                               batch input file captures/input.jsonl, each line sending the refund
                               schema as its text format (docs/requests.md): `check` joins every
                               output line to its request and checks both contracts
  manifest.json                the counts by kind, the seed and the sizes

The `watch` workload (`watch_workspace()`, written by bench/watch-latency.py, not by this command):
the same contract and the first M capture records of `workspace/`, one .json file each.

Every proposal is valid JSON (invalid ones break the schema, not the syntax), so that every peer
does the same work: parse + validate. Same seed, same sizes -> byte-identical output.
"""
import argparse
import json
import os
import random
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "samples", "refund", "schemas")


def dumps(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def valid_proposal(rng, i):
    return {
        "schema_version": "refund-v1",
        "order_id": f"O-{1000 + i}",
        "amount_minor": rng.randint(1, 2_000_000),
        "currency": rng.choice(("KRW", "USD")),
        "expected_version": rng.randint(0, 50),
    }


# Invalid proposals: schema violations only (the text stays valid JSON).
def bad_amount_string(p, rng):
    p["amount_minor"] = str(p["amount_minor"])
    return p


def bad_extra_field(p, rng):
    p["approved"] = True
    return p


def bad_missing(p, rng):
    del p[rng.choice(("expected_version", "currency", "order_id"))]
    return p


def bad_negative(p, rng):
    p["amount_minor"] = -p["amount_minor"]
    return p


def bad_currency(p, rng):
    p["currency"] = "EUR"
    return p


def bad_version_tag(p, rng):
    p["schema_version"] = "refund-v2"
    return p


def bad_many(p, rng):  # several errors at once: "collect all errors" matters
    p["amount_minor"] = "5000"
    p["currency"] = "eur"
    p["expected_version"] = -1
    p["note"] = "x"
    return p


def bad_array(p, rng):
    return [p]


INVALID = [bad_amount_string, bad_extra_field, bad_missing, bad_negative, bad_currency,
           bad_version_tag, bad_many, bad_array]


def proposals(n, seed):
    rng = random.Random(seed)
    counts = {"valid": 0}
    out = []
    for i in range(n):
        p = valid_proposal(rng, i)
        if rng.random() < 0.10:
            f = rng.choice(INVALID)
            p = f(p, rng)
            counts[f.__name__] = counts.get(f.__name__, 0) + 1
        else:
            counts["valid"] += 1
        out.append(dumps(p))
    return out, counts


# ---- capture records ------------------------------------------------------------------------

def order_for(rng, i):
    cur = rng.choice(("KRW", "USD"))
    paid = rng.randint(1000, 2_000_000)
    return {
        "order_id": f"O-{1000 + i}", "owner_id": f"U-{i % 997}", "currency": cur,
        "paid_minor": paid, "refunded_minor": rng.randint(0, paid // 2), "version": rng.randint(0, 50),
    }


def ready_parts(rng, i):
    order = order_for(rng, i)
    actor = {"user_id": order["owner_id"], "allowed_actions": ["refund", "view"]}
    remaining = order["paid_minor"] - order["refunded_minor"]
    amount = rng.randint(1, remaining)
    prop = {"schema_version": "refund-v1", "order_id": order["order_id"], "amount_minor": amount,
            "currency": order["currency"], "expected_version": order["version"]}
    intent = {"order_id": order["order_id"], "amount_minor": amount, "currency": order["currency"]}
    return prop, {"actor": actor, "order": order}, intent


def k_ready(prop, ctx, intent, rng):
    return {"output": dumps(prop)}


# response stage (output + status)
def k_refusal(prop, ctx, intent, rng):
    return {"output": "I'm sorry, but I can't help with issuing that refund.", "status": "refusal"}


def k_truncated(prop, ctx, intent, rng):
    t = dumps(prop)
    return {"output": t[: len(t) // 2], "status": "incomplete", "status_detail": "max_output_tokens"}


def k_rate_limited(prop, ctx, intent, rng):
    return {"output": "", "status": "request_error", "status_detail": "rate_limit"}


def k_content_filter(prop, ctx, intent, rng):
    return {"output": "", "status": "incomplete", "status_detail": "content_filter"}


# parse stage
def k_invalid_json(prop, ctx, intent, rng):
    return {"output": dumps(prop).replace(",", " ", 1)}


def k_truncated_json(prop, ctx, intent, rng):
    t = dumps(prop)
    return {"output": t[: len(t) - 12], "status": "completed"}


def k_fenced(prop, ctx, intent, rng):
    return {"output": "```json\n" + json.dumps(prop, indent=2) + "\n```"}


def k_trailing(prop, ctx, intent, rng):
    return {"output": dumps(prop) + "\n\nLet me know if you'd like to change anything."}


def k_duplicate_key(prop, ctx, intent, rng):
    return {"output": dumps(prop)[:-1] + ',"amount_minor":1}'}


def k_nan(prop, ctx, intent, rng):
    return {"output": dumps(prop).replace(f'"amount_minor":{prop["amount_minor"]}', '"amount_minor":NaN')}


# schema stage
def k_amount_string(prop, ctx, intent, rng):
    return {"output": dumps(dict(prop, amount_minor=str(prop["amount_minor"])))}


def k_extra_field(prop, ctx, intent, rng):
    return {"output": dumps(dict(prop, approved=True))}


def k_missing_field(prop, ctx, intent, rng):
    p = dict(prop)
    del p["expected_version"]
    return {"output": dumps(p)}


def k_schema_many(prop, ctx, intent, rng):
    return {"output": dumps(dict(prop, amount_minor=-5, currency="EUR", schema_version="refund-v2"))}


# business stage: each of the five rules, then the intent comparison
def k_not_authorized(prop, ctx, intent, rng):
    ctx["actor"]["user_id"] = "U-intruder"
    return {"output": dumps(prop)}


def k_missing_amount(prop, ctx, intent, rng):
    return {"output": dumps(dict(prop, amount_minor=None))}


def k_currency_mismatch(prop, ctx, intent, rng):
    cur = "USD" if prop["currency"] == "KRW" else "KRW"
    intent["currency"] = cur
    return {"output": dumps(dict(prop, currency=cur))}


def k_exceeds_remaining(prop, ctx, intent, rng):
    o = ctx["order"]
    amt = o["paid_minor"] - o["refunded_minor"] + rng.randint(1, 1000)
    intent["amount_minor"] = amt
    return {"output": dumps(dict(prop, amount_minor=amt))}


def k_stale_state(prop, ctx, intent, rng):
    return {"output": dumps(dict(prop, expected_version=prop["expected_version"] + 1))}


def k_intent_mismatch(prop, ctx, intent, rng):
    intent["amount_minor"] = prop["amount_minor"] + 1
    return {"output": dumps(prop)}


# (kind, share of the non-ready 30%)
FAILURES = [
    (k_refusal, 2), (k_truncated, 2), (k_rate_limited, 2), (k_content_filter, 1),
    (k_invalid_json, 2), (k_truncated_json, 2), (k_fenced, 1), (k_trailing, 1), (k_duplicate_key, 1), (k_nan, 1),
    (k_amount_string, 2), (k_extra_field, 2), (k_missing_field, 2), (k_schema_many, 1),
    (k_not_authorized, 2), (k_missing_amount, 1), (k_currency_mismatch, 1), (k_exceeds_remaining, 2),
    (k_stale_state, 2), (k_intent_mismatch, 2),
]


def capture_records(m, seed):
    """The M capture records of the pipeline workload, in order: (kind name, record)."""
    rng = random.Random(seed + 1)
    kinds = [k for k, _ in FAILURES]
    weights = [w for _, w in FAILURES]
    for i in range(m):
        prop, ctx, intent = ready_parts(rng, i)
        kind = k_ready if rng.random() < 0.70 else rng.choices(kinds, weights)[0]
        rec = {"id": f"c{i:07d}"}
        rec.update(kind(prop, ctx, intent, rng))
        rec["context"] = ctx
        rec["intent"] = intent
        rec["meta"] = {"request_id": f"req_{rng.getrandbits(64):016x}", "model": "gpt-4.1-mini-2025-04-14",
                       "captured_at": f"2026-11-28T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z"}
        yield kind.__name__[2:], rec


def captures(m, seed, path):
    counts = {}
    with open(path, "w", encoding="utf-8") as f:
        for name, rec in capture_records(m, seed):
            counts[name] = counts.get(name, 0) + 1
            f.write(dumps(rec))
            f.write("\n")
    return counts


def workspace_skeleton(ws):
    """verdict.toml and schemas/ (the refund schema and its five rules), as in `pipeline`."""
    os.makedirs(os.path.join(ws, "schemas"), exist_ok=True)
    os.makedirs(os.path.join(ws, "captures"), exist_ok=True)
    for name in ("refund-v1.schema.json", "refund-v1.rules.toml"):
        shutil.copy(os.path.join(SAMPLE, name), os.path.join(ws, "schemas", name))
    with open(os.path.join(ws, "verdict.toml"), "w") as f:
        f.write('default_contract = "refund-v1"\n')


def watch_workspace(ws, m, seed, per_folder=1000):
    """The `watch` workload: the pipeline's first M capture records (same seed, same mix), one
    file each, `per_folder` files a folder: captures/000/c0000000.json ... Returns the
    manifest (counts, and `flip`: the first ready capture's file, the one the latency
    benchmark edits). Same seed and sizes -> byte-identical."""
    if os.path.isdir(ws):
        shutil.rmtree(ws)
    workspace_skeleton(ws)
    counts = {}
    flip = None
    folder = None
    for i, (name, rec) in enumerate(capture_records(m, seed)):
        counts[name] = counts.get(name, 0) + 1
        if i % per_folder == 0:
            folder = os.path.join(ws, "captures", f"{i // per_folder:03d}")
            os.makedirs(folder)
        rel = f"captures/{i // per_folder:03d}/{rec['id']}.json"
        if flip is None and name == "ready":
            flip = rel
        with open(os.path.join(ws, rel), "w", encoding="utf-8") as f:
            f.write(dumps(rec) + "\n")
    manifest = {"seed": seed, "m": m, "per_folder": per_folder, "folders": -(-m // per_folder),
                "flip": flip, "captures": counts}
    with open(os.path.join(ws, "..", os.path.basename(ws) + ".manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    return manifest


def chat_body(i, rec):
    """The Chat Completions body a capture record of the pipeline workload stands for."""
    status = rec.get("status", "completed")
    detail = rec.get("status_detail")
    message = {"role": "assistant", "content": rec["output"], "refusal": None}
    finish = "stop"
    if status == "refusal":
        message = {"role": "assistant", "content": None, "refusal": rec["output"]}
    elif status == "incomplete":
        finish = "length" if detail == "max_output_tokens" else "content_filter"
    return {"id": f"chatcmpl-{i:07d}", "object": "chat.completion", "created": 1764288000 + i,
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": 310, "completion_tokens": 42, "total_tokens": 352}}


def batch_workspaces(out, m, seed):
    """The batch workload: the pipeline's first M records (same seed, same mix) as OpenAI Batch
    output lines (`batch/captures/output.jsonl`), and the same records as capture records
    holding the same bodies (`batch-as-captures/captures/log.jsonl`); schema only, no rules
    (a batch line carries no trusted context)."""
    for name in ("batch", "batch-as-captures"):
        ws = os.path.join(out, name)
        if os.path.isdir(ws):
            shutil.rmtree(ws)
        workspace_skeleton(ws)
        os.remove(os.path.join(ws, "schemas", "refund-v1.rules.toml"))
    counts = {}
    with open(os.path.join(out, "batch", "captures", "output.jsonl"), "w", encoding="utf-8") as b, \
            open(os.path.join(out, "batch-as-captures", "captures", "log.jsonl"), "w", encoding="utf-8") as c:
        for i, (name, rec) in enumerate(capture_records(m, seed)):
            counts[name] = counts.get(name, 0) + 1
            cid = f"request-{i:07d}"
            if rec.get("status") == "request_error":
                err = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
                line = {"id": f"batch_req_{i:07d}", "custom_id": cid,
                        "response": {"status_code": 429, "request_id": f"req_{i:07d}", "body": err}, "error": None}
                body = err
            else:
                body = chat_body(i, rec)
                line = {"id": f"batch_req_{i:07d}", "custom_id": cid,
                        "response": {"status_code": 200, "request_id": f"req_{i:07d}", "body": body}, "error": None}
            b.write(dumps(line) + "\n")
            c.write(dumps({"id": cid, "response": body}) + "\n")
    return counts


def batch_joined_workspace(out, m, seed):
    """The joined batch workload: `batch/captures/output.jsonl` (hard-linked, else copied) and
    its OpenAI Batch input file `captures/input.jsonl` (the names pair, docs/requests.md): one
    `/v1/chat/completions` line per output line, same `custom_id`, sending the refund schema
    as `response_format.json_schema` (strict), so every capture has the generation schema
    beside the server contract. Same seed and sizes -> byte-identical."""
    ws = os.path.join(out, "batch-joined")
    if os.path.isdir(ws):
        shutil.rmtree(ws)
    workspace_skeleton(ws)
    os.remove(os.path.join(ws, "schemas", "refund-v1.rules.toml"))
    src = os.path.join(out, "batch", "captures", "output.jsonl")
    dst = os.path.join(ws, "captures", "output.jsonl")
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy(src, dst)
    with open(os.path.join(SAMPLE, "refund-v1.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    rng = random.Random(seed)
    with open(os.path.join(ws, "captures", "input.jsonl"), "w", encoding="utf-8") as f:
        for i in range(m):
            body = {"model": "gpt-4.1-mini-2025-04-14",
                    "messages": [{"role": "system", "content": "Propose a refund as JSON."},
                                 {"role": "user", "content": f"Refund order O-{1000 + i}, ref {rng.getrandbits(32):08x}."}],
                    "response_format": {"type": "json_schema",
                                        "json_schema": {"name": "refund", "strict": True, "schema": schema}}}
            f.write(dumps({"custom_id": f"request-{i:07d}", "method": "POST",
                           "url": "/v1/chat/completions", "body": body}) + "\n")
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=100_000, help="plain proposals (default 100000)")
    ap.add_argument("--m", type=int, default=1_000_000, help="capture records (default 1000000)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--batch", type=int, default=0,
                    help="also write the batch workload with this many records (batch/, batch-as-captures/)")
    a = ap.parse_args()

    os.makedirs(a.out, exist_ok=True)
    shutil.copy(os.path.join(SAMPLE, "refund-v1.schema.json"), os.path.join(a.out, "refund-v1.schema.json"))

    lines, pcounts = proposals(a.n, a.seed)
    with open(os.path.join(a.out, "proposals.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    pdir = os.path.join(a.out, "proposals")
    if os.path.isdir(pdir):
        shutil.rmtree(pdir)
    os.makedirs(pdir)
    names = []
    for i, line in enumerate(lines):
        name = f"{i:07d}.json"
        names.append(name)
        with open(os.path.join(pdir, name), "w", encoding="utf-8") as f:
            f.write(line + "\n")
    with open(os.path.join(a.out, "proposals.files"), "w") as f:
        f.write("\n".join(names) + "\n")

    ws = os.path.join(a.out, "workspace")
    workspace_skeleton(ws)
    ccounts = captures(a.m, a.seed, os.path.join(ws, "captures", "log.jsonl"))

    manifest = {"seed": a.seed, "n": a.n, "m": a.m, "proposals": pcounts, "captures": ccounts}
    if a.batch:
        manifest["batch"] = batch_workspaces(a.out, a.batch, a.seed)
        manifest["batch_joined_requests"] = batch_joined_workspace(a.out, a.batch, a.seed)
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print(json.dumps(manifest, sort_keys=True))


if __name__ == "__main__":
    main()

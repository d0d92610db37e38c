#!/usr/bin/env python3
"""The attempt-chain workload (BENCHMARKS.md, "Attempt chains at 1,000,000 captures";
docs/chains.md).

    python3 bench/chains.py OUT_DIR [--chains 200000] [--attempts 5] [--seed 5]

Writes two verdict workspaces of the same capture records (the refund contract and its
five rules, as `gen.py`'s `pipeline`), one JSONL log each, `--chains` x `--attempts`
records (1,000,000 by default):

  chains/       captures/log.jsonl: every record carries `chain` ("loop-0000000") and
                `attempt` (1 ..); verdict.toml has `[budget] max_attempts = 5`, `max_tokens = 3500`
  no-chains/    the same records without `chain` and `attempt` (each line ~35 bytes shorter):
                `check` on it is the reference the chain report's cost is measured against

Each chain is one agent loop of `--attempts` attempts; its outcome (the mix, by seed):
  40% first-pass   every attempt ready (distinct proposals)
  40% recovered    fails its first k attempts (k from 1 to attempts-1, uniform), then ready;
                   a failing attempt is a schema, parse, business (regenerate) or response
                   failure drawn from gen.py's mix; 1 in 10 re-sends the same proposal after a
                   regenerate (a wasted `same-proposal` attempt)
  20% unrecovered  every attempt fails; 1 in 4 of them starts with NOT_AUTHORIZED (a reject:
                   the retries after it are wasted) and repeats it
Every record has `meta.usage` (total_tokens 300..900), so chains have tokens and some are
over any token budget. Same seed, same sizes -> byte-identical output. The counts go to
OUT_DIR/chains-manifest.json.
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402  (the refund workload's parts)

# failure kinds a loop re-asks after, by gen.py's names (weights as gen.FAILURES)
RETRIABLE = [(k, w) for k, w in gen.FAILURES if k is not gen.k_not_authorized]


def chain_records(chains, attempts, seed):
    """(outcome, record) for every attempt of every chain, chain after chain."""
    rng = random.Random(seed + 11)
    kinds = [k for k, _ in RETRIABLE]
    weights = [w for _, w in RETRIABLE]
    i = 0
    for c in range(chains):
        r = rng.random()
        outcome = "first-pass" if r < 0.4 else "recovered" if r < 0.8 else "unrecovered"
        fails = 0 if outcome == "first-pass" else attempts if outcome == "unrecovered" else rng.randint(1, attempts - 1)
        reject = outcome == "unrecovered" and rng.random() < 0.25
        same = outcome == "recovered" and rng.random() < 0.1
        prop, ctx, intent = gen.ready_parts(rng, c)
        kind = gen.k_not_authorized if reject else rng.choices(kinds, weights)[0]
        prev = None
        for a in range(1, attempts + 1):
            p, x, t = json.loads(json.dumps(prop)), json.loads(json.dumps(ctx)), dict(intent)
            if a <= fails:
                body = kind(p, x, t, rng)
                if same and a == 2 and prev is not None:
                    body = dict(prev)
                if not reject:
                    kind = rng.choices(kinds, weights)[0]
            else:
                # a fresh ready proposal: same order, another amount
                p["amount_minor"] = max(1, p["amount_minor"] - a)
                t["amount_minor"] = p["amount_minor"]
                body = gen.k_ready(p, x, t, rng)
            prev = body
            rec = {"id": f"c{i:07d}", "chain": f"loop-{c:07d}", "attempt": a}
            rec.update(body)
            rec["context"] = x
            rec["intent"] = t
            rec["meta"] = {"model": "gpt-4.1-mini-2025-04-14",
                           "usage": {"total_tokens": rng.randint(300, 900)}}
            i += 1
            yield outcome, rec


def workspace(ws, chains):
    gen.workspace_skeleton(ws)
    if chains:
        with open(os.path.join(ws, "verdict.toml"), "a") as f:
            f.write("\n[budget]\nmax_attempts = 5\nmax_tokens = 3500\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--chains", type=int, default=200_000)
    ap.add_argument("--attempts", type=int, default=5)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    if a.attempts < 2:
        ap.error("--attempts must be at least 2")
    with_c, without = os.path.join(a.out, "chains"), os.path.join(a.out, "no-chains")
    workspace(with_c, True)
    workspace(without, False)
    counts = {}
    with open(os.path.join(with_c, "captures", "log.jsonl"), "w", encoding="utf-8") as f1, \
            open(os.path.join(without, "captures", "log.jsonl"), "w", encoding="utf-8") as f2:
        for outcome, rec in chain_records(a.chains, a.attempts, a.seed):
            if rec["attempt"] == 1:
                counts[outcome] = counts.get(outcome, 0) + 1
            f1.write(gen.dumps(rec) + "\n")
            del rec["chain"], rec["attempt"]
            f2.write(gen.dumps(rec) + "\n")
    manifest = {"seed": a.seed, "chains": a.chains, "attempts": a.attempts, "outcomes": counts}
    with open(os.path.join(a.out, "chains-manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print(json.dumps(manifest, sort_keys=True))


if __name__ == "__main__":
    main()

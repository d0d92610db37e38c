#!/usr/bin/env python3
"""File-save-to-verdict latency of `verdict watch --json` (bench/README.md), stdlib only.

    python3 bench/watch-latency.py --verdict target/release/verdict --work DIR \\
        [--m 100000] [--seed 5] [--debounce 200,50] [--saves 30] [--contract-saves 10] \\
        [--json OUT.json]

1. Generates (or reuses, when its manifest matches) DIR/watch-workspace: the refund contract of
   gen.py's `pipeline` workload (schema + the five rules) and the pipeline's first M capture
   records (same seed, same mix), one .json file each, 1,000 files a folder
   (captures/000/c0000000.json ...). One file per capture, so that a capture save re-validates
   one small file: the case the latency target is about (a save into a 100k-line JSONL log
   re-validates the whole log).
2. For each debounce D: starts `verdict watch --json --debounce-ms D DIR/watch-workspace`,
   reads its stdout on a thread, and waits for the first-pass summary (time from the spawn to
   that line's `ts_ms`: the initial validation of M captures).
3. Capture saves: K atomic saves (temp file in the same folder + os.rename) of one ready capture,
   flipping its intent amount back and forth (ready <-> INTENT_MISMATCH). Latency = `ts_ms` of
   the first verdict line for that capture after the save - the wall clock just after the
   rename. Pauses between saves are longer than D + processing, with a random part (seeded) so
   the saves fall at every phase of the debouncer's tick (D/4).
4. Contract saves: K atomic saves of the schema (--contract-edit schema, the default: the
   amount's minimum 1 <-> 250000) or of the rules file (--contract-edit rules:
   EXCEEDS_REMAINING's bound `paid - refunded` <-> `(paid - refunded) / 2`). About a third of
   the captures flip each time; all M are re-validated. Times to the batch's first line and to
   its summary line. A save after which no verdict changes is recorded as a problem.
5. Prints a summary on stderr and writes everything as JSON (--json), which bench/report.py
   turns into the results table. The workspace is restored (capture and rules file) at the end.

Both clocks are this machine's wall clock (`ts_ms` is written by verdict when it emits a line).
"""
import argparse
import json
import os
import queue
import random
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no bench/__pycache__
import gen  # noqa: E402  (bench/gen.py: the records and the contract)

# The contract edits: (file in schemas/, original text, edited text). Each flips about a third of
# the captures (ready -> SCHEMA_MISMATCH / EXCEEDS_REMAINING) and back.
SCHEMA_OLD = '{"type": "integer", "minimum": 1}'
SCHEMA_NEW = '{"type": "integer", "minimum": 250000}'
RULE_OLD = 'rule               = "proposal.amount_minor <= context.order.paid_minor - context.order.refunded_minor"'
RULE_NEW = 'rule               = "proposal.amount_minor <= (context.order.paid_minor - context.order.refunded_minor) / 2"'

EDITS = {
    "schema": ("refund-v1.schema.json", SCHEMA_OLD, SCHEMA_NEW),
    "rules": ("refund-v1.rules.toml", RULE_OLD, RULE_NEW),
}

TS = re.compile(rb'"ts_ms":(\d+)')
TYPE = re.compile(rb'"type":"(\w+)"')


def now_ms():
    return time.time() * 1000.0


def say(*a):
    print("[watch-latency]", *a, file=sys.stderr, flush=True)


def loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def pct(xs, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))
    return s[int(k)]


def stats(xs):
    if not xs:
        return None
    return {"n": len(xs), "min": min(xs), "median": statistics.median(xs), "p90": pct(xs, 90),
            "p99": pct(xs, 99), "max": max(xs)}


def ensure_workspace(work, m, seed):
    ws = os.path.join(work, "watch-workspace")
    mf = ws + ".manifest.json"
    try:
        man = json.load(open(mf))
        if man.get("m") == m and man.get("seed") == seed and os.path.isfile(os.path.join(ws, man["flip"])):
            say(f"reusing {ws} ({m} captures)")
            return ws, man
    except (OSError, ValueError, KeyError):
        pass
    say(f"generating {ws}: {m} captures, one file each")
    t = time.time()
    man = gen.watch_workspace(ws, m, seed)
    say(f"generated in {time.time() - t:.1f} s")
    return ws, man


def atomic_write(path, text):
    d, name = os.path.split(path)
    tmp = os.path.join(d, f".{name}.{os.getpid()}.tmp")  # `.tmp`: ignored by the watcher
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.rename(tmp, path)
    return now_ms()  # just after the rename


def inotify_watches(pid):
    """How many inotify watches the process holds (from /proc/PID/fdinfo), or None."""
    n = None
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                    c = sum(1 for l in open(f"/proc/{pid}/fdinfo/{fd}") if l.startswith("inotify wd:"))
                    n = (n or 0) + c
            except OSError:
                continue
    except OSError:
        return None
    return n


class Watch:
    """`verdict watch --json` with a reader thread that cuts its output into batches (each ends
    with a summary line). Lines are not parsed as JSON (100k of them in the first pass): only
    `type`, `ts_ms`, whether `flipped_from` is set, and the lines of one watched capture id."""

    def __init__(self, verdict, ws, debounce, track_id):
        self.batches = queue.Queue()
        self.track = f'"id":"{track_id}"'.encode()
        self.t_spawn = now_ms()
        self.proc = subprocess.Popen([verdict, "watch", "--json", "--debounce-ms", str(debounce), ws],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=1 << 20)
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self):
        b = self._new()
        for line in self.proc.stdout:
            m = TS.search(line)
            ts = int(m.group(1)) if m else None
            t = TYPE.search(line)
            typ = t.group(1).decode() if t else "?"
            b["lines"] += 1
            b["types"][typ] = b["types"].get(typ, 0) + 1
            if b["first_ts"] is None:
                b["first_ts"] = ts
                b["first_type"] = typ
            if typ == "verdict" and b'"flipped_from":null' not in line:
                b["flipped"] += 1
            if typ == "error":
                b["errors"].append(line.decode(errors="replace")[:300])
            if self.track in line and typ == "verdict" and b["tracked"] is None:
                b["tracked"] = json.loads(line)
            if typ == "summary":
                b["summary_ts"] = ts
                b["summary"] = json.loads(line)["data"]
                self.batches.put(b)
                b = self._new()
        self.batches.put(None)  # the process ended

    @staticmethod
    def _new():
        return {"lines": 0, "types": {}, "first_ts": None, "first_type": None, "flipped": 0,
                "tracked": None, "summary_ts": None, "summary": None, "errors": []}

    def batch(self, timeout):
        try:
            b = self.batches.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"no summary line within {timeout} s")
        if b is None:
            raise RuntimeError("verdict watch ended: " + b"".join(self.stderr[-5:]).decode(errors="replace"))
        return b

    def until(self, pred, timeout):
        """Batches up to and including the first for which pred holds (a save can arrive as more
        than one batch: the temp file's events, then the rename)."""
        deadline = time.time() + timeout
        got = []
        while True:
            got.append(self.batch(max(0.01, deadline - time.time())))
            if pred(got[-1]):
                return got

    def drain(self):
        """Batches that arrived unasked (e.g. a stray event), dropped."""
        n = 0
        while True:
            try:
                self.batches.get_nowait()
                n += 1
            except queue.Empty:
                return n

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run_one(verdict, ws, man, debounce, saves, contract_saves, rng, edit="schema"):
    flip_path = os.path.join(ws, man["flip"])
    flip_id = os.path.splitext(os.path.basename(flip_path))[0]
    cfile, cold, cnew = EDITS[edit]
    rules_path = os.path.join(ws, "schemas", cfile)
    flip_orig = open(flip_path, encoding="utf-8").read()
    rules_orig = open(rules_path, encoding="utf-8").read()
    assert rules_orig.count(cold) == 1, f"{cfile} of samples/refund changed: update the {edit} edit"
    rec = json.loads(flip_orig)
    bumped = dict(rec, intent=dict(rec["intent"], amount_minor=rec["intent"]["amount_minor"] + 1))
    flip_texts = [gen.dumps(bumped) + "\n", flip_orig]
    rules_texts = [rules_orig.replace(cold, cnew), rules_orig]
    res = {"debounce_ms": debounce, "load_start": loadavg(), "contract_edit": edit, "contract_file": cfile,
           "contract_change": f"{cold} <-> {cnew}"}
    say(f"D={debounce} ms: starting verdict watch (load {res['load_start']})")
    w = Watch(verdict, ws, debounce, flip_id)
    try:
        first = w.batch(timeout=1800)
        res["first_pass_ms"] = first["summary_ts"] - w.t_spawn
        res["first_pass_lines"] = first["lines"]
        res["first_pass_captures"] = first["summary"]["captures"]
        res["inotify_watches"] = inotify_watches(w.proc.pid)
        say(f"  first pass: {res['first_pass_ms'] / 1000:.2f} s, {first['summary']['captures']} captures, "
            f"{res['inotify_watches']} inotify watches")
        time.sleep(1.0)  # let the watcher settle
        w.drain()

        lat, bad, extra = [], [], 0
        for i in range(saves):
            t_save = atomic_write(flip_path, flip_texts[i % 2])
            bs = w.until(lambda b: b["tracked"] is not None, timeout=30 + debounce / 1000)
            v = bs[-1]["tracked"]
            extra += len(bs) - 1
            if v["flipped_from"] is None:
                bad.append(f"save {i}: {flip_id} did not flip: {bs[-1]['types']} {bs[-1]['errors']}")
            else:
                lat.append(v["ts_ms"] - t_save)
            time.sleep(0.3 + 2 * debounce / 1000 + rng.random() * debounce / 1000)
            w.drain()
        res["capture_ms"] = lat
        res["capture_problems"] = bad
        res["capture_extra_batches"] = extra
        s = stats(lat)
        if s:
            say(f"  capture save -> verdict: median {s['median']:.0f} ms, p90 {s['p90']:.0f}, max {s['max']:.0f} "
                f"(n={s['n']})")

        first_l, summ_l, lines, flips, cbad = [], [], [], [], []
        for i in range(contract_saves):
            t_save = atomic_write(rules_path, rules_texts[i % 2])
            bs = [w.batch(timeout=600)]
            if not (bs[-1]["flipped"] or bs[-1]["errors"]):
                # nothing changed: a batch of the temp file's events only, or the edit was missed;
                # wait a little for another batch
                try:
                    bs += w.until(lambda b: b["flipped"] or b["errors"], timeout=max(5, 10 * debounce / 1000))
                except RuntimeError:
                    pass
            b = bs[-1]
            if b["errors"] or len(bs) > 1 or not b["flipped"]:
                cbad.append(f"save {i}: {len(bs)} batch(es), last {b['types']} flipped={b['flipped']} {b['errors']}")
            first_l.append(bs[0]["first_ts"] - t_save)
            summ_l.append(b["summary_ts"] - t_save)
            lines.append(b["lines"])
            flips.append(b["flipped"])
            time.sleep(1.0 + rng.random() * debounce / 1000)
            w.drain()
        res.update(contract_first_ms=first_l, contract_summary_ms=summ_l, contract_lines=lines,
                   contract_flipped=flips, contract_problems=cbad)
        s = stats(summ_l)
        if s:
            say(f"  {edit} save -> summary: median {s['median']:.0f} ms (first line {stats(first_l)['median']:.0f} ms), "
                f"{statistics.median(flips):.0f} verdicts flipped")
    finally:
        w.stop()
        # restore the workspace (an odd count of saves leaves the edited text)
        for path, text in ((flip_path, flip_orig), (rules_path, rules_orig)):
            if open(path, encoding="utf-8").read() != text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    res["load_end"] = loadavg()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verdict", required=True, help="the verdict binary (release)")
    ap.add_argument("--work", required=True, help="folder for the workspace (reused when it matches)")
    ap.add_argument("--m", type=int, default=100_000, help="captures (default 100000)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--debounce", default="200,50", help="debounce values in ms, comma-separated (default 200,50)")
    ap.add_argument("--saves", type=int, default=30, help="capture saves per debounce (default 30)")
    ap.add_argument("--contract-saves", type=int, default=10, help="contract saves per debounce (default 10)")
    ap.add_argument("--contract-edit", choices=sorted(EDITS), default="schema",
                    help="which contract file the contract saves edit (default schema)")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()

    os.makedirs(a.work, exist_ok=True)
    ws, man = ensure_workspace(a.work, a.m, a.seed)
    rng = random.Random(a.seed)
    out = {"m": a.m, "seed": a.seed, "folders": man["folders"], "flip": man["flip"],
           "inotify_max_user_watches": open("/proc/sys/fs/inotify/max_user_watches").read().strip()
           if os.path.exists("/proc/sys/fs/inotify/max_user_watches") else "?",
           "verdict": subprocess.run([a.verdict, "--version"], capture_output=True, text=True).stdout.strip(),
           "runs": []}
    rc = 0
    for d in [int(x) for x in a.debounce.split(",") if x.strip()]:
        try:
            out["runs"].append(run_one(a.verdict, ws, man, d, a.saves, a.contract_saves, rng, a.contract_edit))
        except Exception as e:  # recorded, and the next debounce still runs
            say(f"D={d}: failed: {e}")
            out["runs"].append({"debounce_ms": d, "failed": str(e), "load_end": loadavg()})
            rc = 1
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main())

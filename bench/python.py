#!/usr/bin/env python3
"""The Python package's speed rows (BENCHMARKS.md, "The Python package"; issue 18).

    python bench/python.py WORK [--verdict target/release/verdict] [--rounds 5] [--m 100000]
                                [--calls 20000] [--skip-spark] [--only many|percall|spark]

Run it with the interpreter of a virtualenv that holds a **release** wheel of the package
(and pyspark, pyarrow for the Spark row):

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install maturin pyarrow 'pandas<3' pyspark
    (cd python && /tmp/venv/bin/maturin build --release --locked --out /tmp/wheels)
    /tmp/venv/bin/pip install --force-reinstall --no-deps /tmp/wheels/verdict-*.whl
    cargo build --release --locked
    /tmp/venv/bin/python bench/python.py /tmp/pyspeed-data

WORK gets bench/gen.py's `pipeline` workload (`WORK/gen/workspace`: the refund contract and
M capture records in `captures/log.jsonl`; reused when its manifest has the same M) and its
contracts alone (`WORK/gen/contracts`). Every timed Python run is a fresh interpreter (a
child of this one), so no round inherits another's heap or caches.

Rows (CPU is user + sys of the whole process, all threads; wall from a monotonic clock):

- `cli`: `verdict check WORKSPACE --format jsonl` to a file: start-up, opening the
  workspace (its pre-pass reads the log once), reading and checking the log, writing the
  verdict lines and the summary.
- `check_many_json`, `check_many`, `check_many(dicts)`: a fresh interpreter that imports
  `verdict`, opens the same workspace (the same pre-pass), reads the log as `str` lines,
  builds one source per line (`captures/log.jsonl:N`, so every verdict equals the CLI's),
  and calls the method on all of them at once: `check_many_json` returns the verdict
  texts, `check_many` the verdicts as `verdict.Verdict` objects (their dicts built when
  first needed); `check_many + v.decision` then reads every verdict's decision,
  `check_many + v.to_dict()` makes every verdict's dict (the phase `use`); `check_many(dicts)`
  is handed the records as dicts (parsed before the clock starts: a pipeline that holds
  dicts), which the native module writes as JSON text. Reported as the whole process (beside the CLI's) and as its
  phases (open, read + split + sources, the call, the use, freeing the result), and as
  open + call + use + free against the CLI's whole process (what the package adds to a
  program that already holds its records).
  The first round checks that the `check_many_json` texts are the CLI's lines, byte for byte.
- per call: `ws.check(record)` on one small ready record and one small failing one (the
  workload's first record of that kind), as a dict and as a str, and the native
  `check_json(str)`, each `--calls` times, the median of 5 batches, in µs per call; beside
  it the Rust cost of the same check: `check_many_json` of `--calls` copies of the record
  with `RAYON_NUM_THREADS=1`, wall per record (one thread: the library's own cost, with no
  per-call crossing).
- Spark: `verdict.spark.check` in `local[2]` on `spark.read.text` of the log, forced with
  the `noop` writer; one warm-up, then `--rounds` actions in one session; records/s from
  the wall of each action (the session's start-up excluded), beside the CLI's records/s
  (wall and CPU) from the `cli` rows.

Results go to stdout as markdown tables, and to WORK/python-bench.json.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)


# ---- the children: each prints one JSON object on its last stdout line -------------------


def _cpu():
    t = os.times()
    return t.user + t.system


def child_many(mode, ws_path, out):
    t0, c0 = time.perf_counter(), _cpu()
    import verdict

    t1, c1 = time.perf_counter(), _cpu()
    ws = verdict.Workspace(ws_path)
    t2, c2 = time.perf_counter(), _cpu()
    with open(os.path.join(ws_path, "captures", "log.jsonl"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    keep = [i for i, line in enumerate(lines) if line.strip()]
    records = [lines[i] for i in keep]
    sources = [f"captures/log.jsonl:{i + 1}" for i in keep]
    del lines
    if mode == "dicts":
        records = [json.loads(r) for r in records]
    t3, c3 = time.perf_counter(), _cpu()
    if mode == "json":
        result = ws.check_many_json(records, sources)
    else:
        result = ws.check_many(records, sources)
    t4, c4 = time.perf_counter(), _cpu()
    # what a caller does with them: read every verdict's decision, or make every dict
    if mode == "decision":
        used = [v.decision for v in result if v is not None]
    elif mode == "to_dict":
        used = [v.to_dict() for v in result if v is not None]
    else:
        used = []
    t5, c5 = time.perf_counter(), _cpu()
    n_verdicts = sum(r is not None for r in result)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            for t in result:
                if t is not None:
                    f.write(t)
                    f.write("\n")
    t6, c6 = time.perf_counter(), _cpu()
    del result, used
    t7, c7 = time.perf_counter(), _cpu()
    print(json.dumps({
        "n": len(records), "verdicts": n_verdicts,
        "import": [t1 - t0, c1 - c0], "open": [t2 - t1, c2 - c1],
        "read": [t3 - t2, c3 - c2], "call": [t4 - t3, c4 - c3],
        "use": [t5 - t4, c5 - c4], "free": [t7 - t6, c7 - c6],
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }))


def small_records(m_seed=5):
    """The workload's first ready record and its first schema failure (a string amount)."""
    import gen

    found = {}
    for kind, rec in gen.capture_records(1000, m_seed):
        if kind in ("ready", "amount_string") and kind not in found:
            found[kind] = rec
        if len(found) == 2:
            break
    return found["ready"], found["amount_string"]


def child_percall(ws_path, calls):
    import verdict

    ws = verdict.Workspace(ws_path)
    ready, failing = small_records()
    res = {}
    for name, rec in (("ready", ready), ("failing", failing)):
        text = json.dumps(rec, ensure_ascii=False)
        v = ws.check(rec)
        res[name] = {"bytes": len(text.encode()), "decision": v["decision"], "reason": v["reason"]}
        for label, fn, arg in (
            ("check(dict)", ws.check, rec),
            ("check(str)", ws.check, text),
            ("check_json(str)", ws.check_json, text),
            ("native check_json(str)", ws._native.check_json, text),
        ):
            per = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(calls):
                    fn(arg)
                per.append((time.perf_counter() - t0) / calls * 1e6)
            res[name][label] = per
        batch = [text] * calls
        per = []
        for _ in range(5):
            t0 = time.perf_counter()
            ws.check_many_json(batch)
            per.append((time.perf_counter() - t0) / calls * 1e6)
        res[name]["rust: check_many_json per record, 1 thread"] = per
    print(json.dumps(res))


def child_spark(contracts, log, rounds):
    from pyspark.sql import SparkSession

    import verdict.spark

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("verdict-bench")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.text(log)
    n = df.count()
    walls = []
    for r in range(rounds + 1):
        t0 = time.perf_counter()
        verdict.spark.check(df, contracts).write.format("noop").mode("overwrite").save()
        if r:  # round 0 is the warm-up (the workers start, the workspace is opened)
            walls.append(time.perf_counter() - t0)
    parts = df.rdd.getNumPartitions()
    spark.stop()
    print(json.dumps({"n": n, "walls": walls, "partitions": parts}))


# ---- the parent ------------------------------------------------------------------------


def run(cmd, env=None, stdout=subprocess.PIPE):
    """(wall, stdout) of one command; exit 0 or 1 (a check with failing verdicts) or we stop."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    out, err = p.communicate(timeout=3600)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"{cmd}: exit {p.returncode}: {err.decode(errors='replace')[-2000:]}")
    return wall, out


def timed(cmd, env=None, stdout=subprocess.PIPE):
    """Runs cmd through /usr/bin/time for its CPU and peak RSS: (wall, cpu, rss_kb, stdout)."""
    rss = f"/tmp/pyspeed-time-{os.getpid()}"
    wall, out = run(["/usr/bin/time", "-f", "%U %S %M", "-o", rss, *cmd], env, stdout)
    with open(rss) as f:
        u, s, m = f.read().split()[-3:]
    os.remove(rss)
    return wall, float(u) + float(s), int(m), out


def ensure_workload(work, m):
    gen_dir = os.path.join(work, "gen")
    manifest = os.path.join(gen_dir, "manifest.json")
    ok = False
    if os.path.exists(manifest):
        with open(manifest) as f:
            ok = json.load(f).get("m") == m
    if not ok:
        subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), gen_dir, "--n", "10",
                        "--m", str(m)], check=True, stdout=subprocess.DEVNULL)
    ws = os.path.join(gen_dir, "workspace")
    contracts = os.path.join(gen_dir, "contracts")
    if not os.path.isdir(contracts):
        os.makedirs(contracts)
        import shutil

        shutil.copy(os.path.join(ws, "verdict.toml"), contracts)
        shutil.copytree(os.path.join(ws, "schemas"), os.path.join(contracts, "schemas"))
    return ws, contracts


def med(xs):
    return statistics.median(xs)


def load():
    return open("/proc/loadavg").read().split()[:3]


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "?"


def bench_many(a, ws, res):
    me = [sys.executable, os.path.abspath(__file__)]
    rows = {
        "cli": None,
        "check_many_json": "json",
        "check_many": "many",
        "check_many + v.decision": "decision",
        "check_many + v.to_dict()": "to_dict",
        "check_many(dicts)": "dicts",
    }
    cli_out = os.path.join(a.work, "cli.jsonl")
    py_out = os.path.join(a.work, "py.jsonl")
    data = {k: [] for k in rows}
    loads = []
    for r in range(a.rounds + 1):  # round 0: warm-up (page cache), not counted
        loads.append(load())
        for name, mode in rows.items():
            if mode is None:
                with open(cli_out, "wb") as f:
                    wall, cpu, rss, _ = timed([a.verdict, "check", ws, "--format", "jsonl"],
                                              stdout=f)
                phases = None
            else:
                extra = [py_out] if (r == 0 and mode == "json") else []
                wall, cpu, rss, out = timed([*me, "_many", mode, ws, *extra])
                phases = json.loads(out.decode().strip().split("\n")[-1])
            if r:
                data[name].append({"wall": wall, "cpu": cpu, "rss_kb": rss, "phases": phases})
            print(f"round {r} {name}: wall {wall:.2f} s, cpu {cpu:.2f} s, rss {rss // 1024} MB",
                  file=sys.stderr)
        if r == 0:
            with open(cli_out, encoding="utf-8") as f:
                cli_lines = [l for l in f.read().split("\n") if l.startswith('{"type":"verdict"')]
            with open(py_out, encoding="utf-8") as f:
                py_lines = f.read().split("\n")[:-1]
            same = [f'{{"type":"verdict","data":{t}}}' for t in py_lines] == cli_lines
            print(f"check_many_json == check --format jsonl: {same} ({len(py_lines)} verdicts)",
                  file=sys.stderr)
            res["identical"] = same
            os.remove(py_out)
    os.remove(cli_out)
    res["many"] = data
    res["many_loads"] = loads


def bench_percall(a, contracts, res):
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    _, out = run([sys.executable, os.path.abspath(__file__), "_percall", contracts,
                  str(a.calls)], env=env)
    res["percall"] = json.loads(out.decode().strip().split("\n")[-1])
    res["percall_load"] = load()


def bench_spark(a, ws, contracts, res):
    log = os.path.join(ws, "captures", "log.jsonl")
    l0 = load()
    _, out = run([sys.executable, os.path.abspath(__file__), "_spark", contracts, log,
                  str(a.rounds)])
    res["spark"] = json.loads(out.decode().strip().split("\n")[-1])
    res["spark_load"] = [l0, load()]


def report(res):
    print(f"CPU: {res['cpu']} ({res['nproc']} cores); M = {res['m']}")
    if "many" in res:
        d = res["many"]
        cli = d["cli"]
        cli_cpu, cli_wall = med([x["cpu"] for x in cli]), med([x["wall"] for x in cli])
        print(f"\nload averages at each round's start: {res['many_loads']}")
        print(f"check_many_json texts == the CLI's lines: {res.get('identical')}\n")
        print("| row | CPU s (median) | CPU rounds | CPU vs CLI | wall s (median) | wall vs CLI "
              "| peak RSS MB | open CPU s | read+prepare CPU s | call CPU s | call wall s "
              "| use CPU s | free CPU s | open + call + use + free CPU vs CLI |")
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, xs in d.items():
            cpu = med([x["cpu"] for x in xs])
            wall = med([x["wall"] for x in xs])
            rounds = ", ".join(f"{x['cpu']:.2f}" for x in xs)
            rss = med([x["rss_kb"] for x in xs]) / 1024
            if xs[0]["phases"]:
                ph = [med([x["phases"][k][i] for x in xs]) for k, i in
                      (("open", 1), ("read", 1), ("call", 1), ("call", 0), ("use", 1),
                       ("free", 1))]
                work = med([sum(x["phases"][k][1] for k in ("open", "call", "use", "free"))
                            for x in xs])
                phs = " | ".join(f"{p:.2f}" for p in ph) + f" | {work / cli_cpu:.2f}x"
            else:
                phs = "- | - | - | - | - | - | -"
            print(f"| {name} | {cpu:.2f} | {rounds} | {cpu / cli_cpu:.2f}x | {wall:.2f} "
                  f"| {wall / cli_wall:.2f}x | {rss:.0f} | {phs} |")
        res["cli_records_per_s"] = {"wall": res["m"] / cli_wall, "cpu": res["m"] / cli_cpu}
    if "percall" in res:
        p = res["percall"]
        print(f"\nper call (µs, median of 5 batches; load {res['percall_load']})\n")
        labels = [k for k in p["ready"] if isinstance(p["ready"][k], list)]
        print("| record | bytes | verdict | " + " | ".join(labels) + " |")
        print("|---|---:|---|" + "---:|" * len(labels))
        for name, row in p.items():
            cells = " | ".join(f"{med(row[k]):.1f}" for k in labels)
            print(f"| {name} | {row['bytes']} | {row['decision']} {row['reason']} | {cells} |")
    if "spark" in res:
        s = res["spark"]
        rates = [s["n"] / w for w in s["walls"]]
        print(f"\nSpark local[2], {s['n']} records, {s['partitions']} partitions, load "
              f"{res['spark_load']}: walls {', '.join(f'{w:.2f}' for w in s['walls'])} s; "
              f"median {med(rates):,.0f} records/s")
        if "cli_records_per_s" in res:
            c = res["cli_records_per_s"]
            print(f"CLI: {c['wall']:,.0f} records/s (wall), {c['cpu']:,.0f} records/s of CPU")


def main():
    if len(sys.argv) > 1 and sys.argv[1].startswith("_"):
        cmd, rest = sys.argv[1], sys.argv[2:]
        if cmd == "_many":
            return child_many(rest[0], rest[1], rest[2] if len(rest) > 2 else None)
        if cmd == "_percall":
            return child_percall(rest[0], int(rest[1]))
        if cmd == "_spark":
            return child_spark(rest[0], rest[1], int(rest[2]))
        sys.exit(f"unknown {cmd}")
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("work")
    ap.add_argument("--verdict", default=os.path.join(REPO, "target", "release", "verdict"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--m", type=int, default=100_000)
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--only", choices=("many", "percall", "spark"))
    ap.add_argument("--skip-spark", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    ws, contracts = ensure_workload(a.work, a.m)
    res = {"cpu": cpu_model(), "nproc": os.cpu_count(), "m": a.m, "rounds": a.rounds,
           "verdict": a.verdict}
    if a.only in (None, "many"):
        bench_many(a, ws, res)
    if a.only in (None, "percall"):
        bench_percall(a, contracts, res)
    if a.only in (None, "spark") and not a.skip_spark:
        bench_spark(a, ws, contracts, res)
    with open(os.path.join(a.work, "python-bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    report(res)


if __name__ == "__main__":
    main()

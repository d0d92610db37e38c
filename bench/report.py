#!/usr/bin/env python3
"""Turns bench/run.sh's raw timings into the markdown results table (stdout)."""
import argparse, json, os, platform, statistics, subprocess, datetime

REF = {  # workload -> the row every ratio of that workload is taken against
    "validate-jsonl": "floor 2 threads",
    "validate-files": ("validate-jsonl", "floor 2 threads"),
    "pipeline": "floor parse-only 2 threads",
}
TITLE = {
    "validate-jsonl": "Validator mode, {n} proposals as one JSONL file",
    "validate-files": "Validator mode, {n} proposals as one file each",
    "pipeline": "Full pipeline, {m} capture records (one JSONL log)",
}


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return "?"


def _pct(xs, p):
    s = sorted(xs)
    return s[max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))]


def watch_section(path, note):
    """The `verdict watch --json` latency tables, from bench/watch-latency.py's JSON."""
    if not path or not os.path.exists(path):
        print("## Watch: file save to verdict\n")
        print(f"- not measured: {note or 'no results'}\n")
        return
    w = json.load(open(path))
    m = w["m"]
    print(f"## Watch: file save to verdict, {m} captures (one file each, {w['folders']} folders)\n")
    print(f"`bench/watch-latency.py`: `verdict watch --json --debounce-ms D` on the refund contract "
          f"with {m} capture files. Latency = the verdict line's `ts_ms` - the wall clock just after "
          f"`os.rename` of an atomic save. Target: capture save to updated verdict within "
          f"D + 50 ms. inotify: {w['inotify_max_user_watches']} watches allowed per user.\n")
    if note:
        print(f"> {note}\n")
    print("| D ms | first pass (all captures) | inotify watches | load at start -> end |")
    print("|---:|---:|---:|---|")
    for r in w["runs"]:
        if "failed" in r:
            print(f"| {r['debounce_ms']} | failed: {r['failed'][:200]} | | -> {r.get('load_end', '?')} |")
            continue
        print(f"| {r['debounce_ms']} | {r['first_pass_ms'] / 1000:.2f} s ({r['first_pass_captures']}) | "
              f"{r['inotify_watches']} | {r['load_start']} -> {r['load_end']} |")
    print("\n**One capture file saved** (its verdict flips ready <-> INTENT_MISMATCH), ms:\n")
    print("| D ms | saves | min | median | p90 | p99 | max | median - D | p99 - D | within D + 50 |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in w["runs"]:
        xs = r.get("capture_ms") or []
        if not xs:
            continue
        d = r["debounce_ms"]
        med = statistics.median(xs)
        ok = sum(1 for x in xs if x <= d + 50)
        print(f"| {d} | {len(xs)} | {min(xs):.0f} | {med:.0f} | {_pct(xs, 90):.0f} | {_pct(xs, 99):.0f} | "
              f"{max(xs):.0f} | {med - d:.0f} | {_pct(xs, 99) - d:.0f} | {ok}/{len(xs)} |")
    r0 = next((r for r in w["runs"] if r.get("contract_file")), {})
    print(f"\n**The contract saved**: `schemas/{r0.get('contract_file', '?')}`, "
          f"`{r0.get('contract_change', '?')}` and back (all {m} captures re-validated), ms:\n")
    print("| D ms | saves | first line median | first line max | summary median | summary max | "
          "summary median - D | lines per batch | verdicts flipped |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in w["runs"]:
        f, s_ = r.get("contract_first_ms") or [], r.get("contract_summary_ms") or []
        if not s_:
            continue
        d = r["debounce_ms"]
        print(f"| {d} | {len(s_)} | {statistics.median(f):.0f} | {max(f):.0f} | {statistics.median(s_):.0f} | "
              f"{max(s_):.0f} | {statistics.median(s_) - d:.0f} | {statistics.median(r['contract_lines']):.0f} | "
              f"{statistics.median(r['contract_flipped']):.0f} |")
    probs = [p for r in w["runs"] for p in r.get("capture_problems", []) + r.get("contract_problems", [])]
    extra = sum(r.get("capture_extra_batches", 0) for r in w["runs"])
    if probs or extra:
        print()
        if extra:
            print(f"- {extra} capture save(s) arrived as more than one batch (the temp file's events first)")
        for p_ in probs[:10]:
            print(f"- {p_}")
    print()


def watch_only(a):
    now = datetime.datetime.now(datetime.timezone.utc)
    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    mem = sh("free -g | awk '/Mem:/{print $2}'")
    print(f"# verdict benchmark (watch latency only): {now:%Y-%m-%d %H:%M} UTC\n")
    if a.label:
        print(f"> **{a.label}**\n")
    print(f"- Machine: {os.cpu_count()} cores (nproc {sh('nproc')}), {cpu}, {mem} GiB, {platform.system()} {platform.release()}")
    load = sh("cut -d' ' -f1-3 /proc/loadavg")
    print(f"- Load average when the report was written: {load}")
    if a.versions:
        for l in open(a.versions):
            print(f"- {l.strip()}")
    print()
    watch_section(a.watch, a.watch_note)


def main():
    ap = argparse.ArgumentParser()
    for a in ("raw", "notes", "versions", "gen", "install", "label", "watch"):
        ap.add_argument("--" + a, default="")
    ap.add_argument("--watch-note", default="", help="why the watch section is missing")
    ap.add_argument("--watch-only", action="store_true", help="only the machine and the watch section")
    ap.add_argument("--n", type=int); ap.add_argument("--m", type=int); ap.add_argument("--runs", type=int); ap.add_argument("--short-runs", type=int)
    a = ap.parse_args()
    if a.watch_only:
        return watch_only(a)

    rows = {}  # (workload, tool) -> list of (wall, cpu, rss_kb, rc)
    order = []
    for line in open(a.raw):
        wl, tool, _run, t = line.rstrip("\n").split("|", 3)
        parts = t.split()
        if len(parts) < 5:
            continue
        wall, user, sys_, rss, rc = float(parts[0]), float(parts[1]), float(parts[2]), int(parts[3]), parts[4]
        if (wl, tool) not in rows:
            rows[(wl, tool)] = []
            order.append((wl, tool))
        rows[(wl, tool)].append((wall, user + sys_, rss, rc))
    med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v),
               statistics.median(r[2] for r in v), sorted({r[3] for r in v}), len(v)) for k, v in rows.items()}

    now = datetime.datetime.now(datetime.timezone.utc)
    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    mem = sh("free -g | awk '/Mem:/{print $2}'")
    load = sh("cut -d' ' -f1-3 /proc/loadavg")
    print(f"# verdict benchmark: {now:%Y-%m-%d %H:%M} UTC\n")
    if a.label:
        print(f"> **{a.label}**\n")
    print(f"- Machine: {os.cpu_count()} cores (nproc {sh('nproc')}), {cpu}, {mem} GiB, {platform.system()} {platform.release()}")
    print(f"- Load average when the report was written: {load}")
    print(f"- Sizes: N={a.n} proposals, M={a.m} capture records; {a.runs} runs per row after one warm-up "
          f"({a.short_runs} for the JSONL validator table, whose runs take ~0.1 s), "
          "interleaved (each round runs every row of a table once); medians")
    print("- Wall = elapsed; CPU = user + sys; RSS = peak resident (`bench/timeit.py`: monotonic clock, wait4, `/usr/bin/time -f %M`). "
          "`ratio` = wall / the reference row's wall (named under each table); the CPU ratio likewise.\n")
    print("## Versions\n")
    for l in open(a.versions):
        print(f"- {l.strip()}")
    print()
    for wl in ("validate-jsonl", "validate-files", "pipeline"):
        keys = [k for k in order if k[0] == wl]
        ref = REF[wl]
        refkey = (ref[0], ref[1]) if isinstance(ref, tuple) else (wl, ref)
        r = med.get(refkey)
        print(f"## {TITLE[wl].format(n=a.n, m=a.m)}\n")
        print(f"Reference for the ratios: `{refkey[1]}`" + (f" on {refkey[0]}" if refkey[0] != wl else "") + ".\n")
        print("| tool | wall s | CPU s | peak RSS MB | wall ratio | CPU ratio | exit |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for k in keys:
            w, c, rss, rcs, _ = med[k]
            wr = f"{w / r[0]:.2f}x" if r and r[0] > 0 else "n/a"
            cr = f"{c / r[1]:.2f}x" if r and r[1] > 0 else "n/a"
            print(f"| {k[1]} | {w:.3f} | {c:.3f} | {rss / 1024:.1f} | {wr} | {cr} | {','.join(rcs)} |")
        print()
    if a.watch or a.watch_note:
        watch_section(a.watch, a.watch_note)
    notes = [l.strip() for l in open(a.notes)] if a.notes and os.path.exists(a.notes) else []
    inst = [l.strip() for l in open(a.install)] if a.install and os.path.exists(a.install) else []
    print("## Peers: install status and runs that did not happen\n")
    for l in inst:
        print(f"- install {l}")
    for l in notes:
        print(f"- {l.replace('|', ' / ', 2)}")
    if not inst and not notes:
        print("- (none)")
    print("\n## Workload mix (bench/gen.py manifest)\n")
    print("```\n" + json.dumps(json.loads(open(a.gen).read()), indent=1, sort_keys=True) + "\n```")


if __name__ == "__main__":
    main()

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


def main():
    ap = argparse.ArgumentParser()
    for a in ("raw", "notes", "versions", "gen", "install", "label"):
        ap.add_argument("--" + a, default="")
    ap.add_argument("--n", type=int); ap.add_argument("--m", type=int); ap.add_argument("--runs", type=int)
    a = ap.parse_args()

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
    print(f"- Sizes: N={a.n} proposals, M={a.m} capture records; {a.runs} runs per row after one warm-up; medians")
    print("- Wall = elapsed; CPU = user + sys; RSS = peak resident (`/usr/bin/time`). "
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

#!/usr/bin/env python3
"""Times several commands in interleaved rounds (bench/README.md, "Reading the table").

    python3 bench/interleave.py [--rounds 9] [--warmup 1] [--cwd DIR] \\
        NAME 'COMMAND' NAME 'COMMAND' ...

Each round runs every command once, in the order given (so a drift of the machine's speed
hits every row alike), stdout and stderr to /dev/null. For each run: wall (a monotonic
clock), CPU (user + sys of the process, from wait4's rusage) and peak RSS (wait4's
ru_maxrss, KiB: the command is started directly, without a shell; the high-water mark of
the forked child counts this interpreter's pages until the exec, so a figure near 15 MB may
be the interpreter's, not the command's: use `bench/timeit.py` for small peaks). Prints, per command, the median, min and max of wall and CPU, the median system time
(the part of CPU spent in the kernel), the median peak RSS,
and the ratio of its medians to the first command's; then the machine's CPU model and the
load average before and after. A command is split with shlex (no shell: no pipes).
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time


def run(cmd, cwd):
    t0 = time.perf_counter()
    child = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, ru = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = 0  # reaped here
    rc = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, rc, ru.ru_stime


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--cwd", default=None)
    p.add_argument("pairs", nargs="+", help="NAME COMMAND NAME COMMAND ...")
    a = p.parse_args()
    if len(a.pairs) % 2:
        sys.exit("give NAME COMMAND pairs")
    rows = [(a.pairs[i], shlex.split(a.pairs[i + 1])) for i in range(0, len(a.pairs), 2)]
    load0 = os.getloadavg()
    for _ in range(a.warmup):
        for _, cmd in rows:
            run(cmd, a.cwd)
    got = {name: [] for name, _ in rows}
    for _ in range(a.rounds):
        for name, cmd in rows:
            got[name].append(run(cmd, a.cwd))
    load1 = os.getloadavg()
    first = None
    print(f"cpu: {cpu_model()}, {os.cpu_count()} cpus; load {load0[0]:.2f} -> {load1[0]:.2f}; "
          f"{a.rounds} rounds after {a.warmup} warm-up")
    print("| command | wall median (min-max) | CPU median (min-max) | of it sys | peak RSS | wall ratio | CPU ratio | exit |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, _ in rows:
        runs = got[name]
        wall = [r[0] for r in runs]
        cpu = [r[1] for r in runs]
        rss = statistics.median(r[2] for r in runs) / 1024
        rcs = sorted({r[3] for r in runs})
        mw, mc = statistics.median(wall), statistics.median(cpu)
        ms = statistics.median(r[4] for r in runs)
        if first is None:
            first = (mw, mc)
        print(f"| {name} | {mw * 1000:.1f} ms ({min(wall) * 1000:.1f}-{max(wall) * 1000:.1f}) "
              f"| {mc * 1000:.1f} ms ({min(cpu) * 1000:.1f}-{max(cpu) * 1000:.1f}) | {ms * 1000:.1f} ms | {rss:.0f} MB "
              f"| {mw / first[0]:.3f}x | {mc / first[1]:.3f}x | {','.join(map(str, rcs))} |")


if __name__ == "__main__":
    main()

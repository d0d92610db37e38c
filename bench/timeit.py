#!/usr/bin/env python3
"""Times one command: `timeit.py OUT CMD...` runs CMD (stdout and stderr to /dev/null) and
writes `wall user sys peak_rss_kb exit` to OUT, in the format `run.sh` records.

Wall comes from a monotonic clock (microseconds, where `/usr/bin/time` gives 10 ms); user and
sys CPU seconds from wait4's rusage (the command and every process it waited for); the peak
resident set (KiB) from `/usr/bin/time -f %M`, which wraps the command (about 1 ms more wall). Python's own start-up is outside the timed span.
"""
import os
import subprocess
import sys
import time


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    rss_file = out + ".rss"
    # /usr/bin/time only for the peak RSS: a child forked from this interpreter would count
    # the interpreter's pages in its own high-water mark
    timed = ["/usr/bin/time", "-f", "%M", "-o", rss_file, *cmd]
    t0 = time.perf_counter()
    child = subprocess.Popen(timed, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # wait4: the CPU of this child and what it waited for, not of every child this
    # interpreter ever had
    _, status, ru = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = 0  # reaped here; keeps Popen from waiting again
    rc = os.waitstatus_to_exitcode(status)
    rc = rc if rc >= 0 else 128 - rc
    with open(rss_file) as f:
        lines = f.read().split()
    # GNU time reports a killed command on an extra line before the number
    rss = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    with open(out, "w") as f:
        f.write(f"{wall:.4f} {ru.ru_utime:.4f} {ru.ru_stime:.4f} {rss} {rc}\n")


if __name__ == "__main__":
    main()

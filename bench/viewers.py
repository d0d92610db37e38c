#!/usr/bin/env python3
"""The TUI against the log viewers a user would open a large log with instead (issue 19 item 4;
BENCHMARKS.md "The TUI against the log viewers").

    python3 bench/viewers.py --workspace WS [--rounds 1] [--timeout 300] [--json OUT] [TOOL...]

WS is `bench/gen.py`'s `workspace/` (M capture records in captures/log.jsonl, ids c0000000 ..);
TOOL is any of verdict, lnav, jless, fx, visidata (default: all), found on PATH or under
bench/.tools (override with --verdict, --lnav, --jless, --fx, --vd). Each tool runs in its own
detached tmux session (120x40, a private tmux server `-L verdict-viewers`), one tool after the
other in every round (interleaved: a drift of the machine's load hits every tool alike), and is
driven with `send-keys` while `capture-pane` is polled (every 20 ms) for the text that says the
frame is there:

  first frame    launch to the first frame showing a record (a capture id `c0000000`-like in a
                 line other than a prompt; for verdict also a pending row, which lists a record
                 by its source `captures/log.jsonl:1` until its verdict comes)
  all reachable  launch until every record can be reached: the jump to the end (re-sent every
                 --every s, 0.2 by default, for every tool alike) shows the log's last record
                 (`c0999999` for M=1000000); for verdict, also until the list's title counts
                 all M records (`Captures 1000000`, pending or checked), and its last record
                 is its pending row `captures/log.jsonl:1000000` or its checked id
  all verdicts   verdict only: launch until the header says `validated in` with the list
                 holding all M captures (every record checked)
  jump to end    from the top, the end key(s) to the frame showing the last record (for verdict
                 the last row of its sorted list, read from the screen after the load); the
                 median of --jumps runs
  search         from the top, `/` + the last record's id + Enter to the frame showing that
                 record outside the prompt; the median of --searches runs
  peak RSS       VmHWM summed over the tool's process tree at the end (a tool whose resident
                 set passes --max-rss is stopped there and marked so)

A tool that is not installed, exits, or misses a deadline is a row saying so, never a crash.
The figures are wall-clock from this driver's view (launch or send-keys to the poll that sees
the text): they include tmux's own latency and the 20 ms poll, and they move with the
machine's load (printed with each run).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOOLS_DIR = os.environ.get("TOOLS", os.path.join(HERE, ".tools"))
SOCK = "verdict-viewers"
W, H = 120, 40
POLL = 0.02


def tmux(*args, check=True):
    r = subprocess.run(["tmux", "-L", SOCK, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"tmux {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def screen(s):
    return tmux("capture-pane", "-p", "-t", s, check=False)


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def tree(pid):
    """pid and its descendants."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
    kids = {}
    for line in out.split("\n"):
        p = line.split()
        if len(p) == 2:
            kids.setdefault(int(p[1]), []).append(int(p[0]))
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(kids.get(p, []))
    return seen


def mem(pid):
    """(VmHWM, VmRSS) in KiB summed over pid's process tree."""
    hwm = rss = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm += int(line.split()[1])
                    elif line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
        except OSError:
            pass
    return hwm, rss


class Stop(Exception):
    """The tool exited, passed the memory cap or missed a deadline."""


class Run:
    def __init__(self, name, argv, max_rss_kb):
        self.name = name
        self.s = f"v-{name}"
        self.max_rss_kb = max_rss_kb
        tmux("kill-session", "-t", self.s, check=False)
        cmd = " ".join(shlex_quote(a) for a in argv)
        self.t0 = time.monotonic()
        tmux("new-session", "-d", "-x", str(W), "-y", str(H), "-s", self.s,
             f"exec env TERM=xterm-256color {cmd}")
        tmux("set-option", "-t", self.s, "remain-on-exit", "on")
        self.pid = int(tmux("display-message", "-p", "-t", self.s, "#{pane_pid}").strip())
        self.peak = (0, 0)

    def alive(self):
        return tmux("display-message", "-p", "-t", self.s, "#{pane_dead}", check=False).strip() == "0"

    def check(self):
        if not self.alive():
            raise Stop("exited: " + " / ".join(l.strip() for l in screen(self.s).split("\n") if l.strip())[:300])
        hwm, rss = mem(self.pid)
        self.peak = (max(self.peak[0], hwm), max(self.peak[1], rss))
        if rss > self.max_rss_kb:
            raise Stop(f"stopped: resident set passed {self.max_rss_kb // 1024 ** 2} GB")

    def wait(self, pred, deadline, every=None, keys=()):
        """Polls the screen until pred(text); re-sends keys every `every` s. Returns the
        monotonic time it was seen."""
        last_send = time.monotonic()
        n = 0
        while True:
            text = screen(self.s)
            if pred(text):
                return time.monotonic()
            now = time.monotonic()
            if now > deadline:
                raise Stop(f"deadline passed ({deadline - self.t0:.0f} s after launch)")
            n += 1
            if n % 10 == 0:
                self.check()
            if every and now - last_send >= every:
                self.send(*keys)
                last_send = now
            time.sleep(POLL)

    def send(self, *keys):
        for k in keys:
            if k.startswith("lit:"):
                tmux("send-keys", "-t", self.s, "-l", k[4:])
            else:
                tmux("send-keys", "-t", self.s, k)

    def close(self):
        try:
            self.check()
        except Stop:
            pass
        tmux("kill-session", "-t", self.s, check=False)


def shlex_quote(a):
    import shlex
    return shlex.quote(a)


def find(name, override):
    if override:
        return override if os.path.exists(override) else None
    # visidata has a venv of its own (install-peers.sh viewers): `vd-venv`
    for p in (os.path.join(TOOLS_DIR, "bin", name), os.path.join(TOOLS_DIR, "venv", "bin", name),
              os.path.join(TOOLS_DIR, "vd-venv", "bin", name),
              os.path.join(TOOLS_DIR, "cargo", "bin", name),
              os.path.join(TOOLS_DIR, "npm", "node_modules", ".bin", name)):
        if os.path.exists(p):
            return p
    return shutil.which(name)


def specs(a, log, ws, m):
    """name -> (argv, top keys, end keys, search keys, reachable predicate or None)."""
    last = f"c{m - 1:07d}"
    rid = re.compile(r"(?<![/\w])c\d{7}\b")
    out = {}
    b = find("verdict", a.verdict or os.path.join(ROOT, "target", "release", "verdict"))
    out["verdict"] = (b and [b, ws], ["g"], ["G"], ["/", f"lit:{last}", "Enter"], ["Escape", "g"],
                      lambda t: "validated in" in t and f"Captures {m} " in t)
    b = find("lnav", a.lnav)
    out["lnav"] = (b and [b, log], ["g"], ["G"], ["/", f"lit:{last}", "Enter"], ["g"], None)
    b = find("jless", a.jless)
    out["jless"] = (b and [b, log], ["g"], ["G"], ["/", f"lit:{last}", "Enter"], ["g"], None)
    b = find("fx", a.fx)
    out["fx"] = (b and [b, log], ["g"], ["G"], ["/", f"lit:{last}", "Enter"], ["Escape", "g"], None)
    b = find("vd", a.vd)
    out["visidata"] = (b and [b, log], ["g", "k"], ["g", "j"], ["/", f"lit:{last}", "Enter"], ["g", "k"], None)
    return out, last, rid


def one(name, spec, last, rid, a, m):
    argv, top, end, search, reset, reachable = spec
    row = {"tool": name, "load_start": load()}
    if not argv:
        row["note"] = "not installed"
        return row
    lastre = re.compile(r"(?<![/\w])" + re.escape(last) + r"\b")
    if name == "lnav":
        # lnav echoes the search in its prompt and status lines (`search: c0999999`,
        # `1 hits for "c0999999"`): only the record's own line is the end marker
        lastre = re.compile(r'"id":"' + re.escape(last) + r'"')
    # verdict's pending rows: a record listed by its source before its verdict
    pending = re.compile(r"captures/log\.jsonl:\d+\b")
    lastsrc = re.compile(r"captures/log\.jsonl:" + str(m) + r"\b")
    r = Run(name, argv, a.max_rss * 1024 ** 2)
    try:
        d = r.t0 + a.timeout
        if name == "verdict":
            seen = r.wait(lambda t: rid.search(t) is not None or pending.search(t) is not None, d)
        else:
            seen = r.wait(lambda t: rid.search(t) is not None, d)
        row["first_frame_s"] = seen - r.t0
        # every record reachable: the end key(s) show the last record
        r.send(*end)
        if name == "verdict":
            title = f"Captures {m} "
            seen = r.wait(lambda t: title in t and (lastsrc.search(t) or lastre.search(t)) is not None,
                          d, every=a.every, keys=end)
        else:
            seen = r.wait(lambda t: lastre.search(t) is not None, d, every=a.every, keys=end)
        row["reachable_s"] = seen - r.t0
        if reachable:
            # verdict: every record checked
            seen = r.wait(reachable, d)
            row["verdicts_s"] = seen - r.t0
        time.sleep(0.5)
        r.send(*end)
        time.sleep(1.0)
        text = screen(r.s)
        # the end marker: the last record (verdict: the last row of its sorted list)
        endre = lastre
        if name == "verdict":
            ids = [x for x in rid.findall(text)]
            rows = [line for line in text.split("\n") if line.startswith("│")]
            listed = [rid.findall(line.split("││")[0]) for line in rows]
            listed = [x[-1] for x in listed if x]
            endid = listed[-1] if listed else (ids[-1] if ids else last)
            row["end_row"] = endid
            endre = re.compile(r"(?<![/\w])" + re.escape(endid) + r"\b")
        jumps, searches = [], []
        for _ in range(a.jumps):
            r.send(*top)
            r.wait(lambda t: endre.search(t) is None, time.monotonic() + 60)
            time.sleep(0.3)
            t = time.monotonic()
            r.send(*end)
            jumps.append(r.wait(lambda t: endre.search(t) is not None, time.monotonic() + 60) - t)
        # kept even when a search below misses its deadline
        row["jump_end_s"] = statistics.median(jumps)
        row["jump_end_runs"] = jumps
        for _ in range(a.searches):
            r.send(*reset)
            r.wait(lambda t: lastre.search(t) is None, time.monotonic() + 60)
            time.sleep(0.3)
            t = time.monotonic()
            r.send(*search)
            searches.append(r.wait(lambda t: lastre.search(t) is not None, time.monotonic() + 120) - t)
        row["search_s"] = statistics.median(searches)
        row["search_runs"] = searches
    except Stop as e:
        row["note"] = str(e)
    except RuntimeError as e:
        row["note"] = f"driver: {e}"
    finally:
        r.close()
        row["peak_rss_mb"] = r.peak[0] / 1024
        row["load_end"] = load()
    return row


def fmt(v, unit):
    return "–" if v is None else (f"{v * 1000:.0f} ms" if unit == "ms" else f"{v:.1f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tools", nargs="*", default=["verdict", "lnav", "jless", "fx", "visidata"])
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300, help="seconds from launch to every record reachable")
    ap.add_argument("--jumps", type=int, default=5)
    ap.add_argument("--searches", type=int, default=3)
    ap.add_argument("--max-rss", type=float, default=8, help="GB: a tool past it is stopped")
    ap.add_argument("--every", type=float, default=0.2,
                    help="seconds between the end keys re-sent until the last record shows")
    ap.add_argument("--json")
    for t in ("verdict", "lnav", "jless", "fx", "vd"):
        ap.add_argument(f"--{t}")
    a = ap.parse_args()
    if not shutil.which("tmux"):
        sys.exit("tmux is not installed")
    ws = os.path.abspath(a.workspace)
    log = os.path.join(ws, "captures", "log.jsonl")
    with open(log, "rb") as f:
        m = sum(1 for _ in f)
    sp, last, rid = specs(a, log, ws, m)
    rows = []
    for rnd in range(1, a.rounds + 1):
        for name in a.tools:
            row = one(name, sp[name], last, rid, a, m)
            row["round"] = rnd
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    tmux("kill-server", check=False)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"log_bytes": os.path.getsize(log), "records": m, "rows": rows}, f, indent=1)
    print(f"{m} records, {os.path.getsize(log) / 1e6:.0f} MB; {a.rounds} round(s); medians over rounds\n")
    print("| tool | first frame with records | all records reachable | all verdicts | jump to end | search | peak RSS | load (start-end) | note |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    for name in a.tools:
        v = [r for r in rows if r["tool"] == name]
        med = lambda k: statistics.median([r[k] for r in v if k in r]) if any(k in r for r in v) else None
        notes = "; ".join(sorted({r["note"] for r in v if "note" in r}))
        loads = ", ".join(f"{r['load_start'].split()[0]}-{r.get('load_end', '?').split()[0]}" for r in v)
        rss = med("peak_rss_mb")
        print(f"| {name} | {fmt(med('first_frame_s'), 's')} | {fmt(med('reachable_s'), 's')} | "
              f"{fmt(med('verdicts_s'), 's')} | {fmt(med('jump_end_s'), 'ms')} | {fmt(med('search_s'), 'ms')} | "
              f"{'–' if not rss else f'{rss:.0f} MB'} | {loads} | {notes} |")


if __name__ == "__main__":
    main()

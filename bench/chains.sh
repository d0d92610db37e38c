#!/usr/bin/env bash
# The attempt-chain scale rows of BENCHMARKS.md ("Attempt chains at 1,000,000 captures"):
# `check -q` and `check --format jsonl` on the same 1M capture records without and with
# `chain`/`attempt`, and `verdict chains` on the latter, interleaved round by round after a warm-up of each;
# prints every run (wall user sys peak_rss_kb exit, load average) and the medians.
#
#   bash bench/chains.sh WORK [ROUNDS] [VERDICT...]
#
# WORK: the output of `python3 bench/chains.py WORK` (WORK/chains, WORK/no-chains);
# ROUNDS: 5; WARMUP=0 skips the warm-up runs (the files still in the page cache from
# chains.py); VERDICT: one or more release binaries to compare (default: target/release/verdict),
# each a row set of its own in the same rounds.
set -euo pipefail
work=${1:?usage: bench/chains.sh WORK [ROUNDS] [VERDICT...]}
rounds=${2:-5}
shift $(( $# >= 2 ? 2 : $# ))
bins=("$@")
[ ${#bins[@]} -eq 0 ] && bins=(target/release/verdict)
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
rows=()
for b in "${bins[@]}"; do
  rows+=("$b|check -q no-chains|$b check -q $work/no-chains")
  rows+=("$b|check -q chains|$b check -q $work/chains")
  rows+=("$b|chains|$b chains $work/chains")
  rows+=("$b|check jsonl no-chains|$b check --format jsonl --color never $work/no-chains")
  rows+=("$b|check jsonl chains|$b check --format jsonl --color never $work/chains")
done
run() { # i round
  local spec=${rows[$1]} cmd
  cmd=${spec##*|}
  python3 "$here/timeit.py" "$out/t" $cmd
  echo "$2|${spec%|*}|$(cat "$out/t")|$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/all"
}
[ "${WARMUP:-1}" = 0 ] || for i in "${!rows[@]}"; do run "$i" warmup > /dev/null; done
for r in $(seq 1 "$rounds"); do
  for i in "${!rows[@]}"; do run "$i" "$r"; done
done
echo
echo "medians over $rounds rounds (wall, CPU = user + sys, peak RSS MB):"
python3 - "$out/all" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r, b, name, t, load = line.rstrip("\n").split("|")
    if r == "warmup":  # run() records the warm-up too: not a round
        continue
    wall, user, sys_, rss, rc = t.split()
    rows.setdefault((b, name), []).append((float(wall), float(user) + float(sys_), int(rss) / 1024, int(rc)))
for (b, name), v in rows.items():
    med = lambda k: statistics.median(x[k] for x in v)
    print(f"{b} | {name} | {med(0):.2f} s | {med(1):.2f} s | {med(2):.1f} MB | exit {sorted(set(x[3] for x in v))}")
# per round, CPU against the same round's run without chains
for b in dict.fromkeys(b for b, _ in rows):
    for name, base in (("check -q chains", "check -q no-chains"), ("chains", "check -q no-chains"),
                       ("check jsonl chains", "check jsonl no-chains")):
        base = rows[(b, base)]
        ratios = [x[1] / y[1] for x, y in zip(rows[(b, name)], base)]
        print(f"{b} | {name} / its no-chains run, CPU per round: " + ", ".join(f"{r:.2f}x" for r in ratios)
              + f" (median {statistics.median(ratios):.2f}x)")
EOF
rm -rf "$out"

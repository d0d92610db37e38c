#!/usr/bin/env bash
# `verdict check -q` on 100 capture files of 10 MB each (bench/big-files.py): the peak RSS,
# which must stay within the bound docs/verdicts.md#limits gives (a multiple of
# max_capture_bytes x workers, whatever the file count). Prints
# `workload wall user sys peak_rss_kb exit` per run (bench/timeit.py).
# Usage: bash bench/big-files.sh [VERDICT_BINARY] (default: a release build of this tree)
# Knobs: N=100 MB=10 RUNS=3 WORK=DIR
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-}"
if [ -z "$BIN" ]; then
  cargo build --locked --release -q
  BIN="$PWD/target/release/verdict"
fi
WORK="${WORK:-$(mktemp -d)}"
RUNS="${RUNS:-3}"
ws="$WORK/big-${N:-100}x${MB:-10}"
[ -d "$ws" ] || python3 bench/big-files.py "$ws" "${N:-100}" "${MB:-10}"
for r in $(seq "$RUNS"); do
  (cd "$ws" && python3 "$OLDPWD/bench/timeit.py" "$WORK/t" "$BIN" check -q) || true
  echo "big-${N:-100}x${MB:-10} $(cat "$WORK/t")"
done

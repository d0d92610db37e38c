#!/usr/bin/env bash
# `verdict check -q` on workspaces of many schema files (bench/schema-files.py): 3,000 files
# each `$ref`-ing the next, and 10,000 independent ones, 50 captures each. Prints
# `workload wall user sys peak_rss_kb exit` per run (bench/timeit.py).
# Usage: bash bench/schema-files.sh [VERDICT_BINARY] (default: a release build of this tree)
# Knobs: CHAIN=3000 FLAT=10000 RUNS=3 WORK=DIR
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-}"
if [ -z "$BIN" ]; then
  cargo build --locked --release -q
  BIN="$PWD/target/release/verdict"
fi
WORK="${WORK:-$(mktemp -d)}"
RUNS="${RUNS:-3}"
for spec in "chain ${CHAIN:-3000}" "flat ${FLAT:-10000}"; do
  set -- $spec
  ws="$WORK/$1-$2"
  [ -d "$ws" ] || python3 bench/schema-files.py "$ws" "$1" "$2"
  for r in $(seq "$RUNS"); do
    (cd "$ws" && python3 "$OLDPWD/bench/timeit.py" "$WORK/t" "$BIN" check -q) || true
    echo "$1-$2 $(cat "$WORK/t")"
  done
done

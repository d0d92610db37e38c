#!/usr/bin/env bash
# The fault-injection test of `watch --json` (tests/watch_faults.rs) with more seeds than CI
# runs (CI: seeds 1, 2, 3). Usage: bash bench/watch-faults.sh [SEEDS] [OPS]
#   SEEDS: a range `4-50` (default) or a list `7,11,19`; OPS: operations per seed (200).
# A failing seed prints its operations; keep it as a regression case in the test file.
set -euo pipefail
cd "$(dirname "$0")/.."
VERDICT_FAULT_SEEDS="${1:-4-50}" VERDICT_FAULT_OPS="${2:-200}" \
  cargo test --locked --test main watch_faults::fault_injection_more_seeds -- --ignored --nocapture

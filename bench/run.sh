#!/usr/bin/env bash
# The verdict benchmark (bench/README.md). One command, from the repository root:
#
#   bash bench/run.sh                      # full sizes: N=100000 proposals, M=1000000 captures
#   SIZE=2000 bash bench/run.sh            # smoke run: N=M=2000 (SIZE sets both)
#
# Environment: N, M (override SIZE per workload), SEED (5), RUNS (5), WORK (temp dir for the
# workloads; default a fresh mktemp -d, removed at the end unless KEEP=1), SKIP_INSTALL=1,
# LABEL (a note printed at the top of the results file).
# Watch latency (bench/watch-latency.py): SKIP_WATCH=1 skips it; ONLY_WATCH=1 runs nothing else
# (results in bench/results/<date>-watch<WATCH_M>.md); WATCH_M (captures, one file each; default
# SIZE, else 100000), WATCH_DEBOUNCE (ms, comma-separated; "200,50"), WATCH_SAVES (30),
# WATCH_CONTRACT_SAVES (10).
# WORKLOADS (default "validate-jsonl validate-files pipeline"): which timed workloads to run;
# `viewers` (bench/viewers.py: the TUI against lnav, jless, fx, visidata in tmux) is not in the
# default; VIEWER_ROUNDS (1) its rounds.
# SHORT_RUNS (default 30): rounds of the validate-jsonl table, whose runs take ~0.1 s.
# Writes bench/results/<UTC date>.md (suffix -sizeN when not the full sizes, and -NAME with
# NAME=..., so a second run on one day does not overwrite the first).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BENCH="$ROOT/bench"
TOOLS="${TOOLS:-$BENCH/.tools}"
SIZE="${SIZE:-}"
N="${N:-${SIZE:-100000}}"
M="${M:-${SIZE:-1000000}}"
SEED="${SEED:-5}"
RUNS="${RUNS:-5}"
WORK="${WORK:-$(mktemp -d /tmp/verdict-bench.XXXXXX)}"
DATE="$(date -u +%Y-%m-%d)"
WATCH_M="${WATCH_M:-${SIZE:-100000}}"
ONLY_WATCH="${ONLY_WATCH:-0}"
WORKLOADS="${WORKLOADS:-validate-jsonl validate-files pipeline}"
SHORT_RUNS="${SHORT_RUNS:-30}"
want() { case " $WORKLOADS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
mkdir -p "$WORK"
say() { echo "[bench] $*" >&2; }

# 1. build verdict (release) and the floor
say "building verdict (release) and the floor"
(cd "$ROOT" && cargo build --release --locked --bin verdict) >&2 || { say "verdict build failed"; exit 2; }
VERDICT="$ROOT/target/release/verdict"
FLOOR="$BENCH/floor/target/release/verdict-floor"

# watch latency: file save to verdict through `verdict watch --json` (WATCH_M capture files)
WATCH_JSON="$WORK/watch.json"
run_watch() {
  say "watch latency: $WATCH_M capture files, debounce ${WATCH_DEBOUNCE:-200,50} ms"
  python3 "$BENCH/watch-latency.py" --verdict "$VERDICT" --work "$WORK" --m "$WATCH_M" --seed "$SEED" \
    --debounce "${WATCH_DEBOUNCE:-200,50}" --saves "${WATCH_SAVES:-30}" \
    --contract-saves "${WATCH_CONTRACT_SAVES:-10}" --json "$WATCH_JSON" >&2 \
    || say "watch latency: the script reported a failure (see the results file)"
}
if [ "$ONLY_WATCH" = 1 ]; then
  run_watch
  OUT="$BENCH/results/$DATE-watch$WATCH_M.md"
  mkdir -p "$BENCH/results"
  python3 "$BENCH/report.py" --watch-only --watch "$WATCH_JSON" --label "${LABEL:-}" \
    --versions <(echo "verdict: $("$VERDICT" --version 2>&1 | head -1) (git $(git -C "$ROOT" rev-parse --short HEAD))") > "$OUT"
  say "wrote $OUT"
  [ "${KEEP:-0}" = 1 ] && say "workspace kept in $WORK" || rm -rf "$WORK"
  exit 0
fi
(cd "$BENCH/floor" && cargo build --release --locked) >&2 || { say "floor build failed"; exit 2; }

# 2. peers (idempotent; failures are recorded, never fatal)
[ "${SKIP_INSTALL:-0}" = 1 ] || bash "$BENCH/install-peers.sh" >&2

# 3. workloads
say "generating workloads into $WORK (N=$N, M=$M, seed $SEED)"
python3 "$BENCH/gen.py" "$WORK" --n "$N" --m "$M" --seed "$SEED" > "$WORK/gen.out" || exit 2
S="$WORK/refund-v1.schema.json"
J="$WORK/proposals.jsonl"
D="$WORK/proposals"
W="$WORK/workspace"
L="$W/captures/log.jsonl"

# Peers that take files on argv get them through a wrapper that reads the list (no glob cost,
# and the stack limit is raised so 100,000 arguments fit in ARG_MAX).
mkdir -p "$WORK/cmd"
argv_wrapper() { # name, then the command prefix; file names are appended (with -i when $PER_FILE_FLAG)
  local name="$1"; shift
  {
    echo '#!/usr/bin/env bash'
    echo 'ulimit -s unlimited 2>/dev/null || ulimit -s 1048576'
    echo "cd '$D' || exit 127"
    echo "mapfile -t F < '$WORK/proposals.files'"
    if [ -n "${PER_FILE_FLAG:-}" ]; then
      echo "A=(); for f in \"\${F[@]}\"; do A+=('$PER_FILE_FLAG' \"\$f\"); done"
      printf 'exec'; printf " %q" "$@"; echo ' "${A[@]}"'
    else
      printf 'exec'; printf " %q" "$@"; echo ' "${F[@]}"'
    fi
  } > "$WORK/cmd/$name"
  chmod +x "$WORK/cmd/$name"
  echo "$WORK/cmd/$name"
}

RAW="$WORK/raw.tsv"
: > "$RAW"
NOTES="$WORK/notes.txt"
: > "$NOTES"
# measure WORKLOAD TOOL CMD...: queues a row; run_queue WORKLOAD runs the queued rows: one
# warm-up each, then RUNS rounds that take every row in turn (interleaved: a drift of the
# machine's speed during the run hits every row of the table alike), each run timed by
# timeit.py (wall at microsecond resolution, CPU and peak RSS from getrusage)
Q_TOOLS=()
Q_CMDS=()
measure() {
  local wl="$1" tool="$2"; shift 2
  Q_TOOLS+=("$tool")
  Q_CMDS+=("$(printf '%q ' "$@")")
}
run_queue() {
  local wl="$1" runs="${2:-$RUNS}" i k rc ok=()
  for k in "${!Q_TOOLS[@]}"; do
    say "$wl / ${Q_TOOLS[$k]} (warm-up)"
    eval "${Q_CMDS[$k]}" > /dev/null 2> "$WORK/last.err"
    rc=$?
    if [ $rc -ge 126 ]; then
      echo "$wl|${Q_TOOLS[$k]}|did not run (exit $rc): $(head -c 300 "$WORK/last.err" | tr '\n|' '  ')" >> "$NOTES"
    else
      ok+=("$k")
    fi
  done
  for i in $(seq "$runs"); do
    say "$wl: round $i of $runs"
    for k in "${ok[@]}"; do
      eval "python3 '$BENCH/timeit.py' '$WORK/t' ${Q_CMDS[$k]}"
      echo "$wl|${Q_TOOLS[$k]}|$i|$(tail -1 "$WORK/t")" >> "$RAW"
    done
  done
  Q_TOOLS=()
  Q_CMDS=()
}

have() { [ -x "$1" ]; }
CJS="$TOOLS/cargo/bin/jsonschema-cli"; have "$CJS" || CJS="$TOOLS/cargo/bin/jsonschema"
BOON="$TOOLS/cargo/bin/boon"
CHK="$TOOLS/venv/bin/check-jsonschema"
AJV="$TOOLS/npm/node_modules/.bin/ajv"
SMJ="$TOOLS/npm/node_modules/.bin/jsonschema"
# a peer that is not there is left out of the tables: say so, not silently
for peer in "jsonschema-cli:$CJS" "boon:$BOON" "check-jsonschema:$CHK" "ajv-cli:$AJV" "@sourcemeta/jsonschema:$SMJ"; do
  have "${peer#*:}" || echo "all|${peer%%:*}|not installed, so not timed: ${peer#*:} is missing$([ "${SKIP_INSTALL:-0}" = 1 ] && echo ' (SKIP_INSTALL=1 skipped bench/install-peers.sh)')" >> "$NOTES"
done

# 4. validator mode on the N-proposal JSONL
WL="validate-jsonl"
if want $WL; then
measure $WL "floor 1 thread"  "$FLOOR" --schema "$S" --threads 1 "$J"
measure $WL "floor 2 threads" "$FLOOR" --schema "$S" --threads 2 "$J"
measure $WL "verdict check --schema" "$VERDICT" check --schema "$S" --format jsonl --color never "$J"
measure $WL "verdict check --schema -q" "$VERDICT" check --schema "$S" --format jsonl -q --color never "$J"
have "$SMJ" && measure $WL "@sourcemeta/jsonschema validate --continue" "$SMJ" validate "$S" "$J" --continue
# a run is ~0.1 s here: more rounds, so the median is not one moment of the machine's mood
run_queue $WL "$SHORT_RUNS"
fi

# 5. validator mode on the one-file-per-proposal folder
WL="validate-files"
if want $WL; then
measure $WL "floor 2 threads (folder)" "$FLOOR" --schema "$S" --threads 2 "$D"
measure $WL "verdict check --schema" "$VERDICT" check --schema "$S" --format jsonl --color never "$D"
measure $WL "verdict check --schema -q" "$VERDICT" check --schema "$S" --format jsonl -q --color never "$D"
have "$CJS" && measure $WL "jsonschema-cli" "$(PER_FILE_FLAG=-i argv_wrapper jsonschema-cli "$CJS" validate "$S")"
have "$BOON" && measure $WL "boon" "$(argv_wrapper boon "$BOON" "$S")"
have "$CHK" && measure $WL "check-jsonschema" "$(argv_wrapper check-jsonschema "$CHK" --schemafile "$S")"
have "$AJV" && measure $WL "ajv-cli (2020-12, --all-errors)" bash -c "cd '$WORK' && exec '$AJV' validate --spec=draft2020 --all-errors --errors=line -c ajv-formats -s '$S' -d 'proposals/*.json'"
have "$SMJ" && measure $WL "@sourcemeta/jsonschema validate --continue (folder)" "$SMJ" validate "$S" "$D" --continue
run_queue $WL
fi

# 6. the full pipeline on the M-record capture log
WL="pipeline"
if want $WL; then
measure $WL "floor parse-only 1 thread"  "$FLOOR" --parse-only --threads 1 "$L"
measure $WL "floor parse-only 2 threads" "$FLOOR" --parse-only --threads 2 "$L"
measure $WL "verdict check --format jsonl" "$VERDICT" check --format jsonl --color never "$W"
measure $WL "verdict check --format jsonl -q" "$VERDICT" check --format jsonl -q --color never "$W"
measure $WL "verdict check (human)" "$VERDICT" check --color never "$W"
run_queue $WL
fi

# 6a. the TUI against the log viewers (bench/viewers.py; not in the default WORKLOADS): each
# tool in tmux on the M-record log, interleaved over VIEWER_ROUNDS rounds (default 1)
if want viewers; then
  bash "$BENCH/install-peers.sh" viewers >&2
  say "viewers: verdict, lnav, jless, fx, visidata on $L"
  PATH="$TOOLS/cargo/bin:$TOOLS/npm/node_modules/.bin:$TOOLS/vd-venv/bin:$PATH" \
    python3 "$BENCH/viewers.py" --workspace "$W" --verdict "$VERDICT" --rounds "${VIEWER_ROUNDS:-1}" \
    --json "$WORK/viewers.json" > "$WORK/viewers.md" || say "viewers: the driver reported a failure"
  mkdir -p "$BENCH/results"
  { echo "# viewers, $DATE, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cores"; echo
    cat "$WORK/viewers.md"; } > "$BENCH/results/$DATE-viewers.md"
  say "wrote $BENCH/results/$DATE-viewers.md"
fi

# 6b. watch latency (after the timed runs, so its 100,000 files do not disturb them)
WATCH_NOTE=""
if [ "${SKIP_WATCH:-0}" = 1 ]; then WATCH_NOTE="skipped (SKIP_WATCH=1)"; else run_watch; fi

# 7. versions and the report
VERS="$WORK/versions.txt"
{
  echo "verdict: $("$VERDICT" --version 2>&1 | head -1) (git $(git -C "$ROOT" rev-parse --short HEAD))"
  echo "rustc: $(rustc --version)"
  echo "floor: jsonschema $(grep -A1 'name = "jsonschema"' "$BENCH/floor/Cargo.lock" | sed -n 's/version = "\(.*\)"/\1/p'), serde_json $(grep -A1 'name = "serde_json"' "$BENCH/floor/Cargo.lock" | sed -n 's/version = "\(.*\)"/\1/p')"
  have "$CJS" && echo "jsonschema-cli: $("$CJS" --version 2>&1 | head -1)"
  have "$BOON" && echo "boon: $("$BOON" --version 2>&1 | head -1)"
  have "$CHK" && echo "check-jsonschema: $("$CHK" --version 2>&1 | head -1)"
  have "$AJV" && echo "ajv-cli: $(node -p "require('$TOOLS/npm/node_modules/ajv-cli/package.json').version") (ajv $(node -p "require('$TOOLS/npm/node_modules/ajv/package.json').version"), ajv-formats $(node -p "require('$TOOLS/npm/node_modules/ajv-formats/package.json').version"))"
  have "$SMJ" && echo "@sourcemeta/jsonschema: $("$SMJ" --version 2>&1 | head -1)"
  echo "node: $(node --version 2>&1), python: $(python3 --version 2>&1)"
} > "$VERS"

SUFFIX=""
[ "$N" = 100000 ] && [ "$M" = 1000000 ] || SUFFIX="-size${N}x${M}"
[ -n "${NAME:-}" ] && SUFFIX="$SUFFIX-$NAME"
OUT="$BENCH/results/$DATE$SUFFIX.md"
mkdir -p "$BENCH/results"
python3 "$BENCH/report.py" --raw "$RAW" --notes "$NOTES" --versions "$VERS" --gen "$WORK/gen.out" \
  --install "$TOOLS/install-status.txt" --n "$N" --m "$M" --runs "$RUNS" --short-runs "$SHORT_RUNS" --label "${LABEL:-}" \
  --watch "$WATCH_JSON" --watch-note "$WATCH_NOTE" > "$OUT"
say "wrote $OUT"
[ "${KEEP:-0}" = 1 ] && say "workloads kept in $WORK" || rm -rf "$WORK"

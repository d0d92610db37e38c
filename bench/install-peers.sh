#!/usr/bin/env bash
# Installs the peer validators into bench/.tools/ (gitignored). Idempotent: a peer already
# installed is skipped. A peer that fails to install is logged to bench/.tools/install.log and
# recorded as "not installed" in the results; it never aborts the run.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
TOOLS="$HERE/.tools"
mkdir -p "$TOOLS"
LOG="$TOOLS/install.log"
status() { echo "$1: $2" >> "$TOOLS/install-status.txt"; echo "[install] $1: $2" >&2; }
: > "$TOOLS/install-status.txt"

# hyperfine (optional; run.sh falls back to /usr/bin/time -v)
if ! command -v hyperfine >/dev/null; then
  (apt-get install -y hyperfine >>"$LOG" 2>&1 || { apt-get update >>"$LOG" 2>&1 && apt-get install -y hyperfine >>"$LOG" 2>&1; }) \
    && status hyperfine ok || status hyperfine "failed (see install.log); using /usr/bin/time"
fi

inst_cargo() { # crate
  if [ -n "$(ls "$TOOLS/cargo/bin" 2>/dev/null | grep -i "${2:-$1}")" ]; then status "$1" "already installed"; return; fi
  if cargo install --locked --root "$TOOLS/cargo" "$1" >>"$LOG" 2>&1 || cargo install --root "$TOOLS/cargo" "$1" >>"$LOG" 2>&1; then
    status "$1" ok
  else status "$1" "FAILED: $(grep -m1 -E '^error' "$LOG" | tail -1)"; fi
}
inst_pip() {
  if [ -x "$TOOLS/venv/bin/check-jsonschema" ]; then status check-jsonschema "already installed"; return; fi
  if { python3 -m venv "$TOOLS/venv" && "$TOOLS/venv/bin/pip" install -q check-jsonschema; } >>"$LOG" 2>&1; then
    status check-jsonschema ok; else status check-jsonschema "FAILED (see install.log)"; fi
}
inst_npm() {
  mkdir -p "$TOOLS/npm"
  if [ -x "$TOOLS/npm/node_modules/.bin/ajv" ] && [ -x "$TOOLS/npm/node_modules/.bin/jsonschema" ]; then status npm "already installed"; return; fi
  if (cd "$TOOLS/npm" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund ajv-cli ajv-formats @sourcemeta/jsonschema) >>"$LOG" 2>&1; then
    status "ajv-cli+@sourcemeta/jsonschema" ok; else status "ajv-cli+@sourcemeta/jsonschema" "FAILED (see install.log)"; fi
}

# `install-peers.sh viewers`: the log viewers of bench/viewers.py instead (issue 19 item 4):
# tmux and lnav from Debian, jless from crates.io, visidata from PyPI (its own venv), fx from npm
if [ "${1:-}" = viewers ]; then
  for p in tmux lnav; do
    command -v "$p" >/dev/null && { status "$p" "already installed"; continue; }
    (apt-get install -y "$p" >>"$LOG" 2>&1 || { apt-get update >>"$LOG" 2>&1 && apt-get install -y "$p" >>"$LOG" 2>&1; }) \
      && status "$p" ok || status "$p" "FAILED (see install.log)"
  done
  if [ -x "$TOOLS/vd-venv/bin/vd" ]; then status visidata "already installed"
  elif { python3 -m venv "$TOOLS/vd-venv" && "$TOOLS/vd-venv/bin/pip" install -q visidata; } >>"$LOG" 2>&1; then
    status visidata ok; else status visidata "FAILED (see install.log)"; fi
  mkdir -p "$TOOLS/npm"
  if [ -x "$TOOLS/npm/node_modules/.bin/fx" ]; then status fx "already installed"
  elif (cd "$TOOLS/npm" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund fx) >>"$LOG" 2>&1; then
    status fx ok; else status fx "FAILED (see install.log)"; fi
  # jless links libxcb's render, shape and xfixes libraries (its clipboard): their -dev
  # packages first, or its link fails ("unable to find library -lxcb-render")
  if ! cargo install --list --root "$TOOLS/cargo" 2>/dev/null | grep -q '^jless '; then
    apt-get install -y libxcb-render0-dev libxcb-shape0-dev libxcb-xfixes0-dev >>"$LOG" 2>&1 ||
      { apt-get update >>"$LOG" 2>&1 &&
        apt-get install -y libxcb-render0-dev libxcb-shape0-dev libxcb-xfixes0-dev >>"$LOG" 2>&1; }
  fi
  inst_cargo jless jless
  cat "$TOOLS/install-status.txt"
  exit 0
fi

inst_pip &
inst_npm &
inst_cargo jsonschema-cli jsonschema
inst_cargo boon-cli boon
wait
cat "$TOOLS/install-status.txt"

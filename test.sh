#!/usr/bin/env bash
# Every test of verdict: the README's test command (README.md, "Quick start").
#   1. `cargo test --locked`: the Rust tests (unit, integration, the JSON-Schema-Test-Suite).
#   2. The Python package's tests (docs/python.md#tests): the wheel built from the artifacts
#      step 1 built (dev profile), installed with pytest, pyarrow, pandas and pyspark into a
#      virtualenv kept in the target folder (`target/python-venv`, made on the first run),
#      then `pytest python/tests`, Spark in local[2] mode. Spark needs a JRE: when `java` is
#      missing, Debian's headless one is installed (apt-get; as root or through sudo).
# `./test.sh --rust` runs step 1 only. Arguments after `--` go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")"
rust_only=0
cargo_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rust) rust_only=1 ;;
    --) shift; cargo_args=("$@"); break ;;
    *) echo "usage: ./test.sh [--rust] [-- CARGO_TEST_ARGS...]" >&2; exit 2 ;;
  esac
  shift
done
echo "== cargo test"
cargo test --locked "${cargo_args[@]}"
[ "$rust_only" = 1 ] && exit 0

echo "== python: wheel and tests"
target="${CARGO_TARGET_DIR:-$PWD/target}"
if ! command -v java >/dev/null 2>&1; then
  echo "java is missing: installing Debian's headless JRE (openjdk-17-jre-headless)" >&2
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless
fi
venv="$target/python-venv"
# (re)made when missing or when it does not run: a venv's scripts name its folder in their
# first line, so one copied with a target folder from another checkout is broken
if ! "$venv/bin/maturin" --version >/dev/null 2>&1 || ! "$venv/bin/pytest" --version >/dev/null 2>&1 \
  || ! "$venv/bin/pip" --version >/dev/null 2>&1; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check maturin pytest pyarrow 'pandas<3' pyspark
fi
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
(cd python && "$venv/bin/maturin" build --locked --quiet --out "$wheels") || {
  echo "the wheel did not build; the disk where it builds and /tmp:" >&2
  df -Ph "$target" /tmp >&2
  exit 1
}
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/verdict-*.whl
# from a folder outside python/, so the installed wheel is imported, not the source tree
repo="$PWD"
(cd "$wheels" && PYSPARK_PYTHON="$venv/bin/python" VERDICT_BIN="$target/debug/verdict" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/python/tests")

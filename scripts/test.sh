#!/usr/bin/env bash
# Set up (first run only), install the browser the real-browser test drives, and run the whole suite.
# Extra arguments go to pytest, e.g. scripts/test.sh -k dataset
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
if ! command -v chromium >/dev/null 2>&1; then
  echo "==> installing Debian's chromium for the real-browser test"
  SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
    || echo "    could not install chromium: the browser test will fail and say so" >&2
fi
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "==> installing Debian's postgresql for the label store's server tests"
  SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null \
    || echo "    could not install postgresql: the PostgreSQL tests will skip and say why" >&2
fi
# the real-model tier (tests/real_model) fails rather than skips when the local model is missing here
export CONFLICTLENS_REAL_MODEL=required
exec .venv/bin/python -m pytest "$@"

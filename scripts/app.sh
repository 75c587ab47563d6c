#!/usr/bin/env bash
# Set up (first run only) and open the ConflictLens dashboard on the bundled sample data.
# Extra arguments go to `streamlit run`, e.g. scripts/app.sh --server.port 8600
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
port="${PORT:-8501}"
echo "==> ConflictLens on http://localhost:${port}  (Ctrl+C to stop)"
exec .venv/bin/python -m streamlit run app.py --server.port "$port" "$@"

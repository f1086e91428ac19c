#!/usr/bin/env bash
# Install (if needed) and run the whole test suite, offline. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --tests
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
# --durations=20: the twenty slowest tests, printed at the end.
# The fast tier: bash scripts/test.sh -m "not slow" (docs/architecture.md, "Tests").
exec .venv/bin/python -m pytest -q --durations=20 "$@"

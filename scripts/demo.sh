#!/usr/bin/env bash
# Install (if needed) and play a small offline tournament: the embedded local LLM
# (SmolLM2-135M via llama.cpp) against the embedding bot, tracked in MLflow, then a report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
. .venv/bin/activate
impostor sweep configs/demo.yaml
impostor report --experiment impostor-demo --out out/demo-report --bootstrap-reps 2000
echo
echo "Inspect logs:   logs/sweeps/demo   (browse: .venv/bin/inspect view --log-dir logs/sweeps/demo)"
echo "MLflow runs:    mlruns/     (browse: LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/mlflow ui --backend-store-uri sqlite:///mlruns/mlflow.db)"
echo "Report:         out/demo-report/report.html"

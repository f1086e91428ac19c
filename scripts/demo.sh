#!/usr/bin/env bash
# Install (if needed), then the README's demo: a tournament of the three baseline bots
# (configs/demo.yaml: 288 games in 36 experiments, all five modes, two difficulties),
# two games of the embedded local LLM, SmolLM2-135M via llama.cpp, against the embedding
# bot (configs/demo-llm.yaml), each experiment an MLflow run, then the report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
. .venv/bin/activate
SECONDS=0
# The bots' games are not written as MLflow traces: each experiment's trace writer is a
# process of ~2.5 s of CPU, as much as the 36 experiments themselves (docs/tracking.md);
# their transcripts are in the Inspect logs. The LLM's games are traced.
IMPOSTOR_MLFLOW_TRACES=0 impostor sweep configs/demo.yaml
impostor sweep configs/demo-llm.yaml
impostor report --experiment impostor-demo --out out/demo-report --bootstrap-reps 2000
echo
echo "Demo done in ${SECONDS} s (after the install)."
echo "Report:         out/demo-report/report.html (tables, figures, LaTeX: out/demo-report/)"
echo "Inspect logs:   logs/sweeps/demo, logs/sweeps/demo-llm   (browse: .venv/bin/inspect view --log-dir logs/sweeps)"
echo "MLflow runs:    experiments impostor-demo and impostor-demo-llm in mlruns/"
echo "                (browse: LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/mlflow ui --backend-store-uri sqlite:///mlruns/mlflow.db)"

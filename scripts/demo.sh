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
# Every game is an MLflow trace (written in bulk at each run's end, ~6% of an instant
# bot sweep: benchmarks/RESULTS.md "Traces"); the report is also logged as a run of
# impostor-demo (--log-run), so the MLflow UI shows the ratings beside the experiments.
impostor sweep configs/demo.yaml
impostor sweep configs/demo-llm.yaml
# The report names each table as it starts; the line of rows and seconds after each goes to
# out/demo-report.log only (with everything else it printed), so the demo stays under 150 lines.
mkdir -p out
impostor report --experiment impostor-demo --out out/demo-report --bootstrap-reps 2000 --log-run 2>&1 \
  | tee out/demo-report.log | grep --line-buffered -v -E '^impostor report:       [A-Za-z0-9_]+: [0-9]+ rows in '
echo
echo "Demo done in ${SECONDS} s (after the install)."
echo "Report:         out/demo-report/report.html (tables, figures, LaTeX: out/demo-report/; its log: out/demo-report.log)"
echo "Inspect logs:   logs/sweeps/demo, logs/sweeps/demo-llm   (browse: .venv/bin/inspect view --log-dir logs/sweeps)"
echo "MLflow runs:    experiments impostor-demo and impostor-demo-llm in mlruns/, each game a trace,"
echo "                the report as the run tagged impostor.kind=report"
echo "                (browse: LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/mlflow ui --backend-store-uri sqlite:///mlruns/mlflow.db)"

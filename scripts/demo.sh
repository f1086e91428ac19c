#!/usr/bin/env bash
# Install (if needed), then the README's demo: a tournament of the three baseline bots
# (configs/demo.yaml: 288 games in 36 experiments, all five modes, two difficulties),
# two games of the embedded local LLM, SmolLM2-135M via llama.cpp, against the embedding
# bot (configs/demo-llm.yaml), each experiment an MLflow run, then the report.
# The console shows each step, its result and where to look; everything the steps print
# (the sweeps' plans and links, the report's line per table) is in out/demo-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
. .venv/bin/activate
SECONDS=0
LOGS=out/demo-logs
mkdir -p "$LOGS"
# What reaches the console (extended regular expressions; tests/test_demo.py checks them against
# what the sweep and the report really print): a sweep's progress lines and its summary, the
# report's totals; anything that looks like an error, always.
ALWAYS='error:|Error:|ERROR|Traceback|WARNING'
SWEEP_SHOWN="^progress: |^Sweep '|^  (winners|invalid|tokens|wall time)|$ALWAYS"
REPORT_SHOWN="^impostor report: ([0-9,]+ games|done in|paper( numbers)?: |logged as)|$ALWAYS"

# shown NAME PATTERN COMMAND...: COMMAND's whole output into out/demo-logs/NAME.log, and its
# lines matching PATTERN on the console; if it fails, its last lines.
shown() {
  local log=$LOGS/$1.log pattern=$2 rc=0
  shift 2
  "$@" 2>&1 | tee "$log" | { grep --line-buffered -E "$pattern" || true; } | sed -u 's/^/    /' || rc=$?
  if [ "$rc" != 0 ]; then
    echo "[demo] FAILED (exit $rc); the last lines of $log:"
    tail -n 15 "$log" | sed 's/^/    /'
    exit "$rc"
  fi
}

# Every game is an MLflow trace (written in bulk at each run's end, ~6% of an instant
# bot sweep: benchmarks/RESULTS.md "Traces"); the report is also logged as a run of
# impostor-demo (--log-run), so the MLflow UI shows the ratings beside the experiments.
echo "[demo] 1/3 the three baseline bots, 288 games in 36 experiments (configs/demo.yaml)"
shown sweep-demo "$SWEEP_SHOWN" impostor sweep demo
echo "[demo] 2/3 SmolLM2-135M (llama.cpp on the CPU) against the embedding bot, 2 games (configs/demo-llm.yaml)"
shown sweep-demo-llm "$SWEEP_SHOWN" impostor sweep demo-llm
echo "[demo] 3/3 the report of the tournament (tables, figures, paper/paper.pdf)"
shown report "$REPORT_SHOWN" \
  impostor report --experiment impostor-demo --out out/demo-report --bootstrap-reps 2000 --log-run
echo
echo "Demo done in ${SECONDS} s (after the install)."
echo "Report:         out/demo-report/report.html (tables, figures, LaTeX: out/demo-report/)"
echo "Logs:           out/demo-logs/ (all the sweeps and the report printed), .cache/install.log (pip, apt)"
echo "Inspect logs:   logs/sweeps/demo, logs/sweeps/demo-llm   (browse: .venv/bin/inspect view --log-dir logs/sweeps)"
echo "MLflow runs:    experiments impostor-demo and impostor-demo-llm in mlruns/, each game a trace,"
echo "                the report as the run tagged impostor.kind=report"
echo "                (browse: LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/mlflow ui --backend-store-uri sqlite:///mlruns/mlflow.db)"

#!/usr/bin/env bash
# The report on one export, two commits side by side (before/after timings and peaks).
#
#   bash benchmarks/report_side_by_side.sh EXPORT BEFORE_COMMIT [ROUNDS]
#
# Checks BEFORE_COMMIT out into a temporary worktree, then runs `impostor report --seed 0
# --bootstrap-reps 10000 --no-pdf` on EXPORT ROUNDS times (default 2) alternately with that code and
# with this checkout's, each under /usr/bin/time (wall, user, sys, peak RSS), printing the load
# at each start; at the end compares the last two bundles with compare_bundles.py. Run it on a
# quiet machine: the numbers are only comparable side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
export_dir=$1 before=$2 rounds=${3:-2}
here=$(pwd) tmp=$(mktemp -d)
git worktree add -q --detach "$tmp/before" "$before"
trap 'git worktree remove --force "$tmp/before"; rm -rf "$tmp"' EXIT
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
for _ in $(seq "$rounds"); do
  for run in before after; do
    code=$here; [ "$run" = before ] && code=$tmp/before
    echo "== $run ($(git -C "$code" rev-parse --short HEAD)), load $(cut -d' ' -f1-3 /proc/loadavg)"
    rm -rf "$tmp/out_$run"
    (cd "$code" && PYTHONPATH=$code /usr/bin/time -f "$run: wall %e s, user %U s, sys %S s, peak %M KiB" \
      "$here/.venv/bin/python" -m impostor_bench.cli report --parquet "$export_dir" --out "$tmp/out_$run" --seed 0 \
      --bootstrap-reps 10000 --no-pdf 2>&1 | grep -E "^(before|after):|done in")
  done
done
"$here/.venv/bin/python" benchmarks/compare_bundles.py "$tmp/out_before" "$tmp/out_after"

"""Calibration of the cross-model correlation interval (appendix_m's corr_* rows) at nine models.

Runs ``impostor_bench.analysis.calibration_corr`` on the simulated paper-like design (nine models,
five modes, four tiers): a null (the models' true values uncorrelated) and a planted strong
correlation (-0.85 on the logit levels, about -0.88 in the truth), each ``--sims`` runs, and writes
``benchmarks/model_corr_calibration.csv`` (one row per scenario and design: coverage, bias of r, mean
width, the i.i.d. Fisher-z and plain basic-bootstrap intervals' coverage and width) with the machine
and load in ``benchmarks/model_corr_calibration.md``; its rows replace the ``model_correlations`` rows
of ``benchmarks/calibration.csv`` (the inference registry's evidence: tests/analysis/stats/test_inference_registry.py).

    nice -n 10 .venv/bin/python benchmarks/model_corr_calibration.py --sims 400
    .venv/bin/python benchmarks/model_corr_calibration.py --register   # only rewrite calibration.csv's rows
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from impostor_bench.analysis.calibration_corr import Scenario, design_units, run_scenario, summarise
from impostor_bench.analysis.stats.model_corr import METHOD

HERE = Path(__file__).resolve().parent
SCENARIOS = (Scenario("null", 0.0), Scenario("strong", -0.85))


def register(res: pd.DataFrame, path: Path = HERE / "calibration.csv") -> None:
    """Replace the model_correlations rows of the calibration summary with this study's."""
    cal = pd.read_csv(path)
    rows = pd.DataFrame({
        "table": "model_correlations", "quantity": "corr", "method": METHOD[:80],
        "scenario": "corr_" + res["scenario"], "experiments": res["design"].str.split("x").str[0].astype(int),
        "games": res["design"].str.split("x").str[1].astype(int), "reps": res["sims"], "n_intervals": res["sims"],
        "coverage": res["coverage"], "n_pvalues": 0, "target_coverage": 0.9, "meets": res["coverage"] >= 0.9,
        "coverage_mc_se": (res["coverage"] * (1 - res["coverage"]) / res["sims"]) ** 0.5, "bias": res["bias_r"],
        "truth": res["r_true"]})
    rows = rows.reindex(columns=cal.columns)
    # the other rows as written (a pandas round trip would reformat every number of the file)
    kept = [ln for ln in path.read_text().splitlines() if not ln.startswith("model_correlations,")]
    path.write_text("\n".join(kept + rows.to_csv(index=False, header=False).splitlines()) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=400)
    ap.add_argument("--designs", default="120x40,756x24", help="experiments x games per experiment, comma-separated")
    ap.add_argument("--reps", type=int, default=999, help="bootstrap replicates per interval")
    ap.add_argument("--register", action="store_true", help="only copy model_corr_calibration.csv into calibration.csv")
    a = ap.parse_args()
    if a.register:
        register(pd.read_csv(HERE / "model_corr_calibration.csv", keep_default_na=False))  # "null" is a scenario
        return
    load0, t0 = os.getloadavg()[0], time.time()
    out = []
    for k, d in enumerate(a.designs.split(",")):
        e, g = (int(v) for v in d.split("x"))
        u = design_units(e, g, seed=1, reps=a.reps)
        runs = pd.concat([run_scenario(u, sc, a.sims, seed=10 * k + j) for j, sc in enumerate(SCENARIOS)])
        s = summarise(runs)
        s.insert(0, "design", d)
        out.append(s)
        print(s.round(3).to_string(), flush=True)
    res = pd.concat(out, ignore_index=True)
    res.to_csv(HERE / "model_corr_calibration.csv", index=False, float_format="%.4f")
    register(res)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    (HERE / "model_corr_calibration.md").write_text(
        f"# Cross-model correlation interval: calibration\n\n`python benchmarks/model_corr_calibration.py "
        f"--sims {a.sims} --designs {a.designs} --reps {a.reps}` ({when}), {time.time() - t0:.0f} s.\n\n"
        + res.round(3).to_markdown(index=False) + "\n\n"
        f"Machine: {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, Linux "
        f"{platform.release()}; 1-minute load {load0:.1f} before / {os.getloadavg()[0]:.1f} after (shared machine).\n")


if __name__ == "__main__":
    main()

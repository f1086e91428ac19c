"""Calibration of the per-condition tables (``condition_results``, ``ranking_persistence``) on
simulated studies with planted conditions (``impostor_bench.analysis.sim.conditions``).

Design: five models whose impostor strengths are evenly spaced (0.5 logit apart, equal
detection, so opponents do not reorder them), homogeneous games, four tiers, three languages
(en = reference, es with OR 0.8, de with OR 1.2), ``--replicates`` experiments per model x tier
x language, ``--games`` games each, with the calibration matrix's strong dependence (word-pair
SD 1.0, experiment SD 0.5). Scenarios:

* ``equal_rankings``: rankings equal across conditions (main effects only): size of the reversal test
  (``p_reversal < alpha``), coverage of tau (truth 1);
* ``reversal``: as equal_rankings, plus models m1 and m3 swap their impostor strength in ``de``
  (true tau 0.4 for de; truly reversed pairs m1-m3, gap 1.0 logit, and m1-m2, m2-m3, gap 0.5):
  power to name the planted pair m1 <> m3, share of the true reversals named, false reversals
  (a pair named whose expected order does not reverse), tau coverage.

Truth of every interval is the estimator applied to the design's expected outcomes (each game's
``p_design``: its win probability averaged over the experiment effect and speaking position):
the rate per model and condition, its rank, the tau between the true rankings; never the
Monte-Carlo mean of the estimates.

    nice -n 10 .venv/bin/python benchmarks/calibration_persistence.py --runs 200 \\
        --out benchmarks/calibration_persistence.csv --calibration benchmarks/calibration.csv
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from typing import Any

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.conditions import ConditionPlan
from impostor_bench.analysis.sim.effects import SimModel
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.persistence_tests import kendall_tau

MODELS = tuple(SimModel(f"m{i}", odds=float(np.exp(0.5 * (i - 2))), det=0.6, self_decl=0.2) for i in range(5))
LEVELS = ("en", "es", "de")
MAIN = {"es": 0.8, "de": 1.2}
SCENARIOS = {"equal_rankings": None, "reversal": ("m1", "m3", "de")}
PLANTED = "m1 <> m3"
STRONG: dict[str, Any] = dict(pair_effect_sd=1.0, experiment_effect_sd=0.5)


def simulate(scenario: str, replicates: int, games: int, seed: int, design_seed: int = 1):
    plan = ConditionPlan("language", LEVELS, MAIN, reversal=SCENARIOS[scenario])
    E = len(MODELS) * 4 * replicates * len(LEVELS)
    return simulate_games(E, games, seed=seed, design_seed=design_seed, models=MODELS, modes=["homogeneous"],
                          size_or_per_10x=1.0, opponent_or_per_10pp=1.0, conditions=plan, **STRONG)


def truths(games: pd.DataFrame, players: pd.DataFrame) -> dict:
    """Per (measure, condition, model): the design's expected rate (%) and rank; per (measure, condition):
    the tau between the true rankings and the truly reversed pairs."""
    p = games.set_index("game_id")["p_design"]
    lang = games.set_index("game_id")["language"]
    imp = pd.DataFrame({"c": games["language"].to_numpy(), "m": games["impostor_model"].to_numpy(),
                        "r": games["p_design"].to_numpy()}).groupby(["c", "m"])["r"].mean()
    maj_rows = players[players["role"] == "majority"]
    maj = pd.DataFrame({"c": lang.reindex(maj_rows["game_id"]).to_numpy(), "m": maj_rows["model"].to_numpy(),
                        "r": 1 - p.reindex(maj_rows["game_id"]).to_numpy()}).groupby(["c", "m"])["r"].mean()
    out: dict = {"rate": {}, "rank": {}, "tau": {}, "reversed": {}}
    for measure, s in (("imp_win", imp), ("maj_win", maj)):
        for c in LEVELS:
            v = s.loc[c]
            rank = (-v).rank(method="min")
            for mdl in v.index:
                out["rate"][(measure, c, mdl)] = 100 * v[mdl]
                out["rank"][(measure, c, mdl)] = rank[mdl]
        ref = s.loc[LEVELS[0]]
        for c in LEVELS[1:]:
            here = s.loc[c].reindex(ref.index)
            out["tau"][(measure, c)] = float(kendall_tau(here.to_numpy(), ref.to_numpy())[0])
            names = list(ref.index)
            out["reversed"][(measure, c)] = {f"{a} <> {b}" for i, a in enumerate(names) for b in names[i + 1:]
                                             if np.sign(here[a] - here[b]) * np.sign(ref[a] - ref[b]) < 0}
    return out


def run_once(scenario: str, replicates: int, games: int, rep: int, config: StatsConfig) -> list[dict]:
    g, pl, models = simulate(scenario, replicates, games, seed=1000 + rep)
    data = AnalysisData(games=g, players=pl, models=models)
    res = TABLES["condition_results"](data, config)
    per = TABLES["ranking_persistence"](data, config)
    t = truths(g, pl)
    rows = []
    for r in res.itertuples():
        for measure, short in (("imp_win", "imp"), ("maj_win", "maj")):
            truth = t["rate"][(measure, r.condition, r.model)]
            lo, hi = getattr(r, f"{measure}_ci_low"), getattr(r, f"{measure}_ci_high")
            rows.append(dict(table="condition_results", quantity=measure, scenario=scenario, rep=rep,
                             condition=r.condition, covered=lo <= truth <= hi if np.isfinite(lo) else np.nan,
                             width=hi - lo, estimate=getattr(r, f"{measure}_pct"), truth=truth))
            rt = t["rank"][(measure, r.condition, r.model)]
            rlo, rhi = getattr(r, f"{short}_rank_low"), getattr(r, f"{short}_rank_high")
            rows.append(dict(table="condition_results", quantity=f"{short}_rank", scenario=scenario, rep=rep,
                             condition=r.condition, covered=rlo <= rt <= rhi if np.isfinite(rlo) else np.nan,
                             width=rhi - rlo, estimate=getattr(r, f"{short}_rank"), truth=rt))
    for r in per.itertuples():
        truth = t["tau"][(r.measure, r.condition)]
        true_rev = t["reversed"][(r.measure, r.condition)]
        found = {x.strip() for x in str(r.reversed).split(";") if x.strip() and str(r.reversed) != "nan"}
        rows.append(dict(table="ranking_persistence", quantity="tau", scenario=scenario, rep=rep, condition=r.condition,
                         measure=r.measure, covered=r.tau_ci_low <= truth <= r.tau_ci_high, width=r.tau_ci_high - r.tau_ci_low,
                         estimate=r.kendall_tau, truth=truth))
        rows.append(dict(table="ranking_persistence", quantity="reversal", scenario=scenario, rep=rep,
                         condition=r.condition, measure=r.measure, p=r.p_reversal,
                         any_rejected=bool(len(found)), false_reversal=bool(found - true_rev),
                         planted_found=PLANTED in found, true_share=len(found & true_rev) / len(true_rev)
                         if true_rev else np.nan, n_true=len(true_rev), found="; ".join(sorted(found))))
    return rows


def summarise(raw: pd.DataFrame, experiments: int, games: int, runs: int, alpha: float) -> pd.DataFrame:
    """One calibration row per (table, quantity, scenario) in benchmarks/calibration.csv's columns."""
    out = []
    for (tbl, q, sc), part in raw.groupby(["table", "quantity", "scenario"], sort=False):
        row = dict(table=tbl, quantity=q, scenario=sc, experiments=experiments, games=games, reps=runs,
                   target_size=0.08, target_coverage=0.90)
        if q == "reversal":
            null_rows = part[part["n_true"] == 0]
            row.update(method="intersection-union t-tests per pair, Holm over the condition's pairs",
                       n_pvalues=len(part), rejection_rate=float(part["any_rejected"].mean()),
                       size=float(null_rows["any_rejected"].mean()) if len(null_rows) else np.nan,
                       false_reversal_rate=float(part["false_reversal"].mean()),
                       power=float(part.loc[part["n_true"] > 0, "planted_found"].mean()) if (part["n_true"] > 0).any() else np.nan,
                       true_share=float(part["true_share"].mean()) if (part["n_true"] > 0).any() else np.nan,
                       truth="design: pairs whose expected rates order differently from the reference's")
            row["meets"] = bool(row["false_reversal_rate"] <= 0.08)
        else:
            cov = part["covered"].dropna().astype(float)
            row.update(method={"tau": "design bootstrap (wild by experiment), bias-corrected percentile (mid-p)",
                               "imp_win": "design-logit residuals by experiment, CR1, logit, t(G-1)",
                               "maj_win": "design-logit residuals by experiment, CR1, logit, t(G-1)"}.get(
                                   q, "simultaneous: pairwise t-tests, Holm"),
                       n_intervals=len(cov), coverage=float(cov.mean()) if len(cov) else np.nan,
                       coverage_mc_se=float(np.sqrt(cov.mean() * (1 - cov.mean()) / max(len(cov), 1))),
                       bias=float((part["estimate"] - part["truth"]).mean()),
                       bias_sd=float((part["estimate"] - part["truth"]).mean() / part["estimate"].std())
                       if part["estimate"].std() > 0 else np.nan,
                       mean_width=float(part["width"].mean()),
                       truth="design: the estimator on the expected outcomes (p_design)")
            row["meets"] = bool(row["coverage"] >= 0.90)
        out.append(row)
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--replicates", type=int, default=4, help="experiments per model x tier x language")
    ap.add_argument("--games", type=int, default=25)
    ap.add_argument("--bootstrap-reps", type=int, default=1000)
    ap.add_argument("--scenarios", default="equal_rankings,reversal")
    ap.add_argument("--out", help="summary CSV")
    ap.add_argument("--raw", help="per-run CSV")
    ap.add_argument("--calibration", help="benchmarks/calibration.csv: replace this benchmark's rows there")
    a = ap.parse_args(argv)
    config = StatsConfig(bootstrap_reps=a.bootstrap_reps, strict=True)
    t0 = time.perf_counter()
    rows = []
    for sc in a.scenarios.split(","):
        for rep in range(a.runs):
            rows += run_once(sc, a.replicates, a.games, rep, config)
    raw = pd.DataFrame(rows)
    experiments = len(MODELS) * 4 * a.replicates * len(LEVELS)
    summary = summarise(raw, experiments, a.games, a.runs, config.alpha)
    took = time.perf_counter() - t0
    print(f"# {experiments} experiments x {a.games} games, {a.runs} runs per scenario, {took:.0f} s on "
          f"{platform.node()} ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}), {platform.python_version()}")
    print(summary.to_string(index=False))
    if a.raw:
        raw.to_csv(a.raw, index=False)
    if a.out:
        summary.to_csv(a.out, index=False)
    if a.calibration:  # replace this benchmark's lines, leaving every other line as it is written
        with open(a.calibration, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        header = lines[0].split(",")
        kept = [ln for ln in lines if not ln.startswith(("condition_results,", "ranking_persistence,"))]
        add = summary.reindex(columns=header).to_csv(index=False, header=False).splitlines()
        with open(a.calibration, "w", encoding="utf-8") as fh:
            fh.write("\n".join(kept + add) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

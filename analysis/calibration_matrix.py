"""The calibration matrix: size and coverage of every row of ``inference.csv``.

Every entry of :data:`impostor_bench.analysis.stats.inference.SPECS` (a table's p-values or intervals)
is run, through the real table functions and the ``inference`` table, on replicate runs
of simulated designs with the design's real dependence -- word pairs shared across
experiments with strong effects (SD 1.0 on the logit scale) and strong experiment
effects (SD 0.5) -- and summarised per (table, quantity family, method):

* ``global_null``: nine identical models (no model, size, seat, mode, difficulty, opponent
  or position effect): every p-value's null holds, so its rejection rate is its size;
* ``planted``: the paper's effects (models, sizes, seats, modes, tiers, opponents, a
  -1.11 pp position effect): coverage of the intervals of non-null quantities.

Truth of an interval: the design's expected value where it has a closed form (the rates
and marginal ORs, from each game's ``p_design``: its win probability averaged over the
experiment effect and speaking position), else the pseudo-population truth of
``impostor_bench.analysis.calibration_truth`` (the estimator applied to the design's expected
outcomes: the outcome tables and Table 5), else the table run on ``calibration_truth.POOLED_COPIES``
outcome draws of the design pooled into one data set (``pooled_truth``: ballots, text, teams, rounds;
its Monte-Carlo error is ``truth_mc_se``, also in SDs of the estimate, ``truth_mc_se_sd``). A quantity
with no truth (no interval, or a table the pool does not print) reports size, width and SE ratio
but no coverage or bias, and its ``truth`` column says so. (It once took the
Monte-Carlo mean of its own estimates, which made coverage a test of the SE alone and hid
Table 5's attenuation.) ``bias`` is the mean of estimate - truth (log scale for odds ratios),
``bias_sd`` the same in SDs of the estimate over the runs; ``coverage_mc_se`` the Monte-Carlo
SE of the coverage (binomial, as if the intervals were independent).

Scenarios beyond the two above (where a run of the same design makes them): ``missing``
(planted, 10% of games and 5% of experiments lost at random and one model's provider failing
for half of its cross-play experiments), ``strong_pairs`` (planted with word-pair SD 1.5; run
it with few games per experiment, i.e. few pairs per tier: 15 at ``--games 15``), ``interactions``
(planted with mode x model and mode x pair interactions and one model's experiments 4x noisier).

    python -m impostor_bench.analysis.calibration_matrix --experiments 120 --games 40 --reps 200 --out benchmarks/calibration.csv

Targets: size <= 6% and coverage >= 93% at the paper's size (756 x 120);
<= 8% / >= 90% at 120 x 40. The columns of the output say which rows meet them.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from impostor_bench.analysis.calibration_rounds import ROUND_TABLES, run_rounds_once
from impostor_bench.analysis.calibration_rounds import ROUNDS as ROUND_COUNT
from impostor_bench.analysis import calibration_truth as ct
from impostor_bench.analysis.calibration_rounds import SCENARIOS as ROUND_SCENARIOS
from impostor_bench.analysis.calibration_truth import (OUTCOME_TABLES, PSEUDO_POPULATION_TABLES,
                                                        outcome_given_position, outcome_table_truth,
                                                        pooled_truth, pseudo_population_truth)
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.effects import DEFAULT_MODELS, SimModel
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.inference import SPECS, inference_rows
from impostor_bench.analysis.stats.odds import EXTRA_MODE_CONTRASTS
from impostor_bench.analysis.stats.session import Analysis

STRONG = dict(pair_effect_sd=1.0, experiment_effect_sd=0.5)
NULL_MODELS = tuple(SimModel(f"m{i}", "maker", "family", float(10 ** (0.5 + i / 4)), det=0.6, self_decl=0.3)
                    for i in range(9))
SCENARIOS: dict[str, dict[str, Any]] = {  # keyword arguments of simulate_games
    "global_null": dict(models=NULL_MODELS, seat_or=1.0, mode_or=1.0, difficulty_or=1.0, size_or_per_10x=1.0,
                        opponent_or_per_10pp=1.0, position_effect_pp=0.0, **STRONG),
    "planted": dict(**STRONG),
}
#: The global null with a fresh design (word pairs and their effects) in every run: the null of a
#: test whose estimand is over a population of word pairs (difficulty, two-way by pair).
#: With one design the tiers' pairs differ in every run, so there its rejection rate is not a size.
SCENARIOS["fresh_pairs_null"] = SCENARIOS["global_null"]
SCENARIOS["missing"] = SCENARIOS["planted"]
SCENARIOS["strong_pairs"] = dict(pair_effect_sd=1.5, experiment_effect_sd=0.5)
#: Effects no table's additive model fits: mode x model and mode x word-pair interactions (SD 0.5 on
#: the logit), and the first model's experiments 4x noisier than the others' (experiment-effect SD 2.0).
SCENARIOS["interactions"] = dict(**STRONG, mode_model_sd=0.5, mode_pair_sd=0.5,
                                 models=(replace(DEFAULT_MODELS[0], noise=4.0), *DEFAULT_MODELS[1:]))
#: Data lost after play, per scenario: share of games and of experiments lost at random, and the
#: share of one model's cross-play experiments lost to a provider failure (the first model).
MISSING = {"missing": dict(games=0.10, experiments=0.05, provider_failure=0.5)}
FRESH_DESIGN = {"fresh_pairs_null"}
NULLS = {"global_null", "fresh_pairs_null"}
TRUTH_DESIGN, TRUTH_PSEUDO = "design", "pseudo-population"
#: The truth of a row with neither a closed form nor a dedicated pseudo-population truth: its table run
#: on ``calibration_truth.POOLED_COPIES`` outcome draws of the design pooled (``pooled_truth``).
TRUTH_POOLED = "pseudo-population (pooled copies)"
TRUTH_NONE = "none: no closed form and no pseudo-population truth yet (coverage and bias not measured)"
POPULATION_OF_PAIRS = "word pair"  # in the method of a row whose estimand is over a population of pairs
TARGETS = {"paper": (0.06, 0.93), "small": (0.08, 0.90)}


def design_truth(games: pd.DataFrame, players: pd.DataFrame) -> dict[str, float]:
    """Closed-form truths (the design's expected values) keyed by inference ``quantity``."""
    p = games["p_design"].to_numpy(float)
    odds = lambda q: q / (1 - q)  # noqa: E731
    t: dict[str, float] = {}
    model, mode, diff = games["impostor_model"].astype(str), games["mode"].astype(str), games["difficulty"].astype(str)
    for m, q in pd.Series(p).groupby(model.to_numpy()).mean().items():
        t[f"imp_win:{m}"] = q
        t[f"quantity:imp_win_rate:{m}"] = q
    for (m, md), q in pd.Series(p).groupby([model.to_numpy(), mode.to_numpy()]).mean().items():
        t[f"imp_win:{m}/{md}"] = q
    for (m, d), q in pd.Series(p).groupby([model.to_numpy(), diff.to_numpy()]).mean().items():
        t[f"imp_win:{m}/{d}"] = q
    by_mode = pd.Series(p).groupby(mode.to_numpy()).mean()
    for md, q in by_mode.items():
        t[f"p_imp:{md}"] = q
    t["p_imp:ALL"] = t["quantity:overall_imp_win_rate"] = float(p.mean())
    if "homogeneous" in by_mode:
        for md, q in by_mode.items():
            if md != "homogeneous":
                t[f"quantity:{md}_vs_homogeneous_or"] = t[f"or:{md}_vs_homogeneous"] = odds(q) / odds(by_mode["homogeneous"])
    for a, b in EXTRA_MODE_CONTRASTS:
        if a in by_mode and b in by_mode:
            t[f"or:{a}_vs_{b}"] = odds(by_mode[a]) / odds(by_mode[b])
    by_seat = pd.Series(p).groupby(games["impostor_seat"].to_numpy()).mean()
    for s in (1, 2, 3):
        if s in by_seat and 0 in by_seat:
            t[f"or:seat{s}_vs_seat0"] = odds(by_seat[s]) / odds(by_seat[0])
    maj = players[players["role"] == "majority"]
    pg = pd.Series(p, index=games["game_id"].to_numpy())
    q_maj = 1 - pg.reindex(maj["game_id"].to_numpy()).to_numpy()
    for m, q in pd.Series(q_maj).groupby(maj["model"].astype(str).to_numpy()).mean().items():
        t[f"maj_win:{m}"] = q
    return t


def run_once(scenario: str, experiments: int, games: int, rep: int, config: StatsConfig, design_seed: int = 1,
             tables=None):
    """One replicate: simulate, compute the inference table (or only ``tables``' rows), attach truths;
    the round tables' rows come from multi-round games (``impostor_bench.analysis.calibration_rounds``)."""
    # the multi-round simulator has the null and planted scenarios only (no data losses or pair variants)
    rounds = [t for t in (tables or ROUND_TABLES) if t in ROUND_TABLES and scenario in ROUND_SCENARIOS]
    others = None if tables is None else [t for t in tables if t not in ROUND_TABLES]
    parts = []
    if rounds:
        multi = run_rounds_once(scenario, experiments, games, rep, config, design_seed, rounds)
        multi["truth_source"] = None
        fill_pooled(multi, ROUND_SCENARIOS[scenario], experiments, games, design_seed, config, rounds=ROUND_COUNT)
        parts.append(multi)
    if others is None or others:
        parts.insert(0, _run_one_round(scenario, experiments, games, rep, config, design_seed, others))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def lose_data(games: pd.DataFrame, players: pd.DataFrame, rep: int, *, games_share: float = 0.0,
              experiments_share: float = 0.0, provider_failure: float = 0.0):
    """The games (and their players) left after random losses: ``experiments_share`` of the
    experiments and ``games_share`` of the remaining games, and ``provider_failure`` of the
    cross-play experiments of the first model (as impostor or majority) lost to its provider."""
    rng = np.random.default_rng([rep, 52])
    exps = games["experiment_id"].astype(str)
    ids = np.array(sorted(set(exps)), dtype=object)
    lost = set(ids[rng.random(len(ids)) < experiments_share])
    first = sorted(set(games["impostor_model"].astype(str)))[0]
    cross = games[(games["mode"] == "cross_play")]
    with_first = sorted(set(cross["experiment_id"].astype(str)[
        cross["game_id"].isin(players.loc[players["model"].astype(str) == first, "game_id"])]))
    lost |= {e for e in with_first if rng.random() < provider_failure}
    keep = ~exps.isin(lost).to_numpy() & (rng.random(len(games)) >= games_share)
    g = games[keep].reset_index(drop=True)
    return g, players[players["game_id"].isin(set(g["game_id"]))].reset_index(drop=True)


def _run_one_round(scenario: str, experiments: int, games: int, rep: int, config: StatsConfig, design_seed: int,
                   tables):
    g, pl, models = simulate_games(experiments, games, design_seed=design_seed, seed=1000 + rep,
                                   **SCENARIOS[scenario])
    outcome_tables = [t for t in (tables or OUTCOME_TABLES) if t in OUTCOME_TABLES]
    if outcome_tables:  # before any loss: the design's order
        g["p_given_position"] = outcome_given_position(g, SCENARIOS[scenario], experiments, games, design_seed)
    if scenario in MISSING:
        m = MISSING[scenario]
        g, pl = lose_data(g, pl, rep, games_share=m["games"], experiments_share=m["experiments"],
                          provider_failure=m["provider_failure"])
    with Analysis(AnalysisData(games=g, players=pl, models=models), config).batch() as analysis:
        rows = inference_rows(analysis, config, tables)  # one session, the frames fingerprinted once
    truth = design_truth(g, pl)
    rows["truth"] = rows["quantity"].map(truth)
    rows["truth_source"] = rows["truth"].notna().map({True: TRUTH_DESIGN, False: None})
    if PSEUDO_POPULATION_TABLES & set(rows["table"]):
        pseudo = (pseudo_population_truth(SCENARIOS[scenario], experiments, games, design_seed, g, pl)
                  if "opponent_baseline" in set(rows["table"]) else {})
        fill = rows["truth"].isna() & rows["table"].isin(PSEUDO_POPULATION_TABLES)
        rows.loc[fill, "truth"] = rows.loc[fill, "quantity"].map(pseudo)
        if outcome_tables:
            keyed = outcome_table_truth(g, pl, models, config, outcome_tables)
            mine = fill & rows["table"].isin(outcome_tables)
            rows.loc[mine, "truth"] = [keyed.get(k, np.nan) for k in zip(rows.loc[mine, "table"],
                                                                          rows.loc[mine, "quantity"])]
        rows.loc[fill & rows["truth"].notna(), "truth_source"] = TRUTH_PSEUDO
    rows["truth_mc_se"] = np.where(rows["truth"].notna() & (rows["table"] != "opponent_baseline"), 0.0, np.nan)
    fill_pooled(rows, SCENARIOS[scenario], experiments, games, design_seed, config)
    rows["rep"] = rep
    return rows


def fill_pooled(rows: pd.DataFrame, scenario_kwargs: dict, experiments: int, games: int, design_seed: int, config,
                rounds: int | None = None) -> None:
    """Give every interval still without a truth its pooled-copies truth (``calibration_truth.pooled_truth``)
    and that truth's Monte-Carlo SE (``truth_mc_se``; log scale for odds ratios), in place. The copies
    are complete draws of the design: in a scenario with data loss the truth is the complete design's."""
    if "truth_mc_se" not in rows.columns:
        rows["truth_mc_se"] = np.where(rows["truth"].notna(), 0.0, np.nan)
    need = rows["truth"].isna() & rows["ci_low"].notna() & rows["ci_high"].notna()
    tables = sorted(set(rows.loc[need, "table"]) - PSEUDO_POPULATION_TABLES)
    if not tables:
        return
    logs = ratio_keys()
    cal = dict(zip(zip(rows["table"], rows["quantity"]), rows["calibration"]))
    bootstrap_or = lambda t, q: t == "bootstrap" and "_or" in q  # noqa: E731 (as on_log_scale)
    truth = pooled_truth(scenario_kwargs, experiments, games, design_seed, tables, config, rounds=rounds,
                         log_scale=lambda t, q: cal.get((t, q)) in logs or bootstrap_or(t, q))
    mine = need & rows["table"].isin(tables)
    got = [truth.get(k, (np.nan, np.nan)) for k in zip(rows.loc[mine, "table"], rows.loc[mine, "quantity"])]
    rows.loc[mine, "truth"] = [t for t, _ in got]
    rows.loc[mine, "truth_mc_se"] = [se for _, se in got]
    rows.loc[mine & rows["truth"].notna(), "truth_source"] = TRUTH_POOLED


def summarise(records: pd.DataFrame, scenario: str, experiments: int, games: int, alpha: float = 0.05) -> pd.DataFrame:
    """Size / coverage / width per (table, quantity family, method family)."""
    r = records.copy()
    r["family_name"] = r["quantity"].str.split(":", n=1).str[0]
    r["method_family"] = r["method"].str.split(";", n=1).str[0].str.slice(0, 80)
    src = r["truth_source"] if "truth_source" in r.columns else pd.Series(None, index=r.index, dtype=object)
    r["truth_source"] = src.where(src.notna() | r["truth"].isna(), TRUTH_DESIGN)
    log = on_log_scale(r)
    sd = r.groupby(["calibration", "quantity"])["estimate"].transform(lambda v: np.nanstd(v, ddof=1))
    sd_log = r.groupby(["calibration", "quantity"])["estimate"].transform(lambda v: np.nanstd(np.log(v), ddof=1))
    have_ci = r["ci_low"].notna() & r["ci_high"].notna()
    has_truth = r["truth"].notna()
    r["covers"] = np.where(have_ci & has_truth, (r["ci_low"] <= r["truth"]) & (r["truth"] <= r["ci_high"]), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        r["error"] = np.where(has_truth, np.where(log, np.log(r["estimate"]) - np.log(r["truth"]),
                                                  r["estimate"] - r["truth"]), np.nan)
    z = 1.959964
    width = np.where(log, np.log(r["ci_high"]) - np.log(r["ci_low"]), r["ci_high"] - r["ci_low"])
    r["width_ratio"] = np.where(have_ci, width / (2 * z * np.where(log, sd_log, sd)), np.nan)
    r["width"] = np.where(have_ci, width, np.nan)
    r["sd_true"] = np.where(log, sd_log, sd)
    r["reject"] = np.where(r["p"].notna(), r["p"] < alpha, np.nan)
    pairs_estimand = r["method"].astype(str).str.contains(POPULATION_OF_PAIRS)
    out = []
    r["pairs_estimand"] = pairs_estimand
    for (cal, meth), part in r.groupby(["calibration", "method_family"], sort=True):
        cov, rej = part["covers"].dropna(), part["reject"].dropna()
        is_size = scenario in NULLS and not (scenario == "global_null" and bool(part["pairs_estimand"].any()))
        err = part["error"].dropna()
        sources = sorted(set(part["truth_source"].dropna()))
        cov_mean = cov.mean() if len(cov) else np.nan
        widths = bool(part["width"].notna().any())  # width and SE ratios need no truth
        out.append({"table": cal.split(":")[0], "quantity": cal.split(":", 1)[1], "method": meth,
                    "scenario": scenario, "experiments": experiments, "games": games,
                    "reps": int(part["rep"].nunique()), "n_intervals": len(cov), "coverage": cov_mean,
                    "coverage_mc_se": float(np.sqrt(cov_mean * (1 - cov_mean) / len(cov))) if len(cov) else np.nan,
                    "bias": float(err.mean()) if len(err) else np.nan,
                    "bias_sd": _bias_sd(part) if len(err) else np.nan,
                    # Monte-Carlo error of the truths (0 for closed forms), in units and in SDs of the estimate
                    "truth_mc_se": _truth_mc_se(part)[0] if len(err) else np.nan,
                    "truth_mc_se_sd": _truth_mc_se(part)[1] if len(err) else np.nan,
                    "truth": "+".join(sources) if sources else TRUTH_NONE,
                    "n_pvalues": len(rej), "size": rej.mean() if (len(rej) and is_size) else np.nan,
                    "rejection_rate": rej.mean() if len(rej) else np.nan,
                    "width_ratio": float(np.nanmedian(part["width_ratio"])) if widths else np.nan,
                    # mean printed SE (interval width / 2z) over the SD of the estimate across runs,
                    # pooled over the family's quantities (target 0.9-1.15)
                    "se_ratio": _se_ratio(part) if widths else np.nan})
    s = pd.DataFrame(out)
    seen = set(s["table"] + ":" + s["quantity"]) if len(s) else set()
    for spec in SPECS:  # listed but never printed on simulated games: a row that says so (no evidence)
        if spec.calibration not in seen:
            s = pd.concat([s, pd.DataFrame([{
                "table": spec.table, "quantity": spec.name, "method": "no values on simulated games",
                "scenario": scenario, "experiments": experiments, "games": games, "reps": 0, "n_intervals": 0,
                "coverage": np.nan, "coverage_mc_se": np.nan, "bias": np.nan, "bias_sd": np.nan,
                "truth_mc_se": np.nan, "truth_mc_se_sd": np.nan, "truth": TRUTH_NONE,
                "n_pvalues": 0, "size": np.nan, "rejection_rate": np.nan,
                "width_ratio": np.nan, "se_ratio": np.nan}])], ignore_index=True)
    size_t, cov_t = TARGETS["paper" if experiments >= 756 and games >= 120 else "small"]
    s["target_size"], s["target_coverage"] = size_t, cov_t
    s["meets"] = ((s["size"].isna() | (s["size"] <= size_t)) & (s["coverage"].isna() | (s["coverage"] >= cov_t)))
    return s


def _truth_mc_se(part: pd.DataFrame) -> tuple[float, float]:
    """Mean over quantities with a truth of its Monte-Carlo SE (``truth_mc_se``), and of that SE over the
    SD of the estimate across runs; NaN where no truth's error is known."""
    if "truth_mc_se" not in part.columns:
        return np.nan, np.nan
    by_q = part[part["error"].notna()].groupby("quantity").agg(se=("truth_mc_se", "first"), sd=("sd_true", "first"))
    by_q = by_q[by_q["se"].notna()]
    rel = by_q[(by_q["sd"] > 0)]
    return (float(by_q["se"].mean()) if len(by_q) else np.nan,
            float((rel["se"] / rel["sd"]).mean()) if len(rel) else np.nan)


def _bias_sd(part: pd.DataFrame) -> float:
    """Mean over quantities of (mean of estimate - truth) / SD of the estimate over runs."""
    by_q = part.groupby("quantity").agg(err=("error", "mean"), sd=("sd_true", "first"), n=("error", "count"))
    by_q = by_q[(by_q["sd"] > 0) & by_q["err"].notna() & (by_q["n"] >= 3)]  # an SD needs a few runs
    return float((by_q["err"] / by_q["sd"]).mean()) if len(by_q) else np.nan


def ratio_keys() -> set[str]:
    """Calibration keys whose estimate is an odds ratio (estimate column ``or`` or ``or_*`` in the
    table's declaration): their intervals are built, and their widths compared, on the log scale."""
    return {s.calibration for s in SPECS if s.estimate == "or" or s.estimate.startswith("or_")}


def on_log_scale(records: pd.DataFrame) -> pd.Series:
    """Rows whose width and SD are measured on the log scale: every odds ratio (``ratio_keys``), and
    the bootstrap table's OR quantities (its other quantities are rates). A mask that
    named tables by hand and missed opponent_baseline, scaling, speaking_glm and style_adjusted: their
    se_ratio compared a mean width on the OR scale (dominated by the widest, most skewed intervals)
    with the SD of the OR, e.g. 3.8 for opponent_baseline beside a median width ratio of 1.2."""
    cal, q = records["calibration"].astype(str), records["quantity"].astype(str)
    return cal.isin(ratio_keys()) | ((cal == "bootstrap:quantity") & q.str.contains("_or"))


def _se_ratio(part: pd.DataFrame) -> float:
    """Mean over quantities of (mean printed SE / SD of the estimate over runs)."""
    z = 1.959964
    by_q = part.groupby("quantity").agg(width=("width", "mean"), sd=("sd_true", "first"))
    by_q = by_q[(by_q["sd"] > 0) & by_q["width"].notna()]
    return float((by_q["width"] / (2 * z) / by_q["sd"]).mean()) if len(by_q) else np.nan


def _chunk(args) -> pd.DataFrame:
    sc, experiments, games, reps, config, tables = args
    return pd.concat([run_once(sc, experiments, games, r, config, design_seed=500 + r if sc in FRESH_DESIGN else 1,
                               tables=tables) for r in reps], ignore_index=True)


def calibrate(scenarios=("global_null", "planted"), experiments: int = 120, games: int = 40, reps: int = 100,
              config: StatsConfig | None = None, verbose: bool = False, raw: dict | None = None,
              jobs: int = 1, tables=None) -> pd.DataFrame:
    config = config or StatsConfig(bootstrap_reps=1000, permutation_reps=500)
    out = []
    for sc in scenarios:
        t0 = time.perf_counter()
        chunks = [(sc, experiments, games, list(range(reps))[j::jobs], config, tables) for j in range(max(jobs, 1))]
        if jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(jobs) as ex:
                recs = pd.concat(list(ex.map(_chunk, chunks)), ignore_index=True)
        else:
            recs = _chunk(chunks[0])
        if raw is not None:
            raw[sc] = recs
        summary = summarise(recs, sc, experiments, games, config.alpha)
        out.append(summary if tables is None else summary[summary["table"].isin(tables)])
        if verbose:
            print(f"{sc}: {reps} runs of {experiments} x {games} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return pd.concat(out, ignore_index=True)


def missing_rows(calibration: pd.DataFrame) -> list[str]:
    """Calibration keys of ``SPECS`` with no row in a calibration summary (what the CI test checks)."""
    have = set(calibration["table"].astype(str) + ":" + calibration["quantity"].astype(str))
    return sorted({s.calibration for s in SPECS} - have)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiments", type=int, default=120)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--scenarios", default="global_null,planted")
    ap.add_argument("--bootstrap-reps", type=int, default=1000)
    ap.add_argument("--permutation-reps", type=int, default=500)
    ap.add_argument("--jobs", type=int, default=1, help="processes (replicates are independent)")
    ap.add_argument("--tables", help="comma-separated tables to calibrate (default: every table of SPECS)")
    ap.add_argument("--out", help="CSV to write (rows of the same design size in it are replaced)")
    ap.add_argument("--raw", help="Parquet file for the per-replicate inference rows")
    ap.add_argument("--truth-copies", type=int, default=ct.POOLED_COPIES,
                    help="outcome draws of the design pooled for a pooled-copies truth (its MC error ~ 1/sqrt)")
    ap.add_argument("--truth-batch", type=int, default=None,
                    help="copies per pooled data set where all copies do not fit in memory (paper size: 4)")
    a = ap.parse_args(argv)
    unknown = [sc for sc in a.scenarios.split(",") if sc not in SCENARIOS]
    if unknown:  # one line, before minutes of simulation, not a KeyError inside the first replicate
        ap.error(f"--scenarios: unknown {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}")
    known = {s.table for s in SPECS}
    stray = [t for t in (a.tables.split(",") if a.tables else []) if t not in known]
    if stray:
        ap.error(f"--tables: no calibrated table {', '.join(stray)} (see docs/tables.md)")
    ct.POOLED_COPIES, ct.POOLED_BATCH = a.truth_copies, a.truth_batch  # read by pooled_truth (forked workers too)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)  # the truths' cost
    config = StatsConfig(bootstrap_reps=a.bootstrap_reps, permutation_reps=a.permutation_reps)
    raw: dict = {}
    tables = a.tables.split(",") if a.tables else None
    res = calibrate(a.scenarios.split(","), a.experiments, a.games, a.reps, config, True, raw, a.jobs, tables)
    if a.out:
        try:
            old = pd.read_csv(a.out)
            old = old[~((old["experiments"] == a.experiments) & (old["games"] == a.games)
                        & old["scenario"].isin(res["scenario"].unique())
                        & (old["table"].isin(tables) if tables else True))]
            res_all = pd.concat([old, res], ignore_index=True)
        except (FileNotFoundError, KeyError, pd.errors.EmptyDataError):
            res_all = res
        res_all.to_csv(a.out, index=False)
    if a.raw:
        pd.concat(raw, names=["scenario"]).reset_index(level=0).to_parquet(a.raw)
    with pd.option_context("display.width", 220, "display.max_rows", 500, "display.max_colwidth", 60):
        print(res.drop(columns=["target_size", "target_coverage"]).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

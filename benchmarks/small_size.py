"""Size (and power) at the README demo's design of two small-sample tests: ``cluster_robust``'s difficulty
terms (two-way clustered by experiment and word pair) and equation (1)'s position terms with games missing.

    python benchmarks/small_size.py difficulty STUDIES [--tiers 4|2] [--difficulty-or paper|1|OR] [--cr1]
    python benchmarks/small_size.py positions STUDIES [--missing 0.3] [--position-pp 0|-1.11] [--experiments 36 --games 8]

Every study is a fresh draw of the design (3 models, 36 experiments x 8 games; fresh word pairs and
pair effects each study: the difficulty estimand is over a population of pairs) run through the real
table. Prints the share of p < .05 over terms with its Monte-Carlo SE clustered by study (a study's
terms share its reference tier or position and are correlated), the share of studies with any
rejection, and how many terms were computed. Seeds are fixed: study ``i`` uses seed ``SEED + i``.
``--cr1``: the difficulty terms' earlier inference (the two-way sandwich's parts CR1, not CR2), for
comparison on the same draws. ``--difficulty-or OR`` (a number): the last tier's OR against the first
(half its log on each, the middle tiers 1); ``paper``: the paper's tier ORs.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.effects import PAPER_DIFFICULTY_OR, SimModel
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.config import StatsConfig

#: The demo's three models (sizes 10, 31.6 and 100 B; different detection), as in
#: tests/analysis/stats/test_difficulty_few_pairs.py.
DEMO_MODELS = tuple(SimModel(f"m{i}", "maker", "family", float(10 ** (1 + i / 2)), det=0.5 + 0.1 * i, self_decl=0.2)
                    for i in range(3))
CONFIG = StatsConfig(strict=False, bootstrap_reps=200, permutation_reps=100)


def difficulty_study(i: int, seed: int, tiers: int, difficulty_or) -> pd.DataFrame:
    diffs = ["easy", "medium", "hard", "expert"] if tiers == 4 else ["easy", "hard"]
    g, pl, md = simulate_games(36, 8, design_seed=seed + i, seed=seed + i, models=DEMO_MODELS, difficulties=diffs,
                               seat_or=1.0, mode_or=1.0, difficulty_or=difficulty_or, size_or_per_10x=1.0,
                               opponent_or_per_10pp=1.0, position_effect_pp=0.0, pair_effect_sd=1.0,
                               experiment_effect_sd=0.5)
    t = TABLES["cluster_robust"](AnalysisData(games=g, players=pl, models=md), CONFIG)
    d = t[t["term"].str.startswith("difficulty:")]
    return pd.DataFrame({"study": i, "term": d["term"].to_numpy(), "p": d["p"].to_numpy(float),
                         "df": d["df"].to_numpy(float), "method": d["method"].to_numpy()})


def positions_study(i: int, seed: int, missing: float, position_pp: float, experiments: int = 36,
                    games: int = 8) -> pd.DataFrame:
    g, pl, md = simulate_games(experiments, games, models=["a", "b", "c"], difficulties=["easy", "hard"], seed=seed + i,
                               design_seed=seed + i, mode_or=1.0, opponent_or_per_10pp=1.0,
                               position_effect_pp=position_pp, size_or_per_10x=1.0, pair_effect_sd=0.0,
                               experiment_effect_sd=1.0)
    if missing > 0:  # games lost at random (a provider's failures), their players with them
        keep = np.random.default_rng(seed + i).random(len(g)) >= missing
        g = g[keep]
        pl = pl[pl["game_id"].isin(g["game_id"])]
    t = TABLES["equation1"](AnalysisData(g, pl, models=md), CONFIG)
    d = t[t["term"].str.startswith("pos")]
    return pd.DataFrame({"study": i, "term": d["cluster"].to_numpy() + ":" + d["term"].to_numpy(),
                         "p": d["p"].to_numpy(float), "df": d["df"].to_numpy(float), "method": d["method"].to_numpy()})


def difficulty_or(arg: str, tiers: int):
    if arg == "paper":
        return PAPER_DIFFICULTY_OR
    half = float(np.sqrt(float(arg)))
    return {"easy": 1 / half, "medium": 1.0, "hard": half if tiers == 2 else 1.0, "expert": half}


def summarise(rows: pd.DataFrame, studies: int, expected_terms: int) -> dict:
    """Rejections at 5% over computed terms, MC SE clustered by study, and per-study any-rejection."""
    ok = rows.dropna(subset=["p"])
    rej = (ok["p"] < 0.05).astype(float)
    per = rej.groupby(ok["study"]).agg(["sum", "count"])
    rate = float(per["sum"].sum() / per["count"].sum())
    # ratio estimator's SE over studies: sum_i (r_i - rate n_i)^2 / (S (S-1) nbar^2)
    S, nbar = len(per), per["count"].mean()
    se = float(np.sqrt(((per["sum"] - rate * per["count"]) ** 2).sum() / (S * (S - 1)) ) / nbar) if S > 1 else np.nan
    anyr = (per["sum"] > 0).mean()
    return {"studies": studies, "terms": int(len(rows)), "computed": int(len(ok)),
            "studies_all_computed": int((rows.groupby("study")["p"].count() == expected_terms).sum()),
            "p<.05": rate, "mc_se": se, "binomial_se": float(np.sqrt(rate * (1 - rate) / max(len(ok), 1))),
            "any_rejection": float(anyr), "any_rejection_se": float(np.sqrt(anyr * (1 - anyr) / max(S, 1))),
            "median_df": float(ok["df"].median())}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study", choices=["difficulty", "positions"])
    ap.add_argument("studies", type=int)
    ap.add_argument("--seed", type=int, default=20_000)
    ap.add_argument("--tiers", type=int, choices=[2, 4], default=4)
    ap.add_argument("--difficulty-or", default="1")
    ap.add_argument("--missing", type=float, default=0.3)
    ap.add_argument("--position-pp", type=float, default=0.0)
    ap.add_argument("--experiments", type=int, default=36)
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--cr1", action="store_true", help="difficulty: CR1 sandwiches (the earlier inference)")
    ap.add_argument("--csv", help="write every study's p-values here")
    a = ap.parse_args(argv)
    if a.cr1:
        from impostor_bench.analysis.stats import robustness

        two_way = robustness.two_way_logit
        robustness.two_way_logit = lambda *args, **kw: two_way(*args, **{**kw, "cov_type": "CR1"})
    out = []
    for i in range(a.studies):
        if a.study == "difficulty":
            out.append(difficulty_study(i, a.seed, a.tiers, difficulty_or(a.difficulty_or, a.tiers)))
        else:
            out.append(positions_study(i, a.seed, a.missing, a.position_pp, a.experiments, a.games))
        if a.csv and (i + 1) % 25 == 0:  # a long run can be read while it goes
            pd.concat(out, ignore_index=True).to_csv(a.csv, index=False)
    rows = pd.concat(out, ignore_index=True)
    if a.csv:
        rows.to_csv(a.csv, index=False)
    by = rows["term"].str.split(":").str[0] if a.study == "positions" else pd.Series("difficulty", index=rows.index)
    for name, part in rows.groupby(by):
        expected = a.tiers - 1 if a.study == "difficulty" else 3
        print(name, summarise(part, a.studies, expected), part["method"].iloc[0])
    sys.stdout.flush()


if __name__ == "__main__":
    main()

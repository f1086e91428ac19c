"""Where Table 5's slope loses to its truth: the per-model pooled rows' log-OR slope (per unit of
baseline) under four baselines, on one design.

    python benchmarks/table5_attenuation.py EXPERIMENTS GAMES STUDIES SCENARIO OR RUNS
    python benchmarks/table5_attenuation.py 120 40 4 interactions 0.6 10

* ``T1``: the truth (``calibration_truth``): expected outcome ``p_design`` on the design-wide
  accuracies (pooled over ``RUNS`` runs), difficulty and mode fixed effects;
* ``T2``: the same fit on the *fold-expected* accuracies (the other fold's accuracy pooled over the
  runs) with the table's difficulty x fold effects: the estimator's limit on this design and this
  split if its ballots were infinitely many; ``T2 - T1`` is the error of measuring a model on half
  the experiments (which opponents, modes and pairs the fold happens to hold);
* ``T3``: ``p_design`` on each study's own cross-fitted baseline, averaged over studies: adds the
  ballots' sampling error, with no outcome noise;
* ``est``: the table's estimate, averaged over studies (rows the table fitted).

The fold split is the table's (``recognition.experiment_folds``, ``StatsConfig.seed``); experiments
are matched across runs by their id without the run's prefix.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm

from impostor_bench.analysis.calibration_matrix import SCENARIOS
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import TABLES, prepared
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.recognition import experiment_folds, opponent_baseline_per_game
from impostor_bench.analysis.stats.session import Analysis

CONFIG = StatsConfig(strict=False)


def run(experiments: int, games: int, seed: int, kw: dict):
    g, pl, md = simulate_games(experiments, games, design_seed=1, seed=seed, **kw)
    data = AnalysisData(games=g, players=pl, models=md)
    prep = prepared(Analysis(data, CONFIG), need_players=True)
    p = prep.games["game_id"].map(g.set_index("game_id")["p_design"]).to_numpy(float)
    return data, prep, p


def design_key(prep) -> np.ndarray:
    return np.array([n.split("-", 1)[1] for n in prep.exp_names], dtype=object)


def seat_counts(prep, fold_of: dict) -> pd.DataFrame:
    """One row per majority seat: game, model, difficulty, fold of its experiment, valid, correct
    (the ballots ``recognition.opponent_baseline_per_game`` counts)."""
    maj = prep.present & ~prep.is_imp
    valid = maj & ~np.isnan(prep.vote)
    correct = valid & (prep.vote == prep.imp_seat[:, None])
    gi, seat = np.nonzero(maj)
    fold = np.array([fold_of[k] for k in design_key(prep)])[prep.exp_code[gi]]
    return pd.DataFrame({"gi": gi, "model": prep.model[gi, seat], "d": prep.difficulty[gi], "f": fold,
                         "valid": valid[gi, seat], "correct": correct[gi, seat]})


def game_mean(prep, seats: pd.DataFrame, acc: np.ndarray) -> np.ndarray:
    return pd.Series(acc).groupby(seats["gi"].to_numpy()).mean().reindex(range(prep.n)).to_numpy()


def dummies(v: np.ndarray) -> np.ndarray:
    lv = sorted(set(v))
    return np.column_stack([(v == x).astype(float) for x in lv[1:]]) if len(lv) > 1 else np.zeros((len(v), 0))


def slope(p, base, prep, sel, fold: np.ndarray | None) -> float:
    """Baseline coefficient of the binomial GLM of ``p`` with the pooled row's fixed effects
    (difficulty, crossed with the fold when ``fold`` is given, and mode)."""
    diff = prep.difficulty[sel].astype(str)
    dfe = diff if fold is None else np.char.add(diff, fold[sel].astype(str))
    X = np.column_stack([np.ones(int(sel.sum())), base[sel], dummies(np.asarray(dfe)),
                         dummies(prep.mode[sel].astype(str))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fractional outcomes
        return float(sm.GLM(p[sel], X, family=sm.families.Binomial()).fit().params[1])


def main(argv=None) -> int:
    a = sys.argv[1:] if argv is None else argv
    if len(a) != 6:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    E, G, S, scenario, o, R = int(a[0]), int(a[1]), int(a[2]), a[3], float(a[4]), int(a[5])
    kw = {**SCENARIOS[scenario], "opponent_or_per_10pp": o}
    data0, prep0, p0 = run(E, G, 2000, kw)
    fold_of = dict(zip(design_key(prep0), experiment_folds(prep0, CONFIG.seed)))
    tot = None
    for r in range(R):
        _, pr, _ = run(E, G, 10_000_000 + r, kw)
        s = seat_counts(pr, fold_of).groupby(["model", "d", "f"])[["valid", "correct"]].sum()
        tot = s if tot is None else tot.add(s, fill_value=0)
    assert tot is not None
    by_fold = tot["correct"] / tot["valid"]
    pooled = tot.groupby(level=[0, 1]).sum()
    acc_all = pooled["correct"] / pooled["valid"]
    seats = seat_counts(prep0, fold_of)
    b1 = game_mean(prep0, seats, acc_all.reindex(pd.MultiIndex.from_arrays([seats["model"], seats["d"]])).to_numpy())
    b2 = game_mean(prep0, seats, by_fold.reindex(pd.MultiIndex.from_arrays(
        [seats["model"], seats["d"], 1 - seats["f"]])).to_numpy())
    fold0 = np.array([fold_of[k] for k in design_key(prep0)])[prep0.exp_code]
    models = sorted(set(prep0.imp_model))
    res = pd.DataFrame(index=models)
    ok = np.isfinite(b1) & np.isfinite(b2)
    res["T1"] = [slope(p0, b1, prep0, ok & (prep0.imp_model == m), None) for m in models]
    res["T2"] = [slope(p0, b2, prep0, ok & (prep0.imp_model == m), fold0) for m in models]
    t3, est = [], []
    for rep in range(S):
        data, pr, p = run(E, G, 2000 + rep, kw)
        b = opponent_baseline_per_game(pr, CONFIG.seed)
        fold = np.array([fold_of[k] for k in design_key(pr)])[pr.exp_code]
        t3.append(pd.Series({m: slope(p, b, pr, np.isfinite(b) & (pr.imp_model == m), fold) for m in models}))
        t = TABLES["opponent_baseline"](data, CONFIG)
        t = t[(t["scope"] == "model") & t["p"].notna()].set_index("model")
        est.append(10 * np.log(t["or_per_10pp"].astype(float)))
    res["T3"] = pd.concat(t3, axis=1).mean(axis=1)
    res["est"] = pd.concat(est, axis=1).reindex(models).mean(axis=1)
    res["fitted"] = pd.concat(est, axis=1).reindex(models).notna().sum(axis=1)
    print(f"{scenario} {E} x {G}, opponent OR {o}: {S} studies, {R} runs pooled; log-OR per unit baseline")
    print(res.round(3).to_string())
    m = res[["T1", "T2", "T3"]].mean()
    both = res["est"].notna()
    print(f"mean over models: T1 {m['T1']:.3f}, T2/T1 {m['T2'] / m['T1']:.3f}, T3/T1 {m['T3'] / m['T1']:.3f}; "
          f"fitted models ({int(both.sum())}): est/T1 {res.loc[both, 'est'].mean() / res.loc[both, 'T1'].mean():.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

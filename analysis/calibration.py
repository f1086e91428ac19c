"""Calibration suite: do the report's p-values hold their size and its intervals their
coverage on designs like the paper's?

Each scenario fixes one design (:func:`impostor_bench.analysis.sim.design.build_design`: 9 models, 5
modes, 4 tiers, strong word-pair effects fixed by the design and shared across
experiments, strong per-experiment effects) and draws ``reps`` independent runs of it
(speaking orders, experiment effects, winners). Every run goes through the real table
functions (``speaking_itt``, ``speaking_randomization``, ``bootstrap``, ``odds_ratios``,
``permutation``, Wilson intervals of ``headline``); the truth is the design's expected
value (``SimDesign.marginal_win_prob``). Scenarios:

* ``null``     -- no position effect and no mode effect (opponent effect off, so every
                  mode's true OR is 1): size of every p-value, coverage of every interval;
* ``position`` -- as null with a planted pooled ITT of exactly -1.11 pp (the paper's
                  estimate; the logit position term is solved for it): power of the ITT;
* ``paper``    -- the paper's mode ORs and opponent effect, no position effect:
                  coverage of the (non-null) mode ORs;
* ``paper_independent`` -- as paper without word-pair and experiment effects (games
                  independent given the design: where the paper's bootstrap is widest
                  relative to the true spread).

Full run (figures in docs/analysis.md)::

    python -m impostor_bench.analysis.calibration --reps 200 --games 120 --out calibration.csv

The reduced version runs in CI (tests/analysis/test_calibration.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.design import SimDesign, build_design
from impostor_bench.analysis.stats import ALL, wilson
from impostor_bench.analysis.stats.config import BOOTSTRAPS, StatsConfig
from impostor_bench.analysis.stats.odds import odds_ratios
from impostor_bench.analysis.stats.robustness import bootstrap, permutation
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.speaking import speaking_itt, speaking_randomization

SCENARIOS: dict[str, dict[str, Any]] = {  # keyword arguments of build_design
    "null": dict(mode_or=1.0, opponent_or_per_10pp=1.0, position_effect_pp=0.0),
    "position": dict(mode_or=1.0, opponent_or_per_10pp=1.0, target_itt_pp=-1.11),
    "paper": dict(mode_or=None, opponent_or_per_10pp=0.8, position_effect_pp=0.0),
    "paper_independent": dict(mode_or=None, opponent_or_per_10pp=0.8, position_effect_pp=0.0,
                              pair_effect_sd=0.0, experiment_effect_sd=0.0),
}
# |log OR| below which a mode OR counts as null: with no mode effect the design's true
# marginal OR still differs from 1 by < 1% (each model meets a different subset of the
# shared word pairs in team modes, where it is the impostor in half the games).
NULL_TOL = 0.02
STRONG = dict(pair_effect_sd=1.0, experiment_effect_sd=0.5)


@dataclass
class Scenario:
    name: str
    design: SimDesign
    truth: dict


def make_scenario(name: str, games: int = 120, experiments: int = 756, design_seed: int = 1, **kw) -> Scenario:
    args = {**STRONG, **SCENARIOS[name], **kw}  # a scenario may switch the strong effects off
    target = args.pop("target_itt_pp", None)
    design = build_design(experiments, games, design_seed=design_seed, id_prefix=name, **args)
    if target is not None:  # set the position term so that the design's true pooled ITT is the target
        from scipy.optimize import brentq

        def gap(c):
            design.c_pos = c
            return true_values(design)["itt_pp"] - target

        design.c_pos = brentq(gap, -3.0, 3.0, xtol=1e-10)
    return Scenario(name, design, true_values(design))


def true_values(design: SimDesign) -> dict:
    """Expected overall and per-model win rates, marginal mode ORs and pooled ITT (pp)."""
    p = design.marginal_win_prob()
    mode, model = design.mode_g, np.array(design.names, dtype=object)[design.imp_model]
    odds = lambda q: q / (1 - q)  # noqa: E731
    t = {"overall_imp_win_rate": p.mean()}
    h = p[mode == "homogeneous"].mean()
    for m in pd.unique(mode):
        if m != "homogeneous":
            t[f"{m}_vs_homogeneous_or"] = odds(p[mode == m].mean()) / odds(h)
    for m in design.names:
        t[f"imp_win_rate:{m}"] = p[model == m].mean()
    x, w = np.polynomial.hermite_e.hermegauss(40)
    w = w / w.sum()
    f = lambda s: (w / (1 + np.exp(-(design.eta[:, None] + s * design.c_pos  # noqa: E731
                                      + design.experiment_effect_sd * x)))).sum(1).mean()
    t["itt_pp"] = 100 * (f(1.0) - f(-1.0)) / 2  # mean(p2, p3) - mean(p0..p3) = (p_mid - p_early) / 2
    return t


def light_games(design: SimDesign, run: dict) -> pd.DataFrame:
    """The contract's core game columns of one simulated run (no ballots, no players)."""
    names = np.array(design.names, dtype=object)
    return pd.DataFrame({
        "experiment_id": design.exp_ids[design.ge], "game_id": np.arange(design.n), "game_index": design.gi,
        "mode": design.mode_g, "difficulty": design.diff_g, "pair_id": design.pair[:, 0],
        "impostor_seat": design.imp_seat, "impostor_model": names[design.imp_model],
        "impostor_speaking_position": run["imp_pos"],
        "winner": np.where(run["imp_wins"], "impostor", "majority").astype(object),
    })


def light_players(design: SimDesign) -> pd.DataFrame:
    """Seat models and roles of every game (no ballots): what the design fit reads from the
    players table (the majority seats' model composition). Fixed by the design, so shared by runs."""
    if design.players_cache is None:
        names = np.array(design.names, dtype=object)
        n = design.n
        is_imp = np.arange(4)[None, :] == design.imp_seat[:, None]
        design.players_cache = pd.DataFrame({
            "game_id": np.repeat(np.arange(n), 4), "seat": np.tile(np.arange(4), n),
            "model": names[design.seat_model.reshape(-1)],
            "role": np.where(is_imp, "impostor", "majority").astype(object).reshape(-1),
            "vote": np.nan, "self_declared": False, "ballot_class": "missing",
        })
    return design.players_cache


def models_frame(design: SimDesign) -> pd.DataFrame:
    return pd.DataFrame({"model": design.names, "provider": [m.provider for m in design.specs],
                         "family": [m.family for m in design.specs],
                         "params_b": [m.params_b for m in design.specs]})


PARTS = ("speaking", "bootstrap", "odds", "permutation", "wilson")


def analyse_run(design: SimDesign, run: dict, config: StatsConfig, parts=PARTS) -> dict:
    """The report's intervals and p-values for one run, flattened to one record."""
    data = Analysis(AnalysisData(games=light_games(design, run), players=light_players(design),
                                 models=models_frame(design)), config)  # one session: tables share its cache
    with data.batch():  # the frames do not change during the run: fingerprint them once
        return _analyse(design, data, config, parts)


def _analyse(design: SimDesign, data: Analysis, config: StatsConfig, parts) -> dict:
    rec: dict[str, object] = {}
    if "speaking" in parts:
        _speaking(data, config, rec)
    if "bootstrap" in parts:
        bt = bootstrap(data, config).set_index("quantity")
        for q, row in bt.iterrows():
            rec[q] = row["estimate"]
            for b in BOOTSTRAPS:
                rec[f"{q}|{b}"] = (row[f"ci_low_{b}"], row[f"ci_high_{b}"])
    if "odds" in parts:
        for row in odds_ratios(data, config).itertuples():
            if row.comparison.endswith("_vs_homogeneous"):
                rec[f"{row.comparison}_or|wald"] = (row.ci_low, row.ci_high)
                rec[f"{row.comparison}_or|p_wald"] = row.p
    if "permutation" in parts:
        for row in permutation(data, config).itertuples():
            if "homogeneous" in row.contrast:
                level = "p_perm_experiment" if row.contrast.endswith("_experiment_level") else "p_perm_game"
                rec[f"{row.contrast.replace('_experiment_level', '')}_or|{level}"] = row.p
    if "wilson" in parts:
        g = data.games
        y = (g["winner"] == "impostor").to_numpy()
        for m in design.names:
            sel = (g["impostor_model"] == m).to_numpy()
            lo, hi = wilson(np.array([y[sel].sum()]), np.array([sel.sum()]), config.alpha)
            rec[f"imp_win_rate:{m}|wilson"] = (float(lo[0]), float(hi[0]))
    return rec


def _speaking(data, config, rec) -> None:
    s = speaking_itt(data, config)
    pooled = s[s["mode"] == ALL].iloc[0]
    rec["itt_pp"] = pooled["mid_rand_pp"]
    for b in BOOTSTRAPS:
        rec[f"itt_pp|{b}"] = (pooled[f"ci_low_{b}"], pooled[f"ci_high_{b}"])
    rec["itt_pp|p"], rec["itt_pp|p_boot_normal"] = pooled["p"], pooled["p_boot_normal"]
    all_cells = s[s["mode"] != ALL]
    for mode in [None] + list(pd.unique(all_cells["mode"])):  # all cells, then the cells of each mode
        cells, key = (all_cells, "itt_cells") if mode is None else (all_cells[all_cells["mode"] == mode],
                                                                    f"itt_cells:{mode}")
        rec[f"{key}|p"] = cells["p"].to_numpy(float)
        rec[f"{key}|p_boot_normal"] = cells["p_boot_normal"].to_numpy(float)
        for b in BOOTSTRAPS:
            rec[f"{key}|{b}"] = (cells[f"ci_low_{b}"].to_numpy(float), cells[f"ci_high_{b}"].to_numpy(float))
    r = speaking_randomization(data, config)
    for row in r[r["scope"] == ALL].itertuples():
        rec[f"randomization:{row.contrast}|p"] = row.p


def _runs(sc: Scenario, runs, config: StatsConfig, seed: int, parts) -> list[dict]:
    out = []
    for r in runs:  # one run = one full analysis; the resampling inside is vectorised
        ro, rw = (np.random.default_rng(s) for s in np.random.SeedSequence([seed, r]).spawn(2))
        out.append(analyse_run(sc.design, sc.design.draw(ro, rw), config, parts))
    return out


def _chunk(args):
    name, games, kw, runs, config, seed, parts = args
    return _runs(make_scenario(name, games=games, **kw), runs, config, seed, parts)


def run_scenario(sc: Scenario, reps: int, config: StatsConfig, seed: int = 0, parts=PARTS, jobs: int = 1,
                 games: int | None = None, **kw) -> list[dict]:
    """``reps`` independent runs of the scenario's design, each analysed (one record per run);
    ``jobs`` > 1 spreads the runs over processes (pass the ``games``/``kw`` the scenario was made with)."""
    if jobs <= 1:
        return _runs(sc, range(reps), config, seed, parts)
    from concurrent.futures import ProcessPoolExecutor

    chunks = [list(range(reps))[j::jobs] for j in range(jobs)]
    with ProcessPoolExecutor(jobs) as ex:
        res = list(ex.map(_chunk, [(sc.name, games or sc.design.G, kw, c, config, seed, parts) for c in chunks]))
    return [rec for chunk in res for rec in chunk]


def summarise(sc: Scenario, records: list[dict], alpha: float = 0.05) -> pd.DataFrame:
    """Coverage of every interval and rejection rate (plus KS uniformity) of every p-value."""
    rows = []
    keys = [k for k in records[0] if "|" in k]
    no_position = sc.design.c_pos == 0
    for k in keys:
        stat, method = k.split("|")
        vals = [rec.get(k) for rec in records]
        if stat.startswith("itt") or stat.startswith("randomization"):
            truth = 0.0 if no_position else (sc.truth["itt_pp"] if stat == "itt_pp" else None)
            null = no_position
        else:
            truth = sc.truth.get(stat)
            null = truth is not None and abs(np.log(truth)) < NULL_TOL if stat.endswith("_or") else False
        if method == "p" or method.startswith("p_"):
            p = np.concatenate([np.atleast_1d(np.asarray(v, float)) for v in vals])
            p = p[np.isfinite(p)]
            rows.append({"scenario": sc.name, "statistic": stat, "method": method, "kind": "p-value",
                         "under_null": null, "nominal": alpha, "simulated": float((p < alpha).mean()),
                         "mc_se": float(np.sqrt(alpha * (1 - alpha) / max(len(p), 1))), "n": len(p),
                         "ks_p": float(stats.kstest(p, "uniform").pvalue) if null and len(p) > 1 else np.nan})
            continue
        if truth is None:
            continue
        # a run without this interval (its table lacked the row) counts as not computed, as a missing p does
        bounds = [(np.nan, np.nan) if v is None else v for v in vals]
        lo = np.concatenate([np.atleast_1d(np.asarray(v[0], float)) for v in bounds])
        hi = np.concatenate([np.atleast_1d(np.asarray(v[1], float)) for v in bounds])
        ok = np.isfinite(lo) & np.isfinite(hi)
        cover = (lo[ok] <= truth) & (truth <= hi[ok])
        est = np.array([rec.get(stat, np.nan) for rec in records], float)
        log = stat.endswith("_or")
        spread = np.nanstd(np.log(est) if log else est, ddof=1)
        width = np.nanmedian((np.log(hi[ok]) - np.log(lo[ok])) if log else hi[ok] - lo[ok])
        rows.append({"scenario": sc.name, "statistic": stat, "method": method, "kind": "interval",
                     "under_null": null or truth == 0, "nominal": 1 - alpha,
                     "simulated": float(cover.mean()), "mc_se": float(np.sqrt(alpha * (1 - alpha) / max(ok.sum(), 1))),
                     "n": int(ok.sum()),
                     "excludes_null": float(((lo[ok] > (1 if log else 0)) | (hi[ok] < (1 if log else 0))).mean())
                     if log or stat.startswith("itt") else np.nan,
                     "width_over_true": float(width / (2 * stats.norm.ppf(1 - alpha / 2) * spread))
                     if np.isfinite(spread) and spread > 0 and not stat.startswith("itt_cells") else np.nan,
                     "truth": truth})
    return pd.DataFrame(rows)


def calibrate(scenarios=("null", "position", "paper"), reps: int = 200, games: int = 120, seed: int = 0,
              bootstrap_reps: int = 2000, permutation_reps: int = 2000, verbose: bool = False,
              jobs: int = 1, records: dict | None = None) -> pd.DataFrame:
    """Summary of every scenario; ``records`` (a dict), if given, receives each scenario's raw records."""
    config = StatsConfig(seed=seed, bootstrap_reps=bootstrap_reps, permutation_reps=permutation_reps, strict=True)
    out = []
    for name in scenarios:
        t0 = time.perf_counter()
        sc = make_scenario(name, games=games)
        recs = run_scenario(sc, reps, config, seed, jobs=jobs, games=games)
        if records is not None:
            records[name] = recs
        out.append(summarise(sc, recs))
        if verbose:
            print(f"{name}: {reps} runs in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return pd.concat(out, ignore_index=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--games", type=int, default=120, help="games per experiment (756 experiments)")
    ap.add_argument("--scenarios", default="null,position,paper")
    ap.add_argument("--bootstrap-reps", type=int, default=2000)
    ap.add_argument("--permutation-reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="processes (runs are independent)")
    ap.add_argument("--out", help="CSV file for the summary")
    ap.add_argument("--records", help="pickle file for the raw per-run records")
    a = ap.parse_args(argv)
    raw: dict = {}
    res = calibrate(a.scenarios.split(","), a.reps, a.games, a.seed, a.bootstrap_reps, a.permutation_reps, True,
                    a.jobs, raw)
    if a.out:
        res.to_csv(a.out, index=False)
    if a.records:
        import pickle

        with open(a.records, "wb") as fh:
            pickle.dump(raw, fh)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(res.round(4).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Pseudo-population truths for the calibration matrix: the estimator's own definition applied to
the design's expected outcomes, for quantities without a closed form.

Why: a quantity without a closed-form truth was once scored against the Monte-Carlo mean of its
own estimates, so its coverage tested the standard error only and a biased estimator looked
calibrated (Table 5's slope, attenuated by the baseline's measurement error to 0.5-0.9x the
truth, "covered" 95.6%). The truth of an estimator is what it estimates on the population: here,
the same regression fitted to each game's expected outcome (``p_design``, its win probability
averaged over the experiment effect and speaking position) with the regressors at their
population values. Quantities this module has no truth for keep none (``summarise`` then
reports no coverage or bias for them, and says so), never the Monte-Carlo mean.

Implemented: the outcome tables of ``OUTCOME_TABLES`` (equation (1), ``learning``, ``scaling``,
``speaking_glm``, ``cluster_robust``, ``odds_ratios``' fitted ORs, the composition-adjusted rates of
``win_model_mode_difficulty``): the table itself run on the expected outcomes (tested against
planted parameters where the fitted model is the planted one); ``opponent_baseline`` (Table 5);
and every other interval (ballots, text, teams, rounds: their expected values need the ballot
and text models' expectations, not the win probability): ``pooled_truth``, the table run on many
outcome draws of the design pooled into one data set (its probability limit on the design).

Table 5: the population value of a game's opponent baseline is the mean over its majority seats of each model's detection accuracy at the game's
difficulty in the design's population of games: the pooled accuracy of ``POPULATION_RUNS``
independent runs of the same design (its error variance 1/``POPULATION_RUNS`` of one run's).
"""

from __future__ import annotations

import inspect
import logging
import time
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm

from impostor_bench.analysis.sim.design import build_design
from impostor_bench.analysis.sim.effects import coerce_models
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.core.records import DIFFICULTIES, MODES

log = logging.getLogger(__name__)

#: Runs of the design pooled for the population detection accuracies.
POPULATION_RUNS = 40


_ACCURACY: dict[str, pd.Series] = {}  # one per design: 40 runs are seconds at 120 x 40, a minute at 756 x 120


def population_accuracy(kwargs: dict, experiments: int, games: int, design_seed: int) -> pd.Series:
    """Detection accuracy of each (model, difficulty) over ``POPULATION_RUNS`` runs of one design
    (``kwargs``: the simulator's keyword arguments), computed once per design and process."""
    key = repr((sorted(kwargs.items()), experiments, games, design_seed))
    if key not in _ACCURACY:
        _ACCURACY[key] = _pooled_accuracy(kwargs, experiments, games, design_seed)
    return _ACCURACY[key]


def _pooled_accuracy(kwargs: dict, experiments: int, games: int, design_seed: int) -> pd.Series:
    parts = []
    for run in range(POPULATION_RUNS):
        g, pl, _ = simulate_games(experiments, games, design_seed=design_seed, seed=10_000_000 + run, **kwargs)
        maj = pl[pl["role"] == "majority"].merge(g[["game_id", "difficulty", "impostor_seat"]], on="game_id")
        ok = maj["vote"].notna()
        hit = ok & (maj["vote"].astype("Float64") == maj["impostor_seat"]).fillna(False).astype(bool)
        key = [maj["model"].astype(str), maj["difficulty"].astype(str)]
        parts.append(pd.DataFrame({"correct": hit.groupby(key).sum(), "valid": ok.groupby(key).sum()}))
    tot = pd.concat(parts).groupby(level=[0, 1]).sum()
    return (tot["correct"] / tot["valid"].where(tot["valid"] > 0)).rename("accuracy")


def _logit_slope(p: np.ndarray, X: np.ndarray) -> float:
    """Coefficient of column 1 of the binomial GLM of the expected outcomes ``p`` (fractional) on ``X``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.GLM(p, X, family=sm.families.Binomial()).fit()
    return float(np.asarray(res.params)[1])


def _dummies(values: pd.Series, order) -> np.ndarray:
    levels = [v for v in order if v in set(values)] + sorted(set(values) - set(order))
    return np.column_stack([(values == lv).to_numpy(float) for lv in levels[1:]]) if len(levels) > 1 else np.zeros((len(values), 0))


def opponent_baseline_truth(games: pd.DataFrame, players: pd.DataFrame, accuracy: pd.Series,
                            no_effect: bool = False) -> dict[str, float]:
    """Truth of every Table 5 row (``or_per_10pp:{model}/{difficulty}``, difficulty ``ALL`` = pooled):
    the OR per +10 pp of the logit of ``p_design`` on the games' population baselines with the row's
    fixed effects (mode in a cell; difficulty and mode pooled), as the table fits it to outcomes.
    ``no_effect``: the models are exchangeable and opponents do not move the outcome, so every
    population accuracy at a difficulty is the same (the pooled runs differ by noise only) and the
    truth is OR 1 (a fit on that noise would be a slope on nothing)."""
    maj = players[players["role"] == "majority"][["game_id", "model"]].merge(
        games[["game_id", "difficulty"]], on="game_id")
    acc = accuracy.reindex(pd.MultiIndex.from_arrays([maj["model"].astype(str), maj["difficulty"].astype(str)]))
    base = pd.Series(acc.to_numpy(), index=maj["game_id"].to_numpy()).groupby(level=0).mean()
    g = games.assign(base=games["game_id"].map(base)).dropna(subset=["base"])
    if no_effect:
        return {f"or_per_10pp:{m}/{d}": 1.0 for m, gm in g.groupby(g["impostor_model"].astype(str))
                for d in [*sorted(set(gm["difficulty"].astype(str))), "ALL"]}
    out: dict[str, float] = {}
    for model, gm in g.groupby(g["impostor_model"].astype(str)):
        cells = [(d, gm[gm["difficulty"].astype(str) == d], [("mode", MODES)]) for d in sorted(set(gm["difficulty"].astype(str)))]
        cells.append(("ALL", gm, [("difficulty", DIFFICULTIES), ("mode", MODES)]))
        for d, part, fes in cells:
            if len(part) < 2 or np.ptp(part["base"].to_numpy(float)) < 1e-12:
                continue
            X = np.column_stack([np.ones(len(part)), part["base"].to_numpy(float),
                                 *[_dummies(part[c].astype(str), order) for c, order in fes]])
            if np.linalg.matrix_rank(X) < X.shape[1]:
                continue
            out[f"or_per_10pp:{model}/{d}"] = float(np.exp(0.1 * _logit_slope(part["p_design"].to_numpy(float), X)))
    return out


def pseudo_population_truth(scenario_kwargs: dict, experiments: int, games_per: int, design_seed: int,
                            games: pd.DataFrame, players: pd.DataFrame) -> dict[str, float]:
    """Truths keyed by inference ``quantity`` for the tables of ``PSEUDO_POPULATION_TABLES``."""
    acc = population_accuracy(scenario_kwargs, experiments, games_per, design_seed)
    models = coerce_models(scenario_kwargs.get("models"))
    default = {k: v.default for k, v in inspect.signature(build_design).parameters.items()}
    effect = lambda k: float(scenario_kwargs.get(k, default[k]))  # noqa: E731
    exchangeable = len({(m.det, m.self_decl, m.odds) for m in models}) == 1 and effect("size_or_per_10x") == 1.0
    no_effect = exchangeable and effect("opponent_or_per_10pp") == 1.0
    return opponent_baseline_truth(games, players, acc, no_effect)


# --------------------------------------------------------------------------- outcome-only tables

#: Tables whose estimates are logit fits (or ratio-of-totals rates) of the game outcome alone
#: (``Prepared.y``), so their pseudo-population truth is the table itself run on the expected
#: outcomes: a binomial fit to fractional outcomes is the limit of the fit to 0/1 outcomes
#: (its score equations are linear in y). The value says which expectation: ``conditional``
#: (given the run's experiment effects and speaking positions, ``p_true``) for a fit with
#: FE_experiment, whose estimand conditions on the experiment (the fixed effects absorb it);
#: ``marginal`` (given the positions, averaged over the experiment effect) for a pooled fit,
#: whose estimand averages over the experiments. A table that reads the outcome any other way
#: (headline's majority wins compare y with 1; ballots, text) is not listed.
OUTCOME_TABLES = {"equation1": "conditional", "learning": "conditional", "scaling": "marginal",
                  "speaking_glm": "marginal", "cluster_robust": "marginal", "odds_ratios": "marginal",
                  "win_model_mode_difficulty": "marginal"}
EXPECTED = {"conditional": "p_true", "marginal": "p_given_position"}
#: Tables whose truths come from this module (the others without a closed form have none).
PSEUDO_POPULATION_TABLES = {"opponent_baseline", *OUTCOME_TABLES}


def outcome_given_position(games: pd.DataFrame, scenario_kwargs: dict, experiments: int, games_per: int,
                           design_seed: int, nodes: int = 40) -> np.ndarray:
    """(N,) each game's win probability given its drawn speaking position, averaged over the
    experiment effect (Gauss-Hermite), for ``games`` exactly as ``simulate_games`` returned them
    (the design's order; before any data loss)."""
    design = build_design(experiments, games_per, design_seed=design_seed, **scenario_kwargs)
    if len(games) != design.n:
        raise ValueError("outcome_given_position: games must be the simulator's full frame, in its order")
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    sign = np.where(games["impostor_speaking_position"].to_numpy(int) >= 2, 1.0, -1.0)
    z = (design.eta + sign * design.c_pos)[:, None] + design.game_effect_sd()[:, None] * x[None, :]
    return (w[None, :] / (1.0 + np.exp(-z))).sum(1)


def expected_outcome_estimates(games: pd.DataFrame, players: pd.DataFrame, models: pd.DataFrame, config,
                               column: str, tables) -> dict[tuple[str, str], float]:
    """``tables``' estimates keyed by (table, inference ``quantity``) with each game's outcome replaced by
    its expected value ``games[column]`` (the same games, design and code path as the report)."""
    from dataclasses import replace

    from impostor_bench.analysis.data import AnalysisData
    from impostor_bench.analysis.stats import prepared
    from impostor_bench.analysis.stats.inference import inference_rows
    from impostor_bench.analysis.stats.session import Analysis

    data = AnalysisData(games=games, players=players, models=models)
    real = prepared(Analysis(data, config))  # a throwaway session: the 0/1 outcomes' view of the games
    y = real.games["game_id"].map(games.set_index("game_id")[column]).to_numpy(float)
    session = Analysis(data, config)
    with session.batch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # binomial fits to fractional outcomes warn; the fit is the point
        session.memo(("prepared",), lambda: replace(real, y=y))  # what every table reads as the outcome
        rows = inference_rows(session, config, list(tables))
    rows = rows[rows["estimate"].notna()]
    return dict(zip(zip(rows["table"], rows["quantity"]), rows["estimate"].astype(float)))


def outcome_table_truth(games: pd.DataFrame, players: pd.DataFrame, models: pd.DataFrame, config,
                        tables) -> dict[tuple[str, str], float]:
    """Pseudo-population truths of ``tables`` (those of ``OUTCOME_TABLES``), keyed by (table, quantity);
    ``games`` carries ``p_true`` and ``p_given_position``."""
    out: dict[tuple[str, str], float] = {}
    for kind, column in EXPECTED.items():
        mine = [t for t in tables if OUTCOME_TABLES.get(t) == kind]
        if mine:
            out.update(expected_outcome_estimates(games, players, models, config, column, mine))
    return out


# --------------------------------------------------------------------------- pooled copies (any table)

#: Independent outcome draws of one design pooled for the truths of the remaining tables (ballots,
#: text, teams, rounds, and the rates and ratios of the others without a closed form): their
#: estimators read ballots and text as well as outcomes, whose expectations have no closed form, so
#: the truth is the table itself run on ``POOLED_COPIES`` copies of the design in one data set. As
#: the copies grow this is the estimator's probability limit on the design (what it estimates), not
#: the mean of its estimates (which carries its finite-sample bias); its Monte-Carlo error is
#: 1/sqrt(copies) of one run's SD, measured from ``POOLED_GROUPS`` disjoint groups of the copies.
POOLED_COPIES = 40
POOLED_GROUPS = 4
#: Copies per pooled data set when the pool of all copies does not fit in memory (None: one pool). With
#: a batch of b copies the truth is the mean of the estimates on copies/b pools of b copies each: a
#: design b times the size, so the estimator's finite-sample bias left in the truth is 1/b of one run's.
POOLED_BATCH: int | None = None
#: Seeds of the pooled copies: apart from the replicates' (1000 + rep) and Table 5's runs.
POOLED_SEED = 20_000_000

_POOLED: dict[tuple, dict[tuple[str, str], tuple[float, float]]] = {}  # one per design and table


def pooled_copies(draws) -> tuple[pd.DataFrame, ...]:
    """The frames of several runs of one design in one data set: each run's experiments and games
    relabelled (``k<i>-`` prefixed) so that the copies are distinct experiments; word pairs, models
    and every game's design cell are kept. ``draws``: (games, players[, moves]) per run."""
    out: list[list[pd.DataFrame]] = []
    for i, frames in enumerate(draws):
        tag = f"k{i}-"
        renamed = []
        for f in frames:
            f = f.copy()
            for col in ("experiment_id", "game_id"):
                if col in f.columns:
                    f[col] = tag + f[col].astype(str)
            renamed.append(f)
        out.append(renamed)
    return tuple(pd.concat(parts, ignore_index=True) for parts in zip(*out))


def _draw(scenario_kwargs: dict, experiments: int, games_per: int, design_seed: int, seed: int, rounds: int | None):
    """One run of the design: (games, players[, moves]) and the models frame."""
    if rounds:
        from impostor_bench.analysis.sim.rounds import simulate_rounds

        g, pl, mv, models = simulate_rounds(experiments, games_per, rounds, design_seed=design_seed, seed=seed,
                                            **scenario_kwargs)
        return (g, pl, mv), models
    g, pl, models = simulate_games(experiments, games_per, design_seed=design_seed, seed=seed, **scenario_kwargs)
    return (g, pl), models


def _estimates(frames, models, config, tables) -> pd.DataFrame:
    """``tables``' inference rows (estimates) on one data set."""
    from impostor_bench.analysis.data import AnalysisData
    from impostor_bench.analysis.stats.inference import inference_rows
    from impostor_bench.analysis.stats.session import Analysis

    moves = frames[2] if len(frames) > 2 else None
    data = AnalysisData(games=frames[0], players=frames[1], models=models, moves=moves)
    with Analysis(data, config).batch() as session, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = inference_rows(session, config, list(tables))
    return rows[rows["estimate"].notna()]


def pooled_truth(scenario_kwargs: dict, experiments: int, games_per: int, design_seed: int, tables, config,
                 copies: int | None = None, rounds: int | None = None, log_scale=None,
                 batch: int | None = None) -> dict[tuple[str, str], tuple[float, float]]:
    """Pseudo-population truths of ``tables`` keyed by (table, inference ``quantity``), each with its
    Monte-Carlo SE: (truth, SE). The truth is the table run on ``copies`` independent outcome draws of
    the design (``scenario_kwargs`` with ``design_seed``: the same word pairs, schedule and seats;
    fresh speaking orders, experiment effects, winners, ballots and text) pooled into one data set.
    The experiment effects are drawn afresh in every copy, so the truth is averaged over them (the
    estimand of a pooled rate or ratio; ``OUTCOME_TABLES`` holds the conditional truths of the
    FE_experiment fits). The SE is the SD of the estimates of ``POOLED_GROUPS`` disjoint groups of
    the copies over sqrt(groups) (on the log scale where ``log_scale(table, quantity)`` says the
    row is an odds ratio). ``rounds``: draw multi-round games of that many rounds (the round
    tables). ``batch`` (default ``POOLED_BATCH``): copies per pooled data set, for designs whose
    pool of all copies does not fit in memory; the truth is then the mean over the batches (of the
    log for an odds ratio) and its SE their SD over sqrt(batches). Intervals are not needed, so the resampling runs at its
    smallest. Cached per design."""
    from dataclasses import replace

    copies = copies or POOLED_COPIES
    batch = batch or POOLED_BATCH or copies
    batched = batch < copies
    groups = max(copies // batch, 2) if batched else (POOLED_GROUPS if copies >= 2 * POOLED_GROUPS else 2)
    design = repr((sorted(scenario_kwargs.items()), experiments, games_per, design_seed, copies, batch, rounds))
    need = [t for t in tables if (design, t) not in _POOLED]
    if need:
        started = time.perf_counter()
        light = replace(config, bootstrap_reps=min(config.bootstrap_reps, 20),
                        permutation_reps=min(config.permutation_reps, 20))
        keyed = lambda rows: dict(zip(zip(rows["table"], rows["quantity"]), rows["estimate"].astype(float)))  # noqa: E731

        def run(seeds):
            draws, models = [], None
            for k in seeds:
                frames, models = _draw(scenario_kwargs, experiments, games_per, design_seed, POOLED_SEED + k, rounds)
                draws.append(frames)
            return draws, models

        if batched:  # one pool of ``batch`` copies in memory at a time
            split = [keyed(_estimates(pooled_copies(d), m, light, need))
                     for d, m in (run(range(j * batch, (j + 1) * batch)) for j in range(groups))]
            common = set.intersection(*(set(p) for p in split))
            logged = {k for k in common if log_scale is not None and log_scale(*k)}
            total = {k: float(np.exp(np.mean(np.log([p[k] for p in split]))) if k in logged
                              else np.mean([p[k] for p in split])) for k in common}  # ORs: geometric mean
        else:
            draws, models = run(range(copies))
            total = keyed(_estimates(pooled_copies(draws), models, light, need))
            split = [keyed(_estimates(pooled_copies(draws[j::groups]), models, light, need)) for j in range(groups)]
            del draws
        for t in need:
            _POOLED[(design, t)] = {}
        for key, truth in total.items():
            vals = np.array([s.get(key, np.nan) for s in split], float)
            if log_scale is not None and log_scale(*key):
                vals = np.log(np.where(vals > 0, vals, np.nan))
            se = float(np.std(vals, ddof=1) / np.sqrt(groups)) if np.isfinite(vals).all() else np.nan
            _POOLED[(design, key[0])][key] = (truth, se)
        log.info("pooled truth of %d tables: %d copies of %d x %d%s in %.0f s", len(need), copies, experiments,
                 games_per, f" ({rounds} rounds)" if rounds else "", time.perf_counter() - started)
    return {k: v for t in tables for k, v in _POOLED[(design, t)].items()}

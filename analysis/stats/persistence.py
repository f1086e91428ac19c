"""Rankings across the conditions a study holds: each condition's rates and ranks side by side
(``condition_results``); whether each ranking persists against the reference condition's is
``persistence_tests`` (the paper's O.2: "verify whether model rankings persist under these controls").

Conditions (``study_conditions``): group size (``n_players``/``n_impostors``), ``language``,
``length_budget``, decoding (the seats' ``temperature``/``top_p``) and ``mode``. A column an
older export lacks reads as its default (4 players, 1 impostor, "en", no budget, the recorded
temperature), so a study that never varied a factor holds one condition of it. Each factor with
two or more levels is compared on its own, pooled over the others; its reference is the paper's
setting (4 players and 1 impostor, English, no budget, homogeneous) or, for decoding, the most
played setting.

Estimand (conditional on the design, like the ratings): each model's impostor-win rate (its
games as impostor) and majority-win rate (its majority seats) in each condition, as ratios of
totals, compared on the logit scale. Their variance is the design bootstrap's
(``design_boot``): the experiment is the unit and only its deviation from a design logit is
perturbed, here a logit with a model x condition cell per measure (so each rate's residuals sum
to zero, as the ratio's do) plus mode, tier, impostor seat, speaking position and the majority
composition of each condition. A contrast's variance is the exact wild-bootstrap variance
``sum_e (d'IF_e)^2`` (the expectation over the Rademacher draws, no Monte-Carlo error), CR1-scaled
by ``G/(G-1)`` with a t(G-1), G the experiments behind the contrast.

Ranks per model and condition come with simultaneous intervals: ``rank_low = 1 + #models
significantly above``, ``rank_high = M - #models significantly below``, from every pairwise
t-test of the condition Holm-adjusted together (familywise 1 - alpha over the condition's
M(M-1)/2 pairs, so all its rank intervals hold at once); pairs not separated are "tied".
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._base import (MODES, Prepared, StatsUnavailable, majority_models, memo, prepared,
                                                 table)
from impostor_bench.analysis.stats._regress import unique_rows
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.design_boot import irls_logit
from impostor_bench.analysis.stats.session import Analysis

FACTORS = ("group_size", "language", "length_budget", "decoding", "mode")
MEASURES = ("imp_win", "maj_win")
METHOD = ("ratio of totals; design-logit residuals (model x condition, mode, tier, seat, position, majority "
          "composition) by experiment, CR1, logit scale, t(G-1)")
RANK_METHOD = "simultaneous: pairwise t-tests of the condition (method of the rates), Holm over its pairs"
#: Fewest experiments behind a rate (or contrast) for an interval: the size the calibration ran at
#: (benchmarks/calibration_persistence.py: 4 tiers x 4 replicates per model and condition).  With a
#: handful of experiments the covariate-adjusted residuals nearly vanish and CR1 collapses (a
#: 5-experiment bot cell printed 50.0 [49.1, 50.9]); such a cell prints its rate alone.
MIN_EXPERIMENTS = 16


# --------------------------------------------------------------------------- conditions of each game


def _column(frame: pd.DataFrame | None, name: str, default) -> pd.Series:
    """A column, its missing cells (or the whole absent column) read as ``default``."""
    if frame is None or name not in frame.columns:
        return pd.Series([default] * (0 if frame is None else len(frame)), dtype=object,
                         index=None if frame is None else frame.index)
    col = frame[name].astype(object)
    return col.where(col.notna(), default)


def _decoding_label(temperature, top_p) -> str:
    t = "recorded" if temperature is None or (isinstance(temperature, float) and np.isnan(temperature)) \
        else f"{float(temperature):g}"
    label = f"T={t}"
    if top_p is not None and not (isinstance(top_p, float) and np.isnan(top_p)):
        label += f", top_p={float(top_p):g}"
    return label


def _decoding(data: Analysis, prep: Prepared) -> np.ndarray:
    """Per game: the decoding settings of its seats ("T=0.7", "T=0.7, top_p=0.9"; several joined by
    " | " when its seats differ); "T=recorded" where the players table records none. Labels are made
    once per distinct setting; only games whose seats differ are joined row by row."""
    g = prep.games
    out = np.full(prep.n, "T=recorded", dtype=object)
    p = data.players
    if p is None or "game_id" not in p.columns or ("temperature" not in p.columns and "top_p" not in p.columns):
        return out
    seat = pd.DataFrame({"game_id": p["game_id"].astype(object),
                         "t": pd.to_numeric(_column(p, "temperature", np.nan), errors="coerce"),
                         "q": pd.to_numeric(_column(p, "top_p", np.nan), errors="coerce")})
    seat = seat.drop_duplicates()
    settings = seat[["t", "q"]].drop_duplicates()
    label = pd.Series([_decoding_label(t, q) for t, q in settings.itertuples(index=False)],
                      index=pd.MultiIndex.from_frame(settings))
    seat["label"] = label.reindex(pd.MultiIndex.from_frame(seat[["t", "q"]])).to_numpy()
    per_game = seat.drop_duplicates(["game_id", "label"]).sort_values("label")
    several = per_game["game_id"].duplicated(keep=False)
    joined = per_game[several].groupby("game_id", sort=False)["label"].agg(" | ".join)
    single = per_game[~several].set_index("game_id")["label"]
    mapped = g["game_id"].astype(object).map(pd.concat([single, joined]))
    return np.where(mapped.notna(), mapped, out).astype(object)


def study_conditions(data: Analysis, prep: Prepared) -> dict[str, np.ndarray]:
    """(N,) condition label of every game, per factor (absent columns read as their defaults)."""
    g = prep.games
    n_p = pd.to_numeric(_column(g, "n_players", 4), errors="coerce").fillna(4).astype(int)
    n_i = pd.to_numeric(_column(g, "n_impostors", 1), errors="coerce").fillna(1).astype(int)
    budget = pd.to_numeric(_column(g, "length_budget", None), errors="coerce")
    # each label is made once per distinct value (a study holds a handful), not once per game
    size, sizes = pd.MultiIndex.from_arrays([n_p, n_i]).factorize()
    chars, budgets = pd.factorize(budget)  # missing: code -1, the last label
    return {
        "group_size": np.array([f"{a} players, {b} impostor{'s' if b != 1 else ''}" for a, b in sizes],
                               dtype=object)[size],
        "language": _column(g, "language", "en").astype(str).to_numpy(dtype=object),
        "length_budget": np.array(["none" if not np.isfinite(v) else f"{int(v)} chars" for v in budgets] + ["none"],
                                  dtype=object)[chars],
        "decoding": _decoding(data, prep),
        "mode": np.asarray(prep.mode, dtype=object),
    }


def reference_level(factor: str, labels: np.ndarray) -> str:
    """The reference condition of a factor: the paper's setting where the study holds it, else
    (and always for decoding) the condition with the most games."""
    paper = {"group_size": "4 players, 1 impostor", "language": "en", "length_budget": "none",
             "mode": MODES[0]}.get(factor)
    levels, counts = np.unique(labels.astype(str), return_counts=True)
    if paper in set(levels):
        return str(paper)
    return str(levels[np.argmax(counts)])


def varying_factors(data: Analysis, prep: Prepared) -> dict[str, tuple[np.ndarray, list[str]]]:
    """Factors with two or more conditions: (labels, levels with the reference first)."""
    out = {}
    for f, lab in study_conditions(data, prep).items():
        if len(pd.unique(lab)) > 1:  # the sorts below only for a factor the study varies
            levels = sorted(set(lab.astype(str)))
            ref = reference_level(f, lab)
            out[f] = (lab.astype(str), [ref] + [lv for lv in levels if lv != ref])
    return out


# --------------------------------------------------------------------------- rates and their influence


@dataclass
class ConditionRates:
    """One factor's rates per (model, condition) and measure, with each experiment's influence on
    their logits (``IF``: (E, K) per measure, K = models x conditions, cell k = model * L + level)."""

    factor: str
    models: list
    levels: list
    A: dict  # measure -> (K,) successes
    B: dict  # measure -> (K,) trials
    IF: dict  # measure -> (E, K)
    n_exp: dict  # measure -> (K,) experiments behind each cell

    def rate(self, m: str) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.A[m] / self.B[m]

    def theta(self, m: str) -> np.ndarray:
        r = self.rate(m)
        ok = (r > 0) & (r < 1) & (self.n_exp[m] >= MIN_EXPERIMENTS)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(ok, np.log(r / (1 - r)), np.nan)

    def cell(self, model: int, level: int) -> int:
        return model * len(self.levels) + level


def _dummies(codes: np.ndarray) -> np.ndarray:
    k = int(codes.max()) + 1 if len(codes) else 1
    return np.eye(k)[codes][:, 1:]


def condition_rates(data: Analysis, prep: Prepared, factor: str, labels: np.ndarray, levels: list) -> ConditionRates:
    """Rates, design fit and per-experiment influence of one factor (memoised per session)."""
    return memo(data, ("condition_rates", factor),
                lambda: _condition_rates(prep, majority_counts(data, prep), factor, labels, levels))


def majority_counts(data: Analysis, prep: Prepared) -> pd.DataFrame:
    """(N games x models) majority seats each model holds in each game, from the players table's
    ``role`` (every seat of a game of any size; the prepared seat arrays hold the paper's four), else
    from the prepared arrays."""
    p = data.players
    if p is not None and {"game_id", "model", "role"} <= set(p.columns):
        # pd.crosstab's counts (models sorted, missing ids and models dropped), by bincount: the crosstab
        # of 360,000 seats took seconds in each table that asks
        maj = p.loc[(p["role"] == "majority").fillna(False).to_numpy(bool), ["game_id", "model"]].astype(object)
        maj = maj[maj["game_id"].notna().to_numpy() & maj["model"].notna().to_numpy()]
        g_code, g_ids = pd.factorize(maj["game_id"])
        m_code, models = pd.factorize(maj["model"], sort=True)
        tab = np.bincount(g_code * len(models) + m_code, minlength=len(g_ids) * len(models))
        tab = tab.reshape(len(g_ids), len(models)).astype(np.int64)
        games = pd.Index(prep.games["game_id"].astype(object))
        row = g_ids.get_indexer(games)
        out = np.zeros((len(games), len(models)), dtype=np.int64)
        out[row >= 0] = tab[row[row >= 0]]
        return pd.DataFrame(out, index=games, columns=pd.Index(models, name="model"))
    seats = majority_models(prep)
    models = sorted({m for m in seats.ravel() if m is not None}, key=str)
    return pd.DataFrame({m: (seats == m).sum(1) for m in models}, dtype=np.int64)


def _condition_rates(prep: Prepared, maj_counts: pd.DataFrame, factor: str, labels: np.ndarray,
                     levels: list) -> ConditionRates:
    models = sorted({m for m in prep.imp_model if m is not None} | set(maj_counts.columns), key=str)
    midx = {m: i for i, m in enumerate(models)}
    M, L, E = len(models), len(levels), len(prep.exp_names)
    lev = np.array([levels.index(v) for v in labels], dtype=np.int64)
    imp = np.array([midx.get(m, -1) for m in prep.imp_model], dtype=np.int64)
    # (N, M) majority seats per model
    cnt = maj_counts.reindex(columns=models, fill_value=0).to_numpy(dtype=np.int64)
    keep = imp >= 0
    # design logit on the distinct covariate patterns: impostor cell, majority counts by condition, nuisance
    cols = [np.where(keep, imp * L + lev, M * L), lev, cnt]
    nuis = [prep.difficulty, prep.imp_seat, prep.imp_pos + 1] + ([] if factor == "mode" else [prep.mode])
    cols += [pd.factorize(pd.Series(v, dtype=object).fillna("<NA>"), sort=True)[0] for v in nuis]
    cov = np.column_stack([c if np.ndim(c) == 2 else np.asarray(c)[:, None] for c in cols]).astype(np.int64)
    uniq, inv = unique_rows(cov)
    wins = np.bincount(inv, weights=prep.y, minlength=len(uniq))
    n = np.bincount(inv, minlength=len(uniq)).astype(float)
    cell_onehot = np.eye(M * L + 1)[uniq[:, 0]]
    maj_by_level = np.hstack([uniq[:, 2:2 + M] * (uniq[:, 1] == lv)[:, None] for lv in range(L)])
    X = np.hstack([cell_onehot, maj_by_level] + [_dummies(uniq[:, j]) for j in range(2 + M, uniq.shape[1])])
    p = irls_logit(wins, n, X)[inv]
    res = prep.y - p
    A: dict[str, np.ndarray] = {}
    B: dict[str, np.ndarray] = {}
    IF: dict[str, np.ndarray] = {}
    n_exp: dict[str, np.ndarray] = {}
    K = M * L
    # imp_win: the model's games as impostor
    ck = np.where(keep, imp * L + lev, 0)
    A["imp_win"] = np.bincount(ck[keep], weights=prep.y[keep], minlength=K)
    B["imp_win"] = np.bincount(ck[keep], minlength=K).astype(float)
    IF["imp_win"] = _exp_cell_sums(prep.exp_code[keep], ck[keep], res[keep], E, K)
    n_exp["imp_win"] = _exp_cell_count(prep.exp_code[keep], ck[keep], E, K)
    # maj_win: the model's majority seats (outcome 1 - y, residual -(y - p))
    A_m, B_m, IF_m, ne_m = np.zeros(K), np.zeros(K), np.zeros((E, K)), np.zeros(K)
    for j in range(M):
        w = cnt[:, j].astype(float)
        sel = w > 0
        ckm = j * L + lev[sel]
        A_m += np.bincount(ckm, weights=(w * (1 - prep.y))[sel], minlength=K)
        B_m += np.bincount(ckm, weights=w[sel], minlength=K)
        IF_m += _exp_cell_sums(prep.exp_code[sel], ckm, -(w * res)[sel], E, K)
        ne_m += _exp_cell_count(prep.exp_code[sel], ckm, E, K)
    A["maj_win"], B["maj_win"], IF["maj_win"], n_exp["maj_win"] = A_m, B_m, IF_m, ne_m
    for m in MEASURES:  # influence on the logit of the rate: residual total / (B R (1 - R))
        with np.errstate(invalid="ignore", divide="ignore"):
            r = A[m] / B[m]
            scale = np.where((B[m] > 0) & (r > 0) & (r < 1), 1.0 / (B[m] * r * (1 - r)), 0.0)
        IF[m] = IF[m] * scale[None, :]
    return ConditionRates(factor, models, levels, A, B, IF, n_exp)


def _exp_cell_sums(exp_code, cell, w, E: int, K: int) -> np.ndarray:
    return np.bincount(exp_code * K + cell, weights=w, minlength=E * K).reshape(E, K)


def _exp_cell_count(exp_code, cell, E: int, K: int) -> np.ndarray:
    return (np.bincount(exp_code * K + cell, minlength=E * K).reshape(E, K) > 0).sum(0).astype(float)


def contrast_se(IF: np.ndarray, d: np.ndarray) -> tuple[float, float]:
    """(SE, df) of the contrast ``d`` of the cells' logits: the exact wild-bootstrap variance
    ``sum_e (IF_e d)^2`` CR1-scaled by G/(G-1), t(G-1), G the experiments it involves.  (nan, nan)
    when fewer than ``MIN_EXPERIMENTS`` involve it, or when they show no spread (an SE of round-off
    size: no interval or test rather than a zero-width one the method cannot vouch for)."""
    v = IF @ d
    g = int(np.count_nonzero(v))
    if g < MIN_EXPERIMENTS:
        return np.nan, np.nan
    se = float(np.sqrt((v ** 2).sum() * g / (g - 1)))
    return (se, float(g - 1)) if se > 1e-8 else (np.nan, np.nan)


# --------------------------------------------------------------------------- ranks and ties


def holm(p, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(reject, adjusted p) of Holm's step-down. statsmodels' ``multipletests`` gives the same (the
    tests check) but runs a full ``gc.collect()`` on every call: 0.3 s each, dozens per report."""
    p = np.asarray(p, float)
    order = np.argsort(p)
    k = len(p)
    adj_sorted = np.minimum(1.0, np.maximum.accumulate((k - np.arange(k)) * p[order]))
    adj = np.empty(k)
    adj[order] = adj_sorted
    return adj <= alpha, adj


def _pairwise(cr: ConditionRates, m: str, level: int, alpha: float):
    """Every pair of rated models of one condition: (i, j, t, df, p two-sided) and the Holm decisions."""
    th = cr.theta(m)
    rated = [i for i in range(len(cr.models)) if np.isfinite(th[cr.cell(i, level)])]
    rows = []
    for i, j in combinations(rated, 2):
        d = np.zeros(th.shape[0])
        d[cr.cell(i, level)], d[cr.cell(j, level)] = 1.0, -1.0
        se, df = contrast_se(cr.IF[m], d)
        t = (th[cr.cell(i, level)] - th[cr.cell(j, level)]) / se if np.isfinite(se) and se > 0 else np.nan
        rows.append((i, j, t, df))
    out = pd.DataFrame(rows, columns=["i", "j", "t", "df"])
    out["p"] = 2 * stats.t.sf(np.abs(out["t"]), out["df"]) if len(out) else []
    ok = out["p"].notna().to_numpy() if len(out) else np.zeros(0, bool)
    out["reject"] = False
    if ok.any():
        out.loc[ok, "reject"] = holm(out.loc[ok, "p"].to_numpy(float), alpha)[0]
    return rated, out


def rank_intervals(cr: ConditionRates, m: str, level: int, alpha: float) -> pd.DataFrame:
    """Per rated model of a condition: rank (1 = highest rate), simultaneous rank interval and tied models."""
    th = cr.theta(m)
    rated, pw = _pairwise(cr, m, level, alpha)
    M = len(rated)
    above = {i: 0 for i in rated}
    below = {i: 0 for i in rated}
    tied: dict[int, list[str]] = {i: [] for i in rated}
    for r in pw.itertuples():
        if r.reject:
            hi, lo = (r.i, r.j) if r.t > 0 else (r.j, r.i)
            above[lo] += 1
            below[hi] += 1
        else:
            tied[r.i].append(str(cr.models[r.j]))
            tied[r.j].append(str(cr.models[r.i]))
    vals = np.array([th[cr.cell(i, level)] for i in rated])
    rank: np.ndarray = pd.Series(-vals).rank(method="min").to_numpy(int) if M else np.zeros(0, int)
    return pd.DataFrame({"model_i": rated, "rank": rank, "rank_low": [1 + above[i] for i in rated],
                         "rank_high": [M - below[i] for i in rated],
                         "tied_with": [", ".join(sorted(tied[i], key=str)) for i in rated]})


# --------------------------------------------------------------------------- tables


def factors_or_skip(data: Analysis):
    """The prepared arrays and the factors the study varies; StatsUnavailable when it varies none."""
    prep = prepared(data, need_players=True)
    fac = varying_factors(data, prep)
    if not fac:
        raise StatsUnavailable("the study holds one condition (one group size, language, length budget, decoding "
                               "setting and mode): no per-condition comparison to show")
    return prep, fac


@table("condition_results",
       columns=["factor", "condition", "model", "imp_win_pct", "imp_win_ci_low", "imp_win_ci_high", "imp_rank",
                "imp_rank_low", "imp_rank_high", "maj_win_pct", "maj_win_ci_low", "maj_win_ci_high", "maj_rank",
                "maj_rank_low", "maj_rank_high", "n_imp_games", "n_maj_seats"],
       title=("Results per condition side by side: each model's impostor and majority win (%) and rank (with "
              "simultaneous rank intervals) in every condition of each factor the study varies"),
       section="robustness", groups="any",  # compares the group sizes a study holds
       inference=(
           infer("imp_win", ("factor", "condition", "model"), "imp_win_pct", ("imp_win_ci_low", "imp_win_ci_high"),
                 scale=100),
           infer("maj_win", ("factor", "condition", "model"), "maj_win_pct", ("maj_win_ci_low", "maj_win_ci_high"),
                 scale=100),
           infer("imp_rank", ("factor", "condition", "model"), "imp_rank", ("imp_rank_low", "imp_rank_high"),
                 method="rank_method"),
           infer("maj_rank", ("factor", "condition", "model"), "maj_rank", ("maj_rank_low", "maj_rank_high"),
                 method="rank_method"),
       ))
def condition_results(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Each model's rates and ranks per condition (see the module docstring)."""
    prep, fac = factors_or_skip(data)
    crit = lambda df: stats.t.ppf(1 - config.alpha / 2, df)  # noqa: E731
    rows = []
    for f, (lab, levels) in fac.items():
        cr = condition_rates(data, prep, f, lab, levels)
        for li, lv in enumerate(levels):
            part = pd.DataFrame({"factor": f, "condition": lv, "model": cr.models,
                                 "reference": levels[0]})
            for m, short in (("imp_win", "imp"), ("maj_win", "maj")):
                cells = np.array([cr.cell(i, li) for i in range(len(cr.models))])
                th = cr.theta(m)[cells]
                se_df = [contrast_se(cr.IF[m], np.eye(cr.IF[m].shape[1])[k]) if np.isfinite(t) else (np.nan, np.nan)
                         for k, t in zip(cells, th)]
                se = np.array([s for s, _ in se_df])
                half = np.array([crit(d) if np.isfinite(d) else np.nan for _, d in se_df]) * se
                part[f"{m}_pct"] = 100 * cr.rate(m)[cells]
                part[f"{m}_ci_low"] = 100 / (1 + np.exp(-(th - half)))
                part[f"{m}_ci_high"] = 100 / (1 + np.exp(-(th + half)))
                rk = rank_intervals(cr, m, li, config.alpha).set_index("model_i")
                for c in ("rank", "rank_low", "rank_high", "tied_with"):
                    part[f"{short}_{c}"] = rk[c].reindex(range(len(cr.models))).to_numpy()
            part["n_imp_games"] = cr.B["imp_win"][cells].astype(int)
            part["n_maj_seats"] = cr.B["maj_win"][cells].astype(int)
            part["method"] = METHOD
            part["rank_method"] = RANK_METHOD
            rows.append(part[(part["n_imp_games"] > 0) | (part["n_maj_seats"] > 0)])
    return pd.concat(rows, ignore_index=True)

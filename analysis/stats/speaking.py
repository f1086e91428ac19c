"""Table 6 / Appendix B.3: randomized speaking order.

Pseudo-arm ITT (data contract): with p_j the impostor-win cell mean of games in which
the impostor spoke at 0-based position j,

    mid_rand_pp = 100 * [ mean(p_2, p_3) - mean(p_0, p_1, p_2, p_3) ]

i.e. a "pin the impostor to positions 2/3" policy versus the status-quo uniform mix.
Computed per mode x difficulty cell and pooled over all games (mode = difficulty = ALL).

* CI (``ci_low``/``ci_high``, ``ci_method``): the randomisation test below inverted under a
  location shift (``inverted_halfwidth``), so a CI excludes 0 exactly when p < alpha (the
  percentile bootstrap CI of a cell, from ~3-9 experiments, covered 79% at the demo's size
  and disagreed with p in 16% of cells). The percentile intervals of both bootstraps stay in
  ``ci_{low,high}_{design,paper}`` (design = ``design_boot``; paper = experiments resampled
  within their cell); ``bootstrap`` names ``config.bootstrap``.
* p: the Fisher-style randomisation p (below) of the same statistic, also in
  ``p_randomization``. It holds its size because the impostor's position is randomised
  per game; it is what the BH family uses. ``p_boot_normal`` = 2 Phi(-|est| / se_boot),
  the older normal approximation, kept for comparison: with six to nine experiments per
  cell it rejects a true null far more often than its level (docs/analysis.md).

Fisher-style randomisation (``speaking_randomization``): under the sharp null that
the impostor's position has no effect, re-drawing every game's position uniformly
(the design) makes the wins per position Multinomial(W, 1/4) and the losses per
position an independent Multinomial(L, 1/4). Replicates of every position statistic
are therefore exact draws from two multinomials - no per-game shuffling is needed.

``speaking_glm``: game-level logit of impostor win on position indicators (ref.
position 0) with mode, difficulty and impostor-model fixed effects, CR2 by experiment_id with
t on Bell-McCaffrey df (``_regress.experiment_logit``; the CR1 / normal-z fit
covered 90% at 120 x 40); ``paper_methods`` restores the CR1 / normal fit. ``method`` names it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._base import (ALL, DIFFICULTIES, MODES, StatsUnavailable, design_codes, note,
                                  ordered_levels, prepared, require_reps, table)
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats._regress import fit_columns, inference_fit, with_intercept
from impostor_bench.analysis.stats.config import BOOTSTRAPS, StatsConfig
from impostor_bench.analysis.stats.resampling import exp_sums, percentile_ci, perm_pvalue, replicate_totals
from impostor_bench.analysis.stats.session import Analysis

MID = (2, 3)


def itt_from_counts(wins: np.ndarray, n: np.ndarray) -> np.ndarray:
    """mid_rand in pp from (..., 4) arrays of wins and games by impostor position."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = wins / np.where(n > 0, n, np.nan)
    return 100 * (p[..., list(MID)].mean(-1) - p.mean(-1))


def _pos_onehot(prep) -> np.ndarray:
    """(N, 4) indicator of the impostor's position; all-zero rows for unknown positions."""
    onehot = (prep.imp_pos[:, None] == np.arange(4)[None, :]).astype(float)
    if not onehot.any():
        raise StatsUnavailable("no game has an impostor_speaking_position in 0-3")
    return onehot


CI_INVERTED = "inverted speaking-order randomisation test (location shift)"


def inverted_halfwidth(null: np.ndarray, alpha: float) -> float:
    """Half-width c of the interval ``est +- c`` that inverts the randomisation test under a location
    shift (the statistic minus the effect has the null's distribution): with H = #{|T*| >= |T|} and
    p = (1 + H) / (1 + R), p < alpha iff H <= k - 1, k = ceil(alpha (1 + R) - 1), iff |T| exceeds the
    k-th largest |T*|. So the interval excludes 0 exactly when p < alpha (16% of the demo's
    cells printed a bootstrap CI excluding 0 beside p >= .05). NaN when R is too small for alpha."""
    t = np.sort(np.abs(np.asarray(null, float)[np.isfinite(null)]))[::-1]
    k = int(np.ceil(alpha * (1 + len(t)) - 1 - 1e-12))
    return float(t[k - 1]) if 1 <= k <= len(t) else np.nan


def _randomization_null(rng, wins_total: int, loss_total: int, reps: int):
    w = rng.multinomial(wins_total, [0.25] * 4, size=reps).astype(float)
    l = rng.multinomial(loss_total, [0.25] * 4, size=reps).astype(float)
    return w, w + l


@table("speaking_itt",
    title=("Speaking-order pseudo-arm ITT, middle vs random (Table 6); p = randomisation p, CI by inverting it "
           "(the bootstraps' intervals in `ci_*_design`, `ci_*_paper`)"),
    section="paper",
    inference=(
        infer("itt", ("mode", "difficulty"), "mid_rand_pp", ("ci_low", "ci_high"), "p",
          method="speaking-order randomisation p; CI by inverting it (location shift)", family="speaking_itt", scale=100,
          pooled_out=True),
    ),
)
def speaking_itt(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    require_reps(config, bootstrap=True, permutation=True)
    prep = prepared(data)
    onehot = _pos_onehot(prep)
    rng = np.random.default_rng([config.seed, 2])
    cells = [(m, d) for m in ordered_levels(prep.exp_mode, MODES)
             for d in ordered_levels(prep.exp_difficulty, DIFFICULTIES)]
    in_cell = {(m, d): (prep.mode == m) & (prep.difficulty == d) for m, d in cells}
    cells = [c for c in cells if in_cell[c].any()] + [(ALL, ALL)]
    x = np.empty((prep.n, 4 * len(cells)))  # (N, 4 * cells): games of each cell by impostor position
    for c, cell in enumerate(cells):  # filled in place (a list of blocks to stack doubled the peak)
        x[:, 4 * c:4 * c + 4] = onehot if cell == (ALL, ALL) else onehot * in_cell[cell][:, None]
    del in_cell
    boot = {b: itt_from_counts(*(a.reshape(a.shape[0], -1, 4) for a in replicate_totals(data, prep, config, x, b)))
            for b in BOOTSTRAPS}  # (R, cells) per bootstrap
    wins, n_all = (prep.y.astype(float) @ x).reshape(-1, 4), x.sum(0).reshape(-1, 4)  # integer sums: exact
    n_exps = (exp_sums(prep, x).reshape(len(prep.exp_names), -1, 4).sum(2) > 0).sum(0)  # experiments per cell
    rows = []
    for c, (m, d) in enumerate(cells):
        w, n = wins[c], n_all[c]
        row = {"mode": m, "difficulty": d, "n": int(n.sum()), "n_mid": int(n[list(MID)].sum()),
               "n_experiments": int(n_exps[c]), "bootstrap": config.bootstrap}
        est = float(itt_from_counts(w, n))
        if not np.isfinite(est) or n.sum() < config.min_cell_games:
            note(data, f"speaking_itt: cell {m}/{d} has a speaking position with no games "
                       f"or fewer than {config.min_cell_games} games; left empty")
            rows.append({**row, "mid_rand_pp": np.nan})
            continue
        ci = {b: percentile_ci(boot[b][:, c], config.alpha) for b in BOOTSTRAPS}
        se = float(np.nanstd(boot[config.bootstrap][:, c], ddof=1))
        nw, nn = _randomization_null(rng, int(w.sum()), int(n.sum() - w.sum()), config.permutation_reps)
        null = itt_from_counts(nw, nn)
        p_rand = float(perm_pvalue(est, null[:, None])[0])
        half = inverted_halfwidth(null, config.alpha)
        rows.append({**row, "mid_rand_pp": est, "ci_low": est - half, "ci_high": est + half,
                     "ci_method": CI_INVERTED, "p": p_rand, "se_boot": se,
                     "p_randomization": p_rand,
                     "p_boot_normal": float(2 * stats.norm.sf(abs(est) / se)) if se > 0 else np.nan,
                     **{f"ci_{side}_{b}": float(ci[b][k]) for b in BOOTSTRAPS for k, side in enumerate(("low", "high"))},
                     **{f"p_imp_pos{j}_pct": 100 * w[j] / n[j] for j in range(4)}})
    return pd.DataFrame(rows)


@table("speaking_randomization", columns=["scope", "contrast", "observed_pp", "p", "log_or", "p_log_or", "reps"],
    title="Speaking-order randomisation tests: impostor position k vs 0 and the ITT, pooled and by mode",
    section="robustness",
    inference=(
        infer("position", ("scope", "contrast"), "observed_pp", p="p",
          method="speaking-order randomisation (positions re-drawn per game)", scale=100),
    ),
)
def speaking_randomization(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Fisher-style randomisation tests of impostor position k vs 0 (and the ITT), pooled and by mode."""
    require_reps(config, permutation=True)
    prep = prepared(data)
    onehot = _pos_onehot(prep)
    rng = np.random.default_rng([config.seed, 3])
    rows = []
    for scope in [ALL] + ordered_levels(prep.mode, MODES):
        sel = np.ones(prep.n, bool) if scope == ALL else prep.mode == scope
        w = (onehot[sel] * prep.y[sel, None]).sum(0)
        n = onehot[sel].sum(0)
        if np.any(n == 0):
            note(data, f"speaking_randomization: {scope} lacks games at some impostor position")
            continue
        nw, nn = _randomization_null(rng, int(w.sum()), int(n.sum() - w.sum()), config.permutation_reps)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_obs, p_null = w / n, nw / nn
            lo_obs = np.log(w / (n - w))
            lo_null = np.log(nw / (nn - nw))
        for k in (1, 2, 3):
            diff = 100 * (p_obs[k] - p_obs[0])
            with np.errstate(invalid="ignore"):  # a position with no or only wins: infinite log odds
                lor = lo_obs[k] - lo_obs[0]
                lor_null = lo_null[:, k] - lo_null[:, 0]
            lor = lor if np.isfinite(lor) else np.nan  # undefined, not +-inf, in the table
            rows.append({"scope": scope, "contrast": f"pos{k}_vs_pos0", "observed_pp": diff,
                         "p": float(perm_pvalue(diff, 100 * (p_null[:, k] - p_null[:, 0])[:, None])[0]),
                         "log_or": lor,
                         "p_log_or": float(perm_pvalue(lor, lor_null[:, None])[0]) if np.isfinite(lor) else np.nan,
                         "reps": config.permutation_reps, "n": int(n[[0, k]].sum())})
        itt = float(itt_from_counts(w, n))
        rows.append({"scope": scope, "contrast": "mid_vs_rand", "observed_pp": itt,
                     "p": float(perm_pvalue(itt, itt_from_counts(nw, nn)[:, None])[0]),
                     "log_or": np.nan, "p_log_or": np.nan, "reps": config.permutation_reps, "n": int(n.sum())})
    return pd.DataFrame(rows)


@table("speaking_glm", columns=["term", "or", "ci_low", "ci_high", "p"],
    title="Speaking position in a cluster-robust logit with mode, difficulty and model effects",
    section="robustness",
    inference=(
        infer("position_or", ("term",), "or", ("ci_low", "ci_high"), "p", method="method"),
    ),
)
def speaking_glm(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Cluster-robust logit with position indicators (ref. 0) and mode/difficulty/model FEs."""
    prep = prepared(data)
    ok = prep.imp_pos >= 0
    if not ok.any():
        raise StatsUnavailable("no game has an impostor_speaking_position in 0-3")
    mat0, names0 = design_codes(prep.imp_pos[ok], ref=0, levels=[0, 1, 2, 3])
    blocks = [(mat0, [f"pos{k}_vs_pos0" for k in names0])]
    for vals, pref in ((prep.mode[ok], MODES), (prep.difficulty[ok], DIFFICULTIES), (prep.imp_model[ok], ())):
        lv = ordered_levels(vals, pref)
        if len(lv) > 1:
            mat, names = design_codes(vals, levels=lv)
            blocks.append((mat, [f"fe:{x}" for x in names]))
    X, names = with_intercept(*blocks)
    terms = [t for t in names if t.startswith("pos")]
    fit = inference_fit(prep.y[ok], X, names, prep.exp_code[ok], "speaking_glm", config, paper="cluster", terms=terms)
    return pd.DataFrame([{"term": t, **fit.wald(t, config.alpha), "n": fit.n, **fit_columns(fit)} for t in terms])

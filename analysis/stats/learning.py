"""M.8's "learning coefficient" and the decline over game index.

M.8 (Mechanism 3): "Homogeneous games improve over time (learning coefficient +0.023), whereas
team-aware games degrade (-0.018) ... By game 30 within an experimental block, team-aware
impostor success rates decline by 19% from initial levels, versus a 6% improvement in
homogeneous mode." The paper gives neither the scale of the coefficient nor the model, and its
numbers do not fit together on either scale: per game on the probability scale, -0.018 x 30
games is -54 points, not -19%; per game on the logit scale, at a 40% win rate it is about -30%
and +0.023 at 45% about +38%, not +6% (docs/analysis.md).

Defined here, per mode: ``learning_coef`` = the change in the log-odds of an impostor win per
game of the experiment's schedule (``game_index``), from a logit with FE_experiment and, where
identified, FE_word_pair (the schedule plays pair i mod K at game i, so game index and word pair
are confounded; the pair effects are identified apart from the index only where pairs recur at
different indices, i.e. more games than pairs in a tier; otherwise they are left out and the
``note`` says the slope includes pair difficulty). ``change_30_pct`` = the relative change of
the win rate from game 0 to game 30 the slope implies at the mode's mean win rate,
100 (expit(a + 30 b) / expit(a) - 1), a = logit(mean win rate); its interval maps the slope's.
Fit and inference as ``equation1``: games of experiments (and, with pair effects, word pairs)
with a constant outcome dropped and counted in the ``note``; CR2 by experiment, t on
Bell-McCaffrey df (3.8% rejections of a true null at the demo's 6-12 experiments of 8 games).
Players are stateless across games (every game's prompts start afresh), so the true coefficient is 0 by construction; a slope that is not
is schedule confounding, provider drift or chance.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import sparse, special, stats

from impostor_bench.analysis.stats._base import MODES, StatsUnavailable, design_codes, ordered_levels, prepared, table
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats import equation1 as eq1
from impostor_bench.analysis.stats.equation1 import fit_equation1, two_way_dummies
from impostor_bench.analysis.stats._separation import constant_outcome, drop_flat_groups, flat_note
from impostor_bench.analysis.stats.session import Analysis

COLUMNS = ["mode", "learning_coef", "ci_low", "ci_high", "p", "change_30_pct", "change_30_ci_low",
           "change_30_ci_high", "n", "n_clusters", "pair_fe", "method", "note"]
HORIZON = 30


def _expit(x):
    return special.expit(x)  # no overflow warning at the far end of a wide interval


def _pairs_recur(idx: np.ndarray, pair: np.ndarray) -> bool:
    """Whether some word pair is played at two different game indices (else pair FE absorb the index)."""
    return bool((pd.Series(idx).groupby(pair).nunique() > 1).any())


@table("learning", columns=COLUMNS,
    title="M.8 learning coefficient per mode: log-odds change per game of the schedule, and the change by game 30",
    section="robustness",
    inference=(
        infer("learning_coef", ("mode",), "learning_coef", ("ci_low", "ci_high"), "p", method="method"),
        infer("change_30", ("mode",), "change_30_pct", ("change_30_ci_low", "change_30_ci_high"), method="method",
              bounds=(-100.0, math.inf)),  # a relative change in %: -100 (to zero) and up, not 0-100
    ),
)
def learning(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Per mode: the per-game log-odds slope of impostor wins over the schedule, with both FEs."""
    prep = prepared(data)
    g = prep.games
    if "game_index" not in g.columns:
        raise StatsUnavailable("games table has no game_index")
    idx_all = pd.to_numeric(g["game_index"], errors="coerce").to_numpy(float)
    pair_all = g["pair_id"].astype(object).to_numpy() if "pair_id" in g.columns else np.full(prep.n, None, object)
    rows = []
    for mode in ordered_levels(prep.mode, MODES):
        sel = (prep.mode == mode) & np.isfinite(idx_all)
        idx, pair, exp, y = idx_all[sel], pair_all[sel], prep.exp_code[sel], prep.y[sel]
        if len(np.unique(idx)) < 3 or len(np.unique(exp)) < 3:
            rows.append({"mode": mode, "note": "fewer than 3 game indices or 3 experiments"})
            continue
        pair_fe = "pair_id" in g.columns and _pairs_recur(idx, pair)
        constant = constant_outcome(y)
        if constant:
            rows.append({"mode": mode, "n": int(len(y)), "note": constant})
            continue
        keep, dropped = drop_flat_groups(y, {"experiment": exp, **({"word pair": pair} if pair_fe else {})})
        if pair_fe and keep.any() and not _pairs_recur(idx[keep], pair[keep]):
            pair_fe = False  # once the constant pairs are out, no pair recurs: experiment effects only
            keep, dropped = drop_flat_groups(y, {"experiment": exp})
        if not keep.any():
            rows.append({"mode": mode, "n": int(len(y)), "note": "not estimable: every experiment or word pair "
                         "has a constant outcome (no game is informative once the fixed effects are in)"})
            continue
        dropped["experiment"] = list(prep.exp_names[np.asarray(dropped["experiment"], np.int64)])
        flat = flat_note(dropped, int((~keep).sum()))
        rate = y.mean()  # the mode's win rate, over all its games (``change_30_pct``'s definition)
        idx, pair, exp, y = idx[keep], pair[keep], exp[keep], y[keep]
        if len(np.unique(exp)) < 3:
            rows.append({"mode": mode, "n": int(len(y)), "note": f"fewer than 3 experiments once {flat}"})
            continue
        n_fe = len(np.unique(exp)) + (len(pd.unique(pair)) if pair_fe else 0)
        big = len(y) * (2 + n_fe) > eq1.MAX_CELLS  # the sparse Newton fit (minutes and GiB dense)
        fe = two_way_dummies(exp, pair, as_sparse=big) if pair_fe else design_codes(exp)[0]
        names = ["const", "game_index"] + [f"fe:{i}" for i in range(fe.shape[1])]
        model = "logit slope per game with FE_experiment" + (" + FE_word_pair" if pair_fe else "")
        notes = [flat] if flat else []
        if not pair_fe:
            notes.append("no word pair recurs at another game index: FE_word_pair left out, the slope includes pair "
                         "difficulty")
        note = "; ".join(notes)
        if big:
            X = sparse.hstack([sparse.csr_matrix(np.column_stack([np.ones(len(y)), idx])),
                               sparse.csr_matrix(fe)], format="csr")
        else:
            X = np.hstack([np.ones((len(y), 1)), idx[:, None], fe])
        del fe  # memory: the dummies live on in X only
        try:
            fit = fit_equation1(y, X, names, {"experiment_id": exp}, f"learning ({mode})",
                                ("game_index",), model=model)["experiment_id"]
        except StatsUnavailable as e:
            rows.append({"mode": mode, "n": int(len(y)), "note": "; ".join([str(e), *notes])})
            continue
        w = fit.wald("game_index", config.alpha)
        half = stats.t.ppf(1 - config.alpha / 2, float(w.get("df", np.inf))) * w["se"]
        b, lo, hi = w["coef"], w["coef"] - half, w["coef"] + half
        a = np.log(rate / (1 - rate))
        change = [100 * (_expit(a + HORIZON * v) / _expit(a) - 1) for v in (b, lo, hi)]
        rows.append({"mode": mode, "learning_coef": b, "ci_low": lo, "ci_high": hi, "p": w["p"],
                     "change_30_pct": change[0], "change_30_ci_low": change[1], "change_30_ci_high": change[2],
                     "n": fit.n, "n_clusters": fit.n_clusters, "pair_fe": pair_fe,
                     "method": fit.method, "note": note})
    return pd.DataFrame(rows)

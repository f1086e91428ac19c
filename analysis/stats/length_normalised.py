"""Length-normalised outcomes (Appendix O.2, verbosity): each model's impostor outcomes with the
length of the descriptions held fixed.

A model that writes long descriptions may be caught more often as the impostor because long texts
give more away, not because it plays worse; a ranking by raw win rate then ranks verbosity.  Per
impostor model the table gives

* the median length of its valid descriptions (characters as the length rule counts them:
  :func:`impostor_bench.core.glyphs.visible_length`), the target a verbosity-matched run
  (``-T truncate_to``) takes, and of its impostor descriptions;
* its impostor win rate, raw and by length bin (the impostor's description at or below / above
  the pooled median impostor length: a model is compared with others at the same verbosity);
* its odds ratio against the reference model (the first in order) from the design logit of the
  impostor win on mode, tier and impostor model, without (``or_raw``) and with (``or_adj``)
  the length covariates: log(1 + characters) of the impostor's description(s) and the mean of
  the majority's.  ``or_adj`` has the project's inference: the experiment-clustered logit with
  CR2 standard errors and Bell-McCaffrey t intervals (``_regress.experiment_logit``).  One more
  row, ``length: impostor, per doubling``, is the length covariate's own odds ratio.

Works for any number of players and impostors: it reads the seats from the players table, and a
study of several group sizes adds a term per group size to both fits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import StatsUnavailable, note, ordered_levels, prepared, table
from impostor_bench.analysis.stats._regress import experiment_logit, fit_columns, with_intercept
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.core.glyphs import visible_length
from impostor_bench.core.records import DIFFICULTIES, MODES

#: The row of the impostor-length covariate's own odds ratio.
LENGTH_TERM = "length: impostor, per doubling"
REFERENCE_NOTE = "reference model (odds ratio 1)"


def seat_lengths(players: pd.DataFrame) -> pd.DataFrame:
    """game_id, model, role and ``chars`` (0 for an invalid description) of every seat."""
    valid = players["description_valid"].astype(bool).to_numpy()
    text = players["description"].astype(object).to_numpy()
    chars = np.array([visible_length(t) if ok and isinstance(t, str) else 0 for t, ok in zip(text, valid)], float)
    return pd.DataFrame({"game_id": players["game_id"].astype(object).to_numpy(),
                         "model": players["model"].astype(object).to_numpy(),
                         "role": players["role"].astype(object).to_numpy(), "valid": valid, "chars": chars})


def game_lengths(game_ids: pd.Series, seats: pd.DataFrame) -> pd.DataFrame:
    """Per game (in ``game_ids`` order): the impostors' mean log(1 + chars), the majority's, and the
    impostors' mean characters; NaN where the game has no such seat in the players table."""
    s = seats.assign(logc=np.log1p(seats["chars"]))
    imp = s[s["role"] == "impostor"].groupby("game_id")[["logc", "chars"]].mean()
    maj = s[s["role"] == "majority"].groupby("game_id")["logc"].mean()
    out = pd.DataFrame({"imp_log": imp["logc"], "imp_chars": imp["chars"], "maj_log": maj})
    return out.reindex(game_ids.astype(object).to_numpy()).reset_index(drop=True)


def _dummies(values: np.ndarray, levels: list, prefix: str) -> tuple[np.ndarray, list[str]]:
    cols = [(values == v).astype(float) for v in levels[1:]]
    return (np.column_stack(cols) if cols else np.zeros((len(values), 0))), [f"{prefix}={v}" for v in levels[1:]]


def _group_sizes(games: pd.DataFrame) -> np.ndarray:
    """Each game's ``players/impostors`` (an export without the columns: the paper's 4/1)."""
    n = games["n_players"].fillna(4).astype(int) if "n_players" in games else pd.Series(4, index=games.index)
    k = games["n_impostors"].fillna(1).astype(int) if "n_impostors" in games else pd.Series(1, index=games.index)
    return (n.astype(str) + "/" + k.astype(str)).to_numpy(dtype=object)


@table("length_normalised",
       columns=["model", "n_games", "median_chars", "imp_median_chars", "imp_win_pct", "imp_win_short_pct",
                "imp_win_long_pct", "or_raw", "or_adj", "ci_low", "ci_high", "p", "method", "n_clusters", "note"],
       title=("Impostor outcomes with description length controlled (Appendix O.2): median lengths (the "
              "truncate_to target), win rates by length bin, and each model's odds ratio against the reference "
              "without and with the length covariates"),
       section="beyond",
       inference=(infer("or_adj", ("model",), "or_adj", ("ci_low", "ci_high"), p="p"),), groups="any")
def length_normalised(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data)
    if data.players is None or len(data.players) == 0:
        raise StatsUnavailable("players table unavailable (description lengths)")
    seats = seat_lengths(data.players)
    lengths = game_lengths(prep.games["game_id"], seats)
    keep = lengths[["imp_log", "maj_log"]].notna().all(axis=1).to_numpy()
    if (~keep).any():
        note(data, f"length_normalised: {int((~keep).sum())} games without impostor and majority seats in the "
                   "players table are left out")
    if keep.sum() == 0:
        raise StatsUnavailable("no game has its seats in the players table")
    group = _group_sizes(prep.games)[keep]
    y, model = prep.y[keep], prep.imp_model[keep]
    mode, diff, exp = prep.mode[keep], prep.difficulty[keep], prep.exp_code[keep]
    L = lengths[keep].reset_index(drop=True)
    models = ordered_levels(model, ())
    if len(models) < 2:
        raise StatsUnavailable("one impostor model: no model to compare at equal length")
    blocks = [_dummies(mode, ordered_levels(mode, MODES), "mode"), _dummies(diff, ordered_levels(diff, DIFFICULTIES),
                                                                            "difficulty"),
              _dummies(model, models, "model"), _dummies(group, ordered_levels(group, ("4/1",)), "group")]
    terms = [f"model={m}" for m in models[1:]]
    X_raw, names_raw = with_intercept(*blocks)
    X_adj, names_adj = with_intercept(*blocks, (L["imp_log"].to_numpy(), ["imp_log"]),
                                      (L["maj_log"].to_numpy(), ["maj_log"]))
    raw = adj = None
    try:
        raw = experiment_logit(y, X_raw, names_raw, exp, "length_normalised (raw)", config.min_resid_clusters,
                               terms=terms)
    except StatsUnavailable as exc:
        note(data, f"length_normalised: raw odds ratios not computed: {exc}")
    try:
        adj = experiment_logit(y, X_adj, names_adj, exp, "length_normalised (length-adjusted)",
                               config.min_resid_clusters, terms=[*terms, "imp_log"])
    except StatsUnavailable as exc:
        note(data, f"length_normalised: length-adjusted odds ratios not computed: {exc}")
    cut = float(np.median(L["imp_chars"]))
    short = L["imp_chars"].to_numpy() <= cut
    rows = []
    for m in models:
        sel = model == m
        mine = seats[(seats["model"] == m) & seats["valid"]]["chars"]
        imp_mine = L["imp_chars"][sel]
        row = {"model": m, "n_games": int(sel.sum()),
               "median_chars": float(mine.median()) if len(mine) else np.nan,
               "imp_median_chars": float(imp_mine.median()),
               "imp_win_pct": 100 * float(y[sel].mean()),
               "imp_win_short_pct": 100 * float(y[sel & short].mean()) if (sel & short).any() else np.nan,
               "imp_win_long_pct": 100 * float(y[sel & ~short].mean()) if (sel & ~short).any() else np.nan}
        if m == models[0]:
            row |= {"or_raw": 1.0, "or_adj": 1.0, "note": REFERENCE_NOTE}
        else:
            if raw is not None:
                row["or_raw"] = raw.wald(f"model={m}", config.alpha)["or"]
            if adj is not None:
                w = adj.wald(f"model={m}", config.alpha)
                row |= {"or_adj": w["or"], "ci_low": w["ci_low"], "ci_high": w["ci_high"], "p": w["p"],
                        **fit_columns(adj)}
        rows.append(row)
    if adj is not None:
        w = adj.wald("imp_log", config.alpha, scale=np.log(2.0))  # log(1 + c) per doubling of c (c >> 1)
        rows.append({"model": LENGTH_TERM, "n_games": int(keep.sum()), "or_adj": w["or"], "ci_low": w["ci_low"],
                     "ci_high": w["ci_high"], "p": w["p"], **fit_columns(adj)})
    note(data, f"length_normalised: length bins split at the pooled median impostor description, {cut:g} "
               f"characters; or_adj adjusts for log(1 + characters) of the impostor's and the majority's "
               f"descriptions")
    return pd.DataFrame(rows)

"""Paper results that had no table: Appendix D's model x mode x difficulty win rates, detection
accuracy by difficulty, and the B.3 controls (iv) majority self-declaration by speaking
position and (v) semantic distance by difficulty, monotone and aligned with detection.

Every interval is design-based with experiments as the independent units: the rate interval
of ``rates.rate_columns`` (composition-adjusted by the design logit, else CR1 by experiment on the
logit scale, t(G-1); Clopper-Pearson over experiments at 0 or 1; none from fewer than three experiments), as for
Table 1.
Games, seats and ballots are never treated as independent. The semantic distance is a
property of each word pair (one value per pair, no sampling across experiments), so its
interval is a t interval over the pairs of a tier.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._base import ALL, DIFFICULTIES, MODES, StatsUnavailable, ordered_levels, prepared, table
from impostor_bench.analysis.stats._marginal import design_index
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.headline import rate_columns
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig

_RATE = ["imp_win_pct", "imp_win_ci_low", "imp_win_ci_high"]


def _keys(*cols) -> pd.Series:
    """Each row's tuple of ``cols``, one tuple object per distinct combination shared by its rows: a
    tuple per row held ~60 MB at 90,720 games. Equal tuples, so the same groups."""
    first: dict[tuple, int] = {}
    code = np.fromiter((first.setdefault(t, len(first)) for t in zip(*cols)), np.int64)
    tuples = np.empty(len(first), dtype=object)
    for i, t in enumerate(first):  # one by one: a list of tuples would be read as a 2-D array
        tuples[i] = t
    return pd.Series(tuples[code], dtype=object)


def _with_keys(rates: pd.DataFrame, names: list[str], counts: pd.Series) -> pd.DataFrame:
    out = rates.copy()
    out["n"] = counts.reindex(out.index).to_numpy()
    out.index = pd.MultiIndex.from_tuples(out.index, names=names)
    return out.reset_index()


def _order(df: pd.DataFrame, col: str, levels) -> pd.Series:
    rank = {v: i for i, v in enumerate([*levels, ALL])}
    return df[col].map(lambda v: rank.get(v, len(rank)))


@table("win_model_mode_difficulty", columns=["model", "mode", "difficulty", *_RATE, "n"],
    title=("Impostor win (%) by model x mode x difficulty (Appendix D), with rows over all modes and over all "
           "models; 95% interval with experiments as the units"),
    section="results",
    inference=(
        infer("imp_win", ("model", "mode", "difficulty"), "imp_win_pct",
          ("imp_win_ci_low", "imp_win_ci_high"), method="imp_win_ci_method", scale=100),
    ),
)
def win_model_mode_difficulty(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Impostor win % by impostor model x mode x difficulty (Appendix D), with the rows
    aggregated over modes (mode = ALL) and over models (model = ALL)."""
    prep = prepared(data)
    parts, X = [], design_index(prep)
    for model, mode in ((prep.imp_model, prep.mode), (prep.imp_model, np.full(prep.n, ALL, object)),
                        (np.full(prep.n, ALL, object), prep.mode)):
        keys = _keys(model, mode, prep.difficulty)
        r = rate_columns("imp_win", prep.y, np.ones(prep.n), prep.exp_code, keys, config.alpha, X,
                         config.min_resid_clusters)
        parts.append(_with_keys(r, ["model", "mode", "difficulty"], keys.value_counts()))
    out = pd.concat(parts, ignore_index=True)
    out["_m"], out["_d"] = _order(out, "mode", MODES), _order(out, "difficulty", DIFFICULTIES)
    out["_a"] = (out["model"] == ALL).astype(int)
    out = out.sort_values(["_a", "model", "_m", "_d"])
    return out.drop(columns=["_m", "_d", "_a"]).reset_index(drop=True)


def _majority_ballots(prep) -> pd.DataFrame:
    gi, seat = np.nonzero(prep.present & ~prep.is_imp)
    vote = prep.vote[gi, seat]
    return pd.DataFrame({"gi": gi, "exp": prep.exp_code[gi], "model": prep.model[gi, seat],
                         "difficulty": prep.difficulty[gi], "mode": prep.mode[gi],
                         "legal": ~np.isnan(vote) | (prep.ballot_class[gi, seat] == "self_vote"),
                         "correct": vote == prep.imp_seat[gi], "self_decl": prep.self_decl[gi, seat],
                         "position": prep.speak_pos[gi, seat] if prep.speak_pos is not None else np.nan})


@table("detection_by_difficulty", columns=["model", "difficulty", "det_acc_pct", "det_acc_ci_low",
                                           "det_acc_ci_high", "n_votes"],
    title=("Detection accuracy (%) by majority model and difficulty (model ALL = pooled); 95% interval with "
           "experiments as the units"),
    section="design",
    inference=(
        infer("det_acc", ("model", "difficulty"), "det_acc_pct",
          ("det_acc_ci_low", "det_acc_ci_high"), method="det_acc_ci_method", scale=100),
    ),
)
def detection_by_difficulty(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Detection accuracy (% of the majority seats' legal ballots naming the impostor) by
    majority model x difficulty, with model = ALL rows (the trend B.3 (v) checks)."""
    prep = prepared(data, need_players=True)
    b = _majority_ballots(prep)
    b = b[b["legal"]]
    if not len(b):
        raise StatsUnavailable("no legal majority ballot")
    parts = []
    for model in (b["model"].astype(object).to_numpy(), np.full(len(b), ALL, object)):
        keys = _keys(model, b["difficulty"].to_numpy())
        # CR1, as headline's det_acc: the composition-adjusted interval was wider here (1.60 vs 1.44 x the
        # sampling SD, planted, 120 x 40; docs/analysis.md)
        r = rate_columns("det_acc", b["correct"].to_numpy(), np.ones(len(b)), b["exp"].to_numpy(), keys.to_numpy(),
                         config.alpha)
        out = _with_keys(r, ["model", "difficulty"], keys.value_counts())
        parts.append(out.rename(columns={"n": "n_votes"}))
    out = pd.concat(parts, ignore_index=True)
    out["_d"], out["_a"] = _order(out, "difficulty", DIFFICULTIES), (out["model"] == ALL).astype(int)
    return out.sort_values(["_a", "model", "_d"]).drop(columns=["_d", "_a"]).reset_index(drop=True)


@table("negative_control_position", columns=["position", "self_decl_pct", "self_decl_ci_low", "self_decl_ci_high",
                                             "n_seats"],
    title=("Negative control (iv) of B.3: majority self-declaration (%) by speaking position, expected near zero "
           "and equal across positions"),
    section="design",
    inference=(
        infer("self_decl", ("position",), "self_decl_pct",
          ("self_decl_ci_low", "self_decl_ci_high"), method="self_decl_ci_method", scale=100),
    ),
)
def negative_control_position(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """B.3 (iv): majority self-declaration % by the seat's speaking position (0-3): near zero
    and the same at every position (it is also by mode in ``negative_controls``)."""
    prep = prepared(data, need_players=True)
    b = _majority_ballots(prep)
    b = b[b["position"].isin([0, 1, 2, 3])]
    if not len(b):
        raise StatsUnavailable("no majority seat has a speaking position")
    pos = b["position"].astype(int).to_numpy()
    r = rate_columns("self_decl", b["self_decl"].astype(float).to_numpy(), np.ones(len(b)), b["exp"].to_numpy(),
                     pos, config.alpha, design_index(prep).take(b["gi"].to_numpy()), config.min_resid_clusters)
    r["n_seats"] = pd.Series(pos).value_counts().reindex(r.index).to_numpy()
    out = r.rename_axis("position").reset_index().sort_values("position")
    out["spread_pp"] = out["self_decl_pct"].max() - out["self_decl_pct"].min()
    return out.reset_index(drop=True)


@table("positive_control", columns=["difficulty", "distance_mean", "distance_ci_low", "distance_ci_high", "n_pairs",
                                    "det_acc_pct", "distance_monotone", "detection_monotone", "aligned"],
    title=("Positive control (v) of B.3: semantic distance of the word pairs by difficulty (cosine, t interval "
           "over pairs) beside detection accuracy; both should fall from easy to expert"),
    section="design",
)
def positive_control(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """B.3 (v): semantic distance of the word pairs by difficulty (cosine distance of the two
    words' embeddings, the Fig. 3 embedder, which the command layer passes in as
    ``data.embedder``): monotone (decreasing from easy to expert) and aligned with a monotone
    (decreasing) detection accuracy by difficulty."""
    model = getattr(data, "embedder", None)
    if model is None:
        raise StatsUnavailable("no word embedder was given (impostor report passes the shipped word vectors; "
                               "a direct build_report call needs embedder=)")
    g = data.games
    need = ["pair_id", "difficulty", "majority_word", "impostor_word"]
    if any(c not in g.columns for c in need):
        raise StatsUnavailable(f"games lack {', '.join(c for c in need if c not in g.columns)}")
    pairs = g.loc[~g["pair_id"].duplicated().to_numpy(), need].astype(object)
    try:
        a = np.asarray(model.encode(pairs["majority_word"].tolist(), normalize_embeddings=True), float)
        b = np.asarray(model.encode(pairs["impostor_word"].tolist(), normalize_embeddings=True), float)
    except KeyError as exc:
        raise StatsUnavailable(f"no word vector for some words ({exc.args[0]})") from None
    pairs["distance"] = 1 - np.sum(a * b, axis=1)
    levels = ordered_levels(pairs["difficulty"], DIFFICULTIES)
    det = detection_by_difficulty(data, config)
    det = det[det["model"] == ALL].set_index("difficulty")["det_acc_pct"] if len(det) else pd.Series(dtype=float)
    rows = []
    for d in levels:
        v = pairs.loc[pairs["difficulty"] == d, "distance"].to_numpy(float)
        m = float(v.mean())
        half = stats.t.ppf(1 - config.alpha / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else np.nan
        rows.append({"difficulty": d, "distance_mean": m, "distance_ci_low": m - half, "distance_ci_high": m + half,
                     "n_pairs": int(v.size), "det_acc_pct": float(det.get(d, np.nan))})
    out = pd.DataFrame(rows)
    dist_mono = bool(np.all(np.diff(out["distance_mean"]) < 0))
    dd = out["det_acc_pct"].to_numpy(float)
    det_mono = bool(np.all(np.isfinite(dd)) and np.all(np.diff(dd) < 0))
    out["distance_monotone"] = dist_mono
    out["detection_monotone"] = det_mono
    out["aligned"] = dist_mono and det_mono
    rho = stats.spearmanr(out["distance_mean"], dd).statistic if len(out) > 2 and np.all(np.isfinite(dd)) else np.nan
    out["spearman_distance_detection"] = rho
    return out

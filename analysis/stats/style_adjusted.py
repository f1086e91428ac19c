"""Appendix O.2 style-aware metrics: length-normalised rates, talk share, and the mode and
model effects re-estimated adjusting for description length and hedging.

* ``style_metrics`` (per model): mean description length (words, characters), talk share
  (the seat's share of its game's description words; 25% = an equal share), hedging,
  suspicion and coordination language per 100 words, the raw impostor win rate and the
  same rate reweighted to the pooled length distribution (O.2 "counterfactual
  reweighting where each family's length distribution is matched to a common reference":
  quintiles of the impostor's description length, each model's win rate per quintile
  averaged with the pooled quintile shares).
* ``style_adjusted``: odds ratios of the impostor win for mode, difficulty and impostor
  model from a logit without and with the style covariates (log(1 + words) and hedges per
  100 words of the impostor and, averaged, of the majority seats); O.2 "run regression
  adjustments controlling for utterance length, hedging ... and verify whether model
  rankings persist". Intervals: the design bootstrap's multipliers applied to the
  experiments' score sums (one-step bootstrap, as ``ratings``); no Wald p-values.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy.stats import spearmanr

from impostor_bench.analysis.stats._base import N_SEATS, StatsUnavailable, note, ordered_levels, prepared, table
from impostor_bench.analysis.stats.declaration import WILD_PERCENTILE, infer, wide
from impostor_bench.analysis.stats._wild import Wild
from impostor_bench.analysis.stats.design_boot import multipliers
from impostor_bench.analysis.stats.language import seat_text
from impostor_bench.analysis.stats.resampling import replicate_matmul, percentile_ci
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.core.records import MODES, DIFFICULTIES


def _seat_style(data, prep):
    st = seat_text(data, prep)
    st["words"] = st["words"].fillna(0.0)
    st["chars"] = [len(s) if isinstance(s, str) else 0 for s in prep.description[st["gi"], st["seat"]]]
    tot = st.groupby("gi")["words"].transform("sum")
    st["talk_share_pct"] = 100 * st["words"] / tot.where(tot > 0)
    per100 = lambda c: 100 * st[c] / st["words"].where(st["words"] > 0)  # noqa: E731
    st["hedge_per100"], st["susp_per100"], st["coord_per100"] = per100("d_hedge"), per100("d_susp"), per100("d_coord")
    return st


@table("style_metrics", columns=["model", "words_mean", "chars_mean", "talk_share_pct", "hedge_per100",
                                 "susp_per100", "coord_per100", "imp_win_pct", "imp_win_len_matched_pct"],
    title=("Style-aware metrics (Appendix O.2): length, talk share, language rates per 100 words, impostor win "
           "raw and reweighted to the pooled length distribution"),
    section="beyond",
    inference=(
        *wide(("model",), "words_mean", "chars_mean", "talk_share_pct", "hedge_per100", "susp_per100",
               "coord_per100", "imp_win_pct"),
    ),
)
def style_metrics(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data, need_players=True)
    st = _seat_style(data, prep)
    models = sorted(set(st["model"].dropna().unique()), key=str)
    w = Wild(data, prep, config, models)
    out = w.frame({c: w.mean(st, c) for c in ("words", "chars", "talk_share_pct", "hedge_per100", "susp_per100",
                                               "coord_per100")}).rename(columns=lambda c: c.replace("words", "words_mean")
                                                                          .replace("chars", "chars_mean"))
    imp = st[st["role"] == "impostor"].copy()
    imp["win"] = prep.y[imp["gi"].to_numpy(np.int64)].astype(float)
    raw = w.frame({"imp_win_pct": w.mean(imp, "win", 100)})
    imp["bin"] = pd.qcut(imp["words"].rank(method="first"), 5, labels=False) if len(imp) >= 5 else 0
    share = imp["bin"].value_counts(normalize=True)
    cell = imp.groupby(["model", "bin"], observed=True)["win"].mean().unstack()
    cell.index = cell.index.astype(object)  # models as plain labels, as the other columns' index
    wts = cell.notna() * share.reindex(cell.columns).to_numpy()[None, :]
    matched = 100 * (cell.fillna(0) * wts).sum(axis=1) / wts.sum(axis=1).where(wts.sum(axis=1) > 0)
    partial = [m for m in cell.index if cell.loc[m].isna().any()]
    if partial:
        note(data, "style_metrics: length-matched impostor win renormalised over the length quintiles a model "
                   f"has games in ({', '.join(map(str, partial))})")
    out = out.join(raw).join(matched.rename("imp_win_len_matched_pct"))
    out["n_seats"] = st.groupby("model", observed=True).size().reindex(out.index)
    w.note_not_computed("style_metrics")
    return out.reset_index()


def _design(prep, st, adjusted: bool):
    """Game-level design matrix: mode, difficulty, impostor model (+ style covariates)."""
    g = pd.DataFrame({"mode": prep.mode, "difficulty": prep.difficulty, "model": prep.imp_model})
    X, names = [np.ones((prep.n, 1))], ["const"]
    for col, pref in (("mode", MODES), ("difficulty", DIFFICULTIES), ("model", ())):
        lv = ordered_levels(g[col], pref)
        for v in lv[1:]:
            X.append((g[col] == v).to_numpy(float)[:, None])
            names.append(f"{col}={v}")
    if adjusted:
        logw = np.zeros((prep.n, N_SEATS))
        hedge = np.zeros((prep.n, N_SEATS))
        logw[st["gi"], st["seat"]] = np.log1p(st["words"])
        hedge[st["gi"], st["seat"]] = st["hedge_per100"].fillna(0.0)
        imp = prep.is_imp
        for nm, arr in (("log_words", logw), ("hedge_per100", hedge)):
            X.append(arr[np.arange(prep.n), prep.imp_seat][:, None])
            names.append(f"impostor_{nm}")
            X.append((np.where(imp, 0, arr).sum(1) / 3.0)[:, None])
            names.append(f"majority_{nm}")
    return np.hstack(X), names


def _identified(X: np.ndarray) -> np.ndarray:
    """Columns kept in order while each adds rank (a term confounded with earlier ones is left out)."""
    keep = np.zeros(X.shape[1], bool)
    rank = 0
    gram = X.T @ X / len(X)  # rank of a column subset = rank of its Gram block (K x K, not N x K)
    for j in range(X.shape[1]):
        keep[j] = True
        r = np.linalg.matrix_rank(gram[np.ix_(keep, keep)], hermitian=True)
        if r > rank:
            rank = r
        else:
            keep[j] = False
    return keep


def _fit(prep, X, data, config, names, label):
    # statsmodels' Logit by Newton: the same MLE and inverse Hessian as its binomial GLM (to 1e-15
    # on 90,720 games), holding ~2 copies of the design instead of ~12 (29 vs 161 MiB)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # non-convergence becomes the note below
        fit = sm.Logit(prep.y.astype(float), X).fit(method="newton", disp=0, maxiter=100)
    lost: dict[str, str] = {}
    if not fit.mle_retvals.get("converged", True) or not np.all(np.isfinite(fit.params)):
        big = [str(n) for n, b in zip(names, fit.params) if not abs(b) <= 10]
        # the row's other fit may have converged and keep its printed OR: say which OR is missing
        why = (f"{label} OR not estimable: separation in the {label} fit ({', '.join(big)}: all or no impostor wins)"
               if big else f"{label} OR not estimable: the {label} fit did not converge")
        note(data, f"style_adjusted: the {label} fit did not converge: "
                   + (f"separation in {', '.join(big)} (all or no impostor wins); those odds ratios are not "
                      "estimable and are left empty" if big else "its odds ratios are not estimable and are left empty"))
        lost = {str(n): why for n in (big or names)}
    mu = fit.predict()
    scores = X * (prep.y - mu)[:, None]
    E = len(prep.exp_names)
    S = np.stack([np.bincount(prep.exp_code, weights=scores[:, k], minlength=E) for k in range(X.shape[1])], 1)
    reps = fit.params[None, :] + replicate_matmul(multipliers(data, prep, config), S) @ fit.cov_params()
    return fit.params, reps, lost


@table("style_adjusted", columns=["term", "or_raw", "ci_low_raw", "ci_high_raw", "or_adj", "ci_low", "ci_high",
                                  "rank_raw", "rank_adj", "note"],
    title=("Mode and model effects on the impostor win without and with adjustment for description length and "
           "hedging (Appendix O.2); CIs from the design bootstrap, ranks of the model terms"),
    section="beyond",
    inference=(
        infer("or_adj", ("term",), "or_adj", ("ci_low", "ci_high"), method=WILD_PERCENTILE),
        infer("or_raw", ("term",), "or_raw", ("ci_low_raw", "ci_high_raw"), method=WILD_PERCENTILE),
    ),
)
def style_adjusted(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Impostor-win odds ratios without and with length/hedging adjustment, and model ranks."""
    prep = prepared(data, need_players=True)
    st = _seat_style(data, prep)
    res: dict = {}
    lost_by: dict[bool, dict[str, str]] = {}
    for adj in (False, True):
        X, names = _design(prep, st, adj)
        keep = _identified(X)
        lost = [n for n, k in zip(names, keep) if not k]
        if lost:
            note(data, f"style_adjusted: terms confounded with earlier ones left out of the "
                       f"{'adjusted' if adj else 'raw'} fit: {', '.join(lost)}")
        if keep.sum() < 2:
            raise StatsUnavailable("no design factor varies")
        b, reps, lost_fit = _fit(prep, X[:, keep], data, config, np.array(names)[keep], "adjusted" if adj else "raw")
        res[adj] = dict(zip(np.array(names)[keep], zip(b, reps.T)))
        lost_by[adj] = lost_fit
    rows = []
    for term in [t for t in res[True] if t != "const"]:
        row = {"term": term}
        why = [lost_by[a][term] for a in (False, True) if term in lost_by[a]]
        if why:
            row["note"] = "; ".join(dict.fromkeys(why))
        for adj, suf in ((False, "raw"), (True, "adj")):
            if term in res[adj] and term not in lost_by[adj]:
                b, r = res[adj][term]
                lo, hi = percentile_ci(r[:, None], config.alpha)
                row[f"or_{suf}"] = float(np.exp(b))
                row["ci_low" if adj else "ci_low_raw"], row["ci_high" if adj else "ci_high_raw"] = np.exp(lo[0]), np.exp(hi[0])
        rows.append(row)
    out = pd.DataFrame(rows)
    for c in ("or_raw", "or_adj"):
        if c not in out.columns:
            out[c] = np.nan
    mdl = out["term"].str.startswith("model=")
    if mdl.sum() >= 1:
        out.loc[mdl, "rank_raw"] = out.loc[mdl, "or_raw"].rank(ascending=False, method="min")
        out.loc[mdl, "rank_adj"] = out.loc[mdl, "or_adj"].rank(ascending=False, method="min")
        both = mdl & out["or_raw"].notna() & out["or_adj"].notna()
        if both.sum() >= 3:
            rho = spearmanr(out.loc[both, "or_raw"], out.loc[both, "or_adj"]).statistic
            note(data, f"style_adjusted: impostor-model ranking before vs after the length/hedging adjustment: "
                       f"Spearman rho = {rho:.2f} over {int(both.sum())} models (reference level excluded)")
    return out

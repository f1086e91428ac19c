"""Tables 2/4 (odds ratios, Wald) and the E-values of Appendix B.3.

All ORs are for the impostor winning, from unadjusted logits fitted by maximum
likelihood (binomial GLM on aggregated cells, identical to the game-level logit):
* seat<k>_vs_seat0     -- impostor seat index k vs 0 (descriptive, counterbalanced)
* <mode>_vs_homogeneous -- each mode vs homogeneous
* size_per_10x          -- logit(P[win]) ~ log10(params_b of the impostor model); OR = exp(beta);
                           the row lists the models it used and left out (``analysis.stats.sizes``)
Wald 95% CIs exp(b -/+ z se) and two-sided Wald p.

E-values (VanderWeele & Ding 2017): for a risk ratio RR >= 1, E = RR + sqrt(RR (RR - 1))
(RR < 1 is inverted first). ``evalue`` follows the paper's B.3 convention: the OR is
taken as the RR (OR 1.71 -> 2.81), so the column reproduces the paper's numbers;
``evalue_or_as_rr`` is the same number under its old explicit name. Impostor win is a
common outcome (~45%), where the OR overstates the RR, so the conservative
common-outcome conversion RR ~ sqrt(OR) (VanderWeele 2017, Ann Intern Med) has its own
columns ``rr_common_outcome`` (= the older ``rr_approx``), ``evalue_common_outcome`` and
``evalue_ci_common_outcome``. ``evalue_ci*`` is the E-value of the CI limit closest to 1
(1 when the CI covers 1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats._base import MODES, StatsUnavailable, note, ordered_levels, prepared, table
from analysis.stats._regress import grouped_logit, with_intercept
from analysis.stats.sizes import size_view


def _cells(keys: np.ndarray, y: np.ndarray, mask=None):
    df = pd.DataFrame({"k": pd.Series(keys, dtype=object), "y": y})
    if mask is not None:
        df = df[mask]
    agg = df.groupby("k", sort=False)["y"].agg(["sum", "size"])
    return agg


def categorical_ors(keys: np.ndarray, y: np.ndarray, ref, label, alpha: float, what: str,
                    levels=None, mask=None) -> list[dict]:
    """ORs of each level vs ``ref`` (grouped logit with treatment coding)."""
    agg = _cells(keys, y, mask)
    if ref not in agg.index:
        raise StatsUnavailable(f"{what}: reference level {ref!r} has no games")
    lv = [l for l in (levels or ordered_levels(agg.index, [])) if l in agg.index and l != ref]
    if not lv:
        raise StatsUnavailable(f"{what}: only the reference level {ref!r} is present")
    agg = agg.loc[[ref] + lv]
    X, names = with_intercept((np.eye(len(lv) + 1)[:, 1:], [str(l) for l in lv]))
    fit = grouped_logit(agg["sum"].to_numpy(), agg["size"].to_numpy(), X, names, what)
    out = []
    for l in lv:
        w = fit.wald(str(l), alpha)
        out.append({"comparison": label(l), **w, "n": int(agg.loc[[ref, l], "size"].sum())})
    return out


def seat_ors(prep, alpha: float) -> list[dict]:
    return categorical_ors(prep.imp_seat, prep.y, 0, lambda s: f"seat{s}_vs_seat0", alpha, "seat ORs",
                           levels=[1, 2, 3])


def mode_ors(prep, alpha: float, mask=None) -> list[dict]:
    return categorical_ors(prep.mode, prep.y, "homogeneous", lambda m: f"{m}_vs_homogeneous", alpha,
                           "mode ORs", levels=ordered_levels(prep.mode, MODES), mask=mask)


def size_or(data, prep, config) -> dict:
    """size_per_10x on the games ``analysis.stats.sizes`` selects, listing the models used and left out."""
    try:
        members = size_view(data, config).fits["size_per_10x"]
    except StatsUnavailable as e:
        raise StatsUnavailable(f"size_per_10x: {e}") from None
    if members.omitted:
        raise StatsUnavailable(f"size_per_10x: {members.omitted} with params_b")
    ok = members.sel
    x = size_view(data, config).x
    df = pd.DataFrame({"x": x[ok], "y": prep.y[ok]}).groupby("x")["y"].agg(["sum", "size"]).reset_index()
    X, names = with_intercept((df["x"].to_numpy(), ["log10_params"]))
    fit = grouped_logit(df["sum"].to_numpy(), df["size"].to_numpy(), X, names, "size_per_10x")
    return {"comparison": "size_per_10x", **fit.wald("log10_params", config.alpha), "n": int(ok.sum()),
            **members.columns()}


@table("odds_ratios")
def odds_ratios(data, config) -> pd.DataFrame:
    prep = prepared(data)
    rows = []
    for part in (lambda: [size_or(data, prep, config)], lambda: seat_ors(prep, config.alpha),
                 lambda: mode_ors(prep, config.alpha)):
        try:
            rows += part()
        except StatsUnavailable as e:
            note(data, f"odds_ratios: {e}")
    return pd.DataFrame(rows)


def evalue_rr(rr) -> np.ndarray:
    """VanderWeele-Ding E-value of a risk ratio (inverted when < 1)."""
    rr = np.asarray(rr, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(rr < 1, 1 / rr, rr)
        return r + np.sqrt(r * (r - 1))


def evalue_ci(lo, hi, transform) -> np.ndarray:
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    covers = (lo <= 1) & (hi >= 1)
    limit = np.where(lo > 1, lo, hi)
    return np.where(covers, 1.0, evalue_rr(transform(limit)))


@table("evalues")
def evalues(data, config) -> pd.DataFrame:
    ors = odds_ratios(data, config)
    if len(ors) == 0:
        raise StatsUnavailable("no odds ratios")
    o = ors["or"].to_numpy(float)
    lo, hi = ors["ci_low"], ors["ci_high"]
    return pd.DataFrame({
        "comparison": ors["comparison"], "or": o,
        "evalue": evalue_rr(o),  # the paper's convention (B.3): OR taken as RR
        "evalue_ci": evalue_ci(lo, hi, lambda v: v),
        "evalue_or_as_rr": evalue_rr(o),  # old name of the same number, kept for readers of older bundles
        "evalue_ci_or_as_rr": evalue_ci(lo, hi, lambda v: v),
        "rr_approx": np.sqrt(o),  # old name of rr_common_outcome
        "rr_common_outcome": np.sqrt(o),
        "evalue_common_outcome": evalue_rr(np.sqrt(o)),
        "evalue_ci_common_outcome": evalue_ci(lo, hi, np.sqrt),
    })

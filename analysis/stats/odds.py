"""Tables 2/4 (odds ratios) and the E-values of Appendix B.3.

All ORs are for the impostor winning, from unadjusted logits (``_regress.inference_fit``):
* seat<k>_vs_seat0     -- impostor seat index k vs 0; computed only when the schedule drew the
                           seat per experiment (``design_checks.seat_refusal``): under the old
                           schedule seat k labels the same word pairs in every experiment
* <mode>_vs_homogeneous -- each mode vs homogeneous
* team_aware_vs_team_blind -- the paper's "team-aware underperforms team-blind"
* size_per_10x          -- logit(P[win]) ~ log10(params_b of the impostor model); OR = exp(beta);
                           the row lists the models it used and left out (``impostor_bench.analysis.stats.sizes``)
CIs and p: cluster-robust by experiment (CR2, t with Bell-McCaffrey df; ``method``, ``df`` and
``n_clusters`` columns); the mode rows take their residuals from the design logit with the
experiments' model composition (``_marginal``: the composition is fixed by the design, so it is
not sampling noise; the mode-only fit was 1.4x too wide), falling back to the mode-only fit
when there are too few experiments for the design fit;
``StatsConfig.paper_methods`` restores the paper's game-level Wald.

E-values (VanderWeele & Ding 2017): for a risk ratio RR >= 1, E = RR + sqrt(RR (RR - 1))
(RR < 1 is inverted first). ``evalue`` follows the paper's B.3 convention: the OR is
taken as the RR (OR 1.71 -> 2.81), so the column reproduces the paper's numbers;
``evalue_or_as_rr`` is the same number under its old explicit name. Impostor win is a
common outcome (~45%), where the OR overstates the RR, so the conservative
common-outcome conversion RR ~ sqrt(OR) (VanderWeele 2017, Ann Intern Med) has its own
columns ``rr_common_outcome`` (= the older ``rr_approx``), ``evalue_common_outcome`` and
``evalue_ci_common_outcome``. ``evalue_ci*`` is the E-value of the CI limit closest to 1
(1 when the CI covers 1); the CI is odds_ratios' (so its method).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import MODES, Prepared, StatsUnavailable, note, ordered_levels, prepared, table
from impostor_bench.analysis.stats import _marginal
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.core.modes import TEAM_MODES_BY_DISCLOSURE
from impostor_bench.analysis.stats._regress import fit_columns, inference_fit, with_intercept
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.design_checks import seat_refusal
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.sizes import size_view


def categorical_ors(keys: np.ndarray, y: np.ndarray, ref: Any, label: Callable[[Any], str], config: StatsConfig,
                    what: str, exp_code: np.ndarray, levels: Optional[Sequence] = None,
                    mask: Optional[np.ndarray] = None) -> list[dict]:
    """ORs of each level vs ``ref`` (treatment-coded logit, clustered by experiment)."""
    keys = pd.Series(keys, dtype=object).to_numpy()
    if mask is not None:
        keys, y, exp_code = keys[mask], y[mask], exp_code[mask]
    present = set(pd.unique(keys))
    if ref not in present:
        raise StatsUnavailable(f"{what}: reference level {ref!r} has no games")
    lv = [l for l in (levels or ordered_levels(keys, [])) if l in present and l != ref]
    if not lv:
        raise StatsUnavailable(f"{what}: only the reference level {ref!r} is present")
    keep = np.isin(keys, [ref] + lv)
    keys, y, exp_code = keys[keep], y[keep], exp_code[keep]
    X, names = with_intercept((np.stack([keys == l for l in lv], 1), [str(l) for l in lv]))
    fit = inference_fit(y, X, names, exp_code, what, config, terms=names[1:])
    n = pd.Series(keys).value_counts()
    return [{"comparison": label(l), **fit.wald(str(l), config.alpha), "n": int(n[ref] + n[l]), **fit_columns(fit)}
            for l in lv]


def seat_ors(prep: Prepared, config: StatsConfig) -> list[dict]:
    reason = None if config.paper_methods else seat_refusal(prep)
    if reason:
        raise StatsUnavailable(f"seat ORs: {reason}")
    return categorical_ors(prep.imp_seat, prep.y, 0, lambda s: f"seat{s}_vs_seat0", config, "seat ORs",
                           prep.exp_code, levels=[1, 2, 3])


def mode_ors(prep: Prepared, config: StatsConfig, mask: Optional[np.ndarray] = None) -> list[dict]:
    return categorical_ors(prep.mode, prep.y, "homogeneous", lambda m: f"{m}_vs_homogeneous", config,
                           "mode ORs", prep.exp_code, levels=ordered_levels(prep.mode, MODES), mask=mask)


#: Mode contrasts the paper states besides each mode vs homogeneous (Section 3 / Table 2): teammates
#: named (team-aware) vs not disclosed (team-blind), the ends of the core's disclosure order.
EXTRA_MODE_CONTRASTS = ((TEAM_MODES_BY_DISCLOSURE[-1], TEAM_MODES_BY_DISCLOSURE[0]),)


def _versus(ref: str) -> Callable[[Any], str]:
    return lambda m: f"{m}_vs_{ref}"


def mode_contrasts(data: Analysis, prep: Prepared, config: StatsConfig) -> list[dict]:
    """Each mode vs homogeneous and ``EXTRA_MODE_CONTRASTS``: marginal ORs with the design logit's
    CR2 residuals (``_marginal``); the mode-only fit (``mode_ors``) under ``paper_methods`` or
    when the design fit has fewer than ``min_resid_clusters`` experiments beyond its parameters."""
    levels = [m for m in ordered_levels(prep.mode, MODES)]
    pairs = [(m, "homogeneous") for m in levels if m != "homogeneous"] + [
        (a, b) for a, b in EXTRA_MODE_CONTRASTS if a in levels and b in levels]
    res = None
    if not config.paper_methods and "homogeneous" in levels:
        try:
            res = _marginal.design_residuals(prep, prep.mode, prep.exp_code)
            if res.G - res.K < config.min_resid_clusters:
                note(data, f"odds_ratios: mode rows from the mode-only fit: {res.G} experiments for the design "
                           f"logit's {res.K} parameters (G - K < {config.min_resid_clusters})")
                res = None
        except (StatsUnavailable, np.linalg.LinAlgError, ValueError, FloatingPointError) as e:
            note(data, f"odds_ratios: mode rows from the mode-only fit: design logit failed ({e})")
            res = None
    if res is None:
        rows = mode_ors(prep, config)
        for a, b in pairs[len(rows):]:
            rows += categorical_ors(prep.mode, prep.y, b, _versus(b), config, "mode ORs", prep.exp_code, levels=[a])
        return rows
    n = pd.Series(prep.mode).value_counts()
    rows = []
    for a, b in pairs:
        try:
            theta, se, df = _marginal.marginal_log_or(res, a, b)
            w = _marginal.wald_row(theta, se, df, config.alpha)
        except StatsUnavailable as e:
            note(data, f"odds_ratios: {a}_vs_{b} not computed: {e}")
            continue
        rows.append({"comparison": f"{a}_vs_{b}", **w, "n": int(n[a] + n[b]), "method": _marginal.METHOD,
                     "n_clusters": res.G})
    return rows


def size_or(data: Analysis, prep: Prepared, config: StatsConfig) -> dict:
    """size_per_10x on the games ``impostor_bench.analysis.stats.sizes`` selects, listing the models used and left out."""
    try:
        members = size_view(data, config).fits["size_per_10x"]
    except StatsUnavailable as e:
        raise StatsUnavailable(f"size_per_10x: {e}") from None
    if members.omitted:
        raise StatsUnavailable(f"size_per_10x: {members.omitted} with params_b")
    ok = members.sel
    x = size_view(data, config).x
    X, names = with_intercept((x[ok], ["log10_params"]))
    fit = inference_fit(prep.y[ok], X, names, prep.exp_code[ok], "size_per_10x", config, terms=["log10_params"])
    row = {"comparison": "size_per_10x", **fit.wald("log10_params", config.alpha), "n": int(ok.sum()),
           **fit_columns(fit), **members.columns()}
    if config.paper_methods:
        return row
    try:  # the slope's SE from the design logit's residuals (the models' departures from the line are fixed)
        res = _marginal.design_residuals(prep, prep.imp_model, prep.exp_code)
        if res.G - res.K < config.min_resid_clusters:
            raise StatsUnavailable(f"{res.G} experiments for the design logit's {res.K} parameters")
        models = pd.Series(x[ok]).groupby(pd.Series(prep.imp_model[ok], dtype=object).to_numpy()).first()
        slope, d = _marginal.slope_weights(res, models.to_dict(), models.index)
        se, df = _marginal.linear_se(res, d)
        w = _marginal.wald_row(slope, se, df, config.alpha)
    except (StatsUnavailable, np.linalg.LinAlgError, ValueError, FloatingPointError) as e:
        note(data, f"odds_ratios: size_per_10x from the size-only fit ({e})")
        return row
    return {**row, **w, "method": _marginal.METHOD_SLOPE, "n_clusters": res.G}


@table("odds_ratios",
    title=("Key effects: odds ratios with cluster-robust CIs (Tables 2 and 4); the primary test of each mode "
           "contrast (the bootstrap and permutation tables are robustness checks)"),
    section="paper",
    inference=(
        infer("or", ("comparison",), "or", ("ci_low", "ci_high"), "p", family="primary"),
    ),
    figures={"odds_ratios_forest": "robustness"},
)
def odds_ratios(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data)
    rows = []
    for part in (lambda: [size_or(data, prep, config)], lambda: seat_ors(prep, config),
                 lambda: mode_contrasts(data, prep, config)):
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


def evalue_ci(lo, hi, transform: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """E-value of the CI limit closest to 1 (1 where the CI covers 1), after ``transform`` (OR -> RR)."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    covers = (lo <= 1) & (hi >= 1)
    limit = np.where(lo > 1, lo, hi)
    return np.where(covers, 1.0, evalue_rr(transform(limit)))


@table("evalues",
    title="E-values for unmeasured confounding (Appendix B.3)",
    section="robustness",
)
def evalues(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    ors = odds_ratios(data, config)
    if len(ors) == 0:
        raise StatsUnavailable("no odds ratios")
    o = ors["or"].to_numpy(float)
    lo, hi = ors["ci_low"], ors["ci_high"]
    return pd.DataFrame({
        "comparison": ors["comparison"], "or": o, "ci_method": ors["method"],
        "evalue": evalue_rr(o),  # the paper's convention (B.3): OR taken as RR
        "evalue_ci": evalue_ci(lo, hi, lambda v: v),
        "evalue_or_as_rr": evalue_rr(o),  # old name of the same number, kept for readers of older bundles
        "evalue_ci_or_as_rr": evalue_ci(lo, hi, lambda v: v),
        "rr_approx": np.sqrt(o),  # old name of rr_common_outcome
        "rr_common_outcome": np.sqrt(o),
        "evalue_common_outcome": evalue_rr(np.sqrt(o)),
        "evalue_ci_common_outcome": evalue_ci(lo, hi, np.sqrt),
    })

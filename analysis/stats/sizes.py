"""Which models each size fit uses, and why it leaves the others out (Tables 2 and 10).

A size fit never drops a model silently: :func:`size_fits` decides, once per data and
config, the games of every fit (``size_per_10x`` of the odds ratios, and the scaling
fits ``overall_no_provider``, ``overall_provider_fe``, ``within_<family>``) together
with one row per model in the fit's scope saying whether it is used and, if not, why.
The fits select their games from here, so what is listed is what was fitted.  The rows
are the ``size_fit_models`` table of the report (:mod:`impostor_bench.analysis.stats.size_fit_models`); the
fits' own rows carry ``models_used`` / ``models_left_out`` / ``models_estimated``.

Sizes marked ``params_source = estimated`` in models.csv are used unless
``StatsConfig.estimated_params`` is False (docs/analysis.md says why).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import Prepared, StatsUnavailable, memo, models_meta, note, ordered_levels, prepared
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.session import Analysis

NOT_IN_MODELS = "not in models.csv"
NO_PARAMS = "no params_b"
ESTIMATED_EXCLUDED = "estimated params_b excluded by config (estimated_params=False)"
NO_PROVIDER = "no provider"
COLUMNS = ["fit", "model", "used", "reason", "params_b", "params_source", "provider", "family", "n_games"]


@dataclass
class SizeFit:
    """One size fit: the games it uses and the model rows of its scope."""

    name: str
    table: str  # odds_ratios | scaling
    sel: np.ndarray
    rows: list[dict] = field(default_factory=list)
    omitted: Optional[str] = None  # why the whole fit cannot run (then every row says so)

    def columns(self) -> dict[str, object]:
        """The membership columns added to the fit's row of its table."""
        used = [r for r in self.rows if r["used"]]
        left = [r for r in self.rows if not r["used"]]
        return {"models_used": "; ".join(r["model"] for r in used),
                "models_left_out": "; ".join(f"{r['model']} ({r['reason']})" for r in left),
                "models_estimated": "; ".join(r["model"] for r in used if r["params_source"] == "estimated")}


@dataclass
class SizeView:
    x: np.ndarray  # (N,) log10(params_b) of each game's impostor model, NaN when not usable
    meta: pd.DataFrame
    reason: dict[str, str]  # model -> why its size is not used (absent: usable)
    provider: np.ndarray
    family: np.ndarray
    fits: dict[str, SizeFit] = field(default_factory=dict)


def _meta(data: Analysis) -> pd.DataFrame:
    m = models_meta(data)
    src = m["params_source"] if "params_source" in m.columns else pd.Series(None, index=m.index, dtype=object)
    # exports written before params_source existed: a stated size counts as published; "simulated" =
    # impostor simulate's illustrative sizes (the truth of its planted size effect, used like published ones)
    m["params_source"] = [None if not np.isfinite(p) else (s if s in ("published", "estimated", "simulated")
                                                           else "published")
                          for p, s in zip(m["params_b"].to_numpy(float), src.astype(object))]
    return m


def size_reason(meta: pd.DataFrame, model: str, estimated_params: bool) -> Optional[str]:
    """Why ``model``'s size cannot enter a fit (None when it can)."""
    if model not in meta.index:
        return NOT_IN_MODELS
    if not np.isfinite(meta.at[model, "params_b"]):
        return NO_PARAMS
    if meta.at[model, "params_source"] == "estimated" and not estimated_params:
        return ESTIMATED_EXCLUDED
    return None


def _row(view: SizeView, prep: Prepared, fit: str, model: str, sel: np.ndarray, reason: Optional[str]) -> dict:
    meta = view.meta
    known = model in meta.index
    games = prep.imp_model == model
    return {"fit": fit, "model": model, "used": reason is None and bool((sel & games).any()), "reason": reason,
            "params_b": meta.at[model, "params_b"] if known else np.nan,
            "params_source": meta.at[model, "params_source"] if known else None,
            "provider": meta.at[model, "provider"] if known else None,
            "family": meta.at[model, "family"] if known else None, "n_games": int(games.sum())}


def _fit(view: SizeView, prep: Prepared, name: str, table_name: str, scope: list, sel: np.ndarray,
         extra: Optional[dict[str, str]] = None, omitted: Optional[str] = None) -> SizeFit:
    f = SizeFit(name, table_name, sel, omitted=omitted)
    for m in scope:
        reason = view.reason.get(m) or (extra or {}).get(m)
        if omitted and reason is None:
            reason = f"fit omitted: {omitted}"
        f.rows.append(_row(view, prep, name, m, sel, reason))
    return f


def _build(data: Analysis, config: StatsConfig) -> SizeView:
    prep = prepared(data)
    meta = _meta(data)
    models = ordered_levels(prep.imp_model, ())
    reason = {m: r for m in models if (r := size_reason(meta, m, config.estimated_params)) is not None}
    params = pd.Series(prep.imp_model, dtype=object).map(meta["params_b"]).to_numpy(dtype=float)
    usable = ~pd.Series(prep.imp_model, dtype=object).isin(list(reason)).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(usable, np.log10(params), np.nan)
    lookup = lambda col: pd.Series(prep.imp_model, dtype=object).map(meta[col]).to_numpy(dtype=object)  # noqa: E731
    view = SizeView(x, meta, reason, lookup("provider"), lookup("family"))
    known = np.isfinite(x)

    def sizes(sel: np.ndarray) -> int:
        return len(np.unique(x[sel]))

    few = None if sizes(known) >= 2 else "fewer than two distinct model sizes"
    for name, tbl in (("size_per_10x", "odds_ratios"), ("overall_no_provider", "scaling")):
        view.fits[name] = _fit(view, prep, name, tbl, models, known, omitted=few)
    has_p = known & pd.notna(view.provider)
    no_p = {m: NO_PROVIDER for m in models if m in meta.index and meta.at[m, "provider"] is None}
    multi = [p for p in ordered_levels(view.provider[has_p], ()) if sizes(has_p & (view.provider == p)) >= 2]
    view.fits["overall_provider_fe"] = _fit(
        view, prep, "overall_provider_fe", "scaling", models, has_p, no_p,
        omitted=few or (None if multi else "no provider has two or more model sizes"))
    for fam in ordered_levels(view.family[pd.notna(view.family)], ()):
        scope = [m for m in models if m in meta.index and meta.at[m, "family"] == fam]
        sel = known & (view.family == fam)
        name = f"within_{fam}"
        view.fits[name] = _fit(view, prep, name, "scaling", scope, sel,
                               omitted=None if sizes(sel) >= 2 else
                               "a single model size" if sizes(sel) else "no model size")
    if reason:
        note(data, "size fits: impostor model(s) left out: " + "; ".join(f"{m} ({r})" for m, r in reason.items())
             + " (table size_fit_models)")
    est = sorted(m for m in models if m not in reason and meta.at[m, "params_source"] == "estimated")
    if est:
        note(data, f"size fits use estimated params_b for {', '.join(est)} (models.csv params_source); "
                   f"exclude them with estimated_params=False (--exclude-estimated-params)")
    return view


def size_view(data: Analysis, config: StatsConfig) -> SizeView:
    """The size inputs and fit memberships of ``data`` under ``config`` (computed once)."""
    v = memo(data, ("size_view", config.estimated_params), lambda: _try(data, config))
    if isinstance(v, StatsUnavailable):
        raise v
    return v


def _try(data: Analysis, config: StatsConfig) -> SizeView | StatsUnavailable:
    try:
        return _build(data, config)
    except StatsUnavailable as e:
        return e

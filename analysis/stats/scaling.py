"""Table 10 / Appendices J-L: size effect with provider control and within-family slopes.

All fits are logits of impostor win on log10(params_b of the impostor model) with mode
and difficulty fixed effects (eq. 4), cluster-robust by experiment_id (CR2, t with Bell-McCaffrey df)
(``_regress.experiment_logit``; ``method``/``n_clusters`` columns; not computed when G - K
is small or an SE degenerate; ``StatsConfig.paper_methods``: the paper's normal-theory
cluster-robust Wald); OR per 10x parameters = exp(beta):
* overall_no_provider   -- no provider FE (the cluster-robust analogue of Table 2's row)
* overall_provider_fe   -- plus provider fixed effects (identified only by providers with
                           >= 2 sizes; omitted with a note when none has)
* within_<family>       -- restricted to one family; families with a single size omitted.
Which models each fit uses and which it leaves out, and why (no params_b, estimated
size excluded by config, no provider), comes from ``impostor_bench.analysis.stats.sizes``: the rows
carry ``models_used`` / ``models_left_out`` / ``models_estimated``, the companion table
``size_fit_models`` one row per (fit, model).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import (DIFFICULTIES, MODES, Prepared, StatsUnavailable, design_codes, note, ordered_levels,
                                  prepared, table)
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats._regress import fit_columns, inference_fit, with_intercept
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.sizes import SizeFit, size_view

#: a fixed-effect factor beyond mode and difficulty: (its values on the fit's games, preferred levels, tag)
Factor = tuple[np.ndarray, Sequence, str]


def _fe_blocks(prep: Prepared, sel: np.ndarray, extra: Sequence[Factor] = ()) -> list[tuple[np.ndarray, list[str]]]:
    blocks: list[tuple[np.ndarray, list[str]]] = []
    for vals, pref, tag in ((prep.mode[sel], MODES, "mode"), (prep.difficulty[sel], DIFFICULTIES, "difficulty"),
                            *extra):
        lv = ordered_levels(vals, pref)
        if len(lv) > 1:
            mat, names = design_codes(vals, levels=lv)
            blocks.append((mat, [f"{tag}:{n}" for n in names]))
    return blocks


def _fit(prep: Prepared, x: np.ndarray, sel: np.ndarray, extra: Sequence[Factor], name: str, config: StatsConfig,
         members: SizeFit) -> dict:
    X, names = with_intercept((x[sel], ["log10_params"]), *_fe_blocks(prep, sel, extra))
    fit = inference_fit(prep.y[sel], X, names, prep.exp_code[sel], name, config, paper="cluster",
                        terms=["log10_params"])
    w = fit.wald("log10_params", config.alpha)
    return {"fit": name, "or_per_10x": w["or"], "ci_low": w["ci_low"], "ci_high": w["ci_high"], "p": w["p"],
            "coef": w["coef"], "se": w["se"], "n": fit.n, **fit_columns(fit),
            "n_models": int(len(set(prep.imp_model[sel]))), **members.columns()}


@table("scaling",
    title="Scaling with provider control and within-family slopes (Table 10)",
    section="paper",
    inference=(
        infer("or_per_10x", ("fit",), "or_per_10x", ("ci_low", "ci_high"), "p"),
    ),
)
def scaling(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data)
    view = size_view(data, config)
    x, provider = view.x, view.provider
    rows = []
    for name, f in view.fits.items():
        if f.table != "scaling":
            continue
        if f.omitted:
            if name == "overall_no_provider":
                raise StatsUnavailable(f"{f.omitted} with params_b")
            fam = name.removeprefix("within_")
            note(data, f"scaling: family {fam} omitted ({f.omitted})" if fam != name
                 else f"scaling: {name} omitted: {f.omitted}")
            continue
        extra: tuple[Factor, ...] = ((provider[f.sel], (), "provider"),) if name == "overall_provider_fe" else ()
        try:
            rows.append(_fit(prep, x, f.sel, extra, name, config, f))
        except StatsUnavailable as e:
            note(data, f"scaling: {e}")
    return pd.DataFrame(rows)

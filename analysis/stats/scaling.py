"""Table 10 / Appendices J-L: size effect with provider control and within-family slopes.

All fits are game-level logits of impostor win on log10(params_b of the impostor
model) with mode and difficulty fixed effects and cluster-robust SEs by experiment_id
(eq. 4); OR per 10x parameters = exp(beta):
* overall_no_provider   -- no provider FE (the cluster-robust analogue of Table 2's row)
* overall_provider_fe   -- plus provider fixed effects (identified only by providers with
                           >= 2 sizes; omitted with a note when none has)
* within_<family>       -- restricted to one family; families with a single size omitted.
Games whose impostor model lacks params_b (or provider/family for those fits) are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats._base import (DIFFICULTIES, MODES, StatsUnavailable, design_codes, impostor_log10_params,
                                  models_meta, note, ordered_levels, prepared, table)
from analysis.stats._regress import cluster_logit, with_intercept


def _fe_blocks(prep, sel, extra=()):
    blocks = []
    for vals, pref, tag in ((prep.mode[sel], MODES, "mode"), (prep.difficulty[sel], DIFFICULTIES, "difficulty"),
                            *extra):
        lv = ordered_levels(vals, pref)
        if len(lv) > 1:
            mat, names = design_codes(vals, levels=lv)
            blocks.append((mat, [f"{tag}:{n}" for n in names]))
    return blocks


def _fit(prep, x, sel, extra, name, config) -> dict:
    X, names = with_intercept((x[sel], ["log10_params"]), *_fe_blocks(prep, sel, extra))
    fit = cluster_logit(prep.y[sel], X, names, prep.exp_code[sel], name, config.min_clusters)
    w = fit.wald("log10_params", config.alpha)
    return {"fit": name, "or_per_10x": w["or"], "ci_low": w["ci_low"], "ci_high": w["ci_high"], "p": w["p"],
            "coef": w["coef"], "se": w["se"], "n": fit.n, "n_clusters": fit.n_clusters,
            "n_models": int(len(set(prep.imp_model[sel])))}


@table("scaling")
def scaling(data, config) -> pd.DataFrame:
    prep = prepared(data)
    meta = models_meta(data)
    x = impostor_log10_params(data, prep, "scaling")
    known = np.isfinite(x)
    provider = pd.Series(prep.imp_model, dtype=object).map(meta["provider"]).to_numpy(dtype=object)
    family = pd.Series(prep.imp_model, dtype=object).map(meta["family"]).to_numpy(dtype=object)
    rows = []

    def attempt(fn):
        try:
            rows.append(fn())
        except StatsUnavailable as e:
            note(data, f"scaling: {e}")

    def sizes(sel):
        return len(np.unique(x[sel]))

    if sizes(known) < 2:
        raise StatsUnavailable("fewer than two distinct model sizes with params_b")
    attempt(lambda: _fit(prep, x, known, (), "overall_no_provider", config))
    has_p = known & pd.notna(provider)
    multi = [p for p in ordered_levels(provider[has_p], ()) if sizes(has_p & (provider == p)) >= 2]
    if not multi:
        note(data, "scaling: overall_provider_fe omitted: no provider has two or more model sizes")
    else:
        attempt(lambda: _fit(prep, x, has_p, ((provider[has_p], (), "provider"),), "overall_provider_fe", config))
    for fam in ordered_levels(family[known & pd.notna(family)], ()):
        sel = known & (family == fam)
        if sizes(sel) < 2:
            note(data, f"scaling: family {fam} omitted (a single model size)")
            continue
        attempt(lambda: _fit(prep, x, sel, (), f"within_{fam}", config))
    return pd.DataFrame(rows)

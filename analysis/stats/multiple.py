"""Appendix B multiple comparisons: BH-FDR, Bonferroni and Holm (statsmodels
``multipletests``) applied within each family of hypotheses:

* primary           -- the five chi2 tests and the odds ratios of Table 2/4 (the family
                       the paper says "remain significant after correction");
* permutation       -- the permutation contrasts, one test per contrast: seat contrasts
                       (labels permuted within experiment) and, for each mode contrast, the
                       experiment-level test (mode is assigned to whole experiments, whose
                       games are correlated). The game-level test of the same contrast (the
                       paper's) stays in the ``permutation`` table but is not counted here:
                       two tests of one contrast in a family would count it twice;
* speaking_itt      -- the mode x difficulty pseudo-arm ITT cells (pooled row excluded), with
                       their randomisation p (speaking_itt's ``p``, which holds its size);
* opponent_baseline -- the model x difficulty cells (p_bh reproduces that table's q);
* negative_controls -- the controls with a p-value.
Hypotheses without a p-value are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from analysis.stats._base import ALL, table
from analysis.stats.categorical import chi2
from analysis.stats.odds import odds_ratios
from analysis.stats.recognition import opponent_baseline
from analysis.stats.robustness import negative_controls, permutation
from analysis.stats.speaking import speaking_itt


def adjust(p, alpha: float = 0.05) -> dict[str, np.ndarray]:
    p = np.asarray(p, float)
    return {"p_bh": multipletests(p, alpha=alpha, method="fdr_bh")[1],
            "p_bonferroni": multipletests(p, alpha=alpha, method="bonferroni")[1],
            "p_holm": multipletests(p, alpha=alpha, method="holm")[1]}


def _family(name, hyp, p):
    return pd.DataFrame({"family": name, "hypothesis": list(hyp), "p": np.asarray(p, float)})


def _family_of(name: str, frame: pd.DataFrame, *keys: str) -> pd.DataFrame:
    """One family from a table's ``p`` column; empty when the table has no rows (e.g. no
    players table for opponent_baseline), instead of failing on its missing columns."""
    if frame is None or len(frame) == 0 or "p" not in frame or any(k not in frame for k in keys):
        return _family(name, [], [])
    hyp = frame[keys[0]].astype(str)
    for k in keys[1:]:
        hyp = hyp + "/" + frame[k].astype(str)
    return _family(name, hyp, frame["p"])


@table("multiple_comparisons")
def multiple_comparisons(data, config) -> pd.DataFrame:
    fams = []
    c, o = chi2(data, config), odds_ratios(data, config)
    fams.append(_family("primary", list(c["test"]) + list(o["comparison"]), list(c["p"]) + list(o["p"])))
    pm = permutation(data, config)
    if "level" in pm:  # one test per contrast: drop the game-level duplicate of each mode contrast
        pm = pm[pm["level"] != "game"]
    fams.append(_family_of("permutation", pm, "contrast"))
    s = speaking_itt(data, config)
    s = s[s["mode"] != ALL] if "mode" in s else s
    fams.append(_family_of("speaking_itt", s, "mode", "difficulty"))
    ob = opponent_baseline(data, config)
    fams.append(_family_of("opponent_baseline", ob, "model", "difficulty"))
    nc = negative_controls(data, config)
    fams.append(_family_of("negative_controls", nc, "control"))
    out = []
    for f in fams:
        f = f[np.isfinite(f["p"].to_numpy(float))].reset_index(drop=True)
        if len(f) == 0:
            continue
        adj = adjust(f["p"], config.alpha)
        f = f.assign(**adj)
        f["reject_bh"] = f["p_bh"] < config.alpha
        f["family_size"] = len(f)
        out.append(f)
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()

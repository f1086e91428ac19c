"""Appendix B multiple comparisons: BH-FDR, Bonferroni and Holm (statsmodels
``multipletests``) applied within each family of hypotheses.

The families are built from the ``inference`` table (``impostor_bench.analysis.stats.inference``) and only
from its calibrated rows: each listed p-value carries its family (``Inference.family``:
``primary`` = the chi-square tests and odds ratios of Tables 2-4, ``permutation``,
``speaking_itt`` cells, ``opponent_baseline``, ``negative_controls``), and a p-value whose
method is a paper reproduction or was not computed never enters one (the
game-level tests in the old primary family made a false rejection in 66-82% of null runs).
Hypotheses without a p-value are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from impostor_bench.analysis.stats._base import table
from impostor_bench.analysis.stats.inference import inference
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig


def adjust(p, alpha: float = 0.05) -> dict[str, np.ndarray]:
    p = np.asarray(p, float)
    return {"p_bh": multipletests(p, alpha=alpha, method="fdr_bh")[1],
            "p_bonferroni": multipletests(p, alpha=alpha, method="bonferroni")[1],
            "p_holm": multipletests(p, alpha=alpha, method="holm")[1]}


@table("multiple_comparisons",
    title="Multiple-comparison corrections (Appendix B)",
    section="robustness", needs=("inference",),
)
def multiple_comparisons(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    inf = inference(data, config)
    if len(inf) == 0:
        return pd.DataFrame()
    inf = inf[inf["family"].notna() & inf["calibrated"].astype(bool)]
    inf = inf[np.isfinite(pd.to_numeric(inf["p"], errors="coerce").to_numpy(float))]
    out = []
    for name, f in inf.groupby("family", sort=False):
        hyp = f["quantity"].astype(str).str.split(":", n=1).str[1]  # "itt:cross_play/easy" -> "cross_play/easy"
        f = pd.DataFrame({"family": name, "hypothesis": hyp.to_numpy(), "p": f["p"].to_numpy(float),
                          "table": f["table"].to_numpy(), "method": f["method"].to_numpy()})
        f = f.assign(**adjust(f["p"], config.alpha))
        f["reject_bh"] = f["p_bh"] < config.alpha
        f["family_size"] = len(f)
        out.append(f)
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()

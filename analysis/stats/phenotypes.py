"""M.7's team phenotypes as a clustering of the models' Table 12 profiles.

M.7: "We identify four team phenotypes": fortress (low trust, low betrayal, high recovery),
market (moderate trust, controlled betrayal, high coordination), commune (high trust, high
betrayal, poor recovery), alliance (balanced trust and betrayal, moderate recovery, highest
collaboration). The paper names no method, and with nine models four groups are at most a
description. Defined here: each model's profile is its ``team_dynamics`` values of Trust Form.,
Betrayal Rate, Vote Coord., Collab. Success and Trust Recovery (each one every model has; Betrayal
Rate and Vote Coord. are required; without reasoning text Trust Form. is left out),
standardised across models (z-scores); k-means (scipy, 50 k-means++ starts, fixed seed) with k = 4
groups them; each group is named from its centroid by the paper's descriptions, in this order:
commune = the highest trust + betrayal, fortress = the lowest, of the other two market = the
higher Vote Coord., alliance = the other. ``phenotype_fit`` gives the silhouette of k = 2..5, so
the report shows whether four groups are supported at all (a silhouette below ~0.25: no
structure). Descriptive: no interval, no test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import StatsUnavailable, table
from impostor_bench.analysis.stats.table12 import team_dynamics

FEATURES = ("trust_form_pct", "betrayal_pct", "vote_coord_pct", "collab_success_pct", "trust_recovery_pct")
MIN_MODELS = 5
K = 4


def profiles(td: pd.DataFrame) -> pd.DataFrame:
    """Models x the features every model has, standardised across models."""
    t = td.set_index("model")[[c for c in FEATURES if c in td.columns]].astype(float)
    t = t.loc[:, t.notna().all()]
    if len(t) < MIN_MODELS or {"betrayal_pct", "vote_coord_pct"} - set(t.columns):
        raise StatsUnavailable(f"phenotypes need >= {MIN_MODELS} models with Betrayal Rate and Vote Coord. "
                               f"({len(t)} models, features {list(t.columns)})")
    sd = t.std(ddof=0).replace(0, np.nan)
    return ((t - t.mean()) / sd).fillna(0.0)


def silhouette(x: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette (Rousseeuw 1987) with Euclidean distances; written here because scikit-learn
    is not in the analysis stack (tests/analysis/test_analysis_layering.py); a singleton scores 0."""
    from scipy.spatial.distance import cdist

    d = cdist(x, x)
    groups = np.unique(labels)
    if not 1 < len(groups) < len(x):
        return np.nan
    s = np.zeros(len(x))
    for i in range(len(x)):
        own = labels == labels[i]
        if own.sum() == 1:
            continue
        a = d[i, own].sum() / (own.sum() - 1)
        b = min(d[i, labels == g].mean() for g in groups if g != labels[i])
        s[i] = (b - a) / max(a, b) if max(a, b) > 0 else 0.0
    return float(s.mean())


def cluster(z: pd.DataFrame, k: int, seed: int = 0, starts: int = 50) -> tuple[np.ndarray, float]:
    """(labels, silhouette) of k-means (scipy ``kmeans2``, k-means++ starts, the best of ``starts``
    by within-group sum of squares) on the standardised profiles."""
    from scipy.cluster.vq import kmeans2

    x = z.to_numpy(float)
    rng = np.random.default_rng(seed)
    best, best_ss = None, np.inf
    for _ in range(starts):
        cent, labels = kmeans2(x, k, minit="++", seed=rng)
        ss = float(((x - cent[labels]) ** 2).sum())
        if len(np.unique(labels)) == k and ss < best_ss - 1e-12:
            best, best_ss = labels, ss
    if best is None:
        raise StatsUnavailable(f"k-means found no {k} non-empty groups among {len(x)} models")
    _, best = np.unique(best, return_inverse=True)
    return best, silhouette(x, best)


def name_groups(z: pd.DataFrame, labels: np.ndarray) -> dict[int, str]:
    """Group -> phenotype by the centroid rules of the module docstring."""
    cent = z.groupby(labels).mean()
    tb = cent["betrayal_pct"] + (cent["trust_form_pct"] if "trust_form_pct" in cent else 0.0)
    names = {int(tb.idxmax()): "commune", int(tb.idxmin()): "fortress"}
    rest = [g for g in cent.index if g not in names]
    if rest:
        order = sorted(rest, key=lambda g: -cent.loc[g, "vote_coord_pct"])
        names[int(order[0])] = "market"
        for g in order[1:]:
            names[int(g)] = "alliance"
    return names


@table("phenotypes", columns=["model", "phenotype", "group", "silhouette_k4"],
    title="M.7 team phenotypes: k-means (k = 4) of the models' standardised Table 12 profiles",
    section="beyond",
)
def phenotypes(data, config) -> pd.DataFrame:
    """Each model's M.7 phenotype (k-means of its standardised Table 12 profile, k = 4)."""
    z = profiles(team_dynamics(data, config))
    labels, sil = cluster(z, K, config.seed)
    names = name_groups(z, labels)
    out = pd.DataFrame({"model": z.index, "phenotype": [names[int(g)] for g in labels], "group": labels,
                        "silhouette_k4": sil})
    for c in z.columns:
        out[f"z_{c}"] = z[c].to_numpy()
    return out


@table("phenotype_fit", columns=["k", "silhouette", "n_models", "features"],
    title="M.7: silhouette of k = 2..5 groups of the models' profiles (are four phenotypes supported?)",
    section="beyond",
)
def phenotype_fit(data, config) -> pd.DataFrame:
    """Silhouette of k-means with k = 2..5 on the same profiles: are four groups supported?"""
    z = profiles(team_dynamics(data, config))
    rows = []
    for k in range(2, min(5, len(z) - 1) + 1):
        rows.append({"k": k, "silhouette": cluster(z, k, config.seed)[1], "n_models": len(z),
                     "features": ", ".join(z.columns)})
    return pd.DataFrame(rows)

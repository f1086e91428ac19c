"""Issue 43, M.7 phenotypes: planted profiles of 12 models in the paper's four groups are recovered
and named by the centroid rules; the silhouette prefers k = 4; too few models are refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.stats._base import StatsUnavailable
from impostor_bench.analysis.stats.phenotypes import cluster, name_groups, profiles

# trust, betrayal, vote coordination, collaboration, recovery: the M.7 descriptions
PLANTED = {"fortress": (3.9, 4.7, 45.0, 24.0, 62.1), "market": (5.4, 8.1, 58.3, 30.0, 55.0),
           "commune": (10.9, 18.9, 36.4, 25.0, 45.7), "alliance": (6.9, 10.9, 44.0, 36.0, 51.6)}


def _td(seed=0, per=3, noise=0.05):
    rng = np.random.default_rng(seed)
    rows = []
    for name, prof in PLANTED.items():
        for i in range(per):
            v = np.asarray(prof) * (1 + noise * rng.standard_normal(5))
            rows.append({"model": f"{name}{i}", "trust_form_pct": v[0], "betrayal_pct": v[1], "vote_coord_pct": v[2],
                         "collab_success_pct": v[3], "trust_recovery_pct": v[4]})
    return pd.DataFrame(rows)


def test_planted_phenotypes_are_recovered_and_named():
    z = profiles(_td())
    labels, sil = cluster(z, 4)
    names = name_groups(z, labels)
    got = {m: names[int(g)] for m, g in zip(z.index, labels)}
    assert all(got[m] == m.rstrip("0123456789") for m in got), got
    assert sil > 0.5
    sils = {k: cluster(z, k)[1] for k in (2, 3, 4, 5)}
    assert max(sils, key=sils.get) == 4


def test_no_structure_and_too_few_models():
    rng = np.random.default_rng(3)
    flat = pd.DataFrame({"model": [f"m{i}" for i in range(12)], "trust_form_pct": rng.normal(6, 1, 12),
                         "betrayal_pct": rng.normal(10, 1, 12), "vote_coord_pct": rng.normal(50, 1, 12),
                         "collab_success_pct": rng.normal(30, 1, 12)})
    assert cluster(profiles(flat), 4)[1] < 0.4  # four groups in noise: a low silhouette says so
    with pytest.raises(StatsUnavailable, match=">= 5 models with Betrayal Rate"):
        profiles(_td(per=1))


def test_silhouette_equals_scikit_learns():
    from sklearn.metrics import silhouette_score

    from impostor_bench.analysis.stats.phenotypes import silhouette

    z = profiles(_td(seed=4, noise=0.3))
    for k in (2, 3, 4):
        labels, sil = cluster(z, k)
        assert sil == pytest.approx(silhouette_score(z.to_numpy(), labels)) == pytest.approx(silhouette(z.to_numpy(), labels))

"""Issue 41: what the report's memory fixes promise, each checked where it can fail.

* ``fit_equation1`` does not leave statsmodels' results alive: they hold the design several
  times over (whitened copy, pseudo-inverse) in a reference cycle that only a full collection
  frees; learning's five dense fixed-effects fits were all held at once (3.05 GiB peak on
  90,720 games). With automatic collection off, the memory still held after the call must be
  far below one copy of the design.
* Building the command line does not import Inspect (53 MB and seconds for every command,
  ``impostor report`` included), checked in a fresh interpreter.
* The tables, the report builder and the command's word vectors do not import pingouin or
  matplotlib (47 MB held through every table: pingouin pulls seaborn, xarray and matplotlib;
  figures import matplotlib after the tables), and the vectors load when first used.
* Logit by Newton, which the game-level fits now use, gives statsmodels' binomial GLM's fit.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats.equation1 import fit_equation1

ROOT = Path(__file__).resolve().parents[2]


def _design(n: int = 3000, n_exp: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    exp = np.repeat(np.arange(n_exp), n // n_exp)
    fe = (exp[:, None] == np.arange(1, n_exp)[None, :]).astype(float)
    x = rng.normal(size=n)
    X = np.hstack([np.ones((n, 1)), x[:, None], fe])
    eta = -0.2 + 0.3 * x + rng.normal(0, 0.5, n_exp)[exp]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    names = ["const", "x"] + [f"fe:{i}" for i in range(fe.shape[1])]
    return y, X, names, exp


def test_fit_equation1_leaves_no_copy_of_the_design_alive():
    y, X, names, exp = _design()
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()  # only an explicit collection may free the results' cycle
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fits = fit_equation1(y, X, names, {"experiment_id": exp}, "memory test", ("x",))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()
    fit = fits["experiment_id"]
    assert np.isfinite(fit.coef[names.index("x")])  # the fit itself happened
    # the returned fit keeps its K x K covariance and a few K-vectors; a leaked results object
    # holds the N x K design several times (~5 X.nbytes)
    assert held < 0.25 * X.nbytes, f"{held / 2**20:.1f} MiB still held after fit_equation1 (design {X.nbytes / 2**20:.1f} MiB)"


def test_building_the_command_line_does_not_import_inspect():
    code = ("import sys\nfrom impostor_bench.cli import build_parser\nbuild_parser()\n"
            "print(sorted(m for m in ('inspect_ai', 'mlflow', 'litellm') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_tables_do_not_import_pingouin_or_matplotlib():
    code = ("import sys\nimport impostor_bench.analysis.stats, impostor_bench.analysis.report.build\n"
            "import impostor_bench.commands.report as c\ne = c.word_embedder()\n"
            "print(sorted(m for m in ('pingouin', 'matplotlib', 'seaborn', 'xarray') if m in sys.modules),\n"
            "      getattr(e.model, '_table', 'no vectors'))")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    # nor the command's word vectors (32 MB; loaded when a semantic-distance table or Fig. 3 asks)
    assert out.stdout.strip() == "[] None", out.stdout


def test_correlate_without_inference_gives_pingouins_r_and_rho():
    import pingouin as pg

    from impostor_bench.analysis.stats.correlations import correlate

    rng = np.random.default_rng(3)
    for k in range(40):
        n = int(rng.integers(4, 12))
        x, y = rng.normal(size=n), rng.normal(size=n)
        if k % 2:
            x, y = np.round(x, 1), np.round(x + y, 0)  # ties
        lean, full = correlate(x, y, inference=False), correlate(x, y)
        assert lean["pearson_r"] == float(pg.corr(x, y, method="pearson")["r"].iloc[0]) == full["pearson_r"]
        assert lean["spearman_rho"] == float(pg.corr(x, y, method="spearman")["r"].iloc[0]) == full["spearman_rho"]
        assert list(lean) == list(full)  # the same columns in the same order
        assert np.isnan(lean["pearson_ci_low"]) and np.isfinite(full["pearson_ci_low"])


def test_logit_newton_gives_the_binomial_glm_fit_and_two_way_sandwich():
    import statsmodels.api as sm

    from impostor_bench.analysis.stats._regress import two_way_logit

    rng = np.random.default_rng(5)
    n, k = 4000, 5
    X = np.column_stack([np.ones(n), (rng.random((n, k - 1)) < 0.4).astype(float)])
    ge, gp = np.repeat(np.arange(80), n // 80), rng.integers(0, 30, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ rng.normal(0, 0.4, k)) - rng.normal(0, 0.3, 80)[ge]))).astype(float)
    glm = sm.GLM(y, X, family=sm.families.Binomial()).fit(cov_type="cluster",
                                                          cov_kwds={"groups": np.column_stack([ge, gp])})
    fit = two_way_logit(y, X, [f"x{j}" for j in range(k)], ge, gp, "test", min_resid_clusters=1)
    assert np.allclose(fit.coef, glm.params, rtol=1e-10, atol=1e-12)
    assert np.allclose(fit.cov, glm.cov_params(), rtol=1e-9, atol=1e-15)


def test_lsm_rows_in_blocks_gives_the_bits_of_the_whole_formula():
    from impostor_bench.analysis.stats import _text as tx
    from impostor_bench.analysis.stats.language import LSM_BLOCK, lsm_rows

    rng = np.random.default_rng(1)
    prof = 100 * rng.dirichlet(np.ones(9), size=500) * (rng.random((500, 1)) < 0.9)  # some all-zero profiles
    n = 2 * LSM_BLOCK + 123  # several blocks and a short tail
    x, y = rng.integers(0, 500, n), rng.integers(0, 500, n)
    whole = np.mean(1 - np.abs(prof[x] - prof[y]) / (prof[x] + prof[y] + tx.LSM_EPS), axis=1)
    assert np.array_equal(lsm_rows(prof, x, y), whole)
    one = lsm_rows(prof, x[:5], y[:5])  # and each row is _text.lsm of its two profiles
    assert np.allclose(one, [tx.lsm(prof[a], prof[b]) for a, b in zip(x[:5], y[:5])], rtol=0, atol=1e-12)


def test_paper_checks_keys_share_one_tuple_per_combination():
    """``paper_checks._keys``: the same tuples, in the same rows, as one tuple per row (so the same
    groups and counts), but one tuple object per distinct combination (~60 MB less at 90,720 games)."""
    from impostor_bench.analysis.stats.paper_checks import _keys

    rng = np.random.default_rng(3)
    a = rng.choice(np.array(["m1", "m2", None, "m3"], dtype=object), 5000)
    b = rng.choice(np.array(["easy", "medium", "hard"], dtype=object), 5000)
    got, want = _keys(a, b), pd.Series(list(zip(a, b)), dtype=object)
    assert got.tolist() == want.tolist()
    assert got.value_counts().to_dict() == want.value_counts().to_dict()
    assert len({id(t) for t in got}) == len(set(want)) == 12
    assert _keys(np.array([], object), np.array([], object)).empty

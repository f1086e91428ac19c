"""Vectorised resampling: experiment-level bootstraps and exact-design permutations.

Two bootstraps (``replicate_totals``; ``StatsConfig.bootstrap`` picks the default): the
design bootstrap (``design_boot``, default) and the paper's block bootstrap below.

No Python loop runs over replicates. The block bootstrap draws, once per
(data, seed, reps), an (R, E) matrix of how often each experiment is drawn;
every bootstrapped quantity is then a ratio of matrix products ``W @ sums`` where
``sums`` are per-experiment totals. Experiments are resampled with replacement
*within* their mode x difficulty cell (the design fixes how many experiments each
cell has), which makes the bootstrap of every cell-level quantity (speaking ITT
per cell) and of pooled quantities coherent with a single draw.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from impostor_bench.analysis.stats._base import Prepared, memo
from impostor_bench.analysis.stats.config import StatsConfig


def bootstrap_weights(data, prep: Prepared, config: StatsConfig) -> np.ndarray:
    """(R, E) counts of each experiment in each replicate (stratified by cell): uint8, or uint16 for
    a count past 255 (a quarter of float32's 29 MB held through the report at 10,000 replicates;
    every product with it, ``replicate_matmul``, converts the same integers to float64)."""

    def make():
        rng = np.random.default_rng([config.seed, 1])
        E = len(prep.exp_names)
        W = np.zeros((config.bootstrap_reps, E), dtype=np.uint8)
        strata: dict[tuple, list[int]] = {}  # (mode, difficulty) -> experiment codes
        for e, key in enumerate(zip(prep.exp_mode, prep.exp_difficulty)):
            strata.setdefault(key, []).append(e)
        for key in sorted(strata, key=str):
            cols = np.asarray(strata[key])
            counts = rng.multinomial(len(cols), np.full(len(cols), 1 / len(cols)), size=config.bootstrap_reps)
            if counts.size and counts.max() > np.iinfo(W.dtype).max:
                W = W.astype(np.uint16)
            W[:, cols] = counts
        return W

    return memo(data, ("bootstrap_weights", config.seed, config.bootstrap_reps), make)


def replicate_totals(data, prep: Prepared, config: StatsConfig, x: np.ndarray, method: str | None = None):
    """Bootstrap replicates of the win totals and game totals over the games of each column
    of the (N, K) weight matrix ``x`` (integer weights, e.g. indicators of a cell, so that the
    observed totals are exact sums in any order): ``(wins (R, K), n (R, K))``.

    method "paper": experiments resampled within mode x difficulty (``bootstrap_weights``);
    "design": the experiment-level wild bootstrap of ``design_boot`` (game counts fixed).
    ``None`` = ``config.bootstrap``.
    """
    method = method or config.bootstrap
    x = np.asarray(x, float)
    if method == "paper":
        W = bootstrap_weights(data, prep, config)
        return replicate_matmul(W, exp_sums(prep, x, weights=prep.y)), replicate_matmul(W, exp_sums(prep, x))
    if method == "design":
        from impostor_bench.analysis.stats.design_boot import fitted_win_prob, multipliers

        resid = exp_sums(prep, x, weights=prep.y - fitted_win_prob(data, prep))
        wins = (prep.y.astype(float) @ x)[None, :] + replicate_matmul(multipliers(data, prep, config), resid)
        return wins, np.broadcast_to(x.sum(0)[None, :], wins.shape)
    raise ValueError(f"unknown bootstrap {method!r}; use design or paper")


def replicate_matmul(W: np.ndarray, S: np.ndarray, max_copy_bytes: int = 32 << 20, shift: float = 0.0) -> np.ndarray:
    """``W @ S`` for the float32 (R, E) replicate matrix and float64 (E, K) sums.  ``W @ S`` first
    copies all of W to float64 (605 MB at 10x the paper); past ``max_copy_bytes`` the product is
    taken a block of replicates at a time.  Blocks are large (>= 1024 rows and >= 2**24
    multiply-adds, no short tail), so OpenBLAS takes its general kernel, whose per-element sums
    do not depend on the number of rows; small products, and a single column of sums (a
    matrix-vector kernel), take other kernels whose last bits differ, so blocks are never
    small and one column is never blocked (tests/analysis/test_scale_paths.py)."""
    R, E = W.shape
    if R * E * 8 <= max_copy_bytes or S.shape[1] < 2:
        return (W.astype(np.float64) + shift) @ S if shift else W @ S
    rows = max(1024, -(-(1 << 24) // max(1, E * S.shape[1])))
    starts = list(range(0, R, rows))
    if len(starts) > 1 and R - starts[-1] < rows:  # the short tail joins the block before it
        starts.pop()
    out = np.empty((R, S.shape[1]))
    for i, j in zip(starts, starts[1:] + [R]):
        out[i:j] = (W[i:j].astype(np.float64) + shift) @ S if shift else W[i:j].astype(np.float64) @ S
    return out


def exp_sums(prep: Prepared, values: np.ndarray, mask: np.ndarray | None = None,
             weights: np.ndarray | None = None) -> np.ndarray:
    """Per-experiment sums of ``values`` (N,) or (N, K) over games where ``mask``, each game's
    row times ``weights`` (N,) when given (equal to passing ``values * weights[:, None]``, without
    that (N, K) copy)."""
    v = np.asarray(values, dtype=float)
    if mask is not None:
        v = v * (np.asarray(mask, bool)[:, None] if v.ndim == 2 else np.asarray(mask, bool))
    E = len(prep.exp_names)
    if v.ndim == 1:
        return np.bincount(prep.exp_code, weights=v if weights is None else v * weights, minlength=E)
    n = len(prep.exp_code)
    data = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    ind = sparse.csr_matrix((data, (prep.exp_code, np.arange(n))), shape=(E, n))  # (E, N) experiment indicator
    return np.asarray(ind @ v)


def percentile_ci(reps: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore"):
        lo = np.nanpercentile(reps, 100 * alpha / 2, axis=0)
        hi = np.nanpercentile(reps, 100 * (1 - alpha / 2), axis=0)
    return lo, hi


def perm_pvalue(observed: float | np.ndarray, null: np.ndarray) -> np.ndarray:
    """Two-sided Monte-Carlo p, (1 + #{|T*| >= |T|}) / (1 + R), per column of ``null`` (R, K)."""
    observed = np.atleast_1d(np.asarray(observed, float))
    null = np.asarray(null, float).reshape(null.shape[0], -1)
    tol = 1e-12 * np.maximum(1, np.abs(observed))
    ok = np.isfinite(null)
    with np.errstate(invalid="ignore"):  # non-finite replicates are excluded by ``ok``
        hits = ((np.abs(null) >= np.abs(observed) - tol) & ok).sum(0)
    return (1 + hits) / (1 + ok.sum(0))


def hypergeom_within(rng: np.random.Generator, group_sizes: np.ndarray, successes: np.ndarray,
                     reps: int) -> np.ndarray:
    """Successes falling in each group when labels are permuted within blocks.

    ``group_sizes`` (B, G): games of each group (e.g. seat) in each block (experiment);
    ``successes`` (B,): wins in each block. Permuting the group labels within a block
    makes the wins per group multivariate hypergeometric, so each replicate is an exact
    draw of the permutation distribution of the group totals. Returns (reps, G) totals.
    The loop runs over blocks (hundreds), never over replicates; blocks sharing the same
    (sizes, successes) are drawn together.
    """
    group_sizes = np.asarray(group_sizes, np.int64)
    successes = np.asarray(successes, np.int64)
    out = np.zeros((reps, group_sizes.shape[1]), dtype=np.int64)
    keys = np.column_stack([group_sizes, successes])
    uniq, inv, cnt = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    for row, c in zip(uniq, cnt):
        sizes, s = row[:-1], int(row[-1])
        if s == 0:
            continue
        if s == sizes.sum() or (sizes > 0).sum() < 2:  # degenerate: allocation is fixed
            fixed = sizes if s == sizes.sum() else (sizes > 0) * s
            out += int(c) * fixed[None, :]
            continue
        draws = rng.multivariate_hypergeometric(sizes, s, size=reps * int(c))
        out += draws.reshape(int(c), reps, -1).sum(0)
    return out


def within_experiment_perm(prep: Prepared, group: np.ndarray, levels, rng: np.random.Generator, reps: int):
    """Observed per-level win rates and their permutation null (labels permuted within experiment)."""
    onehot = np.stack([group == g for g in levels], 1).astype(float)
    sizes = exp_sums(prep, onehot).astype(np.int64)  # (E, G)
    wins = exp_sums(prep, prep.y).astype(np.int64)
    null_w = hypergeom_within(rng, sizes, wins, reps)  # (R, G)
    n = sizes.sum(0)
    obs_w = (onehot * prep.y[:, None]).sum(0)
    return obs_w / n, null_w / n

"""Appendix B.2-B.3 robustness: block bootstrap, permutation tests and the cluster-robust
GLM (the sensitivity analyses and negative controls: ``impostor_bench.analysis.stats.controls``).

* bootstrap   -- percentile CIs of the overall impostor win rate, each mode's OR vs
                 homogeneous (marginal 2x2 OR, as in odds_ratios) and each model's
                 impostor win rate under both experiment-level bootstraps: "design"
                 (``design_boot``, wild bootstrap keeping each experiment's design point;
                 the default) and "paper" (experiments resampled within mode x
                 difficulty, ``resampling.bootstrap_weights``, Appendix B.2).
* permutation -- a test permutes only what the schedule randomised. Seat
                 contrasts: impostor-seat labels permuted within experiment_id, only when the
                 schedule drew the seat per experiment (``design_checks``; otherwise a note says
                 why not). Mode contrasts: experiment-level mode labels permuted preserving
                 counts (``*_experiment_level``; whole experiments carry a mode). The
                 game-level mode test (the paper's) treats an experiment's games as
                 exchangeable across modes and rejects true nulls in a third of runs: it is
                 printed only with ``StatsConfig.paper_methods``. Statistic: difference
                 in impostor win rate (proportion); two-sided Monte-Carlo p with the +1
                 correction. Replicates are exact draws of the permutation distribution of
                 the group totals (multivariate hypergeometric), no per-replicate shuffles.
* cluster_robust -- logit of impostor win on the seat index (linear) with impostor-model,
                 difficulty and mode fixed effects; CR2 by experiment_id, t with Bell-McCaffrey df
                 (``_regress.experiment_logit``). The seat term only when seats were drawn per
                 experiment. Clustering by pair_id (the paper's second fit) ignores the
                 experiment clustering and is printed only with ``StatsConfig.paper_methods``.
                 (Experiment fixed effects, as in eq. 1, are collinear with mode and model.)
                 Difficulty is carried by its word pairs (every experiment of a tier plays the same
                 pairs), so the difficulty terms' SE, interval and p come from the same logit clustered
                 two-way by experiment and word pair (``_regress.two_way_logit``; estimand over a
                 population of pairs); without games.pair_id they are not computed. A tier's t df are
                 those of the two tiers its contrast compares (their pairs and experiments), and the
                 two-way covariance has its negative eigenvalues clipped rather than being refused;
                 its three sandwiches are CR2 (leverage-corrected) up to 100 clusters of each kind.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import (DIFFICULTIES, MODES, StatsUnavailable, design_codes, note, ordered_levels,
                                  prepared, require_reps, table)
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats._regress import (METHOD_TWO_WAY_CR2, fit_columns, inference_fit, two_way_logit,
                                                       with_intercept)
from impostor_bench.analysis.stats.categorical import DIFFICULTY_REFUSAL
from impostor_bench.analysis.stats.design_boot import t_halfwidth
from impostor_bench.analysis.stats.design_checks import seat_refusal
from impostor_bench.analysis.stats.config import BOOTSTRAPS, StatsConfig
from impostor_bench.analysis.stats.resampling import (exp_sums, hypergeom_within, percentile_ci, perm_pvalue, replicate_totals,
                                       within_experiment_perm)
from impostor_bench.analysis.stats.session import Analysis


#: One contrast, three verdicts on one page: which is primary, and why the others can differ.
PRIMARY_NOTE = ("mode contrasts: the primary test is Tables 2/4's (`odds_ratios`: the marginal OR with its SE from "
                "the design logit's residuals, so the model composition the design fixes is not counted as noise; "
                "CR2 by experiment, t on Bell-McCaffrey df); the bootstrap interval and the experiment-level "
                "permutation p are robustness checks and can disagree with it because they measure the noise "
                "differently (the bootstrap: its replicates' SE with t(G-1); the permutation: the difference in win "
                "rates against relabellings of whole experiments, whose model compositions differ between modes)")


def _odds(w, n):
    with np.errstate(invalid="ignore", divide="ignore"):
        return w / (n - w)


def _transform(kind: str, v):
    """Rates to the logit scale, ORs to the log scale (where the intervals are built)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.asarray(v, float)
        return np.log(v / (1 - v)) if kind == "rate" else np.log(v)


def _untransform(kind: str, t):
    t = np.asarray(t, float)
    return 1 / (1 + np.exp(-t)) if kind == "rate" else np.exp(t)


def design_interval(kind: str, estimate: float, replicates: np.ndarray, n_exp: int, alpha: float):
    """The design bootstrap's interval of one quantity: ``estimate`` +- t(G-1) x sqrt(G/(G-1))
    x the replicates' SD, on the logit (rate) or log (OR) scale, mapped back.

    A percentile interval of the Rademacher sign flips has no
    small-sample correction (G experiments carry only 2^G distinct replicates and residuals
    shrink by ~(G-1)/G), ignores the parameter space (a win-rate limit of -0.03) and covers
    88.7% per model at 120 experiments; G/(G-1) is the CR1 factor, t(G-1) the reference
    distribution of a variance estimated from G units. Returns (low, high, reason)."""
    if n_exp < 2:
        return np.nan, np.nan, "one experiment"
    t0 = float(_transform(kind, estimate))
    tr = _transform(kind, replicates)
    tr = tr[np.isfinite(tr)]
    if not np.isfinite(t0) or len(tr) < 10:
        return np.nan, np.nan, "estimate at the boundary of the parameter space"
    half = float(t_halfwidth(np.std(tr, ddof=1), n_exp, alpha))
    return float(_untransform(kind, t0 - half)), float(_untransform(kind, t0 + half)), None


_Totals = Callable[[np.ndarray, np.ndarray], np.ndarray]  # a bootstrap quantity from (..., K) win and game totals


def _rate_of(j: int) -> _Totals:
    return lambda w, n: w[..., j] / n[..., j]


def _odds_ratio_of(j: int, ref: int) -> _Totals:
    return lambda w, n: _odds(w[..., j], n[..., j]) / _odds(w[..., ref], n[..., ref])


@table("bootstrap",
    title=("Experiment-level bootstrap (Appendix B.2): `ci_low`/`ci_high` from the bootstrap named in "
           "`bootstrap`; `ci_*_design` = design bootstrap, `ci_*_paper` = the paper's block bootstrap. "
           "Robustness check: the primary test of a mode contrast is Tables 2/4's model-based OR (`odds_ratios`)"),
    section="robustness",
    inference=(
        infer("quantity", ("quantity",), "estimate", ("ci_low", "ci_high"), method="method"),
    ),
)
def bootstrap(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Both bootstraps of every quantity; ``ci_low``/``ci_high``/``se`` are ``config.bootstrap``'s.

    The design bootstrap's interval is ``design_interval`` (t(G-1), CR1 factor, logit/log
    scale, G = experiments behind the quantity: ``n_exp``); the paper's is the percentile
    interval of its block bootstrap, as in Appendix B.2 (for reproduction)."""
    prep = prepared(data)
    modes = ordered_levels(prep.mode, MODES)
    models = ordered_levels(prep.imp_model, ())
    has_modes = "homogeneous" in modes and len(modes) > 1
    if not has_modes:
        note(data, "bootstrap: mode ORs need homogeneous and at least one other mode")
    else:
        note(data, PRIMARY_NOTE)
    blocks = [np.ones((prep.n, 1))] + ([np.stack([prep.mode == m for m in modes], 1)] if has_modes else [])
    x = np.hstack(blocks + [np.stack([prep.imp_model == m for m in models], 1)]).astype(float)
    est_w, est_n = (x * prep.y[:, None]).sum(0), x.sum(0)
    exp_has = exp_sums(prep, x) > 0  # (E, K) experiments behind each column
    # (quantity, scale, columns of x behind it, its value from (wins, games) totals)
    quantities: list[tuple[str, str, list[int], _Totals]] = [("overall_imp_win_rate", "rate", [0], _rate_of(0))]
    if has_modes:
        h = 1 + modes.index("homogeneous")
        quantities += [(f"{m}_vs_homogeneous_or", "or", [1 + j, h], _odds_ratio_of(1 + j, h))
                       for j, m in enumerate(modes) if m != "homogeneous"]
    off = 1 + (len(modes) if has_modes else 0)
    quantities += [(f"imp_win_rate:{m}", "rate", [off + j], _rate_of(off + j)) for j, m in enumerate(models)]
    reps = {}
    for b in BOOTSTRAPS:
        w, n = replicate_totals(data, prep, config, x, b)
        reps[b] = (np.clip(w, 0, n), n)  # a wild replicate's total stays a possible total
    rows = []
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 odds in tiny data: NaN, no warning
        for q, kind, cols, f in quantities:
            est = float(f(est_w, est_n))
            n_exp = int(exp_has[:, cols].any(1).sum())
            row = {"quantity": q, "estimate": est, "reps": config.bootstrap_reps, "bootstrap": config.bootstrap,
                   "n_exp": n_exp}
            for b in BOOTSTRAPS:
                vals = f(*reps[b])
                if b == "design":
                    lo, hi, why = design_interval(kind, est, vals, n_exp, config.alpha)
                    row["method_design"] = (f"design bootstrap: not computed ({why})" if why else
                                            "design (wild, Rademacher by experiment) bootstrap SE; "
                                            f"{'logit' if kind == 'rate' else 'log'} scale, CR1 factor, t(G-1)")
                else:
                    lo, hi = (float(v) for v in percentile_ci(vals, config.alpha))
                    row["method_paper"] = ("paper (B.2): experiments resampled within mode x difficulty, percentile; "
                                           "does not hold its level under this design")
                row.update({f"ci_low_{b}": float(lo), f"ci_high_{b}": float(hi),
                            f"se_{b}": float(np.nanstd(vals, ddof=1)), f"n_undefined_{b}": int(np.isnan(vals).sum())})
            b = config.bootstrap
            row.update({"ci_low": row[f"ci_low_{b}"], "ci_high": row[f"ci_high_{b}"], "se": row[f"se_{b}"],
                        "n_undefined": row[f"n_undefined_{b}"], "method": row[f"method_{b}"]})
            rows.append(row)
    return pd.DataFrame(rows)


@table("permutation",
    title=("Permutation tests (Appendix B.2). Robustness check: the primary test of a mode contrast is Tables "
           "2/4's model-based OR (`odds_ratios`)"),
    section="robustness",
    inference=(
        infer("contrast", ("contrast",), "observed", p="p", family="permutation"),
    ),
)
def permutation(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    require_reps(config, permutation=True)
    prep = prepared(data)
    R = config.permutation_reps
    rng = np.random.default_rng([config.seed, 4])
    rows = []
    seats = [s for s in range(4) if (prep.imp_seat == s).any()]
    refusal = None if config.paper_methods else seat_refusal(prep)
    if refusal:
        note(data, f"permutation: seat contrasts not computed: {refusal}")
    elif 0 in seats and len(seats) > 1:
        obs, null = within_experiment_perm(prep, prep.imp_seat, seats, rng, R)
        for j, s in enumerate(seats[1:], start=1):
            d = obs[j] - obs[0]
            rows.append({"contrast": f"seat{s}_vs_seat0", "observed": d,
                         "p": float(perm_pvalue(d, (null[:, j] - null[:, 0])[:, None])[0]), "reps": R,
                         "level": "within_experiment", "statistic": "diff_imp_win_rate",
                         "method": "impostor-seat labels permuted within experiment"})
    modes = ordered_levels(prep.mode, MODES)
    if "homogeneous" in modes and len(modes) > 1:
        h = modes.index("homogeneous")
        sizes = np.array([[(prep.mode == m).sum() for m in modes]])
        null_w = hypergeom_within(rng, sizes, np.array([prep.y.sum()]), R) / sizes[0]
        obs = np.array([prep.y[prep.mode == m].mean() for m in modes])
        # experiment-level: permute the mode labels of whole experiments
        e_modes = prep.exp_mode
        wins_e, n_e = exp_sums(prep, prep.y), exp_sums(prep, np.ones(prep.n))
        perm = rng.permuted(np.tile(np.arange(len(e_modes)), (R, 1)), axis=1)
        lab = e_modes[perm]  # (R, E) labels after permutation
        for j, m in enumerate(modes):
            if j == h:
                continue
            d = obs[j] - obs[h]
            if config.paper_methods:
                rows.append({"contrast": f"{m}_vs_homogeneous", "observed": d,
                             "p": float(perm_pvalue(d, (null_w[:, j] - null_w[:, h])[:, None])[0]), "reps": R,
                             "level": "game", "statistic": "diff_imp_win_rate",
                             "method": "paper (game-level labels; does not hold under experiment clustering)"})
            mj, mh = lab == m, lab == "homogeneous"
            with np.errstate(invalid="ignore", divide="ignore"):
                dn = (mj @ wins_e) / (mj @ n_e) - (mh @ wins_e) / (mh @ n_e)
            rows.append({"contrast": f"{m}_vs_homogeneous_experiment_level", "observed": d,
                         "p": float(perm_pvalue(d, dn[:, None])[0]), "reps": R,
                         "level": "experiment", "statistic": "diff_imp_win_rate",
                         "method": "experiment-level mode labels permuted"})
        note(data, PRIMARY_NOTE)
        if not config.paper_methods:
            note(data, "permutation: game-level mode contrasts not printed (an experiment's games are not "
                       "exchangeable across modes); StatsConfig.paper_methods restores them")
    else:
        note(data, "permutation: mode contrasts need homogeneous and at least one other mode")
    return pd.DataFrame(rows)


@table("cluster_robust", columns=["cluster", "term", "coef", "se", "p", "or", "ci_low", "ci_high"],
    title="Cluster-robust logits of the impostor win, by experiment (and by word pair where recorded; Appendix B.2)",
    section="robustness",
    inference=(
        infer("term", ("cluster", "term"), "or", ("ci_low", "ci_high"), "p"),
    ),
)
def cluster_robust(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data)
    refusal = None if config.paper_methods else seat_refusal(prep)
    blocks = []
    if refusal:
        note(data, f"cluster_robust: seat_index term left out: {refusal}")
    else:
        blocks.append((prep.imp_seat.astype(float), ["seat_index"]))
    for vals, pref, tag in ((prep.imp_model, (), "model"), (prep.difficulty, DIFFICULTIES, "difficulty"),
                            (prep.mode, MODES, "mode")):
        lv = ordered_levels(vals, pref)
        if len(lv) > 1:
            mat, names = design_codes(vals, levels=lv)
            blocks.append((mat, [f"{tag}:{n}" for n in names]))
    if not blocks:
        raise StatsUnavailable("no term varies (one model, difficulty and mode)")
    X, names = with_intercept(*blocks)
    clusters = [("experiment_id", prep.exp_code)]
    if config.paper_methods:
        if "pair_id" in prep.games.columns:
            clusters.append(("pair_id", prep.games["pair_id"].astype(object).to_numpy()))
        else:
            note(data, "cluster_robust: games lack pair_id; word-pair clustering skipped")
    rows = []
    two_way = None if config.paper_methods else _difficulty_fit(data, prep, X, names)
    for cname, groups in clusters:
        try:
            fit = inference_fit(prep.y, X, names, groups, f"cluster_robust by {cname}", config, paper="cluster",
                                terms=names[1:])
        except StatsUnavailable as e:
            note(data, f"cluster_robust: {e}")
            continue
        for t in names:
            w = fit.wald(t, config.alpha)
            row = {"cluster": cname, "term": t, "coef": w["coef"], "se": w["se"], "p": w["p"], "or": w["or"],
                   "ci_low": w["ci_low"], "ci_high": w["ci_high"], "n": fit.n, **fit_columns(fit)}
            if t.startswith("difficulty:") and not config.paper_methods:
                # difficulty is carried by its word pairs: its inference clusters two-way (see chi2); the
                # estimate is the same fit's, so only the SE, interval, p and method change
                if two_way is None or isinstance(two_way, str):
                    row.update(p=np.nan, ci_low=np.nan, ci_high=np.nan, method=f"not computed: {two_way}")
                else:
                    w2 = two_way.wald(t, config.alpha)
                    row.update(se=w2["se"], p=w2["p"], ci_low=w2["ci_low"], ci_high=w2["ci_high"],
                               **{**fit_columns(two_way), "method": difficulty_method(two_way)}, df=w2.get("df"))
            rows.append(row)
    return pd.DataFrame(rows)


#: A difficulty term's inference: a tier against the reference tier rests on those two tiers' word
#: pairs (and experiments) only, so its t df are theirs, not those of every pair. Each sandwich is
#: CR2 (leverage-corrected) up to ``_regress.CR2_MAX_CLUSTERS`` clusters of each kind: with CR1 the
#: demo's difficulty terms rejected a true null in 6.0% of 9,000 p-values (``_regress.two_way_cr2``).
METHOD_DIFFICULTY = ("logit, two-way cluster-robust by experiment and word pair ({cr} each, negative eigenvalues "
                     "clipped), t(min(G)-1) of the two tiers' experiments and pairs")


def difficulty_method(fit) -> str:
    return METHOD_DIFFICULTY.format(cr="CR2" if fit.method == METHOD_TWO_WAY_CR2 else "CR1")


def _difficulty_fit(data: Analysis, prep, X: np.ndarray, names: list[str]):
    """The same logit clustered two-way by experiment and word pair (``_regress.two_way_logit``) for
    the difficulty terms, or the reason it cannot be fitted (a string). The difficulty terms are
    refused with DIFFICULTY_REFUSAL ("games lack pair_id") only when the games lack their pair_id."""
    if not any(n.startswith("difficulty:") for n in names):
        return None
    if "pair_id" not in prep.games.columns:
        return DIFFICULTY_REFUSAL
    ref = ordered_levels(prep.difficulty, DIFFICULTIES)[0]
    behind = {n: np.isin(prep.difficulty, [n.split(":", 1)[1], ref]) for n in names if n.startswith("difficulty:")}
    try:
        return two_way_logit(prep.y, X, names, prep.exp_code, prep.games["pair_id"].astype(object).to_numpy(),
                             "cluster_robust difficulty terms", behind=behind, terms=list(behind), cov_type="CR2")
    except StatsUnavailable as e:
        note(data, f"cluster_robust: {e}")
        return str(e)

"""Cross-model correlations with a design-bootstrap interval (``model_correlations``): r against
scipy on the table's own per-model columns, the refusal rules, and a small calibration on the
design's real units with a planted truth (the full study: benchmarks/model_corr_calibration.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _synth_stats import fast_config
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES, Analysis
from impostor_bench.analysis.stats._wild import Est
from impostor_bench.analysis.stats.model_corr import CALIBRATED_MODELS, corr_interval


@pytest.fixture(scope="module")
def paper_like():
    from impostor_bench.analysis.sim.simulate import simulate_games

    g, p, m = simulate_games(120, 16, seed=1)
    cfg = fast_config(bootstrap_reps=299)
    return Analysis(AnalysisData(games=g, players=p, models=m), cfg), cfg


@pytest.mark.slow
def test_r_is_pearson_of_the_tables_per_model_columns_and_appendix_m_copies_it(paper_like):
    data, cfg = paper_like
    mc = TABLES["model_correlations"](data, cfg).set_index("item")
    td = TABLES["team_dynamics"](data, cfg).set_index("model")
    h = TABLES["headline"](data, cfg).set_index("model")
    row = mc.loc["corr_betrayal_capability"]
    both = td[["betrayal_pct"]].join(h["imp_win_pct"]).dropna()
    assert row["n"] == len(both) == 9
    assert row["r"] == pytest.approx(stats.pearsonr(both["betrayal_pct"], both["imp_win_pct"]).statistic)
    assert row["ci_low"] < row["ci_high"] and -1 <= row["ci_low"] and row["ci_high"] <= 1
    assert row["method"].startswith("design bootstrap")
    am = TABLES["appendix_m"](data, cfg).set_index("item").loc[mc.index]
    pd.testing.assert_series_equal(am["estimate"], mc["r"], check_names=False)
    pd.testing.assert_series_equal(am["ci_low"], mc["ci_low"], check_names=False)
    # simulated games carry no ballot reasoning: Trust Form. is empty and the row says so
    assert np.isnan(mc.loc["corr_gap_trust", "r"]) and "trust_form_pct has no value" in mc.loc["corr_gap_trust", "reason"]


def test_recovery_units_give_rounds_trusts_recovery_rate():
    from impostor_bench.analysis.sim.rounds import simulate_rounds
    from impostor_bench.analysis.stats.rounds import round_moves
    from impostor_bench.analysis.stats.rounds_trust import recovery_units

    g, p, mv, m = simulate_rounds(40, 12, 3, seed=5)
    data = Analysis(AnalysisData(games=g, players=p, models=m, moves=mv), fast_config())
    rt = TABLES["rounds_trust"](data, fast_config()).set_index("model")["recovery_pct"].drop("ALL").dropna()
    u = recovery_units(round_moves(data))
    ours = 100 * u.groupby("model")["recovered"].mean()
    pd.testing.assert_series_equal(ours.reindex(rt.index), rt, check_names=False)


def _est(values: np.ndarray, reps: np.ndarray, n_exp: float = 20.0) -> Est:
    g = len(values)
    return Est(values, reps.astype(np.float32), np.full(g, n_exp), n_par=np.ones(g))


def test_refusals_and_models_without_a_value():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=9), rng.normal(size=9)
    noise = rng.normal(scale=0.1, size=(200, 9))
    c = corr_interval(_est(x, x + noise), _est(y, y + noise[::-1]), 0.05, min_models=CALIBRATED_MODELS)
    assert c.r == pytest.approx(stats.pearsonr(x, y).statistic) and c.n == 9 and c.ci_low < c.r < c.ci_high
    x8 = x.copy()
    x8[0] = np.nan  # a model without the value is left out, and eight models are below the calibrated nine
    c8 = corr_interval(_est(x8, x8 + noise), _est(y, y + noise), 0.05, min_models=CALIBRATED_MODELS)
    assert c8.n == 8 and c8.r == pytest.approx(stats.pearsonr(x[1:], y[1:]).statistic) and np.isnan(c8.ci_low)
    flat = corr_interval(_est(x, np.tile(x, (200, 1))), _est(y, np.tile(y, (200, 1))), 0.05)
    assert np.isfinite(flat.r) and np.isnan(flat.ci_low) and "no variation" in flat.reason
    none = corr_interval(_est(x, noise[:0]), _est(y, noise[:0]), 0.05)  # --bootstrap-reps 0: r alone, no error
    assert none.r == pytest.approx(c.r) and np.isnan(none.ci_low) and "no bootstrap replicates" in none.reason


@pytest.mark.slow
def test_coverage_on_the_designs_units_where_the_iid_fisher_interval_fails():
    """On the simulated paper-like design (120 x 40, nine models): 150 runs of a null and 60 of a
    planted strong correlation; the truth is r of the per-model means of the units' expected outcomes,
    not the runs' mean. Tolerance on the null: coverage compatible with the nominal 95% at the 0.5% level
    of a binomial count on both sides (deterministic seeds). The i.i.d. Fisher-z interval fails it: it
    covers every time, at twice the width (it adds the sampling of models, while the truth is these
    models' values). On the planted correlation, coverage compatible with 90% at the same level, which
    the plain basic bootstrap fails (r attenuated by the measurement error)."""
    from impostor_bench.analysis.calibration_corr import Scenario, design_units, run_scenario, summarise

    u = design_units(120, 40, seed=1, reps=199)
    null = run_scenario(u, Scenario("null", 0.0), 150, seed=1)
    strong = run_scenario(u, Scenario("strong", -0.85), 60, seed=2)
    s = summarise(pd.concat([null, strong])).set_index("scenario")
    assert abs(s.loc["null", "r_true"]) < 0.15 and s.loc["strong", "r_true"] < -0.8
    assert (s["printed"] >= 0.95).all()

    def cover(runs, lo, hi):
        return int(((runs[lo] <= runs["r_true"]) & (runs["r_true"] <= runs[hi])).sum())

    band = stats.binom.ppf(0.005, len(null), 0.95), stats.binom.ppf(0.995, len(null), 0.95)
    assert band[0] <= cover(null, "ci_low", "ci_high") <= band[1], s.to_string()
    assert not band[0] <= cover(null, "naive_low", "naive_high") <= band[1], s.to_string()
    low = stats.binom.ppf(0.005, len(strong), 0.90)
    assert cover(strong, "ci_low", "ci_high") >= low > cover(strong, "basic_low", "basic_high"), s.to_string()
    assert (s["naive_width"] > 1.6 * s["width"]).all()


def test_compare_rows_of_the_papers_correlations_carry_the_interval():
    from impostor_bench.analysis.report.paper_values import compare
    from impostor_bench.analysis.stats.model_corr import COLUMNS, CORRELATIONS, METHOD

    rows = [{"item": item, "section": sec, "quantity": q, "x": x, "y": y, "r": -0.5, "ci_low": -0.9, "ci_high": 0.1,
             "n": 9, "method": METHOD + "; 9 models", "reason": ""} for item, sec, q, x, y in CORRELATIONS]
    rows[-1].update(r=0.3, ci_low=np.nan, ci_high=np.nan, n=6, method="not computed: 6 models",
                    reason="no interval: calibrated at 9 models, these data have 6")
    cmp = compare({"model_correlations": pd.DataFrame(rows, columns=COLUMNS)})
    m = cmp[cmp["table"] == "model_correlations"].set_index("match")
    assert len(m) == len(CORRELATIONS)
    row = m.loc["item=corr_betrayal_capability"]
    assert (row["paper_value"], row["estimate"], row["ci_low"], row["ci_high"]) == (-0.84, -0.5, -0.9, 0.1)
    assert bool(row["calibrated"]) and bool(row["inside"]) and row["interval"].startswith("design bootstrap")
    last = m.loc["item=corr_convergence_collab"]
    assert last["estimate"] == 0.3 and np.isnan(last["ci_low"]) and not bool(last["calibrated"])

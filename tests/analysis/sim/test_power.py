"""Power analysis: closed forms agree with statsmodels by hand; simulated power hits the target."""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm
from statsmodels.stats.power import NormalIndPower

from impostor_bench.analysis.sim.power import closed_form_n, p_from_or, power_table, simulated_power
from impostor_bench.cli import main


def test_p_from_or():
    p1 = p_from_or(0.45, 0.8)
    assert (p1 / (1 - p1)) / (0.45 / 0.55) == pytest.approx(0.8)
    assert p_from_or(0.3, 1.0) == pytest.approx(0.3)


@pytest.mark.parametrize("odds_ratio,base,power,alpha", [(0.8, 0.45, 0.8, 0.05), (1.3, 0.3, 0.9, 0.01)])
def test_closed_forms_by_hand(odds_ratio, base, power, alpha):
    res = closed_form_n(odds_ratio, power, base, alpha)
    p0 = base
    p1 = base * odds_ratio / (1 - base + base * odds_ratio)
    # Cohen's h, by hand, and NormalIndPower directly
    h = 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p0))
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    n_h = 2 * (z / h) ** 2  # Var(2 asin sqrt(p_hat)) = 1/n per group, two groups
    assert res["cohen_h"].n_exact == pytest.approx(n_h, rel=1e-3)
    direct = NormalIndPower().solve_power(effect_size=abs(h), alpha=alpha, power=power, ratio=1.0)
    assert res["cohen_h"].n_exact == pytest.approx(direct, rel=1e-9)
    # and the power of that n, back through statsmodels, is the target
    assert NormalIndPower().power(abs(h), res["cohen_h"].n_exact, alpha) == pytest.approx(power, abs=1e-6)
    # Wald test of the log odds ratio of a two-group logit
    n_w = z**2 * (1 / (p0 * (1 - p0)) + 1 / (p1 * (1 - p1))) / math.log(odds_ratio) ** 2
    assert res["wald_logit"].n_exact == pytest.approx(n_w, rel=1e-12)
    assert res["wald_logit"].n_per_cell == math.ceil(n_w)
    # the two approximations agree within a few percent
    assert res["cohen_h"].n_exact == pytest.approx(res["wald_logit"].n_exact, rel=0.05)


def test_paper_question_or_08():
    res = closed_form_n(0.8, 0.8, 0.45, 0.05)
    assert 1250 <= res["wald_logit"].n_per_cell <= 1350


def test_n_grows_with_smaller_effect_and_higher_power():
    n = lambda o, pw: closed_form_n(o, pw, 0.45)["wald_logit"].n_exact  # noqa: E731
    assert n(0.9, 0.8) > n(0.8, 0.8) > n(0.7, 0.8)
    assert n(0.8, 0.9) > n(0.8, 0.8)


def test_invalid_arguments():
    with pytest.raises(ValueError):
        closed_form_n(1.0)
    with pytest.raises(ValueError):
        closed_form_n(0.8, base=1.5)


@pytest.mark.slow
def test_simulated_power_at_recommended_n_is_target():
    n = closed_form_n(0.7, 0.8, 0.45)["wald_logit"].n_per_cell
    pw, se = simulated_power(n, 0.7, 0.45, reps=240, seed=1)
    assert abs(pw - 0.8) < max(0.07, 3 * se), (n, pw, se)
    low, _ = simulated_power(n // 4, 0.7, 0.45, reps=120, seed=2)
    assert low < 0.5


def test_simulated_type_i_error_near_alpha():
    pw, se = simulated_power(300, 1.0, 0.45, reps=200, seed=3)
    assert pw < 0.05 + 3 * math.sqrt(0.05 * 0.95 / 200)


def test_power_table_columns():
    t = power_table(0.8, reps=0)
    assert list(t["method"]) == ["cohen_h", "wald_logit"]
    assert {"n_per_cell", "n_exact", "base_pct", "contrast_pct"} <= set(t.columns)


def test_cli_power(capsys):
    assert main(["power", "--or", "0.8", "--power", "0.8", "--base", "0.45", "--reps", "0"]) == 0
    out = capsys.readouterr().out
    n = closed_form_n(0.8, 0.8, 0.45)["wald_logit"].n_per_cell
    assert f"Recommendation: {n} games per cell" in out
    assert main(["power", "--or", "1", "--reps", "0"]) == 2
    assert "--or" in capsys.readouterr().err


# --------------------------------------------------------------------------- clustering by experiment


def test_clustered_n_is_the_wald_n_times_the_design_effect():
    from impostor_bench.analysis.sim.power import clustered_n, clustered_power, design_effect

    assert design_effect(0.0, 120) == 1.0 and design_effect(0.02, 121) == pytest.approx(3.4)
    n_w = closed_form_n(0.8, 0.8, 0.45)["wald_logit"].n_exact
    c0 = clustered_n(0.8, 0.8, 0.45, icc=0.0, games_per_experiment=100)
    assert c0["experiments_per_cell"] == math.ceil(n_w / 100)
    c = clustered_n(0.8, 0.8, 0.45, icc=0.03, games_per_experiment=120)
    assert c["n_exact"] == pytest.approx(n_w * (1 + 119 * 0.03))
    assert c["experiments_per_cell"] == math.ceil(n_w * (1 + 119 * 0.03) / 120)
    # the power at that many experiments reaches the target, one experiment fewer does not
    k = c["experiments_per_cell"]
    assert clustered_power(k, 120, 0.8, 0.45, 0.05, 0.03) >= 0.8 > clustered_power(k - 1, 120, 0.8, 0.45, 0.05, 0.03)
    # icc = 0: the Wald power of the log OR with 600 games per cell, by hand
    p0, p1 = 0.45, p_from_or(0.45, 0.8)
    z = abs(math.log(0.8)) / math.sqrt((1 / (p0 * (1 - p0)) + 1 / (p1 * (1 - p1))) / 600)
    assert clustered_power(10, 60, 0.8, 0.45, 0.05, 0.0) == pytest.approx(
        norm.cdf(z - norm.ppf(0.975)) + norm.cdf(-z - norm.ppf(0.975)), rel=1e-12)


def test_sd_for_icc_gives_that_icc():
    import numpy as np

    from impostor_bench.analysis.sim.power import sd_for_icc

    for icc in (0.01, 0.05, 0.2):
        sd = sd_for_icc(icc, 0.3)
        u = np.random.default_rng(0).normal(0, sd, 400_000)
        p = 1 / (1 + np.exp(-(math.log(0.3 / 0.7) + u)))
        assert p.var() / (p.mean() * (1 - p.mean())) == pytest.approx(icc, rel=0.03)
    assert sd_for_icc(0.0) == 0.0


def test_clustered_formula_matches_simulated_power_of_the_report_bootstrap():
    """Formula power vs the share of simulated designs whose design-bootstrap CI of the mode OR excludes 1."""
    from impostor_bench.analysis.sim.power import clustered_n, clustered_power, simulated_power_clustered

    c = clustered_n(0.7, 0.8, 0.45, icc=0.03, games_per_experiment=40)
    k = c["experiments_per_cell"] + c["experiments_per_cell"] % 2
    expected = clustered_power(k, 40, 0.7, 0.45, 0.05, 0.03)
    pw, se = simulated_power_clustered(k, 40, 0.7, 0.45, 0.05, 0.03, reps=120, seed=1, bootstrap_reps=400)
    assert abs(pw - expected) < max(0.08, 3 * se), (pw, expected)
    # ignoring the clustering (icc 0) would promise far more power than the design delivers
    assert clustered_power(k, 40, 0.7, 0.45, 0.05, 0.0) > pw + 0.1


def test_cli_power_clustered(capsys, sim_export):
    from impostor_bench.analysis.sim.power import clustered_n

    assert main(["power", "--or", "0.8", "--reps", "0", "--icc", "0.03", "--games-per-experiment", "120"]) == 0
    out = capsys.readouterr().out
    k = clustered_n(0.8, 0.8, 0.45, icc=0.03, games_per_experiment=120)["experiments_per_cell"]
    assert f"{k} experiments = {120 * k} games per cell  <- --games-per-experiment" in out
    assert main(["power", "--or", "0.8", "--reps", "0", "--parquet", str(sim_export)]) == 0
    assert "estimated from" in capsys.readouterr().out
    assert main(["power", "--reps", "0", "--icc", "1.5"]) == 2
    assert "--icc" in capsys.readouterr().err


# --------------------------------------------------------------------------- inputs first, honest output


def test_cli_power_wrong_parquet_fails_before_any_computation(capsys, monkeypatch, tmp_path):
    import impostor_bench.commands.power as cmd

    def no_work(*a, **k):
        raise AssertionError("computed before the inputs were checked")

    monkeypatch.setattr(cmd, "power_table", no_work)
    monkeypatch.setattr(cmd, "_icc_from_export", no_work)
    for where, said in ((tmp_path / "nope", "not a directory"), (tmp_path, "no games.parquet there")):
        assert main(["power", "--parquet", str(where)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err and err.count("fix:") == 1 and "Traceback" not in err


def test_cli_power_warns_when_the_icc_comes_from_few_experiments(capsys, tmp_path, sim_export):
    from impostor_bench.analysis.io import write_tables
    from impostor_bench.analysis.sim.simulate import simulate_games
    from impostor_bench.commands.power import MIN_ICC_EXPERIMENTS

    write_tables(tmp_path, *simulate_games(6, 20, seed=3))
    assert main(["power", "--reps", "0", "--parquet", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(6 experiments" in out and f"warning: the ICC is estimated from only 6 experiment(s) (fewer than {MIN_ICC_EXPERIMENTS})" in out
    assert main(["power", "--reps", "0", "--parquet", str(sim_export)]) == 0  # 40 experiments: no warning
    out = capsys.readouterr().out
    assert "(40 experiments" in out and "warning" not in out


def _table_with_power(pw: float, se: float):
    from impostor_bench.analysis.sim.power import power_table as real

    t = real(0.8, 0.8, 0.45, 0.05, reps=0)
    return t.assign(simulated_power=pw, simulated_power_se=se, reps=200)


@pytest.mark.parametrize("pw, se, said", [(0.765, 0.030, "within 2 Monte-Carlo SE"), (0.60, 0.035, "beyond Monte-Carlo error"),
                                          (0.81, 0.028, None)])
def test_cli_power_says_when_the_recommended_design_falls_short(capsys, monkeypatch, pw, se, said):
    import impostor_bench.commands.power as cmd

    monkeypatch.setattr(cmd, "power_table", lambda *a, **k: _table_with_power(pw, se))
    assert main(["power", "--reps", "200"]) == 0
    out = capsys.readouterr().out
    rec = next(i for i, ln in enumerate(out.splitlines()) if ln.startswith("Recommendation:"))
    note = out.splitlines()[rec + 1]
    if said is None:
        assert "below the requested" not in out and not note.startswith("  note:")
    else:
        assert note.startswith(f"  note: its simulated power, {pw:.3f} +/- {se:.3f}, is below the requested 0.8") and said in note

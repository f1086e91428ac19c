"""Power analysis: closed forms agree with statsmodels by hand; simulated power hits the target."""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm
from statsmodels.stats.power import NormalIndPower

from analysis.power import closed_form_n, p_from_or, power_table, simulated_power
from impostor.cli import main


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

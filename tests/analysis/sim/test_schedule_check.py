"""Issue 26's schedule check: seats and team order independent across experiments, pairs shared."""

from __future__ import annotations

import pytest

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import StatsConfig
from impostor_bench.analysis.stats.design_checks import schedule_check


@pytest.mark.parametrize("schedule, seat, host", [("per_experiment", (15, 36), (38, 62)), ("shared", (100, 100), (100, 100))])
def test_schedule_check_tells_per_experiment_draws_from_the_old_shared_schedule(schedule, seat, host):
    g, p, m = simulate_games(120, 24, seed=2, schedule=schedule)
    t = schedule_check(AnalysisData(g, p, m), StatsConfig(strict=True))
    assert len(t) == 20 and (t["pair_agreement_pct"] == 100).all()  # the paired design is kept
    assert t["seat_agreement_pct"].between(*seat).all()
    teams = t[t["mode"].str.startswith("team")]
    assert teams["team_host_agreement_pct"].between(*host).all()
    assert (t["seat_balance_max_gap"] <= 1).all()

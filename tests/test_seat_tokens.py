"""Per-seat tokens (solvers/usage.py): every call's usage lands on the seat that made it, in
both phases, concurrent ballots included; checked against the Inspect log's model events
(attributed to seats by each call's seed, independently of the solver's bookkeeping), and
carried to players.parquet with the bots' price (0)."""

from __future__ import annotations

from inspect_ai import eval as inspect_eval

from impostor_bench.core.schedule import derive_seed
from impostor_bench.export import tables_from_log


def test_seat_tokens_match_the_logged_calls(tmp_path, monkeypatch):
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    [log] = inspect_eval(impostor(n_games=4, mode="cross_play"), model="bot/random",
                         model_roles={"impostor": "bot/random", "majority": "bot/embedding"},
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    players = tables_from_log(log).players.set_index(["game_id", "seat"])
    for sample in log.samples:
        gseed = sample.metadata["game_seed"]
        seat_of = {derive_seed(gseed, phase, seat) % 2**31: seat for phase in ("describe", "vote") for seat in range(4)}
        want = {seat: [0, 0] for seat in range(4)}
        calls = [e for e in sample.events if e.event == "model"]
        assert len(calls) >= 8
        for e in calls:
            want[seat_of[e.config.seed]][0] += e.output.usage.input_tokens
            want[seat_of[e.config.seed]][1] += e.output.usage.output_tokens
        gid = sample.scores["impostor_winner"].metadata["game"]["game_id"]
        for seat, (tin, tout) in want.items():
            row = players.loc[(gid, seat)]
            assert (row["input_tokens"], row["output_tokens"]) == (tin, tout) and tin > 0
            assert row["cost_usd"] == 0.0  # bots: known price 0

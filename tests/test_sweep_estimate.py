"""The sweep plan states what the run will cost: calls, tokens and dollars per model (issue 16)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from impostor_bench.core.prompts import DESCRIPTION_SYSTEM, VOTING_SYSTEM, description_prompt, voting_prompt
from impostor_bench.sweep.estimate import CHARS_PER_TOKEN, estimate_costs, seat_tokens, seats_per_game
from impostor_bench.sweep.plan import plan

CONFIG = """name: costcheck
models: [openai/gpt-4o-mini, bot/random, openai/no-such-model-xyz]  # gpt-4o-mini: no price in configs/models.yaml
modes: [homogeneous, cross_play, team_blind]
difficulties: [easy, hard]
games_per_experiment: 10
max_tokens: {max_tokens}
seeds: [0]
"""


def _plan(tmp_path: Path, max_tokens: int = 150):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.format(max_tokens=max_tokens))
    pl = plan(cfg)
    pl.resolved = {m: m for m in pl.config.models}
    return pl


@pytest.mark.parametrize("mode, roles", [("homogeneous", {"model": "a"}),
                                         ("cross_play", {"impostor": "a", "majority": "b"}),
                                         ("team_blind", {"team_a": "a", "team_b": "b"})])
def test_four_seats_per_game(mode, roles):
    assert sum(seats_per_game(mode, roles).values()) == 4


def test_seat_tokens_from_the_real_prompts():
    mt = 100
    long = "x" * (CHARS_PER_TOKEN * mt)
    first = math.ceil((len(DESCRIPTION_SYSTEM) + len(description_prompt(
        mode="homogeneous", word="lighthouse", player_label=1, previous=[]))) / CHARS_PER_TOKEN)
    vote = math.ceil((len(VOTING_SYSTEM) + len(voting_prompt(
        mode="homogeneous", word="lighthouse", player_label=1, descriptions=[(i, long) for i in range(1, 5)])))
        / CHARS_PER_TOKEN)
    desc = [math.ceil((len(DESCRIPTION_SYSTEM) + len(description_prompt(
        mode="homogeneous", word="lighthouse", player_label=k + 1, previous=[(i + 1, long) for i in range(k)])))
        / CHARS_PER_TOKEN) for k in range(4)]
    tok_in, tok_out = seat_tokens("homogeneous", mt)
    assert tok_out == 2 * mt
    assert tok_in == round(sum(desc) / 4) + vote
    # the average description prompt carries 1.5 earlier descriptions of mt tokens, plus their labels
    assert 0 <= tok_in - (first + 1.5 * mt + vote) <= 30
    assert seat_tokens("homogeneous", 300)[0] > tok_in  # longer answers, longer later prompts


def test_calls_tokens_and_dollars(tmp_path, monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    pl = _plan(tmp_path)
    rows = {c.alias: c for c in estimate_costs(pl)}
    assert sum(c.calls for c in rows.values()) == 2 * 4 * pl.games  # a description and a ballot per seat
    gpt = rows["openai/gpt-4o-mini"]
    entry = litellm.model_cost["gpt-4o-mini"]
    assert gpt.usd == pytest.approx(gpt.input_tokens * entry["input_cost_per_token"]
                                    + gpt.output_tokens * entry["output_cost_per_token"])
    assert gpt.usd > 0 and gpt.price_source == "litellm:gpt-4o-mini"
    assert rows["bot/random"].usd == 0
    assert rows["openai/no-such-model-xyz"].usd is None  # unknown, never 0


def test_dry_run_prints_the_cost(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.format(max_tokens=150))
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-m", "impostor_bench.cli", "sweep", str(cfg), "--dry-run"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("estimated cost"))
    gpt = next(ln for ln in lines[head:] if ln.strip().startswith("openai/gpt-4o-mini"))
    assert "$" in gpt and "litellm:gpt-4o-mini" in gpt
    assert "unknown" in next(ln for ln in lines[head:] if ln.strip().startswith("openai/no-such-model-xyz"))
    total = next(ln for ln in lines[head:] if ln.strip().startswith("total"))
    assert "+ unknown for openai/no-such-model-xyz" in total


def test_every_priced_model_of_the_registry_says_where_and_when(tmp_path):
    """configs/models.yaml: every API model has a price with its source and date, so the paper's
    plan has a dollar figure for every model (issue 29); the estimate names the source."""
    from impostor_bench.pricing import price_of
    from impostor_bench.registry import load_registry

    reg = load_registry()
    for alias in ("gpt-4o", "gpt-3.5-turbo", "claude-sonnet-4", "deepseek-v3", "llama-4-maverick", "llama-4-scout",
                  "llama-3.1-405b", "llama-3.1-70b", "llama-3.1-8b"):
        e = reg.entry(alias)
        assert e.price is not None and e.price.source and e.price.as_of, alias
        assert price_of(e.model).source == f"registry: {e.price.source}, as of {e.price.as_of}"


def test_rounds_count_every_round_and_note_as_upper_bounds(tmp_path):
    """A 3-round sweep with notes: per seat and game 3 descriptions + 3 ballots + 2 notes, each
    later prompt carrying the earlier rounds (so more than 3 one-round games' input), output at
    max_tokens per call; one round stays the paper's count."""
    from impostor_bench.sweep.estimate import game_seat_load

    one_in, one_out = seat_tokens("cross_play", 150)
    assert game_seat_load("cross_play", 150) == (2, one_in, one_out)
    calls, tok_in, tok_out = game_seat_load("cross_play", 150, rounds=3, private_notes=True)
    assert (calls, tok_out) == (8, 8 * 150)
    assert tok_in > 3 * one_in + 2 * 2 * 4 * 150  # rounds 2 and 3 see 1 and 2 earlier rounds at their longest
    assert game_seat_load("cross_play", 150, rounds=3)[0] == 6  # no notes: no note calls

    cfg = tmp_path / "r.yaml"
    cfg.write_text(CONFIG.format(max_tokens=150) + "rounds: 3\nprivate_notes: true\n")
    pl = plan(cfg)
    pl.resolved = {m: m for m in pl.config.models}
    flat = {c.alias: c for c in estimate_costs(_plan(tmp_path, 150))}
    for c in estimate_costs(pl):
        assert c.calls == 4 * flat[c.alias].calls  # 8 calls a seat-game instead of 2
        assert c.input_tokens > 3 * flat[c.alias].input_tokens

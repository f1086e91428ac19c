"""Seat costs (impostor_bench/pricing.py): the registry's price wins, bots cost 0, litellm's offline
map otherwise (checked against litellm.cost_per_token), unknown stays unknown (NaN, not 0);
a bad ``price:`` in configs/models.yaml is one line naming file, alias, field and fix."""

from __future__ import annotations

import math

import litellm
import pandas as pd
import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.records import PLAYER_COLUMNS, PlayerRow
from impostor_bench.pricing import add_costs, price_of

REGISTRY = """
models:
  mine:
    model: openai/gpt-4o
    provider: openai
    family: gpt
    price: {input_per_mtok: 1.5, output_per_mtok: 6, note: "our contract"}
"""


def _players(models, tin, tout):
    return pd.DataFrame({"model": models, "input_tokens": pd.array(tin, dtype="Int64"),
                         "output_tokens": pd.array(tout, dtype="Int64")})


def test_litellm_map_bot_and_unknown(monkeypatch, tmp_path):
    empty = tmp_path / "models.yaml"
    empty.write_text("models:\n  x:\n    model: bot/random\n    provider: impostor-bench\n    family: baseline\n")
    out = add_costs(_players(["openai/gpt-4o", "bot/script", "openrouter/nobody/unpriced-model", "openai/gpt-4o"],
                             [1200, 50, 10, None], [80, 5, 1, None]), str(empty))
    want_in, want_out = litellm.cost_per_token(model="gpt-4o", prompt_tokens=1200, completion_tokens=80)
    assert out["cost_usd"][0] == pytest.approx(want_in + want_out, rel=1e-12)
    assert out["cost_usd"][1] == 0.0 and price_of("bot/script", str(empty)).source == "bot"
    assert math.isnan(out["cost_usd"][2]) and math.isnan(out["cost_usd"][3])  # unknown price / tokens: NaN, never 0


def test_registry_price_wins(tmp_path):
    reg = tmp_path / "models.yaml"
    reg.write_text(REGISTRY)
    out = add_costs(_players(["openai/gpt-4o"], [1_000_000], [500_000]), str(reg))
    assert out["cost_usd"][0] == pytest.approx(1.5 + 3.0)
    assert price_of("openai/gpt-4o", str(reg)).source.startswith("registry")


def test_bad_price_is_one_line(tmp_path):
    from impostor_bench.registry import load_registry

    reg = tmp_path / "models.yaml"
    reg.write_text(REGISTRY.replace("input_per_mtok: 1.5", "input_per_mtok: -1"))
    with pytest.raises(ImpostorError, match=r"alias 'mine', field 'price.input_per_mtok'.*fix:"):
        load_registry(reg)
    reg.write_text(REGISTRY.replace("output_per_mtok: 6", "output_per_mtok: 6, per_call: 1"))
    with pytest.raises(ImpostorError, match=r"field 'price.per_call'.*fix: remove"):
        load_registry(reg)


def test_player_row_token_columns_follow_the_extras():
    i = PLAYER_COLUMNS.index("vote_fallback")
    assert PLAYER_COLUMNS[i + 1:i + 4] == ["input_tokens", "output_tokens", "cost_usd"]
    with pytest.raises(ValueError):
        PlayerRow.model_validate({**_minimal_row(), "input_tokens": -3})
    assert PlayerRow.model_validate(_minimal_row()).cost_usd is None  # older records: unknown


def _minimal_row() -> dict:
    return {"game_id": "e/0", "seat": 0, "model": "bot/random", "role": "majority", "speaking_position": 0,
            "description": "d", "description_valid": True, "self_declared": False, "experiment_id": "e", "word": "w"}


def test_litellm_prices_read_without_importing_litellm():
    """Pricing a sweep (printed before its first game) reads litellm's packaged price file instead
    of importing litellm (~230 MB in every shard, issue 18): same prices as litellm.model_cost,
    and litellm stays unimported (a fresh interpreter, so no other test's import counts)."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from impostor_bench.pricing import _litellm_price\n"
        "p = {m: (lambda r: r and [r.input_per_token, r.output_per_token, r.source])(_litellm_price(m))\n"
        "     for m in ['openai/gpt-4o', 'gpt-4o-mini', 'gpt-3.5-turbo']}\n"
        "print(json.dumps({'imported': 'litellm' in sys.modules, 'prices': p}))\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["imported"] is False
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    for model, price in got["prices"].items():
        key = price[2].removeprefix("litellm:")
        entry = litellm.model_cost[key]
        assert price[:2] == [entry["input_cost_per_token"], entry["output_cost_per_token"]], model
    assert got["prices"]["openai/gpt-4o"][2] in ("litellm:openai/gpt-4o", "litellm:gpt-4o")

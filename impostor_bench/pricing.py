"""What each seat's calls cost: tokens x the model's price, filled into players.parquet's
``cost_usd`` by the exporter (the core only counts tokens).

Price of a model, first that applies:

1. ``price:`` of its entry in configs/models.yaml (USD per 1M input / output tokens);
2. a bot (route ``bot``): 0, it runs locally and calls no API;
3. litellm's offline price map (``litellm.model_cost``, read with
   ``LITELLM_LOCAL_MODEL_COST_MAP=True``, never fetched): the model string, or the string
   without its route where the route is the maker's own API (``openai/gpt-4o`` ->
   ``gpt-4o``) or ``litellm/`` (``litellm/<litellm model>``). No fuzzy match: another
   provider's price for a similar name would be a wrong number;
4. else unknown: ``cost_usd`` stays empty (NaN), never 0.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import pandas as pd

# routes whose model names litellm keys without the route prefix
_FIRST_PARTY = ("openai", "anthropic", "google", "mistral", "groq", "together", "deepseek", "litellm")


@dataclass(frozen=True)
class ModelPrice:
    input_per_token: float  # USD
    output_per_token: float
    source: str  # "registry: <source>, as of <date>", "bot", "litellm:<key>"


def _packaged_cost_map() -> dict:
    """litellm's packaged price map (the file ``LITELLM_LOCAL_MODEL_COST_MAP`` loads), read as
    JSON: importing litellm for it costs ~230 MB of memory and seconds in every sweep shard
    that prints its cost estimate (measured). Not kept: prices are cached per model."""
    import json
    from importlib.util import find_spec
    from pathlib import Path

    try:  # found, not imported (importlib.resources.files would import the package)
        spec = find_spec("litellm")
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError("litellm is not installed")
        folder = Path(next(iter(spec.submodule_search_locations)))
        return json.loads((folder / "model_prices_and_context_window_backup.json").read_bytes())
    except Exception:  # noqa: BLE001 - litellm missing or its file moved: prices unknown, export goes on
        return {}


def _litellm_cost_map() -> dict:
    loaded = sys.modules.get("litellm")  # already imported (its provider in use): its map, with registrations
    cost = getattr(loaded, "model_cost", None)
    return cost if isinstance(cost, dict) and cost else _packaged_cost_map()


def _litellm_price(model: str) -> Optional[ModelPrice]:
    model_cost = _litellm_cost_map()
    route, _, rest = model.partition("/")
    keys = [model] + ([rest] if rest and route in _FIRST_PARTY else [])
    for key in keys:
        entry = model_cost.get(key)
        if not isinstance(entry, dict):
            continue
        inp, out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
        if isinstance(inp, (int, float)) and isinstance(out, (int, float)):
            return ModelPrice(float(inp), float(out), f"litellm:{key}")
    return None


@lru_cache(maxsize=None)
def _price_cached(model: str, registry_path: Optional[str]) -> Optional[ModelPrice]:
    try:
        from impostor_bench.registry import load_registry

        entry = load_registry(registry_path).entry(model)
    except Exception:  # noqa: BLE001 - no usable registry: the other sources still apply
        entry = None
    if entry is not None and entry.price is not None:
        return ModelPrice(entry.price.input_per_mtok / 1e6, entry.price.output_per_mtok / 1e6,
                          f"registry: {entry.price.label()}")
    if model.startswith("bot/"):
        return ModelPrice(0.0, 0.0, "bot")
    return _litellm_price(model)


def price_of(model: str, registry_path: Optional[str] = None) -> Optional[ModelPrice]:
    """The model's price per token, or None when unknown."""
    return _price_cached(str(model), registry_path)


def add_costs(players: pd.DataFrame, registry_path: Optional[str] = None) -> pd.DataFrame:
    """``players`` with ``cost_usd`` = input_tokens x input price + output_tokens x output price
    where both the tokens and the price are known; NaN otherwise (unknown, never 0)."""
    out = players.copy()
    if not len(out) or "input_tokens" not in out.columns:
        out["cost_usd"] = pd.Series(float("nan"), index=out.index, dtype="float64")
        return out
    prices = {m: price_of(m, registry_path) for m in out["model"].dropna().unique()}
    nan = float("nan")
    p_in = out["model"].map(lambda m: p.input_per_token if (p := prices.get(m)) else nan)
    p_out = out["model"].map(lambda m: p.output_per_token if (p := prices.get(m)) else nan)
    tok_in = pd.to_numeric(out["input_tokens"], errors="coerce")
    tok_out = pd.to_numeric(out["output_tokens"], errors="coerce")
    out["cost_usd"] = (tok_in * p_in.astype(float) + tok_out * p_out.astype(float)).astype("float64")
    return out

"""A sweep's length and decoding axes (O.2's verbosity and decode ablations).

``length_budget:`` and ``truncate_to:`` are grid axes of the task options of the same names (one
value or a list); ``decoding:`` is a list of ``{temperature, top_p}`` settings at which every
model's experiments are played.  Each cell is one experiment per (mode, difficulty, seed,
assignment, group size) of the plan, with its own identity (``core.experiment.with_ablations``).

Pure configuration: no Inspect or MLflow import.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from impostor_bench.core.model_text import MAX_DESCRIPTION_CHARS
from impostor_bench.core.options import Temperature


def _as_list(value: Any) -> Any:
    """An axis written as one value (``length_budget: 200``) is the list of that value."""
    return value if isinstance(value, list) else [value]


#: Characters (1 to 750) or None (the 750-character rule only / shown whole): one value or a list.
CharLimits = Annotated[list[Optional[Annotated[int, Field(strict=True, ge=1, le=MAX_DESCRIPTION_CHARS)]]],
                       BeforeValidator(_as_list)]


def unset() -> list[Optional[int]]:
    """An axis not given: the option unset (the paper's game)."""
    return [None]


class Decoding(BaseModel):
    """One decoding setting of a ``decoding:`` axis; a value left out is the sweep's default (the
    alias's, else the paper's temperature; top_p not sent)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: Optional[Temperature] = Field(default=None, ge=0.0, le=2.0, allow_inf_nan=False)
    top_p: Optional[Temperature] = Field(default=None, gt=0.0, le=1.0, allow_inf_nan=False)


#: What a valid value of each axis is (the fix of a refused one).
AXIS_FIXES = {"length_budget": f"use 1 to {MAX_DESCRIPTION_CHARS} characters, or null for the 750-character rule only",
              "truncate_to": f"use 1 to {MAX_DESCRIPTION_CHARS} characters, or null for descriptions shown whole",
              "decoding": "give each entry temperature (0 to 2) and/or top_p (above 0, at most 1)"}

#: The axes' field names and their values when not given (the paper's game: nothing set).
AXIS_DEFAULTS: dict[str, Any] = {"length_budget": [None], "truncate_to": [None], "decoding": []}


def ablation_cells(cfg: Any) -> list[dict[str, Any]]:
    """The settings of each cell of the axes: ``{temperature, top_p, length_budget, truncate_to}``
    (the sweep's own ``temperature`` / ``top_p`` where no ``decoding:`` is given)."""
    decodings = cfg.decoding or [Decoding(temperature=cfg.temperature, top_p=cfg.top_p)]
    return [{"temperature": d.temperature, "top_p": d.top_p, "length_budget": lb, "truncate_to": tt}
            for lb, tt, d in itertools.product(cfg.length_budget, cfg.truncate_to, decodings)]


def decoding_problem(cfg: Any) -> Optional[str]:
    """Why the axes cannot be planned as written, with the fix; None when they can."""
    if cfg.decoding and (cfg.temperature is not None or cfg.top_p is not None):
        return ("decoding: sets temperature and top_p per experiment; fix: drop the sweep's own temperature/top_p "
                "or write them into each decoding entry")
    for name in ("length_budget", "truncate_to", "decoding"):
        values = getattr(cfg, name)
        if len(set(values)) != len(values):
            return f"{name}: a value is listed twice; fix: list each once"
    return None

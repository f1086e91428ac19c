"""Generation settings of a seat: temperature, max_tokens and the vote temperature (A.3).

Pure: model strings and plain dicts in, numbers out (no Inspect).  Precedence of every
setting, highest first: an explicit task / sweep option, the registry alias's
``defaults`` (``configs/models.yaml``), the paper's defaults.  The paper's vote
temperature depends on the backend (docs/rules.md, "Generation settings"):

    >>> vote_temperature_for("openai/gpt-4o", 0.7)
    0.3
    >>> vote_temperature_for("anthropic/claude-sonnet-4-20250514", 0.7)
    0.7
    >>> vote_temperature_for("litellm/anthropic/claude-sonnet-4-20250514", 0.7)
    0.7
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Optional

from impostor_bench.core.modes import mode_spec

PAPER_TEMPERATURE = 0.7
PAPER_MAX_TOKENS = 150
VOTE_FLOOR = 0.3
VOTE_STEP = 0.4
# Backends whose votes are NOT annealed.  A.3 anneals "OpenAI/OpenRouter-compatible
# backends"; of the paper's three APIs that leaves Anthropic's, which votes at T.
UNANNEALED_BACKENDS = frozenset({"anthropic"})


def backend_of(model: str) -> str:
    """The API a model string is called through: its route, or for ``litellm/<p>/...`` the ``<p>``."""
    parts = str(model).split("/")
    if parts[0] == "litellm" and len(parts) > 2:
        return parts[1]
    return parts[0]


def anneals_votes(model: str) -> bool:
    """Whether the paper's annealed vote temperature applies to this model string.

    Every backend but Anthropic's anneals: OpenAI, OpenRouter and the other
    OpenAI-compatible APIs as in A.3; our own ``bot/`` and ``local/`` players too
    (bots ignore temperature; the in-process llama.cpp player samples like an
    OpenAI-compatible server, and annealing keeps it comparable with the API seats).
    """
    return backend_of(model) not in UNANNEALED_BACKENDS


def annealed(temperature: float) -> float:
    """max(0.3, T - 0.4) (A.3), rounded to remove float noise (0.7 - 0.4 -> 0.3, not 0.29999...)."""
    return round(max(VOTE_FLOOR, temperature - VOTE_STEP), 10)


def vote_temperature_for(model: str, temperature: float, explicit: Optional[float] = None,
                         alias_default: Optional[float] = None) -> float:
    """The vote temperature of one seat: explicit option > alias default > the paper's rule for the backend."""
    if explicit is not None:
        return explicit
    if alias_default is not None:
        return alias_default
    return annealed(temperature) if anneals_votes(model) else temperature


@dataclass(frozen=True)
class SeatSettings:
    """What one seat's calls use, and where each number came from (task | alias | paper)."""

    temperature: float
    max_tokens: int
    vote_temperature: float
    source: str  # e.g. "temperature=task,max_tokens=alias,vote_temperature=paper"
    top_p: Optional[float] = None  # the task option, else the alias's default; None: not sent (no paper value)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def seat_settings(model: str, *, temperature: Optional[float] = None, max_tokens: Optional[int] = None,
                  vote_temperature: Optional[float] = None,
                  alias_defaults: Optional[Mapping[str, Any]] = None, top_p: Optional[float] = None) -> SeatSettings:
    """Resolve one seat's settings: explicit (task/sweep) > ``alias_defaults`` > paper defaults.

    Every seat of every phase asks (eight times a game) with the eval's few arguments: the
    answer (frozen) is cached when the arguments can be a cache key."""
    try:
        return _cached_settings(model, temperature, max_tokens, vote_temperature,
                                tuple((k, type(v), v) for k, v in alias_defaults.items()) if alias_defaults else (),
                                top_p)
    except TypeError:  # an unhashable alias default: resolved afresh
        return _seat_settings(model, temperature, max_tokens, vote_temperature, alias_defaults, top_p)


def _seat_settings(model: str, temperature: Optional[float], max_tokens: Optional[int],
                   vote_temperature: Optional[float], alias_defaults: Optional[Mapping[str, Any]],
                   top_p: Optional[float] = None) -> SeatSettings:
    alias = dict(alias_defaults or {})
    sources = []

    def pick(name: str, explicit: Any, paper: Any) -> Any:
        if explicit is not None:
            sources.append(f"{name}=task")
            return explicit
        if alias.get(name) is not None:
            sources.append(f"{name}=alias")
            return alias[name]
        sources.append(f"{name}=paper")
        return paper

    t = pick("temperature", temperature, PAPER_TEMPERATURE)
    n = pick("max_tokens", max_tokens, PAPER_MAX_TOKENS)
    v = pick("vote_temperature", vote_temperature, None)
    if v is None:
        v = vote_temperature_for(model, t)
    p = top_p if top_p is not None else alias.get("top_p")
    if top_p is not None:  # named only when set: the source text of the paper's settings stays as it was
        sources.append("top_p=task")
    return SeatSettings(float(t), int(n), float(v), ",".join(sources), p)


@functools.lru_cache(maxsize=256, typed=True)  # typed, and alias values with their types: 1 and 1.0 stay apart
def _cached_settings(model: str, temperature: Optional[float], max_tokens: Optional[int],
                     vote_temperature: Optional[float], alias_items: tuple, top_p: Optional[float] = None) -> SeatSettings:
    return _seat_settings(model, temperature, max_tokens, vote_temperature, {k: v for k, _, v in alias_items}, top_p)


def seat_roles(mode: str, impostor_seat: int, team_assignment: Optional[tuple] = None, *, players: int = 4,
               impostor_seats: Optional[tuple] = None) -> list[str]:
    """The model role of each seat (0-3 in the paper's game; ``model`` in homogeneous games), as
    ``impostor_bench.solvers.seating`` seats them."""
    return mode_spec(mode).seat_roles(impostor_seat, team_assignment, players=players, impostor_seats=impostor_seats)

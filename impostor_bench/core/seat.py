"""The working record of one seat in one game: what the solver fills and the scorer reads.

One typed record instead of a dict read with string keys in three places.  A plain
dataclass, not an Inspect ``StoreModel`` (instantiating one binds it to the sample store,
a stray key per field and milliseconds per seat on the hot path) and not pydantic
(validation per seat per game for data the engine itself wrote); the sample store keeps
it as JSON (``impostor_bench.solvers.game_store``) and ``PlayerRow`` validates it on the way out.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Optional

from impostor_bench.core.descriptions import DescriptionErrorClass


@dataclass
class SeatRecord:
    """Everything one seat does in a game, raw outputs included."""

    model: str = ""
    temperature: Optional[float] = None  # what this seat's calls used (impostor_bench.core.generation)
    top_p: Optional[float] = None  # likewise; None: not sent
    # --- description phase
    description: str = ""  # as shown to the others (the placeholder when invalid)
    description_raw: list[str] = field(default_factory=list)  # every attempt, as the model wrote it
    description_valid: bool = False
    description_error: Optional[str] = None  # the rule it broke (impostor_bench.core.parsing)
    description_class: Optional[DescriptionErrorClass] = None  # its class; None when valid, or an old store
    description_full: Optional[str] = None  # -T truncate_to: the valid description before the cut ``description`` shows
    input_tokens: Optional[int] = None  # tokens of this phase's calls (impostor_bench.solvers.usage); None: none reported
    output_tokens: Optional[int] = None
    served_model: Optional[str] = None  # the model id this phase's replies named (ModelOutput.model); None: none named
    # --- voting phase (``BALLOT_FIELDS``)
    vote_mode: str = "free"  # the ballot form used: free | structured | constrained | json_object
    vote_fallback: Optional[str] = None  # "<asked>-><used>" when a server refused the asked form
    vote_temperature: Optional[float] = None
    vote_raw: list[str] = field(default_factory=list)
    vote: Optional[int] = None  # the seat voted for (0-3), None when no counted vote
    confidence: Optional[float] = None
    reasoning: Optional[str] = None
    self_declared: bool = False
    word_guess: Optional[str] = None
    ballot_error: Optional[str] = None
    ballot_class: Optional[str] = "missing"  # impostor_bench.core.records.BALLOT_CLASSES; None in old stores
    vote_input_tokens: Optional[int] = None  # tokens of the ballot calls (impostor_bench.solvers.usage)
    vote_output_tokens: Optional[int] = None
    vote_served_model: Optional[str] = None  # the model id the ballot replies named

    def tokens(self) -> tuple[Optional[int], Optional[int]]:
        """(input, output) tokens of all this seat's calls in the game; None where none reported."""
        i, vi, o, vo = self.input_tokens, self.vote_input_tokens, self.output_tokens, self.vote_output_tokens
        return (None if i is None and vi is None else (i or 0) + (vi or 0),
                None if o is None and vo is None else (o or 0) + (vo or 0))

    def served(self) -> Optional[str]:
        """The model id(s) the provider said served this seat's calls, distinct, in order of
        first reply, comma-joined (None: no reply named one)."""
        ids: list[str] = []
        for value in (self.served_model, self.vote_served_model):
            ids += [i for i in (value or "").split(",") if i and i not in ids]
        return ",".join(ids) or None

    def to_dict(self) -> dict[str, Any]:
        """The fields in declaration order, lists copied: what ``dataclasses.asdict`` gives for
        these flat fields (scalars, lists of strings) without its recursive deep copy (read
        from ``__dict__``, not by ``getattr`` per field: four seats per save, on the hot path)."""
        values = self.__dict__
        out = {name: values[name] for name in _FIELD_NAMES}
        out["description_raw"], out["vote_raw"] = list(self.description_raw), list(self.vote_raw)  # the list fields
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SeatRecord":
        """A record from its stored form; fields an older log lacks take their defaults (an
        old record without ``ballot_class`` gets None, so the scorer derives it)."""
        values = {k: v for k, v in data.items() if k in _FIELD_SET}
        if "ballot_class" not in data and ("vote_raw" in data or "vote" in data):
            values["ballot_class"] = None
        return cls(**values)


_FIELD_NAMES = tuple(f.name for f in fields(SeatRecord))
_FIELD_SET = frozenset(_FIELD_NAMES)  # from_dict runs three times a game per seat: the names once

#: The fields the voting phase writes (stored under their own key, beside the description record).
BALLOT_FIELDS = ("vote_mode", "vote_fallback", "vote_temperature", "vote_raw", "vote", "confidence", "reasoning",
                 "self_declared", "word_guess", "ballot_error", "ballot_class", "vote_input_tokens",
                 "vote_output_tokens", "vote_served_model")

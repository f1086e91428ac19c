"""The model registry (``configs/models.yaml``): alias -> Inspect model string + metadata.

    >>> reg = load_registry()
    >>> reg.resolve("llama-4-scout")
    'openrouter/meta-llama/llama-4-scout'
    >>> reg.resolve("openai/gpt-4o-mini")       # anything with "/" passes through
    'openai/gpt-4o-mini'

Every problem in the file raises :class:`impostor_bench.core.errors.ImpostorError` naming
the file, the alias and field, and the fix.  ``IMPOSTOR_MODELS`` overrides the
default path.
"""

from __future__ import annotations

import difflib
from datetime import date
import os
import re
from pathlib import Path
from typing import Any, Iterable, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from impostor_bench.core.errors import ImpostorError

ENV_VAR = "IMPOSTOR_MODELS"
# models.csv: the data-contract columns first, then added ones (never rename or drop).
MODELS_CSV_COLUMNS = ("model", "provider", "family", "params_b", "route", "params_source", "params_note",
                      "active_params_b", "alias", "snapshot", "snapshot_date")
PARAMS_SOURCES = ("published", "estimated")
# Who made the models an OpenRouter-style "<org>/<model>" path names (Appendix J groups by maker).
ORG_MAKERS = {"meta-llama": "meta", "deepseek": "deepseek", "openai": "openai", "anthropic": "anthropic",
              "mistralai": "mistral", "google": "google", "qwen": "alibaba", "x-ai": "xai", "cohere": "cohere",
              "microsoft": "microsoft", "nvidia": "nvidia", "amazon": "amazon"}
_ROUTE_MAKERS = {"openai": "openai", "anthropic": "anthropic", "google": "google", "mistral": "mistral",
                 "grok": "xai", "bot": "impostor-bench"}
_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_ALIAS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_MODEL = re.compile(r"^[A-Za-z0-9_.-]+/\S+$")


def default_models_path() -> Path:
    """``<repo>/configs/models.yaml`` (or ``$IMPOSTOR_MODELS``)."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else (Path(__file__).resolve().parent / "configs" / "models.yaml").resolve()


class Defaults(BaseModel):
    """Generation defaults of a model (all optional)."""

    model_config = ConfigDict(extra="forbid")

    temperature: Optional[float] = Field(default=None, ge=0.0, le=2.0)
    max_tokens: Optional[int] = Field(default=None, gt=0)
    top_p: Optional[float] = Field(default=None, gt=0.0, le=1.0)
    seed: Optional[int] = None
    vote_temperature: Optional[float] = Field(default=None, ge=0.0, le=2.0)

    def generate_config(self) -> dict[str, Any]:
        """The fields that map onto Inspect's GenerateConfig (no vote_temperature)."""
        return self.model_dump(exclude_none=True, exclude={"vote_temperature"})


class Price(BaseModel):
    """What the user pays per million tokens (USD), when configs/models.yaml gives it; it
    wins over litellm's price map (impostor_bench/pricing.py). Unknown prices are left out, never 0."""

    model_config = ConfigDict(extra="forbid")

    input_per_mtok: float = Field(ge=0, description="USD per 1M input (prompt) tokens")
    output_per_mtok: float = Field(ge=0, description="USD per 1M output (completion) tokens")
    note: Optional[str] = None  # why this price (e.g. a stand-in host for a route no offline source prices)
    source: Optional[str] = Field(default=None, description="where the numbers come from (a price page, a price map and its key)")
    as_of: Optional[date] = Field(default=None, description="the date the price was read from its source")

    def label(self) -> str:
        """The price's provenance in a few words: ``source, as of DATE``."""
        parts = [self.source or "configs/models.yaml"] + ([f"as of {self.as_of}"] if self.as_of else [])
        return ", ".join(parts)


class Snapshot(BaseModel):
    """The dated version of a model the alias stands for: a provider's dated model id
    (``gpt-4o-2024-08-06``) or, for open weights served by a router, the weights' repository id;
    ``source`` says where the id and date come from and ``note`` what is known about the paper's."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="the dated model id, or the open weights' repository id")
    released: Optional[date] = Field(default=None, description="the release date of that version")
    source: str = Field(description="where the id and its date come from")
    note: Optional[str] = None


class _FieldError(ValueError):
    """A cross-field problem of an entry, naming the field to fix (pydantic loses it otherwise)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def route_of(model: str) -> str:
    """The API route of an Inspect model string: its first segment (openai, openrouter, litellm, ...)."""
    return str(model).split("/", 1)[0]


def maker_of(model: str) -> Optional[str]:
    """Best guess of who made an unregistered model, from its string (None when it cannot tell).

    ``openai/...`` -> openai; ``openrouter/meta-llama/...`` -> meta; ``litellm/<route>/...``
    is read as ``<route>/...``.  Only used for models the registry does not list.
    """
    parts = str(model).split("/")
    if parts[0] == "litellm" and len(parts) > 2:
        parts = parts[1:]
    if parts[0] in _ROUTE_MAKERS:
        return _ROUTE_MAKERS[parts[0]]
    if len(parts) > 2 and parts[1].lower() in ORG_MAKERS:
        return ORG_MAKERS[parts[1].lower()]
    return None


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="Inspect model string <route>/<model>")
    provider: str = Field(description="who made the model (openai, anthropic, meta, deepseek, ...), Appendix J")
    route: Optional[str] = Field(default=None, description="API route = the model string's first segment")
    family: str
    params_b: Optional[float] = Field(default=None, gt=0)
    params_source: Optional[Literal["published", "estimated"]] = None
    params_note: Optional[str] = None
    active_params_b: Optional[float] = Field(default=None, gt=0)
    defaults: Defaults = Field(default_factory=Defaults)
    model_args: dict[str, Any] = Field(default_factory=dict)
    price: Optional[Price] = None  # USD per 1M tokens; None = litellm's price map, else unknown
    snapshot: Optional[Snapshot] = None  # the dated version the alias calls (docs/models.md)

    @model_validator(mode="after")
    def _route_and_params(self) -> "ModelEntry":
        if self.route is None:
            self.route = route_of(self.model)
        elif self.route != route_of(self.model):
            raise _FieldError("route", f"route {self.route!r} is not the route of model {self.model!r} "
                             f"({route_of(self.model)!r}); fix: drop 'route' (it is read from the model string)")
        if self.params_b is None:
            if self.params_source is not None or self.active_params_b is not None:
                raise _FieldError("params_b", "params_source/active_params_b given without params_b; "
                                 "fix: add 'params_b:' or remove them")
            return self
        if self.params_source is None:
            self.params_source = "published"
        if self.params_source == "estimated" and not (self.params_note or "").strip():
            raise _FieldError("params_note", "params_source is 'estimated' but params_note is missing; "
                             "fix: add 'params_note:' saying where the number comes from")
        return self

    @field_validator("model")
    @classmethod
    def _model_string(cls, v: str) -> str:
        if not _MODEL.match(v):
            raise ValueError(f"{v!r} is not an Inspect model string; write it as <provider>/<model>, "
                             f"e.g. openai/gpt-4o")
        return v

    @field_validator("provider", "family")
    @classmethod
    def _non_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @field_validator("provider")
    @classmethod
    def _maker_id(cls, v: str) -> str:
        if not _ID.match(v):
            raise ValueError(f"{v!r} is not a lowercase id; fix: write the maker in lowercase, e.g. openai, "
                             f"anthropic, meta, deepseek")
        if v in ("openrouter", "litellm"):
            raise ValueError(f"{v!r} is an API route, not who made the model; fix: give the maker "
                             f"(e.g. meta, deepseek) - the route is read from the model string")
        return v

    def csv_row(self, alias: Optional[str] = None) -> dict[str, Any]:
        """This entry as a models.csv row (MODELS_CSV_COLUMNS)."""
        return {"model": self.model, "provider": self.provider, "family": self.family, "params_b": self.params_b,
                "route": self.route, "params_source": self.params_source, "params_note": self.params_note,
                "active_params_b": self.active_params_b, "alias": alias,
                "snapshot": self.snapshot.id if self.snapshot else None,
                "snapshot_date": self.snapshot.released if self.snapshot else None}


class Registry:
    """Aliases of ``configs/models.yaml`` (see the module docstring)."""

    def __init__(self, entries: dict[str, ModelEntry], path: Path):
        self.entries = dict(entries)
        self.path = path
        self._by_model: dict[str, str] = {}
        for alias, e in self.entries.items():
            self._by_model.setdefault(e.model, alias)

    @property
    def aliases(self) -> list[str]:
        return list(self.entries)

    def __contains__(self, name: str) -> bool:
        return name in self.entries or name in self._by_model

    def resolve(self, name: str) -> str:
        """Alias -> Inspect model string; a string containing "/" is returned unchanged."""
        name = str(name).strip()
        if name in self.entries:
            return self.entries[name].model
        if "/" in name:
            return name
        squash = lambda t: re.sub(r"[^a-z0-9]", "", t.lower())  # noqa: E731
        close = [a for a in self.entries if squash(a) == squash(name)]
        close += [a for a in difflib.get_close_matches(name, list(self.entries), n=3) if a not in close]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ImpostorError(
            f"{self.path}: no model alias {name!r}{hint}; fix: use one of {', '.join(self.entries)}, "
            f"an Inspect model string such as openai/gpt-4o, or add {name!r} under 'models:' in {self.path}"
        )

    def entry(self, name: str) -> Optional[ModelEntry]:
        """The entry of an alias or of a registered model string (None if unknown)."""
        if name in self.entries:
            return self.entries[name]
        alias = self._by_model.get(name)
        return self.entries[alias] if alias else None

    def alias_of(self, model: str) -> Optional[str]:
        return model if model in self.entries else self._by_model.get(model)

    def defaults(self, name: str) -> Defaults:
        e = self.entry(name)
        return e.defaults if e else Defaults()

    def models_csv_rows(self, models: Optional[Iterable[str]] = None) -> list[dict[str, Any]]:
        """Rows of models.csv (MODELS_CSV_COLUMNS; ``model`` = Inspect string).

        Without ``models``: one row per registry entry.  With ``models`` (aliases
        or model strings): one row each; unknown strings get their route from the
        prefix, the maker where :func:`maker_of` can tell, and empty family/params_b.
        """
        if models is None:
            names: list[str] = []
            seen: set[str] = set()
            for e in self.entries.values():
                if e.model not in seen:
                    seen.add(e.model)
                    names.append(e.model)
        else:
            names = [self.resolve(m) for m in models]
        rows = []
        for m in names:
            found = self.entry(m)
            if found is None:
                rows.append(unregistered_row(m))
            else:
                rows.append(found.csv_row(self.alias_of(found.model)))
        return rows


def unregistered_row(model: str) -> dict[str, Any]:
    """The models.csv row of a model the registry does not list."""
    row = dict.fromkeys(MODELS_CSV_COLUMNS)
    row.update(model=model, provider=maker_of(model), route=route_of(model) if "/" in model else None)
    return row


def _location(loc: tuple) -> str:
    return ".".join(str(p) for p in loc)


def load_registry(path: str | Path | None = None) -> Registry:
    """Read and validate a models registry (default ``configs/models.yaml``)."""
    p = Path(path) if path is not None else default_models_path()
    if not p.is_file():
        raise ImpostorError(f"{p}: model registry not found; fix: pass an existing YAML file "
                            f"(or unset {ENV_VAR}) - the shipped one is configs/models.yaml")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ImpostorError(f"{p}: not valid YAML{where} ({getattr(e, 'problem', None) or e}); "
                            f"fix the syntax") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict) or not data["models"]:
        raise ImpostorError(f"{p}: expected a top-level 'models:' mapping of alias -> entry; "
                            f"fix: see configs/models.yaml for the format")
    extra = set(data) - {"models"}
    if extra:
        raise ImpostorError(f"{p}: unknown top-level key(s) {sorted(extra)}; fix: only 'models:' is allowed")
    entries: dict[str, ModelEntry] = {}
    for alias, raw in data["models"].items():
        alias = str(alias)
        if not _ALIAS.match(alias) or "/" in alias:
            raise ImpostorError(f"{p}: alias {alias!r}: aliases are letters, digits, '.', '_' and '-' "
                                f"(no '/', which marks a model string); fix: rename it")
        if not isinstance(raw, dict):
            raise ImpostorError(f"{p}: alias {alias!r}: expected a mapping with model, provider, family, "
                                f"params_b; got {type(raw).__name__}")
        try:
            entries[alias] = ModelEntry.model_validate(raw)
        except ValidationError as e:
            err = e.errors()[0]
            field = _location(err["loc"]) or "(entry)"
            cause = (err.get("ctx") or {}).get("error")
            if isinstance(cause, _FieldError):
                field = cause.field
            msg = str(err["msg"]).removeprefix("Value error, ")
            if "; fix:" in msg:
                raise ImpostorError(f"{p}: alias {alias!r}, field {field!r}: {msg}") from None
            if err["type"] == "missing":
                fix = f"add '{field}:'"
            elif err["type"] == "extra_forbidden":
                fix = (f"remove '{field}' (allowed: {', '.join(ModelEntry.model_fields)}; "
                       f"defaults: {', '.join(Defaults.model_fields)}; price: {', '.join(Price.model_fields)}; "
                       f"snapshot: {', '.join(Snapshot.model_fields)})")
            else:
                fix = "correct the value"
            raise ImpostorError(f"{p}: alias {alias!r}, field {field!r}: {msg}; fix: {fix}") from None
    return Registry(entries, p)

"""Sweep configs: a YAML file validated into a ``SweepConfig``, with errors that name the
file, the field and the fix; the hash of the fields that decide the games (the resume guard).

Pure configuration: no Inspect or MLflow import.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Optional, cast

import yaml
from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model, field_validator,
                      model_validator)

from impostor_bench.core import call_limits
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.input_limits import shape_problem
from impostor_bench.core.languages import DEFAULT_LANGUAGE, LanguageCode
from impostor_bench.core.group import MAX_PLAYERS, MIN_PLAYERS, PAPER_IMPOSTORS, PAPER_PLAYERS, max_impostors
from impostor_bench.core.modes import mode_spec
from impostor_bench.core.options import GameCount, GameOptions, Seed, is_option, omitted_defaults, problem_of, shared_options
from impostor_bench.core.records import DIFFICULTIES, MODES, Difficulty, Mode
from impostor_bench.outdir import dir_problem
from impostor_bench.sweep.ablations import AXIS_DEFAULTS, AXIS_FIXES, CharLimits, Decoding, ablation_cells, decoding_problem, unset

MANIFEST = "impostor-sweep.json"



class Concurrency(BaseModel):
    """Passed to Inspect's eval_set (see its docs for the meaning)."""

    model_config = ConfigDict(extra="forbid")

    max_connections: Optional[int] = Field(default=10, ge=1, description="concurrent API connections per model")
    max_samples: Optional[int] = Field(default=None, ge=1, description="concurrent games per experiment")
    max_tasks: Optional[int] = Field(default=None, ge=1, description="concurrent experiments")
    # Inspect's live sample buffer (events of unfinished games, for `inspect view`) costs ~15 ms
    # of CPU per game, a third of the process's time at API-like latencies: off for sweeps.
    # Finished games are in the log either way (benchmarks/RESULTS.md, "Load and overhead").
    log_realtime: bool = Field(default=False, description="stream unfinished games' events for inspect view")


class Retries(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(default=10, ge=0, description="eval_set retry attempts of an unfinished experiment")
    wait: float = Field(default=30.0, ge=0, allow_inf_nan=False, description="seconds before the first retry (then exponential)")
    on_error: Optional[int] = Field(default=None, ge=0, description="retries of one errored game (sample)")
    fail_on_error: Optional[float] = Field(default=None, ge=0, allow_inf_nan=False,
                                           description="errored games an experiment tolerates (count or fraction)")
    # Per model call (Inspect's GenerateConfig). Inspect's own default retries a failing call
    # without limit (backoff up to 30 min), so a provider that always fails would hang a game.
    # The defaults are the task's own (impostor_bench.core.call_limits), so a sweep and a plain eval agree.
    max_retries: Optional[int] = Field(default=call_limits.MAX_RETRIES, ge=0, description="retries of one model call")
    timeout: Optional[float] = Field(default=call_limits.TIMEOUT, gt=0, allow_inf_nan=False,
                                     description="seconds for one model call, retries included")
    attempt_timeout: Optional[float] = Field(default=call_limits.ATTEMPT_TIMEOUT, gt=0, allow_inf_nan=False,
                                             description="seconds for one attempt of a model call")


#: URI schemes of MLflow's tracking stores (its TrackingStoreRegistry is private API; this list
#: is MLflow 3's: file store, SQLAlchemy databases, REST servers, Databricks). A plain path is a
#: file store.  Anything else is refused up front: MLflow would fail on it only when a run starts,
#: which the sweep would take for "server down" and go on untracked.
TRACKING_SCHEMES = ("file", "sqlite", "postgresql", "mysql", "mssql", "http", "https", "databricks",
                    "databricks-uc", "uc")


class Tracking(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    experiment: Optional[str] = Field(default=None, description="MLflow experiment name (default: the sweep name)")
    tracking_uri: Optional[str] = Field(default=None, description="default: MLFLOW_TRACKING_URI, else ./mlruns SQLite")

    @field_validator("tracking_uri")
    @classmethod
    def _known_scheme(cls, v: Optional[str]) -> Optional[str]:
        m = None if v is None else re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", v)
        if m is None or len(m.group(1)) == 1:
            return v  # a plain path (or a Windows drive letter): a file store
        scheme = m.group(1).split("+", 1)[0].lower()
        if scheme not in TRACKING_SCHEMES:
            raise ValueError(f"{v!r} has URI scheme {scheme!r}, which MLflow does not know; fix: use one of "
                             f"{', '.join(TRACKING_SCHEMES)} (e.g. http://host:5000 or sqlite:///mlruns/mlflow.db), "
                             f"or a folder path")
        return v


def _as_list(value: Any) -> Any:
    """A grid axis written as one value (``players: 6``) is the list of that value."""
    return value if isinstance(value, list) else [value]


#: A grid axis of group sizes: one value or a list (``players: [4, 6]``).
PlayerCounts = Annotated[list[Annotated[int, Field(strict=True, ge=MIN_PLAYERS, le=MAX_PLAYERS)]],
                         BeforeValidator(_as_list)]
ImpostorCounts = Annotated[list[Annotated[int, Field(strict=True, ge=1, le=max_impostors(MAX_PLAYERS))]],
                           BeforeValidator(_as_list)]
#: A grid axis of languages: one code or a list (``language: [en, es, de]``; languages.LANGUAGES).
LanguageCodes = Annotated[list[LanguageCode], BeforeValidator(_as_list)]


class _SweepFields(BaseModel):
    """One sweep.  Fields marked (games) change the games; the others may change between resumptions.

    The options every experiment shares (tie_rule, generation settings, word_pairs,
    game_time_limit, ...) are ``impostor_bench.core.options.GameOptions``' own fields, added by
    :func:`sweep_config_model`: their bounds are the task's.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", description="sweep name (MLflow experiment, log dir)")
    description: str = ""
    models: list[str] = Field(min_length=1, description="(games) registry aliases or provider/model strings")
    modes: list[Mode] = Field(default_factory=lambda: cast("list[Mode]", list(MODES)), min_length=1,
                              description="(games)")
    difficulties: list[Difficulty] = Field(default_factory=lambda: cast("list[Difficulty]", list(DIFFICULTIES)),
                                           min_length=1, description="(games)")
    games_per_experiment: GameCount = Field(description="(games)")
    seeds: list[Seed] = Field(default_factory=lambda: [0], min_length=1, description="(games) schedule seeds")
    players: PlayerCounts = Field(default_factory=lambda: [PAPER_PLAYERS], min_length=1,
                                  description=f"(games) grid axis: players per game, {MIN_PLAYERS} to {MAX_PLAYERS}")
    impostors: ImpostorCounts = Field(
        default_factory=lambda: [PAPER_IMPOSTORS], min_length=1,
        description="(games) grid axis: impostors per game; a cell that is not a game of its mode (impostors not a "
        "minority of the players, team modes outside 4 players with 1 impostor) is left out")
    language: LanguageCodes = Field(default_factory=lambda: cast("list[LanguageCode]", [DEFAULT_LANGUAGE]), min_length=1,
                                    description="(games) grid axis: the games' languages (prompts, word pairs and "
                                    "word rules; docs/rules.md, 'Languages')")
    length_budget: CharLimits = Field(default_factory=unset, min_length=1,
                                      description="(games) grid axis: -T length_budget values (docs/rules.md)")
    truncate_to: CharLimits = Field(default_factory=unset, min_length=1,
                                    description="(games) grid axis: -T truncate_to values (verbosity-matched)")
    decoding: list[Decoding] = Field(default_factory=list, description="(games) axis: {temperature, top_p} "
                                     "settings every model plays at (instead of temperature/top_p)")
    concurrency: Concurrency = Field(default_factory=Concurrency)
    retries: Retries = Field(default_factory=Retries)
    output_dir: str = Field(default="logs/sweeps", description="log dir is OUTPUT_DIR/NAME (relative to the CWD)")
    tracking: Tracking = Field(default_factory=Tracking)
    imports: list[str] = Field(default_factory=list,
                               description="Python modules to import first (e.g. to register custom model providers)")

    @field_validator("models", "modes", "difficulties", "seeds", "players", "impostors", "language")
    @classmethod
    def _unique(cls, v: list) -> list:
        dupes = sorted(str(x) for x, n in Counter(v).items() if n > 1)  # v.count per entry: quadratic
        if dupes:
            raise ValueError(f"duplicate entries: {', '.join(dupes)}; list each once")
        return v

    @field_validator("models")
    @classmethod
    def _no_spaces(cls, v: list[str]) -> list[str]:
        for name in v:
            if not name.strip() or name != name.strip() or any(c.isspace() for c in name):
                raise ValueError(f"model name {name!r} holds spaces; fix: write it as {''.join(name.split())!r}")
        return v

    @field_validator("output_dir")
    @classmethod
    def _output_dir_usable(cls, v: str) -> str:
        problem = dir_problem(v)
        if problem:
            raise ValueError(f"{v!r} {problem}; fix: give a folder you can write to for the Inspect logs "
                             f"(default logs/sweeps)")
        return v

    @model_validator(mode="after")
    def _notes_need_rounds(self) -> "_SweepFields":
        if getattr(self, "private_notes", False) and getattr(self, "rounds", 1) == 1:
            raise ValueError("private_notes needs rounds of 2 or more; fix: set rounds or drop private_notes")
        return self

    @model_validator(mode="after")
    def _some_group_plays(self) -> "_SweepFields":
        if not any(group_cells(self, m) for m in self.modes):
            raise ValueError(f"no (players, impostors) cell of players {self.players} and impostors "
                             f"{self.impostors} is a game of modes {', '.join(self.modes)}; fix: give each "
                             f"impostors value a strict minority of some players value (impostors=1 with 4 "
                             f"players, 2 with 5-6, 3 with 7-8; team modes and rounds > 1 play 1 impostor)")
        return self

    @model_validator(mode="after")
    def _axes_plan(self) -> "_SweepFields":
        problem = decoding_problem(self)
        if problem:
            raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _pairs_need_two(self) -> "_SweepFields":
        paired = [m for m in self.modes if mode_spec(m).roles]
        if paired and len(self.models) < 2:
            single = ", ".join(repr(m) for m in MODES if not mode_spec(m).roles)
            raise ValueError(f"modes {', '.join(paired)} pair two different models; list at least two models "
                             f"or keep only {single} in modes")
        return self


def sweep_config_model(options: type[GameOptions] = GameOptions) -> type[_SweepFields]:
    """The sweep config model: the sweep's own fields plus every shared option of ``options``
    with its own definition (type, default, bounds, fix), after ``seeds`` as they always were."""
    shared = {k: (options.model_fields[k].annotation, options.model_fields[k]) for k in shared_options(options)}
    return create_model("SweepConfig", __base__=_SweepFields, __module__=__name__, __doc__=_SweepFields.__doc__,
                        **shared)  # type: ignore[call-overload]


class SweepConfig(sweep_config_model()):  # type: ignore[misc]
    __doc__ = _SweepFields.__doc__

#: The fields that decide the games (the resume hash), the shared options included.
GAME_FIELDS = ("models", "modes", "difficulties", "games_per_experiment", "seeds") + shared_options() + (
    "players", "impostors", "language") + tuple(AXIS_DEFAULTS)
#: Grid axes newer than the resume hash: hashed only when they differ from the paper's game.
_NEWER_AXES = {"players": [PAPER_PLAYERS], "impostors": [PAPER_IMPOSTORS], "language": [DEFAULT_LANGUAGE],
               **AXIS_DEFAULTS}


def group_cells(cfg: Any, mode: str) -> list[tuple[int, int]]:
    """The (players, impostors) cells of the grid that are games of ``mode`` (the task's own
    ``GameOptions`` decides, so a cell the task would refuse is never planned)."""
    cells = []
    for n in cfg.players:
        for k in cfg.impostors:
            try:
                GameOptions.model_validate({"mode": mode, "players": n, "impostors": k,
                                            "rounds": getattr(cfg, "rounds", 1)})
            except ValidationError:
                continue
            cells.append((n, k))
    return cells


def left_out_cells(cfg: Any) -> list[str]:
    """The grid's (players, impostors) cells some mode leaves out, as ``mode: players=N impostors=K``."""
    out = []
    for m in cfg.modes:
        kept = set(group_cells(cfg, m))
        out += [f"{m}: players={n} impostors={k}" for n in cfg.players for k in cfg.impostors if (n, k) not in kept]
    return out


# ------------------------------------------------------------------ loading


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


#: The largest sweep config read (the shipped ones are < 2 kB): a bigger file, a pipe or a
#: device is refused before it is read.
MAX_CONFIG_BYTES = 1024 * 1024
#: The most values a config may hold once its YAML aliases are expanded, and how deep it may
#: nest: a recursive anchor (``a: &a [*a]``) or a billion-laughs file stops here, not in a
#: ``RecursionError`` or out of memory later.
MAX_CONFIG_VALUES = 100_000
MAX_CONFIG_DEPTH = 32


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(f"key {key!r} appears twice, on line {first} and line {line}")
        self.key, self.line, self.first = key, line, first


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader refusing a key given twice in one mapping (PyYAML keeps the last:
    ``games_per_experiment`` written twice silently multiplied a sweep's cost)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in self._keys_with_merged(node, set()):
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
                seen.setdefault(key, line)
            except TypeError:  # an unhashable key: the base class says so
                continue
            if first is not None:
                raise _DuplicateKey(key, line, first)
        return super().construct_mapping(node, deep=deep)

    def _keys_with_merged(self, node: yaml.Node, visiting: set[int]) -> list[tuple[yaml.Node, Any]]:
        """The (key, value) nodes of a mapping with those a ``<<:`` merge key brings in (nested
        merges too): a key both merged and written (``<<: {games_per_experiment: 2}`` then
        ``games_per_experiment: 500``) is a key given twice, which YAML resolves silently."""
        if not isinstance(node, yaml.MappingNode) or id(node) in visiting:  # a recursive anchor: _check_size says
            return []
        visiting = visiting | {id(node)}
        out: list[tuple[yaml.Node, Any]] = []
        for key_node, value_node in node.value:
            if key_node.tag != "tag:yaml.org,2002:merge":
                out.append((key_node, value_node))
            elif isinstance(value_node, yaml.SequenceNode):
                for sub in value_node.value:
                    out += self._keys_with_merged(sub, visiting)
            else:
                out += self._keys_with_merged(value_node, visiting)
        return out


# ``1e-3`` is a number in YAML 1.2 and text in PyYAML's 1.1: read it as the number a user means
# (every float field of a config: retry waits, timeouts, temperatures).
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float",
                                    re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+$"),
                                    list("-+0123456789."))


def _config_text(p: Path, path: str | Path) -> str:
    """The config file's text: a regular UTF-8 file of at most ``MAX_CONFIG_BYTES``."""
    import stat

    try:
        st = p.stat()
    except OSError:
        st = None
    if st is None or stat.S_ISDIR(st.st_mode):
        raise ImpostorError(f"{path}: sweep config not found; fix: pass a YAML file such as configs/smoke.yaml")
    if not stat.S_ISREG(st.st_mode):
        raise ImpostorError(f"{path}: not a regular file (a pipe, device or socket); fix: save the config to a "
                            f"YAML file and pass its path")
    if st.st_size > MAX_CONFIG_BYTES:
        raise ImpostorError(f"{path}: {st.st_size:,} bytes, over the {MAX_CONFIG_BYTES:,}-byte limit of a sweep "
                            f"config; fix: split the sweep into smaller configs")
    try:
        with p.open("rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ImpostorError(f"{path}: cannot read the sweep config ({exc.strerror or exc}); fix: check the path "
                            f"and its permissions") from exc
    try:
        return data[:MAX_CONFIG_BYTES].decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ImpostorError(f"{path}: not UTF-8 text (bad byte at line {line}, offset {exc.start}); fix: save the "
                            f"file as UTF-8") from None


def _check_size(value: Any, path: str | Path) -> None:
    """Refuse a loaded config holding more than ``MAX_CONFIG_VALUES`` values (aliases counted
    as often as they are used) or nested deeper than ``MAX_CONFIG_DEPTH``."""
    problem = shape_problem(value, MAX_CONFIG_VALUES, MAX_CONFIG_DEPTH)
    if problem:
        raise ImpostorError(f"{path}: {problem}; fix: write the values out without '&'/'*' anchors")


def load_config(path: str | Path) -> SweepConfig:
    """Read and validate a sweep YAML; errors name the file, the field and the fix."""
    p = Path(path)
    text = _config_text(p, path)
    try:
        raw = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader
    except _DuplicateKey as exc:
        raise ImpostorError(f"{path}: line {exc.line}: key {exc.key!r} is given twice (first on line {exc.first}); "
                            f"fix: keep one of them") from None
    except yaml.YAMLError as exc:
        raise ImpostorError(f"{path}: not valid YAML ({str(exc).splitlines()[0]}); fix: check the syntax") from exc
    except RecursionError:
        raise ImpostorError(f"{path}: nests too deep to read; fix: a sweep config is a flat mapping of fields "
                            f"(see configs/smoke.yaml)") from None
    _check_size(raw, path)
    if not isinstance(raw, dict):
        raise ImpostorError(f"{path}: expected a mapping of fields (name, models, ...); fix: see configs/smoke.yaml")
    model = SweepConfig
    try:
        cfg: SweepConfig = model.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors()[:5]:
            where = _loc(err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                known = ", ".join(model.model_fields) if len(err["loc"]) == 1 else "see configs/smoke.yaml"
                msg = f"unknown field; fix: remove it or use one of: {known}"
            elif err["type"] == "missing":
                msg = "required field is missing; fix: add it"
            elif "fix:" not in msg:
                fix = problem_of(model, err)[1] if len(err["loc"]) == 1 and is_option(model, err["loc"][0]) else ""
                fix = fix or (AXIS_FIXES.get(str(err["loc"][0]), "") if err["loc"] else "")
                msg = f"{msg}; fix: {fix.removeprefix('fix: ') or 'correct the value'}" + (f" (got {err['input']!r})" if "input" in err and not isinstance(err["input"], (dict, list)) else "")
            problems.append(f"field '{where}': {msg}")
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise ImpostorError(f"{path}: " + " | ".join(problems) + more) from None
    _check_plan_size(cfg, path)
    if cfg.word_pairs is not None:
        wp = word_pairs_path(cfg, p)
        if wp is not None and not wp.exists():
            raise ImpostorError(f"{path}: field 'word_pairs': {wp} does not exist; fix: give a path relative to "
                                f"the config file, or drop the field for configs/word_pairs.json")
        _check_word_pairs(cfg, wp, path)
    return cfg


#: The most experiments one sweep config may plan (the paper's design is 756 a seed; one
#: experiment is one Inspect eval and log): a config of 2,000 models in cross_play planned
#: 3,998,000 and was still planning after 3 minutes. Counted before planning.
MAX_EXPERIMENTS = 100_000


def experiments_per_cell(mode: str, n_models: int) -> int:
    """How many experiments one (mode, difficulty, seed) cell plans with ``n_models`` models
    (``impostor_bench.sweep.plan.experiments`` enumerates them)."""
    pairs = mode_spec(mode).sweep_pairs
    if pairs == "each":
        return n_models
    return n_models * (n_models - 1) // (1 if pairs == "ordered" else 2)


def planned_experiments(cfg: SweepConfig) -> int:
    """The number of experiments the config plans, counted without listing them."""
    return len(cfg.seeds) * len(cfg.difficulties) * len(ablation_cells(cfg)) * len(cfg.language) * sum(
        experiments_per_cell(m, len(cfg.models)) * len(group_cells(cfg, m)) for m in cfg.modes)


def _check_plan_size(cfg: SweepConfig, path: str | Path) -> None:
    n = planned_experiments(cfg)
    if n > MAX_EXPERIMENTS:
        per_mode = ", ".join(f"{m}: {experiments_per_cell(m, len(cfg.models)):,}" for m in cfg.modes)
        raise ImpostorError(
            f"{path}: field 'models': {len(cfg.models):,} models plan {n:,} experiments ({per_mode} per difficulty "
            f"and seed, x {len(cfg.difficulties)} difficulties x {len(cfg.seeds)} seeds), over the limit of "
            f"{MAX_EXPERIMENTS:,}; fix: split the models over several sweep configs, or use fewer modes, "
            f"difficulties or seeds")


def _check_word_pairs(cfg: SweepConfig, wp: Optional[Path], path: str | Path) -> None:
    """The word-pair file validated as a real run validates it (so ``--dry-run`` says what
    the run would refuse), and holding every tier the sweep plays."""
    from impostor_bench.core.wordpairs import WordPairError, load_word_pairs

    try:
        for language in cfg.language:  # each language's letters and inflections (the task's own check)
            tiers = load_word_pairs(wp, require_full=False, language=language)
    except WordPairError as exc:
        raise ImpostorError(f"{path}: field 'word_pairs': {exc}") from None
    missing = [d for d in cfg.difficulties if d not in tiers]
    if missing:
        raise ImpostorError(f"{path}: field 'word_pairs': {wp} has no tier {', '.join(map(repr, missing))}; fix: add "
                            f"it to the file or drop it from 'difficulties'")


def word_pairs_path(cfg: SweepConfig, config_path: Path) -> Optional[Path]:
    if cfg.word_pairs is None:
        return None
    wp = Path(cfg.word_pairs)
    return (wp if wp.is_absolute() else config_path.parent / wp).resolve()


def config_hash(cfg: SweepConfig, config_path: Path) -> str:
    """Hash of the fields that decide the games (not concurrency, retries, output or tracking)."""
    return hashlib.sha256(json.dumps(game_fields(cfg, config_path), sort_keys=True).encode()).hexdigest()


def game_fields(cfg: SweepConfig, config_path: Path) -> dict[str, Any]:
    from impostor_bench.core.wordpairs import word_pairs_sha256

    d = {k: getattr(cfg, k) for k in GAME_FIELDS}
    for k in omitted_defaults(GameOptions, d) - {"word_pairs"}:  # options newer than the hash: only when set
        del d[k]
    for k, default in _NEWER_AXES.items():
        if d[k] == default:
            del d[k]
    if cfg.temperature is not None or cfg.decoding:  # an explicit temperature joined the experiment ids: a sweep
        d["temperature_in_id"] = True  # started before refuses to resume rather than mix two ids
    if "decoding" in d:
        d["decoding"] = [x.model_dump() for x in d["decoding"]]
    d["word_pairs"] = word_pairs_sha256(str(word_pairs_path(cfg, config_path)) if cfg.word_pairs else None)
    if d["game_time_limit"] is None:  # the default (by model: call_limits.game_time_limit) hashes as the
        d["game_time_limit"] = call_limits.GAME_TIME_LIMIT  # 210 s it was, so older sweeps resume
    if not d["game_time_limit"]:  # no limit: the hash of a sweep started before the option existed
        del d["game_time_limit"]
    return json.loads(json.dumps(d))



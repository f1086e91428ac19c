"""A sweep's plan: its config -> the list of experiments (one Inspect task each).

An *experiment* is one (mode, difficulty, model assignment, seed) cell of
``games_per_experiment`` games; it is one Inspect eval, one log file and one
MLflow run.  Per difficulty and seed, with ``n`` models:

* ``homogeneous``  -- one experiment per model (``n``);
* ``cross_play``   -- every ordered (impostor, majority) pair of distinct models (``n(n-1)``);
* team modes       -- every unordered pair {team_a, team_b} (``n(n-1)/2`` each).

The paper's nine models give 9 + 72 + 3 x 36 = 189 experiments per difficulty,
756 over four difficulties, 90,720 games at 120 games each.

Pure planning: no Inspect or MLflow import at module level.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

from impostor_bench.core import call_limits
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.experiment import identity_of, role_models
from impostor_bench.core.modes import ALL_SEATS_ROLE, mode_spec
from impostor_bench.core.options import SHARED_OPTIONS, GameOptions
from impostor_bench.core.records import DIFFICULTIES, MODES, Difficulty, Mode
from impostor_bench.sweep.ablations import ablation_cells
from impostor_bench.sweep.config import SweepConfig, config_hash, group_cells, load_config, word_pairs_path

@dataclass(frozen=True)
class Experiment:
    """One Inspect task of the sweep (model names as written in the config: aliases)."""

    index: int
    mode: Mode
    difficulty: Difficulty
    seed: int
    roles: tuple[tuple[str, str], ...]  # (role, alias); ("model", alias) for homogeneous
    n_games: int
    rounds: int = 1  # the config's rounds (1: the paper's game, the identity as before)
    private_notes: bool = False
    players: int = 4  # the group size of its games (4 and 1: the paper's, the identity as before)
    impostors: int = 1
    language: str = "en"  # the games' language (en: the paper's, the identity as before)
    #: its length and decoding settings (``impostor_bench.sweep.ablations``): (option, value), unset ones left out
    settings: tuple[tuple[str, Any], ...] = ()

    @property
    def label(self) -> str:
        """The experiment's identity with the config's aliases (``impostor_bench.core.experiment``):
        its fields are named as the options they set."""
        options = {f.name: getattr(self, f.name) for f in fields(self)} | dict(self.settings)
        return identity_of(options, assignment_of(self.mode, dict(self.roles)))


def assignment_of(mode: str, models: Any) -> dict[str, str]:
    """Who plays which role by the names a task's ``models`` option holds (the config's aliases):
    one name, or role -> name (``{"model": name}`` for homogeneous)."""
    named = models if isinstance(models, dict) else {ALL_SEATS_ROLE: models}
    return role_models(mode, str(named.get(ALL_SEATS_ROLE) or ""), named)


def experiment_key(task_args: dict[str, Any]) -> str:
    """What an experiment is, to find it finished in a log dir: its identity with the config's
    names, read from task arguments (a log's, or those :func:`task_spec` gives its task), so the
    key tells apart every axis the identity does (``core.experiment.identity_of``)."""
    return identity_of(task_args, assignment_of(task_args.get("mode") or GameOptions().mode, task_args.get("models")))


@dataclass
class Plan:
    config: SweepConfig
    path: Path
    experiments: list[Experiment]
    shard: tuple[int, int] = (1, 1)
    all_experiments: int = 0
    resolved: dict[str, str] = field(default_factory=dict)  # alias -> model string

    @property
    def games(self) -> int:
        return sum(e.n_games for e in self.experiments)

    @property
    def sweep_id(self) -> str:
        return f"{self.config.name}-{config_hash(self.config, self.path)[:12]}"

    def default_log_dir(self) -> Path:
        base = Path(self.config.output_dir) / self.config.name
        i, n = self.shard
        return base / f"shard-{i}-of-{n}" if n > 1 else base


# ------------------------------------------------------------------ planning


def experiments(cfg: SweepConfig) -> list[Experiment]:
    out: list[Experiment] = []
    for seed in cfg.seeds:
        for difficulty in cfg.difficulties:
            for mode in cfg.modes:
                cells: list[tuple[tuple[str, str], ...]]
                spec = mode_spec(mode)
                if spec.sweep_pairs == "each":
                    cells = [((ALL_SEATS_ROLE, m),) for m in cfg.models]
                else:
                    pairs = itertools.permutations if spec.sweep_pairs == "ordered" else itertools.combinations
                    cells = [tuple(zip(spec.roles, pair)) for pair in pairs(cfg.models, 2)]
                for players, impostors in group_cells(cfg, mode):
                    for settings in ablation_cells(cfg):
                        kept = tuple((k, v) for k, v in settings.items() if v is not None)
                        for language in cfg.language:
                            for roles in cells:
                                out.append(Experiment(len(out), mode, difficulty, seed, roles,
                                                      cfg.games_per_experiment, cfg.rounds, cfg.private_notes,
                                                      players, impostors, language, kept))
    return out


def parse_shard(text: Optional[str]) -> tuple[int, int]:
    if not text:
        return (1, 1)
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not (1 <= int(m[1]) <= int(m[2])):
        raise ImpostorError(f"--shard {text!r} is not valid; fix: use I/N with 1 <= I <= N, e.g. --shard 2/4, "
                            f"or auto in a Slurm array task or Kubernetes Indexed Job")
    return int(m[1]), int(m[2])


def shipped_configs() -> dict[str, Path]:
    """The sweep configs that ship in the package (``impostor_bench/configs``), by name: smoke, demo, ..."""
    folder = Path(__file__).resolve().parents[1] / "configs"
    return {f.stem: f for f in sorted(folder.glob("*.yaml")) if f.stem != "models"}  # models.yaml: the registry


def config_path(name: str | Path) -> Path:
    """The sweep config a user names: a path that exists from the current folder, else a shipped
    config by name (``smoke``, ``smoke.yaml``, or ``configs/smoke.yaml`` typed outside the
    repository), so the shipped configs work from any folder."""
    p = Path(name)
    if p.exists():
        return p
    shipped = shipped_configs()
    if p.suffix in ("", ".yaml", ".yml") and (len(p.parts) == 1 or p.parts[:-1] == ("configs",)):
        if p.stem in shipped:
            return shipped[p.stem]
    raise ImpostorError(f"{name}: sweep config not found (looked in {Path.cwd()} and among the shipped configs); fix: "
                        f"pass the path of a YAML file, or the name of a shipped config: {', '.join(shipped)}")


def plan(path: str | Path, shard: Optional[str] = None, resolve: bool = False) -> Plan:
    """Load the config and list this shard's experiments (round-robin: experiment k goes to shard k mod N + 1)."""
    p = config_path(path)
    cfg = load_config(p)
    i, n = parse_shard(shard)
    every = experiments(cfg)
    mine = [e for e in every if e.index % n == i - 1]
    pl = Plan(cfg, p, mine, (i, n), len(every))
    if resolve:
        pl.resolved = resolve_models(cfg, p)
    return pl


def resolve_models(cfg: SweepConfig, config_path: Path | str, strict: bool = True) -> dict[str, str]:
    """alias -> Inspect model string via the registry (``impostor_bench.registry``); provider/model strings pass through."""
    try:
        from impostor_bench.registry import load_registry  # type: ignore
    except ImportError:
        registry = None
    else:
        try:
            registry = load_registry()
        except ImpostorError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise ImpostorError(f"model registry cannot be loaded ({exc}); fix: check configs/models.yaml") from exc
    out = {}
    for k, alias in enumerate(cfg.models):
        if registry is not None:
            try:
                out[alias] = registry.resolve(alias)
                continue
            except Exception as exc:  # noqa: BLE001
                if "/" in alias:
                    out[alias] = alias
                    continue
                if not strict:
                    out[alias] = alias
                    continue
                raise ImpostorError(f"{config_path}: field 'models[{k}]': {alias!r} is not a registry alias "
                                    f"({str(exc).splitlines()[0]}); fix: use a name from configs/models.yaml "
                                    f"or a provider/model string") from None
        elif "/" in alias:
            out[alias] = alias
        elif strict:
            raise ImpostorError(f"{config_path}: field 'models[{k}]': {alias!r} needs the model registry "
                                f"(impostor_bench.registry), which is not available; fix: use a provider/model string")
        else:
            out[alias] = alias
    _one_spelling_each(out, config_path)
    return out


def _one_spelling_each(resolved: dict[str, str], config_path: Path | str) -> None:
    """Refuse two entries of ``models`` that name one model (``random`` and ``bot/random``): their
    experiments would have one identity, play twice and never be reported finished."""
    seen: dict[str, str] = {}
    for alias, model in resolved.items():
        if model in seen:
            raise ImpostorError(f"{config_path}: field 'models': {seen[model]!r} and {alias!r} are the same model "
                                f"({model}); fix: list it once")
        seen[model] = alias


def task_spec(exp: Experiment, cfg: SweepConfig, config_path: Path, resolved: dict[str, str]) -> dict[str, Any]:
    """Arguments of the Inspect task plus model / model_roles (model strings, for display) for one experiment.

    The task binds the models itself from ``models`` (role -> the name the config uses), so a
    registry alias plays with its own model_args and defaults (``impostor_bench.solvers.bound_models``).
    """
    r = {role: resolved.get(a, a) for role, a in exp.roles}
    wp = word_pairs_path(cfg, config_path)
    shared = {k: getattr(cfg, k) for k in SHARED_OPTIONS if k != "word_pairs"}
    # the limit the task would choose, given explicitly: a sweep's task args (its games' identity) do
    # not depend on how the task was built (call_limits: none by default for local engines)
    shared["game_time_limit"] = call_limits.game_time_limit(cfg.game_time_limit, r.values())
    options = GameOptions(mode=exp.mode, difficulty=exp.difficulty, n_games=exp.n_games, seed=exp.seed,
                          models=dict(exp.roles), word_pairs=None if wp is None else str(wp),
                          players=exp.players, impostors=exp.impostors, language=exp.language,
                          **(shared | dict(exp.settings)))
    args = options.task_args()
    spec = mode_spec(exp.mode)
    if spec.display_role is None:
        return {"task_args": args, "model": r[ALL_SEATS_ROLE], "model_roles": {}}
    return {"task_args": args, "model": r[spec.display_role], "model_roles": {role: r[role] for role in spec.roles}}


# ------------------------------------------------------------------ text


def plan_table(pl: Plan) -> str:
    """Experiments and games per difficulty x mode, with totals."""
    rows: dict[tuple[str, str], list[int]] = {}
    for e in pl.experiments:
        c = rows.setdefault((e.difficulty, e.mode), [0, 0])
        c[0] += 1
        c[1] += e.n_games
    lines = [f"{'difficulty':<11}{'mode':<17}{'experiments':>12}{'games':>10}"]
    for d in DIFFICULTIES:
        for m in MODES:
            if (d, m) in rows:
                n, g = rows[(d, m)]
                lines.append(f"{d:<11}{m:<17}{n:>12,}{g:>10,}")
    lines.append(f"{'total':<28}{len(pl.experiments):>12,}{pl.games:>10,}")
    return "\n".join(lines)


def is_team(mode: str) -> bool:
    return mode_spec(mode).teams

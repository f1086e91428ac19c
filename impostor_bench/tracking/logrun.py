"""One Inspect eval of the impostor task -> one MLflow run (shared by the hooks and ``impostor sync``).

A run is identified by the tag ``impostor.run_key`` = ``<eval_set_id or 'eval'>:<task_id>``:
Inspect keeps ``task_id`` (and the eval-set id) across eval-set retries, so a
resumed experiment continues its run, and ``impostor sync`` finds the run a
hook already wrote instead of duplicating it.
"""

from __future__ import annotations

import functools
import json
import platform
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, NamedTuple, Optional, Sequence

from impostor_bench.export import (
    ERRORS_FILE,
    GAMES_FILE,
    MODELS_FILE,
    MOVES_FILE,
    PLAYERS_FILE,
    Tables,
    experiment_id_of,
    models_frame,
    role_models,
    table_models,
    tables_from_log,
)
from impostor_bench.core import experiment
from impostor_bench.tracking.runmetrics import eval_metrics
from impostor_bench.tracking.runnote import NOTE_TAG, experiment_note
from impostor_bench.tracking.redact import (
    redact_mapping,
    redact_text,
    redacted_log_copy,
    scrub_frame,
    spec_secret_values,
)
from impostor_bench.tracking.traces import trace_run

TAG = "impostor."

# MLflow warns that a local path "can be interpreted in multiple ways" (two registered
# local-file sources) for every run's word-pair dataset; a scoped catch_warnings is not
# thread-safe (runs finish on worker threads at once), so the filter is set once for the
# process, for this message only.
warnings.filterwarnings("ignore", message="The specified dataset source can be interpreted", category=UserWarning)
TABLES_DIR = "tables"
LOG_DIR_ARTIFACT = "inspect_log"
CONFIG_ARTIFACT = "config"


@dataclass
class Context:
    """What a sweep tells the hooks (unset for a plain ``inspect eval``)."""

    experiment: Optional[str] = None
    tracking_uri: Optional[str] = None
    parent_run_id: Optional[str] = None
    sweep_id: Optional[str] = None
    sweep_name: Optional[str] = None
    shard: Optional[str] = None
    sweep_config: Optional[dict] = None
    extra_tags: dict = field(default_factory=dict)
    disabled: bool = False  # the sweep found the store unreachable and told the user already


def run_key(spec: Any) -> str:
    return f"{spec.eval_set_id or 'eval'}:{spec.task_id}"


def _versions() -> dict[str, str]:
    return dict(_installed_versions())


@functools.lru_cache(maxsize=1)
def _installed_versions() -> tuple[tuple[str, str], ...]:
    """Read once per process: each ``importlib.metadata.version`` scans the installed
    distributions (~2 ms a run for the six, twice per run: params and resolved.json)."""
    out = {"python": platform.python_version()}
    for pkg in ("inspect_ai", "mlflow", "impostor-bench", "pydantic", "inspect-mlflow", "litellm"):
        try:
            out[pkg] = importlib_metadata.version(pkg)
        except importlib_metadata.PackageNotFoundError:
            pass
    return tuple(out.items())


_DATASET_LOCK = threading.Lock()
_GIT: dict[str, Optional[tuple[str, bool]]] = {}


def package_git() -> Optional[tuple[str, bool]]:
    """(commit, dirty) of the checkout this package runs from, if it is a git checkout."""
    if "v" not in _GIT:
        import subprocess

        root = Path(__file__).resolve().parents[2]
        try:
            commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                    timeout=10, check=True).stdout.strip()
            dirty = bool(subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                        capture_output=True, text=True, timeout=10).stdout.strip())
            _GIT["v"] = (commit, dirty) if commit else None
        except (OSError, subprocess.SubprocessError):
            _GIT["v"] = None
    return _GIT["v"]


def git_of(spec: Any) -> Optional[tuple[str, bool]]:
    if spec.revision is not None and spec.revision.commit:
        return spec.revision.commit, bool(getattr(spec.revision, "dirty", False))
    return package_git()


def _clean(v: Any) -> str:
    s = "None" if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else str(v))
    return s if len(s) <= 500 else s[:497] + "..."


def role_settings(spec: Any) -> dict[str, dict[str, Any]]:
    """Generation settings per role: as the task resolved them for the roles it bound (aliases,
    task metadata ``generation``), else from the role's model string and the -T options."""
    from impostor_bench.core.generation import seat_settings

    args = dict(spec.task_args or {})
    bound = ((spec.metadata or {}).get("generation") or {}).get("roles") or {}
    out = {}
    for role, model in role_models(spec).items():
        st = bound.get(role) or (bound.get("model") if len(role_models(spec)) == 1 else None)
        out[role] = st or seat_settings(str(model), temperature=args.get("temperature"),
                                        max_tokens=args.get("max_tokens"),
                                        vote_temperature=args.get("vote_temperature"), top_p=args.get("top_p")).as_dict()
    return out


def side_models_of(spec: Any) -> dict[str, list[str]]:
    """The impostor and majority models of an eval, in every mode (``experiment.side_models``)."""
    return experiment.side_models((spec.task_args or {}).get("mode", "homogeneous"), role_models(spec))


#: The params of a run beside its game options (every ``GameOptions`` field is a param, as played):
#: the names, and the prefixes of families of names, listed once (tests/test_tracking.py).
RUN_PARAMS = ("task", "word_pairs_sha256", "word_pairs_file", "model", "impostor_model", "majority_model",
              "model_base_url", "git.commit", "git.dirty")
RUN_PARAM_PREFIXES = ("generation.", "model.", "model_args.", "generate.", "version.")


def played_options(spec: Any) -> dict[str, Any]:
    """Every game option of an eval as it was played: from the task metadata, which records them
    all; for a log of an older task that recorded fewer, its task arguments, else the default."""
    from impostor_bench.core.options import GameOptions

    args, md = dict(spec.task_args or {}), spec.metadata or {}
    return {k: md[k] if k in md else args.get(k, f.default) for k, f in GameOptions.model_fields.items()}


def spec_params(spec: Any, secrets: set[str]) -> dict[str, str]:
    """MLflow params of an eval (all strings, no secrets): its game options and ``RUN_PARAMS``."""
    md = spec.metadata or {}
    params: dict[str, Any] = {"task": spec.task} | played_options(spec)
    roles = role_settings(spec)
    for k in ("temperature", "max_tokens", "vote_temperature"):
        for role, st in roles.items():
            params[f"generation.{role}.{k}"] = st.get(k)
        values = {st.get(k) for st in roles.values()}
        if params[k] is None and values:  # not set explicitly: what the seats used (one value, or per role)
            params[k] = values.pop() if len(values) == 1 else "per role"
    params["word_pairs_sha256"] = md.get("word_pairs_sha256")
    params["word_pairs_file"] = md.get("word_pairs_file")  # absolute path the task resolved
    params["experiment_id"] = experiment_id_of(spec)  # the option, or the label derived when it is not given
    params["model"] = spec.model
    for role, m in role_models(spec).items():
        params[f"model.{role}"] = m
    for side, models in side_models_of(spec).items():  # every mode, so runs group by model
        params[f"{side}_model"] = ", ".join(models)
    for k, v in (spec.model_args or {}).items():
        params[f"model_args.{k}"] = v
    if spec.model_base_url:
        params["model_base_url"] = spec.model_base_url
    gen = spec.model_generate_config.model_dump(exclude_none=True) if spec.model_generate_config else {}
    for k, v in gen.items():
        params[f"generate.{k}"] = v
    for k, v in (spec.packages or {}).items():
        params[f"version.{k}"] = v
    for k, v in _versions().items():
        params.setdefault(f"version.{k}", v)
    git = git_of(spec)
    if git is not None:
        params["git.commit"], params["git.dirty"] = git
    red = redact_mapping(params, secrets)
    return {k: redact_text(_clean(v), secrets) for k, v in red.items()}


def resolved_config(spec: Any, ctx: Context, secrets: set[str]) -> dict:
    roles = {}
    for role, cfg in (spec.model_roles or {}).items():
        roles[role] = {"model": cfg.model, "base_url": cfg.base_url, "args": cfg.args,
                       "config": cfg.config.model_dump(exclude_none=True) if cfg.config else {}}
    cfg = {
        "task": spec.task, "task_file": spec.task_file, "task_args": spec.task_args,
        "task_metadata": spec.metadata, "experiment_id": experiment_id_of(spec),
        "models": role_models(spec), "model": spec.model, "model_base_url": spec.model_base_url,
        "model_args": spec.model_args, "model_roles": roles,
        "generate_config": spec.model_generate_config.model_dump(exclude_none=True) if spec.model_generate_config else {},
        "eval_config": spec.config.model_dump(exclude_none=True) if spec.config else {},
        "packages": spec.packages, "versions": _versions(),
        "revision": spec.revision.model_dump() if spec.revision else None, "package_git": package_git(),
        "eval_id": spec.eval_id, "task_id": spec.task_id, "eval_set_id": spec.eval_set_id, "run_id": spec.run_id,
        "sweep": {"id": ctx.sweep_id, "name": ctx.sweep_name, "shard": ctx.shard, "config": ctx.sweep_config},
    }
    return redact_mapping(json.loads(json.dumps(cfg, default=str)), secrets)


def spec_secrets(spec: Any) -> set[str]:
    return spec_secret_values(spec)


def find_run(client: Any, experiment_id: str, key: str) -> Any | None:
    runs = client.search_runs([experiment_id], filter_string=f"tags.`{TAG}run_key` = '{key}'", max_results=10,
                              order_by=["attributes.start_time ASC"])
    return runs[0] if runs else None


class OpenedRun(NamedTuple):
    """A run ``open_run`` found or made; ``created``: made now, so it has no dataset input yet and
    ``finish_run`` logs the word pairs without reading the whole run back to look (~6 ms a run)."""

    run_id: str
    created: bool


def start_run(client: Any, experiment_id: str, spec: Any, ctx: Context, source: str) -> str:
    """Find (by run key) or create the experiment's run, tag it, log its params; leaves it RUNNING."""
    return open_run(client, experiment_id, spec, ctx, source).run_id


def open_run(client: Any, experiment_id: str, spec: Any, ctx: Context, source: str) -> OpenedRun:
    """``start_run``, saying whether the run was created (pass it to ``finish_run``)."""
    secrets = spec_secrets(spec)
    key = run_key(spec)
    exp_label = experiment_id_of(spec)
    args = spec.task_args or {}
    tags = {
        f"{TAG}kind": "experiment", f"{TAG}run_key": key, f"{TAG}experiment_id": exp_label,
        f"{TAG}task_id": spec.task_id, f"{TAG}eval_id": spec.eval_id, f"{TAG}eval_set_id": spec.eval_set_id or "",
        f"{TAG}mode": str(args.get("mode", "")), f"{TAG}difficulty": str(args.get("difficulty", "")),
        f"{TAG}source": source,
    }
    for role, m in role_models(spec).items():
        tags[f"{TAG}model.{role}"] = m
    for side, models in side_models_of(spec).items():
        tags[f"{TAG}{side}_model"] = ", ".join(models)
    if ctx.sweep_id:
        tags[f"{TAG}sweep_id"] = ctx.sweep_id
    if ctx.sweep_name:
        tags[f"{TAG}sweep"] = ctx.sweep_name
    if ctx.shard:
        tags[f"{TAG}shard"] = ctx.shard
    if ctx.parent_run_id:
        tags["mlflow.parentRunId"] = ctx.parent_run_id
    git = git_of(spec)
    if git is not None:
        tags["mlflow.source.git.commit"] = git[0]
    tags.update(ctx.extra_tags)
    existing = find_run(client, experiment_id, key)
    if existing is None:
        run = client.create_run(experiment_id, run_name=exp_label[:250], tags={"mlflow.runName": exp_label[:250], **tags})
        run_id = run.info.run_id
        old_params: dict[str, str] = {}
    else:
        run_id = existing.info.run_id
        old_params = dict(existing.data.params)
        client.update_run(run_id, status="RUNNING")
        for k, v in tags.items():
            client.set_tag(run_id, k, v)
    log_params(client, run_id, spec_params(spec, secrets), old_params)
    return OpenedRun(run_id, existing is None)


def log_params(client: Any, run_id: str, params: dict[str, str], old: dict[str, str]) -> None:
    """Log new params; a param whose value changed since (params are immutable) goes to a tag instead."""
    from mlflow.entities import Param

    new = [Param(k, v) for k, v in params.items() if k not in old]
    for i in range(0, len(new), 100):
        client.log_batch(run_id, params=new[i:i + 100])
    for k, v in params.items():
        if k in old and old[k] != v:
            client.set_tag(run_id, f"{TAG}param_changed.{k}"[:250], v)


def _word_pairs_dataset(path: Path, sha: str) -> Any:
    """The MLflow dataset entity of a word-pairs file (callers hold ``_DATASET_LOCK``), built once
    per file content and sha param: mlflow infers its schema from the DataFrame of the pairs,
    ~15 ms of every run's end."""
    import hashlib

    try:
        content = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:  # not cached: load_word_pairs says what is wrong with it
        return _dataset_entity.__wrapped__(str(path), str(path.resolve()), sha, "")
    return _dataset_entity(str(path), str(path.resolve()), sha, content)


@functools.lru_cache(maxsize=16)
def _dataset_entity(path: str, source: str, sha: str, content: str) -> Any:
    """The entity of the word pairs at ``path`` (``source``: resolved) whose bytes hash to
    ``content`` (part of the cache key)."""
    import pandas as pd
    from mlflow.data.pandas_dataset import from_pandas

    from impostor_bench.core.wordpairs import load_word_pairs

    tiers = load_word_pairs(path, require_full=False)
    rows = [{"pair_id": p.pair_id, "difficulty": p.difficulty, "majority_word": p.majority,
             "impostor_word": p.impostor} for tier in tiers.values() for p in tier]
    return from_pandas(pd.DataFrame(rows), source=source, name="word_pairs",
                       digest=sha[:16] if sha else None)._to_mlflow_entity()


def _log_word_pairs(client: Any, run_id: str, spec: Any, created: bool) -> None:
    from mlflow.entities import DatasetInput, InputTag

    from impostor_bench.core.wordpairs import default_word_pairs_path

    args = spec.task_args or {}
    md_file = (spec.metadata or {}).get("word_pairs_file")  # resolved by the task (a -T path may be relative)
    path = Path(md_file or args.get("word_pairs") or default_word_pairs_path())
    if not path.exists():
        return
    ds = _word_pairs_dataset(path, (spec.metadata or {}).get("word_pairs_sha256") or "")
    if not created:  # a run found again (a resumed eval, a sync) may have it already
        run = client.get_run(run_id)
        have = {(d.dataset.name, d.dataset.digest) for d in (run.inputs.dataset_inputs if run.inputs else [])}
        if (ds.name, ds.digest) in have:
            return
    tags = [InputTag("mlflow.data.context", "eval"), InputTag("difficulty", str(args.get("difficulty", "")))]
    client.log_inputs(run_id, datasets=[DatasetInput(ds, tags=tags)])


def served_model_tags(players: Any) -> dict[str, str]:
    """``impostor.served_model``: per model asked for (the ``model.<role>`` tags and params hold
    the snapshot asked for), the model id(s) its providers' replies named (the players table's
    ``served_model``, distinct), as ``"<asked> -> <served>[,<served>]; ..."``; no tag where no
    reply named one. One tag, not one per model: a model string such as ``local//path.gguf``
    is not a valid MLflow key."""
    if players is None or "served_model" not in players.columns or players.empty:
        return {}
    parts = []
    for model, served in players.groupby("model", sort=True)["served_model"]:
        ids: list[str] = []
        for value in served.dropna():
            ids += [i for i in str(value).split(",") if i and i not in ids]
        if ids:
            parts.append(f"{model} -> {','.join(ids)}")
    return {f"{TAG}served_model": "; ".join(parts)[:5000]} if parts else {}


def finish_run(client: Any, run_id: str, log: Any, ctx: Context, tables: Optional[Tables] = None,
               live: Sequence[Any] = (), created: bool = False) -> Tables:
    """Log metrics, tables, the (redacted) Inspect log, config and word pairs; set the final status.
    ``live``: the last points of the live series (``hooks.LiveProgress``), written with the metrics;
    ``created``: ``open_run`` made the run (``OpenedRun``)."""
    from mlflow.entities import Metric, RunTag
    import time

    spec = log.eval
    secrets = spec_secrets(spec)
    tables = tables if tables is not None else tables_from_log(log)
    metrics = eval_metrics(log, tables)
    now = int(time.time() * 1000)
    ms = list(live) + [Metric(k, v, now, 0) for k, v in metrics.items()]
    with tempfile.TemporaryDirectory(prefix="impostor-mlflow-") as tmp:
        t = Path(tmp) / TABLES_DIR
        t.mkdir()
        # every table through the one scrubber (``redact.scrub_frame``): a provider's error or a
        # player's text may repeat a key (the tables are built from the log, scrubbed only here)
        scrub_frame(tables.games, secrets).to_parquet(t / GAMES_FILE, index=False)
        scrub_frame(tables.players, secrets).to_parquet(t / PLAYERS_FILE, index=False)
        if tables.moves is not None:
            scrub_frame(tables.moves, secrets).to_parquet(t / MOVES_FILE, index=False)
        models_frame(table_models(tables) or list(role_models(spec).values())).to_csv(t / MODELS_FILE, index=False)
        if tables.errors or tables.missing:
            scrub_frame(tables.errors_frame(), secrets).to_csv(t / ERRORS_FILE, index=False)
        client.log_artifacts(run_id, str(t), TABLES_DIR)
        c = Path(tmp) / CONFIG_ARTIFACT
        c.mkdir()
        (c / "resolved.json").write_text(json.dumps(resolved_config(spec, ctx, secrets), indent=2, default=str))
        client.log_artifacts(run_id, str(c), CONFIG_ARTIFACT)
        loc = str(log.location or "").removeprefix("file://")
        if loc and Path(loc).exists():
            src = redacted_log_copy(loc, secrets, tmp)
            client.log_artifact(run_id, str(src), LOG_DIR_ARTIFACT)
    for attempt in range(3):
        try:
            with _DATASET_LOCK:  # concurrent inserts of one dataset collide in the store; a retry finds it
                _log_word_pairs(client, run_id, spec, created)
            break
        except Exception as exc:  # noqa: BLE001 - the sha param is logged regardless
            if attempt == 2:
                client.set_tag(run_id, f"{TAG}word_pairs_dataset_error", str(exc)[:250])
            time.sleep(0.5 * (attempt + 1))
    try:  # one MLflow trace per game (impostor_bench.tracking.traces); never fails the run
        trace_run(client, run_id, log, secrets)
    except Exception as exc:  # noqa: BLE001
        client.set_tag(run_id, f"{TAG}traces_error", redact_text(str(exc), secrets)[:250])
    status = "FINISHED" if log.status == "success" else "FAILED"
    tags = {f"{TAG}log_status": str(log.status), f"{TAG}log_file": redact_text(loc, secrets)[:5000],
            f"{TAG}eval_id": spec.eval_id, f"{TAG}tables_logged": "1",
            f"{TAG}games_completed": str(len(tables.games)),
            NOTE_TAG: experiment_note(metrics, spec.task_args or {}, role_models(spec))}
    tags.update(served_model_tags(tables.players))
    # an errored game does not stop the eval (the task's continue_on_fail): then the log has no
    # error of its own, and the first errored game's says why it ended 'error'
    error = log.error or next((s.error for s in log.samples or [] if s.error is not None), None)
    if error is not None:
        tags[f"{TAG}error"] = redact_text((error.message or "")[:1000], secrets)
    # the metrics and all the end tags in one store transaction (set_tag is one commit each, and
    # each log_batch reads the whole run back first); tables_logged is still written last
    chunks = [ms[i:i + 500] for i in range(0, len(ms), 500)] or [[]]
    for chunk in chunks[:-1]:
        client.log_batch(run_id, metrics=chunk)
    client.log_batch(run_id, metrics=chunks[-1], tags=[RunTag(k, v) for k, v in tags.items()])
    client.set_terminated(run_id, status=status)
    return tables

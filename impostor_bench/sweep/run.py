"""Running a sweep with Inspect's eval_set: plan, preflight, resume guard, tracking, summary.

eval_set does the orchestration: concurrency, retries of unfinished
experiments, and resumption from the log directory (finished games are
reused, crashed logs are recovered from Inspect's sample buffer).  This
module adds the plan, a guard against resuming with a changed config and the
end-of-run summary; the MLflow parent run and the end-of-run sync are ``sweep.tracking``'s.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.output_files import write_text
from impostor_bench.outdir import make_dir
from impostor_bench.preflight import check_models
from impostor_bench.sweep.config import GAME_FIELDS, MANIFEST, config_hash, game_fields, left_out_cells
from impostor_bench.sweep.lease import experiment_leases
from impostor_bench.sweep.plan import Plan, experiment_key, plan, plan_table, resolve_models, task_spec
from impostor_bench.sweep.progress import ProgressView, SweepProgress, showing
from impostor_bench.sweep.tracking import complete_unfinished_runs, start_tracking, wait_seconds

if TYPE_CHECKING:
    from inspect_ai.util import DisplayType

LIST_LIMIT = 12
_NOT_LOGS = {"eval-set.json", "logs.json", MANIFEST}


# ------------------------------------------------------------------ manifest (resume guard)


def _manifest(pl: Plan) -> dict:
    return {
        "name": pl.config.name, "sweep_id": pl.sweep_id, "config_file": str(pl.path),
        "config_hash": config_hash(pl.config, pl.path), "game_fields": game_fields(pl.config, pl.path),
        "shard": f"{pl.shard[0]}/{pl.shard[1]}", "experiments": len(pl.experiments), "games": pl.games,
        "models": pl.resolved, "tracking_experiment": pl.config.tracking.experiment or pl.config.name, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def check_log_dir(log_dir: Path, pl: Plan) -> dict:
    """Refuse to resume into a log dir written with another config (or by something else); write the manifest."""
    mf = log_dir / MANIFEST
    new = _manifest(pl)
    if mf.exists():
        try:
            old = json.loads(mf.read_text())
        except (OSError, ValueError) as exc:
            raise ImpostorError(f"{mf}: unreadable sweep manifest ({exc}); fix: use a new --log-dir") from exc
        if old.get("config_hash") != new["config_hash"] or old.get("shard") != new["shard"]:
            changes = []
            of, nf = old.get("game_fields", {}), new["game_fields"]
            for k in GAME_FIELDS:
                if of.get(k) != nf.get(k):
                    changes.append(f"{k}: {json.dumps(of.get(k))} -> {json.dumps(nf.get(k))}")
            if old.get("shard") != new["shard"]:
                changes.append(f"shard: {old.get('shard')} -> {new['shard']}")
            raise ImpostorError(
                f"{log_dir}: holds sweep '{old.get('name')}' started with a different config "
                f"(config hash {str(old.get('config_hash'))[:12]}, now {new['config_hash'][:12]}; changed: "
                f"{'; '.join(changes) or 'word pairs'}); resuming would mix games of two designs. "
                f"fix: restore {pl.path} as it was, or pass a new --log-dir")
        return old
    if log_dir.exists() and any(p.suffix == ".eval" or (p.suffix == ".json" and p.name not in _NOT_LOGS)
                                for p in log_dir.rglob("*") if p.is_file()):
        raise ImpostorError(f"{log_dir}: already holds Inspect logs that no `impostor sweep` wrote (no {MANIFEST}); "
                            f"fix: pass an empty or new --log-dir")
    make_dir(log_dir, "log dir (output_dir/name or --log-dir)")
    write_text(mf, json.dumps(new, indent=2))
    return new


# ------------------------------------------------------------------ summary


def summarize(log_dir: Path, pl: Plan, wall_s: float) -> tuple[dict[str, float], list[str], bool]:
    """Metrics and text lines of the end-of-run summary, and whether every game finished."""
    from inspect_ai.log import read_eval_log

    from impostor_bench.export import find_logs, is_impostor_task, tables_from_logs
    from impostor_bench.core.records import WIN_CONDITIONS

    lines: list[str] = []
    logs = find_logs(log_dir) if log_dir.exists() else []
    try:
        tables = tables_from_logs(log_dir, with_players=False) if logs else None  # the games are enough here
    except ImpostorError as exc:
        tables = None
        lines.append(f"  {exc}")
    done_tasks: dict[str, str] = {}
    for lp in logs:
        try:
            h = read_eval_log(lp, header_only=True)
        except Exception:  # noqa: BLE001 - reported by tables_from_logs
            continue
        if is_impostor_task(h.eval.task):
            # by what the experiment is, not by Inspect's task id: two launches of one sweep gave
            # each experiment two task ids ("4/2 experiments complete"), and no re-run could finish
            key = experiment_key(h.eval.task_args or {})
            if h.status == "success" or key not in done_tasks:
                done_tasks[key] = h.status
    exp_ok = sum(1 for s in done_tasks.values() if s == "success")
    g = tables.games if tables is not None else None
    n_games = len(g) if g is not None else 0
    m: dict[str, float] = {"experiments_planned": len(pl.experiments), "experiments_completed": exp_ok,
                           "games_planned": pl.games, "games_completed": n_games,
                           "games_errored": len(tables.errors) if tables else 0,
                           "games_missing": len(tables.missing) if tables else 0, "wall_time_s": wall_s}
    lines.append(f"Sweep '{pl.config.name}' shard {pl.shard[0]}/{pl.shard[1]}: "
                 f"{exp_ok}/{len(pl.experiments)} experiments complete, {n_games:,}/{pl.games:,} games")
    if g is not None and n_games:
        imp = int((g["winner"] == "impostor").sum())
        m["wins/impostor"], m["wins/majority"] = imp, n_games - imp
        lines.append(f"  winners: impostor {imp:,} ({100 * imp / n_games:.1f}%), majority {n_games - imp:,}")
        counts = g["win_condition"].value_counts()
        conds = [c for c in WIN_CONDITIONS if c in counts] + [c for c in counts.index if c not in WIN_CONDITIONS]
        lines.append("  by win condition: " + ", ".join(f"{c} {int(counts[c]):,}" for c in conds))
        for c in set(WIN_CONDITIONS) | set(counts.index):
            m[f"win_condition/{c}"] = int(counts.get(c, 0))
        ib, idesc = int(g["n_invalid_ballots"].sum()), int(g["n_invalid_descriptions"].sum())
        m["invalid_ballots"], m["invalid_descriptions"] = ib, idesc
        seats = int(g["n_players"].sum()) if "n_players" in g.columns else 4 * n_games  # four a paper game
        lines.append(f"  invalid ballots {ib:,} of {seats:,}; invalid descriptions {idesc:,} of {seats:,}")
    if tables is not None:
        tot = {"input": 0.0, "output": 0.0, "total": 0.0}
        for u in tables.usage.values():
            for k in tot:
                tot[k] += u.get(k, 0.0)
        for k, v in tot.items():
            m[f"tokens/{k}"] = v
        lines.append(f"  tokens: {int(tot['total']):,} (input {int(tot['input']):,}, output {int(tot['output']):,}) "
                     f"over {len(tables.usage)} model(s)")
        m["game_time_s"] = tables.game_time_s
        if tables.duplicates:
            lines.append(f"  {tables.duplicates} duplicate game record(s) from retry logs were merged")
        errs = tables.problems_text(limit=5)
        lines += ["  " + x for x in errs]
    else:
        lines.append("  no logs written")
    lines.append(f"  wall time {wall_s:,.1f}s; logs in {log_dir}")
    ok = exp_ok == len(pl.experiments) and n_games == pl.games
    if not ok:
        lines.append("  unfinished: re-run the same command to resume (finished games are kept)")
    return m, lines, ok


# ------------------------------------------------------------------ run


def _import_modules(pl: Plan) -> None:
    for k, mod in enumerate(pl.config.imports):
        try:
            importlib.import_module(mod)
        except Exception as exc:  # noqa: BLE001
            raise ImpostorError(f"{pl.path}: field 'imports[{k}]': cannot import {mod!r} ({exc}); "
                                f"fix: install the module or put it on PYTHONPATH") from exc


def alias_model_args(resolved: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The registry model_args of each alias the sweep plays (model strings have none)."""
    from impostor_bench.registry import load_registry

    reg = load_registry()
    return {a: dict(reg.entries[a].model_args) for a in resolved if a in reg.entries and reg.entries[a].model_args}


def build_tasks(pl: Plan, task_factory: Callable[..., Any]) -> list[Any]:
    """One Inspect task per experiment, made by ``task_factory`` (the ``impostor`` task function,
    handed in by the command line: the sweep does not import the task layer); the task binds its
    models (with each alias's model_args)."""
    return [task_factory(**task_spec(e, pl.config, pl.path, pl.resolved)["task_args"]) for e in pl.experiments]


def _print_cost(pl: Plan) -> None:
    """The plan's cost estimate (impostor_bench.sweep.estimate); an estimate never stops a sweep."""
    from impostor_bench.sweep.estimate import cost_table

    try:
        print(cost_table(pl), flush=True)
    except Exception as exc:  # noqa: BLE001
        print(f"estimated cost: not available ({type(exc).__name__}: {exc})", flush=True)


def effective_settings(pl: Plan) -> dict[str, dict[str, Any]]:
    """Each model's generation settings as its games play them (sweep option > alias default >
    the paper's 0.7 / 150, ``impostor_bench.core.generation``): what a sweep displays, where
    Inspect's panels show the task options (``None``: not set by the sweep)."""
    from impostor_bench.core.generation import seat_settings
    from impostor_bench.registry import load_registry

    reg, cfg = load_registry(), pl.config
    out = {}
    for alias in cfg.models:
        model = pl.resolved.get(alias, alias)
        d = reg.defaults(alias).model_dump(exclude_none=True)
        s = seat_settings(model, temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                          vote_temperature=cfg.vote_temperature, alias_defaults=d)
        out[alias] = {"temperature": s.temperature, "max_tokens": s.max_tokens, "vote_temperature": s.vote_temperature}
    return out


def settings_line(pl: Plan) -> str:
    """``game settings: temperature 0.7, max_tokens 150, vote temperature 0.3 (every model)``."""
    eff = effective_settings(pl)

    def text(v: dict[str, Any]) -> str:
        return f"temperature {v['temperature']:g}, max_tokens {v['max_tokens']}, vote temperature {v['vote_temperature']:g}"

    kinds = {text(v) for v in eff.values()}
    if len(kinds) == 1:
        return f"game settings: {kinds.pop()} (every model)"
    return "game settings: " + "; ".join(f"{a} {text(v)}" for a, v in eff.items())


def left_to_play(pl: Plan, log_dir: Path) -> Plan:
    """The plan less the experiments whose log in ``log_dir`` already finished (a resumed
    sweep plays only the rest: Inspect's eval_set skips them), so its estimate is what it will
    cost; a partly played experiment counts whole (the estimate stays an upper bound)."""
    import dataclasses

    if not log_dir.exists():
        return pl
    from inspect_ai.log import list_eval_logs, read_eval_log

    done: set[str] = set()
    for info in list_eval_logs(str(log_dir)):
        try:
            log = read_eval_log(info, header_only=True)
        except Exception:  # noqa: BLE001 - an unreadable log is played again
            continue
        if log.status == "success":
            done.add(experiment_key(log.eval.task_args or {}))
    left = [e for e in pl.experiments
            if experiment_key(task_spec(e, pl.config, pl.path, pl.resolved)["task_args"]) not in done]
    if len(left) < len(pl.experiments):
        print(f"resuming in {log_dir}: {len(pl.experiments) - len(left):,} of {len(pl.experiments):,} experiments "
              f"already finished; {len(left):,} left to play ({sum(e.n_games for e in left):,} games)", flush=True)
    return dataclasses.replace(pl, experiments=left)


def _dry_run_refusals(pl: Plan) -> int:
    """After the plan: what the real run would refuse on this machine (keys not set, packages
    not installed), listed, exit 0; a provider that does not exist is the config's error
    (exit 2, like any broken config)."""
    from impostor_bench.preflight import is_config_error, model_problems, problem_lines

    where = f"{pl.path}: field 'models'"
    causes = model_problems(pl.resolved, alias_model_args(pl.resolved))
    broken = {c: n for c, n in causes.items() if is_config_error(c)}
    if broken:
        raise ImpostorError(f"{where}: " + " | ".join(problem_lines(broken)))
    if causes:
        print("\na real run here would refuse to start until these are fixed:")
        for line in problem_lines(causes):
            print(f"  - {line}")
    else:
        print("\nevery model can be created here: a real run would start")
    return 0


def print_plan(pl: Plan, log_dir: Path, list_all: bool) -> None:
    rounds = pl.config.rounds
    print(f"Sweep '{pl.config.name}' ({pl.path}): {len(pl.experiments):,} experiments, {pl.games:,} games"
          + (f" of up to {rounds} rounds" + (" with private notes" if pl.config.private_notes else "")
             if rounds > 1 else "")
          + (f" (shard {pl.shard[0]}/{pl.shard[1]} of {pl.all_experiments:,} experiments)" if pl.shard[1] > 1 else ""))
    print(plan_table(pl))
    skipped = left_out_cells(pl.config)
    if skipped:
        print(f"group-size cells that are not games, left out: {'; '.join(skipped)}")
    _print_cost(pl)
    shown = pl.experiments if list_all or len(pl.experiments) <= LIST_LIMIT else pl.experiments[:LIST_LIMIT]
    print("\nexperiments:")
    for e in shown:
        roles = ", ".join(f"{r}={pl.resolved.get(a, a)}" for r, a in e.roles)
        group = "" if (e.players, e.impostors) == (4, 1) else f"  {e.players} players, {e.impostors} impostor(s)"
        language = "" if e.language == "en" else f"  language {e.language}"
        print(f"  {e.index:>4}  {e.mode:<16}{e.difficulty:<8}seed {e.seed}  {e.n_games} games  {roles}{group}{language}")
    if len(shown) < len(pl.experiments):
        print(f"  ... {len(pl.experiments) - len(shown):,} more (--list shows all)")
    print(f"\nlog dir: {log_dir}   sweep id: {pl.sweep_id}")


def _log_model_summaries(client: Any, ctx: Any, pl: Plan, ld: Path, rates_metric: Optional[Callable[[], Any]]) -> None:
    """One MLflow run per model, pooled over the sweep's games (``tracking.modelsummary``) by
    ``rates_metric`` (the scorer's ``rates_by_model``, handed in by the command line; None: none)."""
    from impostor_bench.tracking.modelsummary import MAX_GAMES, log_model_summaries

    if rates_metric is None:
        return
    if pl.games > MAX_GAMES:
        print(f"MLflow: per-model summary runs are written for sweeps of up to {MAX_GAMES:,} games; for this one "
              f"run `impostor report --experiment {ctx.experiment} --out DIR --log-run`", file=sys.stderr)
        return
    try:
        exp = client.get_experiment_by_name(ctx.experiment)
        n = log_model_summaries(client, exp.experiment_id, pl.sweep_id, ld, rates_metric)
        print(f"MLflow: {n} per-model summary run(s) (impostor.kind=model_summary), pooled over the sweep's games",
              file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - a summary never fails a sweep
        print(f"impostor tracking: could not write the per-model summary runs ({str(exc)[:200]})", file=sys.stderr)


def run_sweep(config: str, task_factory: Callable[..., Any], shard: Optional[str] = None,
              log_dir: Optional[str] = None, dry_run: bool = False, display: Optional[DisplayType] = None,
              list_all: bool = False, model_rates: Optional[Callable[[], Any]] = None) -> int:
    wait_seconds()  # a bad IMPOSTOR_MLFLOW_WAIT_S is refused before the plan, not after the games
    pl = plan(config, shard)
    _import_modules(pl)
    pl.resolved = resolve_models(pl.config, pl.path, strict=True)
    ld = Path(log_dir) if log_dir else pl.default_log_dir()
    if dry_run:  # the plan first (made before one has the keys), then what would stop the real run
        print_plan(pl, ld, list_all)
        return _dry_run_refusals(pl)
    # Unknown providers and missing keys: refused before any game.
    check_models(pl.resolved, f"{pl.path}: field 'models'", model_args=alias_model_args(pl.resolved))
    if not pl.experiments:
        raise ImpostorError(f"{config}: shard {shard} has no experiments; fix: use fewer shards")
    # the log dir exists (or is refused in one line) before its leases are taken in it
    make_dir(ld, "log dir (output_dir/name or --log-dir)")
    # a second launch of this sweep into this log dir is refused here, before it costs anything
    with experiment_leases(ld, [e.label for e in pl.experiments], pl.config.name):
        return _play(pl, ld, task_factory, display, model_rates)


def _play(pl: Plan, ld: Path, task_factory: Callable[..., Any], display: Optional[DisplayType],
          model_rates: Optional[Callable[[], Any]]) -> int:
    """The sweep's games, tracking and summary (``run_sweep``, holding the experiments' leases)."""
    left = left_to_play(pl, ld)
    _print_cost(left)  # what the run will cost, before its first game
    print(settings_line(pl), flush=True)
    tasks = build_tasks(pl, task_factory)  # validates word pairs and task options before anything is written
    check_log_dir(ld, pl)

    from inspect_ai import eval_set

    from impostor_bench import eval_memory
    from impostor_bench.inspect_compat import cache_package_scan
    from impostor_bench.tracking import context as tracking_context

    # this process's workarounds of Inspect (never the entry points': they load in everyone's evals)
    cache_package_scan()  # else ~0.6 s of CPU per experiment before the first game
    eval_memory.install()  # else every finished experiment's runner state stays until the last ends

    ctx, client = start_tracking(pl, ld)
    cfg = pl.config
    t0 = time.time()
    ok_eval: Optional[bool] = None
    # Inspect's per-experiment result panels only with --display; else the sweep's one progress view
    view = None if display is not None else ProgressView(SweepProgress(len(left.experiments), left.games))
    try:
        with tracking_context.using(ctx), (showing(view) if view is not None else contextlib.nullcontext()):
            ok_eval, _ = eval_set(
                tasks, log_dir=str(ld), retry_attempts=cfg.retries.attempts, retry_wait=cfg.retries.wait,
                retry_on_error=cfg.retries.on_error, fail_on_error=cfg.retries.fail_on_error,
                max_connections=cfg.concurrency.max_connections, max_samples=cfg.concurrency.max_samples,
                max_tasks=cfg.concurrency.max_tasks, log_realtime=cfg.concurrency.log_realtime,
                display=display if display is not None else "none",
                **{k: v for k in ("max_retries", "timeout", "attempt_timeout")
                   if (v := getattr(cfg.retries, k)) is not None},
            )
        if client is not None and not ctx.disabled:
            complete_unfinished_runs(ld, ctx)
            _log_model_summaries(client, ctx, pl, ld, model_rates)
    finally:
        wall = time.time() - t0
        metrics, lines, ok = summarize(ld, pl, wall)
        if client is not None and ctx.parent_run_id:
            try:
                from impostor_bench.tracking.sweeprun import finish_sweep_run

                if pl.shard[1] > 1:  # shards share the sweep run: keep each shard's numbers apart
                    metrics = {f"shard_{pl.shard[0]}_of_{pl.shard[1]}/{k}": v for k, v in metrics.items()}
                finish_sweep_run(client, ctx.parent_run_id, metrics, None if ok_eval is None else (ok and bool(ok_eval)))
            except Exception as exc:  # noqa: BLE001
                print(f"impostor tracking: could not update the sweep run ({str(exc)[:200]}); "
                      f"run: impostor sync {ld}", file=sys.stderr)
        print("\n" + "\n".join(lines))
        if ctx.disabled and pl.config.tracking.enabled:
            from impostor_bench.tracking.store import tracking_disabled

            if not tracking_disabled():
                print(f"not tracked in MLflow: run `impostor sync {ld}` once the tracking server is reachable")
    return 0 if (ok and ok_eval) else 1

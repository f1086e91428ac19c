"""``impostor sweep CONFIG [--dry-run] [--shard i/n|auto] [--log-dir DIR]``: run a sweep with Inspect's eval_set.

The command line wires the task layer (``impostor_bench.tasks.impostor``) into the sweep runner
(``impostor_bench.sweep.run``), which does the rest: plan, preflight, resume guard,
MLflow runs and the summary.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, Mapping, Optional

if TYPE_CHECKING:
    from inspect_ai.util import DisplayType


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("sweep", help="run a sweep of experiments from a YAML config (Inspect eval_set)",
                              description=__doc__.splitlines()[0])
    p.add_argument("config", help="sweep YAML, e.g. configs/smoke.yaml or configs/paper.yaml")
    p.add_argument("--dry-run", action="store_true", help="print the experiment plan and game counts; run nothing")
    p.add_argument("--list", action="store_true", help="with --dry-run: list every experiment")
    p.add_argument("--shard", metavar="I/N|auto",
                   help="run only shard I of N (round-robin over experiments); auto: I and N from a Slurm array "
                        "task (SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT or _MIN/_MAX) or a Kubernetes "
                        "Indexed Job (JOB_COMPLETION_INDEX with IMPOSTOR_SHARDS). Without --shard, a process that "
                        "sees SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX runs as auto; --shard 1/1 runs the "
                        "whole sweep there. With --dry-run --list: the experiments that index runs")
    p.add_argument("--log-dir", help="Inspect log directory (default: OUTPUT_DIR/NAME[/shard-I-of-N])")
    p.add_argument("--display", choices=["full", "conversation", "rich", "plain", "log", "none"],
                   help="Inspect's own display, with a result panel per experiment (default: none; the sweep's "
                        "one progress line and its summary, the panels' numbers are in the logs and MLflow)")
    p.set_defaults(func=_cmd)


def run_sweep(config: str, shard: Optional[str] = None, log_dir: Optional[str] = None, dry_run: bool = False,
              display: Optional[DisplayType] = None, list_all: bool = False) -> int:
    """Run (or with ``dry_run`` plan) the sweep of ``config`` with the Impostor task."""
    from impostor_bench.scorers.winner import rates_by_model
    from impostor_bench.sweep import run  # here, not at the top: it imports Inspect (53 MB, seconds) for every command
    from impostor_bench.tasks.impostor import impostor

    return run.run_sweep(config, impostor, shard=shard, log_dir=log_dir, dry_run=dry_run, display=display,
                         list_all=list_all, model_rates=rates_by_model)


def resolve_shard(text: Optional[str], env: Mapping[str, str]) -> Optional[str]:
    """``--shard`` as given, ``auto`` (or nothing, inside a scheduler's array task) as the
    scheduler's ``I/N``, said on stderr so a task's log shows which shard it ran and why."""
    from impostor_bench.sweep.scheduler import auto_shard, scheduler_shard

    if text is not None and text.strip() != "auto":
        return text
    found = auto_shard(env) if text is not None else scheduler_shard(env)
    if found is None:
        return None
    how = "--shard auto" if text is not None else "no --shard inside an array task (--shard 1/1 runs the whole sweep)"
    print(f"impostor sweep: shard {found.text} from {found.source} ({how})", file=sys.stderr, flush=True)
    return found.text


def _cmd(args: argparse.Namespace) -> int:
    return run_sweep(args.config, shard=resolve_shard(args.shard, os.environ), log_dir=args.log_dir, dry_run=args.dry_run,
                     display=args.display, list_all=args.list)

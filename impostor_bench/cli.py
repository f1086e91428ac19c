"""The ``impostor`` command.

Each subcommand lives in its own module with a ``register(subparsers)``
function that adds its parser and sets ``func``; this file only dispatches and
turns ``ImpostorError`` into a one-line message without a traceback.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
from typing import Optional

from impostor_bench.core.errors import ImpostorError

# Keep litellm (pulled in by mlflow/our provider) from reaching for the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SUBCOMMAND_MODULES = (
    "impostor_bench.commands.sweep",
    "impostor_bench.commands.export",
    "impostor_bench.commands.annotate",
    "impostor_bench.commands.sync",
    "impostor_bench.commands.report",
    "impostor_bench.commands.simulate",
    "impostor_bench.commands.power",
    "impostor_bench.commands.compare",
    "impostor_bench.commands.play",
    "impostor_bench.commands.tracking_server",
    "impostor_bench.commands.deploy",
    "impostor_bench.commands.relocate",
)


def _plain(text: str | None) -> str | None:
    """Help text without the reStructuredText double backticks the docstrings use."""
    return text.replace("``", "") if isinstance(text, str) else text


def _strip_markup(parser: argparse.ArgumentParser) -> None:
    parser.description = _plain(parser.description)
    parser.epilog = _plain(parser.epilog)
    for action in parser._actions:
        action.help = _plain(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = _plain(choice.help)
            for child in action.choices.values():
                _strip_markup(child)


def version() -> str:
    """The installed distribution's version, else the source tree's ``__version__``."""
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version
        return dist_version("impostor-bench")
    except PackageNotFoundError:
        from impostor_bench import __version__
        return __version__


DESCRIPTION = ("impostor-bench: The Impostor Game, a four-player social-deduction benchmark of LLMs. "
               "Sweeps of experiments (each an Inspect eval and an MLflow run), their tables and report.")
EXAMPLES = """examples:
  impostor sweep configs/smoke.yaml                 # a small offline sweep (bots), one MLflow run per experiment
  impostor sweep configs/paper.yaml --dry-run       # the paper's plan and cost, no API key needed
  impostor export --experiment impostor-smoke --out out/tables
  impostor report --parquet out/tables --out out/report
  impostor play --participant ada                   # you in a seat, on a local page
  inspect eval impostor_bench/impostor --model bot/random -T n_games=2   # one experiment with Inspect

docs: README.md and docs/ in the repository; `impostor COMMAND --help` for each command."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="impostor", description=DESCRIPTION, epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    _strip_markup(parser)
    return parser


_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def disk_full(exc: BaseException) -> Optional[OSError]:
    """The "no space left" ``OSError`` behind ``exc`` (itself, its cause or context, or one of
    an exception group's), if any: Inspect raises it from its log writer, sometimes wrapped."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in _DISK_FULL:
            return e
        todo += [e.__cause__, e.__context__, *getattr(e, "exceptions", ())]  # type: ignore[list-item]
    return None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        rc = args.func(args)
    except ImpostorError as exc:
        if args.debug:
            raise
        print(f"impostor {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a full disk, wherever raised: one line, then re-raised if not that
        full = None if args.debug else disk_full(exc)
        if full is not None:
            where = f" (writing {full.filename})" if full.filename else ""
            print(f"impostor {args.command}: error: no space left on the device{where}; fix: free disk space, then "
                  f"run the same command again (finished games are kept: a sweep resumes where it stopped)",
                  file=sys.stderr)
            return 2
        if args.debug or not isinstance(exc, OSError) or exc.filename is None:
            raise
        print(f"impostor {args.command}: error: {exc.filename}: {exc.strerror or exc}; fix: check the path "
              f"(a file or folder you can read, or a folder you can write to); --debug shows where", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"impostor {args.command}: interrupted", file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())

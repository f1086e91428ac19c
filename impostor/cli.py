"""The ``impostor`` command.

Each subcommand lives in its own module with a ``register(subparsers)``
function that adds its parser and sets ``func``; this file only dispatches and
turns ``ImpostorError`` into a one-line message without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from impostor.core.errors import ImpostorError

# Keep litellm (pulled in by mlflow/our provider) from reaching for the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SUBCOMMAND_MODULES = (
    "impostor.commands.sweep",
    "impostor.commands.export",
    "impostor.commands.sync",
    "impostor.commands.report",
    "impostor.commands.simulate",
    "impostor.commands.power",
    "impostor.commands.play",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="impostor", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


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
    except KeyboardInterrupt:
        print(f"impostor {args.command}: interrupted", file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())

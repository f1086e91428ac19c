"""``impostor tracking-server``: a shared MLflow tracking server on PostgreSQL, for shards on several hosts."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("tracking-server", help="run an MLflow tracking server backed by PostgreSQL "
                                                      "(proxied artifacts) for sweeps sharded over hosts",
                              description=__doc__.splitlines()[0])
    p.add_argument("--dir", default=".tracking", help="where the database (pgdata/) and artifacts live "
                                                      "(default .tracking; reused on restart)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for "
                                                       "other hosts, which turns authentication on)")
    p.add_argument("--port", type=int, default=5000, help="HTTP port of the tracking server (default 5000)")
    p.add_argument("--workers", type=int, default=2, help="mlflow server worker processes (default 2)")
    p.add_argument("--pg-port", type=int, default=0, help="PostgreSQL's port on 127.0.0.1 (default: a free one)")
    p.add_argument("--auth", action=argparse.BooleanOptionalAction, default=None,
                   help="require a login (MLflow's basic-auth app; admin password generated into DIR/auth/"
                        "admin-password). Default: on when --host is not loopback. --no-auth turns it off (with a "
                        "warning when the server is reachable from other hosts)")
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    from pathlib import Path

    from impostor_bench.tracking.server import serve

    return serve(Path(args.dir), host=args.host, port=args.port, workers=args.workers, pg_port=args.pg_port,
                 auth=args.auth)

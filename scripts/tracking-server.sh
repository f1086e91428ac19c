#!/usr/bin/env bash
# One command for a shared tracking server: PostgreSQL (installed here when missing) + `mlflow server`
# with proxied artifacts, data under DIR (default .tracking/). Prints the MLFLOW_TRACKING_URI to use
# (and, when it listens beyond loopback, the MLFLOW_TRACKING_USERNAME / _PASSWORD of its login);
# Ctrl-C stops it. Options: see `impostor tracking-server --help` (--dir, --host, --port, --workers).
set -euo pipefail
cd "$(dirname "$0")/.."
have_pg() { command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
if ! have_pg; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[tracking-server] installing PostgreSQL (Debian package)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "[tracking-server] PostgreSQL is missing: install it (e.g. sudo apt-get install -y postgresql)" >&2
    exit 2
  fi
fi
[ -x .venv/bin/impostor ] || { echo "[tracking-server] no .venv: run scripts/install.sh first" >&2; exit 2; }
.venv/bin/python -c "import psycopg2" 2>/dev/null || .venv/bin/pip install -q "psycopg2-binary>=2.9,<3"
# MLflow's basic-auth app (on by default when --host is not loopback) needs Flask-WTF (mlflow's `auth` extra)
.venv/bin/python -c "import flask_wtf" 2>/dev/null || .venv/bin/pip install -q "Flask-WTF>=1,<2"
export LITELLM_LOCAL_MODEL_COST_MAP=True   # else `mlflow server` hangs at start offline
exec .venv/bin/impostor tracking-server "$@"

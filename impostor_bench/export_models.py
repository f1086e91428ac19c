"""models.csv of exported tables: one row per model, from the model registry (configs/models.yaml)
where it knows the model; split from ``impostor_bench.export`` with the per-process cache of those rows."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

import pandas as pd

from impostor_bench.registry import MODELS_CSV_COLUMNS, default_models_path, load_registry, unregistered_row

MODELS_COLUMNS = list(MODELS_CSV_COLUMNS)  # contract columns, then route, params_source, ...


def models_frame(models: Iterable[str]) -> pd.DataFrame:
    """models.csv rows for these models: from the registry (configs/models.yaml) where it knows them,
    else the route from the model string, the maker where the string tells it, empty family/params_b."""
    models = tuple(sorted({m for m in models if m}))
    path = default_models_path()
    try:
        st = path.stat()
        version: tuple = (st.st_mtime_ns, st.st_size)
    except OSError:
        version = ()
    rows = _models_rows(str(path), version, models)
    return pd.DataFrame([dict(r) for r in rows], columns=MODELS_COLUMNS)


@lru_cache(maxsize=64)
def _models_rows(path: str, version: tuple, models: tuple[str, ...]) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """models.csv rows of ``models`` from the registry file at ``path`` as it is at ``version``
    (mtime, size): parsing the YAML was ~15 ms of every tracked run's end."""
    rows = None
    try:
        rows = load_registry(path).models_csv_rows(list(models))
    except Exception:  # noqa: BLE001 - registry missing or broken: fall back, never block an export
        rows = None
    if rows is None:
        rows = [unregistered_row(m) for m in models]
    return tuple(tuple((c, r.get(c)) for c in MODELS_COLUMNS) for r in rows)

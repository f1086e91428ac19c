"""Statistics of the report bundle (paper Appendices B-M; definitions in docs/analysis.md).

``Analysis(data, config)`` (``impostor_bench.analysis.stats.session``) is one analysis of the data:
``a.table(name)`` computes a table once per session (``a.result(name)``: with its own notes and
error), ``a.notes`` collects the caveats; ``engine.compute_tables`` computes many, in a process pool.
``TABLES`` maps every bundle table name to its registered function ``fn(a, config) ->
DataFrame`` (an ``AnalysisData`` instead of a session gets a one-off session), whose
leading columns are the data contract's, and whose declaration (title, section, inference,
figures, round tables) is ``fn.spec``. A table that cannot be computed comes back
empty (contract columns only) with the reason in the session's notes.
"""

from __future__ import annotations

import importlib
import pkgutil

import pandas as pd

from impostor_bench.analysis.data import AnalysisData

from impostor_bench.analysis.stats._base import (ALL, COLUMNS, CONTRACT, REGISTRY, Prepared, StatsUnavailable,
                                                 contract_first, prepared, run_table, wilson)
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.declaration import TableSpec
from impostor_bench.analysis.stats.session import Analysis, Table
from impostor_bench.analysis.stats.network import game_metrics, model_network, network_for_game
from impostor_bench.analysis.stats.ties import game_ties

# Every public module of this package is imported, which registers the tables it declares (``@table``):
# a new table module needs no line here. Modules named ``_*`` hold shared helpers, not tables.
for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

REQUIRED = list(CONTRACT)

# The registry itself, the contract's tables first: a table registered later (a plugin, a test) is in it too.
_contract_first = {name: REGISTRY[name] for name in contract_first(REGISTRY)}
REGISTRY.clear()
REGISTRY.update(_contract_first)
TABLES: dict[str, Table] = REGISTRY

#: The tables over the rounds of longer games (declared ``rounds=True``): empty, with a note, on one-round data.
ROUND_TABLES: tuple[str, ...] = tuple(name for name, fn in TABLES.items() if fn.spec.rounds)


def declarations() -> dict[str, TableSpec]:
    """Every registered table's declaration (title, section, inference, figures, rounds), in ``TABLES`` order."""
    return {name: fn.spec for name, fn in TABLES.items()}


def compute_all(data: AnalysisData | Analysis, config: StatsConfig | None = None) -> dict[str, pd.DataFrame]:
    """Every table of ``TABLES`` in one session (convenience for the benchmarks)."""
    return Analysis.of(data, config).tables(TABLES, config)


def share_intermediates(analysis: Analysis) -> None:
    """Compute now the intermediate results most tables share: the prepared arrays and their design rows,
    the wild bootstrap's multipliers and each seat's text. The engine does so before it forks its worker processes,
    so they share these pages instead of each computing and holding a copy. A failure here is
    left to the tables, which report it."""
    from impostor_bench.analysis.stats._marginal import design_index
    from impostor_bench.analysis.stats.design_boot import multipliers
    from impostor_bench.analysis.stats.language import seat_text

    try:
        prep = prepared(analysis)
        design_index(prep)
        multipliers(analysis, prep, analysis.config)
        if prep.has_players:
            seat_text(analysis, prep)
    except Exception:  # noqa: BLE001 - each table that needs these says why it cannot have them
        pass


__all__ = [
    "Analysis", "TABLES", "share_intermediates", "contract_first", "run_table", "REQUIRED", "ROUND_TABLES", "TableSpec", "declarations", "COLUMNS", "CONTRACT", "StatsConfig", "StatsUnavailable", "compute_all",
    "network_for_game", "game_metrics", "model_network", "game_ties", "ALL", "Prepared", "prepared", "wilson",
]

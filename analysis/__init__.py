"""analysis package of impostor-bench: installed as ``impostor_bench.analysis`` (the one installed name).

A notebook needs only the names below (imported when first used, so importing a submodule stays cheap)::

    from impostor_bench.analysis import analyse, load
    a = analyse(load("exports/run1"), tables=["headline"])
    a.table("headline"), a.result("headline").notes, a.notes

``load(folder)``: an export folder (games.parquet, players.parquet, models.csv) as ``AnalysisData``;
``analyse(data_or_folder, config, tables=None, jobs=1)``: an ``Analysis`` with those tables computed
(default: every registered table; ``jobs=2``: in a process pool), whose ``.table(name)``,
``.result(name)`` (frame, notes, error), ``.notes`` and ``.inference()`` give the results, and which
computes any other table when asked; ``build_report(data, out, config)``: the report bundle;
``simulate(n_experiments, games_per_experiment, seed=...)``: games with known effects. An MLflow
experiment is read by the tracking layer (``impostor report --experiment``, or ``impostor export``
then ``load``): the analysis reads tables only (docs/architecture.md).

From the repository root the folder could also be imported as ``analysis``, which would load its
files a second time as other modules (their own registries, classes that are not the
installed ones): that name is refused in one line (docs/architecture.md, "One installed name").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional

from impostor_bench.core.installed_name import refuse_second_name

refuse_second_name(__name__)

if TYPE_CHECKING:
    from pathlib import Path

    from impostor_bench.analysis.data import AnalysisData
    from impostor_bench.analysis.stats.config import StatsConfig
    from impostor_bench.analysis.stats.session import Analysis

__all__ = ["Analysis", "AnalysisData", "StatsConfig", "TableResult", "analyse", "build_report", "load", "simulate"]

_LAZY = {
    "Analysis": ("impostor_bench.analysis.stats.session", "Analysis"),
    "TableResult": ("impostor_bench.analysis.stats.session", "TableResult"),
    "AnalysisData": ("impostor_bench.analysis.data", "AnalysisData"),
    "StatsConfig": ("impostor_bench.analysis.stats.config", "StatsConfig"),
    "build_report": ("impostor_bench.analysis.report.build", "build_report"),
    "load": ("impostor_bench.analysis.io", "load_tables"),
    "simulate": ("impostor_bench.analysis.sim.simulate", "simulate_games"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def analyse(data: "AnalysisData | str | Path", config: Optional["StatsConfig"] = None, *,
            tables: Optional[Iterable[str]] = None, jobs: int = 1) -> "Analysis":
    """An analysis of ``data`` (or of the export folder it names) with ``tables`` computed (default: every
    registered table, the data contract's first) in ``jobs`` processes; its ``notes`` are the loader's, then
    those of ``tables`` in that order. A table not computed here is computed when asked for."""
    from impostor_bench.analysis.data import AnalysisData
    from impostor_bench.analysis.io import load_tables
    from impostor_bench.analysis.stats import TABLES
    from impostor_bench.analysis.stats.engine import compute_tables, one_blas_thread
    from impostor_bench.analysis.stats.session import Analysis

    if not isinstance(data, AnalysisData):
        data = load_tables(data)
    a = Analysis(data, config)
    names = list(TABLES) if tables is None else list(tables)
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        raise KeyError(f"no analysis table {', '.join(map(repr, unknown))}; the tables are: {', '.join(sorted(TABLES))}")
    with one_blas_thread():
        compute_tables(a, names, jobs)
    for name in names:
        a.result(name)  # the notes in the order asked
    return a

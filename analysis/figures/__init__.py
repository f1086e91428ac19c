"""Report figures (matplotlib, Agg backend).

Each ``fig_*`` function writes one PNG and returns a dict ``{file, title, caption}``
or ``None`` when it cannot be drawn (the reason goes to ``notes``).
:func:`make_figures` draws all of them; a failing figure never stops the report.
The figures live by family: ``rates`` (win rates, forest, tie-breakers),
``network`` (example vote network), ``words`` (Fig. 3, whose word vectors the
caller passes in), ``ratings``, ``cost``, ``team``; ``style`` holds their shared look.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.figures.network import fig_vote_network
from impostor_bench.analysis.figures.rates import fig_forest, fig_tiebreak, fig_win_by_difficulty, fig_win_by_mode
from impostor_bench.analysis.figures.cost import fig_cost
from impostor_bench.analysis.figures.ratings import fig_ratings
from impostor_bench.analysis.figures.style import plt, wilson_ci
from impostor_bench.analysis.figures.team import fig_team_contrasts
from impostor_bench.analysis.figures.words import Embedder, fig_difficulty_validation

if TYPE_CHECKING:
    from impostor_bench.analysis.stats.session import Analysis

__all__ = ["make_figures", "wilson_ci", "Embedder", "FIGURES"] + [
    "fig_win_by_mode", "fig_win_by_difficulty", "fig_forest", "fig_tiebreak", "fig_vote_network",
    "fig_difficulty_validation", "fig_ratings", "fig_cost", "fig_team_contrasts",
]

FIGURES: list[tuple[str, Callable]] = [
    ("win_by_mode", fig_win_by_mode),
    ("win_by_difficulty", fig_win_by_difficulty),
    ("odds_ratios_forest", fig_forest),
    ("tiebreak_deltas", fig_tiebreak),
    ("vote_network_example", fig_vote_network),
    ("difficulty_validation", fig_difficulty_validation),
    ("ratings", fig_ratings),
    ("cost", fig_cost),
    ("team_contrasts", fig_team_contrasts),
]


def _inputs_for(fn: Callable, inputs: dict) -> dict:
    """The caller-given inputs (e.g. ``embedder``) that this figure function takes as keywords."""
    params = inspect.signature(fn).parameters
    return {k: v for k, v in inputs.items() if k in params}


def make_figures(data: AnalysisData | Analysis, tables: dict[str, pd.DataFrame], out: Path, notes: list[str],
                 progress: Callable[[str], None] = lambda s: None, embedder: Optional[Embedder] = None,
                 errors: Optional[list[str]] = None, jobs: int = 1,
                 after_each: Optional[Callable[[], None]] = None) -> list[dict]:
    """Draw every figure into ``out``; a figure that raises is left out with a note, and named in ``errors``
    (the report then exits non-zero; a figure the data cannot support returns None with its own note).
    ``embedder`` gives Fig. 3 its word vectors; ``data`` is the report's session (the figures reuse its
    cached intermediate results). ``jobs=2`` draws them in two processes (the same files and notes);
    ``after_each`` is called after each figure (the report hands freed memory back there)."""
    out.mkdir(parents=True, exist_ok=True)
    inputs = {"embedder": embedder}
    errs: list[str] = []
    n0 = len(notes)

    def draw(i: int) -> tuple[Optional[dict], list[str], list[str]]:
        """Figure ``i``, with the notes and errors drawing it added."""
        name, fn = FIGURES[i]
        progress(f"figure {name}")
        before, errs_before = len(notes), len(errs)
        res = None
        try:
            res = fn(data, tables, out, notes, **_inputs_for(fn, inputs))
        except Exception as exc:  # noqa: BLE001 - a figure must never sink the report
            plt.close("all")
            notes.append(f"Figure '{name}' failed: {type(exc).__name__}: {exc}")
            errs.append(f"Figure {name} failed: {type(exc).__name__}: {exc}")
        if after_each is not None:
            after_each()
        return res, notes[before:], errs[errs_before:]

    if jobs > 1:
        from impostor_bench.analysis.stats.engine import map_in_processes

        drawn = map_in_processes(draw, len(FIGURES), jobs, after_each)
        del notes[n0:]  # each figure's notes again, in the figures' order (as one process adds them)
        for _, added, _ in drawn:
            notes.extend(n for n in added if n not in notes)
    else:
        drawn = [draw(i) for i in range(len(FIGURES))]
    if errors is not None:
        errors.extend(e for _, _, added in drawn for e in added)
    return [res for res, _, _ in drawn if res]

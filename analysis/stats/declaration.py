"""What a bundle table is, declared once next to the function that computes it.

``@table(name, columns, title=..., section=..., inference=(...), figures={...}, rounds=...)``
(``impostor_bench.analysis.stats._base.table``) builds one :class:`TableSpec`; the report's
titles and sections, the ``inference`` table's entries (``inference.SPECS``), the figures'
sections and the round tables are all read from these declarations, so a new table is one
decorator (tests/analysis/stats/test_table_declarations.py checks every declaration).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Optional

#: Where the report pages show a table: ``paper`` = the Results section in the paper's layout
#: (the bundle's full table is in tables/); the others are the report's sections
#: (``impostor_bench.analysis.report.sections.SECTIONS`` gives their titles, in page order).
SECTION_IDS = ("paper", "results", "robustness", "design", "rounds", "beyond")


@dataclass(frozen=True)
class Inference:
    """Where one table prints one kind of inference.

    table     -- bundle table name (filled in by ``@table`` from its declaration)
    name      -- the quantity family (e.g. ``imp_win``); the calibration key is ``table:name``
    keys      -- columns naming the row (joined with "/" into ``quantity``)
    estimate  -- estimate column
    ci        -- (low, high) interval columns, or None
    p         -- p-value column, or None
    method    -- column naming each row's method, or a fixed method label
    family    -- multiple-comparison family of its p-values (None: not tested in a family)
    pooled_out -- a pooled row (a key equal to ``ALL``) is not a hypothesis of the family
    scale     -- divide the table's values by this to report them (100 for percentages)
    bounds    -- the estimate's range in the table's units where its column name does not give it
                 (``report.interval_check.bounds_of``), e.g. (-100, inf) for a relative change in %
    """

    table: str
    name: str
    keys: tuple[str, ...]
    estimate: str
    ci: Optional[tuple[str, str]] = None
    p: Optional[str] = None
    method: str = "method"
    family: Optional[str] = None
    scale: float = 1.0
    pooled_out: bool = False
    bounds: Optional[tuple[float, float]] = None

    @property
    def calibration(self) -> str:
        return f"{self.table}:{self.name}"


def infer(name: str, keys: tuple[str, ...], estimate: str, ci: Optional[tuple[str, str]] = None,
          p: Optional[str] = None, **kw) -> Inference:
    """An :class:`Inference` of the table whose ``@table(inference=...)`` lists it."""
    return Inference("", name, keys, estimate, ci, p, **kw)


WILD = ("design bootstrap (wild by experiment) SD; residuals about model x mode + tier + the game's model "
        "composition, design effect moderated "
        "across models (empirical Bayes), t(d0 + G - K)")
WILD_PERCENTILE = "design bootstrap (wild by experiment), percentile (pooled fits over many experiments)"


def wide(keys: tuple[str, ...], *cols: str, method: str = WILD) -> tuple[Inference, ...]:
    """Entries of a table that prints ``<col>`` with ``<col>_ci_low`` / ``<col>_ci_high``."""
    return tuple(infer(c, keys, c, (f"{c}_ci_low", f"{c}_ci_high"), method=method) for c in cols)


@dataclass(frozen=True)
class TableSpec:
    """One bundle table: its name, leading columns, page title and section, the inference it
    prints, the figures drawn from it (figure name -> section), whether it is a table over
    the rounds of longer games (empty, with a note, on one-round data), the group sizes it is
    defined for and the other tables it reads (``needs``: names, or a function of the declarations
    giving them; the engine computes those first, ``impostor_bench.analysis.stats.engine``)."""

    name: str
    columns: tuple[str, ...]
    title: str
    section: str
    inference: tuple[Inference, ...] = ()
    figures: dict[str, str] = field(default_factory=dict)
    rounds: bool = False
    #: the games it is defined for: "paper" (four players, one impostor: other group sizes are left
    #: out with a note, ``impostor_bench.analysis.stats.groups``) or "any" group size
    groups: str = "paper"
    needs: tuple[str, ...] | Callable[[], Iterable[str]] = ()

    def __post_init__(self) -> None:
        where = f"@table({self.name!r})"
        if not self.title.strip():
            raise ValueError(f"{where}: title is empty; fix: give the title the report pages show")
        if self.groups not in ("paper", "any"):
            raise ValueError(f"{where}: groups {self.groups!r} is not 'paper' or 'any'")
        for what, sid in (("section", self.section), *(("figure section", s) for s in self.figures.values())):
            if sid not in SECTION_IDS:
                raise ValueError(f"{where}: {what} {sid!r} is not one of {', '.join(SECTION_IDS)}")
        object.__setattr__(self, "inference", tuple(replace(i, table=self.name) for i in self.inference))

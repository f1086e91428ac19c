"""The report bundle: tables, pages, the paper's layout and the atomic bundle directory.

``build`` writes the bundle; ``formatting``, ``pages`` and ``sections`` render it; ``paper_*``
lay the tables out as the paper prints them; ``bundle_dir`` swaps a finished bundle into place.
"""

from impostor_bench.analysis.report.build import build_report, latex_escape, to_latex, to_markdown
from impostor_bench.analysis.stats import CONTRACT as CONTRACT_COLUMNS  # the report's name for them

__all__ = ["CONTRACT_COLUMNS", "TABLE_TITLES", "build_report", "to_markdown", "to_latex", "latex_escape"]


def __getattr__(name: str):
    """``TABLE_TITLES``: every declared table's title (``impostor_bench.analysis.report.pages``)."""
    if name == "TABLE_TITLES":
        from impostor_bench.analysis.report import pages

        return pages.TABLE_TITLES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The report bundle: tables, pages, the paper's layout and the atomic bundle directory.

``build`` writes the bundle; ``formatting``, ``pages`` and ``sections`` render it; ``paper_*``
lay the tables out as the paper prints them; ``bundle_dir`` swaps a finished bundle into place.
"""

from impostor_bench.analysis.report.build import CONTRACT_COLUMNS, TABLE_TITLES, build_report, latex_escape, to_latex, to_markdown

__all__ = ["CONTRACT_COLUMNS", "TABLE_TITLES", "build_report", "to_markdown", "to_latex", "latex_escape"]

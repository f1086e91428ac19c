"""report.md / report.html lead with results: tables and figures first, empty ones listed in a
line, caveats collapsed at the end, degenerate intervals flagged (issue 16).  Through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import re
from html.parser import HTMLParser

from impostor_bench.analysis.report.formatting import flag_intervals, to_markdown
from impostor_bench.analysis.report.sections import MAX_COLUMNS, section_of


def _impostor(*args: str, cwd: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "impostor_bench.cli", *args], cwd=cwd, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]


@pytest.fixture(scope="module")
def tiny_bundle(tmp_path_factory) -> Path:
    """4 experiments of 10 games: every cell has one experiment, so bootstrap intervals collapse."""
    d = tmp_path_factory.mktemp("layout")
    _impostor("simulate", "--out", "sim", "--experiments", "4", "--games", "10", "--seed", "3", cwd=d)
    _impostor("report", "--parquet", "sim", "--out", "rep", "--bootstrap-reps", "30", "--permutation-reps", "30",
              cwd=d)
    return d / "rep"


@pytest.mark.slow
def test_markdown_leads_with_contents_then_the_papers_results(tiny_bundle):
    md = (tiny_bundle / "report.md").read_text()
    m = json.loads((tiny_bundle / "manifest.json").read_text())
    heads = ("## Contents", "## Results", "### Table 1: Headline results", "### Table 12:", "## Robustness (Appendix B)",
             "## Design checks", "## Beyond the paper", "## Not shown", "## Notes and caveats", "## About this report")
    pos = {h: md.index(h) for h in heads}
    assert list(pos.values()) == sorted(pos.values()), pos
    assert md.index("![") < pos["## Notes and caveats"]  # a figure before any caveat
    assert "| Model | Imp Win (%) | Maj Win (%) | Det Acc (%) | Centrality (rel.) | Reach (out-degree) | CoalEff (%) |" in md
    empty = [t["name"] for t in m["tables"] if t["rows"] == 0]
    assert empty, "the tiny design should leave some table empty"
    line = next(x for x in md.splitlines() if x.startswith("- Empty tables"))
    for name in empty:
        assert name in line and f"### {name}:" not in md
    line = next((x for x in md.splitlines() if x.startswith("- Tables with every estimate empty")), "")
    unestimated = {n.strip() for n in line.rpartition("): ")[2].rstrip(".").split(",")} if line else set()
    for name in [t["name"] for t in m["tables"] if t["rows"] > 0 and section_of(t["name"]) is not None]:
        assert (f"### {name}:" in md) != (name in unestimated), name
    for name in m["figures_not_drawn"]:
        assert name in next(x for x in md.splitlines() if x.startswith("- Figures not drawn"))


class _Page(HTMLParser):
    """Column counts of every table and the text before the first table."""

    def __init__(self):
        super().__init__()
        self.widths, self._row, self.headers, self._in_th, self.before_table = [], 0, [], False, []
        self.tables = 0

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables += 1
        elif tag == "tr":
            self._row = 0
        elif tag in ("td", "th"):
            self._row += 1
            self._in_th = tag == "th"

    def handle_endtag(self, tag):
        if tag == "tr":
            self.widths.append(self._row)
        elif tag == "th":
            self._in_th = False

    def handle_data(self, data):
        if self._in_th and data.strip():
            self.headers.append(data.strip())
        if self.tables == 0:
            self.before_table.append(data)


def test_html_opens_on_contents_and_table1_and_collapses_caveats(tiny_bundle):
    page = (tiny_bundle / "report.html").read_text()
    notes = page.index('<h2 id="notes">')
    toc, results, t1 = page.index('<nav class="toc">'), page.index('<h2 id="results">'), page.index('id="table01"')
    assert toc < results < t1 < page.index("<table>") < page.index("<figure") < notes
    for sid in ("results", "robustness", "design", "beyond", "notes"):
        assert f'href="#{sid}"' in page[toc:results] and f'id="{sid}"' in page
    assert page.index("<details>", notes) < page.index('<ul class="notes">', notes)
    parsed = _Page()
    parsed.feed(page)
    assert max(parsed.widths) <= MAX_COLUMNS  # no table wider than the screen; the CSV keeps every column
    snake = [h for h in parsed.headers if re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", h)]
    assert not snake, snake  # readable headers
    assert "Imp Win (%)" in parsed.headers and "95% interval" in parsed.headers
    assert "ci_low_design" in page  # named as left to the CSV, not shown as a column


def test_zero_width_bootstrap_interval_is_flagged_next_to_the_number(tiny_bundle):
    boot = pd.read_csv(tiny_bundle / "tables" / "bootstrap.csv")
    assert "interval_check" not in boot.columns  # the CSV keeps the statistics only
    zero = boot[np.isclose(boot["ci_low"], boot["ci_high"])]
    assert len(zero) > 0
    md = (tiny_bundle / "report.md").read_text()
    rows = [x for x in md.splitlines() if x.startswith(f"| {zero['quantity'].iloc[0]} |")]
    assert rows and "⚠ zero-width interval" in rows[0]


def test_flag_intervals_cases():
    df = pd.DataFrame({"q": ["a", "b", "c", "d"], "estimate": [0.0, 1.2, 0.5, 0.4],
                       "ci_low": [0.0, 1.0, 0.1, np.nan], "ci_high": [0.0, 1.5, 0.9, np.nan],
                       "reps": [100, 100, 100, 100], "n_undefined": [0, 30, 10, 0]})
    flagged = flag_intervals(df)
    assert list(flagged.columns).index("interval_check") == 1  # second: never cut off the page
    assert flagged["interval_check"].tolist() == ["⚠ zero-width interval", "⚠ 30/100 replicates undefined", "", ""]
    # every interval pair of a table is checked, against its estimate and the parameter's range
    rates = pd.DataFrame({"model": ["a", "b", "c", "d"], "imp_win_pct": [50.0, 40.0, 30.0, 20.0],
                          "imp_win_ci_low": [50.0, 30.0, 35.0, 10.0], "imp_win_ci_high": [50.0, 104.0, 60.0, 30.0]})
    assert flag_intervals(rates, "headline")["interval_check"].tolist() == [
        "⚠ zero-width interval", "⚠ interval outside the parameter's range", "⚠ interval excludes its estimate", ""]
    healthy = df.iloc[[2, 3]]
    assert flag_intervals(healthy) is healthy  # nothing to flag: no extra column
    assert "interval_check" not in df.columns
    assert "⚠ zero-width interval" in to_markdown(flagged)


def test_figures_as_vector_pdf_svg_and_300_dpi_png(tiny_bundle):
    import re
    import xml.etree.ElementTree as ET

    from PIL import Image

    m = json.loads((tiny_bundle / "manifest.json").read_text())
    assert m["figures"], "the tiny design still draws figures"
    game_ids = set(pd.read_parquet(tiny_bundle.parent / "sim" / "games.parquet")["game_id"])
    for f in m["figures"]:
        png = tiny_bundle / f["file"]
        assert (png.with_suffix(".pdf")).read_bytes()[:5] == b"%PDF-"
        svg = png.with_suffix(".svg")
        root = ET.parse(svg).getroot()
        assert root.tag.endswith("svg")
        dpi = Image.open(png).info.get("dpi")
        assert dpi and round(dpi[0]) == 300, (png.name, dpi)
        words = " ".join(t for t in root.itertext() if t.strip() not in game_ids)  # ids are data, not labels
        assert re.search(r"\b[a-z]+_[a-z]+\b", words) is None, (svg.name, re.findall(r"\b[a-z]+_[a-z]+\b", words))
    mode = " ".join(ET.parse(tiny_bundle / "figures" / "win_by_mode.svg").getroot().itertext())
    assert "50% (even game)" in mode and "n=" in mode


def test_tiebreak_figure_not_drawn_without_ties(tmp_path):
    from impostor_bench.analysis.figures.rates import fig_tiebreak

    no_ties = pd.DataFrame({"mode": ["homogeneous", "ALL"], "default": [40.0, 40.0], "sym_cand": [40.0, 40.0],
                            "sym_side": [40.0, 40.0], "delta_cand": [0.0, 0.0], "delta_side": [0.0, 0.0],
                            "ties": [0, 0]})
    notes: list[str] = []
    assert fig_tiebreak(None, {"tiebreak_mode": no_ties}, tmp_path, notes) is None
    assert notes and "no game ended in a top-of-ballot tie" in notes[0]
    assert list(tmp_path.iterdir()) == []

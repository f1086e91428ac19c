"""docs/tables.md is the table reference generated from the declarations: it lists every
registered table exactly once and is regenerated whenever a declaration changes."""

from __future__ import annotations

from pathlib import Path

from impostor_bench.analysis.report.reference import table_reference
from impostor_bench.analysis.stats import TABLES

DOC = Path(__file__).resolve().parents[3] / "docs" / "tables.md"
FIX = "regenerate: python -m impostor_bench.analysis.report.reference > docs/tables.md"


def test_every_registered_table_is_listed_once():
    text = table_reference()
    rows = [line.split("|")[1].strip().strip("`") for line in text.splitlines() if line.startswith("| `")]
    assert sorted(rows) == sorted(TABLES)
    assert f"{len(TABLES)} registered tables" in text


def test_the_shipped_reference_is_current():
    assert DOC.read_text(encoding="utf-8") == table_reference(), f"docs/tables.md is stale; {FIX}"

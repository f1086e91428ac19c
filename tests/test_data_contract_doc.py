"""docs/data-contract.md lists every column of the record schema (impostor_bench.core.records)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from impostor_bench.core.records import GameRow, MoveRow, PlayerRow
from impostor_bench.registry import MODELS_CSV_COLUMNS

DOC = Path(__file__).resolve().parents[1] / "docs" / "data-contract.md"


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    nxt = re.search(r"^#{2,3} ", text[start + len(heading):], re.M)
    return text[start: start + len(heading) + nxt.start()] if nxt else text[start:]


def _table_columns(section: str) -> list[str]:
    return [c for c in re.findall(r"^\| ([a-z0-9_]+) \|", section, re.M) if c != "column"]


@pytest.mark.parametrize("heading, model", [("### games.parquet", GameRow), ("### players.parquet", PlayerRow),
                                            ("### moves.parquet", MoveRow)])
def test_every_column_is_documented_in_order(heading, model):
    documented = _table_columns(_section(DOC.read_text(encoding="utf-8"), heading))
    assert documented == list(model.model_fields), (
        f"docs/data-contract.md {heading}: document the columns of {model.__name__} in its order")


def test_models_csv_columns_are_documented():
    section = _section(DOC.read_text(encoding="utf-8"), "### models.csv")
    for column in MODELS_CSV_COLUMNS:
        assert re.search(rf"\b{column}\b", section), column


def test_seat_numbering_and_self_vote_are_stated():
    text = DOC.read_text(encoding="utf-8")
    assert "0-based" in text and "Player 1" in text
    assert "self_vote" in text and "null `vote`" in text


def test_no_reference_to_the_file_outside_the_repository():
    root = DOC.parents[1]
    offenders = [str(p.relative_to(root)) for d in ("impostor_bench", "analysis", "docs", "solvers", "scorers", "tasks")
                 for p in (root / d).rglob("*") if p.suffix in {".py", ".md"}
                 and "shared/data-contract.md" in p.read_text(encoding="utf-8", errors="replace")]
    offenders += ["README.md"] if "shared/data-contract.md" in (root / "README.md").read_text(encoding="utf-8") else []
    assert offenders == []

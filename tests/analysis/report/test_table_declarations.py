"""A table is declared once (``@table(name, columns, title=, section=, inference=, figures=, rounds=)``) and
that one declaration puts it in the bundle, the pages' sections and contents, ``inference.csv`` and the
round tables (issue 41); an unexpected error in a table or figure makes ``impostor report`` exit non-zero
naming it, after writing the rest of the bundle (``--keep-going``: exit 0), while data that cannot
support a table stays a note."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from impostor_bench.analysis import figures as figures_pkg
from impostor_bench.analysis.report.sections import SECTION_TITLES, figure_section, section_of, sections, table_title
from impostor_bench.analysis.stats import ROUND_TABLES, TABLES, StatsConfig, StatsUnavailable, declarations
from impostor_bench.analysis.stats._base import COLUMNS, REGISTRY, prepared, table
from impostor_bench.analysis.stats.declaration import SECTION_IDS, TableSpec, infer
from impostor_bench.analysis.stats.inference import SPECS, specs
from impostor_bench.cli import main

PROBE = "probe_seat_rates"  # declared in the test, in one place
BROKEN = "probe_broken"  # raises a programming error
NO_DATA = "probe_no_data"  # cannot be computed from these data (StatsUnavailable)
PROBE_TITLE = "Probe: impostor win by impostor seat (declared only in the test)"


@pytest.fixture
def probe_tables():
    """Three tables registered through the real decorator, removed again afterwards."""
    @table(PROBE, columns=["seat", "imp_win_pct", "imp_win_ci_low", "imp_win_ci_high", "n"], title=PROBE_TITLE,
           section="design",
           inference=(infer("imp_win", ("seat",), "imp_win_pct", ("imp_win_ci_low", "imp_win_ci_high"),
                            method="probe interval", scale=100),))
    def probe(data, config):
        prep = prepared(data)
        df = pd.DataFrame({"seat": prep.imp_seat, "y": prep.y}).groupby("seat")["y"].agg(["mean", "size"])
        return pd.DataFrame({"seat": df.index, "imp_win_pct": 100 * df["mean"].to_numpy(),
                             "imp_win_ci_low": 100 * df["mean"].to_numpy() - 5,
                             "imp_win_ci_high": 100 * df["mean"].to_numpy() + 5, "n": df["size"].to_numpy()})

    @table(BROKEN, columns=["x"], title="Probe: a table with a bug", section="beyond")
    def broken(data, config):
        return pd.DataFrame({"x": [1]}).loc[:, "no_such_column"]

    @table(NO_DATA, columns=["x"], title="Probe: a table these data cannot support", section="beyond")
    def no_data(data, config):
        raise StatsUnavailable("needs a column these games do not have")

    yield
    for name in (PROBE, BROKEN, NO_DATA):
        REGISTRY.pop(name, None)
        COLUMNS.pop(name, None)


def test_every_table_has_a_title_and_a_section():
    assert {sid for sid, _ in SECTION_TITLES} | {"paper"} == set(SECTION_IDS)
    for name, spec in declarations().items():
        assert spec.name == name and spec.title.strip() and spec.title != name.replace("_", " "), name
        assert spec.section in SECTION_IDS, name
        assert all(i.table == name for i in spec.inference), name
        assert table_title(name) == spec.title
    # every table lands in exactly one place of the pages: a section, or the paper's layout
    placed = [n for _, _, names in sections() for n in names]
    assert len(placed) == len(set(placed))
    assert set(placed) | {n for n in TABLES if section_of(n) is None} == set(TABLES)


def test_a_declaration_without_title_or_section_is_refused():
    with pytest.raises(TypeError, match="title"):
        table("probe_untitled", columns=["x"], section="beyond")
    with pytest.raises(TypeError, match="section"):
        table("probe_untitled", columns=["x"], title="A title")
    with pytest.raises(ValueError, match="title is empty"):
        table("probe_untitled", columns=["x"], title="  ", section="beyond")
    with pytest.raises(ValueError, match="section 'nowhere'"):
        table("probe_untitled", columns=["x"], title="A title", section="nowhere")
    with pytest.raises(ValueError, match="figure section 'nowhere'"):
        TableSpec("probe_untitled", ("x",), "A title", "beyond", figures={"fig": "nowhere"})
    assert "probe_untitled" not in COLUMNS and "probe_untitled" not in REGISTRY


def test_the_registries_are_read_from_the_declarations():
    decl = declarations()
    assert SPECS == specs() == tuple(i for d in decl.values() for i in d.inference)
    assert {s.calibration for s in SPECS} >= {"headline:imp_win", "odds_ratios:or", "rounds_commit:commit"}
    assert ROUND_TABLES == tuple(n for n, d in decl.items() if d.rounds)
    assert set(ROUND_TABLES) == {"rounds_survival", "rounds_votes", "rounds_trust", "rounds_commit", "rounds_recovery"}
    assert figure_section("odds_ratios_forest") == "robustness" and figure_section("win_by_mode") == "results"
    assert figure_section("vote_network_example") == "design" and figure_section("no_such_figure") == "beyond"
    assert section_of("headline") is None and section_of("balance") == "design"


@pytest.mark.slow
def test_one_declaration_reaches_bundle_pages_inference_and_errors_surface(probe_tables, sim_export, tmp_path,
                                                                           capsys):
    """The probe table, declared in one place, is in tables/, inference.csv, its section and the contents;
    the broken table makes the report exit 1 naming it, after writing everything else."""
    out = tmp_path / "report"
    args = ["report", "--parquet", str(sim_export), "--out", str(out), "--seed", "3", "--bootstrap-reps", "30",
            "--permutation-reps", "30", "--no-figures", "--no-pdf"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert f"ERROR: Table {BROKEN} failed: KeyError" in err and "--keep-going" in err
    assert f"ERROR: Table {NO_DATA}" not in err  # data that cannot support a table is a note, not an error

    manifest = json.loads((out / "manifest.json").read_text())
    assert [e for e in manifest["errors"] if BROKEN in e] and not [e for e in manifest["errors"] if NO_DATA in e]
    assert any(n.startswith(f"{NO_DATA}: not computed: needs a column") for n in manifest["notes"])
    names = [t["name"] for t in manifest["tables"]]
    assert set(TABLES) <= set(names) and (out / "report.html").exists()  # the rest of the bundle is written
    assert len(pd.read_csv(out / "tables" / "headline.csv")) > 0

    probe = pd.read_csv(out / "tables" / f"{PROBE}.csv")
    assert sorted(probe["seat"]) == [0, 1, 2, 3]
    inf = pd.read_csv(out / "tables" / "inference.csv")
    rows = inf[inf["table"] == PROBE]
    assert len(rows) == 4 and set(rows["calibration"]) == {f"{PROBE}:imp_win"}
    assert rows["estimate"].to_numpy() == pytest.approx(probe.sort_values("seat")["imp_win_pct"].to_numpy() / 100)
    assert PROBE_TITLE in (out / "tables" / f"{PROBE}.tex").read_text()

    md = (out / "report.md").read_text()
    contents = md[md.index("## Contents"):].split("\n\n")[1]
    design_line = next(ln for ln in contents.splitlines() if ln.startswith("- [Design checks]"))
    assert PROBE in design_line
    design = md[md.index("\n## Design checks"):]
    design = design[:design.index("\n## ", 1)]
    assert f"### {PROBE}: {PROBE_TITLE}" in design
    assert f"{PROBE}: {PROBE_TITLE}" in (out / "report.html").read_text()

    # --keep-going: the same bundle, exit 0, the failure a warning
    assert main([*args, "--keep-going"]) == 0
    assert f"WARNING: Table {BROKEN} failed: KeyError" in capsys.readouterr().err


def test_a_figure_that_raises_is_an_error(monkeypatch, sim_small, tmp_path):
    def fig_bug(data, tables, out, notes):
        plt.figure()
        raise ZeroDivisionError("division by zero in the probe figure")

    monkeypatch.setattr(figures_pkg, "FIGURES", [("probe_bug", fig_bug)])
    notes: list[str] = []
    errors: list[str] = []
    from impostor_bench.analysis.data import AnalysisData

    made = figures_pkg.make_figures(AnalysisData(*sim_small), {}, tmp_path, notes, errors=errors)
    assert made == [] and errors == ["Figure probe_bug failed: ZeroDivisionError: division by zero in the probe figure"]
    assert notes and "probe_bug" in notes[0]


def test_strict_config_raises_instead_of_recording(probe_tables, sim_small):
    from impostor_bench.analysis.data import AnalysisData
    from impostor_bench.analysis.stats import Analysis

    a = Analysis(AnalysisData(*sim_small), StatsConfig(bootstrap_reps=10, permutation_reps=10))
    assert len(a.table(BROKEN)) == 0 and a.errors == [f"Table {BROKEN} failed: KeyError: 'no_such_column'"]
    assert len(a.table(NO_DATA)) == 0 and len(a.errors) == 1
    with pytest.raises(KeyError):
        Analysis(AnalysisData(*sim_small), StatsConfig(strict=True)).table(BROKEN)


def test_sections_page_order_has_every_section():
    assert [sid for sid, _, _ in sections()] == [sid for sid, _ in SECTION_TITLES]

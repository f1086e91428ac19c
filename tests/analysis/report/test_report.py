"""The report bundle: every contract table as csv/md/tex, figures, report.md/html, manifest;
written atomically (a failure leaves OUT as it was)."""

from __future__ import annotations

import hashlib
import json
import html
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.analysis.io import load_tables
from impostor_bench.analysis.report.paper_tables import build_paper_tables
from impostor_bench.analysis.report.sections import section_of
from impostor_bench.analysis.report import CONTRACT_COLUMNS, build_report, latex_escape, to_latex, to_markdown
from impostor_bench.cli import main
from impostor_bench.core.errors import ImpostorError

stats = pytest.importorskip("impostor_bench.analysis.stats")
FAST = dict(seed=3, bootstrap_reps=60, permutation_reps=60)


def _snapshot(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def bundle(sim_export, tmp_path_factory):
    """A report built through the CLI on the small simulated export."""
    out = tmp_path_factory.mktemp("bundle") / "report"
    rc = main(["report", "--parquet", str(sim_export), "--out", str(out), "--seed", "3", "--bootstrap-reps", "60",
               "--permutation-reps", "60"])
    assert rc == 0
    return out


@pytest.mark.slow
def test_every_contract_table_in_three_formats(bundle):
    for name, lead in CONTRACT_COLUMNS.items():
        csv = bundle / "tables" / f"{name}.csv"
        md = bundle / "tables" / f"{name}.md"
        tex = bundle / "tables" / f"{name}.tex"
        assert csv.exists() and md.exists() and tex.exists(), name
        df = pd.read_csv(csv)
        assert list(df.columns[: len(lead)]) == lead, name
        header = md.read_text().splitlines()[0]
        assert [c.strip() for c in header.strip("|").split("|")][: len(lead)] == lead
        body = [ln for ln in tex.read_text().splitlines() if not ln.startswith("%")]
        assert body[0].startswith(r"\begin{table}") and body[-1] == r"\end{table}"
        assert rf"\label{{tab:{name.replace('_', '-')}}}" in body and any(ln.startswith(r"\caption{") for ln in body)
        header = body[body.index(r"\toprule") + 1]
        assert re.search(r"(?<!\\)_", header) is None, header  # readable words, no snake_case
    # the main tables are not empty on this data
    for name in ("headline", "odds_ratios", "chi2", "balance", "tiebreak_mode", "speaking_itt"):
        assert len(pd.read_csv(bundle / "tables" / f"{name}.csv")) > 0, name


def test_manifest(bundle, sim_export):
    m = json.loads((bundle / "manifest.json").read_text())
    assert m["generator"] == "impostor report"
    hashes = {Path(i["path"]).name: i["sha256"] for i in m["inputs"]}
    for name in ("games.parquet", "players.parquet", "models.csv"):
        assert hashes[name] == hashlib.sha256((sim_export / name).read_bytes()).hexdigest()
    assert m["seed"] == 3 and m["bootstrap_reps"] == 60 and m["permutation_reps"] == 60
    for pkg in ("pandas", "numpy", "statsmodels", "matplotlib", "python"):
        assert m["packages"][pkg]
    names = [t["name"] for t in m["tables"]]
    assert names[: len(CONTRACT_COLUMNS)] == list(CONTRACT_COLUMNS)
    for t in m["tables"]:
        assert t["rows"] == len(pd.read_csv(bundle / "tables" / f"{t['name']}.csv")), t["name"]
        assert t["contract_columns_ok"], t["name"]
    assert m["wall_seconds"] > 0 and m["data"]["games"] == 1200
    assert m["errors"] == [] and m["missing_tables"] == []
    for f in m["figures"]:
        assert (bundle / f["file"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert isinstance(m["notes"], list)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.links, self.tables = [], [], 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a.get("src", ""))
        elif tag == "a":
            self.links.append(a.get("href", ""))
        elif tag == "table":
            self.tables += 1


def test_report_html_and_md(bundle):
    m = json.loads((bundle / "manifest.json").read_text())
    figs = [f["file"] for f in m["figures"]]
    assert {"figures/win_by_mode.png", "figures/win_by_difficulty.png", "figures/odds_ratios_forest.png",
            "figures/tiebreak_deltas.png", "figures/vote_network_example.png",
            "figures/difficulty_validation.png"} <= set(figs)  # the command layer passes Fig. 3 its word vectors
    text = (bundle / "report.html").read_text()
    tags = _Tags()
    tags.feed(text)
    assert len(tags.imgs) == len(figs) and all(s.startswith("data:image/png;base64,") for s in tags.imgs)
    for f in figs:
        assert f in tags.links  # also linked to the file
    drawn = [t for t in m["tables"] if t["rows"] > 0]
    own = [t for t in drawn if section_of(t["name"]) is not None]  # the others are in the paper's layout
    panels = sum(max(1, len(t.panels)) for t in build_paper_tables(
        {t["name"]: pd.read_csv(bundle / "tables" / f"{t['name']}.csv") for t in m["tables"]}, m) if not t.missing)
    assert tags.tables == len(own) + panels  # empty tables are listed in one line, not drawn
    for t in drawn:
        assert f"tables/{t['name']}.csv" in tags.links
    plain = html.unescape(text)
    for note in m["notes"]:
        assert note.split(": ", 1)[-1] in plain
    md = (bundle / "report.md").read_text()
    for f in figs:
        assert f"]({f})" in md
    assert "## Notes and caveats" in md and "### Table 1: Headline results" in md


def test_one_round_bundle_has_no_longer_games_section(bundle):
    """Issue 32: the round tables are empty for one-round games (reasons in the notes), and their
    section is not drawn."""
    md = (bundle / "report.md").read_text()
    assert "Longer games" not in md and "Longer games" not in (bundle / "report.html").read_text()
    for name in ("rounds_survival", "rounds_votes", "rounds_trust", "rounds_commit"):
        assert len(pd.read_csv(bundle / "tables" / f"{name}.csv")) == 0
    assert "rounds_survival: not computed: one-round games only" in md


@pytest.mark.slow
def test_rerun_replaces_previous_bundle(bundle, sim_export, tmp_path):
    out = tmp_path / "again"
    shutil.copytree(bundle, out)
    data = load_tables(sim_export)
    m = build_report(data, out, stats.StatsConfig(**FAST), figures=False)
    assert (out / "manifest.json").exists() and not (out / "figures" / "win_by_mode.png").exists()
    assert m["figures"] == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".again")]


def test_invalid_input_leaves_out_untouched(bundle, export_copy, tmp_path, capsys):
    out = tmp_path / "prev"
    shutil.copytree(bundle, out)
    before = _snapshot(out)
    (export_copy / "players.parquet").write_bytes(b"garbage")
    rc = main(["report", "--parquet", str(export_copy), "--out", str(out), "--bootstrap-reps", "10"])
    assert rc == 2 and "players.parquet" in capsys.readouterr().err
    assert _snapshot(out) == before


def test_failure_mid_build_leaves_out_untouched(bundle, sim_export, tmp_path):
    out = tmp_path / "prev"
    shutil.copytree(bundle, out)
    before = _snapshot(out)
    data = load_tables(sim_export)

    def boom(data, cfg):
        raise RuntimeError("table exploded")

    tables = {**stats.TABLES, "permutation": boom}
    cfg = stats.StatsConfig(**FAST, strict=True)
    with pytest.raises(RuntimeError, match="exploded"):
        build_report(data, out, cfg, tables=tables, figures=False)
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prev"]  # no temp dirs left behind


@pytest.mark.slow
def test_failing_table_is_reported_not_fatal(sim_export, tmp_path):
    data = load_tables(sim_export)

    def boom(data, cfg):
        raise RuntimeError("table exploded")

    tables = {name: (boom if name == "chi2" else fn) for name, fn in stats.TABLES.items()}
    m = build_report(data, tmp_path / "out", stats.StatsConfig(**FAST), tables=tables, figures=False)
    assert any("chi2" in e and "exploded" in e for e in m["errors"])
    df = pd.read_csv(tmp_path / "out" / "tables" / "chi2.csv")
    assert list(df.columns) == CONTRACT_COLUMNS["chi2"] and df.empty
    assert "table exploded" in (tmp_path / "out" / "report.html").read_text()


def test_refuses_foreign_nonempty_out(sim_export, tmp_path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("do not delete")
    with pytest.raises(ImpostorError, match="not empty and is not a previous report bundle.*fix:"):
        build_report(load_tables(sim_export), out, stats.StatsConfig(**FAST), figures=False)
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]


@pytest.mark.slow
def test_a_users_file_in_a_previous_bundle_is_never_deleted(bundle, sim_export, tmp_path, capsys):
    """Issue 42 (12): ``impostor report`` into a previous bundle that holds a file the report did
    not write (a user's notes, in the bundle or one of its folders) refuses, naming the file,
    and changes nothing; without it the bundle is replaced."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert set(manifest["bundle_files"]) == set(_snapshot(bundle))  # every file the bundle holds, no more
    for user_file in ("notes.txt", "tables/my_table.csv", "figures/sketch.svg"):
        out = tmp_path / user_file.replace("/", "_")
        shutil.copytree(bundle, out)
        (out / user_file).write_text("mine")
        before = _snapshot(out)
        rc = main(["report", "--parquet", str(sim_export), "--out", str(out), "--bootstrap-reps", "10",
                   "--permutation-reps", "10", "--no-figures"])
        err = capsys.readouterr().err
        [line] = [ln for ln in err.splitlines() if ": error:" in ln]
        assert rc == 2 and user_file in line and "fix:" in line, err
        assert _snapshot(out) == before
        (out / user_file).unlink()
        assert main(["report", "--parquet", str(sim_export), "--out", str(out), "--bootstrap-reps", "10",
                     "--permutation-reps", "10", "--no-figures"]) == 0


@pytest.mark.slow
def test_missing_models_csv_noted(export_copy, tmp_path):
    (export_copy / "models.csv").unlink()
    m = build_report(load_tables(export_copy), tmp_path / "out", stats.StatsConfig(**FAST), figures=False)
    assert any("models.csv" in n for n in m["notes"])
    assert "models.csv" in (tmp_path / "out" / "report.md").read_text()


# --------------------------------------------------------------------------- writers


def test_latex_escape_specials():
    assert latex_escape("a_b %c &d $e #f {g} ~h ^i \\j") == (
        r"a\_b \%c \&d \$e \#f \{g\} \textasciitilde{}h \textasciicircum{}i \textbackslash{}j"
    )


def test_writers_format_numbers_and_escape():
    df = pd.DataFrame({"name|x": ["a_b", "c&d"], "p": [1.2e-30, 0.2], "or": [0.8123, 1.25], "n": [10, 20]})
    md = to_markdown(df)
    assert md.splitlines()[0] == r"| name\|x | p | or | n |"
    assert "1.20e-30" in md and "| 0.81 |" in md and "| 10 |" in md
    tex = to_latex(df)
    assert r"a\_b & 1.20e-30 & 0.81 & 10 \\" in tex and r"c\&d" in tex
    assert r"\multicolumn{4}{c}{(no rows)}" in to_latex(df.iloc[:0])


def test_tex_fragments_compile(bundle, tmp_path):
    latex = shutil.which("pdflatex")
    if latex is None:
        pytest.skip("pdflatex not installed")
    parts = [r"\documentclass{article}", r"\usepackage[T1]{fontenc}", r"\usepackage{booktabs}",
             r"\begin{document}"]
    for tex in sorted((bundle / "tables").glob("*.tex")):
        parts += [r"\input{" + tex.as_posix() + "}", r"\clearpage"]  # floats as a paper inputs them
    parts.append(r"\end{document}")
    (tmp_path / "all.tex").write_text("\n".join(parts))
    res = subprocess.run([latex, "-interaction=nonstopmode", "-halt-on-error", "all.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout[-2000:]


# --------------------------------------------------------------------------- figures


class _StubEmbedder:
    """Deterministic unit vectors per word, standing in for all-MiniLM-L6-v2."""

    def encode(self, words, normalize_embeddings=True):
        import numpy as np

        vecs = np.array([np.frombuffer(hashlib.sha256(w.encode()).digest(), dtype=np.uint8) - 127.5 for w in words])
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def test_difficulty_validation_figure(sim_export, tmp_path, monkeypatch):
    import impostor_bench.analysis.figures as figures

    data = load_tables(sim_export)
    notes: list[str] = []
    no_model = figures.Embedder(None, "no embedder here")
    assert figures.fig_difficulty_validation(data, {}, tmp_path, notes, embedder=no_model) is None
    assert "skipped" in notes[-1] and "no embedder here" in notes[-1]
    res = figures.fig_difficulty_validation(data, {}, tmp_path, notes, embedder=figures.Embedder(_StubEmbedder()))
    assert res is not None and (tmp_path / res["file"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_figures_never_sink_the_report(sim_export, tmp_path, monkeypatch):
    import impostor_bench.analysis.figures as figures

    def broken(*a, **k):
        raise ValueError("bad axis")

    from impostor_bench.analysis.stats.config import StatsConfig
    from impostor_bench.analysis.stats.session import Analysis

    monkeypatch.setattr(figures, "FIGURES", [("broken", broken), *figures.FIGURES[:1]])
    notes: list[str] = []
    data, cfg = load_tables(sim_export), StatsConfig(**FAST)
    rates = stats.TABLES["win_by_model_mode"](Analysis(data, cfg), cfg)  # Fig. 1 draws this table's intervals
    made = figures.make_figures(data, {"win_by_model_mode": rates}, tmp_path, notes)
    assert [m["file"] for m in made] == ["win_by_mode.png"]
    assert any("broken" in n and "bad axis" in n for n in notes)


def test_invalid_outputs_table_in_the_bundle(bundle, sim_export):
    """The per-model invalid-output table (issue 12) is written with the others and shown in
    report.md under its own title; its counts are those of the player rows."""
    df = pd.read_csv(bundle / "tables" / "invalid_outputs.csv")
    assert list(df.columns[:4]) == ["model", "n_seats", "desc_invalid", "desc_invalid_pct"]
    players = pd.read_parquet(sim_export / "players.parquet")
    total = df.set_index("model").loc["ALL"]
    assert total["n_seats"] == len(players)
    assert total["ballot_invalid"] == (~players["ballot_valid"]).sum()
    assert total["desc_leak"] == (~players["description_valid"]).sum()
    assert "### invalid_outputs: Invalid outputs per model by class" in (bundle / "report.md").read_text()

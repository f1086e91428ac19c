"""The README's demo (scripts/demo.sh): what it plays, that it needs no key, and that its
tournament fills the report (the slow test plays the real 288 bot games)."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.analysis.stats import ROUND_TABLES
from impostor_bench.registry import load_registry, route_of
from impostor_bench.sweep.plan import plan

ROOT = Path(__file__).resolve().parents[1]
DEMO, DEMO_LLM = ROOT / "configs" / "demo.yaml", ROOT / "configs" / "demo-llm.yaml"
# Tables the demo cannot fill by design, with the reason: size fits need two models with a
# published size, and the bots have none (SmolLM2 plays in its own experiment).
# the size fit (the bots have no parameter count) and the round tables (one-round games), by design
# phenotypes: k-means with k = 4 needs more than the demo's three models (M.7)
EXPECTED_EMPTY = {"scaling", *ROUND_TABLES, "phenotypes", "phenotype_fit"}


def test_demo_plans_the_tournament_and_the_llm_games():
    bots = plan(DEMO, resolve=True)
    assert (len(bots.experiments), bots.games) == (36, 288)
    assert {e.mode for e in bots.experiments} == {"homogeneous", "cross_play", "team_blind", "team_aware",
                                                  "team_semi_aware"}
    assert {e.difficulty for e in bots.experiments} == {"easy", "hard"}
    assert bots.config.tracking.experiment == "impostor-demo"
    llm = plan(DEMO_LLM, resolve=True)
    assert (len(llm.experiments), llm.games) == (2, 2)
    assert llm.config.tracking.experiment == "impostor-demo-llm"  # never mixed into the bots' report
    assert set(llm.resolved.values()) == {"local/smollm2", "bot/embedding"}


def test_demo_needs_no_key(monkeypatch):
    """Only offline players (bots, the embedded llama.cpp model), each creatable without any API key."""
    from impostor_bench.preflight import check_models

    for var in [v for v in os.environ if re.search(r"_(API_KEY|KEY|TOKEN|SECRET)$", v)]:
        monkeypatch.delenv(var)
    registry = load_registry()
    for path in (DEMO, DEMO_LLM):
        resolved = plan(path, resolve=True).resolved
        assert {route_of(m) for m in resolved.values()} <= {"bot", "local"}, resolved
        assert all(registry.entry(m) is not None for m in resolved.values()), resolved  # registered aliases
        bots_only = {a: m for a, m in resolved.items() if route_of(m) == "bot"}
        check_models(bots_only, str(path))  # raises one line per model that cannot be created


def _run(args: list[str], env: dict, cwd: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "impostor_bench.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-4000:])
    return proc.stdout + proc.stderr


def _demo_report_args() -> list[str]:
    """The arguments of demo.sh's ``impostor report`` line (its --out left to the caller)."""
    line = re.search(r"^  impostor report (.+)$", (ROOT / "scripts" / "demo.sh").read_text(), re.M)
    assert line, "scripts/demo.sh: no `impostor report` line"
    args = line.group(1).split()
    i = args.index("--out")
    return ["report", *args[:i], *args[i + 2:]]


@pytest.fixture(scope="module")
def demo_bundle(tmp_path_factory) -> tuple[str, str, Path]:
    """demo.sh's tournament and report as it runs them: the 288 bot games tracked in an MLflow store
    of their own, then its report line (the experiment, 2,000 bootstrap replicates, figures, the PDF).
    The sweep's and the report's output and the report folder."""
    tmp = tmp_path_factory.mktemp("demo")
    env = dict(os.environ, IMPOSTOR_MLFLOW="1", MLFLOW_TRACKING_URI=f"sqlite:///{tmp / 'mlflow.db'}",
               HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    out = _run(["sweep", str(DEMO), "--log-dir", str(tmp / "logs")], env, ROOT)
    said = _run([*_demo_report_args(), "--out", str(tmp / "report")], env, ROOT)
    return out, said, tmp / "report"


@pytest.mark.slow
def test_demo_tournament_fills_the_report(demo_bundle):
    """The demo's 288 bot games give a report whose tables all have numbers (only the size
    fits and the round tables are empty, by design) and no mostly-undefined bootstrap interval."""
    out, said, report = demo_bundle
    assert "36/36 experiments complete, 288/288 games" in out, out[-2000:]
    # demo.sh's console: the sweep's progress lines and summary, the report's totals; the rest in its logs
    sweep_shown, report_shown = _shown("SWEEP_SHOWN", out), _shown("REPORT_SHOWN", said)
    assert 6 <= len(sweep_shown) <= 16 and any("36/36 experiments complete" in ln for ln in sweep_shown), sweep_shown
    assert 3 <= len(report_shown) <= 6 and any(": done in " in ln for ln in report_shown), report_shown
    assert len(said.splitlines()) > 52  # what the console is spared: a line per table and more
    md = (report / "report.md").read_text()
    empty = re.search(r"Empty tables \(\d+[^)]*\): ([^.\n]+)\.", md)
    assert set() if empty is None else set(map(str.strip, empty.group(1).split(","))) <= EXPECTED_EMPTY, md
    # a bootstrap with many undefined replicates would be flagged; zero-width intervals are flagged
    # where a cell's experiments all agree (issue 40: printed with the flag, never as a real interval)
    assert "replicates undefined" not in md, [ln for ln in md.splitlines() if "replicates undefined" in ln]
    tables = report / "tables"
    head = pd.read_csv(tables / "headline.csv")
    assert set(head["model"]) == {"bot/random", "bot/embedding", "bot/vague"}
    assert head[["imp_win_pct", "det_acc_pct", "centrality", "coal_eff_pct"]].notna().all().all()
    ratings = pd.read_csv(tables / "ratings.csv")
    assert set(ratings["role"]) == {"impostor", "majority"} and ratings["skill"].notna().all()
    itt = pd.read_csv(tables / "speaking_itt.csv")
    assert len(itt) == 11 and itt["mid_rand_pp"].notna().all()  # 5 modes x 2 difficulties + ALL
    assert pd.read_csv(tables / "opponent_baseline.csv")["or_per_10pp"].notna().any()
    assert pd.read_csv(tables / "coordination.csv")["vote_coord_pct"].notna().all()
    # Table 12: at least 10 of its 14 columns; the bots write no coordination or trust language (0, not
    # empty), and bot/random names each other seat with probability 1/3, its teammate included
    t12 = pd.read_csv(tables / "team_dynamics.csv").set_index("model")
    assert t12.iloc[:, :14].notna().any().sum() >= 10
    assert (t12["coord_rate_pct"] == 0).all() and (t12["trust_form_pct"] == 0).all()
    r = t12.loc["bot/random"]
    assert r["betrayal_pct_ci_low"] <= 100 / 3 <= r["betrayal_pct_ci_high"]
    # the bots describe from their own word only: no exposure-driven mirroring or convergence to recover
    for col in ("ling_mirror_pp", "vocab_conv"):
        assert ((t12[f"{col}_ci_low"] <= 0) & (0 <= t12[f"{col}_ci_high"])).all(), t12[[col, f"{col}_ci_low"]]


@pytest.mark.slow
@pytest.mark.parametrize("picture", ["report.png", "paper_pages.png"])
def test_the_docs_pictures_show_todays_demo_report(demo_bundle, picture):
    """docs/img's pictures of the demo's report show what today's report prints: the text each shows
    (its sidecar, written by scripts/screenshots.py) is what today's demo bundle gives, numbers
    masked (bootstrap draws, dates and run ids vary; wording, labels and the layout of values not)."""
    screenshots = _screenshots()
    if picture == "paper_pages.png" and shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is missing; scripts/install.sh installs it")
    problem = screenshots.stale(ROOT / "docs" / "img" / picture, demo_bundle[2])
    assert not problem, problem


def test_a_stale_sidecar_is_told_in_one_line(tmp_path):
    """The check itself: a sidecar that no longer matches the bundle's text is stale, in one line
    naming the picture and the command that remakes it; a matching one is not."""
    screenshots = _screenshots()
    report = tmp_path / "report"
    report.mkdir()
    page = ("<html><head><title>T 1</title><style>h3{{}}</style></head><body><h1>The report</h1>"
            "<h3>Table 1: Headline</h3><table><tr><td>{a}</td></tr></table><h3>Table 2: Key effects</h3>"
            "<p>Player 2 vs Player 1</p><h3>Table 3: Tests</h3><p>{c}</p></body></html>")
    (report / "report.html").write_text(page.format(a="57.3 [43.5, 70.0]", c="chi2"))
    img = tmp_path / "img"
    img.mkdir()
    side = screenshots.write_sidecar(img / "report.png", report)
    shows = json.loads(side.read_text())["shows"]
    assert shows == "The report Table #: Headline # [#, #] Table #: Key effects Player # vs Player #", shows
    # other numbers (bootstrap draws, dates) and what the picture does not show (Table 3 on): not stale
    (report / "report.html").write_text(page.format(a="60.1 [-1.5, 70.25]", c="anything else"))
    assert screenshots.stale(img / "report.png", report) == ""
    # another layout of a value: stale, said in one line
    (report / "report.html").write_text(page.format(a="60.4 ± 11.7", c="chi2"))
    problem = screenshots.stale(img / "report.png", report)
    assert problem.startswith(f"{img / 'report.png'} is stale: regenerate with `bash scripts/demo.sh && "
                              ".venv/bin/python scripts/screenshots.py --only report`"), problem
    assert "\n" not in problem and "has '# [#, #] Table #: Key" in problem and "has '# ± # Table #: Key" in problem, problem


def _screenshots():
    """scripts/screenshots.py as a module (its pure text functions need no browser)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module("screenshots")
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def _console_pattern(name: str) -> re.Pattern:
    """A filter of scripts/demo.sh (a bash ERE, ``$ALWAYS`` expanded): the lines it lets through
    to the console."""
    text = (ROOT / "scripts" / "demo.sh").read_text()
    always = re.search(r"^ALWAYS='([^']*)'$", text, re.M)
    shown = re.search(rf'^{name}="([^"]*)"$', text, re.M)
    assert always and shown, name
    return re.compile(shown.group(1).replace("$ALWAYS", always.group(1)))


def _shown(name: str, output: str) -> list[str]:
    pattern = _console_pattern(name)
    return [ln for ln in output.splitlines() if pattern.search(ln)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_demo_console_hides_the_reports_line_per_table(tmp_path, jobs):
    """What the report says while it computes (a line per table, in one process or two) goes to the
    demo's log only; the console gets none of it."""
    from impostor_bench.analysis.io import load_tables, write_tables
    from impostor_bench.analysis.report import build_report
    from impostor_bench.analysis.sim.simulate import simulate_games
    from impostor_bench.analysis.stats import TABLES, StatsConfig

    write_tables(tmp_path / "export", *simulate_games(6, 8, seed=2))
    said: list[str] = []
    build_report(load_tables(tmp_path / "export"), tmp_path / "out", StatsConfig(seed=1, bootstrap_reps=20,
                 permutation_reps=20), tables={n: TABLES[n] for n in ("headline", "chi2", "balance", "tie_sizes")},
                 figures=False, compile_tex=False, jobs=jobs, progress=said.append)
    lines = [f"impostor report: {s}" for s in said]  # as commands/report.py prints them
    assert sum("table" in ln for ln in lines) >= 4, lines  # the per-table lines are there ...
    assert _shown("REPORT_SHOWN", "\n".join(lines)) == []  # ... and none reaches the console


def test_demo_console_always_shows_an_error():
    for name in ("SWEEP_SHOWN", "REPORT_SHOWN"):
        assert _shown(name, "impostor sweep: error: configs/x.yaml: field 'models': ...; fix: ...")
        assert _shown(name, "Traceback (most recent call last):")
        assert not _shown(name, "impostor report: [3/52] table chi2: 6 rows in 0.7 s (second process)")

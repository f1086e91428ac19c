"""Screenshots of the demo's outputs in a real browser (docs/img/report.png, docs/img/mlflow_run.png)
and the first pages of the report's paper/paper.pdf (docs/img/paper_pages.png, by poppler's pdftoppm).

Run after ``bash scripts/demo.sh``. Opens the report's first screen
(``out/demo-report/report.html``) and the MLflow page of one run of the demo's experiment
(``mlflow ui`` started on the demo's store) in headless Chromium (Debian's ``chromium``,
driven by Playwright; scripts/install.sh installs both), and saves what a reader sees
first, at 1600 x 1000. The game trace picture is scripts/trace_screenshot.py's.

Beside report.png and paper_pages.png it writes a sidecar (docs/img/<name>.json) with the text the
picture shows, normalised (:func:`normalised`: numbers masked, whitespace collapsed, so bootstrap
draws, dates and run ids do not count; wording, labels and the layout of values do).
tests/test_demo.py recomputes it from today's demo bundle and says which picture is stale.

    .venv/bin/python scripts/screenshots.py [--only report|mlflow|paper] [--report out/demo-report]
        [--tracking-uri sqlite:///mlruns/mlflow.db] [--experiment impostor-demo] [--out-dir docs/img]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_shots import launch_chromium, mlflow_ui  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VIEWPORT = {"width": 1600, "height": 1000}
# report.png shows the report's top (title, contents, source) and its first two tables, the second
# cut off by the screen's edge: its text is taken through Table 2 (shoot_report checks it still is)
REPORT_TABLES_SHOWN = 2
PAPER_PAGES = 3  # paper_pages.png: the first pages of paper/paper.pdf
REGENERATE = "bash scripts/demo.sh && .venv/bin/python scripts/screenshots.py --only {only}"


def normalised(text: str) -> str:
    """The text a picture is compared by: every number (with its sign, decimals, thousands
    separators, a date's or time's parts) masked as ``#``, whitespace collapsed."""
    return " ".join(re.sub(r"[-\u2212+]?\d+(?:[.,:]\d+)*", "#", text).split())


class _Text(HTMLParser):
    """The text of an HTML body (not <head>, <style>, <script>) up to the ``stop_at``-th <h3>."""

    def __init__(self, stop_at: int) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.h3, self.stop_at, self.skip, self.done = 0, stop_at, 0, False

    def handle_starttag(self, tag, attrs):
        if tag == "h3":
            self.h3 += 1
            self.done = self.done or self.h3 >= self.stop_at
        self.skip += tag in ("head", "style", "script", "title")
        self.parts.append(" ")

    def handle_endtag(self, tag):
        self.skip -= tag in ("head", "style", "script", "title")
        self.parts.append(" ")

    def handle_data(self, data):
        if not self.skip and not self.done:
            self.parts.append(data)


def report_shown(report_dir: Path) -> str:
    """What report.png shows, as normalised text: report.html through its first
    ``REPORT_TABLES_SHOWN`` tables."""
    parser = _Text(REPORT_TABLES_SHOWN + 1)
    parser.feed((report_dir / "report.html").read_text(encoding="utf-8"))
    return normalised("".join(parser.parts))


def paper_shown(report_dir: Path) -> str:
    """What paper_pages.png shows, as normalised text: the first ``PAPER_PAGES`` pages of
    paper/paper.pdf as poppler's pdftotext reads them."""
    pdf = report_dir / "paper" / "paper.pdf"
    out = subprocess.run(["pdftotext", "-f", "1", "-l", str(PAPER_PAGES), "-enc", "UTF-8", str(pdf), "-"],
                         check=True, capture_output=True, text=True)
    return normalised(out.stdout)


SHOWN = {"report.png": (report_shown, "report"), "paper_pages.png": (paper_shown, "paper")}


def write_sidecar(picture: Path, report_dir: Path) -> Path:
    """docs/img/<name>.json beside ``picture``: the normalised text it shows and how to remake it."""
    shown, only = SHOWN[picture.name]
    side = picture.with_suffix(".json")
    side.write_text(json.dumps({"picture": picture.name, "regenerate": REGENERATE.format(only=only),
                                "shows": shown(report_dir)}, indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return side


def stale(picture: Path, report_dir: Path) -> str:
    """"" when the sidecar of ``picture`` holds the text today's bundle ``report_dir`` gives, else
    one line saying the picture is stale, how to remake it, and the first words that differ."""
    shown, only = SHOWN[picture.name]
    side = picture.with_suffix(".json")
    was = json.loads(side.read_text(encoding="utf-8"))["shows"] if side.is_file() else ""
    now = shown(report_dir)
    if was == now:
        return ""
    a, b = was.split(), now.split()
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    i = max(i - 1, 0)  # a word of context before the first difference
    shown_as = picture.relative_to(ROOT) if picture.is_relative_to(ROOT) else picture
    return (f"{shown_as} is stale: regenerate with `{REGENERATE.format(only=only)}` (the picture has "
            f"{' '.join(a[i:i + 8])!r} where today's report has {' '.join(b[i:i + 8])!r})")


def shoot_report(report_dir: Path, out: Path) -> None:
    """The report's first screen: it must open on results (headline table), not on caveats."""
    from playwright.sync_api import sync_playwright

    html = (report_dir / "report.html").resolve()
    if not html.is_file():
        raise SystemExit(f"{html}: no report; run `bash scripts/demo.sh` first (or pass --report DIR)")
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(html.as_uri())
        page.wait_for_load_state("load")
        tops = page.eval_on_selector_all("h3", "hs => hs.map(h => h.getBoundingClientRect().top)")
        page.screenshot(path=str(out))
        browser.close()
    # the sidecar's text (through REPORT_TABLES_SHOWN tables) must cover what the screen shows
    if len(tops) > REPORT_TABLES_SHOWN and tops[REPORT_TABLES_SHOWN] < VIEWPORT["height"]:
        raise SystemExit(f"{out}: the first screen now shows table heading {REPORT_TABLES_SHOWN + 1}; "
                         "raise REPORT_TABLES_SHOWN in scripts/screenshots.py")


def pick_run(uri: str, experiment: str) -> tuple[str, str, str]:
    """(experiment id, run id, run name) of the demo's first cross-play experiment run."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        raise SystemExit(f"{uri}: no MLflow experiment {experiment!r}; run `bash scripts/demo.sh` first")
    runs = client.search_runs([exp.experiment_id], "tags.`impostor.kind` = 'experiment'",
                              order_by=["attributes.run_name ASC"], max_results=1000)
    runs = [r for r in runs if r.data.tags.get("impostor.mode") == "cross_play"] or runs
    if not runs:
        raise SystemExit(f"{experiment!r} has no experiment runs yet")
    run = runs[0]
    return exp.experiment_id, run.info.run_id, run.info.run_name


def shoot_mlflow_run(uri: str, experiment: str, out: Path) -> str:
    from playwright.sync_api import sync_playwright

    exp_id, run_id, run_name = pick_run(uri, experiment)
    with mlflow_ui(uri, cwd=ROOT) as base:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport=VIEWPORT)
            # workflowType: the Model-training side of MLflow 3's switch, as the sweep's printed
            # runs-table address (impostor_bench.tracking.store.runs_page), not the GenAI evaluation view
            page.goto(f"{base}/#/experiments/{exp_id}/runs/{run_id}?workflowType=machine_learning")
            page.get_by_text(run_name).first.wait_for(timeout=90_000)
            time.sleep(3)  # let the metrics and parameters panes fill in
            close = page.get_by_role("button", name="Close")  # MLflow 3's assistant opens itself once
            if close.count():
                close.first.click()
                time.sleep(1)
            page.screenshot(path=str(out))
            browser.close()
    return run_name


def shoot_paper(report_dir: Path, out: Path, dpi: int = 70) -> None:
    """The first ``PAPER_PAGES`` pages of paper/paper.pdf side by side (pdftoppm renders, Pillow joins)."""
    import shutil
    import subprocess
    import tempfile

    from PIL import Image

    pdf = (report_dir / "paper" / "paper.pdf").resolve()
    pages = PAPER_PAGES
    if not pdf.is_file():
        raise SystemExit(f"{pdf}: no paper.pdf; run `impostor report` with pdflatex installed (scripts/install.sh)")
    if shutil.which("pdftoppm") is None:
        raise SystemExit("pdftoppm is missing: apt-get install poppler-utils (scripts/install.sh does it)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["pdftoppm", "-png", "-r", str(dpi), "-f", "1", "-l", str(pages), str(pdf), f"{tmp}/p"],
                       check=True)
        imgs = [Image.open(p).convert("RGB") for p in sorted(Path(tmp).glob("p-*.png"))]
        gap = 12
        sheet = Image.new("RGB", (sum(i.width for i in imgs) + gap * (len(imgs) + 1),
                                  max(i.height for i in imgs) + 2 * gap), (200, 200, 200))
        x = gap
        for im in imgs:
            sheet.paste(im, (x, gap))
            x += im.width + gap
        sheet.save(out, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("report", "mlflow", "paper"))
    parser.add_argument("--report", type=Path, default=ROOT / "out" / "demo-report")
    parser.add_argument("--tracking-uri", default=os.environ.get("MLFLOW_TRACKING_URI")
                        or f"sqlite:///{ROOT / 'mlruns' / 'mlflow.db'}")
    parser.add_argument("--experiment", default="impostor-demo")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "report"):
        shoot_report(args.report, args.out_dir / "report.png")
        print(args.out_dir / "report.png", write_sidecar(args.out_dir / "report.png", args.report))
    if args.only in (None, "paper"):
        shoot_paper(args.report, args.out_dir / "paper_pages.png")
        print(args.out_dir / "paper_pages.png", write_sidecar(args.out_dir / "paper_pages.png", args.report))
    if args.only in (None, "mlflow"):
        name = shoot_mlflow_run(args.tracking_uri, args.experiment, args.out_dir / "mlflow_run.png")
        print(f"{args.out_dir / 'mlflow_run.png'} (run {name})")


if __name__ == "__main__":
    main()

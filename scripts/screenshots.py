"""Screenshots of the demo's outputs in a real browser (docs/img/report.png, docs/img/mlflow_run.png)
and the first pages of the report's paper/paper.pdf (docs/img/paper_pages.png, by poppler's pdftoppm).

Run after ``bash scripts/demo.sh``. Opens the report's first screen
(``out/demo-report/report.html``) and the MLflow page of one run of the demo's experiment
(``mlflow ui`` started on the demo's store) in headless Chromium (Debian's ``chromium``,
driven by Playwright; scripts/install.sh installs both), and saves what a reader sees
first, at 1600 x 1000. The game trace picture is scripts/trace_screenshot.py's.

    .venv/bin/python scripts/screenshots.py [--only report|mlflow|paper] [--report out/demo-report]
        [--tracking-uri sqlite:///mlruns/mlflow.db] [--experiment impostor-demo] [--out-dir docs/img]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_shots import launch_chromium, mlflow_ui  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VIEWPORT = {"width": 1600, "height": 1000}


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
        page.screenshot(path=str(out))
        browser.close()


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


def shoot_paper(report_dir: Path, out: Path, pages: int = 3, dpi: int = 70) -> None:
    """The first ``pages`` pages of paper/paper.pdf side by side (pdftoppm renders, Pillow joins)."""
    import shutil
    import subprocess
    import tempfile

    from PIL import Image

    pdf = (report_dir / "paper" / "paper.pdf").resolve()
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
        print(args.out_dir / "report.png")
    if args.only in (None, "paper"):
        shoot_paper(args.report, args.out_dir / "paper_pages.png")
        print(args.out_dir / "paper_pages.png")
    if args.only in (None, "mlflow"):
        name = shoot_mlflow_run(args.tracking_uri, args.experiment, args.out_dir / "mlflow_run.png")
        print(f"{args.out_dir / 'mlflow_run.png'} (run {name})")


if __name__ == "__main__":
    main()

"""Screenshot of a report run's ratings in the MLflow UI (docs/img/mlflow_ratings.png).

Runs the offline bot demo sweep (configs/demo.yaml: three bots, 288 games) into a
throwaway SQLite store (or uses ``--store DIR`` holding ``mlflow.db`` from such a sweep),
logs the report as a run with ``impostor report --experiment impostor-demo --log-run``,
starts ``mlflow ui`` on the store and opens the experiment's runs table in headless
Chromium (Debian's ``chromium``, driven by Playwright) with the rating metrics as columns,
then saves the picture.

    .venv/bin/python scripts/ratings_screenshot.py [--out docs/img/mlflow_ratings.png] [--store DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from browser_shots import launch_chromium, mlflow_ui  # noqa: E402

EXPERIMENT = "impostor-demo"
IMPOSTOR = [sys.executable, "-m", "impostor_bench.cli"]


def _env(uri: str) -> dict[str, str]:
    return dict(os.environ, MLFLOW_TRACKING_URI=uri, LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1")


def sweep_and_report(store: Path, sweep: bool) -> tuple[str, str, str]:
    """(store URI, experiment id, report run id): the demo sweep (unless done) and a logged report."""
    uri = f"sqlite:///{store}/mlflow.db"
    if sweep:
        subprocess.run([*IMPOSTOR, "sweep", "configs/demo.yaml", "--log-dir", str(store / "logs"), "--display", "none"],
                       check=True, cwd=ROOT, env=_env(uri))
    subprocess.run([*IMPOSTOR, "report", "--experiment", EXPERIMENT, "--out", str(store / "report"),
                    "--bootstrap-reps", "2000", "--log-run"], check=False, cwd=ROOT, env=_env(uri))
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(EXPERIMENT)
    runs = client.search_runs([exp.experiment_id], filter_string="tags.`impostor.kind` = 'report'",
                              order_by=["attributes.start_time DESC"], max_results=1)
    if not runs:
        raise SystemExit("no report run was logged")
    return uri, exp.experiment_id, runs[0].info.run_id


def shoot(uri: str, exp_id: str, run_id: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with mlflow_ui(uri) as base:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1600, "height": 1100})
            page.goto(f"{base}/#/experiments/{exp_id}/runs/{run_id}")
            page.get_by_text("rating_impostor.", exact=False).first.wait_for(timeout=90_000)
            try:  # the assistant side panel takes a third of the page
                page.get_by_role("button", name="Close").last.click(timeout=5_000)
            except Exception:  # noqa: BLE001
                pass
            search = page.get_by_placeholder("Search metrics")
            search.fill("rating_")
            search.scroll_into_view_if_needed()
            time.sleep(3)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True)
            try:  # the figure in the run's artifact view, beside the metrics picture
                page.get_by_role("tab", name="Artifacts").click(timeout=10_000)
                page.get_by_text("report", exact=True).first.click(timeout=20_000)
                page.get_by_text("figures", exact=True).first.click(timeout=20_000)
                page.get_by_text("ratings.png", exact=True).first.click(timeout=20_000)
                time.sleep(4)
                page.screenshot(path=str(out.with_name(out.stem + "_figure.png")), full_page=True)
            except Exception as exc:  # noqa: BLE001 - the metrics picture is the one the docs need
                print(f"artifact view not captured: {exc}", file=sys.stderr)
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "mlflow_ratings.png")
    parser.add_argument("--store", type=Path, default=None,
                        help="folder whose mlflow.db holds a finished demo sweep (default: run one in a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="impostor-ratings-shot-") as tmp:
        store = args.store or Path(tmp)
        uri, exp_id, run_id = sweep_and_report(store.absolute(), sweep=args.store is None)
        shoot(uri, exp_id, run_id, args.out)
    print(args.out)


if __name__ == "__main__":
    main()

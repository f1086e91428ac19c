"""Screenshot of an experiment's runs table in MLflow's UI (docs/img/mlflow_runs.png), opened at
the address a sweep prints (``impostor_bench.tracking.store.runs_page``), with each run's one-line
description shown.

Plays a small offline sweep (bots, 4 experiments x 4 games) into a throwaway folder, starts
``mlflow ui`` on its store and opens it in headless Chromium (Debian's ``chromium``, driven by
Playwright; scripts/install.sh installs both).  It also opens the experiment's plain address
and prints where MLflow lands (its GenAI overview, whatever the experiment's tags), and fails
unless the runs-table address shows the runs and their descriptions.

    .venv/bin/python scripts/mlflow_runs_screenshot.py [--out docs/img/mlflow_runs.png]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_shots import launch_chromium, mlflow_ui  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IMPOSTOR = Path(sys.executable).with_name("impostor")
CONFIG = """name: screenshot
models: [bot/random, bot/embedding]
modes: [homogeneous, cross_play]
difficulties: [easy]
games_per_experiment: 4
seeds: [0]
concurrency: {max_connections: 4, max_samples: 4, max_tasks: 2}
retries: {attempts: 1, wait: 0}
output_dir: logs/sweeps
tracking: {experiment: impostor-screenshot}
"""


def play(tmp: Path) -> tuple[str, str]:
    """A sweep into ``tmp``'s default store: (tracking URI, experiment id)."""
    (tmp / "sweep.yaml").write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "IMPOSTOR_MLFLOW")}
    subprocess.run([str(IMPOSTOR), "sweep", "sweep.yaml", "--display", "none"], check=True, cwd=tmp, env=env)
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}"
    return uri, MlflowClient(uri).get_experiment_by_name("impostor-screenshot").experiment_id


def shoot(uri: str, exp_id: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    from impostor_bench.tracking.store import runs_page

    with mlflow_ui(uri) as base:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{base}/#/experiments/{exp_id}")
            page.wait_for_url("**/experiments/*/**", timeout=60_000)
            print(f"plain address opens: {page.url.removeprefix(base)}")
            page.goto(runs_page(exp_id, base))
            page.get_by_text("sweep screenshot").first.wait_for(timeout=60_000)
            try:  # the assistant panel takes a third of the page
                page.get_by_label("Close").first.click(timeout=5_000)
            except Exception:  # noqa: BLE001 - not shown in every version
                pass
            page.get_by_role("button", name="Columns").first.click()
            for name in ("Description", "Dataset", "Source", "Models"):  # the description on, empty columns off
                page.get_by_text(name, exact=True).last.click()
            page.keyboard.press("Escape")
            page.locator('button[data-component-id*="runnamecellrenderer"]').first.click()  # expand the sweep
            page.get_by_text("impostor won").nth(4).wait_for(timeout=30_000)  # sweep + 4 experiment runs
            time.sleep(1)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
            print(f"runs table address: {page.url.removeprefix(base)}")
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "mlflow_runs.png")
    args = parser.parse_args()
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    with tempfile.TemporaryDirectory(prefix="impostor-runs-shot-") as tmp:
        uri, exp_id = play(Path(tmp))
        shoot(uri, exp_id, args.out)
    print(args.out)


if __name__ == "__main__":
    main()

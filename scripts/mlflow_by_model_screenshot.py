"""Screenshot of the demo's runs grouped by impostor model in MLflow's UI
(docs/img/mlflow_by_impostor.png), opened at the second address a sweep prints
(``impostor_bench.tracking.store.runs_view``, view ``impostor-by-impostor-model``).

Plays ``configs/demo.yaml`` (the bots' tournament, all five modes) into a throwaway folder,
starts ``mlflow ui`` on its store and opens the view in headless Chromium (Debian's
``chromium`` driven by Playwright). Fails unless the page shows one group per impostor model
with runs of every mode in it, and the key metric columns.

    python scripts/mlflow_by_model_screenshot.py [--out docs/img/mlflow_by_impostor.png]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_shots import launch_chromium, mlflow_ui  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IMPOSTOR = Path(sys.executable).with_name("impostor")


def play(tmp: Path) -> tuple[str, str, str]:
    """The demo sweep into ``tmp``'s default store: (tracking URI, experiment id, printed address);
    a folder that already holds the demo's store is resumed (nothing left to play)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "IMPOSTOR_MLFLOW")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", IMPOSTOR_MLFLOW_TRACES="0")  # traces: not what is shown
    r = subprocess.run([str(IMPOSTOR), "sweep", str(ROOT / "configs" / "demo.yaml"), "--display", "none"],
                       cwd=tmp, env=env, capture_output=True, text=True, check=True)
    [address] = re.findall(r"by impostor model: (\S+)", r.stderr)
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}"
    return uri, MlflowClient(uri).get_experiment_by_name("impostor-demo").experiment_id, address


def shoot(uri: str, address: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with mlflow_ui(uri) as base:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1700, "height": 900})
            page.goto(address.replace("http://127.0.0.1:5000", base))
            try:
                _wait_for_groups(page)
            finally:
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out))
            print(f"address: {page.url.removeprefix(base)}")
            browser.close()


def _wait_for_groups(page) -> None:
    """Until the page shows a group per impostor model (folded: one row of means each, as the
    view opens) and the metric columns; the assistant panel closed."""
    page.get_by_text("impostor_win_rate").first.wait_for(timeout=90_000)
    for model in ("bot/random", "bot/embedding", "bot/vague"):
        page.get_by_text(f"Group: {model}", exact=True).first.wait_for(timeout=30_000)
    close = page.get_by_role("button", name="Close")  # MLflow 3's assistant opens itself once
    if close.count():
        close.first.click()
    # widen the run-name column so the group names (models) read whole: drag its header's edge
    box = page.locator('[col-id="attributes.`Run Name`"]').first.bounding_box()
    if box:
        x, y = box["x"] + box["width"] - 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + 220, y, steps=10)
        page.mouse.up()
        page.mouse.move(5, 890)  # no header tooltip in the picture
    time.sleep(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "mlflow_by_impostor.png")
    parser.add_argument("--workdir", type=Path, help="play (or find the played demo) here instead of a temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="impostor-by-model-shot-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        uri, _, address = play(work)
        shoot(uri, address, args.out)
    print(args.out)


if __name__ == "__main__":
    main()

"""Screenshot of a game's MLflow trace in a real browser (docs/img/mlflow_trace.png).

Plays a few offline cross-play games with our tracking on into a throwaway SQLite store,
starts ``mlflow ui`` on it, opens the first game's trace in headless Chromium (Debian's
``chromium``, driven by Playwright; scripts/install.sh installs both) and saves the picture.

    .venv/bin/python scripts/trace_screenshot.py [--out docs/img/mlflow_trace.png] [--games 3]
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_shots import launch_chromium, mlflow_ui  # noqa: E402


def play(tmp: Path, games: int) -> tuple[str, str, str]:
    """Games into ``tmp``'s store: (store URI, experiment id, first game's trace id)."""
    uri = f"sqlite:///{tmp}/mlflow.db"
    env = dict(os.environ, IMPOSTOR_MLFLOW="1", MLFLOW_TRACKING_URI=uri, LITELLM_LOCAL_MODEL_COST_MAP="True",
               IMPOSTOR_MLFLOW_TRACES="1", IMPOSTOR_MLFLOW_EXPERIMENT="impostor-traces")
    subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "tasks/impostor.py", "--model", "bot/embedding",
                    "--model-role", "impostor=bot/random", "-T", "mode=cross_play", "-T", f"n_games={games}",
                    "--log-dir", str(tmp / "logs"), "--display", "none"], check=True, cwd=ROOT, env=env)
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("impostor-traces")
    traces = client.search_traces(locations=[exp.experiment_id], max_results=100, order_by=["timestamp_ms ASC"])
    if not traces:
        raise SystemExit("no trace was logged; is IMPOSTOR_MLFLOW_TRACES off?")
    return uri, exp.experiment_id, traces[0].info.trace_id


def shoot(uri: str, exp_id: str, trace_id: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with mlflow_ui(uri) as base:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{base}/#/experiments/{exp_id}/traces?selectedEvaluationId={trace_id}")
            page.get_by_text("vote round").first.wait_for(timeout=60_000)
            try:  # select a player's call, so the right pane shows its prompt and reply
                page.get_by_text("Player 1 describes").last.click(force=True, timeout=10_000)
            except Exception:  # noqa: BLE001 - the trace tree alone is still the picture
                pass
            time.sleep(2)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "mlflow_trace.png")
    parser.add_argument("--games", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="impostor-trace-shot-") as tmp:
        uri, exp_id, trace_id = play(Path(tmp), args.games)
        shoot(uri, exp_id, trace_id, args.out)
    print(args.out)


if __name__ == "__main__":
    main()

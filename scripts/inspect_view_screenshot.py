"""Screenshots of ``inspect view`` on a few games (docs/img/inspect_view_samples.png and
docs/img/inspect_view_sample.png): the samples list shows each game's words, impostor and
one-line outcome; a game's Scores tab shows every player's description and ballot.

Plays offline cross-play games (random majority, embedding impostor: outcomes vary) into a throwaway log folder, starts ``inspect view`` on it,
opens the log in headless Chromium (Debian's ``chromium``, driven by Playwright;
scripts/install.sh installs both) and saves the pictures.

    .venv/bin/python scripts/inspect_view_screenshot.py [--out-dir docs/img] [--games 6]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSPECT = Path(sys.executable).with_name("inspect")

sys.path.insert(0, str(ROOT / "scripts"))
from browser_shots import free_port, launch_chromium  # noqa: E402


def play(logs: Path, games: int) -> None:
    env = dict(os.environ, IMPOSTOR_MLFLOW="0", LITELLM_LOCAL_MODEL_COST_MAP="True")
    subprocess.run([str(INSPECT), "eval", "tasks/impostor.py", "--model", "bot/random",
                    "--model-role", "impostor=bot/embedding", "-T", "mode=cross_play", "-T", f"n_games={games}",
                    "--log-dir", str(logs), "--display", "none"], check=True, cwd=ROOT, env=env)


def shoot(logs: Path, out_dir: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    port = free_port()
    view = subprocess.Popen([str(INSPECT), "view", "--log-dir", str(logs), "--port", str(port)],
                            env=dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    shots = [out_dir / "inspect_view_samples.png", out_dir / "inspect_view_sample.png"]
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                urllib.request.urlopen(base, timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        out_dir.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(base)  # one log in the folder: the viewer opens its samples list
            page.locator(".sample-answer").first.wait_for(timeout=60_000)
            time.sleep(1)
            page.screenshot(path=str(shots[0]))
            page.locator(".sample-answer").first.click()
            page.get_by_text("Scoring", exact=True).first.click(timeout=30_000)
            page.get_by_text("Role, model").first.wait_for(timeout=30_000)
            time.sleep(1)
            page.screenshot(path=str(shots[1]))
            browser.close()
    finally:
        view.terminate()
        view.wait(timeout=30)
    return shots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--games", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="impostor-view-shot-") as tmp:
        play(Path(tmp), args.games)
        for shot in shoot(Path(tmp), args.out_dir):
            print(shot)


if __name__ == "__main__":
    main()

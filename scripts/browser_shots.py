"""What the screenshot scripts share: headless Chromium and a throwaway ``mlflow ui``.

One place for the browser's path and the UI's start and stop: ``mlflow ui`` starts worker
processes of its own, so it runs in its own process group and is stopped as a group (a
plain terminate left its workers running), with MLflow's GenAI job runner off and
litellm's offline price map (without it the UI hangs at start offline).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator, Optional

CHROMIUM = os.environ.get("IMPOSTOR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_chromium(playwright):
    """Debian's headless Chromium driven by Playwright (its own browser download fails offline)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True)


@contextlib.contextmanager
def mlflow_ui(uri: str, *, cwd: Optional[Path] = None, wait_s: float = 120) -> Iterator[str]:
    """``mlflow ui`` on the store ``uri`` while the block runs; yields its base address."""
    port = free_port()
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
    ui = subprocess.Popen([sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri, "--port", str(port),
                           "--workers", "1"], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                urllib.request.urlopen(f"{base}/health", timeout=1)
                break
            except OSError:
                if ui.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"mlflow ui on {uri} did not start (exit {ui.poll()})") from None
                time.sleep(0.5)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(ui.pid, signal.SIGTERM)
        try:
            ui.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(ui.pid, signal.SIGKILL)
            ui.wait()

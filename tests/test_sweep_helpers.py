"""Helpers for the sweep / tracking / export tests (no tests here).

* ``testplayer/<name>``: an offline, deterministic Inspect model.  Descriptions
  are a fixed sentence; ballots are JSON naming another player chosen from
  ``config.seed`` (the solver derives it from the game seed).  Usage is
  explicit (no tokenizer download).  ``IMPOSTOR_TEST_DELAY`` (seconds) slows
  each call and ``IMPOSTOR_TEST_PROGRESS`` (a file) counts ballots, so a test can
  kill a sweep mid-way.  Sweep configs load it with
  ``imports: [test_sweep_helpers]`` (tests/ on PYTHONPATH).
* a real MLflow tracking server on 127.0.0.1 (subprocess), and llama-cpp-python's server with
  the shipped SmolLM2 (subprocess).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import yaml
from inspect_ai.model import ModelAPI, ModelOutput, ModelUsage, modelapi

from impostor_bench.core import prompts

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


@modelapi(name="testplayer")
class TestPlayer(ModelAPI):
    __test__ = False

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: Any = None, **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        delay = float(os.environ.get("IMPOSTOR_TEST_DELAY", "0") or 0)
        if delay:
            await asyncio.sleep(delay)
        system = input[0].text if input else ""
        user = input[-1].text if input else ""
        m = re.search(r"You are Player (\d)", user)
        me = int(m.group(1)) if m else 1
        if system == prompts.VOTING_SYSTEM:
            rng = random.Random(config.seed if config.seed is not None else 0)
            target = rng.choice([p for p in range(1, 5) if p != me])
            text = json.dumps({"suspected_impostor_id": str(target), "confidence": 0.5, "reasoning": "x",
                               "self_declaration": False, "word_guess": None})
            progress = os.environ.get("IMPOSTOR_TEST_PROGRESS")
            if progress:  # one line per ballot, so a test can see how far a sweep got
                with open(progress, "a") as f:
                    f.write("vote\n")
        else:
            text = "It is a thing people know well."
        out = ModelOutput.from_content(self.model_name, text)
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return out


# ------------------------------------------------------------------ configs and CLI


def write_config(path: Path, **fields: Any) -> Path:
    cfg = {
        "name": "t", "models": ["testplayer/a", "testplayer/b"], "modes": ["homogeneous", "cross_play"],
        "difficulties": ["easy"], "games_per_experiment": 2, "seeds": [0],
        "concurrency": {"max_connections": 4, "max_samples": 2, "max_tasks": 2},
        "retries": {"attempts": 1, "wait": 0}, "imports": ["test_sweep_helpers"],
        "output_dir": str(path.parent / "logs"),
    }
    cfg.update(fields)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def cli_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(REPO), env.get("PYTHONPATH", "")])
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env.pop("MLFLOW_TRACKING_URI", None)
    env.update(extra)
    return env


def impostor_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "impostor"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "impostor_bench.cli"]


def run_cli(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(impostor_cmd() + args, cwd=cwd, env=env or cli_env(), capture_output=True, text=True,
                          timeout=timeout)


# ------------------------------------------------------------------ MLflow server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mlflow_exe() -> list[str]:
    exe = Path(sys.executable).parent / "mlflow"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mlflow"]


@contextlib.contextmanager
def mlflow_server(root: Path, port: int | None = None, timeout: float = 120) -> Iterator[str]:
    """A real ``mlflow server`` on 127.0.0.1 with a SQLite backend; yields its URI."""
    port = port or free_port()
    root.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("MLFLOW_TRACKING_URI", None)
    log = open(root / "server.log", "w")
    proc = subprocess.Popen(
        mlflow_exe() + ["server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
                        "--backend-store-uri", f"sqlite:///{root}/db.sqlite", "--default-artifact-root", str(root / "art")],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while True:
            try:
                if httpx.get(f"{uri}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"mlflow server did not start: {(root / 'server.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield uri
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@contextlib.contextmanager
def llama_cpp_server(log: Path | None = None, timeout: float = 90) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) with the
    shipped SmolLM2 on 127.0.0.1, seeded, two threads; yields its ``.../v1`` base URL once
    ``/v1/models`` answers. ``log`` keeps its output (its load log, then uvicorn's access log: a
    line per request); a file, not a pipe, which the load log would fill and block."""
    from impostor_bench.providers.local import resolve_gguf

    port = free_port()
    out = open(log, "w") if log is not None else subprocess.DEVNULL
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}  # idle threads sleep, not spin, on shared cores
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(resolve_gguf("smollm2")),
                             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2",
                             "--seed", "0"], stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).raise_for_status()
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    said = log.read_text(errors="replace")[-2000:] if log is not None else ""
                    raise RuntimeError(f"llama_cpp.server did not start in {timeout:.0f} s "
                                       f"(exit {proc.poll()}): {said}") from None
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log is not None:
            out.close()  # type: ignore[union-attr]


def all_bytes_under(*roots: Path) -> Iterator[tuple[Path, bytes]]:
    """Every file's bytes (zip members of .eval files decompressed too) under the roots."""
    import zipfile

    for root in roots:
        for p in Path(root).rglob("*"):
            if not p.is_file():
                continue
            data = p.read_bytes()
            yield p, data
            if zipfile.is_zipfile(p):
                with zipfile.ZipFile(p) as z:
                    for info in z.infolist():
                        yield p / info.filename, z.read(info)


def copytree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst)

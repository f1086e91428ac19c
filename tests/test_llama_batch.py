"""The batched llama.cpp engine (issue 20): several calls decoded together in one context."""

from __future__ import annotations

import json
import os
import threading

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from impostor_bench.core import prompts
from impostor_bench.core.parsing import parse_vote, vote_json_schema
from impostor_bench.core.records import seat_of_label

pytestmark = pytest.mark.slow  # runs the real SmolLM2 (small prompts, few tokens)

DESCRIPTIONS = [(1, "It has strings and you play it with a bow."), (2, "A musical instrument in orchestras."),
                (3, "It lives in the ocean and has eight arms."), (4, "You play it under your chin.")]


@pytest.fixture(scope="module")
def llm():
    from llama_cpp import Llama

    from impostor_bench.providers.local import resolve_gguf

    return Llama(model_path=str(resolve_gguf("smollm2")), n_ctx=64, n_batch=64, n_threads=2, verbose=False)


@pytest.fixture()
def engine(llm):
    from impostor_bench.providers.llama_batch import BatchEngine

    eng = BatchEngine(llm, 2, 1024)
    yield eng
    eng.close()


def chat(text: str, **kw):
    return {"messages": [{"role": "user", "content": text}], "temperature": 0.0, "max_tokens": 8, "seed": 1, **kw}


def text(response) -> str:
    return response["choices"][0]["message"]["content"]


def test_two_concurrent_greedy_calls_write_what_each_writes_alone(engine, llm):
    a, b = chat("Name a fruit."), chat("Name a large animal that lives in Africa.", stop=["\n"])
    alone = [text(engine.submit(engine.plan(**r)).result(timeout=120)) for r in (a, b)]
    plans = [engine.plan(**r) for r in (a, b)]
    steps = engine.stats["steps"]
    with engine._cond:  # both queued before the engine's next step
        futures = [engine.submit(p) for p in plans]
    together = [text(f.result(timeout=120)) for f in futures]
    assert together == alone
    assert engine.stats["steps"] - steps <= 8  # decoded in shared steps (8 tokens at most each)
    direct = llm.create_chat_completion(**a)  # and what llama-cpp-python's own path writes
    assert text(direct) == alone[0]


def test_concurrent_constrained_votes_always_parse(engine):
    futures = []
    for player in (1, 2, 3):
        schema = vote_json_schema(seat_of_label(player), reasoning_max=30)
        req = {"messages": [{"role": "system", "content": prompts.VOTING_SYSTEM},
                            {"role": "user", "content": prompts.voting_prompt(
                                mode="homogeneous", word="violin", player_label=player, descriptions=DESCRIPTIONS)}],
               "temperature": 1.0, "max_tokens": 150, "seed": player,
               "response_format": {"type": "json_object", "schema": schema}}
        futures.append((player, engine.submit(engine.plan(**req))))
    for player, future in futures:
        out = text(future.result(timeout=300))
        ballot = json.loads(out)
        assert ballot["suspected_impostor_id"] in {"1", "2", "3", "4"} - {str(player)}
        assert parse_vote(out, seat_of_label(player)).error is None
    assert engine.stats["copied_prefixes"] + engine.stats["reused_tokens"] > 0  # the shared vote prompt was reused


def test_a_cancelled_call_frees_its_sequence(llm):
    from impostor_bench.providers.llama_batch import BatchEngine

    eng = BatchEngine(llm, 1, 1024)  # one sequence: the next call needs the cancelled one's
    try:
        long = eng.submit(eng.plan(**chat("Write a long story about a dragon.", max_tokens=400, temperature=0.8)))
        assert long.cancel()
        short = eng.submit(eng.plan(**chat("Name a colour.")))
        assert text(short.result(timeout=120))
        assert long.cancelled()
    finally:
        eng.close()


class _Broken:
    def sample(self, ctx, idx):
        raise RuntimeError("sampler exploded")


def test_an_engine_error_fails_the_call_and_the_engine_goes_on(engine):
    plan = engine.plan(**chat("Name a fruit."))
    plan.sampler = _Broken()
    with pytest.raises(RuntimeError, match="sampler exploded"):
        engine.submit(plan).result(timeout=120)
    assert text(engine.submit(engine.plan(**chat("Name a fruit."))).result(timeout=120))


def test_too_long_a_prompt_is_refused_before_queueing(engine):
    with pytest.raises(ValueError, match="exceed context window of 1024"):
        engine.plan(**chat("word " * 1100))


def test_close_fails_waiting_calls_instead_of_hanging(llm):
    from impostor_bench.providers.llama_batch import BatchEngine

    eng = BatchEngine(llm, 1, 1024)
    futures = [eng.submit(eng.plan(**chat("Tell me about the sea.", max_tokens=200))) for _ in range(3)]
    threading.Timer(0.5, eng.close).start()
    for f in futures:
        try:
            f.result(timeout=120)
        except RuntimeError as e:
            assert "closed" in str(e)
    with pytest.raises(RuntimeError, match="closed"):
        eng.submit(eng.plan(**chat("Hello")))

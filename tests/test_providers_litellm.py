"""litellm/<provider>/<model>: request mapping, retry policy, and a real end-to-end run
against llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (no mocked client)."""

from __future__ import annotations

import asyncio
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, ResponseSchema, get_model
from inspect_ai.util import JSONSchema

from impostor_bench.core import prompts
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.parsing import vote_json_schema
from test_sweep_helpers import free_port, llama_cpp_server

litellm_api = pytest.importorskip("impostor_bench.providers.litellm_api")
import litellm  # noqa: E402

SECRET = "sk-test-do-not-log-0123456789"
DESCRIPTIONS = [(1, "It has strings and you play it with a bow."), (2, "A musical instrument in orchestras."),
                (3, "It lives in the ocean and has eight arms."), (4, "You play it under your chin.")]


def vote_messages(player=2):
    return [ChatMessageSystem(content=prompts.VOTING_SYSTEM),
            ChatMessageUser(content=prompts.voting_prompt(mode="homogeneous", word="violin", player_label=player,
                                                          descriptions=DESCRIPTIONS))]


def description_messages():
    return [ChatMessageSystem(content=prompts.DESCRIPTION_SYSTEM),
            ChatMessageUser(content=prompts.description_prompt(mode="homogeneous", word="violin", player_label=1,
                                                               previous=[]))]


def schema_config(**kw):
    schema = vote_json_schema(1, reasoning_max=30)
    return GenerateConfig(response_schema=ResponseSchema(name="vote", json_schema=JSONSchema.model_validate(schema)),
                          **kw)


# ------------------------------------------------------------ offline unit tests


def test_request_mapping_and_secret_never_recorded():
    api = litellm_api.LiteLLMAPI("openai/some-model", api_base="http://127.0.0.1:9/v1", api_key=SECRET,
                                 extra_headers={"Authorization": f"Bearer {SECRET}", "X-Trace": "t1"})
    req = api.request(description_messages(), GenerateConfig(temperature=0.4, max_tokens=50, seed=3,
                                                             stop_seqs=["\n\n"], timeout=30))
    assert req["model"] == "openai/some-model" and req["api_base"] == "http://127.0.0.1:9/v1"
    assert (req["temperature"], req["max_tokens"], req["seed"], req["stop"]) == (0.4, 50, 3, ["\n\n"])
    assert req["num_retries"] == 0 and req["max_retries"] == 0 and req["timeout"] == 30.0
    assert [m["role"] for m in req["messages"]] == ["system", "user"]
    redacted = litellm_api.redact({**req, "api_key": SECRET})
    assert SECRET not in json.dumps(redacted)
    assert redacted["max_tokens"] == 50 and redacted["extra_headers"] == {"X-Trace": "t1"}


def test_response_schema_styles(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")  # the route's key is checked at creation
    cfg = schema_config()
    default = litellm_api.LiteLLMAPI("openai/m").request(vote_messages(), cfg)["response_format"]
    assert default["type"] == "json_schema" and default["json_schema"]["name"] == "vote"
    assert default["json_schema"]["schema"]["properties"]["suspected_impostor_id"]["enum"] == ["1", "3", "4"]
    obj = litellm_api.LiteLLMAPI("openai/m", response_format="json_object").request(vote_messages(), cfg)
    assert obj["response_format"]["type"] == "json_object" and "schema" in obj["response_format"]
    with pytest.raises(ImpostorError, match="json_schema or json_object"):
        litellm_api.LiteLLMAPI("openai/m", response_format="grammar")
    with pytest.raises(ImpostorError, match="litellm/openai/gpt-4o"):
        litellm_api.LiteLLMAPI("gpt-4o")


def test_base_url_and_key_from_environment(monkeypatch):
    monkeypatch.setenv("LITELLM_BASE_URL", "http://127.0.0.1:1234/v1")
    monkeypatch.setenv("LITELLM_API_KEY", SECRET)
    api = litellm_api.LiteLLMAPI("openai/m")
    assert api.base_url == "http://127.0.0.1:1234/v1" and api.api_key == SECRET
    assert SECRET not in json.dumps(litellm_api.redact(api.request(description_messages(), GenerateConfig())))


@pytest.mark.parametrize("exc,retry,kind", [
    (litellm.exceptions.RateLimitError(message="slow down", llm_provider="openai", model="m"), True, "rate_limit"),
    (litellm.exceptions.Timeout(message="t", model="m", llm_provider="openai"), True, "transient"),
    (litellm.exceptions.APIConnectionError(message="c", llm_provider="openai", model="m"), True, "transient"),
    (litellm.exceptions.InternalServerError(message="500", llm_provider="openai", model="m"), True, "transient"),
    (litellm.exceptions.ServiceUnavailableError(message="503", llm_provider="openai", model="m"), True, "transient"),
    (litellm.exceptions.BadRequestError(message="bad", llm_provider="openai", model="m"), False, None),
    (litellm.exceptions.AuthenticationError(message="no", llm_provider="openai", model="m"), False, None),
    (ValueError("x"), False, None),
])
def test_should_retry(exc, retry, kind):
    decision = litellm_api.LiteLLMAPI("openai/m", api_key="sk-test-not-used").should_retry(exc)
    assert bool(decision) is retry
    if retry:
        assert decision.kind == kind


def test_connection_refused_is_a_retryable_error():
    api = litellm_api.LiteLLMAPI("openai/m", api_base=f"http://127.0.0.1:{free_port()}/v1", api_key=SECRET)
    with pytest.raises(Exception) as e:
        asyncio.run(api.generate(description_messages(), [], "none", GenerateConfig(max_tokens=5, timeout=10)))
    assert api.should_retry(e.value)
    assert api.is_auth_failure(e.value) is False


# ------------------------------------------------------------ end to end (real server)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    with llama_cpp_server(tmp_path_factory.mktemp("llama_server") / "server.log", timeout=120) as base:
        yield base


@pytest.mark.slow
def test_end_to_end_description_via_inspect(llama_server):
    model = get_model("litellm/openai/smollm2", api_base=llama_server, api_key=SECRET, memoize=False)
    out = asyncio.run(model.generate(description_messages(),
                                     config=GenerateConfig(temperature=0.7, max_tokens=40, seed=4, max_retries=2)))
    assert out.completion.strip()
    assert out.usage.input_tokens > 100 and 0 < out.usage.output_tokens <= 40
    assert out.stop_reason in ("stop", "max_tokens")


@pytest.mark.slow
def test_end_to_end_constrained_vote_and_model_call(llama_server):
    model = get_model("litellm/openai/smollm2", api_base=llama_server, api_key=SECRET,
                      response_format="json_object", memoize=False)
    out, call = asyncio.run(model.api.generate(vote_messages(2), [], "none",
                                               schema_config(temperature=0.3, max_tokens=120, seed=2)))
    ballot = json.loads(out.completion)
    assert ballot["suspected_impostor_id"] in ("1", "3", "4")
    assert len(ballot["reasoning"]) <= 30
    assert out.usage.output_tokens > 0
    recorded = json.dumps(call.request) + json.dumps(call.response)
    assert SECRET not in recorded
    assert call.request["api_base"] == llama_server and call.request["response_format"]["type"] == "json_object"
    assert call.response["usage"]["completion_tokens"] == out.usage.output_tokens


@pytest.mark.slow
def test_end_to_end_server_error_is_retryable(llama_server):
    """llama.cpp's server answers 500 to OpenAI's json_schema response_format: Inspect would retry it."""
    api = get_model("litellm/openai/smollm2", api_base=llama_server, api_key=SECRET, memoize=False).api
    with pytest.raises(Exception) as e:
        asyncio.run(api.generate(vote_messages(2), [], "none", schema_config(max_tokens=10)))
    assert api.should_retry(e.value)


def test_a_route_without_its_key_is_refused_at_creation(monkeypatch):
    """Issue 30: `litellm/openai/...` without OPENAI_API_KEY was created, then every call
    failed and was retried; now creating it (the sweep's preflight) names the key."""
    for var in ("OPENAI_API_KEY", "LITELLM_API_KEY", "LITELLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ImpostorError, match="OPENAI_API_KEY is not set; fix: export OPENAI_API_KEY"):
        litellm_api.LiteLLMAPI("openai/gpt-4o-mini")
    litellm_api.LiteLLMAPI("openai/gpt-4o-mini", api_key="sk-given")  # a key given, or
    litellm_api.LiteLLMAPI("openai/smollm2", base_url="http://127.0.0.1:1/v1")  # a local server: no check

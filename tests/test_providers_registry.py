"""configs/models.yaml and impostor.registry: the paper's nine models, aliases, clear errors."""

from __future__ import annotations

import re
import textwrap

import pytest

from impostor.errors import ImpostorError
from impostor.registry import MODELS_CSV_COLUMNS, load_registry

PAPER_NINE = {
    "gpt-4o": "openai/gpt-4o",
    "gpt-3.5-turbo": "openai/gpt-3.5-turbo",
    "claude-sonnet-4": "anthropic/claude-sonnet-4-20250514",
    "deepseek-v3": "openrouter/deepseek/deepseek-chat",
    "llama-4-maverick": "openrouter/meta-llama/llama-4-maverick",
    "llama-4-scout": "openrouter/meta-llama/llama-4-scout",
    "llama-3.1-405b": "openrouter/meta-llama/llama-3.1-405b-instruct",
    "llama-3.1-70b": "openrouter/meta-llama/llama-3.1-70b-instruct",
    "llama-3.1-8b": "openrouter/meta-llama/llama-3.1-8b-instruct",
}


@pytest.fixture(scope="module")
def reg():
    return load_registry()


def test_paper_models_and_local_players(reg):
    for alias, model in PAPER_NINE.items():
        assert reg.resolve(alias) == model
        e = reg.entry(alias)
        assert e.defaults.temperature == 0.7 and e.defaults.max_tokens == 150  # A.3 defaults
    assert reg.resolve("smollm2") == "local/smollm2" and reg.entry("smollm2").params_b == 0.135
    assert reg.resolve("random") == "bot/random" and reg.resolve("embedding") == "bot/embedding"
    assert reg.entry("llama-3.1-405b").params_b == 405 and reg.entry("gpt-4o").params_b is None
    # vote temperature annealing applies to OpenAI/OpenRouter backends only (A.3)
    assert reg.entry("gpt-4o").defaults.vote_temperature == 0.3
    assert reg.entry("claude-sonnet-4").defaults.vote_temperature is None
    assert {reg.entry(a).family for a in PAPER_NINE} == {"gpt", "claude", "deepseek", "llama"}


def test_every_registry_model_has_a_known_provider(reg):
    from inspect_ai._util.registry import registry_find

    import impostor.providers._registry  # noqa: F401 - registers bot/local/litellm

    names = {i.name.split("/")[-1] for i in [getattr(o, "__registry_info__", None)
                                             for o in registry_find(lambda info: info.type == "modelapi")] if i}
    for alias in reg.aliases:
        assert reg.resolve(alias).split("/")[0] in names | {"openrouter", "openai", "anthropic"}


def test_resolve_passthrough_and_unknown_alias(reg):
    assert reg.resolve("openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert reg.resolve("local//tmp/x.gguf") == "local//tmp/x.gguf"
    with pytest.raises(ImpostorError) as e:
        reg.resolve("gpt4o")
    msg = str(e.value)
    assert "models.yaml" in msg and "'gpt4o'" in msg and "did you mean gpt-4o" in msg and "fix:" in msg


def test_models_csv_rows(reg):
    rows = reg.models_csv_rows()
    assert all(tuple(r) == MODELS_CSV_COLUMNS for r in rows)
    by_model = {r["model"]: r for r in rows}
    assert by_model["openrouter/meta-llama/llama-4-scout"] == {
        "model": "openrouter/meta-llama/llama-4-scout", "provider": "openrouter", "family": "llama", "params_b": 109}
    assert len(rows) == len(set(by_model))
    some = reg.models_csv_rows(["gpt-4o", "bot/random", "vllm/my-model"])
    assert [r["model"] for r in some] == ["openai/gpt-4o", "bot/random", "vllm/my-model"]
    assert some[2] == {"model": "vllm/my-model", "provider": "vllm", "family": None, "params_b": None}
    assert reg.alias_of("openai/gpt-4o") == "gpt-4o"


def write(tmp_path, text):
    p = tmp_path / "models.yaml"
    p.write_text(textwrap.dedent(text))
    return p


GOOD = """
models:
  tiny:
    model: local/smollm2
    provider: local
    family: smollm
    params_b: 0.135
"""


@pytest.mark.parametrize("text,needles", [
    ("models: [a, b]\n", ["'models:' mapping"]),
    ("models:\n  tiny: {model: local/x, provider: local}\n", ["alias 'tiny'", "field 'family'", "add 'family:'"]),
    ("models:\n  tiny: {model: smollm2, provider: local, family: s}\n",
     ["alias 'tiny'", "field 'model'", "<provider>/<model>"]),
    ("models:\n  tiny: {model: local/x, provider: local, family: s, params_b: big}\n",
     ["field 'params_b'", "correct the value"]),
    ("models:\n  tiny: {model: local/x, provider: local, family: s, params_b: -1}\n", ["field 'params_b'"]),
    ("models:\n  tiny: {model: local/x, provider: local, family: s, defaults: {temprature: 0.7}}\n",
     ["field 'defaults.temprature'", "remove 'defaults.temprature'"]),
    ("models:\n  tiny: {model: local/x, provider: local, family: s, colour: red}\n", ["remove 'colour'"]),
    ("models:\n  a/b: {model: local/x, provider: local, family: s}\n", ["alias 'a/b'", "rename"]),
    ("models:\n  tiny: {model: local/x\n", ["not valid YAML", "line"]),
    ("models: {}\nextra: 1\n", ["'models:' mapping"]),
    ("models:\n  t: {model: local/x, provider: local, family: s}\nextra: 1\n", ["unknown top-level", "extra"]),
])
def test_validation_errors_name_file_field_and_fix(tmp_path, text, needles):
    p = write(tmp_path, text)
    with pytest.raises(ImpostorError) as e:
        load_registry(p)
    msg = str(e.value)
    assert str(p) in msg
    for needle in needles:
        assert needle in msg, (needle, msg)


def test_missing_file_and_env_override(tmp_path, monkeypatch):
    with pytest.raises(ImpostorError, match=re.escape(str(tmp_path / "nope.yaml")) + ".*not found"):
        load_registry(tmp_path / "nope.yaml")
    p = write(tmp_path, GOOD)
    monkeypatch.setenv("IMPOSTOR_MODELS", str(p))
    reg = load_registry()
    assert reg.aliases == ["tiny"] and reg.path == p

"""configs/models.yaml and impostor_bench.registry: the paper's nine models, aliases, clear errors."""

from __future__ import annotations

import re
import textwrap
from datetime import date

import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.registry import MODELS_CSV_COLUMNS, load_registry

PAPER_NINE = {
    "gpt-4o": "openai/gpt-4o-2024-08-06",
    "gpt-3.5-turbo": "openai/gpt-3.5-turbo-0125",
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
        # the vote temperature comes from the route rule (impostor_bench.core.generation), not a fixed number
        assert e.defaults.vote_temperature is None
    assert reg.resolve("smollm2") == "local/smollm2" and reg.entry("smollm2").params_b == 0.135
    assert reg.resolve("random") == "bot/random" and reg.resolve("embedding") == "bot/embedding"
    assert reg.entry("llama-3.1-405b").params_b == 405 and reg.entry("claude-sonnet-4").params_b is None
    assert {reg.entry(a).family for a in PAPER_NINE} == {"gpt", "claude", "deepseek", "llama"}


def test_paper_models_carry_their_makers_and_routes(reg):
    """Appendix J groups by who made the model; OpenRouter only serves Meta's and DeepSeek's."""
    makers = {a: reg.entry(a).provider for a in PAPER_NINE}
    assert makers == {"gpt-4o": "openai", "gpt-3.5-turbo": "openai", "claude-sonnet-4": "anthropic",
                      "deepseek-v3": "deepseek", **{a: "meta" for a in PAPER_NINE if a.startswith("llama")}}
    routes = {a: reg.entry(a).route for a in PAPER_NINE}
    assert routes["gpt-4o"] == "openai" and routes["claude-sonnet-4"] == "anthropic"
    assert {routes[a] for a in PAPER_NINE if a.startswith(("llama", "deepseek"))} == {"openrouter"}
    assert reg.entry("smollm2").route == "local" and reg.entry("random").route == "bot"


def test_sizes_say_published_or_estimated_with_a_source(reg):
    for alias in PAPER_NINE:
        e = reg.entry(alias)
        if e.params_b is None:
            assert e.params_source is None
        elif e.params_source == "estimated":
            assert e.params_note and len(e.params_note) > 20  # says where the number comes from
        else:
            assert e.params_source == "published"
    assert reg.entry("gpt-4o").params_source == "estimated" and reg.entry("llama-3.1-8b").params_source == "published"


def test_every_registry_model_has_a_known_provider(reg):
    from inspect_ai._util.registry import registry_find

    import impostor_bench.providers.register  # noqa: F401 - registers bot/local/litellm

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
    assert MODELS_CSV_COLUMNS[:4] == ("model", "provider", "family", "params_b")  # data contract first
    by_model = {r["model"]: r for r in rows}
    assert by_model["openrouter/meta-llama/llama-4-scout"] == {
        "model": "openrouter/meta-llama/llama-4-scout", "provider": "meta", "family": "llama", "params_b": 109,
        "route": "openrouter", "params_source": "published", "params_note": None, "active_params_b": 17,
        "alias": "llama-4-scout", "snapshot": "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        "snapshot_date": date(2025, 4, 5)}
    gpt = by_model["openai/gpt-4o-2024-08-06"]
    assert gpt["params_source"] == "estimated" and "arXiv" in gpt["params_note"]
    assert len(rows) == len(set(by_model))
    some = reg.models_csv_rows(["gpt-4o", "bot/random", "vllm/my-model", "openrouter/meta-llama/llama-3.3-70b",
                                "litellm/anthropic/claude-x"])
    assert [r["model"] for r in some] == ["openai/gpt-4o-2024-08-06", "bot/random", "vllm/my-model",
                                          "openrouter/meta-llama/llama-3.3-70b", "litellm/anthropic/claude-x"]
    assert some[2] == dict.fromkeys(MODELS_CSV_COLUMNS) | {"model": "vllm/my-model", "route": "vllm"}
    assert (some[3]["provider"], some[3]["route"]) == ("meta", "openrouter")  # maker read from the org path
    assert (some[4]["provider"], some[4]["route"]) == ("anthropic", "litellm")
    assert reg.alias_of("openai/gpt-4o-2024-08-06") == "gpt-4o"


def test_paper_models_are_pinned(reg):
    """Issue 43: every paper model names a dated snapshot with its source; a maker's own API is
    called by that dated id (so the run's ``model`` param records it); routed open weights name
    the weights' repository; every size that is not published says where the estimate comes from."""
    for alias, model in PAPER_NINE.items():
        e = reg.entry(alias)
        assert e.snapshot is not None and e.snapshot.source.strip() and e.snapshot.released is not None, alias
        if e.route in ("openai", "anthropic"):
            assert model == f"{e.route}/{e.snapshot.id}", alias
            assert re.search(r"\d{4}-?\d{2}-?\d{2}$|-\d{4}$", e.snapshot.id), alias  # a dated id, not an alias
        else:
            assert e.route == "openrouter" and "/" in e.snapshot.id, alias
        if e.params_b is not None and e.params_source == "estimated":
            assert e.params_note and e.params_note.strip(), alias
    assert {a for a in PAPER_NINE if reg.entry(a).params_source == "estimated"} == {"gpt-4o", "gpt-3.5-turbo"}


def test_snapshot_field_errors(tmp_path):
    p = write(tmp_path, """\
        models:
          x:
            model: openai/x-2024-01-01
            provider: openai
            family: gpt
            snapshot: {id: x-2024-01-01, released: 2024-01-01, source: docs, sorce: typo}
        """)
    with pytest.raises(ImpostorError) as ei:
        load_registry(p)
    msg = str(ei.value)
    assert "alias 'x'" in msg and "snapshot.sorce" in msg and "snapshot: id, released, source, note" in msg


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
    # who made it, not the route; lowercase ids
    ("models:\n  t: {model: openrouter/meta-llama/x, provider: openrouter, family: llama}\n",
     ["alias 't'", "field 'provider'", "API route", "fix: give the maker"]),
    ("models:\n  t: {model: openai/x, provider: OpenAI, family: gpt}\n", ["field 'provider'", "lowercase"]),
    ("models:\n  t: {model: openai/x, provider: openai, route: openrouter, family: gpt}\n",
     ["alias 't'", "field 'route'", "'openai'", "fix: drop 'route'"]),
    # sizes: published | estimated, an estimate needs a source note
    ("models:\n  t: {model: openai/x, provider: openai, family: gpt, params_b: 20, params_source: estimated}\n",
     ["alias 't'", "field 'params_note'", "fix: add 'params_note:'"]),
    ("models:\n  t: {model: openai/x, provider: openai, family: gpt, params_b: 20, params_source: guessed}\n",
     ["alias 't'", "field 'params_source'", "'published' or 'estimated'"]),
    ("models:\n  t: {model: openai/x, provider: openai, family: gpt, params_source: estimated, params_note: n}\n",
     ["alias 't'", "field 'params_b'", "without params_b"]),
])
def test_validation_errors_name_file_field_and_fix(tmp_path, text, needles):
    p = write(tmp_path, text)
    with pytest.raises(ImpostorError) as e:
        load_registry(p)
    msg = str(e.value)
    assert str(p) in msg
    for needle in needles:
        assert needle in msg, (needle, msg)


def test_estimated_size_with_note_loads_and_published_is_the_default(tmp_path):
    p = write(tmp_path, """
    models:
      mine:
        model: openai/my-model
        provider: openai
        family: gpt
        params_b: 12
        params_source: estimated
        params_note: "my own guess from the API latency"
      theirs:
        model: openrouter/meta-llama/x
        provider: meta
        family: llama
        params_b: 8
    """)
    reg = load_registry(p)
    assert reg.entry("mine").params_source == "estimated" and reg.entry("mine").route == "openai"
    assert reg.entry("theirs").params_source == "published" and reg.entry("theirs").route == "openrouter"
    assert reg.models_csv_rows(["mine"])[0]["params_note"] == "my own guess from the API latency"


def test_missing_file_and_env_override(tmp_path, monkeypatch):
    with pytest.raises(ImpostorError, match=re.escape(str(tmp_path / "nope.yaml")) + ".*not found"):
        load_registry(tmp_path / "nope.yaml")
    p = write(tmp_path, GOOD)
    monkeypatch.setenv("IMPOSTOR_MODELS", str(p))
    reg = load_registry()
    assert reg.aliases == ["tiny"] and reg.path == p


def test_models_csv_rows_follow_an_edited_registry(tmp_path, monkeypatch):
    """models.csv rows are read from the registry once per file version: an edit is seen."""
    from impostor_bench.export import models_frame

    p = write(tmp_path, GOOD)
    monkeypatch.setenv("IMPOSTOR_MODELS", str(p))
    assert models_frame(["local/smollm2"])[["provider", "alias"]].values.tolist() == [["local", "tiny"]]
    write(tmp_path, GOOD.replace("provider: local", "provider: somebody-else"))
    assert models_frame(["local/smollm2"])[["provider", "alias"]].values.tolist() == [["somebody-else", "tiny"]]
    p.unlink()  # no registry: the model string alone
    assert models_frame(["local/smollm2"])["alias"].isna().all()

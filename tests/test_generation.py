"""Generation settings (issue 12 s.4): vote temperature by backend (A.3), registry alias
defaults and model_args, explicit options first -- by model string, and through the task."""

from __future__ import annotations

import json
import textwrap

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.model import get_model

from impostor_bench.core import prompts
from impostor_bench.core.generation import anneals_votes, seat_settings, vote_temperature_for

BALLOT = json.dumps({"suspected_impostor_id": 2, "confidence": 0.5, "reasoning": "mock",
                     "self_declaration": False, "word_guess": None})


@pytest.mark.parametrize("model,annealed", [
    ("openai/gpt-4o", True), ("openrouter/meta-llama/llama-4-scout", True),
    ("openrouter/anthropic/claude-3.5-sonnet", True),  # an OpenRouter (OpenAI-compatible) backend
    ("anthropic/claude-sonnet-4-20250514", False), ("litellm/anthropic/claude-x", False),
    ("litellm/openai/gpt-4o", True), ("litellm/openrouter/deepseek/deepseek-chat", True),
    ("bot/random", True), ("local/smollm2", True), ("vllm/my-model", True),
])
def test_vote_temperature_by_backend(model, annealed):
    assert anneals_votes(model) is annealed
    assert vote_temperature_for(model, 0.7) == (0.3 if annealed else 0.7)
    assert vote_temperature_for(model, 1.0) == (0.6 if annealed else 1.0)
    assert vote_temperature_for(model, 0.5) == (0.3 if annealed else 0.5)  # the 0.3 floor
    assert vote_temperature_for(model, 0.7, explicit=0.9) == 0.9  # -T vote_temperature= is for everyone
    assert vote_temperature_for(model, 0.7, alias_default=0.45) == 0.45
    assert vote_temperature_for(model, 0.7, explicit=0.9, alias_default=0.45) == 0.9


def test_seat_settings_precedence_task_over_alias_over_paper():
    alias = {"temperature": 0.9, "max_tokens": 60, "vote_temperature": 0.5}
    s = seat_settings("anthropic/c", alias_defaults=alias)
    assert (s.temperature, s.max_tokens, s.vote_temperature) == (0.9, 60, 0.5)
    s = seat_settings("anthropic/c", temperature=0.2, alias_defaults=alias)
    assert (s.temperature, s.max_tokens, s.vote_temperature) == (0.2, 60, 0.5)
    assert s.source == "temperature=task,max_tokens=alias,vote_temperature=alias"
    s = seat_settings("openai/x", alias_defaults={"temperature": 1.1})
    assert (s.temperature, s.max_tokens, s.vote_temperature) == (1.1, 150, 0.7)  # rule on the alias's T
    s = seat_settings("anthropic/c")
    assert (s.temperature, s.max_tokens, s.vote_temperature) == (0.7, 150, 0.7)
    assert s.source == "temperature=paper,max_tokens=paper,vote_temperature=paper"


# ------------------------------------------------------------------ through the task


def _eval(tmp_path, **kw):
    from impostor_bench.tasks.impostor import impostor

    model = kw.pop("model", None)
    roles = kw.pop("model_roles", None)
    [log] = inspect_eval(impostor(**kw), model=model, model_roles=roles, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return log


def _calls(sample) -> list[tuple[str, str, float, int, object]]:
    """(model, phase, temperature, max_tokens, temperature the provider was sent) of every call."""
    out = []
    for e in sample.events:
        if isinstance(e, ModelEvent):
            phase = "vote" if e.input[0].text == prompts.VOTING_SYSTEM else "describe"
            sent = (e.call.request or {}).get("temperature") if e.call is not None else None
            out.append((e.model, phase, e.config.temperature, e.config.max_tokens, sent))
    return out


def test_openai_like_seats_vote_annealed_anthropic_like_at_t(tmp_path):
    """The same provider class (litellm, answering from mock_response: no network) on two
    backends: the OpenAI seats vote at max(0.3, T - 0.4), the Anthropic seat at T."""
    claude = get_model("litellm/anthropic/claude-test", mock_response=BALLOT)
    gpt = get_model("litellm/openai/gpt-test", mock_response=BALLOT)
    log = _eval(tmp_path, mode="cross_play", n_games=4, temperature=0.9,
                model=gpt, model_roles={"impostor": claude, "majority": gpt})
    for sample in log.samples:
        calls = _calls(sample)
        assert len(calls) == 8
        for model, phase, t, _, sent in calls:
            want = 0.9 if phase == "describe" or model.startswith("litellm/anthropic") else 0.5
            assert t == pytest.approx(want), (model, phase)
            # what litellm was sent (the log can miss the request of a concurrent vote call)
            assert sent is None or sent == pytest.approx(want), (model, phase)
        assert sum(sent is not None for *_, sent in calls) >= 6
        players = sample.scores["impostor_winner"].metadata["players"]
        for p in players:  # recorded per seat in the players table
            assert p["temperature"] == pytest.approx(0.9)
            assert p["vote_temperature"] == pytest.approx(0.9 if p["role"] == "impostor" else 0.5)


def test_explicit_vote_temperature_overrides_for_everyone(tmp_path):
    claude = get_model("litellm/anthropic/claude-test", mock_response=BALLOT)
    gpt = get_model("litellm/openai/gpt-test", mock_response=BALLOT)
    log = _eval(tmp_path, mode="cross_play", n_games=2, vote_temperature=0.15,
                model=gpt, model_roles={"impostor": claude, "majority": gpt})
    for sample in log.samples:
        votes = [c for c in _calls(sample) if c[1] == "vote"]
        assert len(votes) == 4 and all(t == pytest.approx(0.15) for _, _, t, _, _ in votes)
    assert log.eval.metadata["vote_temperature"] == 0.15


SCRIPT = {"description": {"*": "Scripted by the alias model_args."},
          "vote": {"*": {"suspected_impostor_id": "{next}", "confidence": 0.5, "reasoning": "s",
                         "self_declaration": False, "word_guess": None}}}


@pytest.fixture
def registry(tmp_path, monkeypatch):
    p = tmp_path / "models.yaml"
    p.write_text(textwrap.dedent(f"""
        models:
          scripted:
            model: bot/script
            provider: impostor-bench
            family: test
            defaults: {{temperature: 0.95, max_tokens: 77, vote_temperature: 0.55}}
            model_args: {{script: '{json.dumps(SCRIPT)}'}}
          plain:
            model: bot/random
            provider: impostor-bench
            family: test
            defaults: {{temperature: 0.4}}
        """))
    monkeypatch.setenv("IMPOSTOR_MODELS", str(p))
    return p


def test_alias_defaults_and_model_args_apply_through_the_task(tmp_path, registry):
    log = _eval(tmp_path / "a", n_games=2, models="scripted")
    assert log.eval.model == "bot/script" and log.eval.model_args.get("script")  # model_args recorded
    for sample in log.samples:
        players = sample.scores["impostor_winner"].metadata["players"]
        # model_args reached the model: every description comes from the alias's script
        assert {p["description"] for p in players} == {"Scripted by the alias model_args."}
        assert all(p["temperature"] == 0.95 and p["vote_temperature"] == 0.55 for p in players)
        calls = _calls(sample)
        assert {(ph, t, n) for _, ph, t, n, _ in calls} == {("describe", 0.95, 77), ("vote", 0.55, 77)}
    roles = log.eval.metadata["generation"]["roles"]
    assert roles["model"]["vote_temperature"] == 0.55 and roles["model"]["temperature"] == 0.95
    # an explicit option beats the alias; what it does not set still comes from the alias
    log = _eval(tmp_path / "b", n_games=1, models="scripted", temperature=0.3, max_tokens=99)
    calls = _calls(log.samples[0])
    assert {(ph, t, n) for _, ph, t, n, _ in calls} == {("describe", 0.3, 99), ("vote", 0.55, 99)}


def test_alias_without_vote_temperature_uses_the_route_rule_on_its_t(tmp_path, registry):
    log = _eval(tmp_path, mode="cross_play", n_games=2, models={"impostor": "plain", "majority": "scripted"})
    for sample in log.samples:
        for p in sample.scores["impostor_winner"].metadata["players"]:
            if p["model"] == "bot/random":  # alias 'plain': T 0.4 -> vote max(0.3, 0.0) = 0.3 (bot route anneals)
                assert (p["temperature"], p["vote_temperature"]) == (0.4, 0.3)
            else:
                assert (p["temperature"], p["vote_temperature"]) == (0.95, 0.55)


def test_models_option_errors_are_one_line(tmp_path, registry):
    from impostor_bench.tasks.impostor import TaskOptionError, impostor

    with pytest.raises(TaskOptionError, match="no model alias 'scriptd'.*did you mean scripted"):
        impostor(models="scriptd")
    with pytest.raises(TaskOptionError, match="mode 'cross_play' has roles impostor, majority"):
        impostor(mode="cross_play", models="scripted")
    with pytest.raises(TaskOptionError, match="role.s. team_a are not roles of mode 'cross_play'"):
        impostor(mode="cross_play", models={"team_a": "scripted"})


def test_sweep_passes_aliases_to_the_task(tmp_path, registry):
    from impostor_bench.sweep import plan, resolve_models
    from impostor_bench.sweep.run import alias_model_args, build_tasks
    from impostor_bench.tasks.impostor import impostor

    cfg = tmp_path / "s.yaml"
    cfg.write_text("name: t\nmodels: [scripted, plain]\nmodes: [homogeneous, cross_play]\n"
                   "difficulties: [easy]\ngames_per_experiment: 1\n")
    pl = plan(cfg)
    pl.resolved = resolve_models(pl.config, pl.path)
    assert alias_model_args(pl.resolved) == {"scripted": {"script": json.dumps(SCRIPT)}}
    tasks = build_tasks(pl, impostor)
    by_label = {e.label: t for e, t in zip(pl.experiments, tasks)}
    homo = next(t for k, t in by_label.items() if k.startswith("homogeneous") and "scripted" in k)
    assert str(homo.model) == "bot/script" and homo.model.model_args == {"script": json.dumps(SCRIPT)}
    assert homo.metadata["generation"]["roles"]["model"]["vote_temperature"] == 0.55
    cross = next(t for k, t in by_label.items() if k.startswith("cross_play") and "imp=plain" in k)
    assert {r: str(m) for r, m in cross.model_roles.items()} == {"impostor": "bot/random", "majority": "bot/script"}
    gen = cross.metadata["generation"]["roles"]
    assert gen["impostor"]["temperature"] == 0.4 and gen["majority"]["vote_temperature"] == 0.55

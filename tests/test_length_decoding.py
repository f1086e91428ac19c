"""Length and decoding ablations: the length budget, the verbosity-matched cut, top_p and the
experiment identity they give (docs/rules.md, "Length and decoding")."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from impostor_bench.core.descriptions import description_violation
from impostor_bench.core.experiment import ablations_of, experiment_id, with_ablations
from impostor_bench.core.glyphs import visible_length
from impostor_bench.core.options import GameOptions, task_option_message
from impostor_bench.core.verbosity import description_limit, truncated


def test_budget_tightens_the_750_rule_counted_the_same_way():
    assert description_limit(None) == 750 and description_limit(120) == 120 and description_limit(900) == 750
    flag = "\U0001F1EB\U0001F1F7"  # one grapheme cluster, two code points
    text = flag * 10 + "   \n " + "a" * 9  # 10 flags, one space (a whitespace run), 9 letters = 20 characters
    assert visible_length(text) == 20
    assert description_violation(text, "cat", description_limit(20)) is None
    broken = description_violation(text + "b", "cat", description_limit(20))
    assert broken is not None and broken.kind == "too_long" and broken.message.endswith("the limit is 20")


@pytest.mark.parametrize("value, fix", [(0, "use 1 to 750 characters"), (751, "use 1 to 750 characters"),
                                        ("abc", "it must be a whole number")])
def test_bad_budget_is_one_line_with_a_fix(value, fix):
    with pytest.raises(ValidationError) as exc:
        GameOptions(length_budget=value)
    msg = task_option_message(GameOptions, exc.value.errors()[0])
    assert msg.startswith("-T length_budget=") and fix in msg and "\n" not in msg


@pytest.mark.parametrize("value", [0, 1.5, -0.1, "x", float("nan")])
def test_bad_top_p_is_refused(value):
    with pytest.raises(ValidationError) as exc:
        GameOptions(top_p=value)
    assert "\n" not in task_option_message(GameOptions, exc.value.errors()[0])


def test_truncation_keeps_whole_words_and_counts_graphemes():
    assert truncated("a fluffy pet that purrs", 8) == "a fluffy"
    assert truncated("a fluffy pet", 12) == "a fluffy pet"  # fits: unchanged
    assert truncated("a fluffy pet", 11) == "a fluffy"  # "pet" would not fit whole
    assert truncated("supercalifragilistic", 5) == "super"  # one word longer than the limit: cut in it
    cut = truncated("\U0001F1EB\U0001F1F7 drapeau   bleu blanc", 9)
    assert cut == "\U0001F1EB\U0001F1F7 drapeau" and visible_length(cut) == 9
    assert truncated("line one\n\nline   two", 100) == "line one line two"  # as the others see it


def test_identity_unchanged_by_default_and_distinct_per_setting():
    base = experiment_id("homogeneous", "easy", {"all": "bot/random"}, 0)
    assert with_ablations(base, **ablations_of(GameOptions().model_dump())) == base == "homogeneous|easy|bot/random|s0"
    ids = {with_ablations(base, **ablations_of(GameOptions(**kw).model_dump())) for kw in (
        {}, {"temperature": 0.3}, {"temperature": 1.0}, {"top_p": 0.9}, {"temperature": 0.3, "top_p": 0.9},
        {"length_budget": 200}, {"truncate_to": 200})}
    assert len(ids) == 7
    assert with_ablations(base, temperature=0.3, top_p=0.9, length_budget=200) == f"{base}|T0.3|P0.9|L200"


# ------------------------------------------------------------------ sweeps


def _sweep(tmp_path, **fields):
    import yaml

    from impostor_bench.sweep.config import load_config

    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump({"name": "s", "models": ["bot/random", "bot/vague"], "modes": ["homogeneous"],
                                 "difficulties": ["easy"], "games_per_experiment": 2, **fields}))
    return p, load_config(p)


def test_decoding_and_length_axes_plan_one_experiment_per_cell(tmp_path):
    from impostor_bench.sweep.config import game_fields, planned_experiments
    from impostor_bench.sweep.plan import experiments, task_spec

    path, cfg = _sweep(tmp_path, decoding=[{"temperature": 0.3}, {"temperature": 1.0, "top_p": 0.9}],
                       length_budget=[None, 200], truncate_to=120)
    exps = experiments(cfg)
    assert len(exps) == planned_experiments(cfg) == 2 * 2 * 2  # models x decodings x budgets
    assert len({e.label for e in exps}) == len(exps)
    args = [task_spec(e, cfg, path, {})["task_args"] for e in exps]
    for e, a in zip(exps, args):
        assert GameOptions(**a).task_args() == a  # valid task options, as the task takes them
        assert e.label.endswith("|C120") and a["truncate_to"] == 120
    seen = {(a["models"]["model"], a["temperature"], a.get("top_p"), a.get("length_budget")) for a in args}
    assert seen == {(m, t, p, b) for m in ("bot/random", "bot/vague") for t, p in ((0.3, None), (1.0, 0.9))
                    for b in (None, 200)}
    assert game_fields(cfg, path)["decoding"] == [{"temperature": 0.3, "top_p": None},
                                                  {"temperature": 1.0, "top_p": 0.9}]


def test_default_sweep_keeps_its_plan_and_ids(tmp_path):
    from impostor_bench.sweep.config import game_fields
    from impostor_bench.sweep.plan import experiments, task_spec

    path, cfg = _sweep(tmp_path)
    exps = experiments(cfg)
    assert [e.label for e in exps] == ["homogeneous|easy|bot/random|s0", "homogeneous|easy|bot/vague|s0"]
    assert not {"length_budget", "truncate_to", "top_p", "decoding", "temperature_in_id"} & set(game_fields(cfg, path))
    assert not {"length_budget", "truncate_to", "top_p"} & set(task_spec(exps[0], cfg, path, {})["task_args"])
    # an explicit temperature is in the ids now: a sweep started before must not resume into them
    path, cfg = _sweep(tmp_path, temperature=0.5)
    assert experiments(cfg)[0].label == "homogeneous|easy|bot/random|s0|T0.5"
    assert game_fields(cfg, path)["temperature_in_id"] is True


@pytest.mark.parametrize("fields, words", [
    ({"decoding": [{"temperature": 0.3}], "temperature": 0.7}, "drop the sweep's own temperature/top_p"),
    ({"decoding": [{"top_p": 0}]}, "decoding[0].top_p"),
    ({"decoding": [{"temp": 0.3}]}, "unknown field"),
    ({"length_budget": [200, 900]}, "length_budget[1]"),
    ({"truncate_to": [100, 100]}, "list each once"),
])
def test_bad_axis_values_are_one_line_with_a_fix(tmp_path, fields, words):
    from impostor_bench.core.errors import ImpostorError

    with pytest.raises(ImpostorError) as exc:
        _sweep(tmp_path, **fields)
    msg = str(exc.value)
    assert words in msg and "fix" in msg and "\n" not in msg, msg


# ------------------------------------------------------------------ played


def test_played_games_enforce_the_budget_cut_for_the_others_and_send_top_p(tmp_path, monkeypatch):
    """bot games under every setting: the budget's re-prompt names it, what the others see is the cut of
    the recorded full text, top_p reaches every call's GenerateConfig and the seat's record, and the
    games carry the options and their identity."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import resolve_sample_attachments

    from impostor_bench.export import tables_from_log
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    [log] = inspect_eval(impostor(n_games=4, seed=1, length_budget=40, truncate_to=25, top_p=0.5, temperature=0.3),
                         model="bot/random", log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    roles = impostor(n_games=1, top_p=0.5, models="bot/random").metadata["generation"]["roles"]
    assert roles["model"]["top_p"] == 0.5  # the settings the task records for a bound model
    retries = 0
    for sample in log.samples:
        sample = resolve_sample_attachments(sample)
        calls = [e for e in sample.events if isinstance(e, ModelEvent)]
        assert calls and all(e.config.top_p == 0.5 for e in calls)
        for e in calls:
            if len(e.input) > 2 and "description" in e.input[-1].text:
                retries += 1
                assert "the limit is 40" in e.input[-1].text and "at most 40 characters" in e.input[-1].text
    assert retries > 0  # the bot's first descriptions run past 40 characters
    t = tables_from_log(log)
    assert set(t.games["experiment_id"]) == {"homogeneous|easy|bot/random|s1|T0.3|P0.5|L40|C25"}
    assert (t.games["length_budget"] == 40).all() and (t.games["truncate_to"] == 25).all()
    assert (t.players["top_p"] == 0.5).all() and (t.players["temperature"] == 0.3).all()
    valid = t.players[t.players["description_valid"]]
    assert len(valid) > 0
    for shown, full in zip(valid["description"], valid["description_full"]):
        assert visible_length(full) <= 40 and shown == truncated(full, 25) and visible_length(shown) <= 25
    assert (valid["description"] != valid["description_full"]).any()  # some were cut


def test_top_p_precedence_option_then_alias_then_not_sent():
    from impostor_bench.core.generation import seat_settings

    paper = seat_settings("openai/gpt-4o")
    assert paper.top_p is None and "top_p" not in paper.source  # the paper's settings as recorded before
    assert seat_settings("openai/gpt-4o", alias_defaults={"top_p": 0.5}).top_p == 0.5
    chosen = seat_settings("openai/gpt-4o", top_p=0.9, alias_defaults={"top_p": 0.5})
    assert chosen.top_p == 0.9 and chosen.source.endswith("top_p=task")
    assert seat_settings("openai/gpt-4o", top_p=0.9, alias_defaults={"top_p": [0.5]}).top_p == 0.9  # unhashable alias


def test_resume_keys_tell_the_axes_cells_apart_and_match_their_logs(tmp_path):
    """A finished experiment is recognised from its log's task args (the sweep's resume and its
    'N/M experiments complete'), one key per cell; the paper's keys are as before."""
    from impostor_bench.sweep.plan import experiment_key, experiments, task_spec

    path, cfg = _sweep(tmp_path, decoding=[{"temperature": 0.3}, {"temperature": 1.0, "top_p": 0.9}],
                       length_budget=[None, 60])
    keys = set()
    for e in experiments(cfg):
        from_log = experiment_key(task_spec(e, cfg, path, {})["task_args"])
        assert from_log == e.label  # the key is the experiment's identity
        keys.add(from_log)
    assert len(keys) == 8
    assert experiment_key({"mode": "homogeneous", "difficulty": "easy", "seed": 0, "models": {"model": "x"}}) == (
        "homogeneous|easy|x|s0")

"""bot/random, bot/embedding and bot/script: deterministic, rule-abiding, and actually useful."""

from __future__ import annotations

import asyncio
import json
import re
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ResponseSchema,
    get_model,
)
from inspect_ai.util import JSONSchema

from impostor_bench.core import prompts
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.parsing import description_violation, parse_vote, vote_json_schema
from impostor_bench.providers.bots.api import BotAPI
from impostor_bench.providers.bots.players import EmbeddingPlayer, random_description, random_vote, seeded_rng
from impostor_bench.providers.bots.vocab import shipped_table
from impostor_bench.providers.prompt_parse import parse_messages
from impostor_bench.core.records import seat_of_label
from impostor_bench.core.rules import guess_matches

ROOT = Path(__file__).resolve().parents[1]
WORD_PAIRS = json.loads((ROOT / "configs" / "word_pairs.json").read_text())
ALL_WORDS = sorted({w for tier in WORD_PAIRS.values() for pair in tier for w in pair})


def desc_msgs(word, player=1, previous=()):
    return [ChatMessageSystem(content=prompts.DESCRIPTION_SYSTEM),
            ChatMessageUser(content=prompts.description_prompt(mode="homogeneous", word=word, player_label=player,
                                                               previous=list(previous)))]


def vote_msgs(word, player, descriptions):
    return [ChatMessageSystem(content=prompts.VOTING_SYSTEM),
            ChatMessageUser(content=prompts.voting_prompt(mode="homogeneous", word=word, player_label=player,
                                                          descriptions=list(descriptions)))]


def generate(model, msgs, **config):
    return asyncio.run(model.generate(msgs, config=GenerateConfig(**config)))


@pytest.fixture(scope="module")
def bots():
    return {name: get_model(f"bot/{name}") for name in ("random", "embedding")}


FOUR = [(2, "It goes with kitten, pet and feline."), (4, "Think of kitty, pet and animal."),
        (1, "Something linked to ship, sailing and harbor."), (3, "It is about feline and kitten. Also pet.")]


# ------------------------------------------------------------ determinism


@pytest.mark.parametrize("name", ["random", "embedding"])
def test_same_prompt_and_seed_same_answer_different_seeds_differ(bots, name):
    m = bots[name]
    msgs = desc_msgs("violin", 3, [(1, "It has strings."), (2, "A thing in an orchestra.")])
    a = [generate(m, msgs, seed=s).completion for s in range(8)]
    b = [generate(m, msgs, seed=s).completion for s in range(8)]
    assert a == b
    assert len(set(a)) >= 5, a
    # no seed: derived from the prompt text, still deterministic
    assert generate(m, msgs).completion == generate(m, msgs).completion


def test_deterministic_across_processes(bots):
    """Same answers in a fresh interpreter with another PYTHONHASHSEED (no str hash() anywhere)."""
    code = (
        "import asyncio, json, sys\n"
        "sys.path.insert(0, %r)\n"
        "from tests.test_providers_bots import desc_msgs, vote_msgs, FOUR, generate\n"
        "from inspect_ai.model import get_model\n"
        "out = []\n"
        "for name in ('random', 'embedding'):\n"
        "    m = get_model('bot/' + name)\n"
        "    out.append(generate(m, desc_msgs('guitar', 2), seed=7).completion)\n"
        "    out.append(generate(m, vote_msgs('cat', 2, FOUR), seed=7).completion)\n"
        "print(json.dumps(out))\n" % str(ROOT)
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    theirs = json.loads(res.stdout.strip().splitlines()[-1])
    ours = []
    for name in ("random", "embedding"):
        ours.append(generate(bots[name], desc_msgs("guitar", 2), seed=7).completion)
        ours.append(generate(bots[name], vote_msgs("cat", 2, FOUR), seed=7).completion)
    assert theirs == ours


# ------------------------------------------------------------ rule abiding


def test_descriptions_never_contain_own_word():
    player = EmbeddingPlayer(shipped_table())
    bad = []
    for word in ALL_WORDS + ["ice cream", "running", "study", "box"]:
        for seed in range(3):
            view = parse_messages(desc_msgs(word, 1 + seed))
            for text in (random_description(view, seeded_rng("random", seed, view.prompt_text)),
                         player.describe(view, seeded_rng("embedding", seed, view.prompt_text))):
                if description_violation(text, word) is not None:
                    bad.append((word, text))
                assert 0 < len(text) <= 750
    assert not bad, bad[:10]


def test_descriptions_are_short_sentences(bots):
    for name, m in bots.items():
        text = generate(m, desc_msgs("pizza", 1), seed=1).completion
        assert 1 <= text.count(".") <= 2 and text[0].isupper(), (name, text)


@pytest.mark.parametrize("name", ["random", "embedding"])
def test_votes_are_valid_json_for_another_player(bots, name):
    for player in range(1, 5):
        for seed in range(10):
            out = generate(bots[name], vote_msgs("cat", player, FOUR), seed=seed)
            ballot = json.loads(out.completion)
            assert set(ballot) == {"suspected_impostor_id", "confidence", "reasoning", "self_declaration",
                                   "word_guess"}
            parsed = parse_vote(out.completion, seat_of_label(player))
            assert parsed.error is None and parsed.vote is not None
            assert parsed.vote != seat_of_label(player)
            if name == "random":
                assert ballot["self_declaration"] is False and ballot["word_guess"] is None


def test_random_votes_cover_all_other_players():
    view = parse_messages(vote_msgs("cat", 3, FOUR))
    picks = {random_vote(view, seeded_rng("random", s, view.prompt_text))["suspected_impostor_id"]
             for s in range(60)}
    assert picks == {1, 2, 4}


def test_response_schema_is_honoured(bots):
    # constrained: enum of the other players' ids (strings) and a reasoning cap
    schema = vote_json_schema(seat_of_label(2), reasoning_max=12)
    rs = ResponseSchema(name="vote", json_schema=JSONSchema.model_validate(schema))
    for seed in range(5):
        ballot = json.loads(generate(bots["embedding"], vote_msgs("cat", 2, FOUR), seed=seed,
                                     response_schema=rs).completion)
        assert ballot["suspected_impostor_id"] in schema["properties"]["suspected_impostor_id"]["enum"]
        assert len(ballot["reasoning"]) <= 12
    # an integer-typed id is emitted as an integer
    int_schema = {"type": "object", "properties": {"suspected_impostor_id": {"type": "integer"}}}
    rs = ResponseSchema(name="vote", json_schema=JSONSchema.model_validate(int_schema))
    ballot = json.loads(generate(bots["random"], vote_msgs("cat", 2, FOUR), seed=1, response_schema=rs).completion)
    assert isinstance(ballot["suspected_impostor_id"], int)


def test_usage_is_explicit_and_model_call_recorded(bots):
    api = bots["random"].api
    out, call = asyncio.run(api.generate(desc_msgs("cat"), [], "none", GenerateConfig(seed=1)))
    assert out.usage.input_tokens > 100 and out.usage.output_tokens > 0
    assert out.usage.total_tokens == out.usage.input_tokens + out.usage.output_tokens
    assert call.request["phase"] == "description" and call.response["text"] == out.completion


def test_non_game_prompt_gets_a_polite_answer(bots):
    out = generate(bots["random"], [ChatMessageUser(content="Hello?")])
    assert "Impostor Game" in out.completion


# ------------------------------------------------------------ embedding bot plays well

HAND_MADE = [
    # (own word, own player, descriptions, expected vote)
    ("cat", 1, [(1, "A small furry pet that purrs."), (2, "It meows and chases mice."),
                (3, "A fluffy kitten grows into this pet."), (4, "A large ship that sails across the ocean.")], 4),
    ("guitar", 2, [(1, "You strum its strings at a concert."), (2, "An acoustic instrument with six strings."),
                   (3, "A yellow fruit that monkeys love to peel."), (4, "Musicians play chords on it.")], 3),
    ("pizza", 3, [(1, "Round dough with tomato sauce and cheese."),
                  (2, "A planet orbiting the sun in our solar system."),
                  (3, "Italian food baked in an oven."), (4, "You order a slice with pepperoni.")], 2),
    ("coffee", 4, [(1, "A hot drink brewed from roasted beans."), (2, "Snow falls and skiers race downhill."),
                   (3, "You sip it from a mug in the morning for caffeine."), (4, "A dark brew with caffeine.")], 2),
]


@pytest.mark.parametrize("word,player,descriptions,expected", HAND_MADE)
def test_embedding_bot_votes_for_the_obvious_outlier(bots, word, player, descriptions, expected):
    for seed in range(3):
        ballot = json.loads(generate(bots["embedding"], vote_msgs(word, player, descriptions), seed=seed).completion)
        assert int(ballot["suspected_impostor_id"]) == expected
        assert ballot["self_declaration"] is False


def test_embedding_bot_self_declares_when_it_is_the_outlier(bots):
    descriptions = [(1, "Salty water with waves and a beach."), (2, "Whales and fish swim in the deep sea."),
                    (3, "Sailors cross it on ships, huge and blue."), (4, "Orchestra music played with a bow.")]
    ballot = json.loads(generate(bots["embedding"], vote_msgs("violin", 4, descriptions), seed=0).completion)
    assert ballot["self_declaration"] is True
    assert int(ballot["suspected_impostor_id"]) in (1, 2, 3)
    assert guess_matches(ballot["word_guess"], "ocean") or guess_matches(ballot["word_guess"], "sea")


def play_embedding_game(player, majority, impostor, rng_seed):
    import random

    rng = random.Random(rng_seed)
    imp = rng.randrange(4)
    words = [impostor if s == imp else majority for s in range(4)]
    order = list(range(4))
    rng.shuffle(order)
    descs = []
    for s in order:
        view = parse_messages(desc_msgs(words[s], s + 1, descs))
        descs.append((s + 1, player.describe(view, seeded_rng("embedding", None, view.prompt_text))))
    ballots = {}
    for s in range(4):
        view = parse_messages(vote_msgs(words[s], s + 1, descs))
        ballots[s] = player.vote(view, seeded_rng("embedding", None, view.prompt_text))
    return imp, ballots


def test_embedding_bots_detect_the_impostor_on_easy_pairs():
    """Four embedding bots on the shipped easy pairs: majority players find the impostor."""
    player = EmbeddingPlayer(shipped_table())
    hits = total = false_declarations = 0
    for k, (majority, impostor) in enumerate(WORD_PAIRS["easy"][:40]):
        imp, ballots = play_embedding_game(player, majority, impostor, k)
        for s, b in ballots.items():
            if s != imp:
                total += 1
                hits += b["suspected_impostor_id"] == imp + 1
                false_declarations += b["self_declaration"]
    assert hits / total >= 0.85, hits / total
    assert false_declarations <= 1


# ------------------------------------------------------------ bot/vague


def test_vague_bot_describes_with_the_neighbours_after_the_nearest():
    """bot/vague's pool is the embedding bot's wider pool minus its 16 nearest words."""
    from impostor_bench.providers.bots.api import VAGUE_SKIP

    table = shipped_table()
    vague, wide = EmbeddingPlayer(table, skip=VAGUE_SKIP), EmbeddingPlayer(table, pool=VAGUE_SKIP + 8)
    near = EmbeddingPlayer(table)
    for word in ("violin", "tiger", "river", "pizza"):
        assert vague.neighbours(word) == wide.neighbours(word)[VAGUE_SKIP:]
        assert len(vague.neighbours(word)) == 8 and not set(vague.neighbours(word)) & set(near.neighbours(word))


def test_vague_bot_descriptions_are_further_from_the_word_and_follow_the_rules():
    table = shipped_table()
    model = get_model("bot/vague")
    sims = {"embedding": [], "vague": []}
    for word in ALL_WORDS[::7]:
        vec = table.word_vector(word)
        for name in sims:
            text = generate(model if name == "vague" else get_model("bot/embedding"), desc_msgs(word, 2), seed=3).completion
            assert description_violation(text, word) is None, (name, word, text)
            tv = table.text_vector(text)
            if vec is not None and tv is not None:
                sims[name].append(float(vec @ tv))
    assert len(sims["vague"]) >= 20
    assert sum(sims["vague"]) / len(sims["vague"]) < sum(sims["embedding"]) / len(sims["embedding"]) - 0.05


def test_vague_bot_model_args():
    assert BotAPI("vague")._embedding.skip == 16 and BotAPI("embedding")._embedding.skip == 0
    assert BotAPI("vague", skip=4)._embedding.skip == 4
    with pytest.raises(ImpostorError, match="bot/vague: unknown model arg"):
        BotAPI("vague", depth=3)


# ------------------------------------------------------------ bot/script

SCRIPT = {
    "description": {
        "*": "A thing you might see at home.",
        "word:tiger": "A big striped {player} cat.",
        "2": ["I love my {word}!", "Something round and orange."],
    },
    "vote": {
        "*": {"suspected_impostor_id": "{next}", "confidence": 0.5, "reasoning": "scripted",
              "self_declaration": False, "word_guess": None},
        "3": ["this is not json", "still not json"],
        "word:lion": {"$error": "simulated provider failure"},
        "word:rocket": {"suspected_impostor_id": "{prev}", "confidence": 0.9, "reasoning": "I am it",
                        "self_declaration": True, "word_guess": "cat"},
    },
}


def script_model(tmp_path, script=SCRIPT, via="arg"):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    if via == "env":
        os.environ["IMPOSTOR_SCRIPT"] = str(path)
        try:
            return get_model("bot/script", memoize=False)
        finally:
            del os.environ["IMPOSTOR_SCRIPT"]
    return get_model("bot/script", script=str(path), memoize=False)


@pytest.mark.parametrize("via", ["arg", "env"])
def test_script_lookup_order_attempts_and_substitution(tmp_path, via):
    m = script_model(tmp_path, via=via)
    assert generate(m, desc_msgs("cat", 1)).completion == "A thing you might see at home."
    assert generate(m, desc_msgs("tiger", 2)).completion == "A big striped 2 cat."  # word: beats player
    assert generate(m, desc_msgs("cat", 2)).completion == "I love my cat!"
    retry = prompts.DESCRIPTION_RETRY.format(violation='the description contains your word ("cat")', max_chars=750)
    msgs = desc_msgs("cat", 2) + [ChatMessageAssistant(content="I love my cat!"), ChatMessageUser(content=retry)]
    assert generate(m, msgs).completion == "Something round and orange."
    third = msgs + [ChatMessageAssistant(content="x"), ChatMessageUser(content=retry)]
    assert generate(m, third).completion == "Something round and orange."  # last answer repeats
    ballot = json.loads(generate(m, vote_msgs("cat", 4, FOUR)).completion)
    assert ballot["suspected_impostor_id"] == "1" and ballot["reasoning"] == "scripted"
    assert generate(m, vote_msgs("cat", 3, FOUR)).completion == "this is not json"
    declared = json.loads(generate(m, vote_msgs("rocket", 1, FOUR)).completion)
    assert declared["self_declaration"] is True and declared["suspected_impostor_id"] == "4"


def test_script_error_and_fallback(tmp_path):
    m = script_model(tmp_path, {"vote": {"word:lion": {"$error": "simulated provider failure"}}})
    with pytest.raises(Exception, match="simulated provider failure"):
        generate(m, vote_msgs("lion", 1, FOUR), max_retries=0)
    # no entry for the description phase: behaves like bot/random
    text = generate(m, desc_msgs("lion", 1), seed=3).completion
    random_text = generate(get_model("bot/random"), desc_msgs("lion", 1), seed=3).completion
    assert text and description_violation(text, "lion") is None
    assert isinstance(text, str) and isinstance(random_text, str)


def test_script_inline_json_and_dict():
    m = get_model("bot/script", script=json.dumps({"description": {"*": "inline"}}), memoize=False)
    assert generate(m, desc_msgs("cat")).completion == "inline"
    api = BotAPI("script", script={"description": {"*": "dict"}})
    assert api.answer(desc_msgs("cat"), GenerateConfig())[0] == "dict"


@pytest.mark.parametrize("script,message", [
    ({"describe": {}}, "unknown phase key 'describe'"),
    ({"vote": {"player1": "x"}}, "keys are '*', a player number"),
    ({"vote": {"*": 3}}, "an answer is a string or a JSON object"),
    ({"vote": []}, "must map player keys to answers"),
])
def test_script_validation_errors(tmp_path, script, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(script))
    with pytest.raises(ImpostorError, match=re.escape(message)) as e:
        BotAPI("script", script=str(path))
    assert str(path) in str(e.value)


def test_script_missing_and_unknown_bot(tmp_path, monkeypatch):
    monkeypatch.delenv("IMPOSTOR_SCRIPT", raising=False)
    with pytest.raises(ImpostorError, match="-M script="):
        BotAPI("script")
    with pytest.raises(ImpostorError, match="not found"):
        BotAPI("script", script=str(tmp_path / "nope.json"))
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ImpostorError, match="not valid JSON"):
        BotAPI("script", script=str(tmp_path / "broken.json"))
    with pytest.raises(ImpostorError, match="bot/random"):
        BotAPI("smart")

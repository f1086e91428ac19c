"""human/web without a browser: the session, the page server's token, and whole games through
Inspect answered over HTTP (a helper thread plays the person); the browser test is
tests/test_human_browser.py."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from impostor_bench.core import prompts
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.parsing import parse_vote
from impostor_bench.providers.human.session import HumanSession, completion_text
from impostor_bench.providers.prompt_parse import parse_messages
from impostor_bench.tasks.impostor import impostor


def _description_call(word="cat", previous=(), player=2):
    user = prompts.description_prompt(mode="cross_play", word=word, player_label=player, previous=list(previous))
    return [("system", prompts.DESCRIPTION_SYSTEM), ("user", user)]


def _vote_call(word="cat", player=2):
    user = prompts.voting_prompt(mode="cross_play", word=word, player_label=player,
                                 descriptions=[(1, "a pet"), (2, "purrs"), (3, "barks"), (4, "meows")])
    return [("system", prompts.VOTING_SYSTEM), ("user", user)]


def test_ballot_fields_become_the_json_the_engine_parses():
    view = parse_messages(_vote_call(player=2))
    text = completion_text(view, {"suspect": "3", "confidence": "70", "reasoning": "barks",
                                  "self_declaration": False, "word_guess": ""})
    ballot = parse_vote(text, own_seat=1)
    assert (ballot.vote, ballot.confidence, ballot.reasoning, ballot.self_declared, ballot.error) == (2, 0.7, "barks", False, None)
    # self-declaration without a suspect: the engine's legal self-vote, with the guess kept
    declared = parse_vote(completion_text(view, {"self_declaration": True, "word_guess": "dog"}), own_seat=1)
    assert (declared.ballot_class, declared.self_declared, declared.word_guess) == ("self_vote", True, "dog")
    # nothing chosen: the page sends it anyway and the engine finds no player (re-prompted)
    empty = parse_vote(completion_text(view, {}), own_seat=1)
    assert empty.vote is None and empty.retry and empty.ballot_class == "unparseable"
    # a description goes as typed, the word included: the engine's leak rule judges it
    assert completion_text(parse_messages(_description_call()), {"description": "my cat"}) == "my cat"


def test_a_repeated_call_is_the_same_move_and_a_timeout_closes_it_and_its_reprompt():
    now = [0.0]
    s = HumanSession("ada", timeout=10, clock=lambda: now[0])
    call = _description_call()
    view = parse_messages(call)
    move = s.ask(call, view)
    assert s.ask(call, view) is move and move.waiters == 2  # Inspect re-sending after an attempt timeout
    assert s.state()["move"]["id"] == move.id and s.state()["move"]["word"] == "cat"
    assert s.poll(move) == (None, False)
    now[0] = 10.0
    assert s.poll(move) == ("", True)
    assert s.state()["history"][-1]["status"] == "timed out"
    retry = call + [("assistant", ""), ("user", prompts.DESCRIPTION_RETRY.format(violation="x", max_chars=750))]
    again = s.ask(retry, parse_messages(retry))
    assert again.id != move.id and s.expired(again)  # the engine's re-prompt is not asked again
    assert s.submit(move.id, {"description": "late"}) is not None  # a closed move takes no answer


def test_page_needs_the_token_and_serves_no_external_resources():
    model = get_model("human/web", participant="tok", memoize=False)
    api = model.api
    base = api.url.split("/?")[0]
    try:
        assert httpx.get(base + "/").status_code == 403
        assert httpx.get(base + "/?t=wrong").status_code == 403
        assert httpx.get(base + "/state?t=wrong").status_code == 403
        assert httpx.post(base + "/answer?t=wrong", json={"id": "x", "fields": {}}).status_code == 403
        page = httpx.get(api.url)
        assert page.status_code == 200 and "default-src 'none'" in page.headers["content-security-policy"]
        for asset in ("/", "/app.js", "/app.css"):
            body = httpx.get(base + asset + ("?t=" + api.session.token if asset == "/" else "")).text
            assert "http://" not in body and "https://" not in body  # offline: nothing from elsewhere
        assert httpx.get(base + "/state?t=" + api.session.token).json()["move"] is None
    finally:
        api.server.close()


def test_bad_model_args_are_one_line_errors():
    with pytest.raises(ImpostorError, match="participant"):
        get_model("human/web", participant="a b", memoize=False)
    with pytest.raises(ImpostorError, match="timeout"):
        get_model("human/web", timeout="soon", memoize=False)
    with pytest.raises(ImpostorError, match="use human/web"):
        get_model("human/phone", memoize=False)


def _answer_over_http(api, answers, stop):
    """Play the person: answer each move the page shows with the next of ``answers``."""
    base, token = api.url.split("/?")[0], api.session.token
    seen: list[dict] = []
    while not stop.is_set():
        state = httpx.get(f"{base}/state?t={token}").json()
        move = state["move"]
        if move is None or (seen and seen[-1]["id"] == move["id"]):
            time.sleep(0.05)
            continue
        seen.append({**move, "waiting_moves": state["waiting_moves"]})
        fields = answers[move["phase"]](move)
        assert httpx.post(f"{base}/answer?t={token}", json={"id": move["id"], "fields": fields}).status_code == 200
    return seen


def _play(tmp_path, participant, answers=None, timeout=0, n_games=1, role="impostor"):
    model = get_model("human/web", participant=participant, timeout=timeout, memoize=False)
    seen: list[dict] = []
    stop = threading.Event()
    helper = None
    if answers is not None:
        helper = threading.Thread(target=lambda: seen.extend(_answer_over_http(model.api, answers, stop)), daemon=True)
        helper.start()
    try:
        [log] = inspect_eval(impostor(mode="cross_play", n_games=n_games, seed=5), model="bot/embedding",
                             model_roles={role: model}, log_dir=str(tmp_path), display="none")
    finally:
        stop.set()
        if helper:
            helper.join(5)
        model.api.server.close()
    assert log.status == "success", log.error
    return log, seen


def test_a_person_plays_the_impostor_through_inspect(tmp_path):
    answers = {
        "description": lambda m: {"description": f"It is {m['word']} really"} if m["attempt"] == 1
        else {"description": "Something you might keep at home."},
        "vote": lambda m: {"suspect": str(m["candidates"][0]), "confidence": "60", "reasoning": "a hunch"},
    }
    log, seen = _play(tmp_path, "ada", answers)
    md = log.samples[0].scores["impostor_winner"].metadata
    [me] = [p for p in md["players"] if p["role"] == "impostor"]
    assert md["game"]["impostor_model"] == "human/ada" and me["model"] == "human/ada"
    # the first description said the word: the engine's leak rule re-prompted, with its reason on the page
    assert [m["phase"] for m in seen] == ["description", "description", "vote"]
    assert seen[1]["retry_reason"].startswith("the description contains your word")
    assert me["description"] == "Something you might keep at home." and me["description_attempts"] == 2
    assert me["vote"] == seen[2]["candidates"][0] - 1 and me["confidence"] == 0.6 and me["reasoning"] == "a hunch"
    assert log.eval.model_roles["impostor"].model == "human/ada"
    # the calls and their timings are in the transcript
    calls = [e for e in log.samples[0].events if e.event == "model" and e.model == "human/ada"]
    assert len(calls) == 3 and all(e.call.response["seconds"] >= 0 for e in calls)


def test_a_move_not_made_in_time_is_recorded_as_missing(tmp_path):
    log, _ = _play(tmp_path, "slow", answers=None, timeout=0.3)
    md = log.samples[0].scores["impostor_winner"].metadata
    [me] = [p for p in md["players"] if p["model"] == "human/slow"]
    assert me["description_valid"] is False and me["description"] == prompts.INVALID_DESCRIPTION_PLACEHOLDER
    assert me["ballot_class"] == "missing" and me["vote"] is None
    assert me["description_attempts"] == 2 and me["ballot_attempts"] == 2  # re-prompts answered at once, empty
    assert md["game"]["winner"] in ("impostor", "majority")


def test_as_the_majority_a_person_plays_three_seats_one_move_at_a_time(tmp_path):
    answers = {"description": lambda m: {"description": "Found in many homes."},
               "vote": lambda m: {"suspect": str(m["candidates"][0])}}
    log, seen = _play(tmp_path, "bea", answers, role="majority")
    md = log.samples[0].scores["impostor_winner"].metadata
    mine = [p for p in md["players"] if p["model"] == "human/bea"]
    assert len(mine) == 3 and {p["role"] for p in mine} == {"majority"}
    assert [m["phase"] for m in seen] == ["description"] * 3 + ["vote"] * 3
    assert len({m["player"] for m in seen[3:]}) == 3
    # the three ballots are asked at once (simultaneous votes): the page says how many wait
    assert max(m["waiting_moves"] for m in seen[3:]) >= 1
    assert all(p["vote"] is not None and p["confidence"] is None for p in mine)


def test_hostile_requests_get_an_answer_and_print_no_traceback(capfd, monkeypatch):
    """Issue 42: a deeply nested JSON body is a 400 (it raised RecursionError), a client that
    hangs up mid-answer or stalls prints nothing in the player's terminal (149 BrokenPipeError
    tracebacks), and a stalled connection is dropped after the idle timeout; the page still
    serves the player."""
    import socket

    from impostor_bench.providers.human import server as page_server

    monkeypatch.setattr(page_server._Handler, "timeout", 1.0)
    model = get_model("human/web", participant="tok", memoize=False)
    api = model.api
    host, port = api.server.httpd.server_address[:2]
    answer = f"http://127.0.0.1:{port}/answer?t={api.session.token}"
    try:
        r = httpx.post(answer, content=b'{"id": "x", "fields": ' + b"[" * 60_000 + b"}",
                       headers={"content-type": "application/json"})
        assert r.status_code == 400
        stalled = socket.create_connection(("127.0.0.1", port))
        stalled.sendall(b"POST /answer?t=" + api.session.token.encode() + b" HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
        for _ in range(30):  # ask for the page and hang up before reading it
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.sendall(f"GET /?t={api.session.token} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            s.close()
        stalled.settimeout(10)
        assert stalled.recv(100) == b""  # dropped after the (1 s) idle timeout, not held for ever
        stalled.close()
        assert httpx.get(api.url).status_code == 200
        time.sleep(0.3)
    finally:
        api.server.close()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err and "ConnectionReset" not in err, err[-2000:]


@pytest.mark.parametrize("fields, name", [
    ({"suspect": "3", "self_declaration": "false"}, "self_declaration"),  # bool("false") is True
    ({"suspect": "3", "self_declaration": 1}, "self_declaration"),
    ({"suspect": "3", "word_guess": ["dog"]}, "word_guess"),
    ({"suspect": {"id": 3}}, "suspect"),
])
def test_a_field_of_the_wrong_type_is_refused_in_one_line(fields, name):
    """Only a JSON boolean declares; a string "false" is refused (4xx over HTTP), never read as true."""
    from impostor_bench.providers.human.session import FieldError

    view = parse_messages(_vote_call(player=2))
    with pytest.raises(FieldError) as info:
        completion_text(view, fields)
    assert f"field '{name}'" in str(info.value) and "fix:" in str(info.value) and "\n" not in str(info.value)
    s = HumanSession("ada")
    move = s.ask(_vote_call(player=2), view)
    with pytest.raises(FieldError):
        s.submit(move.id, fields)
    assert move.answer is None  # nothing recorded: the page may send a corrected answer
    assert s.submit(move.id, {"suspect": "3", "self_declaration": False}) is None


def test_concurrent_answers_to_one_move_one_accepted_the_rest_told():
    """20 POSTs of one move at once: exactly one is the answer, 19 are told it was not taken."""
    import threading

    model = get_model("human/web", participant="race", memoize=False)
    api = model.api
    base, token = api.url.split("/?")[0], api.session.token
    call = _description_call()
    move = api.session.ask(call, parse_messages(call))
    start = threading.Barrier(20)
    replies: list[tuple[int, dict, str]] = []

    def post(i: int) -> None:
        start.wait()
        r = httpx.post(f"{base}/answer?t={token}", json={"id": move.id, "fields": {"description": f"text {i}"}})
        replies.append((r.status_code, r.json(), f"text {i}"))

    try:
        threads = [threading.Thread(target=post, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # a wrong type over HTTP is a 4xx with the one-line reason
        vote = _vote_call(player=2)
        ballot_move = api.session.ask(vote, parse_messages(vote))
        bad = httpx.post(f"{base}/answer?t={token}",
                         json={"id": ballot_move.id, "fields": {"suspect": "3", "self_declaration": "false"}})
        assert bad.status_code == 422 and "self_declaration" in bad.json()["error"]
        assert ballot_move.answer is None
    finally:
        api.server.close()
    accepted = [text for status, body, text in replies if status == 200 and body == {"ok": True}]
    refused = [body for status, body, _ in replies if status == 409]
    assert len(accepted) == 1 and len(refused) == 19
    assert all("already answered" in body["error"] for body in refused)
    assert move.answer == accepted[0]

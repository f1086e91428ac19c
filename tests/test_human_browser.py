"""A whole game played through the human/web page in headless Chromium, keyboard only.

`impostor play` runs in a subprocess (the real command) against bot/embedding; the test
reads the URL it prints, plays the impostor's description (first one that says the word,
so the engine's re-prompt shows), reloads the page mid-game, votes, reads the outcome,
then checks the Inspect log.  Screenshots of each step go to $IMPOSTOR_SCREENSHOTS
(docs/img/ holds the committed ones:
``IMPOSTOR_SCREENSHOTS=docs/img pytest tests/test_human_browser.py``).

Needs Debian's chromium (scripts/install.sh installs it; Playwright's own browser
download does not work offline) and the ``playwright`` package (the ``test`` extra).
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import sys
import json
import threading
from pathlib import Path
from typing import Optional

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("IMPOSTOR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
URL = re.compile(r"open (http://127\.0\.0\.1:\d+/\?t=\S+)")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: run `bash scripts/install.sh --tests` (it is in the test extra)")
    if not shutil.which(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run `bash scripts/install.sh --tests` (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


def _start_play(tmp_path: Path, model: str = "bot/embedding", extra: tuple[str, ...] = (),
                env: Optional[dict[str, str]] = None) -> tuple[subprocess.Popen, str, list[str]]:
    cmd = [sys.executable, "-m", "impostor_bench.cli", "play", "--model", model, "--as", "impostor",
           "--participant", "tester", "--seed", "5", "--log-dir", str(tmp_path / "logs"), "--linger", "30", *extra]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "IMPOSTOR_MLFLOW": "0", **(env or {})})
    lines: queue.Queue[str] = queue.Queue()
    err: list[str] = []

    def pump() -> None:
        for line in proc.stderr:
            err.append(line)
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=120)
        except queue.Empty:
            proc.kill()
            pytest.fail("impostor play printed no URL in 120 s:\n" + "".join(err))
        m = URL.search(line)
        if m:
            return proc, m.group(1), err


def test_a_person_plays_a_whole_game_in_chromium(tmp_path, browser):
    shots = Path(os.environ.get("IMPOSTOR_SCREENSHOTS") or tmp_path / "img")
    shots.mkdir(parents=True, exist_ok=True)
    proc, url, err = _start_play(tmp_path)
    try:
        # 640 CSS px at scale 2: what a 1280 px wide screen shows at 200% zoom
        page = browser.new_page(viewport={"width": 640, "height": 900}, device_scale_factor=2)
        external: list[str] = []
        page.on("request", lambda r: None if r.url.startswith(url.split("/?")[0]) else external.append(r.url))
        page.goto(url)

        # 1. the description: word, rules, who spoke before; the text box has the focus
        title = page.locator("#move-title")
        title.filter(has_text="Your description").wait_for(timeout=60_000)
        word = page.locator("#word").inner_text()
        assert word and page.locator("#rules").inner_text().count("DESCRIPTION PHASE RULES") == 1
        spoken = page.locator("#descriptions li").all_inner_texts()
        assert spoken and (spoken == ["No one has spoken yet: you go first."] or all(s.startswith("Player ") for s in spoken))
        assert page.evaluate("document.activeElement.id") == "description"
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        page.screenshot(path=str(shots / "human-1-description.png"), full_page=True)

        # 2. a description that says the word: the engine re-prompts, the page shows why
        page.keyboard.type(f"My word is {word}.")
        page.keyboard.press("Enter")
        page.locator("#retry").filter(has_text="contains your word").wait_for(timeout=30_000)
        # closing the page mid-game loses nothing: the same URL shows the same move
        page.reload()
        page.locator("#retry").filter(has_text="contains your word").wait_for(timeout=30_000)
        assert page.locator("#history li").first.inner_text().startswith("Description as Player")
        page.screenshot(path=str(shots / "human-2-reprompt.png"), full_page=True)
        page.locator("#description").focus()
        mine = "Something small you might keep at home."
        page.keyboard.type(mine)
        page.keyboard.press("Enter")

        # 3. the vote: all four descriptions in speaking order, the three others to choose from
        title.filter(has_text="Your vote").wait_for(timeout=60_000)
        texts = page.locator("#descriptions li").all_inner_texts()
        assert len(texts) == 4 and any(t.endswith(mine) for t in texts)
        candidates = page.locator("#candidates input[type=radio]")
        assert candidates.count() == 3
        labels = page.locator("#candidates label").all_inner_texts()
        assert page.evaluate("document.activeElement.name") == "suspect"
        page.screenshot(path=str(shots / "human-3-vote.png"), full_page=True)
        page.keyboard.press("Space")  # choose the focused (first) player
        page.keyboard.press("Tab")  # the self-declaration switch
        page.keyboard.press("Space")
        page.keyboard.press("Tab")  # the word guess
        page.keyboard.type("cat")
        page.keyboard.press("Enter")

        # 4. the outcome, shown once the game is scored
        page.locator("#outcome").wait_for(state="visible", timeout=60_000)
        outcome = page.locator("#outcome-text").inner_text()
        assert outcome.startswith("Winner: the ") and "(you), impostor" in outcome
        page.screenshot(path=str(shots / "human-4-outcome.png"), full_page=True)
        assert external == []  # nothing loaded from anywhere else
        assert proc.wait(timeout=60) == 0, "".join(err)
    finally:
        if proc.poll() is None:
            proc.kill()

    # what lands in the Inspect log: the person as human/tester, the description and ballot
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    md = log.samples[0].scores["impostor_winner"].metadata
    [me] = [p for p in md["players"] if p["role"] == "impostor"]
    assert me["model"] == "human/tester" and md["game"]["impostor_model"] == "human/tester"
    assert me["description"] == mine and me["description_attempts"] == 2 and me["description_valid"]
    assert me["description_error"] is None
    # every answer is the model completion of a call in the transcript, the refused one included
    said = [e.output.completion for e in log.samples[0].events if e.event == "model" and e.model == "human/tester"]
    assert said[:2] == [f"My word is {word}.", mine] and len(said) == 3
    chosen = int(labels[0].split()[-1])
    assert me["self_declared"] is True and me["word_guess"] == "cat"
    assert me["vote"] == chosen - 1 and me["ballot_class"] == "valid"
    assert '"self_declaration": true' in me["vote_raw"]


# The majority seats (bot/script) each vote the next player; the person, voting its own next
# player, makes every round a four-way tie: nobody is eliminated and all three rounds are played.
TIE_SCRIPT = {"description": {"*": ["It is part of everyday life.", "People use it every single day."]},
              "vote": {"*": {"suspected_impostor_id": "{next}", "confidence": 0.5, "reasoning": "scripted",
                             "self_declaration": False, "word_guess": None}},
              "note": {"*": "nothing certain yet"}}


def test_a_person_plays_a_three_round_game_with_notes_in_chromium(tmp_path, browser):
    proc, url, err = _start_play(tmp_path, "bot/script", ("--rounds", "3", "--private-notes"),
                                 {"IMPOSTOR_SCRIPT": json.dumps(TIE_SCRIPT)})
    mine = [f"A thing you could notice on an ordinary walk, take {n}." for n in (1, 2, 3)]
    try:
        page = browser.new_page(viewport={"width": 640, "height": 900})
        page.goto(url)
        title = page.locator("#move-title")
        for r in (1, 2, 3):
            title.filter(has_text=f"Your description (round {r})").wait_for(timeout=60_000)
            context = page.locator("#round-context").inner_text()
            assert f"this is round {r} of at most 3" in context
            assert ("EARLIER ROUNDS" in context) == (r > 1) and ("YOUR PRIVATE NOTES" in context) == (r > 1)
            if r > 1:
                assert f"After round {r - 1}: my note {r - 1}" in context
            page.locator("#description").focus()
            page.keyboard.type(mine[r - 1])
            page.keyboard.press("Enter")
            title.filter(has_text=f"Your vote (round {r})").wait_for(timeout=60_000)
            me = int(title.inner_text().split("Player ")[-1])
            labels = page.locator("#candidates label").all_inner_texts()
            assert len(labels) == 3  # a tie every round: all four remain
            page.locator(f"#suspect-{me % 4 + 1}").check()
            page.locator("#vote button[type=submit]").click()
            if r < 3:
                title.filter(has_text=f"Your private note (round {r})").wait_for(timeout=60_000)
                assert "only you will see it" in page.locator("#description-label").inner_text()
                page.locator("#description").fill(f"my note {r}")
                page.locator("#describe-send").click()
        page.locator("#outcome").wait_for(state="visible", timeout=60_000)
        outcome = page.locator("#outcome-text").inner_text()
        assert "(rounds_exhausted)" in outcome and "Round 3:" in outcome
        assert proc.wait(timeout=60) == 0, "".join(err)
    finally:
        if proc.poll() is None:
            proc.kill()
    [info] = list_eval_logs(str(tmp_path / "logs"))
    md = read_eval_log(info).samples[0].scores["impostor_winner"].metadata
    assert (md["game"]["rounds_played"], md["game"]["win_condition"]) == (3, "rounds_exhausted")
    moves = [m for m in md["moves"] if m["model"] == "human/tester"]
    assert [m["description"] for m in moves] == mine
    assert [m["note"] for m in moves] == ["my note 1", "my note 2", None]

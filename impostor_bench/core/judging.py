"""The judge pass's coding scheme as pure functions: the prompt a judge model sees
for one finished game, the parse of its reply into one label set per seat, and the rule coder
the deterministic bot judge (``bot/judge``) applies.

The scheme itself (definitions, the bot's cue lists, its version) is one file,
``configs/judge_scheme.json``; the labels become the players-table columns of
:data:`LABEL_COLUMNS` (docs/data-contract.md) and feed Table 12's Strategy Align. and
Alignment Gap (``analysis/stats/judge_labels.py``).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from impostor_bench.core.prompts import INVALID_DESCRIPTION_PLACEHOLDER

#: players-table columns the judge pass adds (strategy label, trust statement, coordination
#: intent, and the judge model that produced them)
LABEL_COLUMNS = ("judge_strategy", "judge_trust", "judge_coord_intent", "judge_model")
RECORD_HEADER = "GAME RECORD (JSON):"
#: the judge scorer's name (scorers/judge.py); a second pass in one log is ``strategy_judge1`` ...
JUDGE_SCORER = "strategy_judge"
SYSTEM = "You annotate finished games of a word game for a research study. You answer with valid JSON only."


class JudgeReplyError(ValueError):
    """A judge reply that does not carry one valid label set per seat (the message says what is wrong)."""


def scheme_path() -> Path:
    """``<repo>/configs/judge_scheme.json``, located relative to this file."""
    return Path(__file__).resolve().parents[1] / "configs" / "judge_scheme.json"


@lru_cache(maxsize=4)
def load_scheme(path: Optional[str] = None) -> dict[str, Any]:
    """The coding scheme (``configs/judge_scheme.json`` unless ``path``)."""
    return json.loads(Path(path or scheme_path()).read_text(encoding="utf-8"))


def strategies(scheme: Optional[Mapping[str, Any]] = None) -> tuple[str, ...]:
    """The strategy labels, in the scheme's order."""
    return tuple((scheme or load_scheme())["strategy"])


def judge_record(game: Mapping[str, Any], players: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the judge reads of a game: mode, words, and per seat (shown as Player seat+1) its
    role, team, speaking position, description and ballot reasoning. Nothing else."""
    rows = sorted(players, key=lambda p: (p.get("speaking_position") if p.get("speaking_position") is not None
                                          else 99, p["seat"]))
    return {
        "mode": game.get("mode"), "majority_word": game.get("majority_word"),
        "impostor_word": game.get("impostor_word"),
        "players": [{"player": int(p["seat"]) + 1, "role": p.get("role"), "team": p.get("team"),
                     "speaking_position": p.get("speaking_position"),
                     "description": p.get("description") if p.get("description_valid", True) else None,
                     "reasoning": p.get("reasoning")} for p in rows],
    }


def judge_prompt(record: Mapping[str, Any], scheme: Optional[Mapping[str, Any]] = None) -> str:
    """The user prompt of one judge call: the scheme's definitions, the record, the answer format."""
    s = scheme or load_scheme()
    lines = [f"Apply this coding scheme (version {s['version']}) to every player of the game below.", "",
             "strategy (one label) - what the player's description does:"]
    lines += [f"- {k}: {v}" for k, v in s["strategy"].items()]
    lines += ["", f"trust (true/false): {s['trust']}", f"coord_intent (true/false): {s['coord_intent']}", "",
              RECORD_HEADER, json.dumps(record, ensure_ascii=False), "",
              "Answer with JSON only, one entry per player, in the order of the record: "
              + "{" + ", ".join(f'"{player_key(int(p["player"]))}": {{"strategy": "<label>", "trust": <bool>, '
                                 f'"coord_intent": <bool>}}' for p in record["players"][:2]) + ", ...}"]
    return "\n".join(lines)


def player_key(player: int) -> str:
    """The key of one player's labels in a judge reply (``"Player 3"``: the name the game uses)."""
    return f"Player {player}"


def reply_json_schema(record: Mapping[str, Any], scheme: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The reply as a JSON schema a grammar can enforce exactly: an object with one required
    property per player of the record (in its order, no other keys), each an object of the
    strategy enum and two booleans. No arrays: llama.cpp's schema grammar does not hold an
    array's ``maxItems`` reliably (a 135M judge kept adding players until ``max_tokens``),
    while fixed required keys leave a model no way to answer outside the format."""
    entry = {"type": "object", "additionalProperties": False, "required": ["strategy", "trust", "coord_intent"],
             "properties": {"strategy": {"type": "string", "enum": list(strategies(scheme))},
                            "trust": {"type": "boolean"}, "coord_intent": {"type": "boolean"}}}
    keys = [player_key(int(p["player"])) for p in record["players"]]
    return {"type": "object", "additionalProperties": False, "required": keys, "properties": {k: entry for k in keys}}


def record_of_prompt(prompt: str) -> dict[str, Any]:
    """The record a judge prompt carries (the bot judge reads it back)."""
    i = prompt.find(RECORD_HEADER)
    if i < 0:
        raise JudgeReplyError("not a judge prompt: no game record")
    return json.loads(prompt[i + len(RECORD_HEADER):].strip().splitlines()[0])


def _as_bool(v: Any, where: str) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    raise JudgeReplyError(f"{where}: expected true or false, got {v!r}")


def parse_reply(text: str, seats: Sequence[int], scheme: Optional[Mapping[str, Any]] = None) -> dict[int, dict]:
    """``{seat: {"strategy", "trust", "coord_intent"}}`` from a judge's reply (the asked
    ``{"Player N": {...}}`` object, or a ``{"players": [{"player": N, ...}]}`` list); JudgeReplyError
    when it is not JSON with exactly one valid entry per seat."""
    labels = strategies(scheme)
    m = re.search(r"\{.*\}", text or "", re.S)
    if not m:
        raise JudgeReplyError("no JSON object in the reply")
    try:
        obj = json.loads(m.group(0))
    except json.JSONDecodeError as e:
        raise JudgeReplyError(f"reply is not valid JSON ({e.msg})") from None
    entries = obj.get("players") if isinstance(obj, dict) else None
    if isinstance(obj, dict) and entries is None:  # the asked format: {"Player N": {labels}, ...}
        keyed = [(re.fullmatch(r"\s*(?:player\s*)?(\d+)\s*", str(k), re.I), v) for k, v in obj.items()]
        if keyed and all(m and isinstance(v, dict) for m, v in keyed):
            entries = [{**v, "player": int(m.group(1))} for m, v in keyed if m]
    if not isinstance(entries, list):
        raise JudgeReplyError("reply has no 'Player N' entries")
    out: dict[int, dict] = {}
    for entry in entries:
        if (not isinstance(entry, dict) or not isinstance(entry.get("player"), (int, str))
                or not str(entry["player"]).isdigit()):
            raise JudgeReplyError(f"entry without a player number: {entry!r}")
        seat = int(entry["player"]) - 1
        strat = str(entry.get("strategy", "")).strip().lower()
        if strat not in labels:
            raise JudgeReplyError(f"player {seat + 1}: strategy {strat!r} is not one of {', '.join(labels)}")
        out[seat] = {"strategy": strat, "trust": _as_bool(entry.get("trust"), f"player {seat + 1} trust"),
                     "coord_intent": _as_bool(entry.get("coord_intent"), f"player {seat + 1} coord_intent")}
    if sorted(out) != sorted(seats):
        raise JudgeReplyError(f"labels for players {sorted(s + 1 for s in out)}, expected {sorted(s + 1 for s in seats)}")
    return out


_WORD = re.compile(r"[a-z]+")


def _content(text: str, own: Sequence[str]) -> set[str]:
    own_l = {w.lower() for w in own if w}
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4 and not any(w.startswith(o[:4]) for o in own_l)}


def _has(text: str, cues: Sequence[str]) -> bool:
    t = " " + re.sub(r"\s+", " ", (text or "").lower()) + " "
    return any(c in t for c in cues)


def rule_labels(record: Mapping[str, Any], scheme: Optional[Mapping[str, Any]] = None) -> dict[int, dict]:
    """The bot judge's labels: the scheme's cues in a fixed order for strategy (none; mirror when
    it shares ``mirror_min_shared`` content words with an earlier description; vague on a vague
    cue or at most ``vague_max_words`` words; else literal); trust when a sentence of the
    reasoning has a trust cue and names a player; coord_intent on a coordination cue."""
    s = scheme or load_scheme()
    cues = s["cues"]
    words = [record.get("majority_word") or "", record.get("impostor_word") or ""]
    out: dict[int, dict] = {}
    seen: list[set[str]] = []
    for p in record["players"]:  # in speaking order
        desc = p.get("description") or ""
        reason = p.get("reasoning") or ""
        mine = _content(desc, words)
        if not desc.strip() or desc.strip() == INVALID_DESCRIPTION_PLACEHOLDER:
            strat = "none"
        elif any(len(mine & prev) >= int(cues["mirror_min_shared"]) for prev in seen):
            strat = "mirror"
        elif _has(desc, cues["vague"]) or len(_WORD.findall(desc.lower())) <= int(cues["vague_max_words"]):
            strat = "vague"
        else:
            strat = "literal"
        if desc.strip():
            seen.append(mine)
        trust = any(_has(sent, cues["trust"]) and re.search(r"player\s*\d", sent.lower())
                    for sent in re.split(r"(?<=[.!?;])\s+", reason))
        out[int(p["player"]) - 1] = {"strategy": strat, "trust": bool(trust),
                                     "coord_intent": _has(desc, cues["coord"]) or _has(reason, cues["coord"])}
    return out


def bot_reply(prompt: str) -> str:
    """What ``bot/judge`` answers to a judge prompt: :func:`rule_labels` as the requested JSON."""
    labels = rule_labels(record_of_prompt(prompt))
    return json.dumps({player_key(seat + 1): lab for seat, lab in sorted(labels.items())})


def labels_of(scores: Optional[Mapping[str, Any]]) -> Optional[dict[str, Any]]:
    """The judge labels a sample's scores hold (the last judge score with labels):
    ``{"judge": MODEL, "labels": {"<seat>": {strategy, trust, coord_intent}}}`` or None."""
    found = None
    for name, s in (scores or {}).items():
        md = getattr(s, "metadata", None) or {}
        if name.startswith(JUDGE_SCORER) and md.get("labels"):
            found = {"judge": md.get("judge"), "labels": md["labels"]}
    return found

"""``bot/script``: a player whose answers come from a JSON script (for tests).

Format (documented in docs/models.md)::

    {
      "description": {
        "*": "A furry animal that purrs.",
        "word:tiger": "A big striped cat.",
        "2": ["I love my {word}!", "Something round and orange."]
      },
      "vote": {
        "*": {"suspected_impostor_id": "{next}", "confidence": 0.5,
              "reasoning": "scripted", "self_declaration": false, "word_guess": null},
        "3": ["this is not json", "still not json"],
        "word:lion": {"$error": "simulated provider failure"}
      }
    }

* Phase keys: ``description`` and ``vote`` (alias ``voting``); ``note`` for the private
  notes of a multi-round game (-T private_notes).
* Inside a phase the entry used is the first present of ``word:<own word>``
  (case-insensitive), ``<player number>``, ``*``.  With none, the player falls
  back to ``bot/random`` behaviour.
* An entry is one answer or a list of answers per attempt (attempt 1 = first
  element; re-prompts take the next; the last one repeats).
* An answer is a string (returned verbatim) or a JSON object (returned as
  compact JSON).  ``{word}``, ``{player}``, ``{next}`` and ``{prev}`` (the next /
  previous player number, cyclically, never oneself) are substituted in strings
  and in object values; no other braces are touched.
* ``{"$error": "message"}`` makes the call raise :class:`ScriptedError` (a
  provider failure that Inspect does not retry).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Optional, Union

from impostor_bench.core.errors import ImpostorError
from impostor_bench.providers.prompt_parse import GameView

ENV_VAR = "IMPOSTOR_SCRIPT"
_KEY = re.compile(r"^(\*|[1-9]\d*|word:.+)$")
_PHASES = {"description": "description", "vote": "vote", "voting": "vote", "note": "note"}


class ScriptedError(RuntimeError):
    """Raised by a ``{"$error": ...}`` answer."""


def _check(script: Any, where: str) -> dict[str, dict[str, Any]]:
    if not isinstance(script, dict):
        raise ImpostorError(f"{where}: a bot/script file must hold a JSON object with keys "
                            f"'description' and/or 'vote'; got {type(script).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for phase, entries in script.items():
        if phase not in _PHASES:
            raise ImpostorError(f"{where}: unknown phase key {phase!r}; use 'description', 'vote' or 'note'")
        if not isinstance(entries, dict):
            raise ImpostorError(f"{where}: {phase!r} must map player keys to answers "
                                f"(e.g. {{\"*\": \"...\"}}); got {type(entries).__name__}")
        for key, value in entries.items():
            if not _KEY.match(str(key)):
                raise ImpostorError(f"{where}: {phase}.{key}: keys are '*', a player number "
                                    f"like '2', or 'word:<word>'")
            answers = value if isinstance(value, list) else [value]
            if not answers:
                raise ImpostorError(f"{where}: {phase}.{key}: an empty list has no answer")
            for a in answers:
                if not isinstance(a, (str, dict)):
                    raise ImpostorError(f"{where}: {phase}.{key}: an answer is a string or a JSON "
                                        f"object; got {type(a).__name__}")
        phase_entries = out.setdefault(_PHASES[phase], {})
        phase_entries.update({(k.lower() if k.startswith("word:") else k): v for k, v in entries.items()})
    return out


def load_script(source: Union[str, dict, Path, None]) -> dict[str, dict[str, Any]]:
    """A script from a dict, inline JSON text, or a file path (default: $IMPOSTOR_SCRIPT)."""
    if source is None:
        source = os.environ.get(ENV_VAR)
        if not source:
            raise ImpostorError(
                f"bot/script needs a script: pass -M script=path/to/script.json "
                f"(or inline JSON), or set {ENV_VAR}; see docs/models.md for the format"
            )
    if isinstance(source, dict):
        return _check(source, "bot/script (model arg script)")
    text = str(source)
    if text.lstrip().startswith("{"):
        try:
            return _check(json.loads(text), "bot/script (inline JSON)")
        except json.JSONDecodeError as e:
            raise ImpostorError(f"bot/script (inline JSON): not valid JSON ({e}); fix the text") from e
    path = Path(text)
    if not path.is_file():
        raise ImpostorError(f"{path}: bot/script file not found; pass an existing JSON file "
                            f"with -M script=... or {ENV_VAR}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ImpostorError(f"{path}: not valid JSON (line {e.lineno}: {e.msg}); fix the file") from e
    return _check(data, str(path))


def _substitute(value: Any, subs: dict[str, str]) -> Any:
    if isinstance(value, str):
        for k, v in subs.items():
            value = value.replace(k, v)
        return value
    if isinstance(value, dict):
        return {k: _substitute(v, subs) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, subs) for v in value]
    return value


def scripted_answer(script: dict[str, dict[str, Any]], view: GameView) -> Optional[str]:
    """The scripted text for this call, or None when the script has no entry for it."""
    entries = script.get(view.phase, {})
    for key in (f"word:{view.word.lower()}", str(view.player), "*"):
        if key in entries:
            value = entries[key]
            break
    else:
        return None
    answers = value if isinstance(value, list) else [value]
    answer = answers[min(view.attempt, len(answers)) - 1]
    nxt = view.player % 4 + 1
    prv = (view.player - 2) % 4 + 1
    subs = {"{word}": view.word, "{player}": str(view.player), "{next}": str(nxt), "{prev}": str(prv)}
    answer = _substitute(answer, subs)
    if isinstance(answer, dict):
        if "$error" in answer:
            raise ScriptedError(str(answer["$error"]))
        return json.dumps(answer, ensure_ascii=False)
    return answer

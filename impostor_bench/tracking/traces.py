"""Every game of an eval as an MLflow trace, under the eval's run (docs/tracking.md "Traces").

Built from the Inspect log when the run is finished (hook or ``impostor sync``), not on the
hot path: one trace per game, a root span ``game <index>`` (inputs: mode, difficulty, words,
impostor, speaking order and teams by player; outputs: winner, condition, ballots as
"Player 2": "Player 4"), a ``description round`` and a ``vote round``
span (a multi-round game: a ``round <r>`` span each, with those and ``private notes`` under it),
and one LLM span per model call (the prompt messages, the reply, tokens, latency,
model, player, attempt). Seats read "Player 1"-"Player 4" throughout. The game's outcome is in the trace tags (``impostor.winner``,
``impostor.win_condition``, ...), so the UI can filter games by them.

A call is attributed to its seat and phase by its seed: every call of seat ``s`` in phase
``p`` uses ``core.schedule.call_seed(game_seed, p, s)`` (as solvers/game.py), recorded in the
model event's config. Text is scrubbed of the run's secrets (``redact.redact_text``).
Under the hooks each game's spans are built when its sample ends (``collect``: the
events are in memory then; in a sweep the end-of-task hook gets no samples), else from
the log. The traces are written before the run is closed, all games of the run in one
bulk transaction (``tracestore.write_traces``: ~0.45 ms of CPU a game, against ~15 ms through
MLflow's span writer); ``IMPOSTOR_MLFLOW_TRACES=0`` turns tracing off (runs, metrics and
tables stay). A run already tagged ``impostor.traces_logged`` is not traced twice
(re-syncs), and a trace already in the store is never written again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from typing import Any, Callable, Iterable, Optional

from impostor_bench.core.model_text import MAX_ANSWER_CHARS
from impostor_bench.core.records import player_label
from impostor_bench.core.schedule import call_seed
from impostor_bench.tracking.redact import redactor
from impostor_bench.tracking.spanjson import json_encoder

ENV_TRACES = "IMPOSTOR_MLFLOW_TRACES"
TAG_DONE = "impostor.traces_logged"
PHASES = (("describe", "description round"), ("vote", "vote round"))
NOTE_PHASE = ("note", "private notes")  # longer games with -T private_notes (solvers/game.py write_notes)


def traces_enabled() -> bool:
    """False when ``IMPOSTOR_MLFLOW_TRACES`` is 0/false/no/off (any other value, e.g. the
    ``inline`` of earlier versions, means on)."""
    return os.environ.get(ENV_TRACES, "1").strip().lower() not in {"0", "false", "no", "off"}


def trace_run(client: Any, run_id: str, log: Any, secrets: set[str]) -> None:
    """Trace the games of a finished run (called by ``logrun.finish_run``)."""
    log_game_traces(client, run_id, log, secrets)


def _ns(ts: Any) -> Optional[int]:
    return None if ts is None else int(ts.timestamp() * 1e9)


ATTACHMENT = "attachment://"


def _resolve(text: str, attachments: Optional[dict]) -> str:
    """Inspect stores long texts once per sample, as ``attachment://<hash>`` references."""
    if attachments and text.startswith(ATTACHMENT):
        return attachments.get(text[len(ATTACHMENT):], text)
    return text


def _text(message: Any, attachments: Optional[dict]) -> str:
    content = message.content
    if isinstance(content, str):
        return _resolve(content, attachments)
    return "\n".join(_resolve(c.text, attachments) for c in content if getattr(c, "type", None) == "text")


#: Text scrubbed past the cut, so a secret or URL credential the cut would halve is masked
#: whole (a URL's userinfo or query longer than this is not one a provider takes).
_CUT_MARGIN = 4096


def cut_marker(n: int) -> str:
    """What replaces the end of a text longer than ``MAX_ANSWER_CHARS`` in a span."""
    return f" [... cut: {n} characters, the first {MAX_ANSWER_CHARS} kept]"


class _Texts:
    """A game's texts as its LLM spans store them: resolved, cut to ``MAX_ANSWER_CHARS`` (a
    provider that ignores ``max_tokens`` answers megabytes, and Inspect's own providers record
    them whole in the model event), scrubbed and JSON-encoded, each message once (a game's
    calls repeat their phase's system prompt)."""

    def __init__(self, secrets: set[str], attachments: Optional[dict]) -> None:
        self._redact: Callable[[str], str] = redactor(secrets)
        self._margin = _CUT_MARGIN + max((len(s) for s in secrets), default=0)
        self.attachments = attachments
        self.encoded: dict[tuple[str, str], str] = {}

    def redact(self, text: str) -> str:
        """``text`` scrubbed and cut to ``MAX_ANSWER_CHARS`` (scrubbed before the cut, past it
        by a margin, so no secret is kept in part)."""
        if len(text) <= MAX_ANSWER_CHARS:
            return self._redact(text)
        return self._redact(text[:MAX_ANSWER_CHARS + self._margin])[:MAX_ANSWER_CHARS] + cut_marker(len(text))

    def messages(self, messages: Iterable[Any]) -> str:
        """``_dump({"messages": [{"role": ..., "content": <scrubbed text>}, ...]})``."""
        parts = []
        for m in messages:
            key = (str(m.role), _text(m, self.attachments) or "")
            enc = self.encoded.get(key)
            if enc is None:
                enc = self.encoded[key] = f'{{"role": {_str(key[0])}, "content": {_str(self.redact(key[1]))}}}'
            parts.append(enc)
        return f'{{"messages": [{", ".join(parts)}]}}'

    def reply(self, text: str) -> str:
        """``_dump({"reply": <scrubbed text>})``."""
        return f'{{"reply": {_str(self.redact(_resolve(text, self.attachments)))}}}'


def game_calls(sample: Any) -> list[dict]:
    """The model calls of one game in time order, each with its phase, seat, round and attempt."""
    gseed = (sample.metadata or {}).get("game_seed")
    rounds = int((sample.metadata or {}).get("rounds") or 1)
    players = int((sample.metadata or {}).get("players") or 4)  # -T players; four in the paper's game
    phases = [p for p, _ in PHASES] + ([NOTE_PHASE[0]] if rounds > 1 else [])
    seat_of: dict[Any, tuple[Optional[str], Optional[int], Optional[int]]] = {} if gseed is None else {
        call_seed(gseed, phase, seat, r): (phase, seat, r) for phase in phases for seat in range(players)
        for r in range(1, rounds + 1)}
    calls: list[dict[str, Any]] = []
    attempts: dict[tuple[Optional[str], Optional[int], Optional[int]], int] = {}
    for e in sample.events or []:
        if getattr(e, "event", None) != "model":
            continue
        phase, seat, round_no = seat_of.get(getattr(e.config, "seed", None), (None, None, None))
        attempts[(phase, seat, round_no)] = attempts.get((phase, seat, round_no), 0) + 1
        usage = e.output.usage if e.output is not None else None
        start = _ns(e.timestamp)
        end = _ns(e.completed) or (start + int((e.working_time or 0) * 1e9) if start is not None else None)
        calls.append({"event": e, "phase": phase, "seat": seat, "round": round_no,
                      "attempt": attempts[(phase, seat, round_no)], "start": start,
                      "end": end, "input_tokens": getattr(usage, "input_tokens", None),
                      "output_tokens": getattr(usage, "output_tokens", None),
                      "latency_s": e.working_time if e.working_time is not None else
                      ((end - start) / 1e9 if start is not None and end is not None else None)})
    return calls


def _outcome_tags(record: Optional[dict], sample: Any) -> dict[str, str]:
    md = sample.metadata or {}
    tags = {"impostor.sample_id": str(sample.id), "impostor.mode": str(md.get("mode")),
            "impostor.difficulty": str(md.get("difficulty"))}
    if record is None:
        return tags | {"impostor.winner": "error"}
    g = record["game"]
    return tags | {"impostor.game_id": g["game_id"], "impostor.experiment_id": g["experiment_id"],
                   "impostor.winner": g["winner"], "impostor.win_condition": g["win_condition"],
                   "impostor.impostor_player": _player(g["impostor_seat"]),
                   "impostor.impostor_model": g["impostor_model"], "impostor.tie_k": str(g.get("tie_k", 0))}


def _id(*parts: object, n: int = 16) -> str:
    """A stable hex id (re-logging a game gives the same trace and span ids)."""
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:n]


_encode = json_encoder(default=str)  # = json.dumps(v, default=str)
_str = json.encoder.encode_basestring_ascii  # = json.dumps(a str)


def _usage_json(usage: dict[str, int]) -> str:
    """``_dump(usage | {"total_tokens": <sum>})`` of a span's token counts."""
    if len(usage) == 2 and type(usage["input_tokens"]) is int and type(usage["output_tokens"]) is int:
        i, o = usage["input_tokens"], usage["output_tokens"]
        return f'{{"input_tokens": {i}, "output_tokens": {o}, "total_tokens": {i + o}}}'
    return _dump(usage | {"total_tokens": sum(usage.values())})


def _dump(v: Any) -> str:
    """``json.dumps(v, default=str)``; a str, int or finite float without the encoder's set-up
    (an LLM span has ~12 attributes, most of them scalars)."""
    t = type(v)
    if t is str:
        return _str(v)
    if t is int:
        return int.__repr__(v)
    if t is float and math.isfinite(v):
        return float.__repr__(v)
    return _encode(v)


def _span(trace_id: str, span_id: str, parent: Optional[str], name: str, span_type: str, start: int, end: int,
          inputs: Any = None, outputs: Any = None, attributes: Optional[dict] = None, ok: bool = True) -> dict:
    """One span in MLflow's stored form (attribute values JSON-encoded, as MLflow writes them)."""
    return _stored_span(trace_id, span_id, parent, name, span_type, start, end,
                        None if inputs is None else _dump(inputs), None if outputs is None else _dump(outputs),
                        {k: _dump(v) for k, v in (attributes or {}).items()}, ok)


def _stored_span(trace_id: str, span_id: str, parent: Optional[str], name: str, span_type: str, start: int, end: int,
                 inputs: Optional[str], outputs: Optional[str], attributes: dict[str, str], ok: bool) -> dict:
    """``_span`` with its inputs, outputs and attribute values already JSON-encoded."""
    attrs = {"mlflow.traceRequestId": _str(trace_id), "mlflow.spanType": _str(span_type)}
    if inputs is not None:
        attrs["mlflow.spanInputs"] = inputs
    if outputs is not None:
        attrs["mlflow.spanOutputs"] = outputs
    attrs.update(attributes)
    return {"trace_id": trace_id, "span_id": span_id, "parent_span_id": parent, "name": name,
            "start_time_unix_nano": int(start), "end_time_unix_nano": int(end), "events": [], "links": [],
            "status": {"code": "STATUS_CODE_OK" if ok else "STATUS_CODE_ERROR", "message": ""}, "attributes": attrs}


def _player(seat: Optional[int]) -> Optional[str]:
    """A seat as people read it ("Player 1" for seat 0); None stays None (no counted vote)."""
    return None if seat is None else f"Player {player_label(seat)}"


def _game_inputs(md: dict) -> dict:
    """The game's set-up as the trace shows it, every seat as its player ("Player 1"-"Player 4",
    the numbering of the prompts, ``inspect view`` and the report; 0-based seats stay in the
    exported tables' seat columns only, docs/data-contract.md)."""
    order = md.get("speaking_order")
    teams = md.get("team_assignment")
    return {"game_index": md.get("game_index"), "mode": md.get("mode"), "difficulty": md.get("difficulty"),
            "majority_word": md.get("majority_word"), "impostor_word": md.get("impostor_word"),
            "impostor": _player(md.get("impostor_seat")),
            "speaking_order": None if order is None else [_player(s) for s in order],
            "teams": None if not teams else {_player(s): t for s, t in enumerate(teams)}}


def game_spans(run_id: str, sample: Any, secrets: set[str]) -> list[dict]:
    """The spans of one game's trace (empty when the game made no model call): the root
    ``game <index>``, the two rounds, one LLM span per call; the outcome as trace tags."""
    calls = [c for c in game_calls(sample) if c["start"] is not None and c["end"] is not None]
    if not calls:
        return []
    score = (sample.scores or {}).get("impostor_winner")
    record = score.metadata if score is not None and isinstance(score.metadata, dict) and "game" in score.metadata else None
    md = sample.metadata or {}
    tid = "tr-" + _id(run_id, sample.id, n=32)
    root = _id(tid, "root")
    inputs = _game_inputs(md)
    outputs = None
    if record is not None:
        g = record["game"]
        outputs = {"winner": g["winner"], "win_condition": g["win_condition"],
                   "ballots": {f"Player {player_label(p['seat'])}": _player(p.get("vote")) for p in record["players"]}}
        if int(g.get("max_rounds") or 1) > 1:  # a multi-round game: its rounds and eliminations
            outputs |= {"rounds_played": g["rounds_played"],
                        "eliminated": [_player(int(s)) for s in g["elimination_order"].split(",") if s]}
    tags = {f"mlflow.traceTag.{k}": v for k, v in _outcome_tags(record, sample).items()}
    texts = _Texts(secrets, sample.attachments)
    spans = [_span(tid, root, None, f"game {md.get('game_index', sample.id)}", "AGENT", min(c["start"] for c in calls),
                   max(c["end"] for c in calls), inputs, outputs, tags, ok=record is not None)]
    rounds = int(md.get("rounds") or 1)
    for round_no in range(1, rounds + 1):
        parent = root
        if rounds > 1:  # a multi-round game: one span per round, its phases under it
            in_round = [c for c in calls if c["round"] == round_no]
            if not in_round:
                continue
            parent = _id(tid, "round", round_no)
            spans.append(_span(tid, parent, root, f"round {round_no}", "CHAIN", min(c["start"] for c in in_round),
                               max(c["end"] for c in in_round)))
        spans += _phase_spans(tid, parent, calls if rounds == 1 else [c for c in calls if c["round"] == round_no],
                              round_no, rounds, texts)
    return spans


VERBS = {"describe": "describes", "vote": "votes", "note": "writes a note"}


def _phase_spans(tid: str, parent: str, calls: list[dict], round_no: int, rounds: int, texts: _Texts) -> list[dict]:
    """The phase spans of one round (the paper's game: its only round) and their LLM spans."""
    spans = []
    for phase, title in PHASES + ((NOTE_PHASE,) if rounds > 1 else ()):
        mine = [c for c in calls if c["phase"] == phase]
        if not mine:
            continue
        rid = _id(tid, phase) if rounds == 1 else _id(tid, phase, round_no)
        spans.append(_span(tid, rid, parent, title, "CHAIN", mine[0]["start"], max(c["end"] for c in mine)))
        phase_json = _str(phase)
        for c in mine:
            e = c["event"]
            label = player_label(c["seat"])
            name = f"Player {label} {VERBS[phase]}" + (f" (attempt {c['attempt']})" if c["attempt"] > 1 else "")
            usage = {k: v for k, v in (("input_tokens", c["input_tokens"]), ("output_tokens", c["output_tokens"]))
                     if v is not None}
            attrs = {"player": _dump(label), "model": _str(str(e.model)), "phase": phase_json,
                     "attempt": _dump(c["attempt"]), "latency_s": _dump(c["latency_s"])}
            for k, v in usage.items():
                attrs[k] = _dump(v)
            if rounds > 1:
                attrs["round"] = _dump(round_no)
            if usage:
                attrs["mlflow.chat.tokenUsage"] = _usage_json(usage)
            sid = _id(tid, phase, c["seat"], c["attempt"]) if rounds == 1 else _id(tid, phase, c["seat"], c["attempt"],
                                                                                   round_no)
            spans.append(_stored_span(tid, sid, rid, name, "LLM", c["start"], c["end"], texts.messages(e.input),
                                      texts.reply(e.output.completion or "" if e.output is not None else ""),
                                      attrs, not e.error))
    return spans


def _resolved(sample: Any) -> Any:
    """``sample`` with what ``game_spans`` reads resolvable from ``sample.attachments``: as it
    is, unless Inspect pooled the model inputs (``events_data``), then through Inspect."""
    if getattr(sample, "events_data", None):
        from inspect_ai.log import resolve_sample_attachments

        return resolve_sample_attachments(sample, "full")
    return sample


_collected: dict[str, dict[tuple, list[dict]]] = {}  # run id -> (sample id, epoch) -> spans


def collect(run_id: str, sample: Any, secrets: set[str]) -> None:
    """Build a finished game's spans from the sample the end-of-sample hook holds, events in
    memory, so the end of the run need not read them back from the log (in a sweep the
    end-of-task hook gets no samples: reading the events back cost more than the tracing)."""
    if traces_enabled():
        _collected.setdefault(run_id, {})[(sample.id, sample.epoch)] = game_spans(run_id, _resolved(sample), secrets)


def discard(run_id: str) -> None:
    """Forget what ``collect`` kept for a run that will not be finished."""
    _collected.pop(run_id, None)


def log_game_traces(client: Any, run_id: str, log: Any, secrets: set[str]) -> int:
    """A trace per game of ``log`` under ``run_id`` (skipped when off or already logged): the
    number of traces written. All games go to the store at once, linked to the run
    (``tracestore``); then the run is tagged ``impostor.traces_logged``."""
    collected = _collected.pop(run_id, {})
    if not traces_enabled():
        return 0
    from impostor_bench.tracking.tracestore import write_traces

    run = client.get_run(run_id)
    if run.data.tags.get(TAG_DONE) == "1":
        return 0
    samples = log.samples or []
    if samples and all((s.id, s.epoch) in collected for s in samples):
        written = write_traces(client.tracking_uri, run.info.experiment_id,
                               [g for g in (collected[(s.id, s.epoch)] for s in samples) if g], run_id)
        client.set_tag(run_id, TAG_DONE, "1")
        return len(written)
    loc = str(log.location or "").removeprefix("file://")
    if loc and os.path.exists(loc) and not any(getattr(e, "event", None) == "model" for s in samples
                                               for e in (s.events or [])):
        # the log the end-of-task hook holds may lack the events (``inspect eval`` on the
        # command line hands it no samples and the hook reads them without events): read them
        from inspect_ai.log import read_eval_log

        samples = read_eval_log(loc).samples or []
    games = [g for g in (game_spans(run_id, _resolved(s), secrets) for s in samples) if g]
    written = write_traces(client.tracking_uri, run.info.experiment_id, games, run_id)
    client.set_tag(run_id, TAG_DONE, "1")
    return len(written)

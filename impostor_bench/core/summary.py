"""A finished game in words, for the places people read it (``inspect view``'s samples list
and sample header, the Scores tab): who the impostor was, the words, each player's
description and ballot, and the rule that decided the game (A.1; docs/rules.md).

Pure text from the contract rows; the scorer puts :func:`answer_line` in the Score's
``answer`` and :func:`explanation` in its ``explanation``.
"""

from __future__ import annotations

from collections import Counter
from typing import Optional, Sequence

from impostor_bench.core.group import conviction_threshold
from impostor_bench.core.records import GameRow, MoveRow, PlayerRow, impostor_seat_list, player_label

#: The samples list clamps a cell to about 250 characters (three lines).
ANSWER_MAX_CHARS = 240
REASON_MAX_CHARS = 160


def _p(seat: int) -> str:
    return f"Player {player_label(seat)}"


def _q(text: Optional[str]) -> str:
    return f"“{text}”" if text else "no guess"


def _votes(players: Sequence[PlayerRow]) -> Counter:
    return Counter(p.vote for p in players if p.vote is not None)


def _impostors(game: GameRow) -> str:
    """The impostor's player ("Player 2"), or every impostor's ("Players 2 and 5") with -T impostors."""
    seats = impostor_seat_list(game.impostor_seat, game.impostor_seats)
    return _p(seats[0]) if len(seats) == 1 else "Players " + " and ".join(str(player_label(s)) for s in seats)


def _declared_guess(game: GameRow, players: Sequence[PlayerRow]) -> Optional[str]:
    """The guess of the (first) impostor who self-declared."""
    return next((p.word_guess for p in players if p.role == "impostor" and p.self_declared),
                players[game.impostor_seat].word_guess)


def rule_text(game: GameRow, players: Sequence[PlayerRow]) -> str:
    """Why the game ended as it did: the first rule of A.1 (docs/rules.md order) that applied."""
    imp = _impostors(game)
    on_imp = game.votes_on_impostor
    cond = game.win_condition
    if cond == "majority_self_declared":
        who = ", ".join(_p(p.seat) for p in players if p.self_declared and p.role == "majority")
        return f"{who} (majority) self-declared as the impostor, which hands the win to the majority"
    if cond == "impostor_guess_correct":
        guess = _declared_guess(game, players)
        return f"the impostor self-declared and guessed {_q(guess)}, the majority word {_q(game.majority_word)}"
    if cond == "impostor_guess_wrong":
        guess = _declared_guess(game, players)
        return f"the impostor self-declared but guessed {_q(guess)}, not the majority word {_q(game.majority_word)}"
    if cond == "conviction":
        need = conviction_threshold(game.n_players, game.n_impostors)
        rule = f"{need} or more convict" if game.n_impostors == 1 else f"{need} or more on one impostor convict"
        return f"{on_imp} majority players voted for {imp} ({rule})"
    if cond == "strict_plurality":
        total = _votes(players)
        return (f"{imp} got {total[game.impostor_seat]} of {game.n_valid_votes} valid votes, more than all others "
                f"combined (strict plurality convicts)")
    if cond == "tie":
        counts = _votes(players)
        top = max(counts.values())
        tied = ", ".join(_p(s) for s in sorted(s for s, c in counts.items() if c == top))
        text = (f"top-of-ballot tie between {tied} ({top} votes each); a tie is an impostor win under the "
                f"default rule")
        if game.tie_rule != "default":
            text += f"; under the {game.tie_rule} rule this game was played with, the {game.winner_live} wins"
        return text
    if cond == "eliminated":
        return f"the remaining players voted {imp}, the impostor, out in round {game.rounds_played}"
    if cond == "two_left":
        return f"only two players remained after round {game.rounds_played} with the impostor {imp} among them"
    if cond == "rounds_exhausted":
        return f"the impostor {imp} was still in the game when the {game.max_rounds} rounds ran out"
    if cond == "no_conviction":
        return f"no conviction: {imp} got {on_imp} majority vote{'s' if on_imp != 1 else ''} (2 are needed to convict)"
    return cond


def ballot_text(p: "PlayerRow | MoveRow") -> str:
    """One seat's ballot (a first-round player row or a move of any round): whom it voted for, a
    self-declaration and its guess, or why it is invalid."""
    if p.vote is not None:
        text = f"votes {_p(p.vote)}"
    elif p.ballot_class == "self_vote":
        text = "votes for itself"
    else:
        text = f"invalid ballot ({p.ballot_class.replace('_', ' ')})"
    if p.self_declared:
        text += f"; self-declares, guesses {_q(p.word_guess)}"
    return text


def _rounds_text(game: GameRow) -> str:
    out = ", ".join(f"P{player_label(int(s))}" for s in game.elimination_order.split(",") if s) or "nobody"
    return f"{game.rounds_played} of {game.max_rounds} rounds, out: {out} · "


def answer_line(game: GameRow, players: Sequence[PlayerRow], moves: Optional[Sequence[MoveRow]] = None) -> str:
    """One line for the samples list: winner and rule, the impostor (seat, model), the votes (the
    sample's input beside it names the words and the impostor's seat); a multi-round game
    (``moves``) names its rounds and eliminations and shows its last round's votes."""
    if moves:
        last = [m for m in moves if m.round == game.rounds_played]
        votes = " ".join(f"P{player_label(m.seat)}→{f'P{player_label(m.vote)}' if m.vote is not None else '–'}"
                         for m in last)
        line = (f"{game.winner_live.capitalize()} wins ({game.win_condition.replace('_', ' ')}) · "
                f"{_rounds_text(game)}impostor {_p(game.impostor_seat)}, {game.impostor_model} · last votes {votes}")
        return line if len(line) <= ANSWER_MAX_CHARS else line[: ANSWER_MAX_CHARS - 1] + "…"
    imp = _impostors(game)
    cond = game.win_condition.replace("_", " ")
    if game.tie_rule != "default" and game.win_condition == "tie":
        cond += f", {game.tie_rule} rule"
    votes = " ".join(f"P{player_label(p.seat)}→{f'P{player_label(p.vote)}' if p.vote is not None else '–'}"
                     for p in players)  # P1 is Player 1, the numbering of the prompts (not a 0-based seat)
    declared = "".join(f"; {_p(p.seat)} self-declared, guessed {_q(p.word_guess)}" for p in players if p.self_declared)
    line = f"{game.winner_live.capitalize()} wins ({cond}) · impostor {imp}, {game.impostor_model} · votes {votes}{declared}"
    return line if len(line) <= ANSWER_MAX_CHARS else line[: ANSWER_MAX_CHARS - 1] + "…"


def _cell(text: Optional[str], limit: Optional[int] = None) -> str:
    """Text safe inside a Markdown table cell (one line, pipes escaped), optionally shortened."""
    text = " ".join((text or "").split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|") or "–"


def _move_ballot(m: MoveRow) -> str:
    return ballot_text(m) + ("; **eliminated**" if m.eliminated else "")


def rounds_explanation(game: GameRow, players: Sequence[PlayerRow], moves: Sequence[MoveRow]) -> str:
    """Markdown of a multi-round game: the verdict, then one table per round in speaking order."""
    imp = players[game.impostor_seat]
    out = [f"**The {game.winner_live} wins**: {rule_text(game, players)}.\n\n"
           f"Impostor: **{_p(game.impostor_seat)}** ({imp.model}) with {_q(game.impostor_word)}; "
           f"majority word {_q(game.majority_word)} (pair {game.pair_id}, {game.mode}, {game.difficulty}); "
           f"{game.rounds_played} of {game.max_rounds} rounds played."]
    cols = ["Player", "Role, model", "Description", "Ballot", "Reason"] + (["Note"] if game.private_notes else [])
    for r in range(1, game.rounds_played + 1):
        rows = [f"**Round {r}**", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for m in sorted((m for m in moves if m.round == r), key=lambda m: m.speaking_position):
            desc = _cell(m.description) + ("" if m.description_valid else f" (invalid: {_cell(m.description_error)})")
            cells = [f"**{player_label(m.seat)}** (speaks {m.speaking_position + 1})", f"{m.role}, {_cell(m.model)}",
                     desc, _cell(_move_ballot(m)), _cell(m.reasoning, REASON_MAX_CHARS)]
            rows.append("| " + " | ".join(cells + ([_cell(m.note, REASON_MAX_CHARS)] if game.private_notes else []))
                        + " |")
        out.append("\n".join(rows))
    return "\n\n".join(out)


def explanation(game: GameRow, players: Sequence[PlayerRow], moves: Optional[Sequence[MoveRow]] = None) -> str:
    """Markdown: the verdict and its rule, then one table row per player in speaking order
    (a multi-round game, with ``moves``: one table per round)."""
    if moves:
        return rounds_explanation(game, players, moves)
    imp = players[game.impostor_seat]
    head = (f"**The {game.winner_live} wins**: {rule_text(game, players)}.\n\n"
            f"{'Impostor' if game.n_impostors == 1 else 'Impostors'}: **{_impostors(game)}** ({imp.model}) with {_q(game.impostor_word)}; "
            f"majority word {_q(game.majority_word)} (pair {game.pair_id}, {game.mode}, {game.difficulty}).\n\n")
    team = any(p.team for p in players)
    cols = ["Player", "Role, model", "Word", "Description", "Ballot", "Reason"]
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for p in sorted(players, key=lambda r: r.speaking_position):
        desc = _cell(p.description)
        if not p.description_valid:
            desc += f" (invalid: {_cell(p.description_error)})"
        role = p.role + (f", team {p.team}" if team and p.team else "")
        cells = [f"**{player_label(p.seat)}** (speaks {p.speaking_position + 1})", f"{role}, {_cell(p.model)}",
                 _cell(p.word), desc, _cell(ballot_text(p)), _cell(p.reasoning, REASON_MAX_CHARS)]
        rows.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(rows)

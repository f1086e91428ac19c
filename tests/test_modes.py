"""Each mode's facts in one table (``impostor_bench.core.modes.ModeSpec``), as the game uses them."""

from __future__ import annotations

from collections import Counter

import pytest

from impostor_bench.core.experiment import GAME_ROLES, MODE_ROLES, assignment_label, experiment_id, side_models
from impostor_bench.core.modes import MODE_SPECS, mode_spec
from impostor_bench.core.prompts import TEAM_PROMPT_MODES, description_prompt, voting_prompt
from impostor_bench.core.records import MODES, N_SEATS, TEAM_MODES


def test_every_mode_has_one_spec():
    assert tuple(MODE_SPECS) == MODES
    assert tuple(m for m, s in MODE_SPECS.items() if s.teams) == TEAM_MODES
    assert GAME_ROLES == ("impostor", "majority", "team_a", "team_b")
    assert MODE_ROLES == {"homogeneous": (), "cross_play": ("impostor", "majority"),
                          **{m: ("team_a", "team_b") for m in TEAM_MODES}}
    with pytest.raises(ValueError, match="unknown mode 'solo'"):
        mode_spec("solo")


@pytest.mark.parametrize("mode, impostor_seat, teams, want", [
    ("homogeneous", 2, None, ["model"] * 4),
    ("cross_play", 2, None, ["majority", "majority", "impostor", "majority"]),
    ("team_aware", 1, ("A", "B", "B", "A"), ["team_a", "team_b", "team_b", "team_a"]),
])
def test_seat_roles(mode, impostor_seat, teams, want):
    roles = mode_spec(mode).seat_roles(impostor_seat, teams)
    assert roles == want and len(roles) == N_SEATS


def test_team_modes_need_teams():
    with pytest.raises(ValueError, match="team assignment"):
        mode_spec("team_blind").seat_roles(0, None)


def test_a_team_game_seats_two_and_two():
    for mode in TEAM_MODES:
        assert Counter(mode_spec(mode).seat_roles(0, ("A", "B", "A", "B"))) == {"team_a": 2, "team_b": 2}


def test_experiment_identity_unchanged():
    """The identity strings seed every per-experiment draw: they must not move."""
    assert experiment_id("homogeneous", "easy", {"all": "m"}, 0) == "homogeneous|easy|m|s0"
    assert assignment_label("cross_play", {"impostor": "a", "majority": "b"}) == "imp=a,maj=b"
    assert assignment_label("team_semi_aware", {"team_a": "x", "team_b": "y"}) == "A=x,B=y"
    assert side_models("cross_play", {"impostor": "a", "majority": "b"}) == {"impostor": ["a"], "majority": ["b"]}
    assert side_models("team_blind", {"team_a": "y", "team_b": "x"}) == {"impostor": ["x", "y"], "majority": ["x", "y"]}


def test_what_teammates_see():
    """team_aware names the teammate, team_semi_aware only says there is a team, the rest say nothing."""
    assert TEAM_PROMPT_MODES == ("team_aware", "team_semi_aware")
    prompts = {m: description_prompt(mode=m, word="cat", player_label=1, previous=[], teammate_label=3)
               for m in MODES}
    assert "Player 3" in prompts["team_aware"] and "Player 3" not in prompts["team_semi_aware"]
    assert prompts["team_blind"] == prompts["homogeneous"] == prompts["cross_play"] != prompts["team_semi_aware"]
    with pytest.raises(ValueError, match="teammate"):
        voting_prompt(mode="team_aware", word="cat", player_label=1, descriptions=[])
    assert mode_spec("cross_play").display_role == "majority" and mode_spec("team_blind").display_role == "team_a"
    assert mode_spec("homogeneous").display_role is None


def test_analysis_reads_modes_teams_labels_and_colours_from_the_core():
    """No analysis module writes the team-mode list out again (issue 41: seven hand-written copies);
    the figures' and paper tables' labels and colours are the core's."""
    import ast
    from pathlib import Path

    from impostor_bench.analysis.figures.style import MODE_COLOR, MODE_LABEL as FIG_LABEL
    from impostor_bench.analysis.report.paper_tables import MODE_LABEL as PAPER_LABEL
    from impostor_bench.core.modes import MODE_COLOUR, MODE_LABEL, MODE_SPECS, TEAM_MODES_BY_DISCLOSURE
    from impostor_bench.core.records import TEAM_MODES

    assert FIG_LABEL is MODE_LABEL and PAPER_LABEL == MODE_LABEL and MODE_COLOR is MODE_COLOUR
    assert set(MODE_LABEL) == set(MODE_SPECS) and len(set(MODE_COLOUR.values())) == len(MODE_SPECS)
    assert set(TEAM_MODES_BY_DISCLOSURE) == set(TEAM_MODES)
    copies = []
    for path in sorted((Path(__file__).resolve().parents[1] / "analysis").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                names = {e.value for e in node.elts if isinstance(e, ast.Constant)} & set(TEAM_MODES)
                if len(names) >= 2:
                    copies.append(f"{path.name}:{node.lineno}")
    assert not copies, f"team modes written out by hand (use impostor_bench.core.records.TEAM_MODES): {copies}"

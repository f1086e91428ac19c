"""-T players / -T impostors: bounds and combinations refused in one line naming the option and the fix."""

import pytest
from pydantic import ValidationError

from impostor_bench.core.options import GameOptions, task_option_message


def _message(**kw):
    with pytest.raises(ValidationError) as e:
        GameOptions(**kw)
    return task_option_message(GameOptions, e.value.errors()[0])


@pytest.mark.parametrize("kw, start, fix", [
    (dict(players=3), "-T players=3 is not valid", "use 4 to 8 players"),
    (dict(players=9), "-T players=9 is not valid", "use 4 to 8 players"),
    (dict(impostors=2), "-T impostors=2 is not valid", "with players=4 use impostors=1, or players=5 or more"),
    (dict(players=6, impostors=3), "-T impostors=3 is not valid", "with players=6 use 1 to 2 impostors"),
    (dict(players=6, mode="team_blind"), "-T players=6 is not valid", "mode=team_blind is two teams of two"),
    (dict(players=5, impostors=2, rounds=2), "-T impostors=2 is not valid", "use impostors=1 with rounds > 1"),
    (dict(impostors=0), "-T impostors=0 is not valid", "use 1 up to a minority"),
])
def test_bad_groups_get_one_line(kw, start, fix):
    msg = _message(**kw)
    assert msg.startswith(start) and fix in msg and "\n" not in msg


def test_the_papers_group_stays_out_of_the_task_arguments():
    assert not {"players", "impostors"} & set(GameOptions().task_args())
    assert GameOptions(players=4, impostors=1).task_args() == GameOptions().task_args()
    args = GameOptions(players=6, impostors=2, mode="cross_play").task_args()
    assert (args["players"], args["impostors"]) == (6, 2)

"""Issue 43: every run records the model id the provider's replies named (Inspect's
``ModelOutput.model``, e.g. the dated snapshot OpenRouter or OpenAI routed an alias to) beside
the model asked for: the players table's ``served_model`` and the run's MLflow tag
``impostor.served_model``. A fake provider answers as the bots do but names a served model of
its own, different from the one asked for, and changes it mid-run for one seat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.model import modelapi

from impostor_bench.providers.bots.api import BotAPI
from test_tracking import fresh, tracked  # noqa: F401 - the fixture

SERVED = "fake-provider/player-2024-05-13"
LATER = "fake-provider/player-2024-08-06"


@modelapi(name="servedfake")
class ServedFakeAPI(BotAPI):
    """The bot named after ``servedfake/``; its replies name ``SERVED`` (``LATER`` for ballots
    when the bot is ``embedding``: a provider that switched snapshots between calls)."""

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        output, call = await super().generate(input, tools, tool_choice, config)
        if not isinstance(output, Exception):
            ballot = call.request.get("phase") not in ("description", None)  # the bot's own reading of the call
            output.model = LATER if (self.model_name == "embedding" and ballot) else SERVED
        return output, call


def test_served_model_reaches_the_players_table_and_the_run_tag(tracked, tmp_path, monkeypatch):  # noqa: F811
    from inspect_ai import eval as inspect_eval
    from mlflow.tracking import MlflowClient

    from impostor_bench.export import tables_from_log
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.chdir(tmp_path)
    [log] = inspect_eval(fresh(impostor, mode="cross_play", n_games=3, seed=5), model="servedfake/random",
                         model_roles={"impostor": "servedfake/random", "majority": "servedfake/embedding"},
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    # what the providers' replies said, read from Inspect's own model events (not our bookkeeping)
    named = {e.output.model for s in log.samples for e in s.events if e.event == "model"}
    assert named == {SERVED, LATER}
    players = tables_from_log(log).players
    by_model = players.groupby("model")["served_model"].agg(lambda v: set(v))
    assert by_model["servedfake/random"] == {SERVED}
    assert by_model["servedfake/embedding"] == {f"{SERVED},{LATER}"}  # description, then ballot snapshot
    client = MlflowClient(f"sqlite:///{Path(tmp_path) / 'mlruns' / 'mlflow.db'}")
    [run] = client.search_runs([client.get_experiment_by_name("impostor").experiment_id])
    assert run.data.tags["impostor.served_model"] == (f"servedfake/embedding -> {SERVED},{LATER}; "
                                                      f"servedfake/random -> {SERVED}")
    assert run.data.tags["impostor.model.majority"] == "servedfake/embedding"  # the model asked for, beside it


def test_served_model_tag_is_absent_when_no_reply_named_a_model():
    import pandas as pd

    from impostor_bench.tracking.logrun import served_model_tags

    assert served_model_tags(pd.DataFrame({"model": ["a", "b"], "served_model": [None, None]})) == {}
    tags = served_model_tags(pd.DataFrame({"model": ["a", "a", "b"], "served_model": ["x", "x,y", None]}))
    assert tags == {"impostor.served_model": "a -> x,y"}

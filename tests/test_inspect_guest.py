"""The package is a guest in Inspect: installing it changes nobody else's eval.

Inspect loads every ``inspect_ai`` entry point on the machine in every ``inspect eval``, so
importing them must only register the package's tasks, providers, scorer and hooks: no
function of Inspect's replaced, no private call on someone else's eval (docs/architecture.md,
"A guest in Inspect").  The workarounds a sweep needs are installed by ``impostor sweep`` in
its own process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from test_sweep_helpers import cli_env

# someone else's eval: a provider and a probe hook of theirs (as their own plugin would register
# them; Inspect resolves --model before it loads the task file) and a task
PLUGIN = '''
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.model import ModelAPI, ModelOutput, modelapi


class Echo(ModelAPI):
    async def generate(self, input, tools, tool_choice, config):
        return ModelOutput.from_content(model=self.model_name, content="4")


@modelapi(name="echo")
def echo():
    return Echo


@hooks(name="guest_probe", description="test probe")
class Probe(Hooks):
    async def on_run_end(self, data: RunEnd) -> None:
        import json

        from inspect_ai._control.eval_state import get_eval_states

        with open("probe.json", "w") as f:
            json.dump([s.live is not None for s in get_eval_states()], f)
'''

FOREIGN_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match


@task
def arithmetic(n: int = 1):
    return Task(dataset=[Sample(id=i + 1, input="2 + 2?", target="4") for i in range(n)], scorer=match())
'''

DRIVER = '''
import json, sys
from inspect_ai._util import package, registry
from inspect_ai.model import _model
import inspect_ai.model

ORIGINAL = {"get_model": _model.get_model, "registry_kwargs": registry.registry_kwargs,
            "packages_distributions": package.packages_distributions}
before = sorted(m for m in sys.modules if m.startswith("impostor_bench"))

import plugin  # noqa: F401 - their provider and probe
from inspect_ai._cli.main import main

sys.argv = ["inspect", "eval", "foreign.py", "--model", "echo/one", "-T", "n=2", "--log-dir", "logs",
            "--display", "none"]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
from inspect_ai.log import list_eval_logs, read_eval_log

now = {"get_model": _model.get_model, "registry_kwargs": registry.registry_kwargs,
       "packages_distributions": package.packages_distributions}
[info] = list_eval_logs("logs")
log = read_eval_log(info)
print(json.dumps({
    "before": before,
    "loaded": sorted(m for m in sys.modules if m.startswith("impostor_bench")),
    "same": {k: now[k] is ORIGINAL[k] for k in ORIGINAL},
    "public_get_model": inspect_ai.model.get_model is ORIGINAL["get_model"],
    "code": code, "status": log.status, "accuracy": log.results.scores[0].metrics["accuracy"].value,
    "live": json.load(open("probe.json")),
}))
'''


def _inspect_eval_of_another_task(tmp_path) -> dict:
    (tmp_path / "foreign.py").write_text(textwrap.dedent(FOREIGN_TASK))
    (tmp_path / "plugin.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "driver.py").write_text(textwrap.dedent(DRIVER))
    env = cli_env()
    env.pop("IMPOSTOR_MLFLOW", None)  # tracking on, as for someone who merely installed the package
    env["PYTHONPATH"] = str(tmp_path)
    r = subprocess.run([sys.executable, "driver.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_inspect_eval_of_another_task_runs_with_inspects_own_functions(tmp_path):
    out = _inspect_eval_of_another_task(tmp_path)
    assert out["before"] == []  # the originals were taken before anything of the package loaded
    # the entry points were loaded (else the test would prove nothing) ...
    assert {"impostor_bench._registry", "impostor_bench.tracking.hooks"} <= set(out["loaded"])
    # ... and Inspect's functions are still its own
    assert out["same"] == {"get_model": True, "registry_kwargs": True, "packages_distributions": True}
    assert out["public_get_model"] is True
    assert out["code"] == 0 and out["status"] == "success" and out["accuracy"] == 1.0
    # no hook of ours touched its eval: Inspect's live handle of the finished eval is where Inspect left
    # it (a hook that released finished evals would have detached it), and no MLflow store was written
    assert out["live"] == [True]
    assert not (tmp_path / "mlruns").exists()
    assert "impostor_bench.eval_memory" not in out["loaded"]


SWEEP_DRIVER = '''
import json, sys
from inspect_ai._util import package
from inspect_ai.hooks._hooks import get_all_hooks

from impostor_bench.commands.sweep import run_sweep


def installed():
    return {"package_scan_cached": hasattr(package.packages_distributions, "cache_info"),
            "eval_memory_hooks": sum(1 for h in get_all_hooks() if type(h).__name__ == "ReleaseFinishedEvals")}


before = installed()
code = run_sweep(sys.argv[1], log_dir=sys.argv[2], display="none")
print(json.dumps({"before": before, "after": installed(), "code": code}))
'''


@pytest.mark.slow
def test_a_sweep_installs_its_workarounds_in_its_own_process(tmp_path):
    from test_sweep_helpers import write_config

    cfg = write_config(tmp_path / "s.yaml", modes=["homogeneous"], models=["testplayer/a"])
    (tmp_path / "driver.py").write_text(SWEEP_DRIVER)
    r = subprocess.run([sys.executable, "driver.py", str(cfg), str(tmp_path / "logs")], cwd=tmp_path,
                       env=cli_env(IMPOSTOR_MLFLOW="0"), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == {"before": {"package_scan_cached": False, "eval_memory_hooks": 0},
                   "after": {"package_scan_cached": True, "eval_memory_hooks": 1}, "code": 0}

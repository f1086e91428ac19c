"""Sweeps under a job scheduler: ``--shard auto`` reads a Slurm array task's or a Kubernetes
Indexed Job's index, and the shipped templates (``impostor deploy print``) are what they say:
the Slurm script runs ``--shard auto`` requeue-safely, the Kubernetes manifests pass the
Kubernetes API's own JSON schemas in strict mode (no kubectl) with the login only in a Secret.
The real Slurm array (requeued mid-run) is tests/test_slurm_array.py."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from impostor_bench.commands.deploy import TEMPLATES, template_text, with_shards
from impostor_bench.commands.sweep import resolve_shard
from impostor_bench.core.errors import ImpostorError
from impostor_bench.sweep import plan
from impostor_bench.sweep.scheduler import auto_shard, scheduler_shard
from test_sweep_helpers import REPO, cli_env, run_cli

# ------------------------------------------------------------------ parsing (pure)

SLURM = {"SLURM_ARRAY_JOB_ID": "41", "SLURM_ARRAY_TASK_STEP": "1"}


@pytest.mark.parametrize("env, shard", [
    ({**SLURM, "SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0",
      "SLURM_ARRAY_TASK_MAX": "3"}, (1, 4)),
    ({**SLURM, "SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0",
      "SLURM_ARRAY_TASK_MAX": "3"}, (4, 4)),
    # --array=1-4: offset by MIN, so task 1 is shard 1, task 4 shard 4
    ({**SLURM, "SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1",
      "SLURM_ARRAY_TASK_MAX": "4"}, (1, 4)),
    ({**SLURM, "SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_MAX": "13"}, (3, 4)),
    ({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, (3, 3)),  # no MIN: 0-based
    ({"SLURM_ARRAY_TASK_ID": " 0 ", "SLURM_ARRAY_TASK_COUNT": "1"}, (1, 1)),
    ({"JOB_COMPLETION_INDEX": "0", "IMPOSTOR_SHARDS": "8"}, (1, 8)),
    ({"JOB_COMPLETION_INDEX": "7", "IMPOSTOR_SHARDS": "8"}, (8, 8)),
])
def test_scheduler_variables_give_the_shard(env, shard):
    s = scheduler_shard(env)
    assert s is not None and (s.index, s.count) == shard and s.text == f"{shard[0]}/{shard[1]}"


def test_every_array_index_is_one_shard_of_the_range():
    """Over a whole array (--array=5-11, 7 tasks) each shard 1..7 comes out once."""
    got = [auto_shard({"SLURM_ARRAY_TASK_ID": str(t), "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_MAX": "11",
                       "SLURM_ARRAY_TASK_COUNT": "7", "SLURM_ARRAY_TASK_STEP": "1"}).text for t in range(5, 12)]
    assert got == [f"{i}/7" for i in range(1, 8)]
    got = [auto_shard({"JOB_COMPLETION_INDEX": str(t), "IMPOSTOR_SHARDS": "5"}).text for t in range(5)]
    assert got == [f"{i}/5" for i in range(1, 6)]


def test_no_scheduler_is_none_and_auto_refuses_it():
    assert scheduler_shard({"SLURM_JOB_ID": "9", "IMPOSTOR_SHARDS": "4", "SLURM_ARRAY_TASK_ID": ""}) is None
    with pytest.raises(ImpostorError, match=r"neither SLURM_ARRAY_TASK_ID .* nor JOB_COMPLETION_INDEX .*fix: "):
        auto_shard({"SLURM_JOB_ID": "9"})


@pytest.mark.parametrize("env, says", [
    ({"SLURM_ARRAY_TASK_ID": "x1", "SLURM_ARRAY_TASK_COUNT": "4"}, r"SLURM_ARRAY_TASK_ID='x1' is not an integer"),
    ({"SLURM_ARRAY_TASK_ID": "1.0", "SLURM_ARRAY_TASK_COUNT": "4"}, r"'1\.0' is not an integer"),
    ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "four"}, r"SLURM_ARRAY_TASK_COUNT='four'"),
    ({"SLURM_ARRAY_TASK_ID": "1"}, r"neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX"),
    ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4"}, r"TASK_ID=4 is outside the array 0\.\.3"),
    ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4"}, r"outside the array 1\.\.4"),
    # --array=0-15:4 (tasks 0,4,8,12): a step
    ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0",
      "SLURM_ARRAY_TASK_MAX": "12", "SLURM_ARRAY_TASK_STEP": "4"}, r"SLURM_ARRAY_TASK_STEP='4': an array with a step"),
    # --array=0,3,7: a list with holes (Slurm says step 1 there)
    ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0",
      "SLURM_ARRAY_TASK_MAX": "7", "SLURM_ARRAY_TASK_STEP": "1"}, r"COUNT=3 but .* is 0\.\.7 \(8 indices\): .*holes"),
    ({"JOB_COMPLETION_INDEX": "2"}, r"JOB_COMPLETION_INDEX is set but IMPOSTOR_SHARDS is not; fix: set IMPOSTOR_SHARDS"),
    ({"JOB_COMPLETION_INDEX": "8", "IMPOSTOR_SHARDS": "8"}, r"JOB_COMPLETION_INDEX=8 is outside 0\.\.7"),
    ({"JOB_COMPLETION_INDEX": "-1", "IMPOSTOR_SHARDS": "8"}, r"JOB_COMPLETION_INDEX=-1 is outside"),
    ({"JOB_COMPLETION_INDEX": "0", "IMPOSTOR_SHARDS": "0"}, r"outside 0\.\.-1"),
    ({"JOB_COMPLETION_INDEX": "a", "IMPOSTOR_SHARDS": "8"}, r"JOB_COMPLETION_INDEX='a' is not an integer"),
    ({"JOB_COMPLETION_INDEX": "1", "IMPOSTOR_SHARDS": "8/8"}, r"IMPOSTOR_SHARDS='8/8' is not an integer"),
    ({"JOB_COMPLETION_INDEX": "1", "IMPOSTOR_SHARDS": "8", "SLURM_ARRAY_TASK_ID": "1",
      "SLURM_ARRAY_TASK_COUNT": "2"}, r"both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set"),
])
def test_missing_or_inconsistent_variables_are_one_line(env, says):
    with pytest.raises(ImpostorError) as e:
        scheduler_shard(env)
    msg = str(e.value)
    assert re.search(says, msg), msg
    assert "\n" not in msg and msg.startswith("--shard auto: ") and "; fix: " in msg


def test_resolve_shard_explicit_wins_and_absent_follows_the_environment(capsys):
    env = {"JOB_COMPLETION_INDEX": "2", "IMPOSTOR_SHARDS": "3"}
    assert resolve_shard("1/1", env) == "1/1"  # an explicit shard is never overridden
    assert resolve_shard(None, {}) is None  # no scheduler, no --shard: the whole sweep, silently
    assert capsys.readouterr().err == ""
    assert resolve_shard(None, env) == "3/3"
    assert "shard 3/3 from JOB_COMPLETION_INDEX=2 of IMPOSTOR_SHARDS=3" in capsys.readouterr().err
    assert resolve_shard("auto", env) == "3/3"
    with pytest.raises(ImpostorError, match="neither SLURM_ARRAY_TASK_ID"):
        resolve_shard("auto", {})
    with pytest.raises(ImpostorError, match=r"--shard '2/1' is not valid; fix: .* or auto in a Slurm array task"):
        plan(REPO / "configs/smoke.yaml", shard="2/1")


# ------------------------------------------------------------------ the command line


def _listed(stdout: str) -> list[int]:
    """The experiment indices ``--dry-run --list`` printed."""
    block = stdout.split("\nexperiments:\n", 1)[1].split("\n\n", 1)[0]
    return [int(line.split()[0]) for line in block.splitlines() if line.strip()]


def test_dry_run_list_shows_the_experiments_of_the_schedulers_index(tmp_path):
    cfg = REPO / "configs/smoke.yaml"
    every = plan(cfg).experiments
    base = cli_env(IMPOSTOR_MLFLOW="0")
    for k in ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "IMPOSTOR_SHARDS"):
        base.pop(k, None)
    slurm = dict(base, SLURM_ARRAY_TASK_ID="11", SLURM_ARRAY_TASK_MIN="10", SLURM_ARRAY_TASK_MAX="12",
                 SLURM_ARRAY_TASK_COUNT="3", SLURM_ARRAY_TASK_STEP="1")
    r = run_cli(["sweep", str(cfg), "--dry-run", "--list", "--shard", "auto"], cwd=tmp_path, env=slurm)
    assert r.returncode == 0, r.stderr[-2000:]
    assert _listed(r.stdout) == [e.index for e in every if e.index % 3 == 1]  # shard 2/3, round-robin
    assert "(shard 2/3 of 5 experiments)" in r.stdout
    assert "shard 2/3 from SLURM_ARRAY_TASK_ID=11 of 10..12 (--shard auto)" in r.stderr
    # the same index without --shard: taken from the environment, and said so
    r = run_cli(["sweep", str(cfg), "--dry-run", "--list"], cwd=tmp_path, env=slurm)
    assert r.returncode == 0 and _listed(r.stdout) == [1, 4]
    assert "no --shard inside an array task (--shard 1/1 runs the whole sweep)" in r.stderr
    r = run_cli(["sweep", str(cfg), "--dry-run", "--list", "--shard", "1/1"], cwd=tmp_path, env=slurm)
    assert r.returncode == 0 and _listed(r.stdout) == [e.index for e in every] and "from SLURM" not in r.stderr
    k8s = dict(base, JOB_COMPLETION_INDEX="0", IMPOSTOR_SHARDS="2")
    r = run_cli(["sweep", str(cfg), "--dry-run", "--list", "--shard", "auto"], cwd=tmp_path, env=k8s)
    assert r.returncode == 0 and _listed(r.stdout) == [0, 2, 4]
    # refused: one line, exit 2, before any plan is printed
    for env in (base, dict(base, JOB_COMPLETION_INDEX="0"), dict(k8s, JOB_COMPLETION_INDEX="2")):
        r = run_cli(["sweep", str(cfg), "--dry-run", "--shard", "auto"], cwd=tmp_path, env=env)
        assert r.returncode == 2 and r.stdout == "", r.stdout
        [line] = r.stderr.strip().splitlines()
        assert line.startswith("impostor sweep: error: --shard auto: ") and "fix: " in line


def test_sweep_help_says_when_the_environment_picks_the_shard():
    r = run_cli(["sweep", "--help"], cwd=REPO)
    text = " ".join(r.stdout.split())
    for words in ("auto: I and N from a Slurm array task", "JOB_COMPLETION_INDEX with IMPOSTOR_SHARDS",
                  "Without --shard, a process that sees SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX runs as auto"):
        assert words in text


# ------------------------------------------------------------------ the shipped templates


def _docs(name: str, shards: int | None = None) -> list[dict]:
    return [d for d in yaml.safe_load_all(with_shards(name, template_text(name), shards)) if d]


@pytest.mark.parametrize("name, shards", [("k8s-job", None), ("k8s-job", 3), ("k8s-tracking", None)])
def test_kubernetes_manifests_pass_the_api_schemas_in_strict_mode(name, shards):
    """kubernetes-validate: the Kubernetes OpenAPI schemas as JSON Schema, strict (an unknown or
    misspelt field fails), for the oldest release the Job's fields need and the newest it has."""
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate missing: pip install -e '.[test]'")
    docs = _docs(name, shards)
    assert docs
    for version in ("1.30.0", kv.latest_version()):
        for d in docs:
            kv.validate(d, version, strict=True)
    bad = dict(docs[0], spec=dict(docs[0]["spec"], completionsMode="Indexed"))  # the check can fail
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, kv.latest_version(), strict=True)


@pytest.mark.parametrize("shards", [None, 1, 16])
def test_indexed_job_shards_agree_and_the_login_comes_from_a_secret(shards):
    job = next(d for d in _docs("k8s-job", shards) if d["kind"] == "Job")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["template"]["spec"]["restartPolicy"] == "Never"
    [c] = spec["template"]["spec"]["containers"]
    env = {e["name"]: e for e in c["env"]}
    assert int(env["IMPOSTOR_SHARDS"]["value"]) == spec["completions"] == spec["parallelism"] == (shards or 8)
    assert c["command"][:2] == ["impostor", "sweep"] and c["command"][c["command"].index("--shard") + 1] == "auto"
    for name in ("MLFLOW_TRACKING_URI", "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
        assert "value" not in env[name] and env[name]["valueFrom"]["secretKeyRef"]["name"] == "impostor-tracking"
    # no literal secret anywhere: every env value is a number or a name
    literal = [e for e in c["env"] if "value" in e]
    assert [e["name"] for e in literal] == ["IMPOSTOR_SHARDS"]
    # the logs a restarted pod resumes from are on the shared claim, where the sweep writes them
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    assert mounts[c["workingDir"]] == "work"
    claim = next(d for d in _docs("k8s-job") if d["kind"] == "PersistentVolumeClaim")
    assert "ReadWriteMany" in claim["spec"]["accessModes"]


def test_tracking_server_manifest_serves_what_the_job_dials():
    docs = {d["kind"]: d for d in _docs("k8s-tracking")}
    svc, dep = docs["Service"], docs["Deployment"]
    [c] = dep["spec"]["template"]["spec"]["containers"]
    port = int(c["command"][c["command"].index("--port") + 1])
    assert c["command"][c["command"].index("--host") + 1] == "0.0.0.0"  # beyond loopback: the login is on
    assert svc["spec"]["ports"][0]["port"] == port and svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
    assert dep["spec"]["replicas"] == 1 and dep["spec"]["strategy"]["type"] == "Recreate"
    # the URL the job's Secret is told to hold is this Service's
    job_text = template_text("k8s-job")
    assert f"uri=http://{svc['metadata']['name']}:{port}" in job_text


def test_slurm_script_runs_shard_auto_and_is_requeue_safe(tmp_path):
    text = with_shards("slurm", template_text("slurm"), 4)
    script = tmp_path / "a.sbatch"
    script.write_text(text)
    r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    directives = re.findall(r"^#SBATCH (\S+)", text, re.M)
    assert "--requeue" in directives and "--open-mode=append" in directives  # a requeued task keeps its log
    assert "--array=0-3" in directives and "--output=impostor-%A_%a.log" in directives  # a log per task
    assert re.search(r'^exec impostor sweep "\$CONFIG" --shard auto\b', text, re.M)
    # as shipped, the range is sbatch's --array on the command line
    assert not [d for d in re.findall(r"^#SBATCH (\S+)", template_text("slurm"), re.M) if d.startswith("--array")]


def test_deploy_print_prints_each_template_and_refuses_shards_where_none_apply(tmp_path):
    for name in TEMPLATES:
        r = run_cli(["deploy", "print", name], cwd=tmp_path)
        assert r.returncode == 0 and r.stdout == template_text(name)
    r = run_cli(["deploy", "print", "k8s-job", "--shards", "5"], cwd=tmp_path)
    assert r.returncode == 0 and "completions: 5\n" in r.stdout and 'value: "5"' in r.stdout
    r = run_cli(["deploy", "print", "k8s-tracking", "--shards", "5"], cwd=tmp_path)
    assert r.returncode == 2 and "--shards does not apply to k8s-tracking" in r.stderr
    r = run_cli(["deploy", "print", "k8s-job", "--shards", "0"], cwd=tmp_path)
    assert r.returncode == 2 and "--shards" in r.stderr

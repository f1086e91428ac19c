"""``impostor deploy print slurm|k8s-job|k8s-tracking [--shards N]``: a scheduler template shipped with the package.

The templates live in ``impostor_bench/deploy/`` (package data, so a ``pip install`` has them
too): a Slurm array batch script and Kubernetes manifests for an Indexed Job and the tracking
server.  ``--shards N`` writes N where the template names the number of shards, so the array
range, ``spec.completions`` and ``IMPOSTOR_SHARDS`` cannot disagree.  docs/schedulers.md.
"""

from __future__ import annotations

import argparse
import re
from importlib import resources
from typing import Any, Optional

from impostor_bench.commands._args import whole
from impostor_bench.core.errors import ImpostorError

TEMPLATES = {
    "slurm": "slurm/impostor-array.sbatch",
    "k8s-job": "k8s/indexed-job.yaml",
    "k8s-tracking": "k8s/tracking-server.yaml",
}


def template_text(name: str) -> str:
    """The shipped template's text (``TEMPLATES``)."""
    return resources.files("impostor_bench").joinpath("deploy", *TEMPLATES[name].split("/")).read_text()


def with_shards(name: str, text: str, shards: Optional[int]) -> str:
    """The template with N shards: Slurm's ``#SBATCH --array=0-(N-1)``, the Job's completions,
    parallelism and IMPOSTOR_SHARDS; the text unchanged when ``shards`` is None."""
    if shards is None:
        return text
    if name == "slurm":
        return re.sub(r"^(#SBATCH --job-name=.*\n)", rf"\g<1>#SBATCH --array=0-{shards - 1}\n", text, count=1,
                      flags=re.M)
    if name == "k8s-job":
        out, n = re.subn(r"^(  (?:completions|parallelism): )\d+$", rf"\g<1>{shards}", text, flags=re.M)
        out, m = re.subn(r'^(\s+value: )"\d+"(\s+# = spec\.completions)$', rf'\g<1>"{shards}"\g<2>', out,
                         flags=re.M)
        assert n == 2 and m == 1, "the Job template lost a line --shards rewrites"
        return out
    raise ImpostorError(f"impostor deploy: --shards does not apply to {name}; fix: drop --shards")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("deploy", help="print a Slurm array script or Kubernetes manifest for sharded sweeps "
                                             "(docs/schedulers.md)",
                              description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="action", required=True)
    pr = sub.add_parser("print", help="print a template to stdout (redirect it into a file to edit)")
    pr.add_argument("template", choices=sorted(TEMPLATES),
                    help="slurm: sbatch array script; k8s-job: Indexed Job; k8s-tracking: tracking server Deployment")
    pr.add_argument("--shards", type=whole(1, 100_000), help="the number of shards (slurm, k8s-job)")
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    print(with_shards(args.template, template_text(args.template), args.shards), end="")
    return 0

"""The README stays what a newcomer needs: short, and naming only paths that exist.

A path is a link target or an inline `code` span that looks like one (it contains a `/` or ends
in a file extension). Not paths of the repository, and so skipped: model strings (`bot/random`,
`openai/gpt-4o`: the first part is a provider), the task's registered name, and what the README's
commands write (`out/`, `logs/`, `.venv/`, `.cache/`).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 150
TASK_NAME = "impostor_bench/impostor"
PROVIDERS = {"bot", "local", "human", "litellm", "openai", "anthropic", "openrouter", "vllm", "google"}
WRITTEN = {"out", "logs", ".venv", ".cache"}
EXTENSIONS = (".py", ".sh", ".yaml", ".yml", ".md", ".png", ".json", ".toml", ".csv")


def _prose(text: str) -> str:
    """The README without its fenced code blocks (commands there name outputs and URLs)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def named_paths(text: str) -> list[str]:
    prose = _prose(text)
    links = [t for t in re.findall(r"\]\(([^)\s]+)\)", prose) if not re.match(r"[a-z]+:|#", t)]
    spans = [
        s
        for s in re.findall(r"`([^`\s]+)`", prose)
        if ("/" in s or s.endswith(EXTENSIONS))
        and not re.search(r"[<>*=:|]|\.\.\.", s)
        and not s.startswith(("-", '"', "."))
    ]
    paths = []
    for p in links + spans:
        first = p.strip("/").split("/")[0]
        if p == TASK_NAME or first in PROVIDERS | WRITTEN:
            continue
        paths.append(p.split("#")[0])
    return paths


def test_the_readme_is_short():
    n = len((REPO / "README.md").read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines; move reference detail into docs/*.md (at most {MAX_LINES})"


def test_every_path_the_readme_names_exists():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    paths = named_paths(text)
    assert len(paths) >= 10, paths  # the README links its docs; an empty list means the parsing broke
    missing = sorted({p for p in paths if not (REPO / p).exists()})
    assert not missing, f"README.md names paths that do not exist: {missing}"


def test_the_path_finder_flags_a_missing_folder_and_skips_models():
    text = (
        "Layout: `tasks/`, `impostor/` (adapters), [rules](docs/rules.md), `bot/random`,\n"
        "`impostor_bench/impostor`, `out/report/report.html`, [site](https://x.org/a/b).\n"
        "```bash\ncat nosuch/file.py\n```\n"
    )
    assert named_paths(text) == ["docs/rules.md", "tasks/", "impostor/"]


def test_the_readme_keeps_its_two_setup_commands():
    """CI (.ci/run) and the fresh-clone check run these two commands as the README's."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "bash scripts/demo.sh" in text and "bash scripts/test.sh" in text

"""Output files never follow a link out of their folder (``impostor_bench.core.output_files``).

``OUT/games.parquet -> /elsewhere/x.parquet`` (dangling: x.parquet not yet there) made ``impostor
export --out OUT`` write to /elsewhere, and the overwrite check (``exists()``, which follows the
link) called OUT empty.  Every writer goes through one helper: a new file beside the target,
renamed onto its name, so the link is replaced and /elsewhere stays untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.output_files import write_file, write_text


def _tables():
    from impostor_bench.export import Tables

    games = pd.DataFrame({"game_id": ["e/0"], "winner": ["majority"]})
    players = pd.DataFrame({"game_id": ["e/0"] * 4, "seat": [1, 2, 3, 4], "model": ["bot/random"] * 4})
    return Tables(games, players)


def _dangling(out: Path, name: str, elsewhere: Path) -> Path:
    out.mkdir(exist_ok=True)
    target = elsewhere / f"x-{name}"
    (out / name).symlink_to(target)
    assert not target.exists() and not (out / name).exists()  # exists() follows the link: "free"
    return target


def test_export_replaces_a_dangling_link_instead_of_writing_through_it(tmp_path):
    from impostor_bench.commands.export import earlier_export
    from impostor_bench.export import GAMES_FILE, MODELS_FILE, PLAYERS_FILE, write_tables

    out, elsewhere = tmp_path / "OUT", tmp_path / "elsewhere"
    elsewhere.mkdir()
    targets = [_dangling(out, n, elsewhere) for n in (GAMES_FILE, PLAYERS_FILE, MODELS_FILE)]
    assert earlier_export(str(out)) == [GAMES_FILE, PLAYERS_FILE, MODELS_FILE]  # held: --force needed
    written = write_tables(_tables(), out)
    assert {p.name for p in written} >= {GAMES_FILE, PLAYERS_FILE, MODELS_FILE}
    assert not any(t.exists() for t in targets) and list(elsewhere.iterdir()) == []
    for name in (GAMES_FILE, PLAYERS_FILE):
        assert not (out / name).is_symlink() and len(pd.read_parquet(out / name)) >= 1
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_the_export_command_refuses_a_folder_holding_only_dangling_links(tmp_path, capsys):
    from impostor_bench.cli import main

    out, elsewhere = tmp_path / "OUT", tmp_path / "elsewhere"
    elsewhere.mkdir()
    _dangling(out, "games.parquet", elsewhere)
    code = main(["export", "--logs", str(tmp_path / "nologs"), "--out", str(out)])
    assert code != 0
    assert "already holds an export (games.parquet)" in capsys.readouterr().err


def test_a_link_to_an_existing_file_is_replaced_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    write_text(out / "report.md", "new")
    assert victim.read_text() == "keep me" and (out / "report.md").read_text() == "new"
    assert not (out / "report.md").is_symlink()


def test_a_failed_write_leaves_nothing_and_keeps_the_old_file(tmp_path):
    (tmp_path / "t.csv").write_text("old")

    def boom(p: Path) -> None:
        p.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_file(tmp_path / "t.csv", boom)
    assert (tmp_path / "t.csv").read_text() == "old" and sorted(os.listdir(tmp_path)) == ["t.csv"]


def test_a_folder_in_the_way_is_one_line(tmp_path):
    (tmp_path / "games.parquet").mkdir()
    with pytest.raises(ImpostorError, match=r"games\.parquet: is a folder.*fix"):
        write_text(tmp_path / "games.parquet", "x")


def test_the_file_has_the_usual_mode(tmp_path):
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "a.md", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "a.md").stat().st_mode & 0o777 == 0o644

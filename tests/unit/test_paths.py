"""No input may read or write outside the data dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memsvc.errors import PathEscapeError
from memsvc.ids import InvalidIdError
from memsvc.paths import DataLayout


def test_layout_matches_the_documented_tree(layout: DataLayout) -> None:
    root = layout.root
    assert layout.store_file("user", "u1", "a1") == root / "users/u1/USER.md"
    assert layout.store_file("memory", "u1", "a1") == root / "users/u1/agents/a1/MEMORY.md"
    assert layout.user_config("u1") == root / "users/u1/memory_config.json"
    assert layout.global_overrides() == root / "memory_user_overrides.json"


@pytest.mark.parametrize("user", ["../x", "/abs", "..", "a/../../b", "ａ／ｂ"])
def test_traversal_ids_are_refused_before_any_path_is_built(layout: DataLayout, user: str) -> None:
    with pytest.raises(InvalidIdError):
        layout.store_file("user", user, "a1")
    with pytest.raises(InvalidIdError):
        layout.store_file("memory", "u1", user)


def test_a_symlinked_user_folder_pointing_outside_is_refused(
    layout: DataLayout, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (layout.root / "users").mkdir(parents=True)
    os.symlink(outside, layout.root / "users" / "mallory")
    with pytest.raises(PathEscapeError) as refused:
        layout.store_file("user", "mallory", "a1")
    assert "'users/mallory'" in str(refused.value)
    assert str(tmp_path) not in str(refused.value)  # the message never shows the layout on disk
    with pytest.raises(PathEscapeError):
        layout.user_config("mallory")


def test_a_symlinked_agent_folder_pointing_outside_is_refused(
    layout: DataLayout, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    agents = layout.root / "users" / "u1" / "agents"
    agents.mkdir(parents=True)
    os.symlink(outside, agents / "a1")
    with pytest.raises(PathEscapeError):
        layout.store_file("memory", "u1", "a1")


def test_a_symlinked_data_dir_itself_is_fine(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    layout = DataLayout.at(tmp_path / "link")
    assert layout.store_file("user", "u1", "a1").name == "USER.md"


def test_this_file_system_is_probed_as_case_sensitive(tmp_path: Path) -> None:
    layout = DataLayout.at(tmp_path)
    assert layout.case_insensitive is False
    assert layout.user_dir("Alice") != layout.user_dir("alice")
    assert [p.name for p in tmp_path.iterdir()] == []  # the probe cleans up


def test_on_a_case_insensitive_file_system_ids_must_be_lower_case(tmp_path: Path) -> None:
    layout = DataLayout.at(tmp_path)
    layout._probed["case_insensitive"] = True  # as on macOS, Windows or an SMB share
    assert layout.user_dir("alice").name == "alice"
    with pytest.raises(InvalidIdError, match="case-insensitive"):
        layout.user_dir("Alice")
    with pytest.raises(InvalidIdError, match="case-insensitive"):
        layout.agent_dir("alice", "Coder")

"""Hermes 0.19.0's add / replace / remove rules on a list of entries."""

from __future__ import annotations

import pytest

from memsvc.store.edits import Change, EditRejected, EntryRef, Op, apply
from memsvc.store.memfile import entry_hash


def test_add_appends_and_reports_the_change() -> None:
    applied = apply(["a"], [Op("add", "b")], limit=100)
    assert applied.entries == ["a", "b"]
    assert applied.changes == [Change("add", "b")]


def test_exact_duplicate_add_is_a_no_op() -> None:
    applied = apply(["a"], [Op("add", "a")], limit=100)
    assert applied.entries == ["a"]
    assert applied.changes == []


def test_replace_finds_the_entry_by_substring_and_remembers_the_old_one() -> None:
    applied = apply(["likes tea", "lives in Paris"], [Op("replace", "lives in Rome", "Paris")], 100)
    assert applied.entries == ["likes tea", "lives in Rome"]
    assert applied.changes == [Change("replace", "lives in Rome", previous="lives in Paris")]


def test_remove_finds_the_entry_by_substring() -> None:
    applied = apply(["likes tea", "lives in Paris"], [Op("remove", old_text="tea")], 100)
    assert applied.entries == ["lives in Paris"]
    assert applied.changes == [Change("remove", "likes tea")]


def test_no_match_is_rejected() -> None:
    with pytest.raises(EditRejected) as info:
        apply(["a"], [Op("remove", old_text="zzz")], 100)
    assert info.value.kind == "no_match"


def test_several_distinct_matches_are_rejected_with_the_matches() -> None:
    with pytest.raises(EditRejected) as info:
        apply(["tea at 9", "tea at 5"], [Op("remove", old_text="tea")], 100)
    assert info.value.kind == "ambiguous"
    assert info.value.matches == ["tea at 9", "tea at 5"]


def test_add_over_the_limit_is_rejected_with_the_total() -> None:
    with pytest.raises(EditRejected) as info:
        apply(["x" * 8], [Op("add", "y" * 3)], limit=10)
    assert info.value.kind == "over_limit"
    assert info.value.total == 8 + 3 + 3


def test_limit_is_inclusive() -> None:
    assert apply(["x" * 4], [Op("add", "y" * 3)], limit=10).entries == ["x" * 4, "yyy"]


def test_a_batch_is_checked_against_its_final_size_only() -> None:
    ops = [Op("add", "n" * 6), Op("remove", old_text="o" * 6)]
    applied = apply(["o" * 6], ops, limit=6)
    assert applied.entries == ["n" * 6]


def test_a_failing_batch_changes_nothing() -> None:
    entries = ["a", "b"]
    with pytest.raises(EditRejected) as info:
        apply(entries, [Op("remove", old_text="a"), Op("replace", "c", "zzz")], 100)
    assert info.value.op_index == 1
    assert entries == ["a", "b"]


def test_removals_alone_are_allowed_on_a_store_that_is_over_its_limit() -> None:
    applied = apply(["x" * 50, "y" * 50], [Op("remove", old_text="x")], limit=10)
    assert applied.entries == ["y" * 50]


def test_replace_that_equals_another_entry_merges_them() -> None:
    applied = apply(["a", "b"], [Op("replace", "b", "a")], 100)
    assert applied.entries == ["b"]
    assert applied.changes == [Change("replace", "b", previous="a")]


def test_replace_with_identical_text_is_a_no_op() -> None:
    assert apply(["a"], [Op("replace", "a", "a")], 100).changes == []


@pytest.mark.parametrize(
    ("op", "kind"),
    [
        (Op("add", ""), "missing_content"),
        (Op("replace", "", "a"), "missing_content"),
        (Op("replace", "x", ""), "missing_old_text"),
        (Op("remove", ""), "missing_old_text"),
    ],
)
def test_missing_fields_are_rejected(op: Op, kind: str) -> None:
    with pytest.raises(EditRejected) as info:
        apply(["a"], [op], 100)
    assert info.value.kind == kind


def test_an_edit_by_position_applies_to_the_entry_that_still_has_its_hash() -> None:
    entries = ["likes tea", "lives in Paris"]
    at = EntryRef(1, entry_hash("lives in Paris"))
    applied = apply(entries, [Op("replace", "lives in Rome", at=at)], 100)
    assert applied.entries == ["likes tea", "lives in Rome"]
    assert apply(entries, [Op("remove", at=at)], 100).entries == ["likes tea"]


@pytest.mark.parametrize(
    "at",
    [
        EntryRef(0, entry_hash("lives in Paris")),  # another entry sits at that position now
        EntryRef(1, entry_hash("lives in Paris!")),  # the entry changed since it was read
        EntryRef(2, entry_hash("lives in Paris")),  # the position is past the end
    ],
)
def test_an_edit_by_position_whose_entry_changed_is_stale_and_changes_nothing(
    at: EntryRef,
) -> None:
    entries = ["likes tea", "lives in Paris"]
    with pytest.raises(EditRejected) as info:
        apply(entries, [Op("remove", at=at)], 100)
    assert info.value.kind == "stale"
    assert entries == ["likes tea", "lives in Paris"]

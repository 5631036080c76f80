"""The Hermes byte format: what is written, and how tolerantly it is read."""

from __future__ import annotations

import pytest

from memsvc.store.memfile import char_count, entry_problem, parse, serialise, split_entries


def test_serialise_joins_with_a_section_sign_line_and_no_trailing_newline() -> None:
    assert serialise(["a", "b\nc"]) == "a\n§\nb\nc".encode()
    assert serialise([]) == b""


def test_canonical_bytes_round_trip() -> None:
    raw = "名字:张三\n§\nline one\nline two\n§\n🙂".encode()
    parsed = parse(raw)
    assert parsed.entries == ["名字:张三", "line one\nline two", "🙂"]
    assert parsed.canonical
    assert serialise(parsed.entries) == raw


@pytest.mark.parametrize(
    ("raw", "entries"),
    [
        (b"a\n\xc2\xa7\nb\n", ["a", "b"]),  # trailing newline
        (b"\xef\xbb\xbfa", ["a"]),  # BOM
        (b"  a  \n\xc2\xa7\n\n\xc2\xa7\nb", ["a", "b"]),  # padding and an empty entry
        (b"a\n\xc2\xa7\na\n\xc2\xa7\nb", ["a", "b"]),  # duplicate
        (b"\n\n", []),  # whitespace only
    ],
    ids=["trailing_newline", "bom", "padding_and_empty", "duplicate", "whitespace_only"],
)
def test_non_canonical_files_are_read_and_flagged(raw: bytes, entries: list[str]) -> None:
    parsed = parse(raw)
    assert parsed.entries == entries
    assert not parsed.canonical


def test_invalid_utf8_is_read_with_replacement_characters_not_an_error() -> None:
    parsed = parse(b"caf\xe9\n\xc2\xa7\nok")
    assert parsed.entries == ["caf\ufffd", "ok"]
    assert not parsed.canonical


def test_empty_file_is_an_empty_canonical_store() -> None:
    assert parse(b"").entries == []
    assert parse(b"").canonical


def test_a_section_sign_inside_a_line_is_not_a_delimiter() -> None:
    assert split_entries("see §3.2 of the spec\n§\nnext") == ["see §3.2 of the spec", "next"]


def test_char_count_is_len_of_joined_text_including_delimiters() -> None:
    assert char_count([]) == 0
    assert char_count(["ab", "c"]) == len("ab\n§\nc") == 6


@pytest.mark.parametrize("content", ["§", "§\nx", "x\n§", "a\n§\nb"])
def test_entries_holding_a_delimiter_line_are_refused(content: str) -> None:
    assert entry_problem(content) is not None


def test_lone_surrogates_are_refused() -> None:
    assert "surrogate" in (entry_problem("bad \ud800 text") or "")


@pytest.mark.parametrize("content", ["§ 3", "x §", "a\n§ b", "plain"])
def test_section_signs_that_are_not_a_whole_line_are_fine(content: str) -> None:
    assert entry_problem(content) is None


def test_crlf_and_lone_cr_are_read_as_newlines_like_hermes_does() -> None:
    parsed = parse(b"a\r\nb\r\n\xc2\xa7\r\nc\rd")
    assert parsed.entries == ["a\nb", "c\nd"]
    assert not parsed.canonical

"""Ids become folder names and key parts: only safe ones get through."""

from __future__ import annotations

import pytest

from memsvc.ids import (
    MAX_ID_BYTES,
    MAX_ID_LENGTH,
    InvalidIdError,
    validate_id,
    validate_optional_id,
)

GOOD = [
    "alice",
    "u-123",
    "user@example.com",
    "A1.b_c+d",
    "张三",
    "thread-9f8e7d",
    "x" * 128,
    "用" * 85,  # 255 bytes
    "𠀀" * 63 + "ab",  # 254 bytes
    "console",
    "com10",
    "nul-pointer",
]
BAD = {
    "empty": "",
    "too_long": "x" * (MAX_ID_LENGTH + 1),
    "too_many_bytes": "用" * (MAX_ID_BYTES // 3 + 1),  # 86 characters, 258 bytes
    "too_many_bytes_astral": "𠀀" * 64,  # a folder name of 256 bytes
    "dotdot": "..",
    "dotdot_inside": "a..b",
    "parent_path": "../etc",
    "slash": "a/b",
    "backslash": "a\\b",
    "absolute": "/etc/passwd",
    "nul": "a\x00b",
    "newline": "a\nb",
    "tab": "a\tb",
    "escape": "a\x1b[31m",
    "zero_width": "ali\u200bce",
    "rtl_override": "abc\u202egpj",
    "fullwidth_solidus": "a\uff0fb",
    "fullwidth_letters": "ａｌｉｃｅ",
    "leading_dot": ".hidden",
    "leading_dash": "-rf",
    "space": "a b",
    "hash_tag_brace": "a{b}",
    "colon": "a:b",
    "star": "a*",
    "windows_device": "CON",
    "windows_device_lower": "nul",
    "windows_device_extension": "com1.md",
    "windows_printer": "LPT9",
    "trailing_dot": "alice.",
}


@pytest.mark.parametrize("value", GOOD)
def test_safe_ids_are_returned_unchanged(value: str) -> None:
    assert validate_id("user_id", value) == value


@pytest.mark.parametrize("value", list(BAD.values()), ids=list(BAD))
def test_unsafe_ids_are_refused_with_a_reason(value: str) -> None:
    with pytest.raises(InvalidIdError) as info:
        validate_id("agent_id", value)
    assert "invalid agent_id" in str(info.value)
    assert info.value.reason


def test_non_string_ids_are_refused() -> None:
    with pytest.raises(InvalidIdError, match="must be a string"):
        validate_id("user_id", 42)


def test_optional_id_treats_empty_and_none_as_absent() -> None:
    assert validate_optional_id("thread_id", "") == ""
    assert validate_optional_id("thread_id", None) == ""
    with pytest.raises(InvalidIdError):
        validate_optional_id("thread_id", "../x")


def test_error_message_does_not_dump_huge_values() -> None:
    with pytest.raises(InvalidIdError) as info:
        validate_id("user_id", "y" * 10_000)
    assert len(str(info.value)) < 200

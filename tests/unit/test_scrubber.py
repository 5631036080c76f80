"""The streaming scrubber: recalled memory never reaches a person, however it is chunked."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsvc.security.scrubber import StreamingScrubber, scrub

SECRET = "<memory-context>\n[System note: recalled]\nuser's SSN is 123\n</memory-context>"


def stream(chunks: list[str]) -> str:
    scrubber = StreamingScrubber()
    return "".join(scrubber.feed(c) for c in chunks) + scrubber.finish()


def test_a_whole_span_is_removed() -> None:
    assert scrub(f"Hello {SECRET} world") == "Hello  world"


@pytest.mark.parametrize("cut", range(1, len(SECRET)))
def test_a_span_split_anywhere_across_two_chunks_is_removed(cut: int) -> None:
    text = f"A{SECRET}B"
    assert stream([text[: cut + 1], text[cut + 1 :]]) == "AB"


def test_a_span_fed_one_character_at_a_time_is_removed() -> None:
    assert stream(list(f"before {SECRET} after")) == "before  after"


def test_nested_spans_are_removed_whole() -> None:
    text = "x<memory-context>a<memory-context>b</memory-context>c</memory-context>y"
    assert scrub(text) == "xy"


def test_stray_tags_are_dropped_and_text_kept() -> None:
    assert scrub("a</memory-context>b") == "ab"
    assert scrub("a</MEMORY-CONTEXT >b") == "ab"


def test_an_unclosed_span_hides_everything_after_it() -> None:
    assert stream(["safe <memory-context>leak", "ing more", " and more"]) == "safe "


def test_tags_with_attributes_and_any_case_are_recognised() -> None:
    assert scrub('a<Memory-Context source="hindsight">x</memory-context>b') == "ab"


def test_text_that_only_looks_like_the_start_of_a_tag_is_released() -> None:
    assert stream(["1 <", " 2 and <mem", "ory lane> ok"]) == "1 < 2 and <memory lane> ok"
    assert stream(["a <memory-contextual> b"]) == "a <memory-contextual> b"
    assert stream(["ends with <memory-con"]) == "ends with <memory-con"


def test_only_a_possible_tag_start_is_held_back() -> None:
    scrubber = StreamingScrubber()
    assert scrubber.feed("visible now <memory-") == "visible now "
    assert scrubber.feed("context>hidden") == ""
    assert scrubber.feed("</memory-context> and then") == " and then"


def test_a_custom_tag_name() -> None:
    assert scrub("a<recall>x</recall>b<memory-context>", tag="recall") == "ab<memory-context>"


def test_a_custom_tag_with_capitals_split_across_chunks_is_removed() -> None:
    scrubber = StreamingScrubber("Recall")
    out = scrubber.feed("hi <Rec") + scrubber.feed("all>secret</Recall> bye") + scrubber.finish()
    assert out == "hi  bye"


@given(st.text(alphabet="ab <>/-memorycntx", max_size=60), st.data())
def test_any_chunking_gives_the_same_output_as_one_chunk(text: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    chunks = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert stream(chunks) == scrub(text)


@given(st.text(max_size=40), st.text(max_size=40), st.text(max_size=40), st.data())
def test_span_contents_never_leak_whatever_surrounds_them(
    before: str, inside: str, after: str, data: st.DataObject
) -> None:
    inside = inside.replace("<", "").replace(">", "")
    text = f"{before}<memory-context>SECRET{inside}</memory-context>{after}"
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=5)))
    chunks = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert "SECRET" not in stream(chunks) or "SECRET" in before + after

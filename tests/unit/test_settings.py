"""Process settings refuse combinations that would break the service without a word."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from memsvc.settings import INVARIANTS, ServiceSettings
from memsvc.validation import describe


def test_the_defaults_hold_every_invariant() -> None:
    settings = ServiceSettings()
    assert settings.heartbeat_seconds * 3 < settings.claim_idle_seconds


@pytest.mark.parametrize(("smaller", "larger", "may_equal", "why"), INVARIANTS)
def test_a_broken_invariant_is_refused_naming_both_fields(
    smaller: str, larger: str, may_equal: bool, why: str
) -> None:
    high = getattr(ServiceSettings(), larger)
    with pytest.raises(ValidationError) as refused:
        ServiceSettings(**{smaller: high * 2})
    message = str(refused.value)
    assert smaller in message and larger in message and why in message


@pytest.mark.parametrize(("smaller", "larger", "may_equal", "why"), INVARIANTS)
def test_equal_values_are_refused_only_where_they_break_something(
    smaller: str, larger: str, may_equal: bool, why: str
) -> None:
    high = getattr(ServiceSettings(), larger)
    if may_equal:
        assert getattr(ServiceSettings(**{smaller: high}), smaller) == high
    else:
        with pytest.raises(ValidationError, match=smaller):
            ServiceSettings(**{smaller: high})


def test_the_environment_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSVC_LOCK_WAIT_SECONDS", "2")
    with pytest.raises(ValidationError, match="lock_lease_seconds"):
        ServiceSettings()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("redis://:s3cret@127.0.0.1:99999/0", "check its port"),
        ("redis://:s3cret@127.0.0.1:6379/0?socket_timeout=soon", "its query options"),
        ("redis://:s3/cret@127.0.0.1:6379/0", "check its port"),  # a '/' in the password
        ("http://:s3cret@127.0.0.1:6379/0", "should match pattern"),
    ],
)
def test_a_redis_url_redis_py_would_refuse_is_refused_at_start_without_its_secret(
    url: str, why: str
) -> None:
    """Not a traceback from the first connection: the setting's name and what is wrong."""
    with pytest.raises(ValidationError) as info:
        ServiceSettings(redis_url=url)
    said = describe(info.value)  # what the CLI prints
    assert said.startswith("redis_url: ") and why in said
    for text in (said, str(info.value)):  # the error itself, as a library caller sees it
        assert "s3" not in text and "cret" not in text

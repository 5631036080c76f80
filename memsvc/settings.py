"""Service settings: where memsvc keeps things and how it reaches its servers.

Read from the environment with the ``MEMSVC_`` prefix (``MEMSVC_DATA_DIR``,
``MEMSVC_CONFIG``, ``MEMSVC_REDIS_URL`` ...). These are per process, not per
user; per-user behaviour lives in :mod:`memsvc.config`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Self

from pydantic import Field, PositiveFloat, PositiveInt, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from redis.connection import parse_url

from memsvc.validation import http_url

# (smaller, larger, may they be equal, why): each pair must hold, or the service
# misbehaves without saying so.
INVARIANTS: tuple[tuple[str, str, bool, str], ...] = (
    (
        "lock_lease_seconds",
        "lock_wait_seconds",
        True,
        "a writer must be able to outwait the lease of a holder that died",
    ),
    (
        "lock_wait_seconds",
        "event_timeout_seconds",
        False,
        "a write that waits out a busy lock must answer before its event is cut off",
    ),
    (
        "prefetch_timeout_seconds",
        "prefetch_deadline_seconds",
        False,
        "a worker must cut slow providers off before the client stops waiting",
    ),
    (
        "hindsight_recall_timeout_seconds",
        "prefetch_timeout_seconds",
        False,
        "one slow bank must be dropped while the other bank's answer still makes it",
    ),
    (
        "hindsight_reflect_timeout_seconds",
        "tool_deadline_seconds",
        False,
        "a reflect must answer before the client stops waiting for the tool",
    ),
    (
        "job_backoff_base_seconds",
        "job_backoff_cap_seconds",
        True,
        "the first retry wait cannot exceed the longest one",
    ),
)


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return Path(base) / "memsvc"


class ServiceSettings(BaseSettings):
    """Process settings, from ``MEMSVC_*``: checked together, so a combination that breaks an
    invariant is refused at start.
    """

    # a refused value is never quoted back: MEMSVC_REDIS_URL and the Hindsight URL may hold
    # credentials
    model_config = SettingsConfigDict(
        env_prefix="MEMSVC_", extra="ignore", frozen=True, hide_input_in_errors=True
    )

    data_dir: Path = Field(default_factory=_default_data_dir)
    config: Path | None = None  # a config.yaml; defaults apply when unset
    # what redis-py connects to: refused here with the setting's name, not at first use
    redis_url: str | None = Field(default=None, pattern=r"^$|^(redis|rediss|unix)://")
    redis_connect_timeout_seconds: PositiveFloat = 1.0  # a Redis that takes no connections
    # a command Redis does not answer; above the 1 s that inbox and stream reads block
    redis_timeout_seconds: float = Field(default=2.0, ge=1.5)
    hindsight_url: str | None = None  # overrides memory.hindsight.api_url of config.yaml
    hindsight_api_key: SecretStr | None = None  # overrides memory.hindsight.api_key
    key_prefix: str = Field(default="memsvc", pattern=r"^[A-Za-z0-9_.\-]{1,64}$")
    lock_lease_seconds: PositiveFloat = 10.0  # a writer that stalls longer loses its lock
    lock_wait_seconds: PositiveFloat = 10.0  # how long a writer queues for a busy file
    log_level: str = "warning"
    env: str = Field(default="", pattern=r"^[A-Za-z0-9_\-]{0,32}$")  # {env} in bank names

    # request path
    prefetch_deadline_seconds: PositiveFloat = 1.0  # the client's wait for a prefetch reply
    tool_deadline_seconds: PositiveFloat = 10.0  # the client's wait for a tool result
    prefetch_timeout_seconds: PositiveFloat = 0.8  # a worker's cut-off per provider
    # each Hindsight bank's recall: below the provider cut-off, so that one slow bank
    # is dropped while the other bank's answer still makes it
    hindsight_recall_timeout_seconds: PositiveFloat = 0.6
    hindsight_reflect_timeout_seconds: PositiveFloat = 8.0  # below the tool deadline
    # how long one try of a job waits for an async retain Hindsight accepted; then the try
    # fails and the next one waits on the same operation (keep it below 0.8 x job timeout)
    hindsight_retain_pending_seconds: PositiveFloat = 15.0
    hindsight_retain_batch_items: PositiveInt = 50  # turns per retain request, at most
    hindsight_retain_batch_bytes: PositiveInt = 256 * 1024  # ... and bytes of their items

    # workers
    worker_concurrency: PositiveInt = 128  # events in flight per worker process
    # a worker runs the file work of an event that runs alone on its event loop while the
    # disk is quick (memsvc/store/filejobs.py); false: always in threads
    worker_inline_file_jobs: bool = True
    manager_cache_size: PositiveInt = 1024  # (user, agent) managers a worker keeps built
    claim_idle_seconds: PositiveFloat = 15.0  # a dead worker's events move on after this
    max_deliveries: PositiveInt = 5  # then an event that keeps failing is parked
    # a running event's pending entry is refreshed every heartbeat_seconds, so only a dead
    # or stalled worker's events are claimed; this limit only ends a handler that hangs
    event_timeout_seconds: PositiveFloat = 12.0
    job_concurrency: PositiveInt = 50
    job_poll_seconds: PositiveFloat = 0.05
    job_timeout_seconds: PositiveInt = 30  # keep jobs short: a killed job waits this + 10 s
    job_max_tries: PositiveInt = 20  # with the backoff: at least ~29 min of tries
    job_max_age_seconds: PositiveFloat = 6 * 3600
    job_backoff_base_seconds: PositiveFloat = 1.0  # the first retry waits 0.5-1 s, then doubling
    job_backoff_cap_seconds: PositiveFloat = 300.0

    # gateway
    # how long a gateway keeps a token's record it read: a revocation drops it at once (a
    # Redis channel), this bounds a revocation whose message was missed; 0 keeps nothing
    gateway_token_cache_seconds: float = Field(default=5.0, ge=0.0, le=300.0)

    # retention
    snapshot_ttl_seconds: PositiveInt = 7 * 24 * 3600
    log_max_entries: PositiveInt = 200_000
    log_retention_seconds: PositiveFloat = 7 * 24 * 3600
    # a turn's text in the event log: replay of writes does not need it, and it is the
    # conversation itself; by default the log keeps each text's length and digest
    log_turn_text: bool = False

    @property
    def heartbeat_seconds(self) -> float:
        """How often a worker refreshes the events it holds: several beats per ``claim_idle``."""
        return self.claim_idle_seconds / 4

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value:
            try:  # what redis-py would refuse at the first connection (a port out of range)
                parse_url(value)  # type: ignore[no-untyped-call]
            except ValueError:  # not its words: they may quote a piece of the password
                raise ValueError(
                    "redis-py cannot connect to it: check its port (0-65535), its database "
                    "number and its query options"
                ) from None
        return value

    @field_validator("hindsight_url")
    @classmethod
    def _hindsight_url(cls, value: str | None) -> str | None:
        return http_url(value) if value else None  # empty (${URL:-} in a compose file): none

    @model_validator(mode="after")
    def _check_invariants(self) -> Self:
        for smaller, larger, may_equal, why in INVARIANTS:
            low, high = getattr(self, smaller), getattr(self, larger)
            if low > high or (low == high and not may_equal):
                relation = "at most" if may_equal else "below"
                raise ValueError(
                    f"{smaller} ({low:g}) must be {relation} {larger} ({high:g}): {why}"
                )
        return self


def default(name: str) -> Any:
    """The default of setting ``name``, for a class that also takes it as an argument:
    every default lives here, once."""
    return ServiceSettings.model_fields[name].default

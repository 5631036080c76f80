"""Service settings: where memsvc keeps things and how it reaches its servers.

Read from the environment with the ``MEMSVC_`` prefix (``MEMSVC_DATA_DIR``,
``MEMSVC_CONFIG``, ``MEMSVC_REDIS_URL`` ...). These are per process, not per
user; per-user behaviour lives in :mod:`memsvc.config`.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, PositiveFloat
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return Path(base) / "memsvc"


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMSVC_", extra="ignore", frozen=True)

    data_dir: Path = Field(default_factory=_default_data_dir)
    config: Path | None = None  # a config.yaml; defaults apply when unset
    redis_url: str | None = None
    key_prefix: str = Field(default="memsvc", pattern=r"^[A-Za-z0-9_.\-]{1,64}$")
    lock_lease_seconds: PositiveFloat = 10.0  # a writer that stalls longer loses its lock
    lock_wait_seconds: PositiveFloat = 10.0  # how long a writer queues for a busy file
    log_level: str = "warning"

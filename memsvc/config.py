"""Memory configuration: the schema, the four layers, the whitelist, the sources.

Layers, lowest first: pydantic defaults < ``config.yaml`` (the ``memory:``
section) < the environment (``MEMSVC_HINDSIGHT_URL``) < global overrides
(``{data_dir}/memory_user_overrides.json``, written by an admin) < per-user
overrides (``{data_dir}/users/{user}/memory_config.json``).
The two override layers may only touch :data:`USER_WRITABLE_FIELDS`; anything
else is refused with an error naming the field, never dropped silently, because
a silently ignored setting is a bug report waiting to happen.

A Hindsight URL that is set (in the environment or as ``hindsight.api_url`` of
the yaml) means "use it": the provider becomes ``hindsight`` unless the yaml
names a ``provider`` itself (``provider: builtin`` keeps Hindsight off).
"""

from __future__ import annotations

import json
import os
import re
import string
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

import structlog
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)

from memsvc.errors import InvalidInputError, UnsafeFileError
from memsvc.paths import Anchored, DataLayout
from memsvc.security.classifier import IMPORT_PATH
from memsvc.security.scanner import Scanner
from memsvc.store.atomicfile import read_bytes, write_atomic
from memsvc.validation import describe, http_url

log = structlog.get_logger(__name__)

Source = Literal["default", "yaml", "env", "global", "user"]

# Every count and size a layer may set: far above any that works, and a number that
# JavaScript (the web page) reads exactly.
MAX_SETTING = 1_000_000
Count = Annotated[int, Field(gt=0, le=MAX_SETTING)]


class _Section(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class BuiltinConfig(_Section):
    """The builtin files' limits (Hermes' defaults)."""

    enabled: bool = True
    memory_char_limit: Count = 2200
    user_char_limit: Count = 1375
    # Hermes' own store always drops duplicates, so a store that kept them would not
    # survive a Hermes rewrite byte for byte: only ``true`` is accepted.
    deduplicate_on_load: Literal[True] = True


class HindsightConfig(_Section):
    """The Hindsight provider's settings: where it is, how banks are named, what recall and retain
    do.
    """

    mode: Literal["cloud", "local_embedded", "local_external"] = "local_external"
    api_url: str = "http://localhost:8888"  # hindsight-api's own default port
    api_key: SecretStr | None = None
    bank_id_template: str = "deerflow-user-{user_id}"
    work_bank_id_template: str = "deerflow-work-{user_id}-{agent_id}"
    memory_mode: Literal["context", "tools", "hybrid"] = "context"
    bank_mission: str = ""
    bank_retain_mission: str = ""
    recall_budget: Literal["low", "mid", "high"] = "mid"
    recall_max_tokens: Count = 4096
    recall_max_input_chars: Count = 800
    auto_recall: bool = True
    auto_retain: bool = True
    retain_async: bool = True
    retain_every_n_turns: Count = 1
    retain_user_prefix: str = "User"
    retain_assistant_prefix: str = "Assistant"

    _reachable_url = field_validator("api_url")(http_url)

    @field_validator("bank_id_template")
    @classmethod
    def _user_bank(cls, value: str) -> str:
        return _bank_template(value, {"user_id"})

    @field_validator("work_bank_id_template")
    @classmethod
    def _work_bank(cls, value: str) -> str:
        return _bank_template(value, {"user_id", "agent_id"})


BANK_PLACEHOLDERS = frozenset({"user_id", "agent_id", "thread_id", "env"})


_BANK_TEXT = re.compile(r"[A-Za-z0-9.\-]*")


def _bank_template(template: str, required: set[str]) -> str:
    """A template's own text is what bank ids may hold; escaped ids never contain ``-`` or
    ``.``, so one of those between two placeholders keeps every pair of ids apart."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"not a valid template: {exc}") from None
    names = {name for _, name, _, _ in parts if name is not None}
    for position, (text, name, spec, conversion) in enumerate(parts):
        if not _BANK_TEXT.fullmatch(text):
            raise ValueError("may only hold letters, digits, '-' and '.' besides placeholders")
        if name is not None and (spec or conversion):
            raise ValueError(f"'{{{name}}}' must be a plain placeholder")
        follows_another = position > 0 and parts[position - 1][1] is not None
        if name is not None and follows_another and not {"-", "."} & set(text):
            raise ValueError(
                f"put '-' or '.' before '{{{name}}}', or two ids could give the same bank"
            )
    if unknown := names - BANK_PLACEHOLDERS:
        raise ValueError(
            f"unknown placeholder(s) {sorted(unknown)}; use {sorted(BANK_PLACEHOLDERS)}"
        )
    if missing := required - names:
        raise ValueError(
            f"must contain {{{'}, {'.join(sorted(missing))}}} so that banks are "
            "never shared across users (or agents)"
        )
    return template


class InjectionConfig(_Section):
    """How much memory reaches the system prompt, and inside which tag."""

    enabled: bool = True
    max_tokens: Count = 2000
    include_builtin: bool = True
    include_hindsight: bool = True
    context_tag: str = Field(default="memory-context", pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")

    @property
    def builtin_shown(self) -> bool:
        """Whether the builtin memory (the frozen snapshot) reaches the prompt."""
        return self.enabled and self.include_builtin


class SecurityConfig(_Section):
    """Whether entries are scanned, the learned scorer and the optional classifier asked after
    the rules."""

    scan_content: bool = True
    block_invisible_unicode: bool = True
    # the learned scorer beside the rules (memsvc.security.learned), asked what they pass
    learned_scorer: bool = True
    streaming_scrubber: bool = True
    # "package.module:callable" asked about texts the rules pass (memsvc.security.classifier)
    classifier: str | None = Field(default=None, pattern=IMPORT_PATH)


class MemoryConfig(_Section):
    """A user's memory configuration: the defaults, the global overrides and the user's own,
    merged.
    """

    enabled: bool = True
    provider: Literal["builtin", "hindsight"] = "builtin"  # the external one, if any
    builtin: BuiltinConfig = BuiltinConfig()
    hindsight: HindsightConfig = HindsightConfig()
    injection: InjectionConfig = InjectionConfig()
    security: SecurityConfig = SecurityConfig()


USER_WRITABLE_FIELDS: frozenset[str] = frozenset(
    {
        "injection.enabled",
        "injection.max_tokens",
        "injection.include_builtin",
        "injection.include_hindsight",
        "hindsight.memory_mode",
        "hindsight.recall_budget",
        "hindsight.bank_mission",
    }
)


class ConfigError(InvalidInputError):
    """A configuration layer that cannot be used; the message names the layer and the field."""


@dataclass(frozen=True)
class EffectiveConfig:
    """A user's merged config, and what each layer changed (to explain where a value comes from)."""

    config: MemoryConfig
    sources: Mapping[str, Source]  # dotted field path -> the layer that set it
    problems: tuple[str, ...] = ()  # override layers left out, and why (lenient loading)

    def source_of(self, path: str) -> Source:
        return self.sources[path]


def leaf_paths(model: type[BaseModel] = MemoryConfig, prefix: str = "") -> Iterator[str]:
    """Dotted paths of every leaf field of the schema."""
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from leaf_paths(annotation, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}"


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{path}."))
        else:
            flat[path] = value
    return flat


def _names(field: str, fields: Iterable[str]) -> bool:
    """Whether ``field`` is one of ``fields``, or a section holding some of them."""
    return any(f == field or f.startswith(f"{field}.") for f in fields)


def _deep_merge(base: dict[str, Any], layer: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _validate(data: Mapping[str, Any], where: str) -> MemoryConfig:
    try:
        return MemoryConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {describe(exc, root='memory')}") from None


def check_override(data: Any, where: str) -> dict[str, Any]:
    """Validate an override layer: a JSON object of whitelisted fields with valid values."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: must be a JSON object")
    for path in _flatten(data):
        if path not in USER_WRITABLE_FIELDS:
            raise _not_writable(where, path)
    _validate(data, where)
    mission = data.get("hindsight", {}).get("bank_mission")
    if isinstance(mission, str) and (problem := Scanner().check(mission)):
        # it is sent to Hindsight, which folds it into what it tells a model
        raise ConfigError(f"{where}: hindsight.bank_mission refused: {problem}")
    return data


def shown(
    effective: EffectiveConfig, *, hindsight_url: str | None, api_key_from_env: bool
) -> dict[str, Any]:
    """A user's effective config as it may be printed or served: what the workers use (the
    environment's Hindsight URL and key over the yaml's), each field's source, the fields a
    user may override, and no secret (a key as ``**********``, URL credentials as ``***@``)."""
    config = effective.config.model_dump(mode="json")  # a SecretStr dumps as "**********"
    sources: dict[str, str] = dict(effective.sources)
    hindsight = config["hindsight"]
    if hindsight_url is not None:
        hindsight["api_url"], sources["hindsight.api_url"] = hindsight_url, "env"
    if api_key_from_env:
        hindsight["api_key"], sources["hindsight.api_key"] = "**********", "env"
    hindsight["api_url"] = mask_url(hindsight["api_url"])
    return {"config": config, "sources": sources, "writable": sorted(USER_WRITABLE_FIELDS)}


def merge_patch(layer: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``layer`` with ``changes`` applied as a JSON merge patch (RFC 7386): a value sets a
    field, ``null`` removes it; sections left empty go too."""
    merged = dict(layer)
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping):
            below = merged.get(key)
            section = merge_patch(below if isinstance(below, Mapping) else {}, value)
            if section:
                merged[key] = section
            else:
                merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def _undotted(changes: Mapping[str, Any]) -> dict[str, Any]:
    """``changes`` with a field named as the whitelist and ``DELETE /config/{field}`` name it
    (``"injection.enabled": false``) set in its section, as a merge patch nests it."""
    nested: dict[str, Any] = {}
    for key, value in changes.items():
        *sections, leaf = key.split(".") if isinstance(key, str) else [key]
        level = nested
        for section in sections:
            inner = level.get(section)
            level = level.setdefault(section, {}) if isinstance(inner, dict | None) else {}
        if isinstance(value, Mapping) and isinstance(level.get(leaf), dict):
            level[leaf] = {**level[leaf], **value}
        else:
            level[leaf] = value
    return nested


def _not_writable(where: str, path: str) -> ConfigError:
    return ConfigError(
        f"{where}: field '{path}' cannot be overridden "
        f"(an override may set: {', '.join(sorted(USER_WRITABLE_FIELDS))})"
    )


def mask_url(url: str) -> str:
    """``url`` for printing and logs: a user name and password before the host, every
    query value (``?api_key=...``) and any fragment replaced by ``***``; a URL that does
    not parse is not shown at all."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "***"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = "&".join(
        f"{item.partition('=')[0]}=***" if "=" in item else "***" if item else ""
        for item in parts.query.split("&")
    )
    fragment = "***" if parts.fragment else ""
    return urlunsplit(parts._replace(netloc=netloc, query=query, fragment=fragment))


_ENV_REF = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_UNSET = object()


def _expand_env(data: Any, path: str = "") -> Any:
    """Replace whole-value ``$NAME`` / ``${NAME}`` strings; an unset one falls back to default."""
    if isinstance(data, dict):
        out = {}
        for key, value in data.items():
            expanded = _expand_env(value, f"{path}{key}.")
            if expanded is not _UNSET:
                out[key] = expanded
        return out
    if isinstance(data, str) and (match := _ENV_REF.match(data)):
        value = os.environ.get(match.group(1))
        if value is None:
            log.warning("config_env_unset", field=path.rstrip("."), variable=match.group(1))
            return _UNSET
        return value
    return data


_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def load_yaml_layer(path: Path) -> dict[str, Any]:
    """The ``memory:`` section of a ``config.yaml`` (or the whole file when it has none)."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:  # by position only: the line may hold a secret
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        # PyYAML's words quote the token they stopped at (an alias, an escape): left out
        problem = _QUOTED.sub("'…'", exc.problem or "")
        raise ConfigError(f"{path}: cannot be read as YAML{where}: {problem}") from None
    except yaml.YAMLError:
        raise ConfigError(f"{path}: cannot be read as YAML") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read as YAML: {exc}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: must be a mapping")
    section = doc.get("memory", doc)
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: 'memory' must be a mapping")
    layer: dict[str, Any] = _expand_env(section)
    _validate(layer, str(path))
    return layer


def _env_layer(yaml_layer: dict[str, Any], url: str | None) -> list[tuple[Source, dict[str, Any]]]:
    """What a Hindsight URL implies: the URL itself, and the provider unless the yaml names one."""
    layers: list[tuple[Source, dict[str, Any]]] = []
    if url:
        layers.append(("env", {"hindsight": {"api_url": url}}))
    if "provider" not in yaml_layer:
        if url:
            layers.append(("env", {"provider": "hindsight"}))
        elif "api_url" in (yaml_layer.get("hindsight") or {}):
            layers.append(("yaml", {"provider": "hindsight"}))
    return layers


async def _read_json_layer(path: Anchored) -> Any:
    return _parsed_layer(path, await _layer_bytes(path))


async def _layer_bytes(path: Anchored) -> bytes | None:
    try:
        return await read_bytes(path)
    except UnsafeFileError as exc:
        raise ConfigError(f"{path.relative}: cannot be read: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path.relative}: cannot be read: {exc.strerror}") from None


def _parsed_layer(path: Anchored, raw: bytes | None) -> Any:
    if raw is None:
        return {}
    try:
        return json.loads(raw.decode("utf-8-sig"))  # a BOM, as a Windows editor saves it
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path.relative}: not valid UTF-8 JSON: {exc}") from None


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What changes when a file is rewritten (``os.replace`` gives it a new inode)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


class ConfigLoader:
    """Builds a user's effective config.

    The yaml layer is read once. The override files are checked on every call
    (a ``stat`` each) and re-read only when they changed, so a change made by
    another process applies to the next event without a restart.
    """

    def __init__(
        self,
        layout: DataLayout,
        yaml_path: Path | None = None,
        *,
        hindsight_url: str | None = None,
        cache_size: int = 4096,
    ) -> None:
        self._layout = layout
        self._yaml = load_yaml_layer(yaml_path) if yaml_path is not None else {}
        self._env = _env_layer(self._yaml, hindsight_url)
        self._cache_size = cache_size
        self._cache: dict[str, tuple[tuple[Any, Any], EffectiveConfig]] = {}
        self._global_path = layout.global_overrides()
        self._user_paths: dict[str, Path] = {}

    def _user_path(self, user_id: str) -> Path:
        path = self._user_paths.get(user_id)
        if path is None:
            if len(self._user_paths) >= self._cache_size:
                self._user_paths.pop(next(iter(self._user_paths)))
            path = self._user_paths[user_id] = self._layout.user_config(user_id)
        return path

    def deployment(self) -> MemoryConfig:
        """The config before per-user overrides (which cannot change providers or URLs)."""
        merged: dict[str, Any] = {}
        for _, layer in [("yaml", self._yaml), *self._env]:
            merged = _deep_merge(merged, layer)
        return _validate(merged, "config")

    async def effective(self, user_id: str, *, strict: bool = True) -> EffectiveConfig:
        """``strict``: a bad override file raises :class:`ConfigError`. Otherwise (serving
        a user's agents) the bad layer is left out, logged and named in ``problems``:
        a broken toggle file must not take the user's memory away."""
        global_path = self._global_path
        user_path = self._user_path(user_id)
        stamps = (_stamp(global_path), _stamp(user_path))
        cached = self._cache.get(user_id)
        if cached is not None and cached[0] == stamps:
            effective = cached[1]
        else:
            effective = await self._build(global_path, user_path)
            if len(self._cache) >= self._cache_size:
                self._cache.pop(next(iter(self._cache)))
            self._cache[user_id] = (stamps, effective)
        if strict and effective.problems:
            raise ConfigError(effective.problems[0])
        return effective

    async def update_user(self, user_id: str, changes: Mapping[str, Any]) -> EffectiveConfig:
        """Apply ``changes`` (a merge patch) to the user's override file; the new effective config.

        A field off the whitelist, or a value its schema refuses, raises
        :class:`ConfigError` naming it and leaves the file as it was; so does a
        deployment-wide override file that cannot be used (the new config could not be
        shown). Callers serialise updates of one user (a read-modify-write of one file).
        """
        changes = _undotted(changes)
        await self._override_layer(self._global_path)
        path = self._layout.anchored(self._user_path(user_id))
        current, broken = await self._user_layer(path)
        stored = _flatten(current)
        for field, value in _flatten(changes).items():
            # a field off the whitelist that a hand or an older release left in the file
            # may be removed: it only goes, and the defaults come back
            left_in_file = value is None and _names(field, stored)
            if not left_in_file and not _names(field, USER_WRITABLE_FIELDS):
                raise _not_writable("the update", field)
        # what is stored is checked with the change applied: a change may be what puts a
        # stored value right (one a newer release refuses, as a bound tightened)
        merged = merge_patch(current, changes)
        for field in _flatten(merged):
            if field in stored and not _names(field, USER_WRITABLE_FIELDS):
                raise ConfigError(
                    f"{path.relative} holds field '{field}', which cannot be overridden "
                    f"per user: remove it first (set it to null) to update this file"
                )
        updated = check_override(merged, "the update")
        data = json.dumps(updated, ensure_ascii=False, indent=2, sort_keys=True).encode("utf-8")
        if broken is not None:  # kept beside once the update is known to replace it
            backup = path.sibling(f"{path.parts[-1]}.{time.time_ns()}.bak")
            await write_atomic(backup, broken)
            log.warning("config_file_set_aside", file=path.relative, backup=backup.relative)
        await write_atomic(path, data)
        return await self.effective(user_id)

    async def _user_layer(self, path: Anchored) -> tuple[dict[str, Any], bytes | None]:
        """What a user's override file holds, to update, and its bytes when it is no JSON
        object (cut short, hand-edited). Such a file is served as absent already: the
        update starts from nothing and keeps it beside as ``<name>.<ns>.bak``, so that
        the user can put it right through the API."""
        raw = await _layer_bytes(path)  # unreadable (a symlink, too big ...): refused
        try:
            current = _parsed_layer(path, raw)
        except ConfigError:
            current = None
        if isinstance(current, dict):
            return current, None
        assert raw is not None  # an absent file is an empty layer
        return {}, raw

    async def _override_layer(self, file: Path) -> dict[str, Any]:
        """An override file's checked layer; :class:`ConfigError` when it cannot be used."""
        anchored = self._layout.anchored(file)
        layer = await _read_json_layer(anchored)
        # named as in the data dir: the message reaches users, the host's path is not theirs
        return check_override(layer, anchored.relative)

    async def _build(self, global_path: Path, user_path: Path) -> EffectiveConfig:
        layers: list[tuple[Source, dict[str, Any]]] = [("yaml", self._yaml), *self._env]
        problems: list[str] = []
        overrides: list[tuple[Source, Path]] = [("global", global_path), ("user", user_path)]
        for source, file in overrides:
            try:
                layers.append((source, await self._override_layer(file)))
            except ConfigError as exc:
                log.error("config_layer_left_out", layer=source, error=str(exc))
                problems.append(str(exc))
        merged: dict[str, Any] = {}
        sources: dict[str, Source] = dict.fromkeys(leaf_paths(), "default")
        for source, layer in layers:
            merged = _deep_merge(merged, layer)
            for path in _flatten(layer):
                sources[path] = source
        return EffectiveConfig(
            config=_validate(merged, "merged config"), sources=sources, problems=tuple(problems)
        )

"""The four config layers, the whitelist and the source of every field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from memsvc.config import (
    USER_WRITABLE_FIELDS,
    ConfigError,
    ConfigLoader,
    MemoryConfig,
    leaf_paths,
    load_yaml_layer,
)
from memsvc.paths import DataLayout


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def yaml_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "memory:\n"
        "  provider: hindsight\n"
        "  builtin:\n    user_char_limit: 2000\n"
        "  injection:\n    max_tokens: 3000\n    include_hindsight: false\n"
        "  hindsight:\n    recall_budget: high\n",
        encoding="utf-8",
    )
    return path


async def test_defaults_match_the_documented_schema(layout: DataLayout) -> None:
    effective = await ConfigLoader(layout).effective("u1")
    cfg = effective.config
    assert cfg.builtin.user_char_limit == 1375 and cfg.builtin.memory_char_limit == 2200
    assert cfg.hindsight.memory_mode == "context" and cfg.hindsight.recall_budget == "mid"
    assert cfg.injection.context_tag == "memory-context"
    assert set(effective.sources.values()) == {"default"}
    assert set(effective.sources) == set(leaf_paths())


async def test_layers_merge_in_order_and_report_their_source(
    layout: DataLayout, yaml_file: Path
) -> None:
    write_json(
        layout.global_overrides(),
        {"injection": {"max_tokens": 1500}, "hindsight": {"memory_mode": "hybrid"}},
    )
    write_json(layout.user_config("u1"), {"injection": {"max_tokens": 800}})
    effective = await ConfigLoader(layout, yaml_file).effective("u1")
    cfg = effective.config
    assert cfg.provider == "hindsight" and effective.source_of("provider") == "yaml"
    assert (
        cfg.builtin.user_char_limit == 2000
        and effective.source_of("builtin.user_char_limit") == "yaml"
    )
    assert cfg.injection.max_tokens == 800 and effective.source_of("injection.max_tokens") == "user"
    assert cfg.hindsight.memory_mode == "hybrid"
    assert effective.source_of("hindsight.memory_mode") == "global"
    assert cfg.hindsight.recall_budget == "high"
    assert cfg.injection.include_hindsight is False
    assert effective.source_of("injection.include_builtin") == "default"


async def test_overrides_of_one_user_do_not_reach_another(layout: DataLayout) -> None:
    write_json(layout.user_config("u1"), {"injection": {"enabled": False}})
    loader = ConfigLoader(layout)
    assert (await loader.effective("u1")).config.injection.enabled is False
    assert (await loader.effective("u2")).config.injection.enabled is True


@pytest.mark.parametrize(
    "field",
    [
        "memory.enabled",
        "provider",
        "hindsight.api_url",
        "hindsight.api_key",
        "hindsight.bank_id_template",
        "builtin.user_char_limit",
        "security.scan_content",
    ],
)
async def test_a_user_override_of_a_protected_field_is_refused_by_name(
    layout: DataLayout, field: str
) -> None:
    data: dict[str, object] = {}
    node = data
    parts = field.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})  # type: ignore[assignment]
    node[parts[-1]] = "x"
    write_json(layout.user_config("u1"), data)
    with pytest.raises(ConfigError, match=f"field '{field}' cannot be overridden"):
        await ConfigLoader(layout).effective("u1")


async def test_a_stored_value_now_refused_can_be_put_right_by_the_update_that_changes_it(
    layout: DataLayout,
) -> None:
    """An override stored before a bound tightened: serving leaves the layer out (named in
    ``problems``), and the update that sets the field again is taken, not refused with it."""
    write_json(layout.user_config("u1"), {"injection": {"max_tokens": 2_000_000, "enabled": False}})
    loader = ConfigLoader(layout)
    served = await loader.effective("u1", strict=False)
    assert "injection.max_tokens" in served.problems[0]
    with pytest.raises(ConfigError, match=r"injection\.max_tokens"):  # another field alone
        await loader.update_user("u1", {"injection": {"include_hindsight": False}})
    fixed = await loader.update_user("u1", {"injection": {"max_tokens": 1000}})
    assert fixed.config.injection.max_tokens == 1000 and fixed.config.injection.enabled is False
    assert fixed.sources["injection.enabled"] == "user" and not fixed.problems


async def test_a_stored_field_off_the_whitelist_can_be_removed_by_an_update(
    layout: DataLayout,
) -> None:
    write_json(layout.user_config("u1"), {"security": {"scan_content": False}})
    loader = ConfigLoader(layout)
    with pytest.raises(ConfigError, match=r"security\.scan_content"):  # still never set
        await loader.update_user("u1", {"security": {"scan_content": True}})
    fixed = await loader.update_user("u1", {"security": None})
    assert fixed.config.security.scan_content is True and not fixed.problems
    assert json.loads(layout.user_config("u1").read_text()) == {}


async def test_an_update_of_another_field_names_the_stored_one_in_the_way(
    layout: DataLayout,
) -> None:
    """The user did not send the field that refuses the update: the file holds it."""
    write_json(layout.user_config("u1"), {"builtin": {"memory_char_limit": 9000}})
    loader = ConfigLoader(layout)
    with pytest.raises(ConfigError) as info:
        await loader.update_user("u1", {"injection": {"enabled": False}})
    said = str(info.value)
    assert said.startswith("users/u1/memory_config.json holds field 'builtin.memory_char_limit'")
    assert "set it to null" in said


async def test_an_update_may_name_a_field_as_the_whitelist_names_it(layout: DataLayout) -> None:
    """``{"injection.enabled": false}`` was refused as an unknown input, though it is how
    the whitelist, the config view and ``DELETE /config/{field}`` name the field."""
    loader = ConfigLoader(layout)
    updated = await loader.update_user(
        "u1", {"injection.enabled": False, "injection": {"max_tokens": 500}}
    )
    assert updated.config.injection.enabled is False
    assert updated.config.injection.max_tokens == 500
    assert json.loads(layout.user_config("u1").read_text()) == {
        "injection": {"enabled": False, "max_tokens": 500}
    }
    with pytest.raises(ConfigError, match=r"'builtin\.memory_char_limit' cannot be overridden"):
        await loader.update_user("u1", {"builtin.memory_char_limit": 1})
    cleared = await loader.update_user("u1", {"injection.enabled": None})
    assert cleared.config.injection.enabled is True


async def test_an_override_file_saved_with_a_bom_is_read_not_set_aside(
    layout: DataLayout,
) -> None:
    path = layout.user_config("u1")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"injection": {"enabled": False}}).encode())
    loader = ConfigLoader(layout)
    effective = await loader.effective("u1")
    assert effective.config.injection.enabled is False and not effective.problems
    updated = await loader.update_user("u1", {"injection": {"max_tokens": 500}})
    assert updated.config.injection.enabled is False  # the hand-set value still applies
    assert not list(path.parent.glob("*.bak"))


@pytest.mark.parametrize("broken", [b'{"injection": {"max_tokens": 500}', b"[]"])
async def test_a_broken_global_file_refuses_an_update_before_anything_is_written(
    layout: DataLayout, broken: bytes
) -> None:
    layout.global_overrides().parent.mkdir(parents=True, exist_ok=True)
    layout.global_overrides().write_bytes(broken)
    loader = ConfigLoader(layout)
    with pytest.raises(ConfigError, match=r"memory_user_overrides\.json"):
        await loader.update_user("u1", {"injection": {"enabled": False}})
    assert not layout.user_config("u1").exists()  # refused means not done
    served = await loader.effective("u1", strict=False)
    assert served.config.injection.enabled is True


@pytest.mark.parametrize("broken", [b'{"injection": {"enabled": false}', b'["x"]', b"\xff{}"])
async def test_a_users_broken_file_is_set_aside_by_an_update_that_puts_it_right(
    layout: DataLayout, broken: bytes
) -> None:
    """Serving leaves a broken file out already; an update starts from nothing and keeps
    the broken bytes beside, so the user can mend it through the API."""
    path = layout.user_config("u1")
    path.parent.mkdir(parents=True)
    path.write_bytes(broken)
    loader = ConfigLoader(layout)
    with pytest.raises(ConfigError):
        await loader.effective("u1")
    for refused in ({"security": {"scan_content": False}}, {"injection": {"max_tokens": -5}}):
        with pytest.raises(ConfigError):
            await loader.update_user("u1", refused)
    assert path.read_bytes() == broken  # refused: nothing set aside, nothing written
    assert not list(path.parent.glob("*.bak"))
    with capture_logs() as logs:
        fixed = await loader.update_user("u1", {"injection": {"enabled": False}})
    assert fixed.config.injection.enabled is False and not fixed.problems
    assert json.loads(path.read_text()) == {"injection": {"enabled": False}}
    (backup,) = path.parent.glob("memory_config.json.*.bak")
    assert backup.read_bytes() == broken
    assert [e["event"] for e in logs] == ["config_file_set_aside"]
    assert (await loader.update_user("u1", {"injection": None})).config.injection.enabled


async def test_global_overrides_are_held_to_the_whitelist_too(layout: DataLayout) -> None:
    write_json(layout.global_overrides(), {"security": {"scan_content": False}})
    with pytest.raises(
        ConfigError, match=r"memory_user_overrides\.json: field 'security\.scan_content'"
    ):
        await ConfigLoader(layout).effective("u1")


def test_the_whitelist_is_exactly_the_documented_fields() -> None:
    assert {
        "injection.enabled",
        "injection.max_tokens",
        "injection.include_builtin",
        "injection.include_hindsight",
        "hindsight.memory_mode",
        "hindsight.recall_budget",
        "hindsight.bank_mission",
    } == USER_WRITABLE_FIELDS
    assert set(leaf_paths()) >= USER_WRITABLE_FIELDS


@pytest.mark.parametrize(
    ("override", "path"),
    [
        ({"hindsight": {"memory_mode": "telepathy"}}, "hindsight.memory_mode"),
        ({"injection": {"max_tokens": -5}}, "injection.max_tokens"),
        ({"injection": {"max_tokens": "100"}}, "injection.max_tokens"),
        ({"injection": {"enabled": "yes"}}, "injection.enabled"),
        ({"injection": {"enabled": 1}}, "injection.enabled"),
    ],
)
async def test_invalid_override_values_name_the_path(
    layout: DataLayout, override: dict[str, object], path: str
) -> None:
    write_json(layout.user_config("u1"), override)
    with pytest.raises(ConfigError, match=path):
        await ConfigLoader(layout).effective("u1")


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("memory:\n  builtin:\n    memory_char_limit: 0\n", "builtin.memory_char_limit"),
        ("memory:\n  hindsight:\n    recall_budget: huge\n", "hindsight.recall_budget"),
        ("memory:\n  injection:\n    max_tokns: 5\n", "injection.max_tokns"),
        ("memory:\n  injection:\n    context_tag: 'bad tag>'\n", "injection.context_tag"),
        ("memory:\n  background_extraction:\n    enabled: true\n", "background_extraction"),
        ("memory:\n  builtin:\n    deduplicate_on_load: false\n", "deduplicate_on_load"),
    ],
)
def test_invalid_yaml_names_the_file_and_path(tmp_path: Path, text: str, path: str) -> None:
    file = tmp_path / "config.yaml"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_yaml_layer(file)
    assert str(file) in str(info.value) and path in str(info.value)


def test_broken_yaml_is_a_config_error(tmp_path: Path) -> None:
    file = tmp_path / "config.yaml"
    file.write_text("memory: [unclosed", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot be read as YAML"):
        load_yaml_layer(file)


@pytest.mark.parametrize(
    "text",
    [
        "memory:\n  hindsight:\n    api_key: *Sup3rS3cretKey\n",  # an alias never anchored
        'memory:\n  hindsight:\n    api_key: "Sup3r\\qS3cretKey"\n',  # an unknown escape
    ],
)
def test_broken_yaml_is_told_by_its_place_never_its_words(tmp_path: Path, text: str) -> None:
    """A secret's line may be the one that is broken: PyYAML quotes what it stopped at."""
    file = tmp_path / "config.yaml"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"at line 3, column \d+") as info:
        load_yaml_layer(file)
    assert "Sup3r" not in str(info.value) and "'q'" not in str(info.value)


async def test_broken_override_json_is_a_config_error(layout: DataLayout) -> None:
    path = layout.user_config("u1")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{\xff")
    with pytest.raises(ConfigError, match="not valid UTF-8 JSON"):
        await ConfigLoader(layout).effective("u1")


async def test_serving_a_user_leaves_a_broken_override_out_and_says_so(
    layout: DataLayout,
) -> None:
    write_json(layout.global_overrides(), {"injection": {"max_tokens": 900}})
    write_json(layout.user_config("u1"), {"builtin": {"user_char_limit": 99999}})
    effective = await ConfigLoader(layout).effective("u1", strict=False)
    assert effective.config.builtin.user_char_limit == 1375  # the refused field did not apply
    assert effective.config.injection.max_tokens == 900  # the valid layers still do
    (problem,) = effective.problems
    assert "builtin.user_char_limit" in problem and "cannot be overridden" in problem


def test_api_key_comes_from_the_environment_and_is_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HINDSIGHT_API_KEY", "hs-secret-123")
    file = tmp_path / "config.yaml"
    file.write_text("memory:\n  hindsight:\n    api_key: $HINDSIGHT_API_KEY\n", encoding="utf-8")
    cfg = MemoryConfig.model_validate(load_yaml_layer(file))
    assert cfg.hindsight.api_key is not None
    assert cfg.hindsight.api_key.get_secret_value() == "hs-secret-123"
    assert "hs-secret-123" not in repr(cfg) and "hs-secret-123" not in cfg.model_dump_json()


def test_an_unset_environment_reference_falls_back_to_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMSVC_TEST_UNSET_VAR", raising=False)
    file = tmp_path / "config.yaml"
    file.write_text(
        "memory:\n  hindsight:\n    api_key: ${MEMSVC_TEST_UNSET_VAR}\n", encoding="utf-8"
    )
    assert MemoryConfig.model_validate(load_yaml_layer(file)).hindsight.api_key is None


def test_a_yaml_without_a_memory_section_is_read_as_the_section(tmp_path: Path) -> None:
    file = tmp_path / "config.yaml"
    file.write_text("injection:\n  enabled: false\n", encoding="utf-8")
    assert load_yaml_layer(file) == {"injection": {"enabled": False}}


def test_the_default_hindsight_url_is_the_port_hindsight_listens_on() -> None:
    assert MemoryConfig().hindsight.api_url == "http://localhost:8888"


async def test_a_hindsight_url_in_the_environment_alone_turns_hindsight_on(
    layout: DataLayout,
) -> None:
    effective = await ConfigLoader(layout, hindsight_url="http://hs:9000").effective("u1")
    assert effective.config.provider == "hindsight" and effective.source_of("provider") == "env"
    assert effective.config.hindsight.api_url == "http://hs:9000"
    assert effective.source_of("hindsight.api_url") == "env"


async def test_a_hindsight_url_in_the_yaml_alone_turns_hindsight_on(
    layout: DataLayout, tmp_path: Path
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("memory:\n  hindsight:\n    api_url: http://hs:9000\n", encoding="utf-8")
    effective = await ConfigLoader(layout, path).effective("u1")
    assert effective.config.provider == "hindsight" and effective.source_of("provider") == "yaml"


async def test_the_environment_url_wins_over_the_yaml_but_provider_builtin_keeps_it_off(
    layout: DataLayout, tmp_path: Path
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "memory:\n  provider: builtin\n  hindsight:\n    api_url: http://yaml:1\n", encoding="utf-8"
    )
    effective = await ConfigLoader(layout, path, hindsight_url="http://env:2").effective("u1")
    assert effective.config.provider == "builtin" and effective.source_of("provider") == "yaml"
    assert effective.config.hindsight.api_url == "http://env:2"

"""bot.config: the file, the environment, and the messages for mistakes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.config import Config, load_config, parse_config
from bot.config_check import parse_section
from bot.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.toml"


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config()
    assert config.data_dir == tmp_path / "data"
    assert config.telegram.token == "" and config.telegram.group_scope == "chat"
    assert config.telegram.allowed_user_ids == () and config.telegram.flood_control
    assert not config.llm.enabled


def test_the_example_config_is_valid_and_documents_every_key() -> None:
    config = load_config(EXAMPLE, environ={})
    assert config.telegram.base_url == "https://api.telegram.org/bot"
    text = EXAMPLE.read_text("utf-8")
    for section in ("telegram", "llm", "digest", "replicas"):
        for key in Config.__dataclass_fields__[section].default_factory().__dataclass_fields__:  # type: ignore[misc]
            assert f"\n{key} =" in text or f"\n# {key} =" in text, f"{section}.{key}"


def test_a_file_with_every_kind_of_value(tmp_path: Path) -> None:
    path = tmp_path / "bot" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        'data_dir = "memories"\nlog_level = "DEBUG"\n'
        '[telegram]\ntoken = "1:file"\nallowed_user_ids = [1, 2]\ngroup_scope = "user"\n'
        "flood_control = false\n"
        '[llm]\napi_key = "sk-file"\nmodel = "qwen-plus"\ntimeout = 30\n'
    )
    config = load_config(path, environ={})
    assert config.data_dir == path.parent / "memories"  # relative to the file's folder
    assert config.log_level == "debug"
    assert config.telegram.allowed_user_ids == (1, 2) and config.telegram.group_scope == "user"
    assert config.llm.timeout == 30.0 and config.llm.enabled
    assert "1:file" not in repr(config) and "sk-file" not in repr(config)
    assert set(config.secrets()) == {"1:file", "sk-file"}


def test_the_environment_overrides_the_secrets(tmp_path: Path) -> None:
    environ = {
        "TELEGRAM_BOT_TOKEN": "2:env",
        "OPENAI_API_KEY": "sk-env",
        "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1",
    }
    config = parse_config({"telegram": {"token": "1:file"}}, base_dir=tmp_path, environ=environ)
    assert config.telegram.token == "2:env"
    assert config.llm.api_key == "sk-env" and config.llm.base_url == "http://127.0.0.1:11434/v1"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ('tokn = "x"', "unknown key tokn"),
        ('[telegram]\ntokn = "x"', "unknown key telegram.tokn"),
        ("[telegram]\nallowed_user_ids = 42", "telegram.allowed_user_ids must be a list"),
        ('[telegram]\nallowed_user_ids = ["42"]', "telegram.allowed_user_ids must be a list"),
        (
            '[telegram]\ngroup_scope = "all"',
            'telegram.group_scope must be "chat" or "user" or "topic"',
        ),
        ('[telegram]\nflood_control = "yes"', "telegram.flood_control must be true or false"),
        ("[llm]\ntimeout = 0", "llm.timeout must be a positive number"),
        ("[llm]\ntimeout = true", "llm.timeout must be a number"),
        ("[llm]\nmax_changes_per_turn = 25", "llm.max_changes_per_turn must be a whole number"),
        ('[llm]\nmax_changes_per_turn = "3"', "llm.max_changes_per_turn must be a whole number"),
        ('telegram = "x"', "telegram must be a table"),
        ("data_dir = 3", "data_dir must be a path"),
        ('log_level = "loud"', 'log_level must be "debug" or "info"'),
        ("[[telegram", "not valid TOML"),
        (
            "[telegram]\nhandler_deadline_seconds = 0",
            "telegram.handler_deadline_seconds must be a positive number",
        ),
        ('[replicas]\nidentity = "bot #1"', "replicas.identity: must be empty or 1 to 100"),
    ],
)
def test_mistakes_stop_start_up_naming_the_key(tmp_path: Path, document: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(document)
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    assert message in caught.value.message
    assert str(path) in caught.value.message


def test_a_replica_is_its_host_and_port_unless_named(tmp_path: Path) -> None:
    """Stable across restarts (the same host and port), and two replicas on one host differ
    (they listen on different ports); ``[replicas] identity`` names one explicitly."""
    one = parse_config({"telegram": {"port": 8443}}, base_dir=tmp_path)
    two = parse_config({"telegram": {"port": 8444}}, base_dir=tmp_path)
    assert one.replica_identity.endswith(":8443") and two.replica_identity.endswith(":8444")
    assert one.replica_identity.removesuffix(":8443") == two.replica_identity.removesuffix(":8444")
    named = parse_config({"replicas": {"identity": "bot1"}}, base_dir=tmp_path)
    assert named.replica_identity == "bot1"
    assert one.telegram.handler_deadline_seconds == 300.0  # a few minutes, model turns included


def test_an_explicit_path_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "missing.toml")


SECRET = "123456:SECRET-value_never-shown"


@pytest.mark.parametrize(
    "document",
    [
        f'[telegram]\ntoken = ["{SECRET}"]',
        f'[telegram]\ntoken = {{ value = "{SECRET}" }}',
        f"[telegram]\ntoken = {SECRET.split(':')[0]}",
        f'[llm]\napi_key = ["{SECRET}"]',
        f'[llm]\napi_key = {{ key = "{SECRET}" }}',
        f'telegram = "{SECRET}"',
        f'llm = ["{SECRET}"]',
    ],
)
def test_a_mistake_in_a_secret_never_shows_its_value(tmp_path: Path, document: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(document)
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    message = caught.value.message
    assert " must be " in message
    for part in (SECRET, SECRET.split(":")[0], SECRET.split(":")[1]):
        assert part not in message and part not in str(caught.value)


def test_every_key_named_like_a_secret_is_one() -> None:
    @dataclass(frozen=True)
    class Service:
        password: str = ""
        client_secret: str = ""
        auth_token: str = ""
        name: str = ""

    hidden = "hunter2-the-password"
    for key in ("password", "client_secret", "auth_token"):
        with pytest.raises(ConfigError) as caught:
            parse_section(Service, {key: [hidden]}, name="service")
        assert f"service.{key} must be text" in caught.value.message
        assert hidden not in caught.value.message
    with pytest.raises(ConfigError, match=hidden):  # an ordinary key still shows what it got
        parse_section(Service, {"name": [hidden]}, name="service")


def test_the_secrets_are_every_secret_key(tmp_path: Path) -> None:
    environ = {"TELEGRAM_BOT_TOKEN": " 2:env ", "OPENAI_API_KEY": "sk-env"}
    config = parse_config({}, base_dir=tmp_path, environ=environ)
    assert config.telegram.token == "2:env"  # the environment's value, stripped
    assert sorted(config.secrets()) == ["2:env", "sk-env"]
    assert "2:env" not in repr(config) and "sk-env" not in repr(config)


def test_storage_selects_postgresql_and_database_url_overrides_it(tmp_path: Path) -> None:
    assert parse_config({}, base_dir=tmp_path).store_location == tmp_path / "data"
    url = "postgresql://bot:s3cret-pw@db.example/cogito"
    config = parse_config({"storage": url}, base_dir=tmp_path)
    assert config.store_location == url
    assert url in config.secrets()  # redacted from every log line
    assert "s3cret" not in config.store_name
    other = "postgresql://bot:0ther-pw@db2.example/cogito"
    config = parse_config({"storage": url}, base_dir=tmp_path, environ={"DATABASE_URL": other})
    assert config.store_location == other and other in config.secrets()


@pytest.mark.parametrize("value", ["mysql://root:pw-not-shown@db/x", 5])
def test_a_bad_storage_is_refused_without_showing_it(tmp_path: Path, value: object) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"storage": value}, base_dir=tmp_path)
    assert "storage" in str(caught.value)
    assert "pw-not-shown" not in str(caught.value)


def test_an_unreachable_database_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    config = tmp_path / "config.toml"
    config.write_text(
        f'storage = "postgresql://bot:pw-kept-secret@/x?host={tmp_path}&connect_timeout=1"\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "bot", "--config", str(config), "console"],
        cwd=EXAMPLE.parent,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Cannot open the memory store" in done.stderr
    assert "Traceback" not in done.stderr and "pw-kept-secret" not in done.stderr


def test_media_keys_and_the_file_url() -> None:
    config = parse_config({}, base_dir=Path.cwd())
    assert config.telegram.file_url == "https://api.telegram.org/file/bot"
    assert not config.transcription.enabled and config.llm.vision is False
    local = parse_config(
        {
            "telegram": {"base_url": "http://127.0.0.1:8081/bot"},
            "llm": {"vision": True},
            "transcription": {"base_url": "http://127.0.0.1:8000/v1", "api_key": "sk-secret"},
        },
        base_dir=Path.cwd(),
    )
    assert local.telegram.file_url == "http://127.0.0.1:8081/file/bot"
    assert local.transcription.enabled and local.llm.vision
    assert "sk-secret" in local.secrets()
    with pytest.raises(ConfigError, match=r"transcription\.modle"):
        parse_config({"transcription": {"modle": "x"}}, base_dir=Path.cwd())

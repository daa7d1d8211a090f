"""The bot's configuration: ``config.toml`` read into frozen dataclasses.

Every key is documented in ``config.example.toml``. The file is read with ``tomllib`` and checked
against the dataclasses below, key by key: an unknown key, a value of the wrong type or one
out of range (a number, a choice, a cron expression or a time zone that ``metadata`` checks)
stops start-up with a message that names the key (``telegram.group_scope``), so a typo never
silently falls back to a default. A section is one dataclass; adding a key (or a section, for
a later feature) is adding a field with a default.

Secrets may stay out of the file: ``TELEGRAM_BOT_TOKEN``, ``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``TELEGRAM_WEBHOOK_SECRET`` and ``DATABASE_URL`` (the top-level
``storage``) override it, checked as the file's keys are. A key is secret when its
field says so (``metadata={"secret": True}``) or its name says so (a part ``token``, ``key``,
``secret``, ``password``...: ``api_key``, ``auth_token``); a message about a secret key names
the key and the type it got, never the value (a token pasted into the wrong place is still a
token), nor does one about a whole table, which may hold secrets. ``Config.secrets()``
collects the same keys' values for the log filter (``bot.logs``).

A relative ``data_dir`` is taken relative to the config file's folder (to the working directory
when there is no file), so the bot finds the same memories wherever it is started from.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import os
import re
import socket
import tomllib
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bot.errors import ConfigError
from bot.jobs.schedule import Schedule, parse_timezone

DEFAULT_PATH = Path("config.toml")
TELEGRAM_API = "https://api.telegram.org/bot"

# Environment variable -> (section, key) it overrides.
ENVIRONMENT = {
    "TELEGRAM_BOT_TOKEN": ("telegram", "token"),
    "OPENAI_API_KEY": ("llm", "api_key"),
    "OPENAI_BASE_URL": ("llm", "base_url"),
    "EMBEDDING_API_KEY": ("embedding", "api_key"),
    "TELEGRAM_WEBHOOK_SECRET": ("telegram", "secret_token"),
}
WEBHOOK_PATH = "/telegram"  # where updates are posted when webhook_url names no path
HEALTH_PATH = "/healthz"  # the webhook server's health checks (bot.chat.webhook) start here
LIVE_PATH = HEALTH_PATH + "/live"  # the process serves: for routing and restarts
READY_PATH = HEALTH_PATH + "/ready"  # it can store too: for monitoring (/healthz: the same)
WEBHOOK_SECRET_CHARS = re.compile(r"[A-Za-z0-9_-]{1,256}")  # what Telegram accepts
WEBHOOK_PORTS = (443, 80, 88, 8443)  # the ports Telegram's own server posts to
LOOPBACK = ("127.0.0.1", "localhost", "::1")  # where a plain-http webhook_url may point (tests)


def _choices(*values: str) -> dict[str, tuple[str, ...]]:
    return {"choices": values}


def _between(low: float, high: float) -> dict[str, tuple[float, float]]:
    return {"between": (low, high)}


def _checked(check: Callable[[str], object]) -> dict[str, Callable[[str], object]]:
    """A text value that ``check`` accepts (``ValueError`` says what is wrong with it)."""
    return {"check": check}


_SECRET_WORDS = frozenset({"token", "key", "secret", "password", "passwd", "credentials"})


def is_secret(spec: dataclasses.Field[Any]) -> bool:
    """Whether a key's value must never appear in a message or a log line."""
    declared = spec.metadata.get("secret")
    if declared is not None:
        return bool(declared)
    return any(part in _SECRET_WORDS for part in spec.name.lower().split("_"))


def _check_storage(location: str) -> object:
    # The value is a secret (a URL may hold a password): the reason must not quote it.
    if location and not location.lower().startswith(("postgresql://", "postgres://")):
        raise ValueError("storage must be empty or a postgresql:// URL")
    return location


REPLICA_IDENTITY = re.compile(r"[A-Za-z0-9._:-]{1,100}")


def _check_identity(identity: str) -> object:
    if identity and not REPLICA_IDENTITY.fullmatch(identity):
        raise ValueError(
            f"must be empty or 1 to 100 letters, digits, '.', '_', ':' or '-', not {identity!r}"
        )
    return identity


def _check_schedule(expression: str) -> object:
    # Whether a crontab expression fires does not depend on the time zone (checked on its own).
    return Schedule.parse(expression, UTC)


@dataclass(frozen=True)
class TelegramConfig:
    """``[telegram]``: how the bot reaches Telegram and who may use it."""

    token: str = field(default="", repr=False)
    base_url: str = TELEGRAM_API
    allowed_user_ids: tuple[int, ...] = ()
    admin_user_ids: tuple[int, ...] = ()
    group_scope: str = field(default="chat", metadata=_choices("chat", "user"))
    flood_control: bool = True
    base_file_url: str = ""  # where files are downloaded; "": base_url's last /bot -> /file/bot
    # Webhook mode (bot.chat.webhook) when set: the https URL Telegram posts updates to.
    webhook_url: str = ""
    listen: str = "0.0.0.0"
    port: int = field(default=8443, metadata=_between(1, 65535))
    secret_token: str = field(default="", repr=False)  # "": derived from the token
    max_connections: int = field(default=40, metadata=_between(1, 100))
    # Past this, an update's handling (model turns included) is cancelled and set aside.
    handler_deadline_seconds: float = field(default=300.0, metadata=_between(1, 86_400))

    @property
    def file_url(self) -> str:
        """``base_file_url``, or the one Telegram's own layout derives from ``base_url``."""
        if self.base_file_url:
            return self.base_file_url
        head, found, tail = self.base_url.rpartition("/bot")
        return f"{head}/file/bot{tail}" if found else self.base_url

    @property
    def webhook(self) -> bool:
        """Whether updates come by webhook (``webhook_url`` is set) rather than by polling."""
        return bool(self.webhook_url)

    @property
    def webhook_path(self) -> str:
        """The path the webhook server takes updates on: ``webhook_url``'s, or ``/telegram``."""
        path = urlsplit(self.webhook_url).path
        return path if path not in ("", "/") else WEBHOOK_PATH

    @property
    def webhook_endpoint(self) -> str:
        """The URL given to ``setWebhook``: ``webhook_url``, ending in ``/telegram`` when it
        names no path (Telegram posts to exactly this URL)."""
        parts = urlsplit(self.webhook_url)
        if parts.path not in ("", "/"):
            return self.webhook_url
        return parts._replace(path=WEBHOOK_PATH).geturl()

    @property
    def webhook_secret(self) -> str:
        """``secret_token``, or one derived from the bot token: every replica with the same
        token agrees on it without configuring one (HMAC-SHA256, 64 hex digits)."""
        if self.secret_token:
            return self.secret_token
        digest = hmac.new(self.token.encode(), b"cogito-webhook", hashlib.sha256)
        return digest.hexdigest()[:64]


@dataclass(frozen=True)
class LLMConfig:
    """``[llm]``: an OpenAI-compatible chat-completions endpoint (optional)."""

    base_url: str = "https://api.openai.com/v1"
    api_key: str = field(default="", repr=False)
    model: str = "gpt-4o-mini"
    timeout: float = 60.0
    retries: int = field(default=2, metadata=_between(0, 10))
    stream: bool = False
    max_rounds: int = field(default=5, metadata=_between(1, 20))
    history_messages: int = field(default=20, metadata=_between(0, 200))
    memory_tokens: int = field(default=1500, metadata=_between(0, 20000))
    max_changes_per_turn: int = field(default=3, metadata=_between(0, 24))
    vision: bool = False  # the model reads images: a photo without a caption is described

    @property
    def enabled(self) -> bool:
        """Whether free text goes to the model (a key is configured)."""
        return bool(self.api_key)


@dataclass(frozen=True)
class TranscriptionConfig:
    """``[transcription]``: an OpenAI-compatible ``/v1/audio/transcriptions`` (optional)."""

    base_url: str = ""
    api_key: str = field(default="", repr=False)
    model: str = "whisper-1"
    timeout: float = 60.0

    @property
    def enabled(self) -> bool:
        """Whether voice notes are transcribed (an endpoint is configured)."""
        return bool(self.base_url)


@dataclass(frozen=True)
class DigestConfig:
    """``[digest]``: the scheduled report of the most used memories (``bot.jobs.digest``)."""

    enabled: bool = True
    default: str = field(default="off", metadata=_choices("on", "off"))
    schedule: str = field(default="0 9 * * mon", metadata=_checked(_check_schedule))
    timezone: str = field(default="UTC", metadata=_checked(parse_timezone))
    top: int = field(default=5, metadata=_between(1, 50))
    stale_days: int = field(default=30, metadata=_between(1, 3650))
    grace_hours: float = 6.0


@dataclass(frozen=True)
class ReminderConfig:
    """``[reminders]``: ``/remind`` and its delivery (``bot.jobs.reminders``)."""

    timezone: str = field(default="UTC", metadata=_checked(parse_timezone))
    default_hour: int = field(default=9, metadata=_between(0, 23))
    grace_hours: float = 6.0


@dataclass(frozen=True)
class EmbeddingConfig:
    """``[embedding]``: search by meaning (``memory.hybrid``): offline model, endpoint or off."""

    provider: str = field(default="offline", metadata=_choices("offline", "endpoint", "off"))
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    model: str = ""
    dimensions: int = field(default=0, metadata=_between(0, 65536))
    send_dimensions: bool = True
    batch_size: int = field(default=32, metadata=_between(1, 2048))
    timeout: float = 10.0
    query_prefix: str = ""
    threads: int = field(default=0, metadata=_between(0, 64))  # 0: chosen per query


@dataclass(frozen=True)
class MemoryConfig:
    """``[memory]``: what the store keeps beside the memories (``memory.history``)."""

    history_days: int = field(default=90, metadata=_between(1, 36500))
    history_max: int = field(default=1000, metadata=_between(1, 1_000_000))

    def store_options(self) -> dict[str, int]:
        """The options of ``memory.open_store`` these keys set."""
        return {"history_days": self.history_days, "history_max": self.history_max}


@dataclass(frozen=True)
class ReplicasConfig:
    """``[replicas]``: several bot processes on one PostgreSQL store (``bot.chat.lanes``)."""

    lease_seconds: float = field(default=30.0, metadata=_between(1, 3600))
    poll_seconds: float = field(default=0.25, metadata=_between(0.01, 60))
    max_chats: int = field(default=64, metadata=_between(1, 10_000))
    # Who this replica is across restarts ("": the host name and [telegram] port).
    identity: str = field(default="", metadata=_checked(_check_identity))


@dataclass(frozen=True)
class Config:
    """The whole configuration."""

    data_dir: Path = Path("data")
    # A postgresql:// URL selects the PostgreSQL store (``memory.pg``); empty: files in data_dir.
    # Secret: the URL may hold the database's password (DATABASE_URL overrides it).
    storage: str = field(default="", metadata={"secret": True, "check": _check_storage})
    log_level: str = field(default="info", metadata=_choices("debug", "info", "warning", "error"))
    telegram: TelegramConfig = field(default_factory=TelegramConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    digest: DigestConfig = field(default_factory=DigestConfig)
    reminders: ReminderConfig = field(default_factory=ReminderConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    transcription: TranscriptionConfig = field(default_factory=TranscriptionConfig)
    replicas: ReplicasConfig = field(default_factory=ReplicasConfig)

    @property
    def store_location(self) -> str | Path:
        """What ``memory.open_store`` opens: ``storage`` if set, else ``data_dir``."""
        return self.storage or self.data_dir

    @property
    def replica_identity(self) -> str:
        """``[replicas] identity``, or this host's name and ``[telegram] port``: stable across
        restarts, and two replicas on one host listen on different ports."""
        if self.replicas.identity:
            return self.replicas.identity
        host = re.sub(r"[^A-Za-z0-9._-]+", "-", socket.gethostname()) or "localhost"
        return f"{host[:90]}:{self.telegram.port}"

    @property
    def store_name(self) -> str:
        """The store as a log line may name it (never the URL, which may hold a password)."""
        return "PostgreSQL (storage)" if self.storage else str(self.data_dir)

    def secrets(self) -> list[str]:
        """The values of every secret key (``is_secret``): they must never reach a log line."""
        found: list[str] = []
        sections = [self]
        while sections:
            section = sections.pop()
            for spec in dataclasses.fields(section):
                value = getattr(section, spec.name)
                if dataclasses.is_dataclass(value):
                    sections.append(typing.cast(Any, value))
                elif is_secret(spec) and isinstance(value, str) and value:
                    found.append(value)
        derived = self.telegram.webhook_secret  # from the token, when not configured
        if self.telegram.webhook and self.telegram.token and derived not in found:
            found.append(derived)
        return found


def load_config(path: Path | str | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Read ``path`` (default ``config.toml``, optional) and apply the environment overrides.

    An explicit ``path`` must exist; the default one may be missing (defaults apply).
    """
    environ = os.environ if environ is None else environ
    explicit = path is not None
    file = Path(path) if path is not None else DEFAULT_PATH
    data: dict[str, Any] = {}
    if file.exists() or explicit:
        try:
            with file.open("rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            raise ConfigError(f"no such file: {file}", source=str(file)) from None
        except OSError as e:
            raise ConfigError(f"cannot read it: {e.strerror}", source=str(file)) from e
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"not valid TOML: {e}", source=str(file)) from e
        base_dir = file.resolve().parent
    else:
        base_dir = Path.cwd()
    return parse_config(data, base_dir=base_dir, source=str(file), environ=environ)


def parse_config(
    data: Mapping[str, Any],
    *,
    base_dir: Path,
    source: str = "config",
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Check ``data`` (a parsed TOML document) and build the ``Config``."""
    config = _build(Config, data, prefix="", source=source)
    for variable, (section, key) in ENVIRONMENT.items():
        value = (environ or {}).get(variable, "").strip()
        if value:
            part = getattr(config, section)
            spec = {f.name: f for f in dataclasses.fields(part)}[key]
            hint = typing.get_type_hints(type(part))[key]
            checked = _convert(value, hint, spec, f"{section}.{key}", variable)
            config = dataclasses.replace(
                config, **{section: dataclasses.replace(part, **{key: checked})}
            )
    database_url = (environ or {}).get("DATABASE_URL", "").strip()
    if database_url:
        spec = {f.name: f for f in dataclasses.fields(Config)}["storage"]
        checked = _convert(database_url, str, spec, "storage", "DATABASE_URL")
        config = dataclasses.replace(config, storage=checked)
    if not config.data_dir.is_absolute():
        config = dataclasses.replace(config, data_dir=base_dir / config.data_dir)
    _check_embedding(config.embedding, source)
    _check_webhook(config.telegram, source)
    return config


def _check_webhook(telegram: TelegramConfig, source: str) -> None:
    """``webhook_url`` is a URL Telegram can post to; ``secret_token`` one Telegram takes."""
    if telegram.secret_token and not WEBHOOK_SECRET_CHARS.fullmatch(telegram.secret_token):
        raise ConfigError(
            "telegram.secret_token must be 1 to 256 characters, each a letter (A-Z, a-z), a "
            "digit, _ or - (as Telegram requires; the value is not shown: it is secret)",
            key="telegram.secret_token",
            source=source,
        )
    if not telegram.webhook_url:
        return

    def wrong(problem: str) -> ConfigError:
        message = f"telegram.webhook_url {problem}, not {telegram.webhook_url!r}"
        return ConfigError(message, key="telegram.webhook_url", source=source)

    try:
        parts = urlsplit(telegram.webhook_url)
        port = parts.port
    except ValueError as e:
        raise wrong(f"is not a URL ({e})") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise wrong("must be an https:// URL, such as https://bot.example.com/telegram")
    if parts.scheme == "http" and parts.hostname not in LOOPBACK:
        raise wrong("must be https:// (Telegram posts only over TLS; http only to 127.0.0.1)")
    if parts.fragment or parts.username or parts.password:
        raise wrong("must have no #fragment and no user name or password")
    path = telegram.webhook_path
    if path == HEALTH_PATH or path.startswith(HEALTH_PATH + "/"):
        raise wrong(f"must not end in {HEALTH_PATH} or a path under it: the health checks'")
    # Telegram's own server posts to four ports only; a self-hosted one (base_url) may differ.
    official = parts.scheme == "https" and telegram.base_url == TELEGRAM_API
    if official and port is not None and port not in WEBHOOK_PORTS:
        ports = ", ".join(map(str, WEBHOOK_PORTS))
        raise wrong(f"must use one of the ports Telegram posts to ({ports})")


def _check_embedding(embedding: EmbeddingConfig, source: str) -> None:
    """An endpoint needs its address, model and size (the size tags the stored vectors)."""
    if embedding.provider != "endpoint":
        return
    for key, missing in (
        ("base_url", not embedding.base_url),
        ("model", not embedding.model),
        ("dimensions", embedding.dimensions <= 0),
    ):
        if missing:
            name = f"embedding.{key}"
            raise ConfigError(
                f'{name} must be set when embedding.provider is "endpoint"', key=name, source=source
            )


_T = typing.TypeVar("_T")


def parse_section(
    cls: type[_T], table: Mapping[str, Any], *, name: str, source: str = "config"
) -> _T:
    """Check one table of the config (``[name]``) against its dataclass ``cls`` and build it."""
    return _build(cls, table, prefix=f"{name}.", source=source)


def _build(cls: type[_T], table: Mapping[str, Any], *, prefix: str, source: str) -> _T:
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if key not in fields:
            known = ", ".join(prefix + k for k in fields)
            raise ConfigError(f"unknown key {name} (known keys: {known})", key=name, source=source)
        values[key] = _convert(value, hints[key], fields[key], name, source)
    return cls(**values)


_TOML_TYPES = {
    str: "text",
    bool: "true or false",
    int: "a whole number",
    float: "a number",
    list: "a list",
    dict: "a table",
}


def _convert(value: Any, hint: Any, spec: dataclasses.Field[Any], name: str, source: str) -> Any:
    secret = is_secret(spec)

    def wrong(expected: str) -> ConfigError:
        # A secret's value, or a whole table's (it may hold secrets), is never shown.
        if secret or dataclasses.is_dataclass(hint):
            got = _TOML_TYPES.get(type(value), f"a {type(value).__name__}")
            got += " (the value is not shown: it is secret)" if secret else ""
        else:
            got = f"{value!r} ({type(value).__name__})"
        return ConfigError(f"{name} must be {expected}, not {got}", key=name, source=source)

    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise wrong(f"a table ([{name}])")
        return _build(typing.cast(type[Any], hint), value, prefix=f"{name}.", source=source)
    if hint is bool:
        if not isinstance(value, bool):
            raise wrong("true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("a whole number")
        between = spec.metadata.get("between")
        if between and not between[0] <= value <= between[1]:
            raise wrong(f"a whole number from {between[0]} to {between[1]}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise wrong("a number")
        if value <= 0:
            raise wrong("a positive number")
        between = spec.metadata.get("between")
        if between and not between[0] <= value <= between[1]:
            raise wrong(f"a number from {between[0]:g} to {between[1]:g}")
        return float(value)
    if hint is Path:
        if not isinstance(value, str) or not value:
            raise wrong("a path (text)")
        return Path(value).expanduser()
    if hint is str:
        if not isinstance(value, str):
            raise wrong("text")
        choices = spec.metadata.get("choices")
        if choices and value.lower() not in choices:
            raise wrong(" or ".join(f'"{c}"' for c in choices))
        check = spec.metadata.get("check")
        if check is not None:
            try:
                check(value)
            except ValueError as e:
                if secret:  # the reason may quote the value
                    problem = "is not valid (the value is not shown: it is secret)"
                    raise ConfigError(f"{name} {problem}", key=name, source=source) from None
                raise ConfigError(f"{name}: {e}", key=name, source=source) from e
        return value.lower() if choices else value
    if typing.get_origin(hint) is tuple and typing.get_args(hint) == (int, ...):
        if not isinstance(value, list) or not all(
            isinstance(item, int) and not isinstance(item, bool) for item in value
        ):
            raise wrong("a list of whole numbers (Telegram user ids)")
        return tuple(value)
    raise TypeError(f"no conversion for {name}: {hint!r}")  # a programming error, not the user's


__all__ = [
    "Config",
    "DigestConfig",
    "EmbeddingConfig",
    "LLMConfig",
    "ReminderConfig",
    "TelegramConfig",
    "TranscriptionConfig",
    "is_secret",
    "load_config",
    "parse_config",
    "parse_section",
]

"""The bot's configuration: ``config.toml`` read into frozen dataclasses.

Every key is documented in ``config.example.toml``. The file is read with ``tomllib`` and checked
against ``Config`` below and its sections (``bot.config_sections``), key by key: an unknown
key, a value of the wrong type or one out of range (a number, a choice, a cron expression or a
time zone that ``metadata`` checks) stops start-up with a message that names the key
(``telegram.group_scope``), so a typo never silently falls back to a default (the checking
itself: ``bot.config_check``); then what ties keys together (the webhook's URL, the calendar's,
an embedding endpoint's model and size) is checked here. A section is one dataclass; adding a
key (or a section, for a later feature) is adding a field with a default. The sections are
imported from here.

Secrets may stay out of the file: ``TELEGRAM_BOT_TOKEN``, ``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``TELEGRAM_WEBHOOK_SECRET`` and ``DATABASE_URL`` (the top-level
``storage``) override it, checked as the file's keys are. A key is secret when its
field says so (``metadata={"secret": True}``) or its name says so (``bot.config_check``); a
message about a secret key never shows its value (a token pasted into the wrong place is still
a token). ``Config.secrets()`` collects the same keys' values for the log filter
(``bot.logs``).

A relative ``data_dir`` is taken relative to the config file's folder (to the working directory
when there is no file), so the bot finds the same memories wherever it is started from.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bot.config_check import build, choices, convert, is_secret
from bot.config_sections import (
    TELEGRAM_API,
    CalendarConfig,
    DigestConfig,
    EmbeddingConfig,
    LLMConfig,
    MemoryConfig,
    ReminderConfig,
    ReplicasConfig,
    TelegramConfig,
    TidyConfig,
    TranscriptionConfig,
)
from bot.errors import ConfigError

DEFAULT_PATH = Path("config.toml")

# Environment variable -> (section, key) it overrides.
ENVIRONMENT = {
    "TELEGRAM_BOT_TOKEN": ("telegram", "token"),
    "OPENAI_API_KEY": ("llm", "api_key"),
    "OPENAI_BASE_URL": ("llm", "base_url"),
    "EMBEDDING_API_KEY": ("embedding", "api_key"),
    "TELEGRAM_WEBHOOK_SECRET": ("telegram", "secret_token"),
}
HEALTH_PATH = "/healthz"  # the webhook server's health checks (bot.chat.webhook) start here
LIVE_PATH = HEALTH_PATH + "/live"  # the process serves: for routing and restarts
READY_PATH = HEALTH_PATH + "/ready"  # it can store too: for monitoring (/healthz: the same)
WEBHOOK_SECRET_CHARS = re.compile(r"[A-Za-z0-9_-]{1,256}")  # what Telegram accepts
WEBHOOK_PORTS = (443, 80, 88, 8443)  # the ports Telegram's own server posts to
LOOPBACK = ("127.0.0.1", "localhost", "::1")  # where a plain-http webhook_url may point (tests)


def _check_storage(location: str) -> object:
    # The value is a secret (a URL may hold a password): the reason must not quote it.
    if location and not location.lower().startswith(("postgresql://", "postgres://")):
        raise ValueError("storage must be empty or a postgresql:// URL")
    return location


@dataclass(frozen=True)
class Config:
    """The whole configuration."""

    data_dir: Path = Path("data")
    # A postgresql:// URL selects the PostgreSQL store (``memory.pg``); empty: files in data_dir.
    # Secret: the URL may hold the database's password (DATABASE_URL overrides it).
    storage: str = field(default="", metadata={"secret": True, "check": _check_storage})
    log_level: str = field(default="info", metadata=choices("debug", "info", "warning", "error"))
    telegram: TelegramConfig = field(default_factory=TelegramConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    digest: DigestConfig = field(default_factory=DigestConfig)
    tidy: TidyConfig = field(default_factory=TidyConfig)
    reminders: ReminderConfig = field(default_factory=ReminderConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    transcription: TranscriptionConfig = field(default_factory=TranscriptionConfig)
    replicas: ReplicasConfig = field(default_factory=ReplicasConfig)
    calendar: CalendarConfig = field(default_factory=CalendarConfig)

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
    config = build(Config, data, prefix="", source=source)
    for variable, (section, key) in ENVIRONMENT.items():
        value = (environ or {}).get(variable, "").strip()
        if value:
            part = getattr(config, section)
            spec = {f.name: f for f in dataclasses.fields(part)}[key]
            hint = typing.get_type_hints(type(part))[key]
            checked = convert(value, hint, spec, f"{section}.{key}", variable)
            config = dataclasses.replace(
                config, **{section: dataclasses.replace(part, **{key: checked})}
            )
    database_url = (environ or {}).get("DATABASE_URL", "").strip()
    if database_url:
        spec = {f.name: f for f in dataclasses.fields(Config)}["storage"]
        checked = convert(database_url, str, spec, "storage", "DATABASE_URL")
        config = dataclasses.replace(config, storage=checked)
    if not config.data_dir.is_absolute():
        config = dataclasses.replace(config, data_dir=base_dir / config.data_dir)
    _check_embedding(config.embedding, source)
    _check_webhook(config.telegram, source)
    _check_calendar(config.calendar, config.telegram, source)
    return config


def _check_calendar(calendar: CalendarConfig, telegram: TelegramConfig, source: str) -> None:
    """``public_url`` is an http(s) URL, set when the feed has a server of its own, whose
    address is not the webhook's."""
    if calendar.public_url:
        try:
            parts = urlsplit(calendar.public_url)
            parts.port  # noqa: B018 (a port that is not a number is a ValueError)
        except ValueError as e:
            raise ConfigError(
                f"calendar.public_url is not a URL ({e})", key="calendar.public_url", source=source
            ) from None
        if parts.scheme not in ("https", "http") or not parts.hostname or parts.query:
            raise ConfigError(
                "calendar.public_url must be an http(s) URL without a query, such as "
                f"https://bot.example.com, not {calendar.public_url!r}",
                key="calendar.public_url",
                source=source,
            )
    if not calendar.listen:
        return
    if not calendar.public_url:
        raise ConfigError(
            "calendar.public_url must be set when calendar.listen is: the address calendar "
            "apps reach the feed at (such as https://bot.example.com)",
            key="calendar.public_url",
            source=source,
        )
    if telegram.webhook and calendar.port == telegram.port:
        raise ConfigError(
            f"calendar.port must differ from telegram.port ({telegram.port}); leave "
            "calendar.listen empty to serve the feed on the webhook's server",
            key="calendar.port",
            source=source,
        )


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


__all__ = [
    "CalendarConfig",
    "Config",
    "DigestConfig",
    "EmbeddingConfig",
    "LLMConfig",
    "MemoryConfig",
    "ReminderConfig",
    "ReplicasConfig",
    "TelegramConfig",
    "TidyConfig",
    "TranscriptionConfig",
    "load_config",
    "parse_config",
]

"""The sections of ``config.toml``: each ``[section]`` a frozen dataclass, each key a field.

A field's type, default and ``metadata`` (``choices``, ``between``, ``checked``: see
``bot.config_check``) are all there is to a key: ``bot.config`` builds the sections from the
file's tables, checks what ties keys of different sections together, and gathers them in its
``Config``; the rest of the bot imports them from there. Adding a key is adding a field with
a default here, and documenting it in ``config.example.toml``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass, field
from datetime import UTC
from urllib.parse import urlsplit

from bot.config_check import between, checked, choices
from bot.schedule import Schedule, parse_timezone

TELEGRAM_API = "https://api.telegram.org/bot"
WEBHOOK_PATH = "/telegram"  # where updates are posted when webhook_url names no path
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
    group_scope: str = field(default="chat", metadata=choices("chat", "user", "topic"))
    flood_control: bool = True
    base_file_url: str = ""  # where files are downloaded; "": base_url's last /bot -> /file/bot
    # Webhook mode (bot.chat.webhook) when set: the https URL Telegram posts updates to.
    webhook_url: str = ""
    listen: str = "0.0.0.0"
    port: int = field(default=8443, metadata=between(1, 65535))
    secret_token: str = field(default="", repr=False)  # "": derived from the token
    max_connections: int = field(default=40, metadata=between(1, 100))
    # Past this, an update's handling (model turns included) is cancelled and set aside.
    handler_deadline_seconds: float = field(default=300.0, metadata=between(1, 86_400))

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
    retries: int = field(default=2, metadata=between(0, 10))
    stream: bool = False
    max_rounds: int = field(default=5, metadata=between(1, 20))
    history_messages: int = field(default=20, metadata=between(0, 200))
    memory_tokens: int = field(default=1500, metadata=between(0, 20000))
    max_changes_per_turn: int = field(default=3, metadata=between(0, 24))
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
    default: str = field(default="off", metadata=choices("on", "off"))
    schedule: str = field(default="0 9 * * mon", metadata=checked(_check_schedule))
    timezone: str = field(default="UTC", metadata=checked(parse_timezone))
    top: int = field(default=5, metadata=between(1, 50))
    stale_days: int = field(default=30, metadata=between(1, 3650))
    grace_hours: float = 6.0


@dataclass(frozen=True)
class TidyConfig:
    """``[tidy]``: the nightly tidy of each chat's memories (``bot.jobs.tidy``)."""

    enabled: bool = True
    default: str = field(default="on", metadata=choices("on", "off"))
    schedule: str = field(default="30 3 * * *", metadata=checked(_check_schedule))
    grace_hours: float = field(default=6.0, metadata=between(0, 24))


@dataclass(frozen=True)
class ReminderConfig:
    """``[reminders]``: ``/remind`` and its delivery (``bot.jobs.reminders``)."""

    timezone: str = field(default="UTC", metadata=checked(parse_timezone))
    default_hour: int = field(default=9, metadata=between(0, 23))
    grace_hours: float = 6.0


@dataclass(frozen=True)
class EmbeddingConfig:
    """``[embedding]``: search by meaning (``memory.hybrid``): offline model, endpoint or off."""

    provider: str = field(default="offline", metadata=choices("offline", "endpoint", "off"))
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    model: str = ""
    dimensions: int = field(default=0, metadata=between(0, 65536))
    send_dimensions: bool = True
    batch_size: int = field(default=32, metadata=between(1, 2048))
    timeout: float = 10.0
    query_prefix: str = ""
    threads: int = field(default=0, metadata=between(0, 64))  # 0: chosen per query


@dataclass(frozen=True)
class MemoryConfig:
    """``[memory]``: what the store keeps beside the memories (``memory.history``)."""

    history_days: int = field(default=90, metadata=between(1, 36500))
    history_max: int = field(default=1000, metadata=between(1, 1_000_000))

    def store_options(self) -> dict[str, int]:
        """The options of ``memory.open_store`` these keys set."""
        return {"history_days": self.history_days, "history_max": self.history_max}


@dataclass(frozen=True)
class ReplicasConfig:
    """``[replicas]``: several bot processes on one PostgreSQL store (``bot.chat.lanes``)."""

    lease_seconds: float = field(default=30.0, metadata=between(1, 3600))
    poll_seconds: float = field(default=0.25, metadata=between(0.01, 60))
    max_chats: int = field(default=64, metadata=between(1, 10_000))
    # Who this replica is across restarts ("": the host name and [telegram] port).
    identity: str = field(default="", metadata=checked(_check_identity))


@dataclass(frozen=True)
class CalendarConfig:
    """``[calendar]``: ``/calendar``'s subscription feed of a chat's reminders
    (``bot.chat.calendar_feed``): served on the webhook's server in webhook mode, or on a
    server of its own when ``listen`` is set."""

    enabled: bool = True
    public_url: str = ""  # where calendar apps reach the feed; "": the webhook_url's host
    listen: str = ""  # "": no server of its own; an address: one, in polling mode too
    port: int = field(default=8080, metadata=between(1, 65535))

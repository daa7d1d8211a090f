"""Logging for the bot process, with its secrets kept out of every line.

The Bot API puts the token in the URL (``https://api.telegram.org/bot<token>/getMe``) and
httpx logs request URLs at INFO, so a token reaches a log file unless something stops it.
Two layers: httpx's logger is set to WARNING (no request lines), and ``SecretFilter``, installed
on every handler of the root logger, replaces each secret (the bot token, the LLM key, and their
URL-encoded forms) by ``[REDACTED]`` in the message, its arguments and any traceback text.

A network failure is one line, not a traceback: python-telegram-bot logs some of its own (the
last ``getUpdates`` on the way out, with Telegram unreachable) with ``logger.exception``;
``NetworkErrorFilter`` puts the error at the end of the message and drops the traceback, which
says nothing more than "the network was down".

Nothing here runs at import time; ``configure_logging`` is called by ``python -m bot``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from urllib.parse import quote

from telegram.error import BadRequest, NetworkError

REDACTED = "[REDACTED]"
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "apscheduler")  # httpx2: the openai SDK's


class SecretFilter(logging.Filter):
    """Replace secrets in log records (message, arguments, traceback, stack)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        forms = {form for s in secrets if s for form in (s, quote(s, safe=""), quote(s))}
        # Longest first, so that a secret containing another is replaced whole.
        self.secrets = sorted(forms, key=len, reverse=True)

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced."""
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite ``record`` in place; never drops it."""
        if not self.secrets:
            return True
        message = record.getMessage()
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


class NetworkErrorFilter(logging.Filter):
    """Log a record carrying a network error (not a request Telegram refused) as one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite ``record`` in place; never drops it."""
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, NetworkError) and not isinstance(error, BadRequest):
            record.msg, record.args = (
                f"{record.getMessage()} ({type(error).__name__}: {error})",
                None,
            )
            record.exc_info = record.exc_text = None
        return True


def configure_logging(level: str, secrets: Iterable[str]) -> SecretFilter:
    """Log to stderr at ``level`` with ``secrets`` redacted; returns the installed filter."""
    root = logging.getLogger()
    if not root.handlers:
        stream = logging.StreamHandler(sys.stderr)
        stream.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(stream)
    root.setLevel(level.upper())
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    secret_filter = SecretFilter(secrets)
    for handler in root.handlers:
        handler.addFilter(NetworkErrorFilter())  # first: the secret filter sees what is printed
        handler.addFilter(secret_filter)
    return secret_filter

"""``python -m bot``: run the bot on Telegram (polling or webhook), or ``python -m bot console``.

    python -m bot [--config PATH]                      # Telegram: needs a bot token
    python -m bot [--config PATH] console [--user-id N] [--lang en|zh] [--config PATH]
    python -m bot --or-console                         # Telegram, or the console if no token

The configuration is ``config.toml`` (see ``config.example.toml``) or ``--config PATH``, with
``TELEGRAM_BOT_TOKEN``, ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` from the environment on top.
Without a token the bot explains how to get one and how to try the console, and exits with
status 2 (with ``--or-console``, what ``make run`` uses, it opens the console instead, after a
one-line hint); a configuration error exits with status 2 and names the key. Without a network it
keeps trying to reach the Bot API (one log line per attempt, ``bot.chat.app.until_reachable``) until
it can, or until Ctrl-C or SIGTERM, which stop it cleanly at any point.

With ``[telegram] webhook_url`` set it serves a webhook instead of polling (``bot.chat.webhook``):
its own web server on ``listen``:``port`` takes the updates Telegram posts, and ``setWebhook``
tells Telegram where (retried like the rest); a stop never deletes the webhook.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.config import Config, load_config
from bot.errors import ConfigError
from bot.logs import SecretFilter, configure_logging

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from bot.chat.app import BotApplication
    from memory.interface import Store

log = logging.getLogger("bot")

POLL_TIMEOUT = 10  # seconds a getUpdates long poll waits for news (run_polling's default)

NO_TOKEN = """\
No Telegram bot token is configured, so the bot cannot connect to Telegram.

To run it on Telegram:
  1. In Telegram, open a chat with @BotFather, send /newbot and follow the steps;
     it answers with a token such as 123456789:AAE...
  2. Put it in the config:  cp config.example.toml config.toml  and set
     [telegram] token = "...",  or export TELEGRAM_BOT_TOKEN=...
  3. Run python -m bot (or make run) again.

To try the bot right now, without Telegram, in this terminal:
  python -m bot console
"""


NO_TOKEN_CONSOLE = (
    "No Telegram bot token in {config} or TELEGRAM_BOT_TOKEN yet, so this is the local console; "
    "python -m bot explains how to get one."
)


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__.split("\n")[0])
    parser.add_argument("--config", help="the TOML config (default: config.toml, if present)")
    parser.add_argument(
        "--or-console",
        action="store_true",
        help="without a Telegram token, open the console instead of exiting (make run)",
    )
    modes = parser.add_subparsers(dest="mode")
    console = modes.add_parser("console", help="talk to the bot in this terminal, no Telegram")
    # Also after the mode (python -m bot console --config PATH); SUPPRESS keeps a --config given
    # before it when none comes after.
    console.add_argument("--config", default=argparse.SUPPRESS, help="the TOML config")
    console.add_argument(
        "--user-id",
        type=int,
        help="who you are (default: the first admin or allowed user of the config, else 1)",
    )
    console.add_argument(
        "--lang", choices=("en", "zh"), help="reply language (default: from $LANG)"
    )
    return parser


def make_llm(config: Config) -> AsyncOpenAI | None:
    """The language model's client, when a key is configured."""
    if not config.llm.enabled:
        return None
    from bot.assistant.llm import make_client  # openai is loaded only when configured

    return make_client(config.llm.base_url, config.llm.api_key, config.llm.timeout)


async def serve(application: BotApplication, config: Config) -> None:
    """Serve ``application`` (polling, or by webhook as ``config`` says) until SIGINT or
    SIGTERM, then stop it cleanly.

    The first signal cancels this task wherever it is (waiting for the network at start-up,
    polling, serving the webhook), and ``serving`` shuts everything down; later signals are
    ignored so that they cannot cut that shutdown short.
    """
    from bot.chat.running import serving
    from bot.chat.webhook import inbox_server

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    stopping = False

    def stop() -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            log.info("stopping")
            task.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop)
    telegram = config.telegram
    try:
        if telegram.webhook:
            log.info(
                "webhook mode: Telegram posts to %s; listening on %s:%d",
                telegram.webhook_endpoint,
                telegram.listen,
                telegram.port,
            )
            async with serving(application, webhook=inbox_server(application)):
                log.info("serving the webhook")
                await asyncio.Event().wait()  # until a signal
        else:
            async with serving(application, poll_timeout=POLL_TIMEOUT):
                log.info("polling Telegram")
                await asyncio.Event().wait()  # until a signal
    except asyncio.CancelledError:
        if not stopping:
            raise


def open_configured_store(config: Config) -> Store | None:
    """The configured store (searching by meaning as ``[embedding]`` says), or None after
    telling why it cannot be opened (stderr)."""
    from bot.assistant.embeddings import make_embedder
    from memory import MemoryStoreError, open_store

    try:
        return open_store(
            config.store_location,
            embedder=make_embedder(config.embedding),
            **config.memory.store_options(),
        )
    except MemoryStoreError as e:
        reason = SecretFilter(config.secrets()).redact(e.message)
        print(f"Cannot open the memory store: {reason}", file=sys.stderr)
        return None


def run_telegram(config: Config) -> int:
    """Poll Telegram, or serve its webhook, until interrupted (Ctrl-C, SIGTERM)."""
    from telegram.error import InvalidToken, TelegramError

    from bot.chat.app import build_application
    from bot.chat.calendar_feed import ListenFailed
    from memory import MemoryStoreError

    if not config.telegram.allowed_user_ids:
        log.warning(
            "telegram.allowed_user_ids is empty: anyone who finds the bot can use it. "
            "Set it to your Telegram user id (the bot shows it to users it refuses)."
        )
    store = open_configured_store(config)
    if store is None:
        return 1
    try:
        store.claim_serving()  # a data directory serves one bot process (its inbox)
    except MemoryStoreError as e:
        store.close()
        print(f"Cannot serve the bot: {e.message}", file=sys.stderr)
        return 1
    application = build_application(config, store, make_llm(config))
    log.info("starting; memories in %s", config.store_name)
    try:
        asyncio.run(serve(application, config))
    except InvalidToken:
        print(
            "Telegram refused the bot token (Unauthorized). Check telegram.token or\n"
            "TELEGRAM_BOT_TOKEN; @BotFather shows a bot's token again with /token.",
            file=sys.stderr,
        )
        return 2
    except TelegramError as e:  # a request Telegram rejects at start-up: waiting will not help
        print(
            f"The Bot API at {config.telegram.base_url} refused to start the bot: "
            f"{SecretFilter(config.secrets()).redact(e.message)}\n"
            "Check telegram.base_url and the bot's settings with @BotFather.",
            file=sys.stderr,
        )
        return 1
    except MemoryStoreError as e:  # a live replica is this one already, or the database failed
        reason = SecretFilter(config.secrets()).redact(e.message)
        print(f"Cannot serve the bot: {reason}", file=sys.stderr)
        return 1
    except ListenFailed as e:  # the calendar feed's own server ([calendar] listen)
        print(
            f"Cannot listen on {config.calendar.listen}:{config.calendar.port} for the "
            f"calendar feed: {e.strerror or e}\nCheck calendar.listen and calendar.port.",
            file=sys.stderr,
        )
        return 1
    except OSError as e:  # the webhook server's address: in use, or not this machine's
        if not config.telegram.webhook:
            raise
        print(
            f"Cannot listen on {config.telegram.listen}:{config.telegram.port} for the webhook: "
            f"{e.strerror or e}\nCheck telegram.listen and telegram.port.",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:  # Ctrl-C before the signal handlers were installed
        return 130
    return 0


def run_console(config: Config, user_id: int | None, language: str | None) -> int:
    """Talk to the bot on stdin/stdout until end of input."""
    from bot.chat import console, terminal

    telegram = config.telegram
    user_id = user_id or next(iter(telegram.admin_user_ids + telegram.allowed_user_ids), 1)
    if language is None:
        locale = os.environ.get("LC_ALL") or os.environ.get("LANG") or ""
        language = "zh" if locale.lower().startswith("zh") else "en"
    print(
        f"Cogito console: you are user {user_id} (memories in {config.data_dir}/users/{user_id}).\n"
        "Type /help to start. Reminders and the digest are printed here when they come; every "
        "message has a number: /press N presses button N, /reply M text replies to message #M. "
        'A note of several lines goes between """ and """; end with Ctrl-D.',
        file=sys.stderr,
    )
    store = open_configured_store(config)
    if store is None:
        return 1
    session = console.Console(
        config,
        store,
        make_llm(config),
        user_id=user_id,
        language=language,
        out=sys.stdout,
    )
    try:
        tty = sys.stdin.isatty()
        asyncio.run(terminal.run_console(session, sys.stdin, prompt=tty, editing=tty))
    except KeyboardInterrupt:
        print(file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    # python-telegram-bot 22 warns (PTBDeprecationWarning) in its own RetryAfter on every 429
    # unless time periods are opted in to its v23 type, timedelta; the bot reads none of them.
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    try:
        config = load_config(args.config)
    except ConfigError as e:
        print(f"configuration error: {e.message}", file=sys.stderr)
        return 2
    if args.mode == "console":
        configure_logging("warning", config.secrets())
        return run_console(config, args.user_id, args.lang)
    if not config.telegram.token and args.or_console:
        print(NO_TOKEN_CONSOLE.format(config=args.config or "config.toml"), file=sys.stderr)
        configure_logging("warning", config.secrets())
        return run_console(config, None, None)
    configure_logging(config.log_level, config.secrets())
    if not config.telegram.token:
        print(NO_TOKEN, file=sys.stderr, end="")
        return 2
    return run_telegram(config)


if __name__ == "__main__":
    sys.exit(main())

"""The scheduled jobs, run on python-telegram-bot's JobQueue: the digest, the reminders and the
nightly tidy.

``digest`` sends each chat's report once per scheduled time (``bot.schedule``), on what each
namespace wants (``digest_plan``) and claims shared by replicas (``digest_claims``).
``reminders`` sends reminders on time, once: its index (``reminder_index``), one sender per
chat (``chat_senders``), Telegram's answers (``reminder_send``), the memory each reminder is
kept as (``reminder_memory``). ``tidy`` tidies each namespace once a night, what it tells the
chat is ``tidy_report``, and its setting and last run, which the digest mentions, are
``tidy_settings``. Imports ``bot.core``, ``bot.view`` and ``memory``; the doors in ``bot.chat``
register the jobs and offer /digest and /tidy.
"""

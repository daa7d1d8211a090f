"""The scheduled jobs, run on python-telegram-bot's JobQueue: the digest (reminders next).

``schedule`` reads cron expressions and time zones, ``report`` builds a digest's text, ``digest``
keeps each chat's setting and sends the reports once per scheduled time. Imports ``bot.core``,
``bot.view`` and ``memory``; the doors in ``bot.chat`` register the jobs and offer /digest.
"""

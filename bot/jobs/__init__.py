"""The scheduled jobs, run on python-telegram-bot's JobQueue: the digest and the reminders.

``report`` builds a digest's text, ``digest`` keeps each chat's setting and sends the reports
once per scheduled time (``bot.schedule``). ``reminders`` sends reminders on time, once (its
index ``reminder_index``, one sender per chat ``chat_senders``, Telegram's answers
``reminder_send``, the messages ``reminder_view``). Imports ``bot.core``, ``bot.view`` and
``memory``; the doors in ``bot.chat`` register the jobs and offer /digest.
"""

"""How the bot speaks: its languages (``i18n``, its strings in ``*_strings`` and
``media_text``), memories as Telegram HTML (``render``), the model's Markdown made safe
(``markdown``), replies that always reach the chat (``replies``), the one way a time is written
(``times``), and the views of the reminders (``reminder_view``) and of the digest
(``digest_view``).

Imports the bot's basics and the values of ``bot.core`` (a reminder, a zone's name); the doors
(``bot.chat``) and the jobs (``bot.jobs``) use it, the model (``bot.assistant``) does not.
"""

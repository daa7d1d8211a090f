"""How the bot speaks: its languages, memories as Telegram HTML, its buttons, its times.

- Languages: ``i18n`` (the table of strings), with those of one subject each beside it:
  ``help_strings``, ``reminder_strings``, ``zone_strings``, ``problem_strings``,
  ``change_strings``, ``digest_strings``, ``export_strings``, ``offer_strings``,
  ``update_strings`` (updates and the tidy), ``media_text``.
- Rendering: ``render`` (memories as Telegram HTML), ``markdown`` (the model's Markdown made
  safe), ``replies`` (replies that always reach the chat), ``times`` (the one way a time is
  written), ``reminder_view`` and ``digest_view`` (the reminders and the digest).
- Buttons: ``callbacks``, the one table of callback data.

Imports the bot's basics and the values of ``bot.core`` (a reminder, a zone's name); the doors
(``bot.chat``) and the jobs (``bot.jobs``) use it, the model (``bot.assistant``) does not.
"""

"""The Telegram doors: the application, commands, buttons, free text, the console.

Everything that knows an ``Update``. The doors parse, call ``bot.core`` (or the assistant, or a
job), and render with ``bot.view``; no storage or ranking logic lives here. May import every
other part of ``bot``; nothing imports it but ``bot.__main__``.

- Wiring and lifecycle: ``app`` (every handler, start and stop), ``running`` (the application
  run against the Bot API: connect, poll or serve the webhook, stop), ``services`` (what
  handlers share), ``failures`` (the one error handler).
- Who acts: ``access`` (the allow list, the namespace, the gatekeeper), ``presses`` (every
  button press's prologue).
- Commands and buttons: ``commands``, ``buttons``, ``choices``, ``confirmations``,
  ``versions`` (/undo, /history), ``reminding`` and ``reminder_buttons``, ``offering`` and
  ``offer_answers`` (a reminder offered for what people say they will do), ``timezones``,
  ``welcome`` (/start, /help), ``exports`` (/export md|ics, /calendar) and ``calendar_feed``
  (the calendar link served over HTTP), ``tidying`` (/tidy and its questions).
- Messages: ``messages`` (free text), ``noting`` (notes without a model), ``conversation``
  (with one), ``media``, ``incoming``, ``attachments``, ``bursts``, ``edits``, ``imports``,
  ``inline``.
- Updates in and out: ``inbox`` and ``updates`` (every update once, in order per chat),
  ``deadlines`` (a hung handler cut short and set aside), ``lanes`` (shared by replicas) and
  ``steps`` (their queue's statements sent together), ``webhook`` and ``connections`` (the
  HTTP server, its health checks), ``pacing`` (Telegram's limits).
- The console: ``console``, ``terminal``, ``local_api``.
"""

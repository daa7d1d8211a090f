"""The Telegram doors: the application, commands, buttons, free text, the console.

Everything that knows an ``Update``: who acts and whether they may (``access``), the handlers
(``commands``, ``buttons``, ``confirmations``, ``messages``, ``conversation``), the wiring and
lifecycle (``app``), the inbox of updates and their order (``inbox``, ``updates``), and the local
console. The doors parse, call ``bot.core`` (or the assistant, or a job), and render with
``bot.view``; no storage or ranking logic lives here. May import every other part of ``bot``.
"""

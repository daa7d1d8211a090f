"""The Telegram adapter over ``memory``: commands, free text through an LLM, scheduled jobs.

Its parts, each importing only those below it (``tests/test_boundaries.py`` holds it):

- the doors, ``chat``: everything that knows a Telegram ``Update``;
- the jobs on the JobQueue, ``jobs``, and the language model, ``assistant``;
- how the bot speaks, ``view``;
- what every door shares, ``core``: who may do what, the memory operations, times;
- the basics, below all of them: the configuration (``config``, its sections
  ``config_sections``, checked by ``config_check``), the errors (``errors``), the log
  (``logs``), the known categories (``categories``), cron schedules and time zones
  (``schedule``), the container's command (``deploy``); and ``__main__``, ``python -m bot``,
  which opens the store and starts the application.
"""

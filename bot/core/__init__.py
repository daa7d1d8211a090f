"""What every door shares: who acts and what they may do, the memory operations, user input.

Commands, buttons, the model's tools and the jobs all go through here, so that there is one
permission rule, one parser for what people type, and one view of a memory for the outside.
Imports only ``memory`` and the bot's basics (``bot.config``, ``bot.errors``): never Telegram,
never the language model, never another part of ``bot``.

- Who may do what: ``policy`` (the one permission rule), ``tokens`` (what waits for a press),
  ``topics`` (a forum topic's own namespace).
- The memory operations: ``operations`` (remember as given, recall and what answers, forget,
  edit, related, list, stats, export), ``adding`` (remember, with near-duplicates and updates
  that replace), ``tidying`` (the nightly tidy), ``undoing`` (undo, versions, restore),
  ``imports`` (a memory file), ``workers`` (the threads they run in).
- Other formats: ``markdown_export``, ``markdown_import`` and ``note_archive`` (memories as
  Markdown, a .zip of notes), ``calendar_export`` and ``calendar_feeds`` (reminders as
  iCalendar, the private links).
- What people type: ``entry`` (a command's text), ``intents`` (a plain message), ``keywords``
  (tags picked) and ``chinese_words`` (the words of Chinese text, for them), ``dating`` (the
  dates a note or question names), ``offers`` and ``hints`` (💾 Remember this, the /remember
  hint).
- Times: ``when`` (a phrase read into a ``Due``), ``due`` (the value), ``time_text`` (how a
  time is written), ``timephrase``, ``timecalendar`` and ``timewords`` (reading the words),
  ``offsets``, ``places`` and ``places_build`` (time zones by name), ``chat_zones`` and
  ``zone_moves`` (a chat's zone).
- Reminders: ``reminders`` and ``reminder_record`` (kept, who may change them), ``delivery``
  (claimed, sent, released), ``lease`` (claims shared by replicas), ``pacing`` (Telegram's
  flood limits, kept); ``plans`` and ``planwords`` (what a person says they will do, and
  when), ``reminder_offers`` (a reminder offered, waiting for a Yes).
"""

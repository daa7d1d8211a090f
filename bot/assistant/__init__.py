"""The assistant: free text through a language model that uses the memory operations as tools.

The model client (``llm``), the system prompt (``prompt``), the tool schemas (``tools``) and
the check of a call's arguments against them (``arguments``), the turn's executor
(``executor``) with its limits (``limits``), one turn (``turn``), and what a turn keeps: the
recent dialogue and usage (``dialogue``), the undo of its changes and what waits for
confirmation (``changes``), the reminders it sets (``reminder_desk``). Beside it: the
embedder the configuration asks for (``embeddings``) and a voice note's words and a photo's
description (``senses``). Imports ``bot.core`` and ``memory``; knows nothing of Telegram
(``bot.chat.conversation`` is the door that turns a message into a turn and the turn into a
reply).
"""

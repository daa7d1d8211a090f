"""The assistant: free text through a language model that uses the memory operations as tools.

The model client (``llm``), the system prompt (``prompt``), the tool schemas (``tools``) and the
turn's executor (``executor``), one turn (``turn``), and what a turn keeps: conversation history
and usage (``dialogue``), the undo of its changes and what waits for confirmation (``changes``).
Imports ``bot.core`` and ``memory``; knows nothing of Telegram (``bot.chat.conversation`` is the
door that turns a message into a turn and the turn into a reply).
"""

"""How the bot speaks: its languages (``i18n``), memories as Telegram HTML (``render``), the
model's Markdown made safe (``markdown``) and replies that always reach the chat (``replies``).

Imports nothing of the bot but its basics; every other part may use it.
"""

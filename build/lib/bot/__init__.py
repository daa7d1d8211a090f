"""The Telegram adapter over ``memory``: commands, free text through an LLM, scheduled jobs."""

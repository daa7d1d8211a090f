"""What every door shares: who acts and what they may do, the memory operations, user input.

Commands, buttons, the model's tools and the jobs all go through here, so that there is one
permission rule, one parser for what people type, and one view of a memory for the outside.
Imports only ``memory`` and the bot's basics (``bot.config``, ``bot.errors``): never Telegram,
never the language model.
"""

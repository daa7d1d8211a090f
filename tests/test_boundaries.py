"""The layering of DESIGN.md: ``memory`` is a library that knows nothing of Telegram or LLMs."""

from __future__ import annotations

import subprocess
import sys


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_importing_memory_leaves_telegram_and_openai_out() -> None:
    loaded = _modules_after("import memory, memory.store, memory.ranking")
    assert "memory" in loaded
    assert not {"telegram", "openai"} & loaded


def test_importing_bot_works() -> None:
    loaded = _modules_after("import bot, memory")
    assert {"bot", "memory"} <= loaded

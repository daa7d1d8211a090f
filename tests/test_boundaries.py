"""The layering of DESIGN.md: ``memory`` is a library that knows nothing of Telegram or LLMs."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path


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


# The file backend's modules: bot/ reaches the store through ``memory.interface`` only.
FILE_BACKEND = {"memory.files", "memory.journal", "memory.documents", "memory.namespace"}
FILE_BACKEND |= {"memory.store", "memory.records", "memory.salvage"}
# The one place bot/ opens the store (with ``memory.open_store``, from ``config.data_dir``).
OPENS_THE_STORE = {"bot/__main__.py"}


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports, and ``module.name`` for each ``from module import name``;
    with ``path`` and ``data_dir`` for every attribute of those names it reads."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in ("path", "data_dir"):
            found.add(node.attr)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_bot_imports_no_file_backend_module_and_opens_the_store_in_one_place() -> None:
    root = Path(__file__).resolve().parent.parent
    modules = sorted((root / "bot").rglob("*.py"))
    assert len(modules) > 20
    for path in modules:
        name = path.relative_to(root).as_posix()
        imports = _imports(path)
        assert not imports & FILE_BACKEND, f"{name} imports the file backend"
        if name not in OPENS_THE_STORE:
            assert "memory.open_store" not in imports, f"{name} opens a store"
            if name != "bot/config.py":  # which reads data_dir from the config file
                assert not {"path", "data_dir"} & imports, f"{name} reads a path"
    assert "open_store(config.data_dir)" in (root / "bot/__main__.py").read_text("utf-8")

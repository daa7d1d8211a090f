"""The layering of DESIGN.md: ``memory`` is a library that knows nothing of Telegram or LLMs."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_importing_memory_leaves_telegram_and_openai_out() -> None:
    loaded = _modules_after("import memory, memory.files, memory.ranking")
    assert "memory" in loaded
    assert not {"telegram", "openai"} & loaded


def test_the_command_line_leaves_the_optional_mcp_package_out() -> None:
    """``mcp`` (an extra, with a web stack) is imported by ``python -m memory ... mcp`` only."""
    loaded = _modules_after("import memory, memory.cli")
    assert "memory.cli" in loaded
    assert not {"mcp", "mcp_types", "memory.mcp_server"} & loaded


def test_importing_bot_works() -> None:
    loaded = _modules_after("import bot, memory")
    assert {"bot", "memory"} <= loaded


# The backends' packages: bot/ reaches the store through ``memory.interface`` only.
BACKENDS = ("memory.files", "memory.pg")
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
        backends = {m for m in imports if any(_within(m, b) for b in BACKENDS)}
        assert not backends, f"{name} imports a backend: {sorted(backends)}"
        if name not in OPENS_THE_STORE:
            assert "memory.open_store" not in imports, f"{name} opens a store"
            # The configuration reads data_dir from the file, and its sections a URL's path.
            if name not in ("bot/config.py", "bot/config_sections.py"):
                assert not {"path", "data_dir"} & imports, f"{name} reads a path"
    # One place, from the config: storage (a postgresql:// URL) or data_dir (bot.config), with
    # the embedder and the options of [memory] (the history's retention) after it.
    assert "open_store(\n            config.store_location," in (
        root / "bot/__main__.py"
    ).read_text("utf-8")


# -- the parts of bot/ and what each may import (docs/architecture.md) ---------------------
# From the bottom: the basics, core, view, then the assistant and the jobs (side by side), and
# the doors (chat) on top. No arrow runs back up, and nothing below chat imports it.

ROOT = Path(__file__).resolve().parents[1]
# The bot's basics, below every part: they import nothing of bot/ but each other.
BASICS = ("bot.config", "bot.config_sections", "bot.config_check", "bot.errors", "bot.logs")
BASICS += ("bot.categories", "bot.schedule", "bot.deploy")
PARTS = ("bot.core", "bot.view", "bot.assistant", "bot.jobs", "bot.chat")
# For each part: the parts of bot/ (and the outside packages) it must never import.
FORBIDDEN = {
    **{basic: {*PARTS, "openai"} for basic in BASICS},
    "bot.core": {"bot.chat", "bot.assistant", "bot.jobs", "bot.view", "telegram", "openai"},
    "bot.view": {"bot.chat", "bot.assistant", "bot.jobs", "openai"},
    "bot.assistant": {"bot.chat", "bot.jobs", "bot.view", "telegram"},
    "bot.jobs": {"bot.chat", "bot.assistant", "openai"},
}


def _imports_by_module(package: str = "bot") -> dict[str, set[str]]:
    """Every module of ``package`` and the modules it imports (``TYPE_CHECKING`` ones and
    those imported inside a function included)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module)
                imported.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        found[name] = imported
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_each_part_of_bot_imports_only_what_it_may() -> None:
    imports = _imports_by_module()
    assert any(_within(m, "bot.core") for m in imports), "the parts were not found"
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in imports.items()
        for part, forbidden in FORBIDDEN.items()
        if _within(module, part)
        for target in targets
        if any(_within(target, f) for f in forbidden)
    )
    assert wrong == []


def test_bot_has_no_import_cycles() -> None:
    assert _cycles(_imports_by_module("bot")) == []


def _cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The import circles among ``imports``' modules, each as the path that closes it."""
    graph = {m: {t for t in ts if t in imports and t != m} for m, ts in imports.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            # A package's __init__ importing its own modules is not a cycle of design.
            if _within(target, module) and target != module:
                continue
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_benchmarks_never_import_the_tests() -> None:
    for path in sorted((ROOT / "bench").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not _within(node.module, "tests"), path
            elif isinstance(node, ast.Import):
                assert not any(_within(a.name, "tests") for a in node.names), path


def test_each_package_of_bot_names_all_its_modules_and_only_them() -> None:
    """A package's docstring is the map a newcomer reads first: every lower-case ``name`` in it
    is one of its modules (or a top-level package), and every module is named."""
    outside = {"bot", "memory", "telegram", "openai"}
    for init in sorted((ROOT / "bot").rglob("__init__.py")):
        folder = init.parent
        modules = {p.stem for p in folder.glob("*.py")} - {"__init__"}
        modules |= {p.parent.name for p in folder.glob("*/__init__.py")}
        docstring = ast.get_docstring(ast.parse(init.read_text("utf-8"))) or ""
        named = set(re.findall(r"``([a-z_][a-z0-9_]*)``", docstring)) - outside
        missing, unnamed = sorted(named - modules), sorted(modules - named)
        assert named == modules, f"{folder.name}: no such module {missing}, not named {unnamed}"


# -- the layers of memory/ (docs/architecture.md) ---------------------------------------------

# From the bottom up: a module imports modules of its own layer or of a layer below, never
# one above. Each backend (``memory.files``, ``memory.pg``) implements the port of the core
# (``memory.backend``) and imports nothing of the other. A module is listed by its name, or by
# its package's.
MEMORY_LAYERS = [
    # values, text, errors: what everything uses
    {
        "memory.errors",
        "memory.text",
        "memory.jsontext",
        "memory.timestamps",
        "memory.model",
        "memory.ids",
        "memory.names",
        "memory.backoff",
        "memory.views",
    },
    {"memory.history", "memory.rules"},
    # search: keywords, meaning, duplicates, relevance
    {
        "memory.indexfile",
        "memory.termindex",
        "memory.maxscore",
        "memory.bm25",
        "memory.ranking",
        "memory.hybrid",
    },
    {"memory.facts"},
    {"memory.relevance"},
    {"memory.updates"},
    {"memory.duplicates", "memory.embedding"},
    # the interface (Protocols, and the values they pass), and what speaks only of it
    {"memory.queue"},
    {"memory.interface", "memory.documents", "memory.vectors", "memory.meaning"},
    # the core: one Namespace over the port
    {"memory.held", "memory.backend", "memory.namespace"},
    # the backends
    {"memory.files", "memory.pg"},
    # what opens a store, and the command line
    {"memory.open", "memory.migrate", "memory.mcp_server"},
    {"memory.cli", "memory.__main__", "memory"},
]
MEMORY_BACKENDS = ("memory.files", "memory.pg")


def _memory_layer(module: str) -> int:
    for level, layer in enumerate(MEMORY_LAYERS):
        if module in layer or any(_within(module, p) for p in layer if p != "memory"):
            return level
    raise AssertionError(f"{module} is in no layer of MEMORY_LAYERS: add it")


def test_memory_has_no_import_cycles() -> None:
    imports = _imports_by_module("memory")
    assert len(imports) > 30, "the modules of memory/ were not found"
    assert _cycles(imports) == []


def test_each_layer_of_memory_imports_only_what_is_below_it() -> None:
    imports = _imports_by_module("memory")
    layers = {module: _memory_layer(module) for module in imports}
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in imports.items()
        for target in targets
        if target in imports and layers[target] > layers[module]
    )
    assert wrong == []


def test_the_backends_of_memory_share_nothing() -> None:
    imports = _imports_by_module("memory")
    for module, targets in imports.items():
        for backend, other in (MEMORY_BACKENDS, MEMORY_BACKENDS[::-1]):
            if _within(module, backend):
                assert not [t for t in targets if _within(t, other)], module


# What changes a namespace's memories (``memory.interface.MemoryNamespace``).
CHANGES_MEMORIES = {"add", "add_unique", "update", "delete", "import_memories", "restore"}
CHANGES_MEMORIES |= {"revert", "touch"}
_A_NAMESPACE = re.compile(r"(?:^|\.|\b)(?:namespace|ns)(?:\(.*\))?$")


def test_the_doors_change_memories_only_through_bot_core() -> None:
    """Commands, buttons and the other doors (``bot/chat``) change memories through the one
    layer of operations (``bot.core``: operations, adding, undoing, imports), with who acts as
    the Caller, never by calling a namespace's own changing methods."""
    wrong = []
    for path in sorted((ROOT / "bot" / "chat").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            receiver = ast.unparse(node.func.value)
            if node.func.attr in CHANGES_MEMORIES and _A_NAMESPACE.search(receiver):
                wrong.append(f"{path.name}:{node.lineno} {receiver}.{node.func.attr}()")
    assert wrong == []


# A module a newcomer can read in one sitting (issue 25): none longer than this, and only the
# few that are already past the second mark may stay there.
MOST_LINES = 600
LONG_LINES = 450
LONG_ALLOWED = 3


def test_no_module_is_too_long_to_read() -> None:
    root = Path(__file__).resolve().parent.parent
    lengths = {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for package in ("bot", "memory", "bench")
        for path in (root / package).rglob("*.py")
    }
    assert {name: n for name, n in lengths.items() if n > MOST_LINES} == {}
    long = {
        name: n for name, n in lengths.items() if n > LONG_LINES and name.split("/")[0] != "bench"
    }
    assert len(long) <= LONG_ALLOWED, long

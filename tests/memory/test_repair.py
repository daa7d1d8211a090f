"""``python -m memory repair``: a broken file's memories back into the namespace, from a shell.

The scenario of the issue: one trailing comma in a hand edit makes ``memory.json`` unparseable;
the store moves it aside and starts empty; ``import`` of the quarantined file refused it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
NS = "users/42"


def memory_cli(data_dir: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory", "--data-dir", str(data_dir), "--ns", NS, *map(str, args)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def ok_json(data_dir: Path, *args: object) -> Any:
    done = memory_cli(data_dir, "--json", *args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def records(count: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "content": f"memory {i}", "tags": ["t"], "category": "work"}
        for i in range(1, count + 1)
    ]


def hand_edited(count: int) -> str:
    """The namespace's file after a person added a field with a trailing comma to memory 2."""
    text = json.dumps(records(count), indent=2)
    return text.replace('"memory 2",', '"memory 2",\n    "note": "checked",', 1).replace(
        '"category": "work"\n  }', '"category": "work",\n  }', 1
    )


def test_repair_brings_back_every_memory_of_a_hand_edit_with_a_trailing_comma(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    (data / NS).mkdir(parents=True)
    broken = hand_edited(5)
    (data / NS / "memory.json").write_text(broken, encoding="utf-8")

    listed = memory_cli(data, "--json", "list")  # the store moves the file aside
    assert json.loads(listed.stdout) == []
    assert "repair" in listed.stderr
    (moved,) = (data / NS).glob("memory.json.corrupt-*")

    refused = memory_cli(data, "import", moved)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "MEMORY_INVALID" in refused.stderr and f"repair {moved}" in refused.stderr

    result = ok_json(data, "repair")
    assert result == {
        "file": str(moved),
        "recovered": 5,
        "present": 0,
        "unreadable": 0,
        "unreadableLines": [],
    }
    assert [m["id"] for m in ok_json(data, "list")] == [1, 2, 3, 4, 5]
    assert moved.read_text(encoding="utf-8") == broken  # the copy stays as it was

    again = ok_json(data, "repair", moved)
    assert (again["recovered"], again["present"]) == (0, 5)


def test_repair_of_a_damaged_file_says_what_it_could_not_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ok_json(data, "add", "already here")
    existing = ok_json(data, "list")[0]
    damaged = tmp_path / "damaged.json"
    text = json.dumps([existing, *records(4)], indent=2)
    text = text.replace('"memory 3"', '"memory 3" @@@', 1)  # garbage inside memory 3
    damaged.write_text(text[: text.rindex('"memory 4"')], encoding="utf-8")  # and a cut tail

    done = memory_cli(data, "repair", damaged)
    assert done.returncode == 0, done.stderr
    assert "recovered: 2" in done.stdout and "present: 1" in done.stdout
    assert "unreadable: 2" in done.stdout
    bad_line = text.splitlines().index('    "content": "memory 3" @@@,') + 1
    assert f"{bad_line - 2}-" in done.stdout.split("unreadableLines: ")[1]
    assert [m["content"] for m in ok_json(data, "list")] == ["already here", "memory 1", "memory 2"]


def test_import_of_a_deeply_nested_file_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    done = memory_cli(data, "import", deep)
    assert done.returncode == 1
    assert done.stderr.startswith("error [MEMORY_INVALID]: ") and "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_a_deeply_nested_memory_json_is_reported_like_any_unreadable_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / NS).mkdir(parents=True)
    (data / NS / "memory.json").write_text("[" * 100_000, encoding="utf-8")
    done = memory_cli(data, "--json", "list")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    (moved,) = (data / NS).glob("memory.json.corrupt-*")
    assert f"moved aside to {moved}" in done.stderr and "Traceback" not in done.stderr


def test_repair_without_a_quarantined_file_says_so(tmp_path: Path) -> None:
    done = memory_cli(tmp_path / "data", "repair")
    assert done.returncode == 1
    assert "MEMORY_INVALID" in done.stderr and "memory.json.corrupt-*" in done.stderr

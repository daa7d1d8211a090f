"""``python -m memory``: every command once, as a shell user runs it: through ``main`` in this
process (as llm's tests use ``CliRunner``), and in a real child process where the entry point
itself is what is tested (``python -m memory``, its exit status and messages)."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
NS = "users/42"
ARTICLE_KEYS = ["id", "content", "tags", "category", "createdAt", "accessedAt", "accessCount"]

WALKTHROUGH = [
    {
        "id": 1,
        "content": "代码在 D:\\projects",
        "tags": ["代码", "路径", "项目"],
        "category": "general",
        "createdAt": "2024-01-15T10:30:00.000Z",
        "accessedAt": "2024-01-15T10:30:00.000Z",
        "accessCount": 0,
    },
    {
        "id": 2,
        "content": "今天天气很好",
        "tags": ["天气"],
        "category": "general",
        "createdAt": "2024-01-15T10:31:00.000Z",
        "accessedAt": "2024-01-15T10:31:00.000Z",
        "accessCount": 0,
    },
    {
        "id": 3,
        "content": "周五下午三点开会",
        "tags": ["项目", "会议"],
        "category": "work",
        "createdAt": "2024-01-15T10:32:00.000Z",
        "accessedAt": "2024-01-15T10:32:00.000Z",
        "accessCount": 0,
    },
]


def memory_cli(data_dir: Path, *args: object, ns: str = NS) -> subprocess.CompletedProcess[str]:
    """``python -m memory --data-dir DATA_DIR --ns NS ARGS...``, run in this process through
    ``memory.cli.main`` (as ``python -m memory`` calls it), with its output captured."""
    argv = ["--data-dir", str(data_dir), "--ns", ns, *map(str, args)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as e:  # argparse refusing the command line
            status = e.code if isinstance(e.code, int) else 1
    return subprocess.CompletedProcess(argv, status, out.getvalue(), err.getvalue())


def ok_json(data_dir: Path, *args: object, ns: str = NS) -> Any:
    done = memory_cli(data_dir, "--json", *args, ns=ns)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return json.loads(done.stdout)


def failure(data_dir: Path, *args: object, ns: str = NS) -> str:
    """The stderr of a command that must fail, checked for a clean, short message."""
    done = memory_cli(data_dir, "--json", *args, ns=ns)
    assert done.returncode != 0
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    return done.stderr


@pytest.fixture
def article_file(tmp_path: Path) -> Path:
    path = tmp_path / "article.json"
    path.write_text(json.dumps(WALKTHROUGH, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def test_add_get_update_delete_in_json(tmp_path: Path) -> None:
    data = tmp_path / "data"
    added = ok_json(
        data, "add", "Standup is at 10:00", "--tags", "Work, daily,work", "--category", "Team"
    )
    assert list(added) == ARTICLE_KEYS
    assert added["content"] == "Standup is at 10:00"
    assert (added["tags"], added["category"], added["accessCount"]) == (
        ["work", "daily"],
        "team",
        0,
    )

    assert ok_json(data, "get", added["id"]) == added

    updated = ok_json(data, "update", added["id"], "--content", "Standup moved to 10:30")
    assert updated["content"] == "Standup moved to 10:30"
    assert updated["tags"] == ["work", "daily"]
    assert "updatedAt" in updated

    assert ok_json(data, "delete", added["id"]) == updated
    assert "MEMORY_NOT_FOUND" in failure(data, "get", added["id"])


def test_import_search_related_list_stats_and_export(tmp_path: Path, article_file: Path) -> None:
    data = tmp_path / "data"
    assert ok_json(data, "import", article_file) == {"imported": 3}
    assert ok_json(data, "import", article_file) == {"imported": 0}
    assert ok_json(data, "export") == WALKTHROUGH

    hits = ok_json(data, "search", "代码项目", "--ranker", "seed")
    assert [(hit["id"], hit["score"]) for hit in hits] == [(1, 20), (3, 5)]
    assert list(hits[0]) == [*ARTICLE_KEYS, "score"]
    assert hits[0]["accessCount"] == 1
    default = ok_json(data, "search", "代码项目", "--limit", "1")
    assert [hit["id"] for hit in default] == [1]
    assert default[0]["score"] > 0

    related = ok_json(data, "related", 1)
    # The article's weights: memory 2 shares the category (+2), memory 3 the tag 项目 (+1).
    assert [(hit["id"], hit["score"]) for hit in related] == [(2, 2), (3, 1)]
    assert ok_json(data, "list") == ok_json(data, "export")
    assert [m["id"] for m in ok_json(data, "list", "--category", "WORK")] == [3]

    stats = ok_json(data, "stats")
    assert stats["total"] == 3
    assert stats["byCategory"] == {"general": 2, "work": 1}
    assert stats["topTags"]["项目"] == 2
    # The article's top 5 by accessCount (the bot's /stats leaves out the unused memory 2).
    assert [(m["id"], m["accessCount"]) for m in stats["mostAccessed"]] == [(1, 2), (3, 1), (2, 0)]


def test_export_round_trips_through_import(tmp_path: Path, article_file: Path) -> None:
    data = tmp_path / "data"
    ok_json(data, "import", article_file)
    ok_json(data, "add", "standup at 10:00", "--tags", "work")
    exported = memory_cli(data, "export")  # JSON even without --json: it is a file format
    assert exported.returncode == 0, exported.stderr
    assert "代码在 D:\\\\projects" in exported.stdout  # Chinese as is, not \\u escapes
    copy = tmp_path / "export.json"
    copy.write_text(exported.stdout, encoding="utf-8")
    assert ok_json(data, "import", copy, ns="users/43") == {"imported": 4}
    assert ok_json(data, "export", ns="users/43") == json.loads(exported.stdout)


def test_without_json_the_output_is_a_readable_table(tmp_path: Path, article_file: Path) -> None:
    data = tmp_path / "data"
    ok_json(data, "import", article_file)
    listing = memory_cli(data, "list")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert len(lines) == 3
    assert "代码在 D:\\projects" in lines[0] and "1" in lines[0].split()
    assert "[work]" in lines[2]
    with pytest.raises(json.JSONDecodeError):
        json.loads(listing.stdout)

    found = memory_cli(data, "search", "代码项目", "--ranker", "seed")
    assert found.returncode == 0, found.stderr
    first, second = found.stdout.splitlines()
    assert "20" in first and "代码在 D:\\projects" in first
    assert "5" in second and "周五下午三点开会" in second

    stats = memory_cli(data, "stats")
    assert stats.returncode == 0, stats.stderr
    assert "total: 3" in stats.stdout


@pytest.mark.parametrize(
    ("args", "ns", "code"),
    [
        (("get", "abc"), NS, "MEMORY_INVALID"),
        (("get", "1e309"), NS, "MEMORY_INVALID"),
        (("delete", "99"), NS, "MEMORY_NOT_FOUND"),
        (("add", "   "), NS, "MEMORY_INVALID"),
        (("add", "x", "--tags", ",".join(f"t{i}" for i in range(21))), NS, "MEMORY_INVALID"),
        (("search", "x", "--limit", "0"), NS, "MEMORY_INVALID"),
        (("search", "x", "--limit", "many"), NS, "MEMORY_INVALID"),
        (("update", "1"), NS, "MEMORY_INVALID"),
        (("list",), "../escape", "NAMESPACE_INVALID"),
        (("list",), "/abs", "NAMESPACE_INVALID"),
        (("import", "does-not-exist.json"), NS, "MEMORY_INVALID"),
    ],
)
def test_errors_go_to_stderr_with_their_code(
    tmp_path: Path, args: tuple[str, ...], ns: str, code: str
) -> None:
    data = tmp_path / "data"
    stderr = failure(data, *args, ns=ns)
    assert code in stderr
    assert len(stderr.splitlines()) == 1


def test_an_invalid_import_file_is_refused_whole(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([WALKTHROUGH[0], {"id": 5}]), encoding="utf-8")
    assert "MEMORY_INVALID" in failure(data, "import", bad)
    not_a_list = tmp_path / "object.json"
    not_a_list.write_text('{"id": 1, "content": "x"}', encoding="utf-8")
    assert "MEMORY_INVALID" in failure(data, "import", not_a_list)
    assert ok_json(data, "list") == []


def in_process(
    capsys: pytest.CaptureFixture[str], data_dir: Path, *args: object
) -> tuple[int, Any, str]:
    """``python -m memory --data-dir DATA_DIR --ns NS --json ARGS...`` run in this process:
    the exit status, the JSON printed (None if nothing) and stderr."""
    status = main(["--data-dir", str(data_dir), "--ns", NS, "--json", *map(str, args)])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out else None, err


def test_import_renumbers_ids_from_the_far_future_and_refuses_ids_that_are_no_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    path = tmp_path / "far.json"
    for bad, said in [
        (-1, "not a memory id: -1 (out of range)"),
        (0, "not a memory id: 0 (out of range)"),
        (1.5, "not a memory id: 1.5 (ids are whole numbers)"),
        (1e308, "not a memory id: 1e+308 (ids are whole numbers)"),
        ("-7", "not a memory id: '-7' (ids are whole numbers)"),
        (2**64, "not a memory id: 18446744073709551616 (out of range)"),
    ]:
        path.write_text(json.dumps([{"id": 5, "content": "ok"}, {"id": bad, "content": "x"}]))
        status, out, err = in_process(capsys, data, "import", path)
        assert status == 1 and out is None and "Traceback" not in err
        assert "MEMORY_INVALID" in err and f"record 2: {said}" in err, err
    path.write_text(json.dumps([{"id": 2**63 - 1, "content": "far"}, {"id": "12", "content": "a"}]))
    status, done, _ = in_process(capsys, data, "import", path)
    [(old, new)] = done["renumbered"].items()
    assert (status, done["imported"], old) == (0, 2, str(2**63 - 1))
    _, listed, _ = in_process(capsys, data, "list")
    assert [(m["id"], m["content"]) for m in listed] == [(new, "far"), (12, "a")]
    _, added, _ = in_process(capsys, data, "add", "one more")
    assert added["id"] > new


def test_a_corrupt_memory_json_is_reported_with_where_it_went(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "users" / "42").mkdir(parents=True)
    (data / "users" / "42" / "memory.json").write_bytes(b'[{"id": 1, "content": "trunc')
    done = memory_cli(data, "--json", "list")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    (moved,) = (data / "users" / "42").glob("memory.json.corrupt-*")
    assert str(moved) in done.stderr
    assert moved.read_bytes() == b'[{"id": 1, "content": "trunc'


def test_a_malformed_command_line_exits_non_zero(tmp_path: Path) -> None:
    done = memory_cli(tmp_path, "frobnicate")
    assert done.returncode != 0
    assert done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "memory", "list"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "--data-dir" in done.stderr


def test_store_url_is_the_general_form_of_data_dir(tmp_path: Path) -> None:
    added = ok_json(tmp_path, "add", "standup is at 10:00")
    store = ["--store", f"file://{tmp_path}"]
    done = subprocess.run(
        [sys.executable, "-m", "memory", *store, "--ns", NS, "--json", "search", "standup"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert [hit["id"] for hit in json.loads(done.stdout)] == [added["id"]]
    done = subprocess.run(
        [sys.executable, "-m", "memory", "--store", "mysql://x", "--ns", NS, "list"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "unknown store URL scheme" in done.stderr


def test_a_cli_search_does_not_rewrite_memory_json(tmp_path: Path) -> None:
    added = ok_json(tmp_path, "add", "standup is at 10:00")
    snapshot = tmp_path / NS / "memory.json"
    ok_json(tmp_path, "list")  # the add's close wrote memory.json
    before = snapshot.read_bytes(), snapshot.stat().st_ino
    assert [hit["id"] for hit in ok_json(tmp_path, "search", "standup")] == [added["id"]]
    assert (snapshot.read_bytes(), snapshot.stat().st_ino) == before
    assert ok_json(tmp_path, "get", added["id"])["accessCount"] == 1


def test_add_and_import_store_the_same_content_once(tmp_path: Path, article_file: Path) -> None:
    data = tmp_path / "data"
    first = ok_json(data, "add", "Standup is at 10:00")
    again = memory_cli(data, "--json", "add", "standup  is at 10:00!")
    assert again.returncode == 0 and json.loads(again.stdout)["id"] == first["id"]
    assert f"already remembered, id {first['id']}" in again.stderr
    near = memory_cli(data, "add", "standup is now at 9:30")
    assert near.returncode == 3 and "Traceback" not in near.stderr
    assert "not stored" in near.stderr and str(first["id"]) in near.stderr
    kept = ok_json(data, "add", "standup is now at 9:30", "--keep-both")
    assert kept["id"] != first["id"]
    # An import skips the records whose content is already stored (under another id).
    records = [dict(WALKTHROUGH[0], id=7, content="STANDUP is at 10:00"), WALKTHROUGH[1]]
    article_file.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    assert ok_json(data, "import", article_file) == {"imported": 1}
    assert len(ok_json(data, "list")) == 3

"""The retrieval benchmark harness, on a tiny synthetic set written to ``tmp_path``.

The real data in ``../shared/bench`` is for measurement only; these tests check that the harness
reads the format (plain and gzipped), goes through the store, and computes the metrics right.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from bench.retrieval import main, question_scores

USERS: list[dict[str, Any]] = [
    {
        "dataset": "tiny",
        "user": "ann",
        "memories": [
            {
                "id": "D1:1",
                "content": "Ann: I adopted a cat named Miso.",
                "created_at": "2023-05-04",
            },
            {
                "id": "D1:2",
                "content": "Ann: my sister lives in Lisbon.",
                "created_at": "2023-05-04",
            },
            {
                "id": "D2:1",
                "content": "Ann: I ran a marathon in Berlin.",
                "created_at": "2023-06-01",
            },
        ],
    },
    {
        "dataset": "tiny",
        "user": "张三",
        "memories": [
            {
                "id": "a",
                "content": "我的代码在 D:\\projects 目录",
                "created_at": "2023-01-02T10:00:00",
            },
            {"id": "b", "content": "周五下午三点开会", "created_at": "2023-01-03T10:00:00"},
        ],
    },
]
QUESTIONS: list[dict[str, Any]] = [
    {"user": "ann", "qid": "q1", "question": "What is the name of Ann's cat?",
     "evidence_ids": ["D1:1"], "category_name": "single-hop"},
    {"user": "ann", "qid": "q2", "question": "Where did Ann run a marathon?",
     "evidence_ids": ["D2:1"], "category_name": "single-hop"},
    {"user": "ann", "qid": "q3", "question": "Is it sunny outside?",
     "evidence_ids": ["D1:2", "D1:1"], "category_name": "multi-hop"},
    {"user": "张三", "qid": "q4", "question": "我的代码放在哪里了？",
     "evidence_ids": ["a"], "category": "probing"},
]  # fmt: skip


def write_set(folder: Path, name: str, *, gzipped_users: bool = False) -> None:
    users = "".join(json.dumps(u, ensure_ascii=False) + "\n" for u in USERS)
    if gzipped_users:
        with gzip.open(folder / f"{name}.users.jsonl.gz", "wt", encoding="utf-8") as handle:
            handle.write(users)
    else:
        (folder / f"{name}.users.jsonl").write_text(users, encoding="utf-8")
    questions = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS)
    (folder / f"{name}.questions.jsonl").write_text(questions, encoding="utf-8")


def run(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "results.json"
    assert main(["--data", str(tmp_path / "data"), "--json", str(out), *args]) == 0
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    write_set(folder, "tiny")
    write_set(folder, "tinygz", gzipped_users=True)
    return folder


def test_question_scores_follow_the_definitions() -> None:
    ranked = ["x", "a", "y", "z", "w", "b"]
    assert question_scores(ranked, frozenset({"a", "b"})) == {
        "hit@5": 1.0,
        "rec@5": 0.5,
        "hit@10": 1.0,
        "rec@10": 1.0,
    }
    assert question_scores([], frozenset({"a"}))["hit@10"] == 0.0


def test_report_has_the_issue_shape_for_both_rankers(data: Path, tmp_path: Path) -> None:
    result = run(tmp_path, "--sets", "tiny")
    assert list(result) == ["tiny"]
    assert set(result["tiny"]) == {"seed", "default"}
    for report in result["tiny"].values():
        assert set(report["all"]) == {"hit@5", "hit@10", "rec@5", "rec@10", "n"}
        assert report["all"]["n"] == 4
        assert set(report["by_category"]) == {"single-hop", "multi-hop", "probing"}
        assert report["by_category"]["single-hop"]["n"] == 2
        assert report["median_ms"] >= 0
    # Questions 1, 2 and 4 are answerable by their words, question 3 by none.
    default = result["tiny"]["default"]
    assert default["by_category"]["single-hop"]["hit@5"] == 1.0
    assert default["by_category"]["probing"]["rec@5"] == 1.0
    assert default["by_category"]["multi-hop"]["hit@10"] == 0.0
    assert default["all"]["rec@5"] == 0.75


def test_gzipped_sets_read_like_plain_ones(data: Path, tmp_path: Path) -> None:
    result = run(tmp_path)
    assert set(result) == {"tiny", "tinygz"}
    assert result["tiny"]["default"]["all"] == result["tinygz"]["default"]["all"]


def test_unknown_set_is_a_usage_error(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(data), "--sets", "nope"])
    assert exit_info.value.code == 2
    assert "unknown sets nope" in capsys.readouterr().err


def test_the_text_report_names_each_set_and_ranker(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data", str(data), "--sets", "tiny"]) == 0
    printed = capsys.readouterr().out
    assert "== tiny" in printed
    assert "default  all" in printed
    assert "seed     multi-hop" in printed


def test_the_figures_are_the_same_on_postgresql(data: Path, tmp_path: Path, pg_url: str) -> None:
    on_files = run(tmp_path)
    on_postgres = run(tmp_path, "--store", pg_url)
    again = run(tmp_path, "--store", pg_url)  # the same namespaces, imported again: no change
    for result in (on_postgres, again):
        assert result.keys() == on_files.keys()
        for name, by_ranker in on_files.items():
            for ranker, report in by_ranker.items():
                expected = {k: v for k, v in report.items() if k != "median_ms"}
                got = {k: v for k, v in result[name][ranker].items() if k != "median_ms"}
                assert got == expected, (name, ranker)

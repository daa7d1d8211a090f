"""The updates benchmark harness (``bench.updates``) on a tiny set of its own format, keywords
only (no model to load): it tells the steps in turns, keeps both when the bot would ask, and
counts what the question's first answer says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.updates import main

CASES = [
    {
        "steps": [
            {"say": "The wifi password at the cabin is pinecone42", "kind": "fact"},
            {"say": "The office wifi password is Tr0ub4dor", "kind": "lookalike", "of": 0},
            {"say": "the cabin wifi password is now pinecone43", "kind": "update", "of": 0},
        ],
        "question": "what's the cabin wifi password?",
        "current": "pinecone43",
        "old": ["pinecone42"],
    },
    {
        "steps": [
            {"say": "My gym membership costs $40 a month", "kind": "fact"},
            {"say": "My gym membership costs $45 a month", "kind": "update", "of": 0},
        ],
        "question": "how much is my gym membership?",
        "current": "$45",
        "old": ["$40"],
    },
    {
        "steps": [
            {"say": "Mia's birthday is May 3", "kind": "fact"},
            {"say": "Leo's birthday is June 9", "kind": "lookalike", "of": 0},
        ],
        "question": "when is Leo's birthday?",
        "current": "June 9",
        "old": [],
    },
]


def test_the_report_counts_replacements_questions_and_look_alikes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"case": f"tiny:{n}", "half": "visible", **c} for n, c in enumerate(CASES)]
    (tmp_path / "tiny.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    out = tmp_path / "results.json"
    args = ["--data", str(tmp_path), "--sets", "tiny", "--modes", "keywords"]
    assert main([*args, "--halves", "visible", "--json", str(out)]) == 0
    [result] = json.loads(out.read_text("utf-8"))
    assert (result["questions"], result["current_first"], result["old_first"]) == (3, 3, 0)
    assert (result["updates_sure"], result["updates_asked"], result["updates_missed"]) == (1, 1, 0)
    assert (result["lookalikes"], result["lookalikes_replaced"], result["lookalikes_offered"]) == (
        2,
        0,
        0,
    )
    assert "| tiny | visible | keywords | 3 | 1.000 | 0.000 |" in capsys.readouterr().out

"""The precision benchmark harness (``bench.precision``), on a tiny set of its own format and on
the project's notes, keywords only (no model to load): it asks each question in its own
namespace and in another, and counts what ``memory.relevance.decide`` shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.precision import main
from memory.relevance import Calibration

USERS = [
    {
        "user": "ann",
        "memories": [
            {"id": "a1", "content": "Ann adopted a cat named Miso", "created_at": "2023-05-04"},
            {"id": "a2", "content": "Ann's sister lives in Lisbon", "created_at": "2023-05-04"},
        ],
    },
    {
        "user": "bo",
        "memories": [
            {"id": "b1", "content": "Bo plays the cello on Sundays", "created_at": "2023-05-05"},
            {"id": "b2", "content": "Bo is allergic to peanuts", "created_at": "2023-05-05"},
        ],
    },
]
QUESTIONS = [
    {"user": "ann", "question": "What is the name of Ann's cat?", "evidence_ids": ["a1"]},
    {"user": "bo", "question": "Which instrument does Bo play?", "evidence_ids": ["b1"]},
]


def test_the_report_counts_answers_shown_and_abstentions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, rows in (("tiny.users.jsonl", USERS), ("tiny.questions.jsonl", QUESTIONS)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    out = tmp_path / "report.json"
    assert main(["--data", str(tmp_path), "--modes", "keywords", "--json", str(out)]) == 0
    report = json.loads(out.read_text("utf-8"))["keywords"]
    tiny = report["tiny"]
    assert tiny["questions"] == 2 and tiny["negatives"] == 2  # each asked in the other's too
    assert tiny["hit@5"] == 1.0 and tiny["shown/hit@5"] == 1.0 and tiny["abstained"] == 1.0
    for notes in ("notes_en", "notes_zh"):  # the project's own, halves, and a new user's cases
        assert report[notes]["questions"] == 40 and report[notes]["negatives"] == 30  # no companion
        assert {f"{notes}:{h}" for h in ("visible", "hidden")} <= report.keys()
        assert {f"{notes}_one", f"{notes}_tiny", f"{notes}_dozen"} <= report.keys()
        assert report[notes]["shown/hit@5"] >= 0.8  # the figure the README quotes, roughly
    assert "notes_zh_tiny" in capsys.readouterr().out


def test_the_fit_prints_calibrations_and_the_held_out_measure_reports_beside_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--fit`` prints ``CALIBRATIONS`` as Python that builds them again; ``--held-out``
    measures calibrations fitted on half of the questions, on the other half."""
    for name, rows in (("tiny.users.jsonl", USERS), ("tiny.questions.jsonl", QUESTIONS)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    assert main(["--data", str(tmp_path), "--modes", "keywords", "--fit"]) == 0
    printed = capsys.readouterr().out
    namespace: dict[str, Any] = {"Calibration": Calibration}
    exec(printed[printed.index("CALIBRATIONS") :], namespace)  # what one pastes into the module
    calibrations = namespace["CALIBRATIONS"]
    assert {("en", "question", "keywords"), ("zh", "question", "keywords")} <= calibrations.keys()
    assert all(c.spread > 0 and len(c.weights) == len(c.evidence) for c in calibrations.values())

    out = tmp_path / "report.json"
    assert (
        main(["--data", str(tmp_path), "--modes", "keywords", "--held-out", "--json", str(out)])
        == 0
    )
    report = json.loads(out.read_text("utf-8"))
    for notes in ("notes_en", "notes_zh"):  # each question measured once, by the other half
        assert report["keywords held out"][notes]["questions"] == 40
        assert report["keywords held out"][notes]["shown/hit@5"] >= 0.6

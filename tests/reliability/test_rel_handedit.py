"""A person editing ``memory.json`` while a writer process adds through the store: a real
writer process and a person-like editor process at once (``bench.handedit_bench``), with
rename-style and in-place saves, slow edits and saves paused half-way. Every confirmed add and
update is in ``memory.json`` at the end; every person's edit is there too, or, where it lost
to a later change, in a ``memory.json.conflict-*`` file."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.handedit_bench import run


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_no_change_is_lost_while_a_person_edits_the_file(tmp_path: Path, seed: int) -> None:
    outcome = run(tmp_path, adds=200, rounds=40, seed=seed, think=0.05, slow=0.3)
    assert outcome.confirmed >= 200 and set(outcome.saves) == {"rename", "in-place"}
    assert outcome.lost_adds == [] and outcome.lost_updates == []
    assert outcome.lost_edits == [] and outcome.edits > 0

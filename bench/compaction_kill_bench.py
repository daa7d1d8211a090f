"""Temporary files left by compactions killed mid-write: how many remain after N kills.

    python -m bench.compaction_kill_bench --kills 120

A child process opens a namespace of ``--memories`` memories and compacts it over and over; it
is SIGKILLed after a random delay, ``--kills`` times, each kill landing wherever it lands (often
inside ``write_bytes_atomic``). Each new child opens the namespace first, which is where stale
temporaries are removed. Prints the temporaries (count and bytes) left at the end, and whether
every memory is still there.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memory.files import MemoryStore

NS = "users/1"
CHILD = """
import sys
from memory.files import MemoryStore
ns = MemoryStore(sys.argv[1]).namespace("users/1")
ns.memories()
print("open", flush=True)
while True:
    ns.add("one more")
    ns.flush()
"""


def main() -> None:
    """Run the kills and print what they left."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=120)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        with MemoryStore(data) as store:
            ns = store.namespace(NS)
            ns.import_memories(
                {"id": i, "content": f"memory {i} " + "x" * 200}
                for i in range(1, args.memories + 1)
            )
        for _ in range(args.kills):
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(data)], stdout=subprocess.PIPE, text=True
            )
            assert child.stdout is not None
            child.stdout.readline()  # opened: the clean-up, if any, has run
            time.sleep(rng.uniform(0.0, 0.05))
            child.kill()
            child.wait()
        left = list((data / NS).glob(".*.tmp"))
        with MemoryStore(data) as store:
            count = len(store.namespace(NS).memories())
        print(
            json.dumps(
                {
                    "kills": args.kills,
                    "temporaries_left": len(left),
                    "bytes_left": sum(p.stat().st_size for p in left),
                    "memories_kept": count >= args.memories,
                }
            )
        )


if __name__ == "__main__":
    main()

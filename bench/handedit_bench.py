"""Hand edits while the store runs: a writer process and a person-like editor, at once.

The writer adds (and now and then updates and searches) memories through the store API,
compacting often, and prints every change the store confirmed. The editor does what a person
does with ``memory.json`` in an editor: reads it, takes its time, adds, edits or deletes a
memory of its own, and saves, either rename-style (a new file renamed over it) or in place
(truncate, then write, sometimes pausing half-way). At the end a fresh process opens the store
once more, and every confirmed change and every person's edit is looked for: in
``memory.json``, or, for the losing side of a conflict, in a ``memory.json.conflict-*`` file.

    python -m bench.handedit_bench --adds 1500 --rounds 300
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from memory.files import MemoryStore

NS = "users/42"
PERSON_IDS = 1_000_000  # the editor's ids: below the writer's timestamps, as a person might pick


def writer(data_dir: Path, adds: int, seed: int) -> None:
    """Add ``adds`` memories, update some, search some; print each confirmed change."""
    rng = random.Random(seed)
    if os.environ.get("HANDEDIT_BENCH_LOG"):  # the store's log, on stderr
        logging.basicConfig(level=logging.INFO, format="%(relativeCreated)d %(message)s")
    with MemoryStore(data_dir, compact_seconds=0.05) as store:
        ns = store.namespace(NS)
        ids: list[int] = []
        for i in range(adds):
            memory = ns.add(f"writer {i}")
            ids.append(memory.id)
            print(json.dumps({"op": "put", "id": memory.id, "content": memory.content}), flush=True)
            if i % 5 == 4:
                target = rng.choice(ids)
                memory = ns.update(target, content=f"writer {i} updated {target}")
                print(
                    json.dumps({"op": "put", "id": target, "content": memory.content}), flush=True
                )
            if i % 3 == 2:
                ns.search("writer")
            if i % 7 == 6:
                ns.flush()
            time.sleep(rng.random() * 0.004)


def _save(path: Path, data: bytes, rng: random.Random, slow: float) -> str:
    if rng.random() < 0.5:
        tmp = path.with_name("memory.json.editor-tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return "rename"
    with open(path, "r+b") as f:  # in place: as editors that keep the inode do
        f.truncate(0)
        half = len(data) // 2
        f.write(data[:half])
        f.flush()
        time.sleep(rng.random() * 0.02 if rng.random() < 0.9 else slow)
        f.write(data[half:])
    return "in-place"


def editor(data_dir: Path, rounds: int, seed: int, think: float, slow: float) -> None:
    """Read-modify-write ``memory.json`` ``rounds`` times; print each intended change."""
    rng = random.Random(seed)
    path = data_dir / NS / "memory.json"
    while not path.exists():
        time.sleep(0.01)
    for r in range(rounds):
        records = json.loads(path.read_bytes())  # the store's writes are atomic
        time.sleep(rng.random() * think)  # a person, taking their time
        mine = [rec for rec in records if rec["id"] < 10**9]
        roll = rng.random()
        if mine and roll < 0.3:
            target = rng.choice(mine)
            target["content"] = f"person edit {r} of {target['id']}"
            change = {"op": "put", "id": target["id"], "content": target["content"]}
        elif mine and roll < 0.45:
            target = rng.choice(mine)
            records.remove(target)
            change = {"op": "del", "id": target["id"]}
        else:
            new = {"id": PERSON_IDS + r, "content": f"person add {r}", "tags": ["hand"]}
            records.append(new)
            change = {"op": "put", "id": new["id"], "content": new["content"]}
        data = (json.dumps(records, ensure_ascii=False, indent=2) + "\n").encode()
        change["save"] = _save(path, data, rng, slow)
        print(json.dumps(change), flush=True)


@dataclass
class Outcome:
    """What a run kept and lost."""

    confirmed: int = 0  # the writer's memories (adds), each checked for its last content
    edits: int = 0  # memories the person changed, each checked for its last change
    saves: dict[str, int] = field(default_factory=dict)
    lost_adds: list[int] = field(default_factory=list)
    lost_updates: list[int] = field(default_factory=list)
    lost_edits: list[int] = field(default_factory=list)
    in_conflict_files: int = 0  # person's edits found only as the losing side of a conflict
    conflict_files: int = 0
    conflicts: int = 0
    seconds: float = 0.0
    changes: list[str] = field(default_factory=list)  # what the editor printed, in order
    left: list[str] = field(default_factory=list)  # saves the writer left unmerged


def _last(lines: str) -> tuple[dict[int, str | None], dict[str, int]]:
    state: dict[int, str | None] = {}
    saves: dict[str, int] = {}
    for line in lines.splitlines():
        change = json.loads(line)
        state[change["id"]] = change["content"] if change["op"] == "put" else None
        if "save" in change:
            saves[change["save"]] = saves.get(change["save"], 0) + 1
    return state, saves


def run(
    data_dir: Path, adds: int, rounds: int, seed: int = 1, *, think: float = 0.05, slow: float = 0.4
) -> Outcome:
    """Run the writer and the editor at once in ``data_dir``; what was kept and lost."""
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _call("writer"), str(data_dir), str(adds), str(seed)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        ),
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _call("editor"),
                str(data_dir),
                str(rounds),
                str(seed),
                str(think),
                str(slow),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        ),
    ]
    outputs = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"a bench process failed with status {proc.returncode}")
        outputs.append(out)
    left = sorted(p.name for p in (data_dir / NS).glob("memory.json.saved-*"))
    with MemoryStore(data_dir) as store:  # a fresh process merges a save it did not see
        store.namespace(NS).memories()
    folder = data_dir / NS
    final = {rec["id"]: rec["content"] for rec in json.loads((folder / "memory.json").read_bytes())}
    conflicts = [
        entry
        for path in sorted(folder.glob("memory.json.conflict-*"))
        for entry in json.loads(path.read_bytes())
    ]
    confirmed, _ = _last(outputs[0])
    intended, saves = _last(outputs[1])
    outcome = Outcome(len(confirmed), len(intended), saves)
    outcome.conflict_files = len(list(folder.glob("memory.json.conflict-*")))
    outcome.conflicts = len(conflicts)
    for memory_id, content in confirmed.items():
        if memory_id not in final:
            outcome.lost_adds.append(memory_id)
        elif final[memory_id] != content:
            outcome.lost_updates.append(memory_id)
    for memory_id, content in intended.items():
        if final.get(memory_id) == content:
            continue
        side = [c["file"] for c in conflicts if c["id"] == memory_id]
        if any((rec or {}).get("content") == content if content else rec is None for rec in side):
            outcome.in_conflict_files += 1
        else:
            outcome.lost_edits.append(memory_id)
    outcome.seconds = time.monotonic() - started
    outcome.changes = outputs[1].splitlines()
    outcome.left = left
    return outcome


def _call(function: str) -> str:
    if function == "writer":
        return (
            "import sys; from pathlib import Path; from bench.handedit_bench import writer; "
            "writer(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))"
        )
    return (
        "import sys; from pathlib import Path; from bench.handedit_bench import editor; "
        "editor(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), "
        "float(sys.argv[5]))"
    )


def main(argv: list[str] | None = None) -> int:
    """Run rounds of the bench and print what was kept and lost."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adds", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--think", type=float, default=0.05, help="longest edit, in seconds")
    parser.add_argument("--slow", type=float, default=0.4, help="pause inside a slow save")
    args = parser.parse_args(argv)
    lost = 0
    for seed in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory() as tmp:
            o = run(Path(tmp), args.adds, args.rounds, seed, think=args.think, slow=args.slow)
        lost += len(o.lost_adds) + len(o.lost_updates) + len(o.lost_edits)
        print(
            f"run {seed}: {o.confirmed} confirmed memories, lost {len(o.lost_adds)} adds and "
            f"{len(o.lost_updates)} updates; {o.edits} memories edited by hand ({o.saves}), "
            f"lost {len(o.lost_edits)}, {o.in_conflict_files} kept only in a conflict file; "
            f"{o.conflicts} conflicts in {o.conflict_files} files; {o.seconds:.1f} s"
        )
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())

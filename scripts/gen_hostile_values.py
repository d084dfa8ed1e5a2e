#!/usr/bin/env python3
"""Write N well-formed snapshots with hostile values, for the test that the page's engine (wasm32,
where usize is 32 bits) answers exactly as the native CLI (64 bits) or refuses the same way.

usage: scripts/gen_hostile_values.py SEED N OUT_DIR

Each file is one of fixtures/*.pickle with one to four changes: a number at an edge (0, 2^31,
2^32 + 512, 2^63, 2^64 + 5, 2^100, NaN, a string, None), an unknown action or block state, a key
dropped, events dropped, duplicated, reversed or shuffled, a segment's blocks emptied or reversed,
a top-level list replaced. The same SEED writes the same files.
"""
import copy
import os
import pickle
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")

EDGES = [0, 1, -1, 511, 512, 2**20, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 512, 2**48, 2**53 + 1,
         2**62, 2**63 - 1, -(2**63), 2**64 - 1, 2**64 + 5, 2**100, 0.5, float("nan"), float("inf"), "12",
         None, True, [], {}]
ACTIONS = ["alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
           "segment_unmap", "snapshot", "oom", "unknown_action", "", 7]
STATES = ["active_allocated", "active_pending_free", "inactive", "unknown_state", 3]


def change_event(rng, event):
    key = rng.choice(["addr", "size", "action", "stream", "time_us", "frames", "drop", "user_metadata"])
    if key == "action":
        event["action"] = rng.choice(ACTIONS)
    elif key == "frames":
        event["frames"] = rng.choice([[], None, 5, ["text"], [{}], [{"filename": "x.py", "line": rng.choice(EDGES), "name": rng.choice(EDGES)}]])
    elif key == "drop":
        if event:
            event.pop(rng.choice(sorted(event)))
    elif key == "user_metadata":
        event[key] = rng.choice(["x" * rng.choice([0, 10, 70000]), rng.choice(EDGES)])
    else:
        event[key] = rng.choice(EDGES)


def change_trace(rng, trace):
    kind = rng.random()
    i = rng.randrange(len(trace))
    if kind < 0.6:
        if isinstance(trace[i], dict):
            change_event(rng, trace[i])
    elif kind < 0.7:
        del trace[i : i + 1 + rng.randrange(50)]
    elif kind < 0.8:
        trace.insert(rng.randrange(len(trace)), copy.deepcopy(trace[i]))
    elif kind < 0.9:
        trace[i : i + 100] = trace[i : i + 100][::-1]
    else:
        rng.shuffle(trace)


def change_segment(rng, seg):
    key = rng.choice(["total_size", "address", "device", "stream", "segment_type", "blocks", "block", "block", "block", "is_expandable"])
    blocks = seg.get("blocks")
    if key == "blocks":
        seg["blocks"] = rng.choice([[], None, 3, (blocks or [])[::-1]])
    elif key == "block":
        if isinstance(blocks, list) and blocks and isinstance(blocks[0], dict):
            block = rng.choice(blocks)
            field = rng.choice(["size", "requested_size", "state", "address", "frames", "drop"])
            if field == "state":
                block["state"] = rng.choice(STATES)
            elif field == "frames":
                block["frames"] = rng.choice([[], None, "text"])
            elif field == "drop":
                if block:
                    block.pop(rng.choice(sorted(block)))
            else:
                block[field] = rng.choice(EDGES)
    elif key == "is_expandable":
        seg[key] = rng.choice([True, False, 2, None])
    elif key == "segment_type":
        seg[key] = rng.choice(["large", "small", "odd", 5])
    else:
        seg[key] = rng.choice(EDGES)


def change(rng, snap):
    traces, segments = snap.get("device_traces"), snap.get("segments")
    r = rng.random()
    if r < 0.45 and isinstance(traces, list) and any(isinstance(t, list) and t for t in traces):
        change_trace(rng, rng.choice([t for t in traces if isinstance(t, list) and t]))
    elif r < 0.85 and isinstance(segments, list) and any(isinstance(s, dict) for s in segments):
        change_segment(rng, rng.choice([s for s in segments if isinstance(s, dict)]))
    else:
        key = rng.choice(["device_traces", "segments", "external_annotations", "allocator_settings"])
        snap[key] = rng.choice([[], None, 5, {"x": 1}, [[]], [[{}], [{}]], snap.get(key)])


def main():
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    bases = []
    for name in sorted(os.listdir(FIXTURES)):
        if name.endswith((".pickle", ".pkl")):
            try:
                with open(os.path.join(FIXTURES, name), "rb") as f:
                    snap = pickle.load(f)
            except Exception:  # a fixture of torch objects (read without torch by the engine only)
                continue
            if isinstance(snap, dict):
                bases.append((name, snap))
    for i in range(count):
        name, base = rng.choice(bases)
        snap = copy.deepcopy(base)
        for _ in range(rng.randint(1, 4)):
            change(rng, snap)
        with open(os.path.join(out, f"{i:03d}-{name.rsplit('.', 1)[0]}.pickle"), "wb") as f:
            pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main()

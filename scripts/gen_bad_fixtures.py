#!/usr/bin/env python3
"""Write fixtures/bad/: hostile, broken and damaged inputs with the outcome each must give.

usage: scripts/gen_bad_fixtures.py [OUT_DIR]   (default: fixtures/bad; run after gen_fixtures.py)

`expected.json` maps each file to either {"error": CODE} (refused with that code, never a crash)
or {"damaged": [event indices that must be named], "device": N} (a partial analysis whose
warnings name those events, with the dump figures still exact).
"""
import gzip
import io
import json
import os
import pickle
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "fixtures", "bad")
GOOD = os.path.join(HERE, "..", "fixtures", "cuda_training.pickle")
EXPECTED = {}


def write(name, data, expected):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    EXPECTED[name] = expected


def p4(obj):
    return pickle.dumps(obj, protocol=4)


def main():
    os.makedirs(OUT, exist_ok=True)
    rnd = random.Random(3)
    write("empty.pickle", b"", {"error": "SNAPSHOT_INVALID"})
    write("random.bin", bytes(rnd.randrange(256) for _ in range(4096)), {"error": "PICKLE_INVALID"})
    write("not_a_pickle.txt", b"this is a text file, not a snapshot\n" * 20, {"error": "PICKLE_INVALID"})
    write("protocol6.pickle", b"\x80\x06" + p4({"segments": []})[2:], {"error": "PICKLE_UNSUPPORTED"})
    # Code execution attempts: GLOBAL+REDUCE (protocol 0) and STACK_GLOBAL (protocol 4).
    write("os_system.pickle", b"cos\nsystem\n(S'touch /tmp/snapscope-pwned'\ntR.", {"error": "PICKLE_UNSAFE"})
    write("eval_stack_global.pickle", b"\x80\x04\x8c\x08builtins\x94\x8c\x04eval\x94\x93\x94\x8c\x0e__import__('os')\x94\x85\x94R\x94.", {"error": "PICKLE_UNSAFE"})
    write("reduce_class.pickle", p4(__import__("collections").OrderedDict(a=1)), {"error": "PICKLE_UNSAFE"})
    # 100 000 nested lists: [[[[...]]]].
    depth = 100_000
    write("deep_nesting.pickle", b"\x80\x04" + b"]" * depth + b"a" * (depth - 1) + b".", {"error": "SNAPSHOT_INVALID"})
    # A string that declares 2^60 bytes.
    write("huge_string.pickle", b"\x80\x04\x8d" + struct.pack("<Q", 1 << 60) + b"abc.", {"error": "PICKLE_INVALID"})
    write("bad_memo.pickle", b"\x80\x04h\xc8.", {"error": "PICKLE_INVALID"})
    # Issue 29.1: chained far memo puts (each 2^20 beyond the last) once grew the memo 4 MiB per
    # 5-byte opcode (4.1 GB for these 5,008 bytes). Memory follows the values stored.
    gaps = b"\x80\x04}q\x00N" + b"".join(b"r" + struct.pack("<I", k << 20) for k in range(1, 1001)) + b"0."
    write("memo_gaps.pickle", gaps, {"error": "SNAPSHOT_INVALID"})
    write("not_a_snapshot.pickle", p4({"hello": "world", "answer": 42}), {"error": "SNAPSHOT_INVALID"})
    write("an_int.pickle", p4(42), {"error": "SNAPSHOT_INVALID"})
    write("wrong_types.pickle", p4({"segments": "oops", "device_traces": 5}), {"error": "SNAPSHOT_INVALID"})
    # Zeros compress 1000:1; a small file that would inflate to 128 MiB.
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as g:
        chunk = b"\0" * (1 << 20)
        for _ in range(128):
            g.write(chunk)
    write("gzip_bomb.pickle.gz", buf.getvalue(), {"error": "BUDGET_EXCEEDED"})
    # Issue 29.3: gzip inside gzip multiplied the per-layer cap; a snapshot is compressed once.
    write("gzip_in_gzip.pickle.gz", gzip.compress(gzip.compress(p4({"segments": [], "device_traces": [[]]}), mtime=0), mtime=0), {"error": "GZIP_NESTED"})
    write("malformed.json", b'{"segments": [{"address": 1, "total_size": ', {"error": "JSON_INVALID"})
    truncated = open(GOOD, "rb").read()
    write("truncated.pickle", truncated[: len(truncated) // 2], {"error": "PICKLE_INVALID"})

    # Shared objects describing an exponentially large tree: 100^6 leaves in a few hundred bytes.
    dag = [1]
    for _ in range(6):
        dag = [dag] * 100
    write("shared_dag.pickle", p4({"segments": [], "device_traces": [[{"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "weird": dag}]], "allocator_settings": {"x": dag}}), {"loads": True})

    # Found by fuzzing: two flipped bytes make memo references build dict keys out of containers
    # that share each other (rendering them once took forever).
    mutated = bytearray(truncated)
    mutated[99], mutated[528] = 0o37, 0o373
    write("fuzz_shared_keys.pickle", bytes(mutated), {"loads": True})

    # Damaged but real: mutations of a consistent snapshot. Each names the events that break.
    good = pickle.loads(truncated)
    events = good["device_traces"][0]

    def damaged(name, evs, broken):
        snap = dict(good, device_traces=[evs])
        write(name, p4(snap), {"damaged": broken, "device": 0})

    first_alloc = next(i for i, e in enumerate(events) if e["action"] == "alloc" and e["size"] > 1 << 20)
    damaged("dropped_alloc.pickle", events[:first_alloc] + events[first_alloc + 1:], None)
    dup = next(i for i, e in enumerate(events) if e["action"] == "free_completed")
    damaged("duplicated_free.pickle", events[: dup + 1] + [dict(events[dup])] + events[dup + 1:], [dup + 1])
    wrong = [dict(e) for e in events]
    wrong[first_alloc]["size"] = wrong[first_alloc]["size"] + 3 * (1 << 20)
    damaged("wrong_size.pickle", wrong, None)
    unknown = events[:5] + [{"action": "free_completed", "addr": 0xDEAD0000, "size": 4096, "stream": 0}] + events[5:]
    damaged("unknown_address.pickle", unknown, [5])
    weird = [dict(e) for e in events]
    weird[3] = {"action": 17, "addr": "nope", "size": -5, "stream": None}
    damaged("wrong_event_types.pickle", weird, [3])

    # Hostile text: frame names and file names that would drive a terminal (set the title, clear the
    # screen, ring the bell, a C1 CSI) and a spreadsheet (a formula). They must reach people as text.
    hostile = [dict(e) for e in events]
    evil = [{"filename": "/x/\x1b]0;pwned\x07model.py", "line": 7, "name": "=HYPERLINK(\"http://x\")\x1b[2J\x9b31m"}]
    for e in hostile:
        if e["action"] == "alloc":
            e["frames"] = evil + list(e.get("frames") or [])
    write("escape_frames.pickle", p4(dict(good, device_traces=[hostile])), {"loads": True})

    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(EXPECTED, f, indent=1, sort_keys=True)
    print(f"wrote {len(EXPECTED)} bad inputs to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()

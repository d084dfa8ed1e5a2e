#!/usr/bin/env python3
"""Write a large, realistic, internally consistent CUDA-style snapshot for benchmarks.

usage: scripts/gen_big.py EVENTS OUT [--seed N]      (about 90 bytes of pickle per event)

Shaped like a training job: a few long-lived segments whose addresses are reused every
iteration (the caching allocator hands the same blocks back), activations allocated in forward
order and freed in backward order, a few tensors that outlive their iteration, an occasional
empty_cache() that returns and re-reserves the segments, `time_us` on every event, and call
stacks that are shared frame dicts and shared frame lists as PyTorch's pickler writes them
(free_requested and free_completed of one block share one list). Block sizes follow the
allocator's rules (512-byte rounding, split with > 1 MiB left), so snapscope's replay must end
exactly on the dump. Prints the event count and the expected peak allocated bytes.
"""
import pickle
import random
import sys

MIB = 1 << 20


def r512(n):
    return max(512, (n + 511) // 512 * 512)


def main():
    events_wanted, out = int(sys.argv[1]), sys.argv[2]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 7
    rnd = random.Random(seed)
    files = [f"/opt/conda/lib/python3.11/site-packages/torch/nn/modules/m{i}.py" for i in range(200)]
    user = [f"/work/project/model/block{i}.py" for i in range(40)]
    frames = [{"filename": rnd.choice(files + user), "line": rnd.randint(1, 4000), "name": f"fn_{i}"} for i in range(2500)]
    roots = [{"filename": "/work/project/train.py", "line": 100 + i, "name": n} for i, n in enumerate(["<module>", "main", "train", "train_step"])]
    stacks = [[rnd.choice(frames) for _ in range(rnd.randint(8, 28))] + roots for _ in range(4000)]

    seg_size = 512 * MIB
    n_segs = 6
    bases = [0x7F0000000000 + i * (1 << 32) for i in range(n_segs)]
    evs = []
    t = [1_760_000_000_000_000]
    alloc = [0]
    peak = [0]

    def ev(action, addr, size, frames):
        t[0] += rnd.randint(1, 40)
        evs.append({"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t[0], "frames": frames})

    for b in bases:
        ev("segment_alloc", b, seg_size, list(rnd.choice(stacks)))
    # A plan of tensor sizes per segment, reused every iteration: the same addresses come back.
    plans = []
    for b in bases:
        cur, plan = b, []
        while True:
            req = rnd.choice([MIB + 4, 3 * MIB, 6 * MIB, 12 * MIB, 24 * MIB]) + rnd.randrange(0, 4096)
            if cur + r512(req) > b + seg_size - 4 * MIB:
                break
            plan.append((cur, req, rnd.choice(stacks)))
            cur += r512(req)
        plans.append(plan)
    survivors = {}  # addr -> (req, frames): tensors kept across iterations (leak-like)
    it = 0
    while len(evs) < events_wanted:
        it += 1
        live = []
        for plan in plans:
            for addr, req, st in plan:
                if addr in survivors or len(evs) >= events_wanted:
                    continue
                ev("alloc", addr, req, st)
                alloc[0] += r512(req)
                peak[0] = max(peak[0], alloc[0])
                live.append((addr, req))
        if len(evs) >= events_wanted:
            break
        # A few tensors of this iteration stay alive (cached activations, a slow leak).
        keep = set(a for a, _ in rnd.sample(live, k=min(2, len(live)))) if it % 50 == 0 else set()
        for addr, req in reversed(live):
            if addr in keep:
                survivors[addr] = req
                continue
            fr = list(rnd.choice(stacks))
            ev("free_requested", addr, req, fr)
            ev("free_completed", addr, req, fr)
            alloc[0] -= r512(req)
        # Every 500 iterations the kept tensors are released (a cache cleared), so the plan's
        # slots never all fill up.
        if it % 500 == 0:
            for addr, req in list(survivors.items()):
                fr = list(rnd.choice(stacks))
                ev("free_requested", addr, req, fr)
                ev("free_completed", addr, req, fr)
                alloc[0] -= r512(req)
            survivors.clear()
        if it % 200 == 0 and not survivors:
            for b in bases:
                ev("segment_free", b, seg_size, [])
                ev("segment_alloc", b, seg_size, [])

    segments = []
    # Live at the dump: survivors plus whatever the last (possibly partial) iteration allocated.
    opened = {}
    for e in evs:
        if e["action"] == "alloc":
            opened[e["addr"]] = (e["size"], e["frames"])
        elif e["action"] == "free_completed":
            opened.pop(e["addr"], None)
    for b in bases:
        blocks, cur, end = [], b, b + seg_size
        for a in sorted(x for x in opened if b <= x < end):
            req, fr = opened[a]
            if a > cur:
                blocks.append({"address": cur, "size": a - cur, "requested_size": 0, "state": "inactive", "frames": []})
            blocks.append({"address": a, "size": r512(req), "requested_size": req, "state": "active_allocated", "frames": fr})
            cur = a + r512(req)
        if cur < end:
            blocks.append({"address": cur, "size": end - cur, "requested_size": 0, "state": "inactive", "frames": []})
        act = [x for x in blocks if x["state"] != "inactive"]
        segments.append({"device": 0, "address": b, "total_size": seg_size, "allocated_size": sum(x["size"] for x in act),
                         "active_size": sum(x["size"] for x in act), "requested_size": sum(x["requested_size"] for x in act),
                         "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": blocks})
    snap = {"segments": segments, "device_traces": [evs], "allocator_settings": {"expandable_segments": False, "max_split_size": -1},
            "external_annotations": []}
    with open(out, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    print(f"{len(evs)} events, peak allocated {peak[0]} B")


if __name__ == "__main__":
    main()

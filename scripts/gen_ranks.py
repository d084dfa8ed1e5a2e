#!/usr/bin/env python3
"""Write the snapshots of a generated distributed run, one file per rank, with known answers.

usage: scripts/gen_ranks.py OUT_DIR [--ranks 64] [--outlier 7] [--extra-mib 300] [--steps 3]
       (the answers go to OUT_DIR.expected.json, beside the folder)

Every rank runs the same training-like program (parameters, then per step activations that are
allocated and freed), skewed per rank: the activations of rank r take 40 + 2·(r mod 3) MiB, so
the peak allocated bytes are 64 MiB of parameters plus 40, 42 or 44 MiB. The outlier rank also
gathers `--extra-mib` MiB at `fsdp/_flat_param.py` in its second step and keeps it to the end.
Block sizes follow the allocator's rules, so snapscope's replay is exact. `expected.json` holds
the answers (written beside the folder, so that the folder holds only snapshots): every rank's peak allocated bytes, the median, the worst rank, its excess over the
median rank and the allocation site behind it.
"""
import json
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_fixtures import MIB, Frames, Trace  # noqa: E402


def arg(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def rank_program(rank, outlier, extra_mib, steps):
    fr = Frames()
    param = fr.stack("init_params", "build_model", "main")
    act = [fr.stack(f"layer{k}_forward", "forward", "train_step", "main") for k in range(4)]
    gather = [{"filename": "/opt/conda/lib/python3.11/site-packages/torch/distributed/fsdp/_flat_param.py", "line": 391, "name": "unshard"}] + fr.stack("forward", "train_step", "main")
    t = Trace(0)
    P, A, X = 0x7F1000000000, 0x7F2000000000, 0x7F3000000000
    t.segment_alloc(P, 64 * MIB, "large", param)
    t.malloc(P, 64 * MIB, 64 * MIB, param)
    act_total = (40 + 2 * (rank % 3)) * MIB
    piece = act_total // 4
    t.segment_alloc(A, act_total, "large", act[0])
    for step in range(steps):
        if rank == outlier and step == 1:
            t.segment_alloc(X, extra_mib * MIB, "large", gather)
            t.malloc(X, extra_mib * MIB, extra_mib * MIB, gather)
        for k in range(4):
            t.malloc(A + k * piece, piece, piece, act[k])
        for k in reversed(range(4)):
            t.free(A + k * piece)
    snap = {"segments": t.dump_segments(), "device_traces": [t.events]}
    return snap, t.expected()


def main():
    out = sys.argv[1]
    ranks, outlier, extra, steps = arg("--ranks", 64), arg("--outlier", 7), arg("--extra-mib", 300), arg("--steps", 3)
    os.makedirs(out, exist_ok=True)
    peaks = {}
    for r in range(ranks):
        snap, exp = rank_program(r, outlier, extra, steps)
        with open(os.path.join(out, f"rank{r}.pickle"), "wb") as f:
            pickle.dump(snap, f, protocol=4)
        peaks[r] = exp["peaks"]["allocated"]["bytes"]
    ordered = sorted(peaks.values())
    median = ordered[(len(ordered) - 1) // 2]
    # The median rank: the lowest-numbered rank at the median (what snapscope picks too).
    median_rank = min(r for r, p in peaks.items() if p == median)
    worst = max(peaks, key=lambda r: (peaks[r], -r))
    expected = {
        "ranks": ranks,
        "peak_allocated": {str(r): p for r, p in peaks.items()},
        "median": median,
        "max": peaks[worst],
        "min": ordered[0],
        "worst_rank": worst,
        "median_rank": median_rank,
        "excess_bytes": peaks[worst] - median,
        "site": "fsdp/_flat_param.py:391",
        "site_bytes": extra * MIB,
        "outliers": [outlier],
    }
    with open(out.rstrip("/") + ".expected.json", "w") as f:
        json.dump(expected, f, indent=1)
    print(f"wrote {ranks} rank files to {out}: worst rank {worst}, {expected['excess_bytes']} B above the median")


if __name__ == "__main__":
    main()
